#!/usr/bin/python3
"""How long each collective of a merged two-or-more-rank trace took once its
last rank had started it, as a histogram, and how many ran beside another
collective of the same rank.

  tools/testbed/collective_waits.py TRACE.ssgdt [--ssgd build/bin/ssgd] [--bin-ms 0.5]

Reads `ssgd info --dump` (collective records: rank, communicator_id,
sequence_number, op, start_ns, end_ns, stream = the host thread that ran
it); the ranks' records of one collective are matched by communicator and
sequence number, as the simulator matches them, and must agree on the op.
Timing from the last rank's start leaves out the wait for a late peer: what
remains is the collective's own time as it ran in the training
(docs/validation.md, 8c).
"""
import argparse
import collections
import re
import statistics
import subprocess
import sys

FIELDS = {k: re.compile(rf"\b{k}: (\d+)")
          for k in ("rank", "communicator_id", "sequence_number", "start_ns", "end_ns", "stream")}
OP = re.compile(r"\bop: (\w+)")


def collectives(dump):
    """{(communicator_id, sequence_number): {rank: (start_ns, end_ns, thread)}} from
    `ssgd info --dump` text. Raises ValueError when two ranks' records of one
    collective name different ops, or one rank has two records of it."""
    by_seq = collections.defaultdict(dict)
    ops = {}
    for line in dump.splitlines():
        if "collective {" not in line:
            continue
        head = line[: line.index("collective {")]
        body = line[line.index("collective {"):]
        m = FIELDS["rank"].search(head)
        rank = int(m.group(1)) if m else 0
        get = lambda k: int(FIELDS[k].search(body).group(1)) if FIELDS[k].search(body) else 0
        key = (get("communicator_id"), get("sequence_number"))
        m = OP.search(body)
        op = m.group(1) if m else "UNKNOWN"
        if ops.setdefault(key, op) != op:
            raise ValueError(f"collective {key}: rank {rank} records {op}, another rank {ops[key]}")
        if rank in by_seq[key]:
            raise ValueError(f"collective {key}: rank {rank} records it twice")
        by_seq[key][rank] = (get("start_ns"), get("end_ns"), get("stream"))
    return by_seq


def report(by_seq, bin_ms):
    """The summary's lines, or None when no collective ran on two or more ranks."""
    ranks = max((len(r) for r in by_seq.values()), default=0)
    whole = {q: r for q, r in by_seq.items() if len(r) == ranks}
    if ranks < 2 or not whole:
        return None
    per_rank = collections.defaultdict(list)
    for r in whole.values():
        for rank, (s, e, _) in r.items():
            per_rank[rank].append((s, e))
    # A rank's collective ran beside another when any other of that rank's
    # overlaps it: sorted by start, one overlaps an earlier one when it starts
    # before the latest end so far, and a later one when the next starts
    # before its own end.
    beside = 0
    for iv in per_rank.values():
        iv.sort()
        latest_end = None
        for i, (s, e) in enumerate(iv):
            earlier = latest_end is not None and latest_end > s
            later = i + 1 < len(iv) and iv[i + 1][0] < e
            beside += earlier or later
            latest_end = e if latest_end is None else max(latest_end, e)
    own = sorted((max(v[1] for v in r.values()) - max(v[0] for v in r.values())) / 1e6 for r in whole.values())
    threads = collections.defaultdict(set)
    for r in whole.values():
        for rank, v in r.items():
            threads[rank].add(v[2])
    lines = [f"{len(whole)} collectives on {ranks} ranks; host threads per rank: "
             + ", ".join(f"rank {k}: {len(v)}" for k, v in sorted(threads.items())),
             f"  beside another of the same rank: {beside} of {len(whole) * ranks} rank-collectives",
             f"  from the last rank's start: median {statistics.median(own):.3f} ms, mean "
             f"{statistics.mean(own):.3f} ms, 90th percentile {own[int(0.9 * (len(own) - 1))]:.3f} ms"]
    hist = collections.Counter(int(d / bin_ms) for d in own)
    top = max(hist.values())
    for b in range(0, max(hist) + 1):
        n = hist.get(b, 0)
        lines.append(f"  {b * bin_ms:6.1f} ms {n:6d} {'#' * round(50 * n / top)}")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--ssgd", default="build/bin/ssgd")
    ap.add_argument("--bin-ms", type=float, default=0.5)
    a = ap.parse_args()
    if not a.bin_ms > 0:
        sys.exit("--bin-ms: must be positive")
    try:
        dump = subprocess.run([a.ssgd, "info", a.trace, "--dump"], check=True, capture_output=True,
                              text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"{a.trace}: ssgd info --dump failed: {getattr(e, 'stderr', '') or e}")
    try:
        by_seq = collectives(dump)
    except ValueError as e:
        sys.exit(f"{a.trace}: {e}")
    lines = report(by_seq, a.bin_ms)
    if lines is None:
        sys.exit(f"{a.trace}: no collective recorded on two or more ranks")
    print(f"{a.trace}: " + "\n".join(lines))


if __name__ == "__main__":
    main()
