"""Tests of the testbed's torch-free logic: grid files, statistics, core
assignment, the scenario and OSU files it writes, the sharded loop's plan of
collectives; and, where the interpreter has torch (Debian's python3-torch),
the sharded loop against DDP over gloo on localhost (no root needed). The
testbed itself needs root and torch (tools/testbed/build_dataset.sh); these
run in CI."""

import contextlib
import io
import json
import os
import socket
import subprocess
import sys
import tempfile
import unittest

import assemble
import cluster
import collective_waits
import grid
import launcher
import sharded
import stats
import train

GRID = """
name = "t"
whatif = ["rate", "bucket_mb", "overlap:on->off", "world:2->4", "world:1->2"]
[batch]
mlp = 32
cnn = 16
[[configs]]
model = ["mlp", "cnn"]
rate = ["unshaped", "1gbit"]
bucket_mb = [25, 2]
[[configs]]
model = "mlp"
rate = ["unshaped", "1gbit"]
overlap = "off"
bucket_mb = 7
[[configs]]
model = "mlp"
world = [2, 4]
cpu_per_rank = 0.5
rate = "1gbit"
[[configs]]
model = "mlp"
world = 1
cpu_per_rank = [1.0, 0.5]
rate = "200mbit"
"""


class Grids(unittest.TestCase):
    def test_expansion_ids_and_networks(self):
        g = grid.Grid("t.toml", GRID)
        ids = [c.id for c in g.configs]
        self.assertEqual(len(ids), 8 + 2 + 2 + 2)
        self.assertIn("mlp-w1", ids)
        self.assertIn("mlp-w1-cpu0p5", ids)
        alone = next(c for c in g.configs if c.id == "mlp-w1")
        self.assertEqual((alone.rate_bits, alone.bucket_mb, alone.overlap), (None, None, "none"))
        self.assertIn("mlp-w2-1gbit-b25", ids)
        self.assertIn("mlp-w2-unshaped-nooverlap", ids)
        self.assertIn("mlp-w4-1gbit-b25-cpu0p5", ids)
        self.assertEqual([n[0] for n in g.network_keys()],
                         ["unshaped-w2", "1gbit-w2", "1gbit-w2-cpu0p5", "1gbit-w4-cpu0p5"])
        off = next(c for c in g.configs if c.overlap == "off")
        self.assertIsNone(off.bucket_mb)  # no buckets without overlap

    def test_whatif_sources_differ_in_one_knob(self):
        g = grid.Grid("t.toml", GRID)
        by_id = {c.id: c for c in g.configs}
        self.assertEqual(g.whatif_sources(by_id["mlp-w2-1gbit-b25"]),
                         ["mlp-w2-unshaped-b25", "mlp-w2-1gbit-b2", "mlp-w1"])
        self.assertEqual(g.whatif_sources(by_id["mlp-w2-1gbit-nooverlap"]),
                         ["mlp-w2-unshaped-nooverlap", "mlp-w2-1gbit-b25", "mlp-w2-1gbit-b2", "mlp-w1"])
        self.assertEqual(g.whatif_sources(by_id["mlp-w4-1gbit-b25-cpu0p5"]), ["mlp-w2-1gbit-b25-cpu0p5"])
        # one rank predicts two ranks at the same CPU share, whatever their network
        self.assertEqual(g.whatif_sources(by_id["mlp-w2-1gbit-b25-cpu0p5"]), ["mlp-w1-cpu0p5"])
        self.assertEqual(g.whatif_sources(by_id["mlp-w1"]), [])
        # on->off only: overlap on is never predicted from overlap off
        self.assertNotIn("mlp-w2-1gbit-nooverlap", g.whatif_sources(by_id["mlp-w2-1gbit-b25"]))

    def test_partitions_are_a_knob(self):
        g = grid.Grid("g.toml", "whatif = ['partition_kb']\n[batch]\nmlp = 32\n[[configs]]\nmodel = 'mlp'\n"
                                "bucket_mb = 2\npartition_kb = [0, 256, 64]\n")
        ids = [c.id for c in g.configs]
        self.assertEqual(ids, ["mlp-w2-unshaped-b2", "mlp-w2-unshaped-b2-p256", "mlp-w2-unshaped-b2-p64"])
        self.assertEqual(g.configs[1].knobs()["partition_kb"], 256)
        by_id = {c.id: c for c in g.configs}
        self.assertEqual(g.whatif_sources(by_id["mlp-w2-unshaped-b2-p64"]),
                         ["mlp-w2-unshaped-b2", "mlp-w2-unshaped-b2-p256"])

    def test_sharded_strategies_and_accumulation(self):
        g = grid.Grid("s.toml", "whatif = ['strategy', 'forward_prefetch', 'accumulation:1->2']\n[batch]\nmlp = 32\n"
                                "[[configs]]\nmodel = 'mlp'\nstrategy = ['ddp', 'zero2', 'zero3']\n"
                                "forward_prefetch = [0, 1]\naccumulation = [1, 2]\nrate = '1gbit'\n")
        ids = [c.id for c in g.configs]
        # ddp and zero2 have no forward prefetch: listed once each
        self.assertEqual(ids, ["mlp-w2-1gbit-b25", "mlp-w2-1gbit-zero2", "mlp-w2-1gbit-zero3-f0",
                               "mlp-w2-1gbit-zero3-f1", "mlp-w2-1gbit-b25-k2", "mlp-w2-1gbit-zero2-k2",
                               "mlp-w2-1gbit-zero3-f0-k2", "mlp-w2-1gbit-zero3-f1-k2"])
        by_id = {c.id: c for c in g.configs}
        z3 = by_id["mlp-w2-1gbit-zero3-f1-k2"]
        self.assertEqual((z3.bucket_mb, z3.overlap, z3.reduce_op, z3.backward_prefetch), (None, "sharded", "reduce", "pre"))
        self.assertEqual(by_id["mlp-w2-1gbit-b25"].knobs()["strategy"], "ddp")
        self.assertEqual(g.whatif_sources(z3), ["mlp-w2-1gbit-b25-k2", "mlp-w2-1gbit-zero2-k2",
                                                "mlp-w2-1gbit-zero3-f0-k2", "mlp-w2-1gbit-zero3-f1"])
        post = grid.Grid("p.toml", "[batch]\nmlp = 1\n[[configs]]\nmodel = 'mlp'\nstrategy = 'zero3'\n"
                                   "backward_prefetch = 'post'\nreduce_op = 'allreduce'\n")
        self.assertEqual(post.configs[0].id, "mlp-w2-unshaped-zero3-f1-bpost-ar")

    def test_hsdp_has_its_group_and_is_a_strategy_what_if(self):
        g = grid.Grid("h.toml", "whatif = ['strategy']\n[batch]\nmlp = 1\n[[configs]]\nmodel = 'mlp'\n"
                                "strategy = ['zero3', 'hsdp']\nshard_group = 2\nworld = 4\n")
        self.assertEqual([c.id for c in g.configs], ["mlp-w4-unshaped-zero3-f1", "mlp-w4-unshaped-hsdp-g2-f1"])
        self.assertIsNone(g.configs[0].shard_group)  # zero3 shards over the world
        self.assertEqual(g.configs[1].knobs()["shard_group"], 2)
        self.assertEqual(g.whatif_sources(g.configs[1]), ["mlp-w4-unshaped-zero3-f1"])

    def test_errors_name_the_file_and_key(self):
        for text, needle in (("[[configs]]\nmodel='x'\n[batch]\nx=1", "model 'x'"),
                             ("[batch]\nmlp=1\n[[configs]]\nmodel='mlp'\nrate='fast'", "link rate 'fast'"),
                             ("[batch]\nmlp=1\n[[configs]]\nmodel='mlp'\ncolour=1", "colour"),
                             ("[batch]\nmlp=1", "no [[configs]]"),
                             ("rounds=0\n[batch]\nmlp=1\n[[configs]]\nmodel='mlp'", "rounds"),
                             ("[batch]\nmlp=1\n[[configs]]\nmodel='mlp'\ncpu_per_rank=2", "cpu_per_rank"),
                             ("[[configs]]\nmodel='cnn'", "no batch"),
                             ("whatif=['colour']\n[batch]\nmlp=1\n[[configs]]\nmodel='mlp'", "whatif"),
                             ("[batch]\nmlp=1\n[[configs]]\nmodel='mlp'\noverlap='off'\npartition_kb=64",
                              "partition_kb 64"),
                             ("[batch]\nmlp=1\n[[configs]]\nmodel='mlp'\npartition_kb=-1", "partition_kb -1"),
                             ("[batch]\nmlp=1\n[[configs]]\nmodel='mlp'\nstrategy='zero1'", "strategy 'zero1'"),
                             ("[batch]\nmlp=1\n[[configs]]\nmodel='mlp'\nforward_prefetch=2", "forward_prefetch 2"),
                             ("[batch]\nmlp=1\n[[configs]]\nmodel='mlp'\naccumulation=0", "accumulation 0"),
                             ("[batch]\nmlp=1\n[[configs]]\nmodel='mlp'\nstrategy='zero3'\npartition_kb=64",
                              "partition_kb 64"),
                             ("[sweep]\nops=['reduce']\n[batch]\nmlp=1\n[[configs]]\nmodel='mlp'", "sweep.ops"),
                             ("[batch]\nmlp=1\n[[configs]]\nmodel='mlp'\nstrategy='hsdp'\nworld=4",
                              "shard_group 0"),
                             ("[batch]\nmlp=1\n[[configs]]\nmodel='mlp'\nstrategy='hsdp'\nworld=4\nshard_group=3",
                              "shard_group 3"),
                             ("[batch]\nmlp=1\n[[configs]]\nmodel='mlp'\nstrategy='hsdp'\nworld=2\nshard_group=2",
                              "shard_group 2"),
                             ("[batch]\nmlp=1\n[[configs]]\nmodel='mlp'\nstrategy='hsdp'\nworld=4\nshard_group=2\n"
                              "reduce_op='allreduce'", "reduce_op 'allreduce'"),
                             ("[sweep]\nops=['allreduce','scatter']\n[batch]\nmlp=1\n[[configs]]\nmodel='mlp'",
                              "sweep.ops"),
                             ("[sweep]\nsizes=[8]\nops=['allreduce','allgather']\n[batch]\nmlp=1\n[[configs]]\n"
                              "model='mlp'\nworld=4", "multiple of 4 x 4")):
            with self.assertRaises(grid.GridError) as e:
                grid.Grid("g.toml", text)
            self.assertIn("g.toml", str(e.exception))
            self.assertIn(needle, str(e.exception))

    def test_the_bundled_grids_load(self):
        here = os.path.dirname(os.path.abspath(__file__))
        for name in ("cpu-cluster.toml", "smoke.toml", "cpu-partitions.toml", "cpu-sharded.toml",
                     "cpu-sharded-smoke.toml", "cpu-sharded-mini.toml", "cpu-sharded-accum.toml"):
            g = grid.Grid(os.path.join(here, "grids", name))
            self.assertTrue(g.configs)


class Rates(unittest.TestCase):
    def test_rates(self):
        self.assertEqual(cluster.parse_rate_bits("1gbit"), 10**9)
        self.assertEqual(cluster.parse_rate_bits("200Mbit/s"), 200 * 10**6)
        self.assertIsNone(cluster.parse_rate_bits("unshaped"))
        self.assertEqual(cluster.rate_label(200 * 10**6), "200mbit")
        for bad in ("fast", "-1mbit", "mbit"):
            with self.assertRaises(ValueError):
                cluster.parse_rate_bits(bad)


class Statistics(unittest.TestCase):
    def test_percentiles(self):
        self.assertEqual(stats.median([3, 1, 2]), 2)
        self.assertEqual(stats.percentile([0, 10], 10), 1)

    def test_iterations_are_averaged_over_ranks_and_pooled_over_rounds(self):
        rounds = [{"ranks": [{"iteration_ns": [100, 110, 120]}, {"iteration_ns": [100, 110, 140]}]},
                  {"ranks": [{"iteration_ns": [200, 200, 200]}, {"iteration_ns": [200, 200, 200]}]}]
        s = stats.iteration_stats(rounds)
        self.assertEqual(s["round_medians"], [110, 200])
        self.assertEqual(s["samples"], 6)
        self.assertEqual(s["min"], 100)
        self.assertEqual(s["median"], 165)

    def test_memory_is_the_peak_above_the_baseline_pooled_over_ranks_and_rounds(self):
        def rank(peak, before, reset=True):
            return {"peak_rss_kb": peak, "rss_before_model_kb": before, "peak_rss_reset": reset}
        rounds = [{"ranks": [rank(300, 200), rank(310, 200)]}, {"ranks": [rank(320, 200), rank(330, 200)]}]
        m = stats.memory_stats(rounds)
        self.assertEqual(m["median"], 115 * 1024)  # of 100, 110, 120, 130 KiB
        self.assertEqual(m["min"], 100 * 1024)
        self.assertEqual(m["samples"], 4)
        self.assertLessEqual(m["p10"], m["median"])
        # A rank whose peak was not reset, or without a baseline: no figure.
        self.assertIsNone(stats.memory_stats([{"ranks": [rank(300, 200, reset=False)]}]))
        self.assertIsNone(stats.memory_stats([{"ranks": [{"peak_rss_kb": 300, "peak_rss_reset": True}]}]))

    def test_memory_leaves_out_the_library_code_paged_in(self):
        # 300 - 200 KiB of peak, of which the file-backed set grew by 30 KiB
        # (code pages): 70 KiB of training state. A shrinking file-backed set
        # takes nothing away.
        def rank(file_before, file_end):
            return {"peak_rss_kb": 300, "rss_before_model_kb": 200, "peak_rss_reset": True,
                    "rss_file_before_model_kb": file_before, "rss_file_end_kb": file_end}
        self.assertEqual(stats.memory_stats([{"ranks": [rank(50, 80)]}])["median"], 70 * 1024)
        self.assertEqual(stats.memory_stats([{"ranks": [rank(80, 50)]}])["median"], 100 * 1024)
        # Growth as large as the peak leaves nothing: no figure.
        self.assertIsNone(stats.memory_stats([{"ranks": [rank(0, 100)]}]))

    def test_sweep_takes_the_slowest_rank_then_medians(self):
        rounds = [{"ranks": [{"sizes": [4, 8], "ns": [[10, 30, 20], [5, 5]]},
                             {"sizes": [4, 8], "ns": [[12, 10, 20], [6, 4]]}]},
                  {"ranks": [{"sizes": [4, 8], "ns": [[40, 40, 40], [5, 5]]},
                             {"sizes": [4, 8], "ns": [[40, 40, 40], [5, 5]]}]}]
        curve = stats.sweep_curve(rounds)
        self.assertEqual(curve[0][:3], (4, 30, 20))  # round values 20 and 40
        self.assertEqual(curve[1][:3], (8, 5, 5))  # round values 5.5 and 5

    def test_sweep_of_several_collectives(self):
        def rank(ar, ag):
            return {"sizes": [16], "ns": [ar], "ops": {"allgather": [ag]}}
        rounds = [{"ranks": [rank([10], [30]), rank([12], [20])]},
                  {"ranks": [rank([14], [50]), rank([10], [40])]}]
        self.assertEqual(stats.sweep_ops(rounds), ["allreduce", "allgather"])
        self.assertEqual(stats.sweep_curve(rounds)[0][:3], (16, 13, 12))
        self.assertEqual(stats.sweep_curve(rounds, "allgather")[0][:3], (16, 40, 30))
        # an op one rank lacks is not swept
        rounds[1]["ranks"][1] = {"sizes": [16], "ns": [[10]]}
        self.assertEqual(stats.sweep_ops(rounds), ["allreduce"])


class Launching(unittest.TestCase):
    def test_cores(self):
        self.assertEqual([launcher.core_of(r, 2, 2) for r in range(2)], [0, 1])
        self.assertEqual([launcher.core_of(r, 4, 2) for r in range(4)], [0, 0, 1, 1])

    def test_cores_per_rank_needs_loopback_and_cores(self):
        with self.assertRaises(cluster.TestbedError) as e:
            launcher.run_ranks("x.py", lambda r: [], 2, 1.0, "/nonexistent", "log", 1, 2, 1, cores_per_rank=2)
        self.assertIn("--cores-per-rank 2", str(e.exception))
        with self.assertRaises(cluster.TestbedError):
            launcher.run_ranks("x.py", lambda r: [], 2, 1.0, "/nonexistent", "log", 1, 2, 1, loopback=True,
                               cores_per_rank=2)

    def test_loopback_refuses_shaped_links(self):
        with cluster.Loopback(2) as net:
            net.shape(None)
            with self.assertRaises(cluster.TestbedError) as e:
                net.shape(10**9)
        self.assertIn("unshaped", str(e.exception))

    def test_oversubscription_is_refused(self):
        launcher.check_cpu(4, 0.5, 2)
        with self.assertRaises(cluster.TestbedError) as e:
            launcher.check_cpu(4, 1.0, 2)
        self.assertIn("time-share", str(e.exception))


class Files(unittest.TestCase):
    def test_scenario(self):
        knobs = {"model": "mlp", "world": 2, "rate": "1gbit", "rate_bits_per_s": 10**9, "overlap": "on",
                 "bucket_mb": 25, "cpu_per_rank": 1.0, "batch": 32}
        text = assemble.scenario_text(knobs, "../../network/1gbit-w2/calibration.yaml")
        self.assertIn("  nodes: 2\n", text)
        self.assertIn("  inter_node_bandwidth: 1000Mb/s\n", text)
        self.assertIn("  overlap: ddp\n  bucket_cap: 25MiB\n", text)
        self.assertIn("workload:\n  batch_per_gpu: 32\n", text)
        alone = dict(knobs, world=1, overlap="none", bucket_mb=None, rate="unshaped", rate_bits_per_s=None)
        text = assemble.scenario_text(alone, "x.yaml")
        self.assertIn("  nodes: 1\n", text)
        self.assertNotIn("calibration", text)
        off = dict(knobs, overlap="off", bucket_mb=None, rate="unshaped", rate_bits_per_s=None)
        text = assemble.scenario_text(off, "x.yaml")
        self.assertIn("  overlap: single\n", text)
        self.assertNotIn("inter_node_bandwidth", text)

    def test_sharded_scenario(self):
        knobs = {"model": "mlp", "world": 4, "rate": "1gbit", "rate_bits_per_s": 10**9, "overlap": "sharded",
                 "bucket_mb": None, "cpu_per_rank": 0.5, "batch": 32, "accumulation": 2, "strategy": "zero3",
                 "forward_prefetch": 0, "backward_prefetch": "pre", "reduce_op": "reduce"}
        text = assemble.scenario_text(knobs, "c.yaml")
        self.assertIn("  accumulation: 2", text)
        self.assertIn("  optimizer: momentum", text)
        self.assertIn("  overlap: wfbp\nsharding:\n  strategy: zero3\n", text)
        self.assertIn("  forward_prefetch: 0\n  backward_prefetch: pre\n", text)
        self.assertNotIn("bucket_cap", text)
        self.assertIn("zero3 by hand over gloo", assemble.describe(knobs))
        hsdp = assemble.scenario_text(dict(knobs, strategy="hsdp", shard_group=2), "c.yaml")
        self.assertIn("  strategy: hsdp\n", hsdp)
        self.assertIn("  group: 2\n  forward_prefetch: 0\n", hsdp)
        self.assertIn("hsdp by hand over gloo (shard groups of 2 ranks)",
                      assemble.describe(dict(knobs, strategy="hsdp", shard_group=2)))
        z2 = dict(knobs, strategy="zero2", forward_prefetch=None, backward_prefetch=None, accumulation=1)
        text = assemble.scenario_text(z2, "c.yaml")
        self.assertIn("  strategy: zero2\n", text)
        self.assertIn("  library: generic\n", text)
        self.assertIn("  gradient_reduction: reduce\n", text)
        self.assertIn("  gradient_reduction: all_reduce\n",
                      assemble.scenario_text(dict(z2, reduce_op="allreduce"), "c.yaml"))
        self.assertNotIn("forward_prefetch", text)
        self.assertNotIn("accumulation", text)
        # In a grid that varies it, one micro-batch is said (a what-if from a
        # capture of two would otherwise replay two).
        self.assertIn("  accumulation: 1  # one micro-batch a step\n",
                      assemble.scenario_text(z2, "c.yaml", explicit_accumulation=True))
        # DDP in a grid of strategies says none, so that a what-if from a
        # sharded capture (whose profile names its strategy) replays DDP.
        ddp = dict(z2, strategy="ddp", overlap="on", bucket_mb=25)
        text = assemble.scenario_text(ddp, "c.yaml")
        self.assertIn("  overlap: ddp\n", text)
        self.assertIn("sharding:\n  strategy: none\n", text)
        self.assertIn("  optimizer: momentum", text)

    def test_partitioned_scenario(self):
        knobs = {"model": "mlp", "world": 2, "rate": "unshaped", "rate_bits_per_s": None, "overlap": "on",
                 "bucket_mb": 2, "cpu_per_rank": 1.0, "batch": 32, "partition_kb": 256}
        text = assemble.scenario_text(knobs, "c.yaml", scheduler=(17306, 8455, ["a", "b"]))
        self.assertIn("  overlap: priority\n  partition_size: 256KiB\n  credit_size: 0B\n  update: global\n",
                      text)
        self.assertIn("  partition_overhead: 17306ns\n  schedule_overhead: 8455ns\n", text)
        self.assertIn("capture(s) of a, b", text)
        self.assertNotIn("bucket_cap", text)

    def test_scheduler_costs_leave_the_target_out(self):
        base = {"model": "mlp", "rate": "unshaped", "world": 2, "cpu_per_rank": 1.0}
        knobs = {"p1": dict(base, partition_kb=1024), "p2": dict(base, partition_kb=256),
                 "p3": dict(base, partition_kb=64), "c1": dict(base, model="cnn", partition_kb=64)}
        fitted = {"p1": (20000, 14000), "p2": (17000, 8000), "p3": (15000, 7000), "c1": (1, 1)}
        overhead, schedule, sources = assemble.leave_one_out("p2", knobs["p2"], fitted, knobs)
        self.assertEqual(sources, ["p1", "p3"])
        self.assertEqual((overhead, schedule), (15000, 7000))  # the lower median of two
        # Alone: its own fit, named as such.
        self.assertEqual(assemble.leave_one_out("c1", knobs["c1"], fitted, knobs), (1, 1, ["c1"]))

    def test_read_scheduler_fit(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.yaml")
            with open(path, "w") as f:
                f.write("# x\npolicy:\n  partition_overhead: 5000ns\n  schedule_overhead: 4000ns\n")
            self.assertEqual(assemble.read_scheduler_fit(path), (5000, 4000))
            with open(path, "w") as f:
                f.write("policy:\n  schedule_overhead: 4000ns\n")
            self.assertEqual(assemble.read_scheduler_fit(path), (None, 4000))

    def test_osu(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "a.osu")
            assemble.write_osu([(1024, 123456, 120000, 0.1)], 4, "1gbit-w4", path)
            text = open(path).read()
        self.assertTrue(text.startswith("# OSU MPI Allreduce Latency Test\n"))
        self.assertIn("\n4,1024 123.46\n", text)

    def test_osu_all_gather_size_is_per_rank(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "g.osu")
            assemble.write_osu([(4096, 2000000, 1900000, 0.1)], 4, "1gbit-w4", path, "allgather")
            text = open(path).read()
        self.assertTrue(text.startswith("# OSU MPI Allgather Latency Test\n"))
        self.assertIn("\n4,1024 2000.00\n", text)  # OSU's size: what each of the 4 ranks sends


class ShardedPlan(unittest.TestCase):
    def test_zero3_prefetch_and_reshard(self):
        # 3 units of 10, 6 and 5 elements on 2 ranks: padded to 10, 6, 6.
        steps = sharded.plan([10, 6, 5], 2, "zero3", forward_prefetch=1, backward_prefetch="pre")
        seq = [(s["phase"], s["unit"], s["op"], s["bytes"], s.get("dst"), s["sync"]) for s in steps]
        self.assertEqual(seq, [
            ("forward", 0, "all_gather", 40, None, True), ("forward", 1, "all_gather", 24, None, False),
            ("forward", 2, "all_gather", 24, None, False),
            # the last unit stays gathered into its backward
            ("backward", 1, "all_gather", 24, None, False),
            ("backward", 2, "reduce", 12, 0, False), ("backward", 2, "reduce", 12, 1, False),
            ("backward", 0, "all_gather", 40, None, False),
            ("backward", 1, "reduce", 12, 0, False), ("backward", 1, "reduce", 12, 1, False),
            ("backward", 0, "reduce", 20, 0, False), ("backward", 0, "reduce", 20, 1, False)])

    def test_zero3_without_prefetch_gathers_in_line(self):
        steps = sharded.plan([8, 8], 4, "zero3", forward_prefetch=0, backward_prefetch="post",
                             accumulation=2, reduce_op="allreduce")
        seq = [(s["phase"], s["micro"], s["unit"], s["op"], s["sync"]) for s in steps]
        self.assertEqual(seq, [
            ("forward", 0, 0, "all_gather", True), ("forward", 0, 1, "all_gather", True),
            ("backward", 0, 0, "all_gather", False),  # post: after unit 1's gradients
            ("forward", 1, 0, "all_gather", True), ("forward", 1, 1, "all_gather", True),
            ("backward", 1, 0, "all_gather", False), ("backward", 1, 1, "all_reduce", False),
            ("backward", 1, 0, "all_reduce", False)])

    def test_zero2_reduces_on_the_last_micro_batch_and_gathers_after_the_step(self):
        steps = sharded.plan([7, 4], 2, "zero2", accumulation=3)
        seq = [(s["phase"], s["micro"], s["unit"], s["op"], s["bytes"]) for s in steps]
        self.assertEqual(seq, [("backward", 2, 1, "reduce", 8), ("backward", 2, 1, "reduce", 8),
                               ("backward", 2, 0, "reduce", 16), ("backward", 2, 0, "reduce", 16),
                               ("step", 2, 0, "all_gather", 32), ("step", 2, 1, "all_gather", 16)])

    def test_hsdp_shards_over_the_group_and_all_reduces_each_shard_across_the_groups(self):
        steps = sharded.plan([10, 6], 4, "hsdp", forward_prefetch=0, backward_prefetch="pre", group=2)
        seq = [(s["phase"], s["unit"], s["op"], s["bytes"], s["group"]) for s in steps]
        # units padded to multiples of 2 ranks, not 4: 10 and 6 elements
        self.assertEqual(seq, [("forward", 0, "all_gather", 40, "shard"), ("forward", 1, "all_gather", 24, "shard"),
                               ("backward", 0, "all_gather", 40, "shard"),
                               ("backward", 1, "reduce", 12, "shard"), ("backward", 1, "reduce", 12, "shard"),
                               ("backward", 1, "all_reduce", 12, "replica"),
                               ("backward", 0, "reduce", 20, "shard"), ("backward", 0, "reduce", 20, "shard"),
                               ("backward", 0, "all_reduce", 20, "replica")])
        self.assertEqual([s["dst"] for s in steps if s["op"] == "reduce"], [0, 1, 0, 1])
        by_op = sharded.op_order_bytes(steps)
        self.assertEqual(by_op["all_reduce"], [12, 20])
        self.assertEqual(by_op["reduce"], [12, 12, 20, 20])

    def test_hsdp_marks_name_the_groups_the_engine_makes(self):
        # Engine's own groups, from a dist that hands back each new_group's
        # ranks: the marks must name the groups this rank joined (its shard
        # group, every G-th rank for its replicas), whatever formulas made them.
        class FakeDist:
            def __init__(self, rank, world):
                self.rank, self.world, self.groups = rank, world, []

            def get_world_size(self):
                return self.world

            def get_rank(self):
                return self.rank

            def new_group(self, ranks):
                self.groups.append(list(ranks))
                return list(ranks)

        for rank in range(4):
            dist = FakeDist(rank, 4)
            e = sharded.Engine.__new__(sharded.Engine)
            with self.assertRaises(ValueError):  # no units: after the groups are made
                sharded.Engine.__init__(e, None, dist, [], "hsdp", group=2)
            self.assertEqual(len(dist.groups), 4)
            ranks = e.op_ranks()
            self.assertEqual(ranks["all_gather"], e.shard_group)
            self.assertEqual(ranks["reduce"], e.shard_group)
            self.assertEqual(ranks["all_reduce"], e.replica_group)
            self.assertIn(rank, e.shard_group)
            self.assertIn(rank, e.replica_group)
        self.assertEqual(ranks, {"all_gather": [2, 3], "reduce": [2, 3], "all_reduce": [1, 3]})

    def test_refusals(self):
        with self.assertRaises(ValueError):
            sharded.plan([4], 2, "zero1")
        for group in (None, 1, 3, 4):
            with self.assertRaises(ValueError):
                sharded.plan([4], 4, "hsdp", group=group)
        with self.assertRaises(ValueError):
            sharded.plan([4], 4, "hsdp", group=2, reduce_op="allreduce")
        with self.assertRaises(ValueError):
            sharded.plan([4], 4, "zero3", group=2)


class TrainArguments(unittest.TestCase):
    """train.py's command line: HSDP's group is checked before anything starts."""
    BASE = ["--rank", "0", "--world", "4", "--master", "127.0.0.1", "--port", "1", "--out", "/tmp",
            "--model", "mlp", "--batch", "2"]

    def refused(self, extra):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as e:
            train.parse_args(self.BASE + extra)
        self.assertEqual(e.exception.code, 2)
        return err.getvalue()

    def test_hsdp_group(self):
        a = train.parse_args(self.BASE + ["--shard", "hsdp", "--shard-group", "2"])
        self.assertEqual((a.shard, a.shard_group), ("hsdp", 2))
        for group in ("0", "1", "3", "4"):
            self.assertIn(f"--shard-group {group}", self.refused(["--shard", "hsdp", "--shard-group", group]))
        self.assertIn("--reduce-op reduce",
                      self.refused(["--shard", "hsdp", "--shard-group", "2", "--reduce-op", "allreduce"]))
        self.assertIn("--shard-group needs --shard hsdp", self.refused(["--shard", "zero3", "--shard-group", "2"]))


def _torch_python():
    """An interpreter with torch and gloo: this one, else Debian's."""
    for exe in (sys.executable, "/usr/bin/python3"):
        try:
            r = subprocess.run([exe, "-c", "import torch.distributed as d; assert d.is_gloo_available()"],
                               capture_output=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0:
            return exe
    return None


def _two_ranks(test, exe, script, args, timeout, world=2):
    """Runs `script` as ranks 0 .. world-1 (0 and 1 by default) over gloo on
    localhost (a free port), each with `args`; fails `test` unless every one
    exits 0; returns their stdouts."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), script)
    env = dict(os.environ, OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME="lo")
    procs = [subprocess.Popen([exe, path, "--rank", str(r), "--world", str(world), "--port", str(port)] + args,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for r in range(world)]
    outs = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=timeout)
            test.assertEqual(p.returncode, 0, err[-2000:])
            outs.append(out)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return outs


class SweepRuns(unittest.TestCase):
    """sweep.py's three collectives, 2 ranks over gloo on localhost."""

    def test_all_three_collectives(self):
        exe = _torch_python()
        if exe is None:
            self.skipTest("no interpreter with torch and gloo (apt-get install python3-torch)")
        with tempfile.TemporaryDirectory() as d:
            _two_ranks(self, exe, "sweep.py", ["--master", "127.0.0.1", "--sizes", "64,4096", "--repeats", "2",
                                               "--ops", "allreduce,allgather,reduce", "--out", d], 300)
            ranks = []
            for r in range(2):
                with open(os.path.join(d, f"sweep-rank{r}.json")) as f:
                    ranks.append(json.load(f))
        rounds = [{"ranks": ranks}]
        self.assertEqual(stats.sweep_ops(rounds), ["allreduce", "allgather", "reduce"])
        for op in ("allreduce", "allgather", "reduce"):
            curve = stats.sweep_curve(rounds, op)
            self.assertEqual([c[0] for c in curve], [64, 4096])
            self.assertTrue(all(c[1] > 0 for c in curve), op)

    def test_an_all_gather_needs_whole_floats_per_rank(self):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sweep.py")
        r = subprocess.run([sys.executable, script, "--rank", "0", "--world", "4", "--master", "x", "--port", "1",
                            "--sizes", "8", "--ops", "allgather", "--out", "/nonexistent"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("multiple of 4 x 4", r.stderr)


class ShardedAgainstDdp(unittest.TestCase):
    """ZeRO-2 and ZeRO-3 (prefetch 0 and 1, backward prefetch pre and post,
    reduce and all-reduce) against DDP: 2 ranks over gloo on localhost, the
    same seed, rank-dependent data, 3 steps of 2 micro-batches; every model."""

    def test_parameters_equal_ddp_and_the_logs_equal_the_plan(self):
        exe = _torch_python()
        if exe is None:
            self.skipTest("no interpreter with torch and gloo (apt-get install python3-torch)")
        outs = [json.loads(out) for out in _two_ranks(self, exe, "sharded.py", [], 600)]
        for result in outs:
            self.assertEqual(result["plan_mismatch"], [])
            self.assertEqual(len(result["max_abs_diff"]), 15)
            for case, diff in result["max_abs_diff"].items():
                self.assertLess(diff, 1e-6, case)
            for model, moved in result["moved"].items():
                self.assertGreater(moved, 1e-3, model)  # the steps changed the parameters

    def test_hsdp_at_four_ranks(self):
        """HSDP, shard groups of 2 of 4 ranks (forward prefetch 0 and 1,
        backward prefetch pre and post), against DDP on the mlp and the
        transformer; each process group's log equal to the plan's."""
        exe = _torch_python()
        if exe is None:
            self.skipTest("no interpreter with torch and gloo (apt-get install python3-torch)")
        outs = [json.loads(out) for out in _two_ranks(self, exe, "sharded.py", ["--models", "mlp,transformer",
                                                                                  "--strategies", "hsdp"], 600,
                                                      world=4)]
        for result in outs:
            self.assertEqual(result["plan_mismatch"], [])
            self.assertEqual(sorted(result["max_abs_diff"]), [
                "mlp-hsdp-backward_prefetch=post-forward_prefetch=0-group=2",
                "mlp-hsdp-backward_prefetch=pre-forward_prefetch=1-group=2",
                "transformer-hsdp-backward_prefetch=post-forward_prefetch=0-group=2",
                "transformer-hsdp-backward_prefetch=pre-forward_prefetch=1-group=2"])
            for case, diff in result["max_abs_diff"].items():
                self.assertLess(diff, 1e-6, case)


class CollectiveWaitsTest(unittest.TestCase):
    DUMP = "\n".join([
        "events { collective { op: ALL_REDUCE nranks: 2 start_ns: 0 end_ns: 5000000 stream: 11 } }",
        "events { rank: 1 collective { op: ALL_REDUCE rank: 1 nranks: 2 start_ns: 1000000 "
        "end_ns: 5000000 stream: 21 } }",
        "events { collective { op: ALL_REDUCE nranks: 2 sequence_number: 1 start_ns: 100 "
        "end_ns: 1300000 stream: 12 } }",
        "events { rank: 1 collective { op: ALL_REDUCE rank: 1 nranks: 2 sequence_number: 1 "
        "start_ns: 1000000 end_ns: 1200000 stream: 22 } }",
        "events { rank: 1 collective { op: ALL_REDUCE rank: 1 nranks: 2 sequence_number: 2 "
        "start_ns: 9000000 end_ns: 9100000 stream: 22 } }",
    ])

    def test_times_from_the_last_start_and_counts_the_ones_side_by_side(self):
        by_seq = collective_waits.collectives(self.DUMP)
        self.assertEqual(by_seq[(0, 0)], {0: (0, 5000000, 11), 1: (1000000, 5000000, 21)})
        lines = collective_waits.report(by_seq, 1.0)
        # sequence 2 ran on one rank only: left out.
        self.assertEqual(lines[0], "2 collectives on 2 ranks; host threads per rank: rank 0: 2, rank 1: 2")
        self.assertEqual(lines[1], "  beside another of the same rank: 4 of 4 rank-collectives")
        # 4 ms and 0.3 ms from the last rank's start.
        self.assertIn("median 2.150 ms", lines[2])
        self.assertTrue(lines[3].startswith("     0.0 ms      1"))
        self.assertTrue(lines[7].startswith("     4.0 ms      1"))

    def test_ranks_that_disagree_on_the_op_are_refused(self):
        bad = self.DUMP.replace("rank: 1 collective { op: ALL_REDUCE rank: 1 nranks: 2 start_ns: 1000000",
                                "rank: 1 collective { op: BROADCAST rank: 1 nranks: 2 start_ns: 1000000")
        with self.assertRaisesRegex(ValueError, "rank 1 records BROADCAST, another rank ALL_REDUCE"):
            collective_waits.collectives(bad)

    def test_a_trace_of_one_rank_has_nothing_to_say(self):
        self.assertIsNone(collective_waits.report(collective_waits.collectives(self.DUMP.splitlines()[0]), 1.0))


if __name__ == "__main__":
    unittest.main()
