#!/usr/bin/env python3
"""The table of issue 24 (docs/evidence/scaling-4gpu.md) from the databases of tools/gpu/scaling_4gpu.sh.

    python3 tools/gpu/scaling_4gpu_summary.py DIR [--wattwise build/src/cli/wattwise]

DIR holds MODEL.db (the GPU-count sweep) and MODEL-fb.db (forward/backward/optimizer marked), as the
script's archive unpacks. Per model, batch and GPU count, over the runs' `training` phase (the job's work):
time, speed-up against 1 GPU at the same batch, the energy of the job's (busy) GPUs and of the idle ones
apart and together, CPU and DRAM where the node had them readable, J/sample and EDP on both scopes, and the
share of the iteration's energy in forward, backward, allreduce and optimizer (from MODEL-fb.db). Then the
recommendations of `wattwise analyze` on both scopes (MODEL.node.json / MODEL.job.json beside the database,
else made with --wattwise). Reads SQLite directly (docs/results-schema.md: run_phases, run_phase_node_energy,
run_gpu_usage); prints Markdown on stdout.
"""

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys

FINE_PHASES = ("forward", "backward", "allreduce", "optimizer")


def mean_std(values):
    values = [v for v in values if v is not None]
    if not values:
        return None, None
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else None)


def runs_of(db_path, phase="training"):
    """One dict per successful run: settings, job GPUs, and the phase's time and energies."""
    db = sqlite3.connect("file:%s?mode=ro" % db_path, uri=True)
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    runs = {}
    for run_id, settings, time_s, energy_j, work in db.execute(
            "SELECT id, settings_json, time_s, energy_j, work FROM runs WHERE warmup = 0 AND error = '' "
            "AND time_s IS NOT NULL"):
        settings = {k: float(v) for k, v in json.loads(settings).items()}
        runs[run_id] = {"gpus": int(settings.get("gpus", 0)), "batch": int(settings.get("batch", 0)),
                        "run_time_s": time_s, "run_energy_j": energy_j, "work": work, "phases": {}}
    for run_id, name, time_s, energy_j in db.execute(
            "SELECT run_id, name, time_s, energy_j FROM run_phases WHERE gpu_index IS NULL"):
        if run_id in runs:
            runs[run_id]["phases"][name] = (time_s, energy_j)
    if "run_gpu_usage" in tables:
        for run_id, expected, measured in db.execute(
                "SELECT run_id, SUM(expected), SUM(measured) FROM run_gpu_usage GROUP BY run_id"):
            if run_id in runs:
                runs[run_id]["job_gpus"], runs[run_id]["measured_gpus"] = expected, measured
    node = {}
    if "run_phase_node_energy" in tables:
        for run_id, gpus_j, cpu_j, dram_j, meter_j in db.execute(
                "SELECT run_id, gpus_j, cpu_package_j, dram_j, meter_j FROM run_phase_node_energy WHERE name = ?",
                (phase,)):
            node[run_id] = (gpus_j, cpu_j, dram_j, meter_j)
    out = []
    for run_id, run in runs.items():
        if phase not in run["phases"]:
            continue
        run["time_s"], run["busy_j"] = run["phases"][phase]
        gpus_j, cpu_j, dram_j, meter_j = node.get(run_id, (None, None, None, None))
        run["all_gpus_j"], run["cpu_j"], run["dram_j"], run["meter_j"] = gpus_j, cpu_j, dram_j, meter_j
        run["idle_j"] = gpus_j - run["busy_j"] if gpus_j is not None and run["busy_j"] is not None else None
        out.append(run)
    db.close()
    return out


def fine_split(db_path):
    """{gpus: {phase: (time_s, energy_j)}} of the marked forward/backward/allreduce/optimizer phases."""
    split = {}
    for run in runs_of(db_path):
        split[run["gpus"]] = {name: run["phases"][name] for name in FINE_PHASES if name in run["phases"]}
    return split


def fmt(value, digits=1, scale=1.0):
    return "n/a" if value is None else "%.*f" % (digits, value * scale)


def sig(value, digits=3):
    return "n/a" if value is None else "%.*g" % (digits, value)


def analysis_json(directory, model, scope, wattwise):
    path = os.path.join(directory, "%s.%s.json" % (model, scope))
    if os.path.exists(path) and os.path.getsize(path) > 0:
        with open(path) as f:
            return json.load(f)
    if not wattwise:
        return None
    done = subprocess.run([wattwise, "analyze", os.path.join(directory, model + ".db"), "--json",
                           "--energy-scope", scope], capture_output=True, text=True)
    return json.loads(done.stdout) if done.returncode == 0 else None


def picks(analysis):
    if not analysis:
        return "n/a"
    parts = []
    for r in analysis["recommendations"]:
        setting = ", ".join("%s=%g" % (k, v) for k, v in sorted(r["setting"].items()))
        parts.append("%s: %s" % (r["metric"], setting))
    return "; ".join(parts)


def model_table(directory, model, wattwise):
    runs = runs_of(os.path.join(directory, model + ".db"))
    if not runs:
        return "### %s\n\nno successful run with a `training` phase\n" % model
    has_cpu = all(r["cpu_j"] is not None for r in runs)
    has_dram = all(r["dram_j"] is not None for r in runs)
    fb_path = os.path.join(directory, model + "-fb.db")
    split = fine_split(fb_path) if os.path.exists(fb_path) else {}
    lines = ["### %s\n" % model,
             "Per setting: mean over the repeats (n) of the `training` phase; energies in kJ; busy = the job's "
             "GPUs over their ranks' own phase; idle = the rest of every measured GPU over the phase's time "
             "(the GPUs the job left idle, and a rank's GPU while it waits for the others); node = busy + "
             "idle%s; EDP = E x t in kJ s "
             "on the node's energy (the job's in brackets); fwd/bwd/allreduce/opt: shares of their energy in "
             "the marked runs (batch 256, one run each, synchronised markers).\n" %
             (" + CPU" + (" + DRAM" if has_dram else "") if has_cpu else ""),
             "| batch | GPUs | n | time (s) | speed-up | busy kJ | idle kJ | node kJ | J/sample node (job) | "
             "EDP node (job) | fwd/bwd/allreduce/opt % |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    by_setting = {}
    for r in runs:
        by_setting.setdefault((r["batch"], r["gpus"]), []).append(r)
    for batch in sorted({b for b, _ in by_setting}):
        base_t, _ = mean_std([r["time_s"] for r in by_setting.get((batch, 1), [])])
        for gpus in sorted(g for b, g in by_setting if b == batch):
            group = by_setting[(batch, gpus)]
            t, t_std = mean_std([r["time_s"] for r in group])
            busy, _ = mean_std([r["busy_j"] for r in group])
            idle, _ = mean_std([r["idle_j"] for r in group])
            extra = [(r["cpu_j"] or 0) + (r["dram_j"] or 0) if has_cpu else 0 for r in group]
            node, _ = mean_std([r["all_gpus_j"] + x if r["all_gpus_j"] is not None else None
                                for r, x in zip(group, extra)])
            work, _ = mean_std([r["work"] for r in group])
            jps_node = node / work if node is not None and work else None
            jps_job = busy / work if busy is not None and work else None
            edp_node = node * t / 1e3 if node is not None else None
            edp_job = busy * t / 1e3 if busy is not None else None
            fine = split.get(gpus, {}) if batch == 256 else {}
            total = sum(e for _, e in fine.values() if e is not None) if fine else 0
            shares = "/".join(fmt(100 * fine[name][1] / total, 0) if name in fine and total else "-"
                              for name in FINE_PHASES) if fine else ""
            lines.append("| %d | %d | %d | %s%s | %s | %s | %s | %s | %s (%s) | %s (%s) | %s |" % (
                batch, gpus, len(group), fmt(t, 2), " ± " + fmt(t_std, 2) if t_std is not None else "",
                fmt(base_t / t, 2) if base_t and t else "n/a", fmt(busy, 2, 1e-3), fmt(idle, 2, 1e-3),
                fmt(node, 2, 1e-3), fmt(jps_node, 3), fmt(jps_job, 3), sig(edp_node), sig(edp_job), shares))
    node_analysis = analysis_json(directory, model, "node", wattwise)
    job_analysis = analysis_json(directory, model, "job", wattwise)
    lines.append("")
    lines.append("Recommended on the node's energy: %s  " % picks(node_analysis))
    lines.append("Recommended on the job's GPUs alone: %s" % picks(job_analysis))
    if node_analysis and node_analysis.get("energy_scope", {}).get("disagreements"):
        lines.append("")
        for line in node_analysis["energy_scope"]["disagreements"]:
            lines.append("- the scopes pick differently for %s" % line)
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", help="the unpacked archive of tools/gpu/scaling_4gpu.sh")
    parser.add_argument("--wattwise", default="", help="wattwise binary, to analyse where no JSON was kept")
    args = parser.parse_args(argv)
    models = sorted(name[:-3] for name in os.listdir(args.directory)
                    if name.endswith(".db") and not name.endswith("-fb.db"))
    if not models:
        sys.stderr.write("scaling_4gpu_summary.py: no MODEL.db in %s\n" % args.directory)
        return 2
    for model in models:
        print(model_table(args.directory, model, args.wattwise))
    return 0


if __name__ == "__main__":
    sys.exit(main())
