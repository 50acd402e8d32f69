"""Starting the ranks of one task on the emulated cluster: rank k runs in
host namespace k, pinned to one core (taskset), optionally capped by a cgroup
CPU quota, with its own log file; the launcher waits with a timeout and kills
every rank of the task on failure, timeout or interruption."""

import os
import signal
import subprocess
import sys
import time

import cluster

PYTHON = "/usr/bin/python3"  # Debian's interpreter, with python3-torch


def core_of(rank, world, cores):
    """Ranks spread evenly over the cores: with more ranks than cores,
    neighbours share one (ranks 0 and 1 on core 0, ...)."""
    if world <= cores:
        return rank
    return rank * cores // world


def check_cpu(world, cpu_per_rank, cores):
    if world > cores and cpu_per_rank * world > cores + 1e-9:
        raise cluster.TestbedError(
            f"{world} ranks at {cpu_per_rank} CPU each need {world * cpu_per_rank:g} cores; this "
            f"machine has {cores}: lower cpu_per_rank to {cores / world:g} or less (they would "
            "otherwise time-share cores silently)")


class TaskFailed(Exception):
    pass


def run_ranks(script, args_of_rank, world, cpu_per_rank, out_dir, log_prefix, timeout_s, cores,
              master_port, loopback=False, cores_per_rank=1):
    """Runs `script` once per rank (args_of_rank(r) -> list of arguments),
    all at once, and waits. Raises TaskFailed with the tail of the failing
    rank's log. `loopback`: every rank on this machine's loopback interface,
    pinned by sched_setaffinity to `cores_per_rank` cores of its own (so that
    gloo's threads need not share the model's core), no namespace and no
    cgroup."""
    check_cpu(world, cpu_per_rank, cores)
    os.makedirs(out_dir, exist_ok=True)
    procs = []
    logs = []
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               GLOO_SOCKET_IFNAME="lo" if loopback else "eth0",
               PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
    if loopback and cpu_per_rank != 1:
        raise cluster.TestbedError("--loopback: cpu_per_rank below 1 needs cgroups; loopback runs 1 only")
    if cores_per_rank != 1 and (not loopback or world * cores_per_rank > cores):
        raise cluster.TestbedError(f"--cores-per-rank {cores_per_rank}: needs --loopback and {world} x "
                                   f"{cores_per_rank} cores; this machine has {cores}")
    try:
        for r in range(world):
            core = core_of(r, world, cores)
            rank_args = ["--rank", str(r), "--world", str(world), "--master",
                         "127.0.0.1" if loopback else cluster.host_ip(0), "--port", str(master_port),
                         "--out", out_dir] + args_of_rank(r)
            if loopback:
                cmd = [PYTHON, script] + rank_args
                procs_file = None
            else:
                cmd = ["ip", "netns", "exec", cluster.host_ns(r), "taskset", "-c", str(core), PYTHON,
                       script] + rank_args
                procs_file = cluster.rank_cgroup(r, cpu_per_rank)
            if procs_file is not None:
                # Join the rank's cgroup before exec, so no thread escapes the quota.
                cmd = ["sh", "-c", f'echo $$ > "{procs_file}" && exec "$@"', "sh"] + cmd
            log_path = f"{log_prefix}-rank{r}.log"
            log = open(log_path, "w")
            logs.append((log, log_path))
            own = set(range(r * cores_per_rank, (r + 1) * cores_per_rank)) if cores_per_rank > 1 else {core}
            pin = (lambda c=own: os.sched_setaffinity(0, c)) if loopback else None
            procs.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                          start_new_session=True, preexec_fn=pin))
        deadline = time.monotonic() + timeout_s
        while True:
            codes = [p.poll() for p in procs]
            failed = [r for r, c in enumerate(codes) if c not in (None, 0)]
            if failed:
                r = failed[0]
                raise TaskFailed(f"rank {r} exited with status {codes[r]}: {_tail(logs[r][1])}")
            if all(c == 0 for c in codes):
                return
            if time.monotonic() > deadline:
                raise TaskFailed(f"timed out after {timeout_s:.0f} s (ranks still running: "
                                 f"{[r for r, c in enumerate(codes) if c is None]}); "
                                 f"rank 0's log: {_tail(logs[0][1])}")
            time.sleep(0.05)
    finally:
        for p in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
        for log, _ in logs:
            log.close()


def _tail(path, lines=6):
    try:
        with open(path, errors="replace") as f:
            text = f.read().strip().splitlines()
    except OSError:
        return "(no log)"
    return " | ".join(text[-lines:]) or "(empty log)"


def progress(message):
    print(message, file=sys.stderr, flush=True)
