#!/usr/bin/python3
"""ssgd's emulated CPU cluster: real PyTorch DDP training over gloo between
network namespaces on one Linux host, measured, profiled, and written as an
ssgd dataset.

    testbed.py check                  can the testbed run here? (root, netns, tc, cgroups, torch)
    testbed.py run GRID -o DIR        run a grid (grid.py) and assemble DIR as a dataset
    testbed.py assemble DIR           redo the dataset files from DIR's raw results
    testbed.py teardown               remove the namespaces and cgroups of a killed run

Run as root with Debian's /usr/bin/python3 (python3-torch). docs/testbed.md
says what it measures, how, and on what machine the bundled dataset was made.
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import assemble  # noqa: E402
import cluster  # noqa: E402
import grid as gridmod  # noqa: E402
import launcher  # noqa: E402


def machine_info():
    def read(path, default=""):
        try:
            with open(path) as f:
                return f.read()
        except OSError:
            return default

    cpu = next((line.split(":", 1)[1].strip() for line in read("/proc/cpuinfo").splitlines()
                if line.startswith("model name")), "unknown")
    os_name = next((line.split("=", 1)[1].strip().strip('"') for line in read("/etc/os-release").splitlines()
                    if line.startswith("PRETTY_NAME=")), "unknown")
    torch_version = subprocess.run([launcher.PYTHON, "-c", "import torch; print(torch.__version__)"],
                                   capture_output=True, text=True).stdout.strip()
    return {"cpu_model": cpu, "cores": os.cpu_count(), "kernel": os.uname().release, "os": os_name,
            "python": subprocess.run([launcher.PYTHON, "--version"], capture_output=True,
                                     text=True).stdout.strip(),
            "torch": torch_version, "backend": "gloo",
            "memory_bytes": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"),
            "shaping": "tc tbf on both ends of each host's veth (burst max(32 KiB, 4 ms at the rate), "
                       "latency 50 ms); no added delay (sch_netem unavailable)",
            "pinning": "taskset: one core per rank; cpu_per_rank < 1: cgroup v1 cfs quota over 10 ms"}


def load_average():
    return [round(x, 2) for x in os.getloadavg()]


def probe_link(rate_bits, port, seconds=3.0):
    """TCP throughput host1 -> host0 on the shaped link, bits per second; it
    is also the check that the hosts reach each other."""
    server = subprocess.Popen(["ip", "netns", "exec", cluster.host_ns(0), launcher.PYTHON,
                               os.path.join(HERE, "linkprobe.py"), "serve", str(port)],
                              stdout=subprocess.PIPE, text=True)
    try:
        sent = subprocess.run(["ip", "netns", "exec", cluster.host_ns(1), launcher.PYTHON,
                               os.path.join(HERE, "linkprobe.py"), "send", cluster.host_ip(0), str(port),
                               str(seconds)], capture_output=True, text=True, timeout=seconds + 30)
        if sent.returncode != 0:
            raise cluster.TestbedError(f"host 1 cannot reach host 0 ({cluster.host_ip(0)}) over the "
                                       f"emulated network: {sent.stderr.strip()}")
        out, _ = server.communicate(timeout=30)
        r = json.loads(out)
        return {"rate": cluster.rate_label(rate_bits), "rate_bits_per_s": rate_bits,
                "measured_bits_per_s": round(8 * r["bytes"] / r["seconds"]) if r["seconds"] > 0 else None}
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


class Run:
    def __init__(self, grid, out, cores, only=None, rounds=None, loopback=False, cores_per_rank=1):
        self.loopback = loopback
        self.cores_per_rank = cores_per_rank
        self.grid = grid
        self.out = out
        self.cores = cores
        self.rounds = rounds or grid.rounds
        self.configs = [c for c in grid.configs if only is None or only in c.id]
        if not self.configs:
            raise gridmod.GridError(f"no configuration matches '{only}'")
        keys = {c.network_key for c in self.configs}
        self.networks = [n for n in grid.network_keys() if n[0] in keys]
        self.port = 29500
        self.durations = {}  # task kind -> seconds of each completed task

    def next_port(self):
        self.port = 29500 + (self.port - 29500 + 1) % 2000
        return self.port

    def tasks(self, round_index):
        tasks = [("train", c) for c in self.configs] + [("sweep", n) for n in self.networks]
        random.Random(self.grid.seed * 1000 + round_index).shuffle(tasks)
        return tasks

    def eta(self, remaining):
        def mean(kind, default):
            d = self.durations.get(kind)
            return sum(d) / len(d) if d else default
        return sum(mean(kind, 60.0) for kind in remaining)

    def execute(self):
        os.makedirs(self.out, exist_ok=True)
        hosts = max(c.world for c in self.configs)
        make = cluster.Loopback if self.loopback else cluster.Cluster
        with make(max(hosts, 2)) as net:
            info = machine_info()
            info["load_average_before"] = load_average()
            if self.loopback:
                info["shaping"] = "none: --loopback, every rank on this machine's loopback interface"
                info["pinning"] = f"sched_setaffinity: {self.cores_per_rank} core(s) per rank, its own"
            links = []
            for rate in sorted({c.rate_bits for c in self.configs}, key=lambda r: r or 10**15):
                net.shape(rate)
                if self.loopback:
                    continue
                links.append(probe_link(rate, self.next_port()))
                launcher.progress(f"link {links[-1]['rate']}: TCP carried "
                                  f"{links[-1]['measured_bits_per_s'] / 1e6:.1f} Mbit/s")
            info["links"] = links
            all_tasks = [(r, t) for r in range(self.rounds) for t in self.tasks(r)]
            started = time.monotonic()
            for i, (r, (kind, what)) in enumerate(all_tasks):
                name = what.id if kind == "train" else f"sweep {what[0]}"
                t0 = time.monotonic()
                if kind == "train":
                    net.shape(what.rate_bits)
                    self.train(what, r)
                else:
                    net.shape(what[1])
                    self.sweep(what, r)
                took = time.monotonic() - t0
                self.durations.setdefault(kind, []).append(took)
                left = self.eta([k for _, (k, _) in all_tasks[i + 1:]])
                launcher.progress(
                    f"[round {r + 1}/{self.rounds}] {i + 1}/{len(all_tasks)} {name}: {took:.1f} s "
                    f"(elapsed {(time.monotonic() - started) / 60:.1f} min, about {left / 60:.1f} min left)")
            info["load_average_after"] = load_average()
            info["date"] = time.strftime("%Y-%m-%d", time.gmtime())
            info["rounds"] = self.rounds
            with open(os.path.join(self.out, "machine.json"), "w") as f:
                json.dump(info, f, indent=2)
                f.write("\n")

    def run_task(self, script, args, world, cpu, raw, timeout, label, result):
        """Runs `script` on every rank (once more if it fails) and returns each
        rank's result JSON (`result` with the rank for {}); `raw` is made anew."""
        if os.path.isdir(raw):
            shutil.rmtree(raw)
        for attempt in (1, 2):
            try:
                launcher.run_ranks(os.path.join(HERE, script), lambda r: list(args), world, cpu, raw,
                                   os.path.join(raw, "log"), timeout, self.cores, self.next_port(),
                                   loopback=self.loopback, cores_per_rank=self.cores_per_rank)
                break
            except launcher.TaskFailed as e:
                if attempt == 2:
                    raise cluster.TestbedError(f"{label}: {e}") from None
                launcher.progress(f"{label}: {e}; trying once more")
        ranks = []
        for r in range(world):
            with open(os.path.join(raw, result.format(r))) as f:
                ranks.append(json.load(f))
        return ranks

    def train(self, c, round_index):
        d = os.path.join(self.out, "configs", c.id)
        raw = os.path.join(d, f".round{round_index}")
        capture = self.grid.capture if round_index == 0 else 0
        g = self.grid
        args = ["--model", c.model, "--batch", str(c.batch), "--warmup",
                str(g.warmup), "--iterations", str(g.iterations), "--capture", str(capture),
                "--profiler-warmup", str(g.profiler_warmup)]
        if c.bucket_mb is not None:
            args += ["--bucket-mb", str(c.bucket_mb)]
        if c.partition_kb:
            args += ["--partition-kb", str(c.partition_kb)]
        if c.accumulation != 1:
            args += ["--accumulation", str(c.accumulation)]
        if g.mmap_threshold_kb:
            args += ["--mmap-threshold-kb", str(g.mmap_threshold_kb)]
        if c.strategy == "ddp":
            args += ["--overlap", c.overlap]
        else:
            args += ["--shard", c.strategy, "--reduce-op", c.reduce_op]
            if c.strategy in ("zero3", "hsdp"):
                args += ["--forward-prefetch", str(c.forward_prefetch), "--backward-prefetch", c.backward_prefetch]
            if c.strategy == "hsdp":
                args += ["--shard-group", str(c.shard_group)]
        ranks = self.run_task("train.py", args, c.world, c.cpu_per_rank, raw, 900,
                              f"{c.id}, round {round_index + 1}", "rank{}.result.json")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"round{round_index + 1}.json"), "w") as f:
            json.dump({"round": round_index + 1, "ranks": ranks}, f)
        if capture:
            for r in range(c.world):
                os.replace(os.path.join(raw, f"rank{r}.json.gz"), os.path.join(d, f"rank{r}.json.gz"))
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(c.knobs(), f, indent=2)
            f.write("\n")
        shutil.rmtree(raw)

    def sweep(self, network, round_index):
        key, rate, world, cpu = network
        d = os.path.join(self.out, "network", key)
        raw = os.path.join(d, f".round{round_index}")
        g = self.grid
        args = ["--sizes", ",".join(str(s) for s in g.sweep_sizes), "--repeats", str(g.sweep_repeats),
                "--large-repeats", str(g.sweep_large_repeats), "--ops", ",".join(g.sweep_ops)]
        ranks = self.run_task("sweep.py", args, world, cpu, raw, 1800,
                              f"sweep {key}, round {round_index + 1}", "sweep-rank{}.json")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"round{round_index + 1}.json"), "w") as f:
            json.dump({"round": round_index + 1, "rate_bits_per_s": rate, "world": world,
                       "cpu_per_rank": cpu, "ranks": ranks}, f)
        shutil.rmtree(raw)


def _handle_signals():
    def stop(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)


def main(argv):
    p = argparse.ArgumentParser(prog="testbed.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="can the testbed run here?")
    run = sub.add_parser("run", help="run a grid and write a dataset folder")
    run.add_argument("grid")
    run.add_argument("-o", "--output", required=True)
    run.add_argument("--only", help="only the configurations whose id contains this")
    run.add_argument("--rounds", type=int, help="override the grid's rounds")
    run.add_argument("--no-assemble", action="store_true", help="leave the raw results only")
    run.add_argument("--ssgd", default=os.path.join(HERE, "..", "..", "build", "bin", "ssgd"))
    run.add_argument("--loopback", action="store_true",
                     help="no network namespaces: every rank on this machine's loopback interface, "
                          "unshaped, one core each (for machines that cannot make namespaces)")
    run.add_argument("--cores-per-rank", type=int, default=1,
                     help="with --loopback: cores of its own per rank (gloo's threads then need not "
                          "share the model's core)")
    run.add_argument("--python", default=launcher.PYTHON,
                     help="the interpreter with torch that runs the ranks (default: Debian's)")
    asm = sub.add_parser("assemble", help="write the dataset files from a run's raw results")
    asm.add_argument("dir")
    asm.add_argument("--grid", help="the grid file (default: DIR/grid.toml)")
    asm.add_argument("--ssgd", default=os.path.join(HERE, "..", "..", "build", "bin", "ssgd"))
    sub.add_parser("teardown", help="remove leftovers of a killed run")
    a = p.parse_args(argv)
    try:
        if a.command == "teardown":
            cluster.teardown()
            return 0
        if a.command == "check":
            cluster.preflight()
            out = subprocess.run([launcher.PYTHON, "-c", "import torch, torch.distributed as d; "
                                  "print(torch.__version__, d.is_gloo_available())"],
                                 capture_output=True, text=True)
            if out.returncode != 0 or not out.stdout.strip().endswith("True"):
                raise cluster.TestbedError(f"{launcher.PYTHON} cannot import torch with gloo "
                                           "(apt-get install python3-torch)")
            print(f"testbed: ok (root, netns, veth, tbf; torch {out.stdout.split()[0]} with gloo; "
                  f"{os.cpu_count()} cores; cpu cgroup quotas "
                  f"{'available' if cluster.cpu_cgroup_available() else 'unavailable'})")
            return 0
        if a.command == "run":
            g = gridmod.Grid(a.grid)
            launcher.PYTHON = a.python
            if not a.loopback:
                cluster.preflight()
            _handle_signals()
            r = Run(g, a.output, os.cpu_count(), a.only, a.rounds, loopback=a.loopback,
                    cores_per_rank=a.cores_per_rank)
            os.makedirs(a.output, exist_ok=True)
            shutil.copyfile(a.grid, os.path.join(a.output, "grid.toml"))
            launcher.progress(f"testbed: {len(r.configs)} configuration(s), {len(r.networks)} sweep(s), "
                              f"{r.rounds} round(s) -> {a.output}")
            r.execute()
            if not a.no_assemble:
                assemble.assemble(a.output, g, a.ssgd)
            return 0
        if a.command == "assemble":
            g = gridmod.Grid(a.grid or os.path.join(a.dir, "grid.toml"))
            assemble.assemble(a.dir, g, a.ssgd)
            return 0
    except (cluster.TestbedError, gridmod.GridError, assemble.AssembleError) as e:
        print(f"testbed: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        print(f"testbed: interrupted ({e}); the cluster was torn down", file=sys.stderr)
        return 130
    finally:
        if a.command == "run" and not a.loopback:
            cluster.teardown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
