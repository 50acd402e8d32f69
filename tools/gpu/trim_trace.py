"""Keeps the first N marked iterations of a one-rank trace, for a dataset
small enough to commit:

    ssgd info --dump IN.ssgdt | python3 tools/gpu/trim_trace.py N > cut.txtpb
    ssgd pack cut.txtpb -o OUT.ssgdt

Keeps the header, every event without a time (device, link), the markers
that start between 1 ms before the first iteration/<K> range and the end of
the N-th, and the other events up to the end of the (N+1)-th: a GPU runs
behind its host, so the last kept iteration's kernels start after its range
has ended (`ssgd simulate` places work by its launch). `ssgd pack` writes a
new footer for what is kept.
"""
import re
import sys


def main(argv):
    if len(argv) != 1 or not argv[0].isdigit() or int(argv[0]) < 1:
        sys.exit("usage: trim_trace.py N  (N >= 1 iterations to keep)")
    keep = int(argv[0])
    lines = sys.stdin.read().splitlines()
    iteration = re.compile(r'marker \{ name: "iteration/\d+".* start_ns: (\d+) end_ns: (\d+)')
    ranges = sorted((int(m.group(1)), int(m.group(2))) for m in map(iteration.search, lines) if m)
    if len(ranges) < keep + 1:
        sys.exit(f"trim_trace.py: the trace has {len(ranges)} iteration ranges, not {keep} and one more")
    first, last_marker, last = ranges[0][0] - 1_000_000, ranges[keep - 1][1], ranges[keep][1]
    start = re.compile(r" (?:start_ns|timestamp_ns): (\d+)")
    out = []
    for line in lines:
        if line.startswith("#") and out:  # the dump's footer, as comments
            continue
        if line.startswith("events "):
            m = start.search(line)
            end = last_marker if line.startswith("events { marker ") else last
            if m and not first <= int(m.group(1)) <= end:
                continue
        out.append(line)
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
