"""Layer and iteration marks for PyTorch, for the ssgd tracer.

One call marks a model's iterations and the forward and backward of each of
its modules with NVTX ranges named as ssgd's DAG builder expects
(dag/trace_profile.h):

    iteration/<N>    one training step
    forward/<name>   a module's forward pass
    backward/<name>  a module's backward pass

Usage, with the tracer's launcher (`ssgd trace --nvtx -- python train.py`):

    import ssgd_marks
    marks = ssgd_marks.mark(model, optimizer)   # once, before the loop
    for batch in loader:
        loss = model(batch).sum(); loss.backward(); optimizer.step(); optimizer.zero_grad()
    marks.remove()                              # optional

How the ranges are found:
- Forward: a forward pre-hook and a forward hook on each marked module.
- Backward: it starts when autograd runs the last operation of the module's
  forward (a pre-hook on the grad_fn of its output) and ends when the
  gradients of all of the module's inputs that need one and of its own
  parameters have been computed (tensor hooks and post-accumulate-grad
  hooks). Module full-backward hooks are not used: they fail on models with
  in-place activations such as torchvision's ResNet.
- Ranges are NVTX start/end ranges (torch.cuda.nvtx.range_start and
  range_end), not push/pop, since backward ranges of branching models do not
  nest.
- Iteration N starts at the first forward of the model after the previous
  optimizer step and ends after optimizer.step() (a step post-hook). Without
  an optimizer, wrap each step in `with marks.iteration():`.
- SSGD_TRACER_ITERATIONS=A:B (set by `ssgd trace --iterations A:B`) marks only
  iterations A <= N < B (counting from 0); the others run unmarked.

Marked modules: by default every module without children (the leaves), named
by their qualified names in model.named_modules(). Pass modules="params" for
the leaves that hold parameters only, or a list of names.

Requires torch >= 2.1 (grad_fn pre-hooks and post-accumulate-grad hooks). No
other dependency.
"""

import contextlib
import os

__all__ = ["mark", "Marks", "parse_iteration_window", "select_modules", "BackwardTracker"]


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


def select_modules(named_modules, modules="leaves"):
    """The (name, module) pairs to mark. `named_modules` is a list of
    (name, module, has_children, has_params) tuples, in model order."""
    if modules == "leaves":
        chosen = [(n, m) for n, m, children, _ in named_modules if not children and n]
    elif modules == "params":
        chosen = [(n, m) for n, m, children, params in named_modules if not children and params and n]
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


class Marks:
    """The hooks one mark() call installed; remove() takes them all out."""

    def __init__(self, torch, model, optimizer, modules, window):
        self._torch = torch
        self._nvtx = torch.cuda.nvtx
        self._handles = []
        self._first, self._end = window
        self._iteration = 0
        self._iteration_range = None
        named = [(n, m, any(True for _ in m.children()), any(True for _ in m.parameters(recurse=False)))
                 for n, m in model.named_modules()]
        self._modules = select_modules(named, modules)
        self._forward_open = {}
        self._backward = {}
        for name, module in self._modules:
            self._install(name, module)
        self._handles.append(model.register_forward_pre_hook(self._model_forward_starts))
        if optimizer is not None:
            self._handles.append(optimizer.register_step_post_hook(self._step_ended))

    # -- iterations
    def _marking(self):
        return self._iteration >= self._first and (self._end is None or self._iteration < self._end)

    def _model_forward_starts(self, module, args):
        if self._iteration_range is None and self._marking():
            self._iteration_range = self._nvtx.range_start(f"iteration/{self._iteration}")

    def _step_ended(self, optimizer, args, kwargs):
        self.end_iteration()

    def end_iteration(self):
        if self._iteration_range is not None:
            self._nvtx.range_end(self._iteration_range)
            self._iteration_range = None
        self._iteration += 1

    @contextlib.contextmanager
    def iteration(self):
        """Marks one step by hand (without an optimizer hook)."""
        if self._iteration_range is None and self._marking():
            self._iteration_range = self._nvtx.range_start(f"iteration/{self._iteration}")
        try:
            yield self._iteration
        finally:
            self.end_iteration()

    # -- modules
    def _install(self, name, module):
        torch = self._torch
        tracker = BackwardTracker(self._nvtx.range_start, self._nvtx.range_end)
        self._backward[name] = tracker

        params = [p for p in module.parameters(recurse=False) if p.requires_grad]
        # Once per parameter: it fires once per step, however often the
        # module ran (autograd sums the contributions before accumulating).
        for p in params:
            self._handles.append(
                p.register_post_accumulate_grad_hook(lambda p: tracker.gradient_done(name)))
        last_step = [-1]

        def pre(mod, args):
            if not self._marking():
                return
            self._forward_open[name] = self._nvtx.range_start("forward/" + name)
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
            rid = self._forward_open.pop(name, None)
            if rid is not None:
                self._nvtx.range_end(rid)
            outs = output if isinstance(output, (tuple, list)) else (output,)
            for o in outs:
                if torch.is_tensor(o) and o.grad_fn is not None:
                    o.grad_fn.register_prehook(lambda grad_outputs: tracker.started(name))
                    break

        self._handles.append(module.register_forward_pre_hook(pre))
        self._handles.append(module.register_forward_hook(post))

    def remove(self):
        for h in self._handles:
            h.remove()
        self._handles = []


def mark(model, optimizer=None, modules="leaves"):
    """Installs the marks on `model` (and `optimizer`, for iteration ends)."""
    import torch  # the only dependency

    window = parse_iteration_window(os.environ.get("SSGD_TRACER_ITERATIONS"))
    if os.environ.get("SSGD_TRACER_OUT") and os.environ.get("SSGD_TRACER_NVTX", "0") in ("", "0"):
        import warnings
        warnings.warn("ssgd_marks: the tracer is not recording NVTX ranges; run `ssgd trace --nvtx`")
    return Marks(torch, model, optimizer, modules, window)
