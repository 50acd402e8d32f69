# ssgd from Python: a small what-if, notebook style (cells start with `# %%`).
# Run from the repository root after a build (docs/python.md):
#
#   PYTHONPATH=build/python /usr/bin/python3 docs/examples/python_whatif.py
#
# It asks: how does throughput grow with the GPU count for ResNet-50 and
# VGG-16 on 4-GPU nodes over 10 GbE, and how much does 100 GbE help?

# %% Load the inputs once; every run below reuses them.
import ssgd

networks = {
    "ResNet-50": ssgd.load("traces/datasets/resnet50_v100.csv"),
    "VGG-16": ssgd.load("traces/datasets/vgg16_v100.csv"),
}
scenario = "scenarios/v100_4x4_10gbe.yaml"
gpus = [1, 4, 8, 16, 32]

# %% GPUs vs throughput, two networks, two inter-node links (ssgd scale).
rows = []
for name, profile in networks.items():
    for link in ("10gbe", "100gbe"):
        report = ssgd.scale(profile, gpus, scenario, network__inter_node=link)
        for r in report["rows"]:
            rows.append((name, link, r["gpus"], r["throughput_samples_per_s"],
                         r["scaling_efficiency"]))

# %% The table.
print(f"{'network':<10} {'link':<7} {'GPUs':>5} {'samples/s':>11} {'efficiency':>11}")
for name, link, g, throughput, efficiency in rows:
    eff = "-" if efficiency is None else f"{efficiency:.1%}"
    print(f"{name:<10} {link:<7} {g:>5} {throughput:>11.1f} {eff:>11}")

# %% One configuration in detail (ssgd simulate): where does the time go?
report = ssgd.simulate(networks["VGG-16"], scenario, cluster__nodes=8)
print(f"\nVGG-16 on 32 GPUs over 10 GbE: {report['iteration_time_ns'] / 1e6:.1f} ms per iteration")
try:
    print(report.breakdown().to_string(index=False))
except ImportError as e:  # the report is a plain dict; tables need pandas
    print(report["breakdown"], f"({e})")
