"""ssgd from Python: replay synchronous-SGD training under what-if scenarios.

The functions run the same C++ code as the ``ssgd`` command line and return
the same reports (docs/report.md), as dicts::

    import ssgd
    report = ssgd.simulate("traces/datasets/resnet50_v100.csv",
                           scenario="scenarios/v100_4x4_10gbe.yaml", cluster__nodes=8)
    report["throughput_samples_per_s"]

Scenario keys are given as ``--set`` takes them: as keywords with ``__`` for
each dot (``cluster__nodes=8``), or as ``set={"cluster.nodes": 8}`` or
``set=["cluster.nodes=8"]``. docs/python.md describes every function.
"""

import json as _json

from . import _ssgd
from ._ssgd import Error, Input, InputError, set_log_level

__version__ = _ssgd.__version__

__all__ = [
    "Error",
    "Input",
    "InputError",
    "OptimizeReport",
    "Report",
    "ScaleReport",
    "TraceEvents",
    "load",
    "optimize",
    "presets",
    "read_trace",
    "scale",
    "set_log_level",
    "simulate",
    "__version__",
]


def _pandas():
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError(
            "this helper returns a pandas DataFrame and needs pandas "
            "(Debian: apt install python3-pandas; else pip install pandas); "
            "the report itself is a plain dict"
        ) from e
    return pandas


# ------------------------------------------------------------------ scenario


def _set_text(value):
    """A Python value as the text after '=' in --set."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(_set_text(v) for v in value)
    return str(value)


def _sets(set, overrides):
    """--set items from a dict, a list of 'key=value' or one such string,
    then the keyword overrides (``a__b=1`` is ``a.b=1``), in that order."""
    out = []
    if set is None:
        pass
    elif isinstance(set, str):
        out.append(set)
    elif isinstance(set, dict):
        out.extend(f"{k}={_set_text(v)}" for k, v in set.items())
    else:
        for item in set:
            if not isinstance(item, str):
                raise TypeError(f"set: expected 'key.path=value' strings, got {item!r}")
            out.append(item)
    out.extend(f"{k.replace('__', '.')}={_set_text(v)}" for k, v in overrides.items())
    return out


def _path(p):
    return None if p is None else str(p)


def load(input, allow_truncated=False):
    """Reads INPUT once (an ssgd trace, a layer-profile CSV, a B-Caffe log or
    a trace of an execution graph) for many simulate/scale/optimize calls."""
    if isinstance(input, Input):
        return input
    return Input(str(input), allow_truncated)


# ------------------------------------------------------------------ reports


class Report(dict):
    """The report of ``ssgd simulate --report`` (docs/report.md): a dict, with
    helpers that return its tables as pandas DataFrames (they need pandas)."""

    def collectives(self):
        """The collectives of the last iteration
        (``communication.collectives_last_iteration``), one row each: group,
        bytes, algorithm, time_ns, algbw_bytes_per_s, busbw_bytes_per_s,
        replayed."""
        rows = (self.get("communication") or {}).get("collectives_last_iteration") or []
        return _pandas().DataFrame(rows)

    def breakdown(self):
        """The time breakdown of one iteration (``breakdown``): one row per
        part (compute, io, exposed_comm, idle) with its time in ns and its
        share of their sum."""
        b = self.get("breakdown") or {}
        order = ["compute", "io", "exposed_comm", "idle"]
        order += sorted(k[:-3] for k in b if k.endswith("_ns") and k[:-3] not in order)
        parts = [(k, b[k + "_ns"]) for k in order if k + "_ns" in b]
        total = sum(v for _, v in parts)
        return _pandas().DataFrame(
            {"part": [k for k, _ in parts], "time_ns": [v for _, v in parts],
             "share": [v / total if total else 0.0 for _, v in parts]})

    def iterations(self):
        """Each simulated iteration's time (``iteration_times_ns``), one row
        per iteration."""
        times = self.get("iteration_times_ns") or []
        return _pandas().DataFrame({"iteration": range(len(times)), "time_ns": times})


class ScaleReport(dict):
    """The report of ``ssgd scale --report``: a dict; ``rows()`` is its table."""

    def rows(self):
        """One row per GPU count (``rows``) as a DataFrame."""
        return _pandas().DataFrame(self.get("rows") or [])


class OptimizeReport(dict):
    """The report of ``ssgd optimize --report``: a dict; ``curve()`` is the
    settings searched."""

    def curve(self):
        """One row per setting tried (``curve``) as a DataFrame."""
        return _pandas().DataFrame(self.get("curve") or [])


# ------------------------------------------------------------------ runs


def simulate(input, scenario=None, *, set=None, allow_large=False, fold_ranks=True,
             allow_truncated=False, **overrides):
    """Replays INPUT (a path or a loaded ``ssgd.Input``) under a scenario:
    the file ``scenario`` (YAML, may be None), then ``set``, then the keyword
    overrides. Returns the report ``ssgd simulate --report`` writes, as a
    ``Report`` (a dict). Raises ssgd.InputError on bad input."""
    loaded = load(input, allow_truncated)
    text = _ssgd._simulate(loaded, _path(scenario), _sets(set, overrides), allow_large,
                           fold_ranks)
    return Report(_json.loads(text))


def scale(input, gpus, scenario=None, *, mode=None, global_batch=None, set=None,
          allow_large=False, allow_truncated=False, **overrides):
    """Replays the scenario at each GPU count of ``gpus`` (a list, or text as
    --gpus takes it) against one GPU, weak or strong (``mode``); returns the
    report ``ssgd scale --report`` writes, as a ``ScaleReport``."""
    if not isinstance(gpus, str):
        gpus = ",".join(str(int(g)) for g in gpus)
    loaded = load(input, allow_truncated)
    text = _ssgd._scale(loaded, _path(scenario), _sets(set, overrides), gpus, mode or "",
                        "" if global_batch is None else str(global_batch), allow_large)
    return ScaleReport(_json.loads(text))


def optimize(input, key, values=None, scenario=None, *, from_=None, to=None, points=20,
             linear=False, also=None, set=None, allow_large=False, allow_truncated=False,
             **overrides):
    """Searches the scenario key ``key`` over ``values`` (a list, or text as
    --values takes it), or ``points`` values from ``from_`` to ``to``
    (geometric unless ``linear``), with every combination of ``also`` (a dict
    of more keys and their lists of values, as --also KEY=V1,V2 takes them);
    returns the report ``ssgd optimize --report`` writes, as an
    ``OptimizeReport``: the best is the fastest that fits platform.gpu.memory."""
    if values is None:
        values = ""
    elif not isinstance(values, str):
        values = ",".join(_set_text(v) for v in values)
    also_flags = []
    for k, vs in (also or {}).items():
        if isinstance(vs, str):
            also_flags.append(f"{k}={vs}")
        else:
            also_flags.append(f"{k}=" + ",".join(_set_text(v) for v in vs))
    loaded = load(input, allow_truncated)
    text = _ssgd._optimize(loaded, _path(scenario), _sets(set, overrides), key, values,
                           "" if from_ is None else _set_text(from_),
                           "" if to is None else _set_text(to), int(points), bool(linear),
                           allow_large, also_flags)
    return OptimizeReport(_json.loads(text))


def presets():
    """What ``ssgd presets`` lists, as a dict: ``links`` and ``platforms``
    (by name), ``collective_algorithms``, ``policies`` and ``scenario_keys``."""
    p = _json.loads(_ssgd._presets())
    p["collective_algorithms"] = [a.strip() for a in p["collective_algorithms"].split(",")]
    return p


# ------------------------------------------------------------------ traces


class TraceEvents(dict):
    """The events of an ssgd trace as numpy columns of equal length:
    ``rank``, ``kind``, ``name``, ``device``, ``stream``, ``start_ns``,
    ``end_ns``, ``duration_ns``, ``bytes`` (see docs/python.md). ``kind`` and
    ``name`` are object arrays that share one string per distinct value."""

    def __init__(self, columns, kinds, names, kind_code, name_code, truncated, path):
        super().__init__(columns)
        self.kinds = kinds
        self.names = names
        self.kind_code = kind_code
        self.name_code = name_code
        self.truncated = truncated
        self.path = path

    @property
    def num_events(self):
        """The number of events (the length of every column)."""
        return len(self["rank"])

    def to_pandas(self):
        """A DataFrame of the events, one row each; kind and name as
        categoricals."""
        pd = _pandas()
        df = pd.DataFrame({k: v for k, v in self.items() if k not in ("kind", "name")})
        df.insert(1, "kind", pd.Categorical.from_codes(self.kind_code, self.kinds))
        df.insert(2, "name", pd.Categorical.from_codes(self.name_code, self.names))
        return df


_TRACE_COLUMNS = ("rank", "device", "stream", "start_ns", "end_ns", "duration_ns", "bytes")


def read_trace(path, allow_truncated=False):
    """The events of the ssgd trace (.ssgdt) at PATH, as a ``TraceEvents``
    (a dict of numpy columns). A trace cut short raises ssgd.InputError
    unless ``allow_truncated``."""
    import numpy as np

    raw = _ssgd._read_trace(str(path), allow_truncated)
    kinds = np.array(raw["kinds"], dtype=object)
    names = np.empty(len(raw["names"]), dtype=object)
    names[:] = raw["names"]
    columns = {"rank": raw["rank"]}
    columns["kind"] = kinds[raw["kind_code"]]
    columns["name"] = names[raw["name_code"]]
    for c in _TRACE_COLUMNS[1:]:
        columns[c] = raw[c]
    return TraceEvents(columns, list(raw["kinds"]), list(raw["names"]), raw["kind_code"],
                       raw["name_code"], raw["truncated"], str(path))
