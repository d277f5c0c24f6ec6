#!/usr/bin/env python3
"""Summarises tools/gpu/sampler_cost.sh's files as Markdown: wattwise's CPU per GPU, where the sampling
thread's CPU went (`sampler_cost` of `measure --json`, docs/measure-json.md) and the per-iteration energy CV.

    python3 tools/gpu/evaluate_sampler_cost.py DIR     (DIR holds idle.json, idle_pcie.json, train.json)
"""
import json
import os
import statistics
import sys

RUNS = [("idle.json", "idle, sleep 30"), ("idle_pcie.json", "idle, --pcie-interval 1000"),
        ("train.json", "resnet50 b128 training")]


def pct(cpu_s, wall_s, gpus=1):
    return 100.0 * cpu_s / wall_s / max(1, gpus) if wall_s > 0 else float("nan")


def iteration_cv(m):
    e = [i["energy_j"] for i in m["phase_instances"] if i["name"] == "iteration" and i["energy_j"] is not None]
    if len(e) < 2:
        return None
    return 100.0 * statistics.stdev(e) / statistics.mean(e), len(e), statistics.mean(e)


def overview(name, label, m):
    cost = m.get("sampler_cost") or {}
    gpus = max(1, len(m["gpus"]))
    sampled = cost.get("sampled_s", m["wall_s"])
    row = [label, f"{m['wall_s']:.1f}", f"{pct(m['wattwise_cpu_s'], m['wall_s'], gpus):.2f}",
           f"{pct(cost.get('sampling_thread_cpu_s', 0), sampled, gpus):.2f}",
           f"{cost.get('startup_cpu_s', 0):.3f}", f"{cost.get('accounting_cpu_s', 0):.3f}"]
    cv = iteration_cv(m)
    row.append(f"{cv[0]:.2f} ({cv[1]} iterations, mean {cv[2]:.2f} J)" if cv else "-")
    return "| " + " | ".join(row) + " |"


def breakdown(label, m):
    cost = m.get("sampler_cost")
    if not cost:
        return [f"{label}: no sampler_cost in the JSON (an older build?)"]
    lines = [f"### {label}", "",
             "| GPU | call kind | calls | CPU s | CPU ms a call | % of a core | wall s |",
             "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
    for g in cost["gpus"]:
        for kind, c in g["calls"].items():
            if c["calls"] == 0:
                continue
            per_call = c["cpu_ms_per_call"] or 0
            lines.append(f"| {g['index']} | {kind} | {c['calls']} | {c['cpu_s']:.4f} | {per_call:.4f} | "
                         f"{pct(c['cpu_s'], cost['sampled_s']):.3f} | {c['wall_s']:.4f} |")
        s = g["counter_schedule"]
        period = f"{s['posting_period_ms']:.2f} ms" if s["posting_period_ms"] else "none"
        lines.append("")
        lines.append(f"GPU {g['index']} counter schedule: {s['reads']} reads, {s['learning_reads']} learning "
                     f"in {s['learning_bursts']} burst(s) ({s['given_up_learning']} given up), "
                     f"{s['relock_checks']} lock checks, {s['relock_misses']} misses, {s['blind_reads']} blind; "
                     f"posting period {period}. All calls: {pct(g['cpu_s'], cost['sampled_s']):.3f}% of a core; "
                     f"the sampling thread: {pct(cost['sampling_thread_cpu_s'], cost['sampled_s']):.3f}%.")
    return lines + [""]


def main():
    folder = sys.argv[1]
    runs = [(f, label, json.load(open(os.path.join(folder, f)))) for f, label in RUNS
            if os.path.exists(os.path.join(folder, f))]
    print("# sampler cost on a real GPU (tools/gpu/sampler_cost.sh)\n")
    print("| run | wall s | wattwise CPU per GPU (% of a core) | sampling thread per GPU (%) | "
          "start-up CPU s | accounting CPU s | per-iteration energy CV (%) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for f, label, m in runs:
        print(overview(f, label, m))
    print()
    for _, label, m in runs:
        print("\n".join(breakdown(label, m)))


if __name__ == "__main__":
    main()
