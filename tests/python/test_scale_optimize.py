"""ssgd.scale and ssgd.optimize against `ssgd scale --report` and
`ssgd optimize --report`: the same code (simulator/api/) and the same JSON."""

import pytest

import ssgd
from conftest import RESNET, SCENARIO, VGG


def test_scale_equals_the_cli_report(cli_report):
    expected = cli_report("scale", RESNET, "--scenario", SCENARIO, "--gpus", "1,4,8,16")
    got = ssgd.scale(RESNET, gpus=[1, 4, 8, 16], scenario=SCENARIO)
    assert got == expected
    assert [r["gpus"] for r in got["rows"]] == [1, 4, 8, 16]
    assert ssgd.scale(RESNET, "1,4,8,16", SCENARIO) == expected


def test_strong_scale_with_overrides_equals_the_cli_report(cli_report):
    expected = cli_report("scale", VGG, "--scenario", SCENARIO, "--gpus", "4,8", "--mode",
                          "strong", "--global-batch", "512", "--set", "policy.overlap=mgwfbp")
    got = ssgd.scale(ssgd.load(VGG), [4, 8], SCENARIO, mode="strong", global_batch=512,
                     policy__overlap="mgwfbp")
    assert got == expected
    assert got["mode"] == "strong" and got["global_batch"] == 512


def test_scale_rows_as_a_dataframe():
    pd = pytest.importorskip("pandas")
    r = ssgd.scale(RESNET, [1, 4, 16], SCENARIO)
    df = r.rows()
    assert isinstance(df, pd.DataFrame)
    assert list(df["gpus"]) == [1, 4, 16]
    assert df["throughput_samples_per_s"].is_monotonic_increasing


def test_scale_errors_are_the_cli_messages(cli_error):
    expected = cli_error("scale", RESNET, "--scenario", SCENARIO, "--gpus", "1,6")
    with pytest.raises(ssgd.InputError) as e:
        ssgd.scale(RESNET, [1, 6], SCENARIO)
    assert str(e.value) == expected and "--gpus" in expected
    expected = cli_error("scale", RESNET, "--gpus", "2,2")
    with pytest.raises(ssgd.InputError) as e:
        ssgd.scale(RESNET, [2, 2])
    assert str(e.value) == expected
    expected = cli_error("scale", RESNET, "--gpus", "2", "--mode", "sideways")
    with pytest.raises(ssgd.InputError) as e:
        ssgd.scale(RESNET, [2], mode="sideways")
    assert str(e.value) == expected


def test_optimize_equals_the_cli_report(cli_report):
    expected = cli_report("optimize", RESNET, "--scenario", SCENARIO, "--param",
                          "policy.bucket_cap", "--values", "1MiB,25MiB,100MiB", "--set",
                          "policy.overlap=ddp")
    got = ssgd.optimize(RESNET, "policy.bucket_cap", ["1MiB", "25MiB", "100MiB"], SCENARIO,
                        policy__overlap="ddp")
    assert got == expected
    assert [p["value"] for p in got["curve"]] == ["1MiB", "25MiB", "100MiB"]
    assert got["best"]["value"] in ("1MiB", "25MiB", "100MiB")
    pd = pytest.importorskip("pandas")
    assert len(got.curve()) == 3


def test_optimize_also_equals_the_cli_report(cli_report):
    expected = cli_report("optimize", RESNET, "--set", "platform.preset=hgx_h100", "--set",
                          "cluster.nodes=2", "--set", "iterations=2", "--param",
                          "sharding.strategy", "--values", "none,zero3", "--also",
                          "sharding.forward_prefetch=0,1")
    got = ssgd.optimize(RESNET, "sharding.strategy", ["none", "zero3"],
                        also={"sharding.forward_prefetch": [0, 1]}, platform__preset="hgx_h100",
                        cluster__nodes=2, iterations=2)
    assert got == expected
    assert [p["value"] for p in got["curve"]][1] == "none sharding.forward_prefetch=1"
    assert all(p["fits"] is True for p in got["curve"])


def test_optimize_from_to_equals_the_cli_report(cli_report):
    expected = cli_report("optimize", RESNET, "--scenario", SCENARIO, "--param", "cluster.nodes",
                          "--from", "1", "--to", "8", "--points", "4")
    got = ssgd.optimize(RESNET, "cluster.nodes", scenario=SCENARIO, from_=1, to=8, points=4)
    assert got == expected


def test_optimize_errors_are_the_cli_messages(cli_error):
    expected = cli_error("optimize", RESNET, "--param", "policy.bucket_kap", "--values", "1MiB")
    with pytest.raises(ssgd.InputError) as e:
        ssgd.optimize(RESNET, "policy.bucket_kap", ["1MiB"])
    assert str(e.value) == expected and "--param" in expected
    expected = cli_error("optimize", RESNET, "--param", "cluster.nodes", "--values", "2,0")
    with pytest.raises(ssgd.InputError) as e:
        ssgd.optimize(RESNET, "cluster.nodes", [2, 0])
    assert str(e.value) == expected


def test_scale_refuses_an_execution_graph_as_the_cli_does(cli, cli_error, tmp_path):
    import subprocess
    graph = tmp_path / "graph.ssgdt"
    done = subprocess.run([cli, "pack", "tests/data/traces/graph.txtpb", "-o", str(graph)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    expected = cli_error("scale", str(graph), "--gpus", "2")
    with pytest.raises(ssgd.InputError) as e:
        ssgd.scale(str(graph), [2])
    assert str(e.value) == expected


def test_scale_and_optimize_refuse_a_scenario_with_jobs():
    with pytest.raises(ssgd.InputError) as e:
        ssgd.scale(RESNET, [2], "scenarios/shared_fabric.yaml")
    assert str(e.value).startswith("scenarios/shared_fabric.yaml: field 'jobs': ssgd.scale replays")
    with pytest.raises(ssgd.InputError, match="^--set: field 'jobs': ssgd.optimize replays"):
        ssgd.optimize(RESNET, "cluster.nodes", [2], network__model="flow",
                      set={"jobs.0.kind": "traffic", "jobs.0.nodes": 2, "jobs.0.bytes": "1MiB"})
