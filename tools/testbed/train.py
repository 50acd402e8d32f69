"""One rank of a testbed training run: PyTorch DDP on CPU over gloo, or
sharded data parallelism (ZeRO-2, ZeRO-3) by hand over gloo (sharded.py).

    /usr/bin/python3 train.py --rank R --world W --master ADDR --port P \
        --model mlp --batch 32 --bucket-mb 25 --overlap on [--partition-kb K] \
        [--accumulation K] [--shard zero2|zero3|hsdp --forward-prefetch 0|1 \
         --backward-prefetch pre|post --reduce-op reduce|allreduce --shard-group G] \
        --warmup 5 --iterations 20 --capture 6 --out DIR

1. Measure: `warmup` untimed iterations, then `iterations` timed ones, with
   no profiler and no marks; each iteration's time is the time from the end
   of the previous one to the end of this one (after optimizer.step()).
2. Capture (when --capture > 0): torch.profiler (CPU) records
   `profiler_warmup` iterations and then `capture` iterations marked by
   tracer/python/ssgd_marks.py (only those are marked, so only those are
   replayed), exported as Chrome-trace JSON (the legacy writer on torch
   without Kineto), gzip-compressed: DIR/rank<R>.json.gz.
3. Writes DIR/rank<R>.result.json and exits at once (os._exit: gloo may spin
   at shutdown after a peer has gone; the launcher holds a timeout too).

Overlap on: DDP (bucket_cap_mb, broadcast_buffers off, so that each
iteration's only collectives are the gradient all-reduces). Overlap off: the
model without DDP; after backward every gradient is copied into one flat
buffer, all-reduced once and copied back (what DDP's no_sync() followed by a
single all-reduce does). One rank (--world 1): the model alone, no
collective, whatever --overlap says: the compute of one iteration.

--shard zero2|zero3|hsdp: sharded.Engine over models.units() (--overlap is
then ignored); the optimizer steps on each rank's shards. hsdp shards over
groups of --shard-group G ranks (2 <= G < world, dividing it; --reduce-op
reduce) and all-reduces each shard across the groups; its marks give each
op's sizes and process-group size (ssgd/collective_bytes/<op>,
ssgd/collective_ranks/<op>), since when its all-reduces are issued among
the shard group's collectives varies. --accumulation K: K
micro-batches a step, gradients communicated on the last one only (DDP:
no_sync() before; overlap off and sharded: their collectives after the last).

Memory: the result holds rss_before_model_kb (the resident set once the
process group is up, before the model is built: the baseline the model's
state, buffers and activations add to), rss_before_training_kb (the
resident set when the warm-up starts), maxrss_setup_kb (ru_maxrss then: the peak of start-up and
model building) and peak_rss_kb: ru_maxrss after the timed iterations, the
high-water mark having been reset to the resident set when the warm-up
started (echo 5 > /proc/self/clear_refs; peak_rss_reset says whether it
was), so that it is the peak of training, not of building the model; and
rss_file_before_model_kb, rss_file_after_warmup_kb and rss_file_end_kb, the
file-backed part of the resident set then (RssFile: the libraries' code
pages that building the model and training touch for the first time, about
10 MiB with torch 1.13, which are not the training's state; stats.py takes
their growth out of the peak).
"""

import argparse
import gzip
import contextlib
import json
import os
import resource
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tracer", "python"))

import sharded  # noqa: E402  (pure logic: no torch)
from worker_args import add_worker_arguments, check_worker_arguments  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_worker_arguments(p)
    p.add_argument("--model", required=True)
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--bucket-mb", type=float, default=25.0)
    p.add_argument("--partition-kb", type=float, default=0.0,
                   help="overlap on: cut every DDP bucket into partitions of this many KiB, each "
                        "its own all-reduce (ByteScheduler's partitioning); 0: one per bucket")
    p.add_argument("--overlap", choices=("on", "off", "none"), default="on")
    p.add_argument("--accumulation", type=int, default=1, help="micro-batches a step")
    p.add_argument("--shard", choices=("none", "zero2", "zero3", "hsdp"), default="none")
    p.add_argument("--shard-group", type=int, default=0, help="hsdp: the ranks of a shard group")
    p.add_argument("--forward-prefetch", type=int, choices=(0, 1), default=1)
    p.add_argument("--backward-prefetch", choices=("pre", "post"), default="pre")
    p.add_argument("--reduce-op", choices=("reduce", "allreduce"), default="reduce")
    p.add_argument("--mmap-threshold-kb", type=int, default=0,
                   help="glibc's M_MMAP_THRESHOLD, fixed (0: glibc's default, a threshold that grows with "
                        "the blocks freed): every block from this size up is a mapping of its own, "
                        "returned to the system when freed, so that the resident set follows the bytes alive")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--capture", type=int, default=0)
    p.add_argument("--profiler-warmup", type=int, default=6)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    check_worker_arguments(p, a)
    if a.batch < 1 or a.iterations < 1 or a.warmup < 0 or a.capture < 0 or a.profiler_warmup < 0 \
            or a.bucket_mb <= 0 or a.partition_kb < 0 or a.accumulation < 1:
        p.error("--batch, --iterations, --accumulation >= 1; --warmup, --capture, --profiler-warmup >= 0; "
                "--bucket-mb > 0; --partition-kb >= 0")
    if a.partition_kb > 0 and (a.overlap != "on" or a.shard != "none"):
        p.error("--partition-kb needs --overlap on and no --shard (it partitions DDP's buckets)")
    if a.shard == "hsdp":
        if not sharded.hsdp_group_ok(a.world, a.shard_group):
            p.error(f"--shard-group {a.shard_group}: --shard hsdp needs 2 <= G < --world ({a.world}), dividing it")
        if a.reduce_op != "reduce":
            p.error("--shard hsdp needs --reduce-op reduce")
    elif a.shard_group:
        p.error("--shard-group needs --shard hsdp")
    return a


def partition_elements(partition_kb, element_size):
    """Elements in one partition of partition_kb KiB (at least one)."""
    return max(1, int(partition_kb * 1024) // element_size)


def partition_hook(dist, torch, world, partition_kb):
    """A DDP comm hook that cuts the bucket into partitions of partition_kb
    KiB and starts one asynchronous all-reduce per partition, in order, on the
    thread that runs backward: what ByteScheduler's partitioning does to a
    tensor (without its reordering across buckets, which DDP's order already
    follows). Each partition is its own c10d call and gloo op, so the
    profile shows every one."""
    def hook(state, bucket):
        flat = bucket.buffer()
        elements = partition_elements(partition_kb, flat.element_size())
        futures = [dist.all_reduce(part, async_op=True).get_future() for part in flat.split(elements)]

        def average(_):
            flat.div_(world)
            return flat
        return torch.futures.collect_all(futures).then(average)
    return hook


def partition_sizes(bucket_bytes, partition_kb, element_size):
    """The sizes partition_hook's all-reduces have, in launch order: each
    bucket (DDP launches them in index order) cut as flat.split() cuts it."""
    step = partition_elements(partition_kb, element_size) * element_size
    sizes = []
    for b in bucket_bytes:
        full, rest = divmod(b, step)
        sizes += [step] * full + ([rest] if rest else [])
    return sizes


def resident_kb():
    """This process's resident set now, KiB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def rss_file_kb():
    """This process's file-backed resident set now, KiB (RssFile in
    /proc/self/status: the pages of the libraries' code and data that it has
    touched); None where the kernel does not say."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("RssFile:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def reset_peak_rss():
    """Resets the peak resident set (VmHWM, which ru_maxrss reads) to the
    current one; False where the kernel does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def max_rss_kb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def fix_mmap_threshold(kb):
    """mallopt(M_MMAP_THRESHOLD, kb KiB): fixed, no longer raised by frees."""
    import ctypes
    M_MMAP_THRESHOLD = -3
    if ctypes.CDLL("libc.so.6").mallopt(M_MMAP_THRESHOLD, kb * 1024) != 1:
        raise SystemExit(f"train.py: mallopt(M_MMAP_THRESHOLD, {kb} KiB) failed")


def main(argv):
    a = parse_args(argv)
    if a.mmap_threshold_kb > 0:
        fix_mmap_threshold(a.mmap_threshold_kb)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import datetime

    import torch
    import torch.distributed as dist

    import models
    import ssgd_marks

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://{a.master}:{a.port}", rank=a.rank,
                            world_size=a.world, timeout=datetime.timedelta(seconds=a.timeout_s))
    rss_before_model = resident_kb()
    file_before_model = rss_file_kb()
    model, x, y = models.build(a.model, a.batch, a.seed)
    loss_fn = torch.nn.CrossEntropyLoss()
    params = [p for p in model.parameters() if p.requires_grad]
    engine = None
    if a.world == 1 and a.shard == "none":
        a.overlap = "none"
    if a.shard != "none":
        a.overlap = "sharded"
        net = model
        engine = sharded.Engine(torch, dist, models.units(a.model, model), a.shard, a.forward_prefetch,
                                a.backward_prefetch, a.reduce_op, a.shard_group or None)
    elif a.overlap == "none":
        net = model
    elif a.overlap == "on":
        from torch.nn.parallel import DistributedDataParallel as DDP
        net = DDP(model, bucket_cap_mb=a.bucket_mb, broadcast_buffers=False)
        if a.partition_kb > 0:
            net.register_comm_hook(None, partition_hook(dist, torch, a.world, a.partition_kb))
    else:
        net = model
        for p in model.parameters():  # the same start on every rank, as DDP does
            dist.broadcast(p.data, 0)
    optimizer = torch.optim.SGD(engine.shards if engine else net.parameters(), lr=0.001, momentum=0.9)

    def step():
        optimizer.zero_grad(set_to_none=False)
        for m in range(a.accumulation):
            last = m == a.accumulation - 1
            if engine:
                engine.micro_batch(last)
            with net.no_sync() if a.overlap == "on" and not last else contextlib.nullcontext():
                loss = loss_fn(net(x), y)
                loss.backward()
        if engine:
            engine.before_step()
        if a.overlap == "off":
            flat = torch.cat([p.grad.reshape(-1) for p in params])
            dist.all_reduce(flat)
            flat.div_(a.world)
            offset = 0
            for p in params:
                n = p.numel()
                p.grad.copy_(flat[offset:offset + n].view_as(p.grad))
                offset += n
        optimizer.step()
        if engine:
            engine.after_step()

    rss_before = resident_kb()
    maxrss_setup = max_rss_kb()
    peak_reset = reset_peak_rss()
    for _ in range(a.warmup):
        step()
    if engine:
        engine.drain()
    file_after_warmup = rss_file_kb()
    dist.barrier()
    times = []
    last = time.perf_counter_ns()
    for _ in range(a.iterations):
        step()
        now = time.perf_counter_ns()
        times.append(now - last)
        last = now
    if engine:
        engine.drain()

    result = {"rank": a.rank, "world": a.world, "iteration_ns": times,
              "grad_bytes": models.grad_bytes(model), "torch": torch.__version__,
              "threads": torch.get_num_threads(), "affinity": sorted(os.sched_getaffinity(0)),
              "accumulation": a.accumulation, "rss_before_model_kb": rss_before_model,
              "rss_before_training_kb": rss_before,
              "maxrss_setup_kb": maxrss_setup, "peak_rss_kb": max_rss_kb(), "peak_rss_reset": peak_reset,
              "mmap_threshold_kb": a.mmap_threshold_kb}
    file_end = rss_file_kb()
    if None not in (file_before_model, file_after_warmup, file_end):
        result.update({"rss_file_before_model_kb": file_before_model,
                       "rss_file_after_warmup_kb": file_after_warmup, "rss_file_end_kb": file_end})
    if engine:
        result["shard"] = {"strategy": a.shard, "forward_prefetch": a.forward_prefetch,
                           "backward_prefetch": a.backward_prefetch, "reduce_op": a.reduce_op,
                           "group": engine.shard_size,
                           "units": [{"name": u.name, "params": u.numel, "padded": u.padded,
                                      "shard": u.shard_numel} for u in engine.units],
                           "step_collectives": engine.log}
    if a.overlap == "on":
        data = net._get_ddp_logging_data()
        result["ddp_bucket_bytes"] = ssgd_marks.parse_bucket_sizes(
            data.get("rebuilt_bucket_sizes") or data.get("bucket_sizes") or "")

    if a.capture > 0:
        # The profiler slows the first iterations it records (by up to 40%
        # under a CPU quota, a few % without, fading over about 6 iterations),
        # so it records profiler_warmup iterations first, unmarked: the
        # importer and the walker use marked iterations only.
        warm = a.profiler_warmup
        marks = ssgd_marks.mark(net, optimizer, backend="profiler", window=(warm, warm + a.capture))
        if engine and engine.hsdp:
            marks.collective_ops(sharded.op_order_bytes(engine.log), ranks=engine.op_ranks())
        elif engine:
            marks.collective_bytes(sharded.range_order_bytes(engine.log))
        elif a.overlap == "off":
            marks.collective_bytes([sum(p.numel() * p.element_size() for p in params)])
        elif a.partition_kb > 0:
            marks.collective_bytes(partition_sizes(result["ddp_bucket_bytes"], a.partition_kb, 4))
        dist.barrier()
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(warm + a.capture):
                step()
            if engine:
                engine.drain()
        marks.remove()
        plain = os.path.join(a.out, f".rank{a.rank}.json")
        prof.export_chrome_trace(plain)
        with open(plain, "rb") as src, gzip.GzipFile(os.path.join(a.out, f"rank{a.rank}.json.gz"), "wb",
                                                      mtime=0) as dst:
            shutil.copyfileobj(src, dst)
        os.remove(plain)
        result["captured_iterations"] = a.capture

    tmp = os.path.join(a.out, f".rank{a.rank}.result.json")
    with open(tmp, "w") as f:
        json.dump(result, f)
    os.replace(tmp, os.path.join(a.out, f"rank{a.rank}.result.json"))
    dist.barrier()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
