"""Robust statistics of the testbed's measurements (no numpy needed)."""


def percentile(values, q):
    """The q-th percentile (0-100) by linear interpolation between order
    statistics, as numpy's default."""
    v = sorted(values)
    if not v:
        raise ValueError("percentile of nothing")
    pos = (len(v) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def median(values):
    return percentile(values, 50)


def iteration_stats(rounds):
    """rounds: [{"ranks": [{"iteration_ns": [...]}, ...]}, ...] -> the
    measured iteration time: each iteration's time is the mean over ranks
    (they run in lock-step); then the median, minimum, 10th and 90th
    percentiles of all rounds' iterations together, and each round's median
    (`ssgd dataset verify` shows their spread next to every error)."""
    per_round = []
    pooled = []
    for r in rounds:
        lists = [rank["iteration_ns"] for rank in r["ranks"]]
        n = min(len(x) for x in lists)
        its = [sum(x[i] for x in lists) / len(lists) for i in range(n)]
        per_round.append(round(median(its)))
        pooled += its
    med = median(pooled)
    return {"median": round(med), "min": round(min(pooled)), "p10": round(percentile(pooled, 10)),
            "p90": round(percentile(pooled, 90)), "samples": len(pooled), "rounds": len(rounds),
            "round_medians": per_round}


def memory_stats(rounds):
    """rounds: as iteration_stats' -> the measured memory of a rank, in
    bytes: each rank's peak_rss_kb - rss_before_model_kb of each round (the
    most its training held at once above what it held before the model was
    built, train.py), less the growth of its file-backed resident set from
    before the model to the end (rss_file_end_kb - rss_file_before_model_kb:
    library code paged in, not training state; where a rank recorded it),
    pooled; their median, minimum, 10th and 90th percentiles.
    None when a rank did not record both, or its peak was not reset before
    training (then it would be start-up's)."""
    values = []
    for r in rounds:
        for rank in r["ranks"]:
            if "rss_before_model_kb" not in rank or "peak_rss_kb" not in rank \
                    or not rank.get("peak_rss_reset"):
                return None
            grown = 0
            if "rss_file_before_model_kb" in rank and "rss_file_end_kb" in rank:
                grown = max(0, rank["rss_file_end_kb"] - rank["rss_file_before_model_kb"])
            values.append((rank["peak_rss_kb"] - rank["rss_before_model_kb"] - grown) * 1024)
    if not values or min(values) <= 0:
        return None
    return {"median": round(median(values)), "min": min(values),
            "p10": round(percentile(values, 10)), "p90": round(percentile(values, 90)),
            "samples": len(values)}


def sweep_ops(rounds):
    """The collectives every round's every rank swept (sweep.py): allreduce,
    then the others in name order."""
    ops = None
    for r in rounds:
        for rank in r["ranks"]:
            have = ({"allreduce"} if "ns" in rank else set()) | set(rank.get("ops", {}))
            ops = have if ops is None else ops & have
    return sorted(ops or (), key=lambda o: (o != "allreduce", o))


def _sweep_times(rank, op):
    return rank["ns"] if op == "allreduce" else rank["ops"][op]


def sweep_curve(rounds, op="allreduce"):
    """rounds: [{"ranks": [{"sizes": [...], "ns": [[...], ...], "ops": {op:
    [[...], ...]}}]}] -> [(size, median ns, min ns, round spread)] of `op`:
    one collective's time is its slowest rank's; a round's value for a size
    is the median over its repeats; the curve is the median over rounds."""
    sizes = rounds[0]["ranks"][0]["sizes"]
    out = []
    for i, size in enumerate(sizes):
        values = []
        for r in rounds:
            reps = zip(*[_sweep_times(rank, op)[i] for rank in r["ranks"]])
            values.append(median([max(rep) for rep in reps]))
        med = median(values)
        out.append((size, round(med), round(min(values)),
                    round((max(values) - min(values)) / med, 4) if med else 0.0))
    return out
