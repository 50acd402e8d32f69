"""Layer and iteration marks for PyTorch, for ssgd's tracer and for
torch.profiler.

One call marks a model's iterations and the forward and backward of each of
its modules with ranges named as ssgd's DAG builder expects
(traces/marker_names.h, docs/kineto.md):

    iteration/<N>    one training step
    forward/<name>   a module's forward pass
    backward/<name>  a module's backward pass

and, at the start of every marked iteration (a profiler may record any
window of them), zero-length metadata ranges that the importers read:

    ssgd/rank=<r>, ssgd/world_size=<w>       torch.distributed, when initialised
    ssgd/hostname=<h>
    ssgd/clock_realtime_ns=<ns>              CLOCK_REALTIME at that range's start,
                                             so that files of several ranks share
                                             one clock (the legacy profiler's
                                             times are relative)
    ssgd/grad_bytes/<name>=<bytes>           each marked module's parameters that
                                             need a gradient
    ssgd/collective_bytes=<b0>,<b1>,...      the sizes of one iteration's
                                             gradient all-reduces in launch order:
                                             DDP's bucket layout, or what the
                                             program declared (collective_bytes())
    ssgd/collective_bytes/<op>=<b0>,...      one op's sizes in its launch order, and
    ssgd/collective_ranks/<op>=<n>           the ranks of its process group, where
    ssgd/collective_ranks/<op>=<r0>,<r1>,... the program declared them: how many
                                             (consecutive ranks), or which, in
                                             the group's order (a strided group,
                                             HSDP's replicas)
                                             (collective_ops(): collectives of
                                             several process groups, whose
                                             interleaving varies; <op> is
                                             all_reduce, all_gather, reduce,
                                             broadcast or reduce_scatter)
    ssgd/activation_bytes/<name>=<bytes>     what each marked module's forward
                                             left for its backward in the previous
                                             iteration (see "Activations" below);
                                             from the second marked iteration on
                                             when marking starts at iteration 0

Usage:

    import ssgd_marks
    marks = ssgd_marks.mark(model, optimizer)   # once, before the loop; model may be a DDP
    for batch in loader:
        loss = model(batch).sum(); loss.backward(); optimizer.step(); optimizer.zero_grad()
    marks.remove()                              # optional

Where the ranges go (`backend`):
- "profiler": torch.autograd.profiler.record_function ranges, which
  torch.profiler records in both of its writers (Kineto JSON, and the legacy
  JSON array of torch without Kineto, e.g. Debian's torch 1.13);
- "nvtx": NVTX start/end ranges for ssgd's CUPTI tracer
  (`ssgd trace --nvtx`);
- "auto" (default): nvtx under `ssgd trace --nvtx`, else profiler.

How the ranges are found:
- Forward: a forward pre-hook and a forward hook on each marked module.
- Backward: it starts when autograd reaches the last operation of the
  module's forward (a pre-hook on the grad_fn of its output; a hook on the
  output tensor where grad_fn pre-hooks do not exist) and ends when the
  gradients of all of the module's inputs that need one and of its own
  parameters have been computed (tensor hooks, and post-accumulate-grad
  hooks where torch has them, >= 2.1). Module full-backward hooks are not
  used: they fail on models with in-place activations such as torchvision's
  ResNet.
- Ranges are start/end ranges, not push/pop, since backward ranges of
  branching models do not nest.
- Iteration N ends after optimizer.step() (a step post-hook where torch has
  them, >= 2.0; else a wrapper around optimizer.step), where iteration N + 1
  starts, so that zero_grad and loading the next batch count; the first
  marked iteration starts at the model's forward. A range left open when
  the profiler stops (the one after the last step recorded) is dropped by
  the profiler. Without an optimizer, wrap each step in
  `with marks.iteration():`.
- SSGD_TRACER_ITERATIONS=A:B (set by `ssgd trace --iterations A:B`) marks only
  iterations A <= N < B (counting from 0); the others run unmarked. Start
  marking after DDP's first iteration: DDP rebuilds its buckets then, and the
  bucket layout is read when each marked iteration starts.
- Under a tracing window (`ssgd trace --window`, SSGD_TRACER_WINDOW), every
  iteration's start and end, marked or not, is reported to the tracer
  (`ssgd_tracer_step` of the library CUDA_INJECTION64_PATH names, found
  already loaded; nothing happens when it is not), which records only the
  steps inside the window and the boundaries of all of them.

Activations: in each marked iteration and the one before the first, a
saved-tensors hook (torch.autograd.graph.saved_tensors_hooks) active during
the model's forward adds up the bytes of every tensor autograd saves for
backward, each storage once an iteration, to the innermost marked module
whose forward is running; the model's parameters are not activations and
are left out. A module that saved nothing writes 0. Tensors saved inside an
activation-checkpointed region are not seen (checkpointing installs its own
hook, or saves nothing), which is what checkpointing keeps. The allocator's
caching and the temporaries freed during forward are not in it. Its cost is
one Python call per saved tensor in those iterations (ResNet-50 saves a few
hundred a forward), none in the others.

Marked modules: by default every module without children (the leaves), named
by their qualified names in model.named_modules() (inside a DDP wrapper: its
.module's names). Pass modules="params" for the leaves that hold parameters
only, or a list of names.

Requires torch >= 1.13. No other dependency.
"""

import contextlib
import ctypes
import numbers
import os

__all__ = ["mark", "Marks", "parse_iteration_window", "select_modules", "BackwardTracker",
           "tracer_step_hook",
           "parse_bucket_sizes", "metadata_names", "grad_bytes_by_layer"]


def parse_iteration_window(text):
    """'A:B' -> (A, B) with 0 <= A < B; '' or None -> (0, None). Raises
    ValueError naming SSGD_TRACER_ITERATIONS on anything else."""
    if text is None or text.strip() == "":
        return 0, None
    parts = text.split(":")
    if len(parts) != 2:
        raise ValueError(f"SSGD_TRACER_ITERATIONS='{text}': expected A:B, e.g. 10:30")
    try:
        first = int(parts[0]) if parts[0].strip() else 0
        end = int(parts[1]) if parts[1].strip() else None
    except ValueError:
        raise ValueError(f"SSGD_TRACER_ITERATIONS='{text}': A and B must be integers") from None
    if first < 0 or (end is not None and end <= first):
        raise ValueError(f"SSGD_TRACER_ITERATIONS='{text}': need 0 <= A < B")
    return first, end


def tracer_step_hook(environ=None, load=None):
    """The tracing window's step hook, ssgd_tracer_step(step, phase), of the
    tracer library already loaded in this process, or None: outside
    `ssgd trace --window`, or where the library is not loaded (no CUDA yet,
    not traced). `load` opens a library without loading it anew (tests
    replace it)."""
    environ = os.environ if environ is None else environ
    path = environ.get("CUDA_INJECTION64_PATH")
    if not environ.get("SSGD_TRACER_WINDOW") or not path:
        return None
    if load is None:
        def load(p):
            return ctypes.CDLL(p, mode=getattr(os, "RTLD_NOLOAD", 4) | ctypes.RTLD_GLOBAL)
    try:
        fn = load(path).ssgd_tracer_step
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int64, ctypes.c_int]
    fn.restype = None
    return fn


def select_modules(named_modules, modules="leaves"):
    """The (name, module) pairs to mark. `named_modules` is a list of
    (name, module, has_children, has_params) tuples, in model order;
    has_params means parameters of its own (not its children's). "leaves":
    modules without children, and modules holding parameters of their own
    (nn.MultiheadAttention holds its input projection and calls its out_proj
    child's weights without calling the child). "params": those of them that
    hold parameters."""
    if modules == "leaves":
        chosen = [(n, m) for n, m, children, params in named_modules if (not children or params) and n]
    elif modules == "params":
        chosen = [(n, m) for n, m, children, params in named_modules if params and n]
    else:
        wanted = list(modules)
        by_name = {n: m for n, m, _, _ in named_modules}
        missing = [n for n in wanted if n not in by_name]
        if missing:
            raise ValueError("ssgd_marks: no module named " + ", ".join(repr(n) for n in missing))
        chosen = [(n, by_name[n]) for n in wanted]
    if not chosen:
        raise ValueError("ssgd_marks: no module to mark")
    names = [n for n, _ in chosen]
    if any("/" in n for n in names):
        raise ValueError("ssgd_marks: module names must not contain '/'")
    return chosen


class BackwardTracker:
    """Bookkeeping of one module's backward ranges in one iteration: the
    range starts once, and ends when every expected gradient has arrived.
    Pure logic (no torch), so it is tested without a GPU."""

    def __init__(self, start_range, end_range):
        self._start = start_range
        self._end = end_range
        self._open = None     # the open range's id
        self._waiting = 0     # gradients still to come

    def expect(self, count):
        """Called in forward: this many gradients end the module's backward."""
        self._waiting += count

    def started(self, name):
        if self._open is None and self._waiting > 0:
            self._open = self._start("backward/" + name)

    def gradient_done(self, name):
        if self._waiting == 0:
            return
        self._waiting -= 1
        if self._waiting == 0:
            if self._open is None:  # no pre-hook ran (e.g. the output was not used)
                self._open = self._start("backward/" + name)
            self._end(self._open)
            self._open = None


def parse_bucket_sizes(text):
    """DDP's logged bucket sizes ('1071144, 1050624') -> [1071144, 1050624].
    Raises ValueError on anything but non-negative integers."""
    sizes = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit():
            raise ValueError(f"ssgd_marks: DDP bucket sizes '{text}': '{part}' is not a byte count")
        sizes.append(int(part))
    return sizes


def grad_bytes_by_layer(own_bytes, ran):
    """[(module, bytes of its own parameters)] in model order -> [(layer,
    bytes)] for the modules with bytes. A module whose forward did not run in
    the last iteration (`ran`: names that did; empty before the first
    iteration: all count as run) has no ranges, so its bytes go to the
    nearest enclosing marked module that ran (nn.MultiheadAttention's
    out_proj to the attention module), or stay with it when there is none."""
    names = [n for n, _ in own_bytes]
    out = {}
    for name, count in own_bytes:
        if not count:
            continue
        owner = name
        if ran and name not in ran:
            parts = name.split(".")
            for k in range(len(parts) - 1, 0, -1):
                parent = ".".join(parts[:k])
                if parent in ran:
                    owner = parent
                    break
        out[owner] = out.get(owner, 0) + count
    return [(n, out[n]) for n in names if n in out]


COLLECTIVE_OPS = ("all_reduce", "all_gather", "reduce", "broadcast", "reduce_scatter")


def _check_op(op):
    if op not in COLLECTIVE_OPS:
        raise ValueError(f"ssgd_marks: collective op '{op}': expected one of {', '.join(COLLECTIVE_OPS)}")


def metadata_names(meta, grad_bytes, collective_bytes, activation_bytes=(), collective_ops=()):
    """The metadata range names, in the order they are written: the keys of
    `meta` (rank, world_size, hostname; None values left out), then one
    ssgd/grad_bytes/<module>=<bytes> per module, then ssgd/collective_bytes,
    then for each (op, sizes, ranks) of `collective_ops`
    ssgd/collective_bytes/<op> and, where ranks is not None,
    ssgd/collective_ranks/<op>, then one ssgd/activation_bytes/<module>=<bytes>
    per module.
    clock_realtime_ns is written separately, with the time of its own range.
    Raises ValueError for a value holding '=' or '"' (the legacy writer does
    not escape names)."""
    names = []
    for key, value in meta:
        if value is None:
            continue
        text = str(value)
        if "=" in text or '"' in text or "\\" in text or not text:
            raise ValueError(f"ssgd_marks: metadata {key}='{text}' cannot be written as a range name")
        names.append(f"ssgd/{key}={text}")
    for module, count in grad_bytes:
        names.append(f"ssgd/grad_bytes/{module}={int(count)}")
    if collective_bytes:
        names.append("ssgd/collective_bytes=" + ",".join(str(int(b)) for b in collective_bytes))
    for op, sizes, ranks in collective_ops:
        _check_op(op)
        names.append(f"ssgd/collective_bytes/{op}=" + ",".join(str(int(b)) for b in sizes))
        if ranks is None:
            continue
        if isinstance(ranks, numbers.Integral):
            names.append(f"ssgd/collective_ranks/{op}={int(ranks)}")
        else:
            members = [int(r) for r in ranks]
            if len(members) < 2 or len(set(members)) != len(members) or min(members) < 0:
                raise ValueError(f"ssgd_marks: collective_ranks of {op}: {members} is not a list of "
                                 "two or more distinct ranks")
            names.append(f"ssgd/collective_ranks/{op}=" + ",".join(str(r) for r in members))
    for module, count in activation_bytes:
        names.append(f"ssgd/activation_bytes/{module}={int(count)}")
    return names


def storage_key(tensor):
    """(address, bytes) of the storage a tensor views, or None (a tensor
    without one: sparse, meta)."""
    try:
        storage = tensor.untyped_storage() if hasattr(tensor, "untyped_storage") else tensor.storage()
        return storage.data_ptr(), storage.nbytes()
    except (RuntimeError, NotImplementedError, TypeError):
        return None


class SavedBytes:
    """Adds up the bytes autograd saves for backward, by the innermost open
    marked module, each storage once (between reset() calls). The
    parameters are not counted: a tensor that is one of `parameters` (ids)
    or a view of one. By identity, not address: a sharded loop may point a
    parameter's .data at a gathered buffer after the forward started, and
    a freed buffer's address is soon another tensor's."""

    def __init__(self):
        self.by_module = {}
        self._open = []
        self._seen = set()
        self.parameters = set()

    def reset(self):
        """Between iterations, when no forward runs."""
        self.by_module = {}
        self._seen = set()
        self._open = []

    def enter(self, name):
        self._open.append(name)

    def leave(self, name):
        for k in range(len(self._open) - 1, -1, -1):
            if self._open[k] == name:
                del self._open[k]
                break

    def pack(self, tensor):
        base = getattr(tensor, "_base", None)
        if self._open and id(tensor) not in self.parameters and id(base) not in self.parameters:
            key = storage_key(tensor)
            if key is not None and key[0] not in self._seen:
                self._seen.add(key[0])
                owner = self._open[-1]
                self.by_module[owner] = self.by_module.get(owner, 0) + key[1]
        return tensor


class _ProfilerRanges:
    """record_function ranges, entered and exited by hand (start/end)."""

    def __init__(self, torch):
        self._rf = torch.autograd.profiler.record_function

    def range_start(self, name):
        r = self._rf(name)
        r.__enter__()
        return r

    def range_end(self, r):
        r.__exit__(None, None, None)


class _NvtxRanges:
    def __init__(self, torch):
        self.range_start = torch.cuda.nvtx.range_start
        self.range_end = torch.cuda.nvtx.range_end


def _ranges(torch, backend):
    if backend == "auto":
        backend = "nvtx" if os.environ.get("SSGD_TRACER_NVTX", "0") not in ("", "0") else "profiler"
    if backend == "profiler":
        return _ProfilerRanges(torch)
    if backend == "nvtx":
        return _NvtxRanges(torch)
    raise ValueError(f"ssgd_marks: backend '{backend}': expected auto, profiler or nvtx")


class Marks:
    """The hooks one mark() call installed; remove() takes them all out."""

    def __init__(self, torch, model, optimizer, modules, window, backend="auto", activations=True):
        self._torch = torch
        self._activations = activations
        self._ranges = _ranges(torch, backend)
        self._handles = []
        self._first, self._end = window
        self._iteration = 0
        self._iteration_range = None
        self._step_hook = tracer_step_hook()  # the tracing window's, or None
        self._step_open = False
        self._ddp = model if hasattr(model, "_get_ddp_logging_data") else None
        inner = model.module if self._ddp is not None else model
        named = [(n, m, any(True for _ in m.children()), any(True for _ in m.parameters(recurse=False)))
                 for n, m in inner.named_modules()]
        self._modules = select_modules(named, modules)
        self._forward_open = {}
        self._backward = {}
        self._declared_collectives = None
        self._declared_ops = []
        self._ran = set()       # marked modules whose forward ran in the current iteration
        self._last_ran = set()  # and in the previous one
        self._saved = SavedBytes()
        self._saving = None      # the saved-tensors hook while the model's forward runs
        self._last_saved = None  # {module: bytes} of the previous iteration, when measured
        self._inner = inner
        for name, module in self._modules:
            self._install(name, module)
        self._handles.append(inner.register_forward_pre_hook(self._model_forward_starts))
        self._handles.append(inner.register_forward_hook(self._model_forward_ends))
        if optimizer is not None:
            self._hook_optimizer(optimizer)

    def _hook_optimizer(self, optimizer):
        if hasattr(optimizer, "register_step_post_hook"):  # torch >= 2.0
            self._handles.append(optimizer.register_step_post_hook(self._step_ended))
            return
        step = optimizer.step
        marks = self

        def wrapped(*args, **kwargs):
            out = step(*args, **kwargs)
            marks.end_iteration()
            return out

        optimizer.step = wrapped

        class _Restore:
            def remove(self_inner):
                optimizer.step = step

        self._handles.append(_Restore())

    # -- metadata
    def collective_bytes(self, sizes):
        """Declares the sizes of one iteration's gradient collectives, in launch
        order (for programs that all-reduce by hand instead of through DDP)."""
        self._declared_collectives = [int(s) for s in sizes]

    def collective_ops(self, sizes_by_op, ranks=None):
        """Declares one iteration's collectives op by op: {op: sizes in that
        op's launch order}, and {op: the ranks of its process group} where
        it is not the world: a count (a group of consecutive ranks), or this
        rank's group's members in the group's order (a strided group: HSDP's
        replicas, every G-th rank). For programs whose collectives run on
        several process groups, so that their interleaving varies from one
        iteration to the next while each op's order does not. Raises
        ValueError for an unknown op."""
        ranks = ranks or {}
        for op in list(sizes_by_op) + list(ranks):
            _check_op(op)
        self._declared_ops = [(op, [int(s) for s in sizes], ranks.get(op)) for op, sizes in sizes_by_op.items()]

    def _collectives(self):
        if self._declared_collectives is not None:
            return self._declared_collectives
        if self._ddp is None:
            return []
        data = self._ddp._get_ddp_logging_data()
        text = data.get("rebuilt_bucket_sizes") or data.get("bucket_sizes") or ""
        if not data.get("has_rebuilt_buckets", 0):
            import warnings
            warnings.warn("ssgd_marks: DDP has not rebuilt its buckets yet (mark from its second "
                          "iteration on): the bucket sizes written may not be the ones used")
        return parse_bucket_sizes(text)

    def _write_metadata(self):
        import socket
        import time
        torch = self._torch
        rank = world = None
        dist = getattr(torch, "distributed", None)
        if dist is not None and dist.is_available() and dist.is_initialized():
            rank, world = dist.get_rank(), dist.get_world_size()
        grads = grad_bytes_by_layer(
            [(name, sum(p.numel() * p.element_size() for p in module.parameters(recurse=False)
                        if p.requires_grad)) for name, module in self._modules],
            self._last_ran)
        activations = []
        if self._last_saved is not None:
            activations = [(name, self._last_saved.get(name, 0)) for name, _ in self._modules
                           if name in self._last_ran]
        names = metadata_names([("rank", rank), ("world_size", world), ("hostname", socket.gethostname())],
                               grads, self._collectives(), activations, self._declared_ops)
        for n in names:
            self._ranges.range_end(self._ranges.range_start(n))
        now = time.time_ns()
        self._ranges.range_end(self._ranges.range_start(f"ssgd/clock_realtime_ns={now}"))

    # -- iterations
    def _marking(self):
        return self._iteration >= self._first and (self._end is None or self._iteration < self._end)

    def _report_step(self, phase):
        # The library is loaded with CUDA: look again until it is there.
        if self._step_hook is None and phase == 0 and os.environ.get("SSGD_TRACER_WINDOW"):
            self._step_hook = tracer_step_hook()
        if self._step_hook is not None:
            self._step_hook(self._iteration, phase)

    def _open_iteration(self):
        # The window opens before the iteration's range starts, so that its
        # range is recorded.
        if not self._step_open:
            self._step_open = True
            self._report_step(0)
        if self._iteration_range is None and self._marking():
            self._iteration_range = self._ranges.range_start(f"iteration/{self._iteration}")
            self._write_metadata()

    def _measuring(self):
        """Activations are added up in the marked iterations and the one before
        (unless mark() was told activations=False)."""
        return self._activations and self._iteration + 1 >= self._first and \
            (self._end is None or self._iteration < self._end)

    def _model_forward_starts(self, module, args):
        self._open_iteration()
        torch = self._torch
        if self._saving is None and self._measuring() and torch.is_grad_enabled():
            self._saved.parameters = {id(p) for p in self._inner.parameters()}
            self._saving = torch.autograd.graph.saved_tensors_hooks(self._saved.pack, lambda t: t)
            self._saving.__enter__()

    def _model_forward_ends(self, module, args, output):
        if self._saving is not None:
            self._saving.__exit__(None, None, None)
            self._saving = None

    def _step_ended(self, optimizer, args, kwargs):
        self.end_iteration()

    def end_iteration(self):
        if self._iteration_range is not None:
            self._ranges.range_end(self._iteration_range)
            self._iteration_range = None
        if self._step_open:
            self._report_step(1)
            self._step_open = False
        if self._saving is not None:  # a forward that raised: its post-hook never ran
            self._saving.__exit__(None, None, None)
            self._saving = None
        self._last_saved = dict(self._saved.by_module) if self._measuring() else None
        self._saved.reset()
        self._iteration += 1
        self._last_ran, self._ran = self._ran, set()
        # The next iteration starts here, not at its forward: zero_grad and
        # the loading of its batch on this thread are part of it.
        self._open_iteration()

    @contextlib.contextmanager
    def iteration(self):
        """Marks one step by hand (without an optimizer hook)."""
        self._open_iteration()
        try:
            yield self._iteration
        finally:
            self.end_iteration()

    # -- modules
    def _install(self, name, module):
        torch = self._torch
        ranges = self._ranges
        tracker = BackwardTracker(ranges.range_start, ranges.range_end)
        self._backward[name] = tracker

        params = [p for p in module.parameters(recurse=False) if p.requires_grad]
        # Once per parameter: it fires once per step, however often the
        # module ran (autograd sums the contributions before accumulating).
        for p in params:
            if hasattr(p, "register_post_accumulate_grad_hook"):  # torch >= 2.1
                self._handles.append(
                    p.register_post_accumulate_grad_hook(lambda p: tracker.gradient_done(name)))
            else:  # fires as the gradient reaches the parameter, before accumulation
                self._handles.append(p.register_hook(lambda g: (tracker.gradient_done(name), None)[1]))
        last_step = [-1]

        def pre(mod, args):
            self._ran.add(name)  # also unmarked: the first marked iteration's grad bytes need it
            self._saved.enter(name)
            if not self._marking():
                return
            self._forward_open[name] = ranges.range_start("forward/" + name)
            if not torch.is_grad_enabled():
                return
            grads = [a for a in args if torch.is_tensor(a) and a.requires_grad]
            expected = len(grads)
            if last_step[0] != self._iteration:  # the parameters, once per step
                last_step[0] = self._iteration
                expected += len(params)
            tracker.expect(expected)
            for a in grads:
                a.register_hook(lambda g: (tracker.gradient_done(name), None)[1])

        def post(mod, args, output):
            self._saved.leave(name)
            rid = self._forward_open.pop(name, None)
            if rid is not None:
                ranges.range_end(rid)
            outs = output if isinstance(output, (tuple, list)) else (output,)
            for o in outs:
                if torch.is_tensor(o) and o.grad_fn is not None:
                    if hasattr(o.grad_fn, "register_prehook"):
                        o.grad_fn.register_prehook(lambda grad_outputs: tracker.started(name))
                    else:
                        o.register_hook(lambda g: (tracker.started(name), None)[1])
                    break

        self._handles.append(module.register_forward_pre_hook(pre))
        self._handles.append(module.register_forward_hook(post))

    def remove(self):
        for h in self._handles:
            h.remove()
        self._handles = []


def mark(model, optimizer=None, modules="leaves", backend="auto", window=None, activations=True):
    """Installs the marks on `model` (a module or a DDP wrapper) and
    `optimizer` (for iteration ends). `window` (first, end): mark only
    iterations first <= N < end, counted from this call (end None: all from
    first on); default SSGD_TRACER_ITERATIONS, else every iteration.
    `activations=False`: no saved-tensors hook and no activation marks (for
    forwards that torch.compile runs, whose guards a hook may change)."""
    import torch  # the only dependency

    if window is None:
        window = parse_iteration_window(os.environ.get("SSGD_TRACER_ITERATIONS"))
    if backend in ("auto", "nvtx") and os.environ.get("SSGD_TRACER_OUT") and \
            os.environ.get("SSGD_TRACER_NVTX", "0") in ("", "0"):
        import warnings
        warnings.warn("ssgd_marks: the tracer is not recording NVTX ranges; run `ssgd trace --nvtx`")
    return Marks(torch, model, optimizer, modules, window, backend, activations)
