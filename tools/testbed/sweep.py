"""One rank of a gloo collective sweep: for each collective of --ops and
each message size, `repeats` timed collectives of float32 tensors, each
after a barrier so that every rank starts it together (the barrier is not
timed). A size is the whole buffer, as ssgd counts collectives: the
all-reduce's and the reduce's tensor, the all-gather's output (each rank
sends size / W of it). The reduce's root is rank 0. Writes
DIR/sweep-rank<R>.json and exits:

    {"sizes": [...], "ns": [[per repeat] per size],        the all-reduce's
     "ops": {"allgather": [[per repeat] per size], ...}}   the others'

The launcher combines the ranks: a collective's time is the slowest rank's,
as OSU's latency tests report.

    /usr/bin/python3 sweep.py --rank R --world W --master ADDR --port P \
        --sizes 1024,4096,... --repeats 10 --ops allreduce,allgather,reduce --out DIR
"""

import argparse
import datetime
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from worker_args import add_worker_arguments, check_worker_arguments  # noqa: E402

OPS = ("allreduce", "allgather", "reduce")


def allgather_size_problem(sizes, world):
    """Why `sizes` cannot be all-gathered among `world` ranks (each rank sends
    size / world of a float32 buffer: a whole number of floats), or None."""
    if any(s % (4 * world) for s in sizes):
        return (f"an all-gather's size must be a multiple of 4 x {world} bytes "
                f"(world {world}: each rank sends a whole number of floats)")
    return None


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_worker_arguments(p)
    p.add_argument("--sizes", required=True, help="bytes, comma-separated, multiples of 4")
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--large-repeats", type=int, default=5, help="repeats above 4 MiB")
    p.add_argument("--ops", default="allreduce",
                   help=f"collectives, comma-separated: {', '.join(OPS)} (default allreduce)")
    a = p.parse_args(argv)
    check_worker_arguments(p, a)
    try:
        a.sizes = [int(s) for s in a.sizes.split(",") if s.strip()]
    except ValueError:
        p.error(f"--sizes '{a.sizes}': expected byte counts separated by commas")
    if not a.sizes or any(s < 4 or s % 4 for s in a.sizes):
        p.error("--sizes: each size must be a positive multiple of 4 bytes")
    a.ops = [o.strip() for o in a.ops.split(",") if o.strip()]
    if not a.ops or any(o not in OPS for o in a.ops) or len(set(a.ops)) != len(a.ops):
        p.error(f"--ops '{','.join(a.ops)}': expected distinct names among {', '.join(OPS)}")
    problem = allgather_size_problem(a.sizes, a.world) if "allgather" in a.ops else None
    if problem:
        p.error(f"--sizes: {problem}")
    return a


def collective(torch, dist, op, size, world):
    """A callable that runs one `op` of `size` bytes (the whole buffer)."""
    if op == "allreduce":
        t = torch.ones(size // 4, dtype=torch.float32)
        return lambda: dist.all_reduce(t)
    if op == "reduce":
        t = torch.ones(size // 4, dtype=torch.float32)
        return lambda: dist.reduce(t, dst=0)
    full = torch.empty(size // 4, dtype=torch.float32)
    parts = list(full.split(size // 4 // world))
    mine = torch.ones(size // 4 // world, dtype=torch.float32)
    return lambda: dist.all_gather(parts, mine)


def main(argv):
    a = parse_args(argv)
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://{a.master}:{a.port}", rank=a.rank,
                            world_size=a.world, timeout=datetime.timedelta(seconds=a.timeout_s))
    out = {"rank": a.rank, "world": a.world, "sizes": a.sizes}
    for op in a.ops:
        curve = []
        for size in a.sizes:
            run = collective(torch, dist, op, size, a.world)
            repeats = a.large_repeats if size > (4 << 20) else a.repeats
            for _ in range(2):  # warm-up: connections, buffers
                run()
            times = []
            for _ in range(repeats):
                dist.barrier()
                start = time.perf_counter_ns()
                run()
                times.append(time.perf_counter_ns() - start)
            curve.append(times)
        if op == "allreduce":
            out["ns"] = curve
        else:
            out.setdefault("ops", {})[op] = curve
    tmp = os.path.join(a.out, f".sweep-rank{a.rank}.json")
    with open(tmp, "w") as f:
        json.dump(out, f)
    os.replace(tmp, os.path.join(a.out, f"sweep-rank{a.rank}.json"))
    dist.barrier()
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
