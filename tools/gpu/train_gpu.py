"""Synthetic-data training on one GPU, timed, for the GPU checks
(../shared/GPU_CHECKLIST.md, tools/gpu/checklist.sh).

    python3 tools/gpu/train_gpu.py --model resnet50 --batch 64 [--amp] \
        [--ddp] [--marks] [--profile FILE.json] --warmup 10 --iterations 20 \
        --reps 3 --out result.json

Each iteration is zero_grad, forward, loss, backward, optimizer.step() on a
batch already on the GPU, then torch.cuda.synchronize() (as a loss.item()
would), so that each iteration's time is the GPU's and CPU's together, from
the end of the previous iteration to the end of this one. `--warmup`
iterations are untimed (cuDNN autotuning), then `--reps` blocks of
`--iterations` timed ones; the result holds every iteration's time and each
block's median.

--ddp: DistributedDataParallel over a one-rank NCCL process group (one GPU
allows no more ranks), so the gradient all-reduces are NCCL collectives.
--fsdp: FSDP2 (`fully_shard`, PyTorch 2.6 or later) over the same one-rank
group instead: each transformer layer (bert) or residual stage (resnet50,
vgg16's feature block) is a unit, then the whole model; parameters are
all-gathered before each unit's forward and backward and gradients
reduce-scattered, with world size 1 as with more.
--marks: tracer/python/ssgd_marks.py on the model (NVTX ranges under
`ssgd trace --nvtx`, record_function ranges otherwise); with
SSGD_TRACER_ITERATIONS=A:B only iterations A <= N < B (counted from the
first warm-up iteration) are marked.
--graphs (mlp only): each block's forward runs through one
torch.compile(mode="reduce-overhead") function, so forward and backward
are CUDA graph launches (regional compilation, as TorchTitan compiles each
block), while the marks' hooks stay outside the graphs; the result records
Inductor's counters (cudagraph skips among them).
--profile FILE: torch.profiler (CPU and CUDA) records the last
`--profile-iterations` timed iterations and writes Kineto's JSON to FILE.

Models: resnet50 and vgg16 (torchvision, no weights), bert (a BERT-base-sized
encoder from torch.nn layers: 12 layers, hidden 768, 12 heads, sequence 128),
mlp (8 blocks of a 4096x4096 linear layer and GELU, then a 10-way head).
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tracer", "python"))


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", choices=("resnet50", "vgg16", "bert", "mlp"), default="resnet50")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--amp", action="store_true", help="float16 autocast with a GradScaler")
    p.add_argument("--ddp", action="store_true")
    p.add_argument("--fsdp", action="store_true", help="FSDP2 fully_shard instead of DDP")
    p.add_argument("--graphs", action="store_true", help="mlp: blocks as CUDA graphs (torch.compile)")
    p.add_argument("--marks", action="store_true")
    p.add_argument("--profile", default="")
    p.add_argument("--profile-iterations", type=int, default=5)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--device", default="cuda")
    p.add_argument("--port", type=int, default=0, help="of the one-rank process group; 0: a free one")
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    if a.batch < 1 or a.iterations < 1 or a.reps < 1 or a.warmup < 0 or a.profile_iterations < 1:
        p.error("--batch, --iterations, --reps, --profile-iterations >= 1; --warmup >= 0")
    if a.ddp and a.fsdp:
        p.error("--ddp and --fsdp exclude each other")
    if a.graphs and (a.model != "mlp" or a.fsdp or a.amp):
        p.error("--graphs is for --model mlp, without --fsdp or --amp")
    if a.profile and a.profile_iterations > a.iterations * a.reps:
        p.error("--profile-iterations must not exceed --iterations x --reps")
    return a


def build(torch, name, batch, device):
    if name == "bert":
        layer = torch.nn.TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072,
                                                 dropout=0.1, batch_first=True)

        class Bert(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = torch.nn.Embedding(30522, 768)
                self.encoder = torch.nn.TransformerEncoder(layer, num_layers=12,
                                                           enable_nested_tensor=False)
                self.head = torch.nn.Linear(768, 2)

            def forward(self, ids):
                return self.head(self.encoder(self.embed(ids))[:, 0])

        model = Bert()
        x = torch.randint(0, 30522, (batch, 128), device=device)
        y = torch.randint(0, 2, (batch,), device=device)
    elif name == "mlp":
        import torch.nn.functional as F

        def block_fn(x, w, b):
            return F.gelu(F.linear(x, w, b))

        class Block(torch.nn.Module):
            def __init__(self, d):
                super().__init__()
                lin = torch.nn.Linear(d, d)
                self.weight, self.bias = lin.weight, lin.bias
                self.fn = block_fn

            def forward(self, x):
                return self.fn(x, self.weight, self.bias)

        class Mlp(torch.nn.Module):
            def __init__(self, d=4096, n=8):
                super().__init__()
                self.blocks = torch.nn.ModuleList(Block(d) for _ in range(n))
                self.head = torch.nn.Linear(d, 10)

            def forward(self, x):
                for blk in self.blocks:
                    x = blk(x)
                return self.head(x)

        model = Mlp()
        x = torch.randn(batch, 4096, device=device)
        y = torch.randint(0, 10, (batch,), device=device)
    else:
        import torchvision
        model = getattr(torchvision.models, name)(weights=None)
        x = torch.randn(batch, 3, 224, 224, device=device)
        y = torch.randint(0, 1000, (batch,), device=device)
    return model.to(device), x, y


def fsdp_units(model, name):
    """The modules that become FSDP units before the root."""
    if name == "bert":
        return list(model.encoder.layers)
    if name == "resnet50":
        return [model.layer1, model.layer2, model.layer3, model.layer4]
    return [model.features, model.classifier]


def main(argv):
    a = parse_args(argv)
    import torch

    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    cuda = a.device.startswith("cuda")
    model, x, y = build(torch, a.model, a.batch, a.device)
    net = model
    if a.ddp or a.fsdp:
        import torch.distributed as dist
        port = a.port
        if port == 0:
            import socket
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
        dist.init_process_group("nccl" if cuda else "gloo", init_method=f"tcp://127.0.0.1:{port}",
                                rank=0, world_size=1)
        if cuda:
            torch.cuda.set_device(0)
        if a.ddp:
            from torch.nn.parallel import DistributedDataParallel as DDP
            net = DDP(model, device_ids=[0] if cuda else None, broadcast_buffers=False)
        else:
            from torch.distributed.fsdp import fully_shard
            for unit in fsdp_units(model, a.model):
                fully_shard(unit)
            fully_shard(model)
            net = model
    if a.graphs:
        # One function for all blocks; should Dynamo guard on each block's
        # parameters, let it compile once per block rather than fall back.
        for knob in ("recompile_limit", "cache_size_limit"):
            if hasattr(torch._dynamo.config, knob):
                setattr(torch._dynamo.config, knob, 64)
        graphed = torch.compile(model.blocks[0].fn, mode="reduce-overhead")
        for blk in model.blocks:
            blk.fn = graphed
    optimizer = torch.optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    scaler = torch.amp.GradScaler("cuda") if a.amp else None
    marks = None
    if a.marks:
        import ssgd_marks
        marks = ssgd_marks.mark(net, optimizer, activations=not a.graphs)

    def sync():
        if cuda:
            torch.cuda.synchronize()

    def step():
        if a.graphs:
            torch.compiler.cudagraph_mark_step_begin()
        optimizer.zero_grad(set_to_none=True)
        if a.amp:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = loss_fn(net(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss = loss_fn(net(x), y)
            loss.backward()
            optimizer.step()
        sync()

    for _ in range(a.warmup):
        step()
    total = a.iterations * a.reps
    raw_start = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
    prof = None
    times = []
    last = time.perf_counter_ns()
    for i in range(total):
        if a.profile and i == total - a.profile_iterations:
            from torch.profiler import ProfilerActivity, profile
            acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
            prof = profile(activities=acts)
            prof.__enter__()
            last = time.perf_counter_ns()
        step()
        now = time.perf_counter_ns()
        times.append(now - last)
        last = now
    raw_end = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
    if prof is not None:
        prof.__exit__(None, None, None)
        prof.export_chrome_trace(a.profile)
    if marks is not None:
        marks.remove()

    blocks = [times[r * a.iterations:(r + 1) * a.iterations] for r in range(a.reps)]
    result = {
        "model": a.model, "batch": a.batch, "amp": a.amp, "graphs": a.graphs, "ddp": a.ddp, "fsdp": a.fsdp, "marks": a.marks,
        "profiled_iterations": a.profile_iterations if a.profile else 0,
        "warmup": a.warmup, "first_timed_iteration": a.warmup,
        "iteration_ns": times,
        "block_median_ns": [int(statistics.median(b)) for b in blocks],
        "median_ns": int(statistics.median(times)),
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "nccl": ".".join(map(str, torch.cuda.nccl.version())) if cuda else None,
        "traced": "CUDA_INJECTION64_PATH" in os.environ,
        # CLOCK_MONOTONIC_RAW around the timed iterations: a tracer on that
        # clock has their kernels inside this window.
        "monotonic_raw_window_ns": [raw_start, raw_end],
    }
    if a.graphs:
        from torch._dynamo.utils import counters
        result["inductor_counters"] = {k: dict(v) for k, v in counters.items() if v}
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1)
    os.replace(tmp, a.out)
    print(f"{a.model} batch {a.batch} amp={a.amp} ddp={a.ddp} fsdp={a.fsdp} marks={a.marks}: median "
          f"{result['median_ns'] / 1e6:.3f} ms, blocks "
          + ", ".join(f"{m / 1e6:.3f}" for m in result["block_median_ns"]), flush=True)
    if a.ddp or a.fsdp:
        import torch.distributed as dist
        dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1:])
