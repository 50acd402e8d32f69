"""ssgd.simulate and ssgd.Input against `ssgd simulate --report`."""

import pytest

import ssgd
from conftest import RESNET, SCENARIO, VGG


def test_simulate_equals_the_cli_report(cli_report):
    expected = cli_report("simulate", RESNET, "--scenario", SCENARIO)
    got = ssgd.simulate(RESNET, scenario=SCENARIO)
    assert got == expected
    assert isinstance(got, ssgd.Report) and isinstance(got, dict)
    assert got["input"]["path"] == RESNET and got["scenario"]["file"] == SCENARIO


def test_keyword_set_and_dict_overrides_equal_the_cli_set(cli_report):
    expected = cli_report("simulate", VGG, "--scenario", SCENARIO, "--set", "cluster.nodes=2",
                          "--set", "policy.overlap=bsp")
    assert expected["workers"] == 8
    assert ssgd.simulate(VGG, SCENARIO, cluster__nodes=2, policy__overlap="bsp") == expected
    assert ssgd.simulate(VGG, SCENARIO, set={"cluster.nodes": 2, "policy.overlap": "bsp"}) == expected
    assert ssgd.simulate(VGG, SCENARIO, set=["cluster.nodes=2", "policy.overlap=bsp"]) == expected


def test_overrides_change_the_result_the_expected_way():
    base = ssgd.simulate(RESNET, SCENARIO)
    more = ssgd.simulate(RESNET, SCENARIO, cluster__nodes=base["scenario"]["cluster"]["nodes"] * 2)
    assert more["workers"] == 2 * base["workers"]
    assert more["throughput_samples_per_s"] > base["throughput_samples_per_s"]
    # A network ten times faster hides more of the all-reduce.
    slow = ssgd.simulate(RESNET, SCENARIO, network__inter_node="10gbe")
    fast = ssgd.simulate(RESNET, SCENARIO, network__inter_node="100gbe")
    assert fast["iteration_time_ns"] < slow["iteration_time_ns"]
    assert fast["breakdown"]["exposed_comm_ns"] < slow["breakdown"]["exposed_comm_ns"]


def test_bool_values_are_written_as_set_takes_them(cli_report):
    expected = cli_report("simulate", RESNET, "--set", "perturb.mixed_precision=true")
    got = ssgd.simulate(RESNET, perturb__mixed_precision=True)
    assert got == expected
    assert got["scenario"]["perturb"]["mixed_precision"] is True


def test_a_loaded_input_runs_many_times_with_the_same_results():
    loaded = ssgd.load(RESNET)
    assert isinstance(loaded, ssgd.Input)
    assert loaded.path == RESNET and loaded.kind == "layer-profile-csv"
    assert ssgd.load(loaded) is loaded
    by_path = ssgd.simulate(RESNET, SCENARIO, cluster__nodes=2)
    assert ssgd.simulate(loaded, SCENARIO, cluster__nodes=2) == by_path
    assert ssgd.simulate(loaded, SCENARIO, cluster__nodes=2) == by_path


def test_pandas_helpers_give_the_report_tables():
    pd = pytest.importorskip("pandas")
    r = ssgd.simulate(RESNET, SCENARIO)
    coll = r.collectives()
    assert isinstance(coll, pd.DataFrame)
    rows = r["communication"]["collectives_last_iteration"]
    assert len(coll) == len(rows) > 0
    assert list(coll["bytes"]) == [c["bytes"] for c in rows]
    b = r.breakdown()
    assert list(b["part"]) == ["compute", "io", "exposed_comm", "idle"]
    assert list(b["time_ns"]) == [r["breakdown"][f"{p}_ns"] for p in b["part"]]
    assert abs(b["share"].sum() - 1.0) < 1e-9
    it = r.iterations()
    assert list(it["time_ns"]) == r["iteration_times_ns"]


# ------------------------------------------------------------------ errors


def test_a_bad_set_key_is_the_cli_message(cli_error):
    expected = cli_error("simulate", RESNET, "--set", "cluster.nodez=2")
    with pytest.raises(ssgd.InputError) as e:
        ssgd.simulate(RESNET, cluster__nodez=2)
    assert str(e.value) == expected
    assert "--set" in expected and "cluster.nodez" in expected
    assert isinstance(e.value, ValueError) and isinstance(e.value, ssgd.Error)


def test_a_bad_value_is_the_cli_message(cli_error):
    expected = cli_error("simulate", RESNET, "--scenario", SCENARIO, "--set", "cluster.nodes=0")
    with pytest.raises(ssgd.InputError) as e:
        ssgd.simulate(RESNET, SCENARIO, set={"cluster.nodes": 0})
    assert str(e.value) == expected


def test_a_missing_file_is_the_cli_message(cli_error):
    expected = cli_error("simulate", "tests/data/no_such_profile.csv")
    with pytest.raises(ssgd.InputError) as e:
        ssgd.simulate("tests/data/no_such_profile.csv")
    assert str(e.value) == expected
    assert "tests/data/no_such_profile.csv" in expected


def test_a_missing_scenario_is_the_cli_message(cli_error):
    expected = cli_error("simulate", RESNET, "--scenario", "scenarios/none.yaml")
    with pytest.raises(ssgd.InputError) as e:
        ssgd.simulate(RESNET, "scenarios/none.yaml")
    assert str(e.value) == expected


def test_a_malformed_csv_is_the_cli_message(cli_error, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("# model: broken\nlayer,name,forward_ns,backward_ns,grad_bytes\n0,conv1,10,x,4\n")
    expected = cli_error("simulate", str(bad))
    with pytest.raises(ssgd.InputError) as e:
        ssgd.load(str(bad))
    assert str(e.value) == expected
    assert str(bad) in expected


def test_a_bad_set_list_item_is_a_type_error():
    with pytest.raises(TypeError):
        ssgd.simulate(RESNET, set=[("cluster.nodes", 2)])


def test_version_and_log_level():
    assert ssgd.__version__ == "0.1.0"
    ssgd.set_log_level("warn")
    with pytest.raises(ValueError):
        ssgd.set_log_level("loud")


def test_helpers_without_pandas_raise_a_clear_import_error(monkeypatch):
    r = ssgd.simulate(RESNET)
    monkeypatch.setitem(__import__("sys").modules, "pandas", None)
    with pytest.raises(ImportError, match="needs pandas"):
        r.collectives()
    assert r["workers"] == 1  # the defaults; the report itself is a plain dict


def test_runs_in_threads_give_the_same_reports():
    from concurrent.futures import ThreadPoolExecutor
    loaded = ssgd.load(VGG)
    nodes = [1, 2, 4, 8]
    alone = [ssgd.simulate(loaded, SCENARIO, cluster__nodes=n) for n in nodes]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(lambda n: ssgd.simulate(loaded, SCENARIO, cluster__nodes=n), nodes))
    assert together == alone


def test_the_cpp_side_is_quiet_unless_asked(tmp_path):
    import subprocess, sys
    script = ("import ssgd, sys\n"
              "if len(sys.argv) > 1: ssgd.set_log_level(sys.argv[1])\n"
              f"ssgd.simulate({RESNET!r}, {SCENARIO!r})\n"
              f"ssgd.scale({RESNET!r}, [1, 4], {SCENARIO!r})\n")
    run = lambda *a: subprocess.run([sys.executable, "-c", script, *a], capture_output=True,
                                    text=True, env={**__import__("os").environ,
                                                    "PYTHONPATH": ":".join(sys.path)})
    quiet = run()
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == ""
    chatty = run("debug")
    assert chatty.returncode == 0, chatty.stderr
    assert chatty.stderr != ""
