"""Sharded data parallelism by hand over torch.distributed with gloo (ZeRO-2,
ZeRO-3 or FSDP's FULL_SHARD, and HSDP or FSDP's HYBRID_SHARD), for the testbed: Debian's torch 1.13 cannot
import FSDP on Python 3.11, and its gloo has all_gather, reduce, broadcast and
all_reduce but no reduce-scatter.

Units. Each top-level layer of the model is a unit (models.units(): mlp's
9 Linear layers, cnn's stem, 6 basic blocks and fc, transformer's embedding,
4 encoder layers and head). A unit's parameters live in one flat float32 buffer `full` of
N_pad = ceil(N / P) * P elements (N its parameters, P the world size; the
padding is zeros), each parameter's .data a view of it; rank r owns elements
[r S, (r + 1) S), S = N_pad / P: its shard, an nn.Parameter of S elements that
the optimizer (SGD with momentum) steps on. Its gradient lives in a flat
buffer `grad` of N_pad elements, each parameter's .grad a view of it, made
when the unit's backward starts and dropped once it has been reduced.

Per step of k micro-batches (`plan()` lists the collectives in issue order;
`Engine.log` records what was issued, and the unit tests hold them equal):

  ZeRO-3 (per unit u = 0 .. U-1, in each micro-batch m)
    forward    before u's forward: wait for its all-gather if it is in
               flight, else all-gather it now (sync); then, forward prefetch
               1, issue u+1's all-gather (async). After u's forward free
               `full` (storage resized to 0), except for the last unit,
               whose parameters stay gathered into its backward (FSDP).
    backward   when u's backward starts (a pre-hook on an identity node
               wrapped around u's output): gather u as above (it was freed
               after forward, or prefetched); backward prefetch pre: issue
               u-1's all-gather (async). When u's gradients are accumulated
               (post-hooks on the AccumulateGrad nodes): free `full`;
               backward prefetch post: issue u-1's all-gather (async); on the
               last micro-batch, reduce `grad` (async, see reduce_op).
  ZeRO-2: `full` always allocated; no gather in forward or backward; the
    gradients as ZeRO-3's; after optimizer.step() every unit's all-gather is
    issued (async, in unit order) and the next step's first forward waits for
    all of them.
  HSDP (group G): ZeRO-3 within shard groups of G consecutive ranks
    ({0..G-1}, {G..2G-1}, ...: a unit padded to a multiple of G, rank r
    owning the slice r mod G of its group's), every all-gather and reduce on
    the shard group's process group; then each owner's reduced slice (S
    elements) is all-reduced over its replica group (the ranks with the same
    r mod G, one in each of the R = P / G shard groups). gloo matches a
    process group's collectives by issue order, so the all-reduces are
    issued in unit order on every rank: a unit's all-reduce is issued, at a
    later unit's reduction (polled, never waited for) or at the final wait,
    once its reduces are completed and every earlier unit's all-reduce is
    issued. Where it falls among the shard group's collectives depends on
    timing; each process group's own order does not.
    Once its reduces are complete, a unit keeps a copy of the rank's slice
    and drops its whole gradient buffer (FSDP keeps the reduce-scatter's
    output only), and the all-reduce runs on the copy.
  All: optimizer.step() first waits for every gradient reduction, in issue
  order; each owner's shard gradient is its slice of the reduced `grad` / P
  (HSDP: of the all-reduced slice).

reduce_op: gloo has no reduce-scatter, so it is built from
  "reduce"     P dist.reduce calls on the slices of `grad`, slice i (S
               elements) to rank i, in i order (gloo's reduce is a ring
               reduce-scatter followed by a gather of the chunks to the root)
  "allreduce"  one dist.all_reduce of `grad` (N_pad elements); each rank
               keeps its slice.
Gradient reductions are asynchronous: the backward never waits for them; a
reduced buffer is dropped as soon as its work is seen completed (polled at
each later unit's reduction) or at the final wait.

gloo runs a process group's works on two threads, in issue order, so two
collectives may be on the wire at once (HSDP: two on each of its two
process groups).
"""

import math

STRATEGIES = ("zero2", "zero3", "hsdp")
REDUCE_OPS = ("reduce", "allreduce")
BACKWARD_PREFETCH = ("pre", "post")


def padded(numel, world):
    """Elements of a unit's flat buffer: numel rounded up to a multiple of world."""
    return math.ceil(numel / world) * world


def hsdp_group_ok(world, group):
    """HSDP's shard group: an integer G, 2 <= G < world, dividing it."""
    return isinstance(group, int) and not isinstance(group, bool) and 2 <= group < world and world % group == 0


def shard_ranks(world, strategy, group=None, reduce_op="reduce"):
    """The ranks one shard spans: the world, or HSDP's group G (hsdp_group_ok;
    gradients reduced by "reduce" only, so that each of its process groups
    runs one kind of collective per op). Raises ValueError."""
    if strategy != "hsdp":
        if group is not None and group != world:
            raise ValueError(f"group {group}: only hsdp shards over a group smaller than the world")
        return world
    if not hsdp_group_ok(world, group):
        raise ValueError(f"hsdp: group {group}: expected 2 <= group < world ({world}), dividing it")
    if reduce_op != "reduce":
        raise ValueError("hsdp: reduce_op must be reduce")
    return group


def plan(unit_numels, world, strategy, forward_prefetch=1, backward_prefetch="pre", accumulation=1,
         reduce_op="reduce", group=None):
    """The collectives of one step, in issue order: dicts with phase
    (forward, backward, step), micro (micro-batch), unit, op (all_gather,
    reduce, all_reduce), bytes (the whole buffer: N_pad x 4, or the slice
    for reduce), dst (reduce's root: its index in the shard group) and sync
    (the issuing thread waits for it at once); under hsdp each also has
    group: "shard" or "replica" (the cross-group all-reduce, placed right
    after its unit's reduces: the Engine issues it later, at a time that
    varies, so only each group's own order is fixed). Pure logic: no torch.
    ZeRO-2's step gathers are those after this step's update (the very first
    step starts from the model's own, full, parameters: no gather before
    it)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy '{strategy}': expected one of {', '.join(STRATEGIES)}")
    G = shard_ranks(world, strategy, group, reduce_op)
    U = len(unit_numels)
    pad = [padded(n, G) for n in unit_numels]
    tag = {"group": "shard"} if strategy == "hsdp" else {}
    out = []

    def gather(phase, m, u, sync):
        out.append({"phase": phase, "micro": m, "unit": u, "op": "all_gather", "bytes": 4 * pad[u],
                    "sync": sync, **tag})

    def reduce(m, u):
        if reduce_op == "reduce":
            shard = pad[u] // G
            for i in range(G):
                out.append({"phase": "backward", "micro": m, "unit": u, "op": "reduce", "bytes": 4 * shard,
                            "dst": i, "sync": False, **tag})
            if strategy == "hsdp":
                out.append({"phase": "backward", "micro": m, "unit": u, "op": "all_reduce",
                            "bytes": 4 * shard, "sync": False, "group": "replica"})
        else:
            out.append({"phase": "backward", "micro": m, "unit": u, "op": "all_reduce", "bytes": 4 * pad[u],
                        "sync": False})

    for m in range(accumulation):
        last_micro = m == accumulation - 1
        if strategy in ("zero3", "hsdp"):
            gathered = set()   # gathered or in flight
            for u in range(U):
                if u not in gathered:
                    gather("forward", m, u, True)
                    gathered.add(u)
                if forward_prefetch and u + 1 < U and u + 1 not in gathered:
                    gather("forward", m, u + 1, False)
                    gathered.add(u + 1)
                if u != U - 1:
                    gathered.discard(u)
            for u in reversed(range(U)):
                if u not in gathered:
                    gather("backward", m, u, True)
                    gathered.add(u)
                if backward_prefetch == "pre" and u > 0 and u - 1 not in gathered:
                    gather("backward", m, u - 1, False)
                    gathered.add(u - 1)
                gathered.discard(u)
                if backward_prefetch == "post" and u > 0 and u - 1 not in gathered:
                    gather("backward", m, u - 1, False)
                    gathered.add(u - 1)
                if last_micro:
                    reduce(m, u)
        elif last_micro:
            for u in reversed(range(U)):
                reduce(m, u)
    if strategy == "zero2":
        for u in range(U):
            gather("step", accumulation - 1, u, False)
    return out


def by_group(log):
    """{group: the entries of that process group, in order} (HSDP's "shard"
    and "replica"; None for the others' one group)."""
    out = {}
    for e in log:
        out.setdefault(e.get("group"), []).append(e)
    return out


def op_order_bytes(log):
    """{op: that op's sizes in issue order}: HSDP's marks (each op runs on one
    process group, whose order is fixed)."""
    out = {}
    for e in log:
        out.setdefault(e["op"], []).append(e["bytes"])
    return out


def range_order_bytes(log):
    """A step's collective sizes in the order they fall in one iteration's
    range (ssgd_marks' iteration N runs from the end of step N-1's
    optimizer.step() to the end of step N's): ZeRO-2's step gathers, issued
    after the update, open the next range; then the rest in issue order."""
    steps = [e["bytes"] for e in log if e["phase"] == "step"]
    return steps + [e["bytes"] for e in log if e["phase"] != "step"]


class Engine:
    """Shards `model` (already built, the same on every rank) over the
    default process group (hsdp: over shard groups of `group` ranks, made
    here with dist.new_group, which every rank calls for every group in
    one order). Use:

        engine = Engine(torch, dist, models.units(name, model), "zero3", forward_prefetch=1)
        optimizer = torch.optim.SGD(engine.shards, lr=..., momentum=...)
        for each step:
            for m in range(k):
                engine.micro_batch(last=(m == k - 1))
                loss_fn(model(x), y).backward()
            engine.before_step()      # waits for the gradient reductions
            optimizer.step()
            engine.after_step()       # ZeRO-2: the step gathers
        engine.drain()                # no work left in flight

    `log` holds the collectives issued since the last begin of a step (the
    first micro_batch of a step clears it), in plan()'s form."""

    def __init__(self, torch, dist, units, strategy, forward_prefetch=1, backward_prefetch="pre",
                 reduce_op="reduce", group=None):
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy '{strategy}': expected one of {', '.join(STRATEGIES)}")
        if forward_prefetch not in (0, 1):
            raise ValueError("forward_prefetch: expected 0 or 1")
        if backward_prefetch not in BACKWARD_PREFETCH:
            raise ValueError(f"backward_prefetch: expected one of {', '.join(BACKWARD_PREFETCH)}")
        if reduce_op not in REDUCE_OPS:
            raise ValueError(f"reduce_op: expected one of {', '.join(REDUCE_OPS)}")
        self.torch, self.dist = torch, dist
        self.strategy = strategy
        self.forward_prefetch = forward_prefetch
        self.backward_prefetch = backward_prefetch
        self.reduce_op = reduce_op
        self.world, self.rank = dist.get_world_size(), dist.get_rank()
        self.hsdp = strategy == "hsdp"
        self.gathers_per_unit = strategy in ("zero3", "hsdp")
        self.shard_size = shard_ranks(self.world, strategy, group, reduce_op)
        self.local = self.rank % self.shard_size        # the rank's place in its shard group
        self.group_base = self.rank - self.local        # its shard group's first rank
        self.shard_group = self.replica_group = None    # None: the default group
        if self.hsdp:
            G, R = self.shard_size, self.world // self.shard_size
            shard_groups = [dist.new_group(list(range(g * G, (g + 1) * G))) for g in range(R)]
            replica_groups = [dist.new_group(list(range(i, self.world, G))) for i in range(G)]
            self.shard_group = shard_groups[self.rank // G]
            self.replica_group = replica_groups[self.local]
        self.units = [_Unit(self, i, name, module) for i, (name, module) in enumerate(units)]
        if not self.units:
            raise ValueError("sharded: the model has no unit with parameters")
        self.shards = [u.shard for u in self.units]
        self.last_micro = True
        self._micro = 0
        self.log = []
        self._reductions = []   # [unit, [works], stage: "shard" or (hsdp) "replica"] in issue order
        self._step_gathers = []
        self._new_step = True
        self._post_hooks = []   # AccumulateGrad nodes must stay alive for their hooks
        for u in self.units:
            u.install()
        if self.gathers_per_unit:
            for u in self.units:
                u.free()

    # -- the step
    def micro_batch(self, last):
        """Called before each micro-batch's forward; `last`: the one whose
        gradients are reduced."""
        if self._new_step:
            self.log = []
            self._new_step = False
            self._micro = 0
        else:
            self._micro += 1
        self.last_micro = last

    def op_ranks(self):
        """{op: the members of this rank's process group for it, in the group's
        order}, for the marks (hsdp): the shard group's consecutive ranks for
        the gathers and reduces, the replicas' every G-th rank for the
        all-reduces."""
        if not self.hsdp:
            return {}
        G = self.shard_size
        shard = list(range(self.group_base, self.group_base + G))
        return {"all_gather": shard, "reduce": shard,
                "all_reduce": list(range(self.local, self.world, G))}

    def before_step(self):
        # hsdp: every all-reduce left is issued (in unit order) before any is
        # waited for, so that they run together as in the backward.
        if self.hsdp:
            for entry in self._reductions:
                if entry[2] == "shard":
                    for w in entry[1]:
                        w.wait()
                    entry[1], entry[2] = [entry[0].replicate()], "replica"
        for unit, works, _ in self._reductions:
            for w in works:
                w.wait()
            unit.finish_reduction()
        self._reductions = []

    def after_step(self):
        self._new_step = True
        if self.strategy == "zero2":
            for u in self.units:
                self._step_gathers.append(u.gather("step", sync=False))

    def drain(self):
        self.before_step()
        self._wait_step_gathers()
        for u in self.units:
            if u.in_flight is not None:
                u.wait_gather()

    def _wait_step_gathers(self):
        for w in self._step_gathers:
            w.wait()
        self._step_gathers = []

    def _record(self, phase, unit, op, numel, sync, dst=None, group="shard"):
        entry = {"phase": phase, "micro": self._micro, "unit": unit, "op": op, "bytes": 4 * numel, "sync": sync}
        if dst is not None:
            entry["dst"] = dst
        if self.hsdp:
            entry["group"] = group
        self.log.append(entry)

    def _poll_reductions(self):
        """Finishes the reductions seen completed, oldest first; hsdp: issues
        the all-reduce of each unit whose reduces are completed, in unit
        order (none after a unit whose reduces are still running)."""
        keep = []
        issuing = True
        for entry in self._reductions:
            unit, works, stage = entry
            if self.hsdp and stage == "shard":
                if issuing and all(w.is_completed() for w in works):
                    for w in works:
                        w.wait()
                    works, stage = [unit.replicate()], "replica"
                else:
                    issuing = False
            final = stage == "replica" or not self.hsdp
            if not keep and final and all(w.is_completed() for w in works):
                for w in works:
                    w.wait()
                unit.finish_reduction()
            else:
                keep.append([unit, works, stage])
        self._reductions = keep

    def full_parameters(self):
        """Each unit's parameters, gathered from the shards (for checks): a
        list of flat tensors of N elements, in unit order."""
        out = []
        for u in self.units:
            buf = self.torch.empty(u.padded)
            self.dist.all_gather(list(buf.split(u.shard_numel)), u.shard.detach(), group=self.shard_group)
            out.append(buf[:u.numel])
        return out


class _PreBackward:
    """An identity autograd node around a unit's output, built lazily (torch
    is imported by the caller)."""
    cls = None

    @classmethod
    def get(cls, torch):
        if cls.cls is None:
            class Identity(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return x.view_as(x)

                @staticmethod
                def backward(ctx, g):
                    return g
            cls.cls = Identity
        return cls.cls


class _Unit:
    def __init__(self, engine, index, name, module):
        torch = engine.torch
        self.engine, self.index, self.name, self.module = engine, index, name, module
        self.params = [p for p in module.parameters() if p.requires_grad]
        self.numel = sum(p.numel() for p in self.params)
        self.padded = padded(self.numel, engine.shard_size)
        self.shard_numel = self.padded // engine.shard_size
        self.full = torch.zeros(self.padded)
        offset = 0
        with torch.no_grad():
            for p in self.params:
                n = p.numel()
                self.full[offset:offset + n].copy_(p.data.reshape(-1))
                p.data = self.full[offset:offset + n].view_as(p.data)
                offset += n
        r = engine.local
        self.shard = torch.nn.Parameter(self.full[r * self.shard_numel:(r + 1) * self.shard_numel].clone())
        self.grad = None
        self.gathered = True
        self.in_flight = None      # the async all-gather's work
        self.pending = 0           # gradients still to be accumulated in this backward
        self.reduced_buffer = None
        self.replicating = False   # hsdp: reduced_buffer holds the owned slice only

    # -- parameters
    def install(self):
        e = self.engine
        self.module.register_forward_pre_hook(lambda mod, args: self.pre_forward())
        self.module.register_forward_hook(lambda mod, args, out: self.post_forward(out))
        for p in self.params:
            node = p.expand_as(p).grad_fn.next_functions[0][0]  # p's AccumulateGrad
            node.register_hook(lambda grad_inputs, grad_outputs: self.gradient_accumulated())
            e._post_hooks.append(node)

    def free(self):
        self.full.storage().resize_(0)
        self.gathered = False

    def gather(self, phase, sync):
        """Issues this unit's all-gather into `full`; returns the work."""
        e = self.engine
        if self.full.storage().size() != self.padded:
            self.full.storage().resize_(self.padded)
        e._record(phase, self.index, "all_gather", self.padded, sync)
        work = e.dist.all_gather(list(self.full.split(self.shard_numel)), self.shard.detach(),
                                 group=e.shard_group, async_op=True)
        self.gathered = True
        if sync:
            work.wait()
        return work

    def ensure_gathered(self, phase):
        if self.in_flight is not None:
            self.wait_gather()
        elif not self.gathered:
            self.gather(phase, sync=True)

    def wait_gather(self):
        self.in_flight.wait()
        self.in_flight = None

    def prefetch(self, phase):
        if not self.gathered and self.in_flight is None:
            self.in_flight = self.gather(phase, sync=False)

    # -- hooks
    def pre_forward(self):
        e = self.engine
        if self.index == 0 and e.strategy == "zero2":
            e._wait_step_gathers()
        if not e.gathers_per_unit:
            return
        self.ensure_gathered("forward")
        if e.forward_prefetch and self.index + 1 < len(e.units):
            e.units[self.index + 1].prefetch("forward")

    def post_forward(self, out):
        e = self.engine
        torch = e.torch
        if e.gathers_per_unit and self.index != len(e.units) - 1:
            self.free()
        if not torch.is_grad_enabled() or not torch.is_tensor(out) or not out.requires_grad:
            return None
        wrapped = _PreBackward.get(torch).apply(out)
        wrapped.grad_fn.register_prehook(lambda grad_outputs: self.pre_backward())
        return wrapped

    def pre_backward(self):
        e = self.engine
        if e.gathers_per_unit:
            self.ensure_gathered("backward")
            if e.backward_prefetch == "pre" and self.index > 0:
                e.units[self.index - 1].prefetch("backward")
        if self.grad is None:
            self.grad = e.torch.zeros(self.padded)
            offset = 0
            for p in self.params:
                n = p.numel()
                p.grad = self.grad[offset:offset + n].view_as(p)
                offset += n
        self.pending = len(self.params)

    def gradient_accumulated(self):
        self.pending -= 1
        if self.pending == 0:
            self.post_backward()

    def post_backward(self):
        e = self.engine
        if e.gathers_per_unit:
            self.free()
            if e.backward_prefetch == "post" and self.index > 0:
                e.units[self.index - 1].prefetch("backward")
        if not e.last_micro:
            return
        e._poll_reductions()
        grad, S = self.grad, self.shard_numel
        if e.reduce_op == "reduce":
            works = []
            for i in range(e.shard_size):
                e._record("backward", self.index, "reduce", S, False, dst=i)
                works.append(e.dist.reduce(grad[i * S:(i + 1) * S], dst=e.group_base + i, group=e.shard_group,
                                           async_op=True))
        else:
            e._record("backward", self.index, "all_reduce", self.padded, False)
            works = [e.dist.all_reduce(grad, async_op=True)]
        for p in self.params:
            p.grad = None
        self.grad = None
        self.reduced_buffer = grad
        e._reductions.append([self, works, "shard"])

    def owned(self):
        """This rank's slice of the reduced (whole) buffer."""
        r, S = self.engine.local, self.shard_numel
        return self.reduced_buffer[r * S:(r + 1) * S]

    def replicate(self):
        """hsdp: keeps this rank's reduced slice and drops the rest of the
        unit's gradient buffer (as FSDP keeps the reduce-scatter's output
        only), then issues the slice's all-reduce over the replica group;
        returns the work."""
        e = self.engine
        self.reduced_buffer = self.owned().clone()
        self.replicating = True
        e._record("backward", self.index, "all_reduce", self.shard_numel, False, group="replica")
        return e.dist.all_reduce(self.reduced_buffer, group=e.replica_group, async_op=True)

    def finish_reduction(self):
        mine = self.reduced_buffer if self.replicating else self.owned()
        self.shard.grad = mine.div(self.engine.world)
        self.reduced_buffer = None
        self.replicating = False


def check_equivalence(rank, world, master, port, models_to_check=("mlp", "cnn", "transformer"), steps=3,
                      accumulation=2, strategies=("zero2", "zero3")):
    """Trains DDP, and ZeRO-2 and ZeRO-3 (both prefetch settings, both reduce
    ops) or HSDP (shard groups of world / 2; both prefetch settings), from
    the same seed on rank-dependent data for `steps` steps and returns
    max_abs_diff {case: max |param - DDP's param|} over every parameter,
    moved {model: max |DDP's param - initial param|} (that the steps changed
    the parameters at all), and plan_mismatch: the cases whose last step's
    log differs from plan() (each process group's entries in its order).
    For the unit test (two processes; HSDP four)."""
    import datetime

    import torch
    import torch.distributed as dist

    import models
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://{master}:{port}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120))
    batches = {"mlp": 4, "cnn": 2, "transformer": 2}
    out = {"max_abs_diff": {}, "plan_mismatch": []}
    for name in models_to_check:
        _, x, y = models.build(name, batches[name], seed=100 + rank)   # rank-dependent data
        loss_fn = torch.nn.CrossEntropyLoss()

        def train(strategy, **kw):
            model, _, _ = models.build(name, 1, seed=7)
            if strategy == "ddp":
                from torch.nn.parallel import DistributedDataParallel as DDP
                net = DDP(model, bucket_cap_mb=1, broadcast_buffers=False)
                opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
                for _ in range(steps):
                    opt.zero_grad()
                    for m in range(accumulation):
                        ctx = net.no_sync() if m < accumulation - 1 else _nothing()
                        with ctx:
                            loss_fn(net(x), y).backward()
                    opt.step()
                return [torch.cat([p.detach().reshape(-1) for p in m.parameters()])
                        for _, m in models.units(name, model)], None
            engine = Engine(torch, dist, models.units(name, model), strategy, **kw)
            opt = torch.optim.SGD(engine.shards, lr=0.01, momentum=0.9)
            for _ in range(steps):
                for m in range(accumulation):
                    engine.micro_batch(last=m == accumulation - 1)
                    loss_fn(model(x), y).backward()
                engine.before_step()
                opt.step()
                engine.after_step()
            engine.drain()
            expected = plan([u.numel for u in engine.units], world, strategy, accumulation=accumulation, **kw)
            return engine.full_parameters(), (by_group(engine.log), by_group(expected))

        reference, _ = train("ddp")
        model0, _, _ = models.build(name, 1, seed=7)
        initial = [torch.cat([p.detach().reshape(-1) for p in m.parameters()])
                   for _, m in models.units(name, model0)]
        out.setdefault("moved", {})[name] = max(float((a - b).abs().max()) for a, b in zip(reference, initial))
        cases = [("zero2", {}), ("zero3", {"forward_prefetch": 0, "backward_prefetch": "pre"}),
                 ("zero3", {"forward_prefetch": 1, "backward_prefetch": "post"}),
                 ("zero3", {"forward_prefetch": 1, "backward_prefetch": "pre", "reduce_op": "allreduce"}),
                 ("zero2", {"reduce_op": "allreduce"}),
                 ("hsdp", {"group": world // 2, "forward_prefetch": 1, "backward_prefetch": "pre"}),
                 ("hsdp", {"group": world // 2, "forward_prefetch": 0, "backward_prefetch": "post"})]
        for strategy, kw in cases:
            if strategy not in strategies:
                continue
            params, (log, expected) = train(strategy, **kw)
            case = f"{name}-{strategy}-" + "-".join(f"{k}={v}" for k, v in sorted(kw.items()))
            out["max_abs_diff"][case] = max(float((a - b).abs().max()) for a, b in zip(params, reference))
            if log != expected:
                out["plan_mismatch"].append(case)
    dist.barrier()
    return out


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    import argparse
    import json
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(description="check sharded training against DDP (one rank)")
    p.add_argument("--rank", type=int, required=True)
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--models", default="mlp,cnn,transformer")
    p.add_argument("--strategies", default="zero2,zero3", help="zero2, zero3, hsdp (world / 2 ranks a group)")
    a = p.parse_args()
    result = check_equivalence(a.rank, a.world, "127.0.0.1", a.port, a.models.split(","),
                               strategies=a.strategies.split(","))
    print(json.dumps(result))
    sys.stdout.flush()
    os._exit(0)
