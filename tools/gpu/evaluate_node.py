#!/usr/bin/env python3
"""Reads the folders of tools/gpu/node_evidence.sh (one per build, e.g. before/ and after/) and prints the
figures issue 11 asks for, side by side, as Markdown rows:

    python3 tools/gpu/evaluate_node.py docs/evidence/node/before docs/evidence/node/after

- wattwise's CPU, % of one core per GPU (idle and under training; one GPU on this machine): over the whole run
  (its JSON: start-up, NVML's loading and the first learning burst included) and in the steady state, from
  the per-thread snapshots (*.threads, taken every 5 s: the rate between the second and the last);
- per-iteration energy of resnet50 at batch 128: CV over the iterations (goal <= 5%), beside the CV of the
  iterations' durations (energy follows duration at a steady power), with markers where the CPU loop is
  (train) and after torch.cuda.synchronize() (train_sync), over all iterations and after the first 2 s;
- on/off loads: mean power of the `on` phases of 0.5 s and 0.2 s (goal: within 3% of each other), and each
  `on` phase of k products against k x the per-product energy of the steady phase;
- sum of the phases of the alternation against wattwise's own whole-run counter figure is not a check here
  (the run has start-up outside the phases); chunks tile the steady phase instead.
Every figure is computed from the raw JSON files committed beside the page.
"""
import json
import os
import statistics
import sys


def load(folder, name):
    with open(os.path.join(folder, name)) as f:
        return json.load(f)


def info_line(folder, name):
    with open(os.path.join(folder, name)) as f:
        return json.loads([l for l in f if l.startswith("{")][0])


def cpu_pct_per_gpu(m):
    return 100.0 * m["wattwise_cpu_s"] / m["wall_s"] / max(1, len(m["gpus"]))


def iteration_cv(m, skip_s=0.0):
    """CV of the iterations' energy and of their durations, skipping those that begin within skip_s of the
    first (cuDNN's autotuning and the allocator make the first few differ)."""
    its = [i for i in m["phase_instances"] if i["name"] == "iteration" and i["energy_j"] is not None]
    first = min(i["begin_s"] for i in its)
    its = [i for i in its if i["begin_s"] >= first + skip_s]
    e = [i["energy_j"] for i in its]
    d = [i["end_s"] - i["begin_s"] for i in its]
    cv = lambda v: 100.0 * statistics.stdev(v) / statistics.mean(v)
    return cv(e), len(e), statistics.mean(e), cv(d)


def iteration_row(m, skip_s=0.0):
    cv, n, mean_j, duration_cv = iteration_cv(m, skip_s)
    return f"{cv:.2f} (durations {duration_cv:.2f}; {n} iterations, mean {mean_j:.2f} J)"


def steady_cpu_pct(folder, name, gpus=1):
    """% of a core per GPU between the second snapshot and the last, per thread name and in all; None
    without a *.threads file or with fewer than three snapshots."""
    path = os.path.join(folder, f"{name}.threads")
    if not os.path.exists(path):
        return None
    rows = [l.split() for l in open(path) if len(l.split()) == 4]
    # A snapshot's lines are written within a few ms of each other, 5 s from the next: group by that.
    groups, current = [], None
    for r in rows:
        t = float(r[0])
        if current is None or t - current[0] > 1.0:
            current = (t, {})
            groups.append(current)
        ticks = int(r[2]) + int(r[3])
        current[1][r[1]] = current[1].get(r[1], 0) + ticks
    # Only snapshots taken while sampling: the first comes before NVML is loaded, the last may come after
    # the sampler's thread has ended (the job done, the tail being accounted).
    groups = [g for g in groups if "ww-sampler" in g[1]]
    if len(groups) < 3:
        return None
    (t0, a), (t1, b) = groups[1], groups[-1]
    hz = os.sysconf("SC_CLK_TCK")
    rate = lambda k: 100.0 * (b.get(k, 0) - a.get(k, 0)) / hz / (t1 - t0) / gpus
    per_thread = {k: rate(k) for k in b}
    return sum(per_thread.values()), per_thread, t1 - t0


def steady_row(folder, name):
    r = steady_cpu_pct(folder, name)
    if r is None:
        return "n/a"
    total, per_thread, span = r
    parts = ", ".join(f"{k} {v:.2f}" for k, v in sorted(per_thread.items(), key=lambda kv: -kv[1]) if v >= 0.05)
    return f"{total:.2f} over {span:.0f} s ({parts})"


def onoff(folder, tag):
    m = load(folder, f"onoff_{tag}.json")
    info = info_line(folder, f"onoff_{tag}.txt")
    inst = m["phase_instances"]
    ons = [i for i in inst if i["name"] == "on"]
    steady = [i for i in inst if i["name"] == "steady"][0]
    chunks = [i for i in inst if i["name"] == "chunk"]
    on_w = statistics.mean(i["energy_j"] / (i["end_s"] - i["begin_s"]) for i in ons)
    per_product = steady["energy_j"] / info["steady_n"]
    on_vs_k = statistics.mean(100 * (i["energy_j"] / (per_product * info["k"]) - 1) for i in ons)
    chunk_expected = steady["energy_j"] / len(chunks)
    chunk_cv = 100 * statistics.stdev(c["energy_j"] for c in chunks) / chunk_expected
    return {"on_w": on_w, "on_vs_k_pct": on_vs_k, "chunk_cv_pct": chunk_cv, "k": info["k"],
            "cpu_pct": cpu_pct_per_gpu(m)}


def column(folder):
    idle = load(folder, "idle.json")
    train = load(folder, "train.json")
    has_sync = os.path.exists(os.path.join(folder, "train_sync.json"))
    sync = load(folder, "train_sync.json") if has_sync else None
    half, fifth = onoff(folder, "0.5"), onoff(folder, "0.2")
    cvd = load(folder, "cvd0.json")
    return {
        "CPU per GPU, idle (% of a core)": f"{cpu_pct_per_gpu(idle):.2f}",
        "CPU per GPU, resnet50 training (% of a core)": f"{cpu_pct_per_gpu(train):.2f}",
        "CPU per GPU, 0.2 s on/off (% of a core)": f"{fifth['cpu_pct']:.2f}",
        "steady CPU per GPU, idle (% of a core, by thread)": steady_row(folder, "idle"),
        "steady CPU per GPU, training (% of a core, by thread)": steady_row(folder, "train_sync"),
        "per-iteration energy CV, resnet50 b128 (%)": iteration_row(train),
        "the same after the first 2 s (%)": iteration_row(train, 2.0),
        "per-iteration energy CV, synchronized markers (%)": iteration_row(sync) if sync else "n/a",
        "the same after the first 2 s, synchronized (%)": iteration_row(sync, 2.0) if sync else "n/a",
        "on-phase power, 0.5 s phases (W)": f"{half['on_w']:.1f}",
        "on-phase power, 0.2 s phases (W)": f"{fifth['on_w']:.1f}",
        "0.2 s vs 0.5 s on-phase power (%)": f"{100 * (fifth['on_w'] / half['on_w'] - 1):+.2f}",
        "0.5 s on phase vs k x steady per-product (%)": f"{half['on_vs_k_pct']:+.2f} (k={half['k']})",
        "0.2 s on phase vs k x steady per-product (%)": f"{fifth['on_vs_k_pct']:+.2f} (k={fifth['k']})",
        "0.5 s chunks of the steady phase, CV (%)": f"{half['chunk_cv_pct']:.2f}",
        "0.2 s chunks of the steady phase, CV (%)": f"{fifth['chunk_cv_pct']:.2f}",
        "CUDA_VISIBLE_DEVICES=0: GPUs charged": ", ".join(
            str(g.get("index")) for g in cvd["gpus"] if g.get("used_by_job", True)),
    }


folders = sys.argv[1:]
cols = [column(f) for f in folders]
print("| figure | " + " | ".join(os.path.basename(os.path.normpath(f)) for f in folders) + " |")
print("| --- |" + " ---: |" * len(folders))
for key in cols[0]:
    print(f"| {key} | " + " | ".join(c.get(key, "n/a") for c in cols) + " |")
