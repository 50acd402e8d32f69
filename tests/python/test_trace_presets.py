"""ssgd.read_trace, ssgd.presets and the module's own attributes."""

import re
import subprocess

import numpy as np
import pytest

import ssgd

SMALL = "tests/data/traces/small.txtpb"


@pytest.fixture
def small_trace(cli, tmp_path):
    """tests/data/traces/small.txtpb packed by `ssgd pack` (4 events a chunk)."""
    out = tmp_path / "small.ssgdt"
    done = subprocess.run([cli, "pack", SMALL, "-o", str(out), "--events-per-chunk", "4"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return out


def expected_events():
    """Each `events { ... }` of the text trace: (rank, kind)."""
    out = []
    for line in open(SMALL):
        m = re.match(r"events \{ (?:rank: (\d+) )?(\w+) \{", line)
        if m:
            out.append((int(m.group(1) or 0), m.group(2)))
    return out


def test_read_trace_gives_every_event_as_columns(small_trace):
    expected = expected_events()
    assert len(expected) > 10
    ev = ssgd.read_trace(small_trace)
    assert ev.num_events == len(expected)
    for column in ("rank", "kind", "name", "device", "stream", "start_ns", "end_ns",
                   "duration_ns", "bytes"):
        assert isinstance(ev[column], np.ndarray) and len(ev[column]) == len(expected), column
    assert ev["start_ns"].dtype == np.int64 and ev["rank"].dtype == np.int32
    assert list(zip(ev["rank"].tolist(), ev["kind"].tolist())) == expected
    assert (ev["duration_ns"] == ev["end_ns"] - ev["start_ns"]).all()
    kernels = ev["kind"] == "kernel"
    assert kernels.sum() == 4
    assert set(ev["name"][kernels]) == {"fc1_forward", "fc1_backward"}
    first_copy = np.flatnonzero(ev["kind"] == "memcpy")[0]
    assert ev["name"][first_copy] == "htod" and ev["bytes"][first_copy] == 1048576
    assert ev["start_ns"][first_copy] == 2000 and ev["end_ns"][first_copy] == 12000
    assert ev.truncated is False


def test_read_trace_to_pandas(small_trace):
    pd = pytest.importorskip("pandas")
    ev = ssgd.read_trace(small_trace)
    df = ev.to_pandas()
    assert isinstance(df, pd.DataFrame) and len(df) == ev.num_events
    assert list(df.columns[:3]) == ["rank", "kind", "name"]
    assert (df.groupby("kind", observed=True).size()["kernel"]) == 4
    assert list(df["name"].astype(str)) == list(ev["name"])


def test_read_trace_of_a_text_file_is_the_located_error(cli_error):
    with pytest.raises(ssgd.InputError) as e:
        ssgd.read_trace(SMALL)
    assert SMALL in str(e.value)
    assert str(e.value) == cli_error("info", SMALL)


def test_a_trace_cut_short_is_an_error_unless_allowed(small_trace, tmp_path):
    data = small_trace.read_bytes()
    cut = tmp_path / "cut.ssgdt"
    cut.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(ssgd.InputError, match="allow_truncated=True"):
        ssgd.read_trace(cut)
    ev = ssgd.read_trace(cut, allow_truncated=True)
    assert ev.truncated is True
    assert 0 < ev.num_events < len(expected_events())


def test_presets_lists_what_ssgd_presets_prints(cli):
    p = ssgd.presets()
    printed = subprocess.run([cli, "presets"], capture_output=True, text=True).stdout
    assert {"10gbe", "100gbe", "nvlink2", "pcie3_x16"} <= set(p["links"])
    for name in p["links"]:
        assert re.search(rf"^  {re.escape(name)} ", printed, re.M), name
    ten = p["links"]["10gbe"]
    assert ten["class"] == "ethernet" and ten["bandwidth_bytes_per_s"] > 1e9
    assert ten["latency_ns"] > 0
    assert "dgx1" in p["platforms"] and p["platforms"]["dgx1"]["gpus_per_node"] == 8
    for name in p["platforms"]:
        assert re.search(rf"^  {re.escape(name)} ", printed, re.M), name
    assert "ring" in p["collective_algorithms"]
    assert {"bsp", "wfbp", "mgwfbp", "ddp"} <= set(p["policies"])
    assert p["scenario_keys"]["cluster.nodes"]["type"] == "int"
    assert p["scenario_keys"]["policy.bucket_cap"]["default"] == "25MiB"
