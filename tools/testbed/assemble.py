"""A testbed run's raw results -> an ssgd dataset (docs/datasets.md):

    DIR/machine.json, DIR/grid.toml                      written by the run
    DIR/network/<key>/round<k>.json                      raw collective sweeps
    DIR/network/<key>/allreduce.osu, curve.json          the all-reduce's curve, OSU format and JSON
    DIR/network/<key>/<op>.osu, curve-<op>.json          the other swept collectives' (allgather, reduce)
    DIR/network/<key>/calibration.yaml                   ssgd calibrate's fit of them all
    DIR/configs/<id>/config.json, round<k>.json          knobs, raw iteration times
    DIR/configs/<id>/rank<r>.json.gz                     each rank's profiler trace
    DIR/configs/<id>/trace.ssgdt                         imported and merged (ssgd import pytorch, merge)
    DIR/configs/<id>/scenario.yaml                       the testbed as an ssgd scenario
    DIR/configs/<id>/entry.json                          measured times, what-if sources
    DIR/manifest.json                                    ssgd dataset pack

It runs the ssgd binary for every conversion, so that the dataset is what
ssgd itself makes of the raw files."""

import glob
import json
import os
import subprocess
import tempfile

import stats
from grid import network_key as grid_network_key


class AssembleError(Exception):
    pass


def _ssgd(ssgd, args, what, cwd=None):
    r = subprocess.run([ssgd] + args, capture_output=True, text=True, cwd=cwd)
    if r.returncode != 0:
        raise AssembleError(f"{what}: ssgd {' '.join(args)} failed ({r.returncode}): {r.stderr.strip()}")
    return r.stdout


def _load_rounds(folder):
    rounds = []
    for path in sorted(glob.glob(os.path.join(folder, "round*.json")),
                       key=lambda p: int(os.path.basename(p)[5:-5])):
        with open(path) as f:
            rounds.append(json.load(f))
    return rounds


# sweep.py's collectives: OSU's benchmark name and what the testbed ran.
OSU_NAMES = {"allreduce": ("Allreduce", "all-reduce"), "allgather": ("Allgather", "all-gather"),
             "reduce": ("Reduce", "reduce to rank 0")}


def write_osu(curve, world, key, path, op="allreduce"):
    """The curve in OSU's latency format. OSU's all-gather size is what each
    rank sends: the whole buffer (sweep.py's size) / world."""
    name, what = OSU_NAMES[op]
    with open(path, "w") as f:
        f.write(f"# OSU MPI {name} Latency Test\n")
        f.write(f"# gloo {what} (torch.distributed, float32) on the ssgd testbed, network {key}: "
                "the slowest rank's time after a barrier, median over repeats, then over rounds\n")
        f.write("# Size       Avg Latency(us)\n")
        for size, ns, _, _ in curve:
            f.write(f"{world},{size // world if op == 'allgather' else size} {ns / 1000:.2f}\n")


def scenario_text(config, calibration_rel, iterations=10, scheduler=None, explicit_accumulation=False):
    rate = config["rate_bits_per_s"]
    head = [f"# The testbed configuration {describe(config)}.",
            "# One rank per node; the node's 'GPU' is the rank's CPU core."]
    common = [f"iterations: {iterations}", "cluster:", f"  nodes: {config['world']}", "  gpus_per_node: 1",
              "workload:", f"  batch_per_gpu: {config['batch']}"]
    strategy = config.get("strategy", "ddp")
    if config.get("accumulation", 1) != 1:
        common.append(f"  accumulation: {config['accumulation']}  # gradients communicated on the last "
                      "micro-batch only")
    elif explicit_accumulation:
        # In a grid of several accumulations a what-if from a capture of more
        # micro-batches would replay its count (the profile's # micro_batches).
        common.append("  accumulation: 1  # one micro-batch a step")
    # train.py steps SGD with momentum in every configuration (on the rank's
    # shard when sharded): the memory estimate counts its 4 bytes a parameter.
    common.append("  optimizer: momentum  # SGD with momentum (train.py)")
    if config["world"] == 1:
        return "\n".join(head + common) + "\n"
    lines = head + ["# Collective costs come from the gloo sweep of the same network (network.calibration:",
                    "# the collectives it swept; any other at the link's rate)."] + common + ["network:"]
    if rate is not None:
        lines.append(f"  inter_node_bandwidth: {rate // 10**6}Mb/s")
    lines += [f"  calibration: {calibration_rel}", "  algorithm: ring"]
    if strategy != "ddp":
        # gloo runs the reduce-scatters and all-gathers the calibration does
        # not cover: the textbook algorithms, not NCCL's model.
        lines.append("  library: generic")
    lines.append("policy:")
    if strategy != "ddp":
        # sharded.py: per unit (models.units(): for mlp one a layer; for cnn and
        # transformer a block of layers, which `units: layer` does not group),
        # gradients reduced after the unit's backward; gloo runs one process
        # group's works in issue order (on two threads).
        # The collectives the loop issues for the gradients (sharded.py,
        # reduce_op): P reduces, one to each shard's owner, or one all-reduce.
        reduction = {"reduce": "reduce", "allreduce": "all_reduce"}[config.get("reduce_op", "reduce")]
        lines += ["  overlap: wfbp", "sharding:", f"  strategy: {strategy}", "  units: layer",
                  "  separate_streams: false", f"  gradient_reduction: {reduction}"]
        if strategy == "hsdp":
            # shard groups of G consecutive ranks, one rank a node: groups of G
            # whole nodes; each shard all-reduced across the groups.
            lines.append(f"  group: {config['shard_group']}")
        if strategy in ("zero3", "hsdp"):
            lines += [f"  forward_prefetch: {config['forward_prefetch']}",
                      f"  backward_prefetch: {config['backward_prefetch']}", "  reshard_after_forward: true",
                      "  max_gathers_in_flight: 2"]
        return "\n".join(lines) + "\n"
    if config.get("partition_kb"):
        # Partitions: ssgd's priority policy cuts each gradient; one partition at
        # a time (credit 0), as gloo runs each partition as an op of its own; a
        # global update, as DDP's optimizer step waits for every partition.
        lines += ["  overlap: priority", f"  partition_size: {_kib(config['partition_kb'])}",
                  "  credit_size: 0B", "  update: global"]
        if scheduler is not None:
            overhead, schedule, sources = scheduler
            lines += [f"  # ssgd calibrate --scheduler on the capture(s) of {', '.join(sources)} (median)",
                      f"  partition_overhead: {overhead}ns", f"  schedule_overhead: {schedule}ns"]
    elif config["overlap"] == "on":
        lines += ["  overlap: ddp", f"  bucket_cap: {_mib(config['bucket_mb'])}", "  first_bucket: 1MiB"]
        if config.get("strategy") == "ddp":
            # A grid of strategies predicts DDP from sharded captures too, whose
            # profiles name their strategy (the replay's default): say none.
            lines += ["sharding:", "  strategy: none"]
    else:
        lines.append("  overlap: single")
    return "\n".join(lines) + "\n"


def describe(config):
    """One line about a configuration, for scenarios and entries."""
    text = f"{config['model']} (batch {config['batch']} per rank), {config['world']} rank(s)"
    strategy = config.get("strategy", "ddp")
    if config["world"] > 1 and strategy != "ddp":
        text += f", link {config['rate']}, {strategy} by hand over gloo"
        if strategy == "hsdp":
            text += f" (shard groups of {config['shard_group']} ranks)"
        if strategy in ("zero3", "hsdp"):
            text += (f" (forward prefetch {config['forward_prefetch']}, backward prefetch "
                     f"{config['backward_prefetch']})")
        text += f", gradients by {config['reduce_op']}"
    elif config["world"] > 1:
        text += f", link {config['rate']}, overlap {config['overlap']}"
        if config["overlap"] == "on":
            text += f", DDP buckets of {config['bucket_mb']} MiB"
        if config.get("partition_kb"):
            text += f" cut into partitions of {config['partition_kb']} KiB"
    if config.get("accumulation", 1) != 1:
        text += f", {config['accumulation']} micro-batches a step"
    return text + f", {config['cpu_per_rank']:g} CPU per rank"


def _kib(kb):
    return f"{int(kb)}KiB" if float(kb).is_integer() else f"{round(kb * 1024)}B"


def _mib(mb):
    # DDP's bucket_cap_mb counts MiB (bucket_cap_mb * 1024 * 1024 bytes).
    return f"{int(mb)}MiB" if float(mb).is_integer() else f"{round(mb * 1024 * 1024)}B"


def read_scheduler_fit(path):
    """(partition_overhead ns or None, schedule_overhead ns) from the scenario
    `ssgd calibrate --scheduler -o` wrote."""
    values = {}
    with open(path) as f:
        for line in f:
            key, sep, value = line.strip().partition(":")
            if sep and value.strip().endswith("ns"):
                values[key] = int(value.strip()[:-2])
    if "schedule_overhead" not in values:
        raise AssembleError(f"{path}: no schedule_overhead")
    return values.get("partition_overhead"), values["schedule_overhead"]


def leave_one_out(cid, knobs, fitted, all_knobs):
    """The scheduler costs for a partitioned configuration: the medians of the
    fits of the other partitioned configurations of the same model and
    network, so that a prediction of it never uses its own capture; its own
    fit only when it is the only one (the scenario says so)."""
    def same(other):
        k = all_knobs[other]
        return all(k.get(n) == knobs.get(n) for n in ("model", "rate", "world", "cpu_per_rank"))
    others = sorted(c for c in fitted if c != cid and same(c))
    sources = others or ([cid] if cid in fitted else [])
    if not sources:
        return None

    def median(values):
        values = sorted(values)
        return values[(len(values) - 1) // 2]
    overheads = [fitted[c][0] for c in sources if fitted[c][0] is not None]
    overhead = median(overheads) if overheads else 0
    return overhead, median([fitted[c][1] for c in sources]), sources


def assemble(out, grid, ssgd):
    ssgd = os.path.abspath(ssgd)
    if not os.path.isfile(ssgd):
        raise AssembleError(f"{ssgd}: no ssgd binary (build it first: tools/build.sh)")
    # 1. Networks: the sweep curve, in OSU's format, and its calibration.
    for folder in sorted(glob.glob(os.path.join(out, "network", "*"))):
        rounds = _load_rounds(folder)
        if not rounds:
            continue
        key = os.path.basename(folder)
        world = rounds[0]["world"]
        osus = []
        for op in stats.sweep_ops(rounds):
            curve = stats.sweep_curve(rounds, op)
            osus.append(os.path.join(folder, f"{op}.osu"))
            write_osu(curve, world, key, osus[-1], op)
            name = "curve.json" if op == "allreduce" else f"curve-{op}.json"
            with open(os.path.join(folder, name), "w") as f:
                json.dump([{"bytes": s, "median_ns": m, "min_ns": lo, "round_spread": sp}
                           for s, m, lo, sp in curve], f, indent=1)
                f.write("\n")
        _ssgd(ssgd, ["calibrate"] + osus + ["-o", os.path.join(folder, "calibration.yaml")], f"network {key}")
    # 2. Configurations: captures imported and merged, partitioned ones' scheduler
    # costs fitted, then scenarios and entries.
    configs = {c.id: c for c in grid.configs}
    found = []
    for folder in sorted(glob.glob(os.path.join(out, "configs", "*"))):
        cid = os.path.basename(folder)
        rounds = _load_rounds(folder)
        if not rounds:
            continue
        with open(os.path.join(folder, "config.json")) as f:
            knobs = json.load(f)
        captures = sorted(glob.glob(os.path.join(folder, "rank*.json.gz")))
        if captures:
            with tempfile.TemporaryDirectory(dir=folder, prefix=".import") as tmp:
                for path in captures:
                    r = int(os.path.basename(path)[4:].split(".")[0])
                    _ssgd(ssgd, ["import", "pytorch", path, "-o", os.path.join(tmp, f"rank-{r}.ssgdt"),
                                 "--rank", str(r)], cid)
                _ssgd(ssgd, ["merge", tmp, "-o", os.path.join(folder, "trace.ssgdt")], cid)
            if knobs.get("partition_kb"):
                _ssgd(ssgd, ["calibrate", "--scheduler", "trace.ssgdt", "-o", "scheduler.yaml"], cid,
                      cwd=folder)
        found.append((cid, folder, knobs, rounds, captures))
    knobs_of = {cid: knobs for cid, _, knobs, _, _ in found}
    varied_accumulation = len({knobs.get("accumulation", 1) for knobs in knobs_of.values()}) > 1
    fitted = {cid: read_scheduler_fit(os.path.join(folder, "scheduler.yaml"))
              for cid, folder, knobs, _, _ in found
              if knobs.get("partition_kb") and os.path.isfile(os.path.join(folder, "scheduler.yaml"))}
    for cid, folder, knobs, rounds, captures in found:
        network = os.path.join(out, "network", grid_network_key(knobs["rate"], knobs["world"],
                                                                knobs["cpu_per_rank"]))
        if knobs["world"] > 1 and not os.path.isfile(os.path.join(network, "calibration.yaml")):
            raise AssembleError(f"{cid}: no all-reduce sweep of its network ({network})")
        calibration = os.path.relpath(os.path.join(network, "calibration.yaml"), folder)
        scheduler = None
        if knobs.get("partition_kb"):
            scheduler = leave_one_out(cid, knobs, fitted, knobs_of)
        with open(os.path.join(folder, "scenario.yaml"), "w") as f:
            f.write(scenario_text(knobs, calibration, scheduler=scheduler,
                                  explicit_accumulation=varied_accumulation))
        entry = {"id": cid,
                 "description": describe(knobs),
                 "scenario": "scenario.yaml",
                 "measured": {"iteration_ns": stats.iteration_stats(rounds)},
                 "config": knobs}
        memory = stats.memory_stats(rounds)
        if memory:
            entry["measured"]["memory_bytes"] = memory
        if captures:
            entry["trace"] = "trace.ssgdt"
        if cid in configs:
            sources = [s for s in grid.whatif_sources(configs[cid])
                       if os.path.isfile(os.path.join(out, "configs", s, "rank0.json.gz"))]
            if sources:
                entry["predict_from"] = sources
        with open(os.path.join(folder, "entry.json"), "w") as f:
            json.dump(entry, f, indent=2)
            f.write("\n")
    # 3. The manifest.
    _ssgd(ssgd, ["dataset", "pack", out, "--name", grid.name, "--description", grid.description],
          "dataset pack")


__all__ = ["assemble", "AssembleError", "scenario_text", "write_osu"]
