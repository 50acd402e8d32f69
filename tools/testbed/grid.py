"""Grid files: which testbed configurations to run, as TOML.

    name = "cpu-cluster"
    description = "..."
    rounds = 3            # every configuration runs once per round, rounds interleaved
    warmup = 5            # untimed iterations before the timed ones
    iterations = 20       # timed iterations per configuration and round
    capture = 6           # profiled and marked iterations (round 1 only; 0: no capture)
    profiler_warmup = 6   # profiled iterations before them, unmarked: the profiler's own
                          # start-up slows the first ones it records
    seed = 1              # the order of the tasks in each round
    mmap_threshold_kb = 0 # > 0: every rank fixes glibc's M_MMAP_THRESHOLD at this many KiB
                          # (train.py --mmap-threshold-kb), so that freed buffers leave the
                          # resident set and peak RSS follows the bytes alive; 0: glibc's default
    whatif = ["rate", "bucket_mb", "overlap:on->off", "world:2->4"]

    [batch]               # samples per rank per iteration, by model
    mlp = 32

    [sweep]               # the gloo collective sweep, one per (rate, world, cpu_per_rank)
    sizes = [1024, 4096, ...]   # bytes (the whole buffer: an all-gather's output)
    repeats = 10
    large_repeats = 5           # above 4 MiB
    ops = ["allreduce"]         # and "allgather", "reduce" (root rank 0): the collectives
                                # the sharded loops issue; allreduce is always swept

    [[configs]]           # one table = a cartesian product: a list is an axis
    model = ["mlp", "cnn"]
    rate = ["unshaped", "1gbit"]
    bucket_mb = 25
    overlap = "on"        # "on" (DDP) or "off" (one all-reduce after backward)
    partition_kb = 0      # overlap on: cut every bucket into partitions of this many KiB,
                          # each its own all-reduce (ByteScheduler's partitioning); 0: none
    world = 2             # 1: the model alone (no collective; rate, bucket, overlap ignored)
    cpu_per_rank = 1.0    # < 1: a cgroup CPU quota per rank
    accumulation = 1      # micro-batches a step; gradients communicated on the last only
    strategy = "ddp"      # "ddp" (bucket_mb, overlap, partition_kb apply), or sharded by
                          # hand over gloo (sharded.py): "zero2", "zero3", "hsdp"
    forward_prefetch = 1  # zero3, hsdp: 0 or 1 (the next unit's all-gather before this one's forward)
    backward_prefetch = "pre"  # zero3, hsdp: "pre" or "post" (the unit's gradient)
    reduce_op = "reduce"  # zero2, zero3: "reduce" (P gloo reduces, one to each shard's owner)
                          # or "allreduce" (one all-reduce, each rank keeps its shard); hsdp: "reduce"
    shard_group = 2       # hsdp: the ranks of a shard group (2 <= G < world, dividing it);
                          # ignored by the other strategies

`whatif` names the knobs along which one configuration is predicted from the
capture of another with the same model: a knob name (every pair of values),
or knob:A->B (from A to B only).
"""

import itertools
import tomllib

import cluster
import sharded
import sweep as sweepmod
from sweep import OPS as SWEEP_OPS  # sweep.py's collectives

MODELS = ("mlp", "cnn", "transformer")  # models.py builds them
KNOBS = ("model", "world", "cpu_per_rank", "rate", "bucket_mb", "overlap", "partition_kb", "accumulation",
         "strategy", "forward_prefetch", "backward_prefetch", "reduce_op", "shard_group")
DEFAULTS = {"world": 2, "cpu_per_rank": 1.0, "rate": "unshaped", "bucket_mb": 25, "overlap": "on",
            "partition_kb": 0, "accumulation": 1, "strategy": "ddp", "forward_prefetch": 1,
            "backward_prefetch": "pre", "reduce_op": "reduce", "shard_group": 0}
STRATEGIES = ("ddp", "zero2", "zero3", "hsdp")
TOP_KEYS = {"name", "description", "rounds", "warmup", "iterations", "capture", "profiler_warmup", "seed",
            "whatif", "mmap_threshold_kb",
            "batch", "sweep", "configs"}


class GridError(Exception):
    pass


def _fmt_number(x):
    return str(int(x)) if float(x).is_integer() else str(x).replace(".", "p")


def network_key(rate_label, world, cpu_per_rank):
    """The name of one network's all-reduce sweep: link rate, ranks, CPU cap."""
    key = f"{rate_label}-w{world}"
    if cpu_per_rank != 1:
        key += f"-cpu{_fmt_number(cpu_per_rank)}"
    return key


class Config:
    """One configuration of the testbed."""

    def __init__(self, model, batch, world, cpu_per_rank, rate_bits, bucket_mb, overlap, partition_kb=0,
                 accumulation=1, strategy="ddp", forward_prefetch=None, backward_prefetch=None, reduce_op=None,
                 shard_group=None):
        self.model = model
        self.shard_group = shard_group
        self.accumulation = accumulation
        self.strategy = strategy
        self.forward_prefetch = forward_prefetch
        self.backward_prefetch = backward_prefetch
        self.reduce_op = reduce_op
        self.partition_kb = partition_kb
        self.batch = batch
        self.world = world
        self.cpu_per_rank = cpu_per_rank
        self.rate_bits = rate_bits
        self.bucket_mb = bucket_mb
        self.overlap = overlap

    @property
    def id(self):
        if self.world == 1:
            parts = [self.model, "w1"]
            if self.accumulation != 1:
                parts.append(f"k{self.accumulation}")
            if self.cpu_per_rank != 1:
                parts.append(f"cpu{_fmt_number(self.cpu_per_rank)}")
            return "-".join(parts)
        parts = [self.model, f"w{self.world}", cluster.rate_label(self.rate_bits)]
        if self.strategy == "ddp":
            parts.append(f"b{_fmt_number(self.bucket_mb)}" if self.overlap == "on" else "nooverlap")
        else:
            parts.append(self.strategy)
            if self.strategy == "hsdp":
                parts.append(f"g{self.shard_group}")
            if self.strategy in ("zero3", "hsdp"):
                parts.append(f"f{self.forward_prefetch}")
                if self.backward_prefetch != "pre":
                    parts.append(f"b{self.backward_prefetch}")
            if self.reduce_op != "reduce":
                parts.append("ar")
        if self.partition_kb:
            parts.append(f"p{_fmt_number(self.partition_kb)}")
        if self.accumulation != 1:
            parts.append(f"k{self.accumulation}")
        if self.cpu_per_rank != 1:
            parts.append(f"cpu{_fmt_number(self.cpu_per_rank)}")
        return "-".join(parts)

    @property
    def network_key(self):
        """The all-reduce sweep that calibrates this configuration's network."""
        return network_key(cluster.rate_label(self.rate_bits), self.world, self.cpu_per_rank)

    def knobs(self):
        return {"model": self.model, "batch": self.batch, "world": self.world,
                "cpu_per_rank": self.cpu_per_rank, "rate": cluster.rate_label(self.rate_bits),
                "rate_bits_per_s": self.rate_bits, "bucket_mb": self.bucket_mb, "overlap": self.overlap,
                "partition_kb": self.partition_kb, "accumulation": self.accumulation, "strategy": self.strategy,
                "forward_prefetch": self.forward_prefetch, "backward_prefetch": self.backward_prefetch,
                "reduce_op": self.reduce_op, "shard_group": self.shard_group}

    def knob(self, name):
        return {"rate": self.rate_bits}.get(name, getattr(self, name, None))


class Grid:
    def __init__(self, path, text=None):
        self.path = path
        try:
            if text is not None:
                data = tomllib.loads(text)
            else:
                with open(path, "rb") as f:
                    data = tomllib.load(f)
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise GridError(f"{path}: {e}") from None
        unknown = sorted(set(data) - TOP_KEYS)
        if unknown:
            raise GridError(f"{path}: unknown key(s) {', '.join(unknown)}")
        self.name = self._str(data, "name", "dataset")
        self.description = self._str(data, "description", "")
        self.rounds = self._int(data, "rounds", 3, 1, 100)
        self.warmup = self._int(data, "warmup", 5, 0, 1000)
        self.iterations = self._int(data, "iterations", 20, 1, 100000)
        self.capture = self._int(data, "capture", 6, 0, 1000)
        self.profiler_warmup = self._int(data, "profiler_warmup", 6, 0, 1000)
        self.seed = self._int(data, "seed", 1, 0, 2**31)
        self.mmap_threshold_kb = self._int(data, "mmap_threshold_kb", 0, 0, 32 * 1024)
        self.batch = data.get("batch", {})
        if not isinstance(self.batch, dict) or not all(isinstance(v, int) and v > 0 for v in self.batch.values()):
            raise GridError(f"{path}: batch: expected a table of model = samples (> 0)")
        sweep = data.get("sweep", {})
        self.sweep_sizes = sweep.get("sizes", [1 << k for k in range(10, 27)])
        self.sweep_repeats = sweep.get("repeats", 10)
        self.sweep_large_repeats = sweep.get("large_repeats", 5)
        if not self.sweep_sizes or any(not isinstance(s, int) or s < 4 or s % 4 for s in self.sweep_sizes):
            raise GridError(f"{path}: sweep.sizes: expected byte counts, positive multiples of 4")
        self.sweep_ops = sweep.get("ops", ["allreduce"])
        if not isinstance(self.sweep_ops, list) or "allreduce" not in self.sweep_ops \
                or any(o not in SWEEP_OPS for o in self.sweep_ops) or len(set(self.sweep_ops)) != len(self.sweep_ops):
            raise GridError(f"{path}: sweep.ops: expected a list of distinct names among "
                            f"{', '.join(SWEEP_OPS)}, allreduce among them")
        self.whatif = data.get("whatif", [])
        for w in self.whatif:
            knob = w.split(":")[0]
            if knob not in KNOBS or knob == "model":
                raise GridError(f"{path}: whatif: '{w}': expected one of {', '.join(KNOBS[1:])}[:A->B]")
        tables = data.get("configs", [])
        if not tables:
            raise GridError(f"{path}: no [[configs]] table")
        self.configs = []
        seen = set()
        for i, table in enumerate(tables):
            for c in self._expand(table, i):
                if c.id not in seen:
                    seen.add(c.id)
                    self.configs.append(c)
        if "allgather" in self.sweep_ops:
            for w in sorted({c.world for c in self.configs if c.world > 1}):
                problem = sweepmod.allgather_size_problem(self.sweep_sizes, w)
                if problem:
                    raise GridError(f"{path}: sweep.sizes: {problem}")

    def _str(self, data, key, default):
        v = data.get(key, default)
        if not isinstance(v, str):
            raise GridError(f"{self.path}: {key}: expected a string")
        return v

    def _int(self, data, key, default, lo, hi):
        v = data.get(key, default)
        if not isinstance(v, int) or not lo <= v <= hi:
            raise GridError(f"{self.path}: {key}: expected an integer from {lo} to {hi}, got {v!r}")
        return v

    def _expand(self, table, index):
        where = f"{self.path}: configs[{index}]"
        unknown = sorted(set(table) - set(KNOBS))
        if unknown:
            raise GridError(f"{where}: unknown key(s) {', '.join(unknown)}")
        if "model" not in table:
            raise GridError(f"{where}: model is required")
        axes = []
        for knob in KNOBS:
            v = table.get(knob, DEFAULTS.get(knob))
            axes.append(v if isinstance(v, list) else [v])
        out = []
        for model, world, cpu, rate, bucket, overlap, partition, accumulation, strategy, fprefetch, bprefetch, \
                reduce_op, group in itertools.product(*axes):
            if model not in MODELS:
                raise GridError(f"{where}: model '{model}': expected one of {', '.join(MODELS)}")
            if model not in self.batch:
                raise GridError(f"{where}: no batch for model '{model}' in [batch]")
            if not isinstance(world, int) or not 1 <= world <= 64:
                raise GridError(f"{where}: world {world!r}: expected an integer from 1 to 64")
            if not isinstance(cpu, (int, float)) or not 0 < cpu <= 1:
                raise GridError(f"{where}: cpu_per_rank {cpu!r}: expected a number in (0, 1]")
            try:
                rate_bits = cluster.parse_rate_bits(rate)
            except ValueError as e:
                raise GridError(f"{where}: {e}") from None
            if not isinstance(bucket, (int, float)) or bucket <= 0:
                raise GridError(f"{where}: bucket_mb {bucket!r}: expected a number > 0")
            if overlap not in ("on", "off"):
                raise GridError(f"{where}: overlap {overlap!r}: expected \"on\" or \"off\"")
            if not isinstance(partition, (int, float)) or partition < 0:
                raise GridError(f"{where}: partition_kb {partition!r}: expected a number >= 0")
            if partition and (overlap != "on" or world == 1):
                raise GridError(f"{where}: partition_kb {partition!r}: partitions cut DDP's buckets "
                                "(overlap \"on\", world > 1)")
            if not isinstance(accumulation, int) or not 1 <= accumulation <= 1024:
                raise GridError(f"{where}: accumulation {accumulation!r}: expected an integer from 1 to 1024")
            if strategy not in STRATEGIES:
                raise GridError(f"{where}: strategy {strategy!r}: expected one of {', '.join(STRATEGIES)}")
            if fprefetch not in (0, 1):
                raise GridError(f"{where}: forward_prefetch {fprefetch!r}: expected 0 or 1")
            if bprefetch not in ("pre", "post"):
                raise GridError(f"{where}: backward_prefetch {bprefetch!r}: expected \"pre\" or \"post\"")
            if reduce_op not in ("reduce", "allreduce"):
                raise GridError(f"{where}: reduce_op {reduce_op!r}: expected \"reduce\" or \"allreduce\"")
            if strategy == "hsdp":
                if not sharded.hsdp_group_ok(world, group):
                    raise GridError(f"{where}: shard_group {group!r}: strategy \"hsdp\" needs an integer G, "
                                    f"2 <= G < world ({world}), dividing it")
                if reduce_op != "reduce":
                    raise GridError(f"{where}: reduce_op {reduce_op!r}: strategy \"hsdp\" reduces by \"reduce\"")
            elif not isinstance(group, int) or isinstance(group, bool) or group < 0:
                raise GridError(f"{where}: shard_group {group!r}: expected an integer (strategy \"hsdp\")")
            if strategy != "hsdp":
                group = None  # the world
            if strategy != "ddp" and partition:
                raise GridError(f"{where}: partition_kb {partition!r}: partitions cut DDP's buckets "
                                "(strategy \"ddp\")")
            if world == 1:  # one rank: no network, no collective
                rate_bits, bucket, overlap, strategy = None, None, "none", "ddp"
            elif strategy != "ddp":  # sharded: no DDP buckets; prefetch knobs for zero3 and hsdp only
                bucket, overlap = None, "sharded"
                if strategy == "zero2":
                    fprefetch = bprefetch = None
            elif overlap == "off":
                bucket = None  # one all-reduce of every gradient: no buckets
            if strategy == "ddp":
                fprefetch = bprefetch = reduce_op = None
            out.append(Config(model, self.batch[model], world, float(cpu), rate_bits, bucket, overlap,
                              partition, accumulation, strategy, fprefetch, bprefetch, reduce_op, group))
        return out

    def network_keys(self):
        """(key, rate_bits, world, cpu_per_rank) of each all-reduce sweep, in order."""
        seen = {}
        for c in self.configs:
            if c.world == 1:
                continue
            seen.setdefault(c.network_key, (c.network_key, c.rate_bits, c.world, c.cpu_per_rank))
        return list(seen.values())

    def whatif_sources(self, target):
        """The ids of the configurations that predict `target`."""
        out = []
        for rule in self.whatif:
            knob, _, arrow = rule.partition(":")
            for c in self.configs:
                if c is target or c.model != target.model:
                    continue
                differs = [k for k in KNOBS if k != "model" and c.knob(k) != target.knob(k)]
                # overlap off has no bucket: a bucket difference alone does not count there
                if c.overlap == "off" or target.overlap == "off":
                    differs = [k for k in differs if k != "bucket_mb"]
                # one rank has no network and no overlap: only the world size, the CPU count and
                # the micro-batches
                if c.world == 1 or target.world == 1:
                    differs = [k for k in differs if k in ("world", "cpu_per_rank", "accumulation")]
                # a strategy change changes its own knobs (buckets, prefetch) with it
                if "strategy" in differs:
                    differs = [k for k in differs if k not in ("bucket_mb", "overlap", "forward_prefetch",
                                                               "backward_prefetch", "reduce_op", "shard_group")]
                if differs != [knob]:
                    continue
                if arrow:
                    a, _, b = arrow.partition("->")
                    if str(c.knob(knob)) != a or str(target.knob(knob)) != b:
                        continue
                if c.id not in out:
                    out.append(c.id)
        return out
