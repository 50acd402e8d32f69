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

    def test_values_the_legacy_writer_cannot_hold_are_refused(self):
        for bad in ('a"b', "a=b", "a\\b", ""):
            with self.assertRaises(ValueError):
                sm.metadata_names([("hostname", bad)], [], [])


if __name__ == "__main__":
    unittest.main()


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
