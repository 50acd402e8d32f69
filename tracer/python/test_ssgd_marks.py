"""Tests of ssgd_marks' torch-free logic: the iteration window, the module
selection and the backward-range bookkeeping. The hooks themselves need
torch and a GPU run (tracer/README.md); these run in CI."""

import unittest

import ssgd_marks as sm


class IterationWindow(unittest.TestCase):
    def test_forms(self):
        self.assertEqual(sm.parse_iteration_window(None), (0, None))
        self.assertEqual(sm.parse_iteration_window(""), (0, None))
        self.assertEqual(sm.parse_iteration_window("10:30"), (10, 30))
        self.assertEqual(sm.parse_iteration_window(":5"), (0, 5))
        self.assertEqual(sm.parse_iteration_window("3:"), (3, None))

    def test_bad_values_name_the_variable(self):
        for bad in ("5", "a:b", "5:5", "7:3", "-1:4", "1:2:3"):
            with self.assertRaises(ValueError) as e:
                sm.parse_iteration_window(bad)
            self.assertIn("SSGD_TRACER_ITERATIONS", str(e.exception))


class ModuleSelection(unittest.TestCase):
    named = [("", "root", True, False), ("conv1", "c", False, True), ("relu", "r", False, False),
             ("block", "b", True, False), ("block.fc", "f", False, True)]

    def test_leaves_params_and_names(self):
        self.assertEqual([n for n, _ in sm.select_modules(self.named)], ["conv1", "relu", "block.fc"])
        self.assertEqual([n for n, _ in sm.select_modules(self.named, "params")], ["conv1", "block.fc"])
        self.assertEqual(sm.select_modules(self.named, ["block"]), [("block", "b")])

    def test_unknown_and_empty_are_errors(self):
        with self.assertRaises(ValueError) as e:
            sm.select_modules(self.named, ["nope"])
        self.assertIn("'nope'", str(e.exception))
        with self.assertRaises(ValueError):
            sm.select_modules([("", "root", False, False)])
        with self.assertRaises(ValueError):
            sm.select_modules([("a/b", "m", False, True)])


class Backward(unittest.TestCase):
    def setUp(self):
        self.log = []
        self.next_id = 0

        def start(msg):
            self.next_id += 1
            self.log.append(("start", msg, self.next_id))
            return self.next_id

        def end(rid):
            self.log.append(("end", rid))

        self.t = sm.BackwardTracker(start, end)

    def test_range_ends_when_every_gradient_arrived(self):
        self.t.expect(3)  # an input and two parameters
        self.t.started("conv1")
        self.t.gradient_done("conv1")
        self.t.gradient_done("conv1")
        self.assertEqual(self.log, [("start", "backward/conv1", 1)])
        self.t.gradient_done("conv1")
        self.assertEqual(self.log, [("start", "backward/conv1", 1), ("end", 1)])

    def test_start_is_once_and_late_or_extra_calls_are_safe(self):
        self.t.expect(1)
        self.t.started("fc")
        self.t.started("fc")  # a second pre-hook call (module used twice)
        self.t.gradient_done("fc")
        self.t.gradient_done("fc")  # nothing expected: ignored
        self.assertEqual(self.log, [("start", "backward/fc", 1), ("end", 1)])

    def test_gradient_without_prehook_still_gives_a_range(self):
        self.t.expect(1)
        self.t.gradient_done("emb")
        self.assertEqual(self.log, [("start", "backward/emb", 1), ("end", 1)])

    def test_nothing_expected_opens_nothing(self):
        self.t.started("relu")
        self.assertEqual(self.log, [])


class ModulesWithOwnParameters(unittest.TestCase):
    # nn.MultiheadAttention: parameters of its own and a child (out_proj) it never calls.
    named = [("", "root", True, False), ("attn", "a", True, True), ("attn.out_proj", "o", False, True),
             ("norm", "n", False, True), ("drop", "d", False, False)]

    def test_a_module_with_own_parameters_is_a_layer(self):
        self.assertEqual([n for n, _ in sm.select_modules(self.named)], ["attn", "attn.out_proj", "norm", "drop"])
        self.assertEqual([n for n, _ in sm.select_modules(self.named, "params")], ["attn", "attn.out_proj", "norm"])

    def test_bytes_of_a_module_that_never_ran_go_to_its_marked_parent(self):
        own = [("attn", 786432), ("attn.out_proj", 263168), ("norm", 2048), ("drop", 0)]
        self.assertEqual(sm.grad_bytes_by_layer(own, {"attn", "norm", "drop"}),
                         [("attn", 1049600), ("norm", 2048)])
        # before the first iteration nothing is known: every module keeps its own
        self.assertEqual(sm.grad_bytes_by_layer(own, set()),
                         [("attn", 786432), ("attn.out_proj", 263168), ("norm", 2048)])
        # no marked parent ran: the bytes stay where they are
        self.assertEqual(sm.grad_bytes_by_layer([("a.b", 8)], {"x"}), [("a.b", 8)])


class Metadata(unittest.TestCase):
    def test_bucket_sizes(self):
        self.assertEqual(sm.parse_bucket_sizes("1071144, 1050624"), [1071144, 1050624])
        self.assertEqual(sm.parse_bucket_sizes(""), [])
        with self.assertRaises(ValueError):
            sm.parse_bucket_sizes("12, x")

    def test_names_in_order(self):
        names = sm.metadata_names([("rank", 1), ("world_size", 4), ("hostname", "node7")],
                                  [("fc", 41000)], [4239400, 4198400])
        self.assertEqual(names, ["ssgd/rank=1", "ssgd/world_size=4", "ssgd/hostname=node7",
                                 "ssgd/grad_bytes/fc=41000", "ssgd/collective_bytes=4239400,4198400"])
        self.assertEqual(sm.metadata_names([("rank", None)], [], []), [])

    def test_activation_bytes_come_last(self):
        names = sm.metadata_names([("rank", 0)], [("fc", 8)], [8], [("fc", 4096), ("relu", 0)])
        self.assertEqual(names[-2:], ["ssgd/activation_bytes/fc=4096", "ssgd/activation_bytes/relu=0"])

    def test_collectives_op_by_op_after_the_plain_list(self):
        names = sm.metadata_names([("rank", 0)], [], [8], [("fc", 16)],
                                  [("all_gather", [64, 32], 2), ("all_reduce", [16], None)])
        self.assertEqual(names, ["ssgd/rank=0", "ssgd/collective_bytes=8", "ssgd/collective_bytes/all_gather=64,32",
                                 "ssgd/collective_ranks/all_gather=2", "ssgd/collective_bytes/all_reduce=16",
                                 "ssgd/activation_bytes/fc=16"])
        with self.assertRaisesRegex(ValueError, "collective op 'allreduce'"):
            sm.metadata_names([], [], [], [], [("allreduce", [8], None)])

    def test_a_group_by_its_members(self):
        names = sm.metadata_names([], [], [], [], [("all_reduce", [16], [1, 3])])
        self.assertEqual(names, ["ssgd/collective_bytes/all_reduce=16", "ssgd/collective_ranks/all_reduce=1,3"])
        for bad in ([1], [1, 1], [-1, 2]):
            with self.assertRaisesRegex(ValueError, "two or more distinct ranks"):
                sm.metadata_names([], [], [], [], [("all_reduce", [16], bad)])

    def test_values_the_legacy_writer_cannot_hold_are_refused(self):
        for bad in ('a"b', "a=b", "a\\b", ""):
            with self.assertRaises(ValueError):
                sm.metadata_names([("hostname", bad)], [], [])



class TracerStepHook(unittest.TestCase):
    """The tracing window's hook: found only under a window, in a library
    already loaded; anything else is no hook, never an error."""

    class Lib:
        def __init__(self):
            self.calls = []

            def step(n, phase):
                self.calls.append((n, phase))
            self.ssgd_tracer_step = step

    def test_found_under_a_window(self):
        lib = self.Lib()
        env = {"SSGD_TRACER_WINDOW": "steps:1:3", "CUDA_INJECTION64_PATH": "/x/libssgd_tracer.so"}
        hook = sm.tracer_step_hook(env, load=lambda path: lib)
        self.assertIsNotNone(hook)
        hook(4, 0)
        self.assertEqual(lib.calls, [(4, 0)])

    def test_none_without_a_window_or_a_loaded_library(self):
        lib = self.Lib()
        self.assertIsNone(sm.tracer_step_hook({"CUDA_INJECTION64_PATH": "/x"}, load=lambda p: lib))
        self.assertIsNone(sm.tracer_step_hook({"SSGD_TRACER_WINDOW": "signal"}, load=lambda p: lib))

        def not_loaded(path):
            raise OSError("not loaded")
        env = {"SSGD_TRACER_WINDOW": "signal", "CUDA_INJECTION64_PATH": "/x"}
        self.assertIsNone(sm.tracer_step_hook(env, load=not_loaded))
        self.assertIsNone(sm.tracer_step_hook(env, load=lambda p: object()))  # no such symbol


class SavedTensors(unittest.TestCase):
    """The saved-tensors bookkeeping, with stand-ins for tensors."""

    class Storage:
        def __init__(self, ptr, nbytes):
            self.ptr, self.n = ptr, nbytes

        def data_ptr(self):
            return self.ptr

        def nbytes(self):
            return self.n

    class Tensor:
        def __init__(self, ptr, nbytes):
            self.s = SavedTensors.Storage(ptr, nbytes)

        def untyped_storage(self):
            return self.s

    def test_innermost_module_each_storage_once_parameters_left_out(self):
        T = self.Tensor
        saved = sm.SavedBytes()
        param = T(100, 16)
        saved.parameters = {id(param)}
        outside = T(1, 8)
        self.assertIs(saved.pack(outside), outside)  # handed back as it is; outside a module: not counted
        saved.enter("block")
        saved.pack(T(2, 64))
        saved.enter("block.fc")
        saved.pack(T(3, 32))
        saved.pack(T(3, 32))    # the same storage again (a view): once
        saved.pack(param)       # a parameter
        view = T(101, 16)
        view._base = param
        saved.pack(view)        # and a view of one
        saved.leave("block.fc")
        saved.pack(T(4, 4))
        saved.leave("block")
        self.assertEqual(saved.by_module, {"block": 68, "block.fc": 32})
        saved.reset()
        self.assertEqual(saved.by_module, {})
        saved.pack(T(2, 64))  # no module open after a reset
        self.assertEqual(saved.by_module, {})

    def test_a_tensor_without_storage_is_skipped(self):
        class NoStorage:
            def untyped_storage(self):
                raise RuntimeError("sparse")
        saved = sm.SavedBytes()
        saved.enter("m")
        saved.pack(NoStorage())
        self.assertEqual(saved.by_module, {})


def _torch():
    try:
        import torch
        return torch
    except ImportError:
        return None


def _record_ranges(marks):
    """The names of the ranges `marks` opens from now on, in order."""
    names = []

    class Recorder:
        def range_start(self, name):
            names.append(name)
            return name

        def range_end(self, r):
            pass
    marks._ranges = Recorder()
    return names


@unittest.skipIf(_torch() is None, "no torch on this interpreter (Debian's python3-torch)")
class MarksWithTorch(unittest.TestCase):
    """The hooks on a real model (CPU): the metadata of each marked iteration
    carries what each module saved for backward in the iteration before."""

    def test_no_activation_marks_when_turned_off(self):
        torch = _torch()
        model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU())
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        marks = sm.mark(model, opt, backend="profiler", window=(0, None), activations=False)
        names = _record_ranges(marks)
        seen = []
        real = torch.autograd.graph.saved_tensors_hooks
        torch.autograd.graph.saved_tensors_hooks = lambda *a: seen.append(a) or real(*a)
        try:
            for _ in range(3):
                model(torch.randn(4, 16)).sum().backward()
                opt.step()
        finally:
            torch.autograd.graph.saved_tensors_hooks = real
        marks.remove()
        self.assertEqual(seen, [])
        self.assertFalse([n for n in names if n.startswith("ssgd/activation_bytes/")])
        self.assertIn("ssgd/grad_bytes/0=544", names)

    def test_activation_marks(self):
        torch = _torch()
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        marks = sm.mark(model, opt, backend="profiler", window=(1, None))
        names = _record_ranges(marks)
        # As a sharded loop does: the weights' data moved to another buffer
        # once the forward started; they are still parameters.
        for layer in (model[0], model[2]):
            layer.register_forward_pre_hook(lambda m, a: setattr(m.weight, "data", m.weight.data.clone()))
        x = torch.randn(64, 256)
        for _ in range(3):
            model(x).sum().backward()
            opt.step()
            opt.zero_grad()
        marks.remove()
        acts = [n for n in names if n.startswith("ssgd/activation_bytes/")]
        # Marked iterations 1, 2 and 3 (opened as 2 ends), each with the
        # iteration before's:
        # the first Linear saves its input (64 x 256 fp32; its weight is a
        # parameter), ReLU its output (64 x 512), which the second Linear
        # saves again (counted once, at ReLU).
        self.assertEqual(acts, ["ssgd/activation_bytes/0=65536", "ssgd/activation_bytes/1=131072",
                                "ssgd/activation_bytes/2=0"] * 3)


if __name__ == "__main__":
    unittest.main()
