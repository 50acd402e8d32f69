"""One rank of a gloo all-reduce sweep: for each message size, `repeats`
timed all-reduces of a float32 tensor, each after a barrier so that every
rank starts it together (the barrier is not timed). Writes
DIR/sweep-rank<R>.json: {"sizes": [...], "ns": [[per repeat]...]} and exits.
The launcher combines the ranks: an all-reduce's time is the slowest rank's,
as OSU's latency test reports.

    /usr/bin/python3 sweep.py --rank R --world W --master ADDR --port P \
        --sizes 1024,4096,... --repeats 10 --out DIR
"""

import argparse
import datetime
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from worker_args import add_worker_arguments, check_worker_arguments  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_worker_arguments(p)
    p.add_argument("--sizes", required=True, help="bytes, comma-separated, multiples of 4")
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--large-repeats", type=int, default=5, help="repeats above 4 MiB")
    a = p.parse_args(argv)
    check_worker_arguments(p, a)
    try:
        a.sizes = [int(s) for s in a.sizes.split(",") if s.strip()]
    except ValueError:
        p.error(f"--sizes '{a.sizes}': expected byte counts separated by commas")
    if not a.sizes or any(s < 4 or s % 4 for s in a.sizes):
        p.error("--sizes: each size must be a positive multiple of 4 bytes")
    return a


def main(argv):
    a = parse_args(argv)
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://{a.master}:{a.port}", rank=a.rank,
                            world_size=a.world, timeout=datetime.timedelta(seconds=a.timeout_s))
    out = {"rank": a.rank, "world": a.world, "sizes": a.sizes, "ns": []}
    for size in a.sizes:
        t = torch.ones(size // 4, dtype=torch.float32)
        repeats = a.large_repeats if size > (4 << 20) else a.repeats
        for _ in range(2):  # warm-up: connections, buffers
            dist.all_reduce(t)
        times = []
        for _ in range(repeats):
            dist.barrier()
            start = time.perf_counter_ns()
            dist.all_reduce(t)
            times.append(time.perf_counter_ns() - start)
        out["ns"].append(times)
    tmp = os.path.join(a.out, f".sweep-rank{a.rank}.json")
    with open(tmp, "w") as f:
        json.dump(out, f)
    os.replace(tmp, os.path.join(a.out, f"sweep-rank{a.rank}.json"))
    dist.barrier()
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
