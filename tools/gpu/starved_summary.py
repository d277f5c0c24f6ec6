#!/usr/bin/env python3
"""The summary of a starved-CPU evidence run (tools/gpu/starved_evidence.sh, tools/gpu/pinned_starved.sh):
per run, wattwise's figures against the independent counter read around the training (counter_job.py), the
part of the difference the reference's own edge timing explains, the sampler's starvation signals (late
reads, sample gaps, grid learnt), the iterations' bars and what wattwise said on stderr.
    usage: starved_summary.py DIR RUN...   (DIR/RUN.json, DIR/RUN_independent.json, DIR/RUN.stderr)"""
import json, sys
w = sys.argv[1]
for name in sys.argv[2:]:
    try:
        m = json.load(open(f"{w}/{name}.json"))
        ind = json.load(open(f"{w}/{name}_independent.json"))
    except Exception as e:  # a run that failed leaves its files behind: say so, go on
        print(f"{name}: no result ({e})")
        continue
    print(f"== {name}: wall {m['wall_s']:.1f} s, checks {'passed' if m['checks']['passed'] else 'FAILED'}")
    for f in m["checks"]["failures"]:
        print(f"   check failed: GPU {f['gpu']} {f['check']}: {f['detail']}")
    for g in m["gpus"]:
        s = g["sampler"]
        print(f"   GPU {g['index']}: {g['energy_j']:.1f} +- {g['energy_uncertainty_j']:.1f} J ({g['method']}"
              f"{', counter only' if g['counter_only'] else ''}), avg {g['avg_power_w']:.1f} W, "
              f"starved {s['starved']} (late reads {s['late_counter_reads']}, sample gaps {s.get('sample_gaps', '-')}, max delay "
              f"{s['max_counter_read_delay_ms']:.0f} ms, grid learnt {s['grid_learnt']} at {s['grid_known_s']})")
    win = next((i for i in m["phase_instances"] if i["name"] == "independent_window"), None)
    if win is not None and win["energy_j"] is not None:
        err = win["energy_j"] - ind["counter_j"]
        bar = win["energy_uncertainty_j"]
        print(f"   independent window {win['end_s'] - win['begin_s']:.2f} s: wattwise {win['energy_j']:.1f} +- {bar:.1f} J, "
              f"independent counter {ind['counter_j']:.1f} J: {err:+.1f} J ({100 * err / ind['counter_j']:+.3f}%), "
              f"{'within' if abs(err) <= bar else 'OUTSIDE'} the bar")
        # The counter's difference spans posting to posting, the window marker to marker: the part of the
        # difference the reference's own edge timing explains (counter_job.py "reference_timing_j").
        if "reference_timing_j" in ind:
            lo, hi = ind["reference_timing_j"]
            lags = ", ".join(f"{1000 * e['lag_min_s']:.1f}-{1000 * e['lag_max_s']:.1f} ms at {e['power_w']:.0f} W"
                             for e in ind["edges"])
            fits = err + bar >= lo and err - bar <= hi
            print(f"   the reference's edges lag their postings by {lags}: it explains {lo:+.1f}..{hi:+.1f} J; "
                  f"wattwise's {err:+.1f} +- {bar:.1f} J {'is consistent with it' if fits else 'is NOT explained by it'}")
    it = [i for i in m["phase_instances"] if i["name"] == "iteration" and i["energy_j"] is not None]
    if it:
        bars = sorted(100 * i["energy_uncertainty_j"] / i["energy_j"] for i in it if i["energy_j"] > 0)
        print(f"   iterations: {len(it)}, median bar {bars[len(bars) // 2]:.1f}% of an iteration")
    print(f"   wattwise said on stderr:")
    for line in open(f"{w}/{name}.stderr"):
        if line.startswith("wattwise:"):
            print("     " + line.rstrip())
