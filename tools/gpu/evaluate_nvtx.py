#!/usr/bin/env python3
"""Compares the phases of the NVTX-annotated and the marker-annotated runs of tools/gpu/nvtx_train.py (written
by tools/gpu/nvtx_evidence.sh) and prints a Markdown summary. Exit 0 when every phase agrees within 2%.
MARKERS_JSON may name two runs, comma separated (one before and one after the NVTX run): the NVTX run is then
compared with their mean, which cancels a slow drift (the GPU warming up), and their own difference is shown
as the run-to-run noise.
    usage: evaluate_nvtx.py NVTX_JSON MARKERS_JSON[,MARKERS_JSON] BOTH_JSON [RATE_LINES_FILE]"""
import json
import sys

TOLERANCE = 0.02


def phases(path, prefix=""):
    with open(path) as f:
        m = json.load(f)
    out = {}
    for p in m.get("phases", []):
        name = p["name"]
        if prefix and not name.startswith(prefix):
            continue
        out[name[len(prefix):]] = p
    return m, out


def mean_phases(runs):
    """Per phase name, count from the first run, time_s and energy_j averaged over the runs that have it."""
    out = {}
    for name in runs[0]:
        present = [r[name] for r in runs if name in r]
        out[name] = dict(runs[0][name], time_s=sum(p["time_s"] for p in present) / len(present),
                         energy_j=sum(p["energy_j"] for p in present) / len(present))
    return out


def compare(title, a_label, a, b_label, b, judged=True):
    lines = ["### " + title, "",
             "| phase | count %s / %s | time_s %s | time_s %s | diff | energy_j %s | energy_j %s | diff |"
             % (a_label, b_label, a_label, b_label, a_label, b_label),
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    ok = True
    for name in ("training", "epoch", "step"):
        if name not in a or name not in b:
            lines.append("| %s | missing (%s: %s, %s: %s) | | | | | | |" % (name, a_label, name in a, b_label, name in b))
            ok = False
            continue
        pa, pb = a[name], b[name]
        dt = pa["time_s"] / pb["time_s"] - 1 if pb["time_s"] else float("inf")
        de = pa["energy_j"] / pb["energy_j"] - 1 if pb["energy_j"] else float("inf")
        same_count = pa["count"] == pb["count"]
        ok = ok and same_count and abs(dt) <= TOLERANCE and abs(de) <= TOLERANCE
        lines.append("| %s | %d / %d | %.3f | %.3f | %+.3f%% | %.1f | %.1f | %+.3f%% |"
                     % (name, pa["count"], pb["count"], pa["time_s"], pb["time_s"], 100 * dt, pa["energy_j"],
                        pb["energy_j"], 100 * de))
    lines.append("")
    if judged:
        lines.append("within %.0f%%: %s" % (100 * TOLERANCE, "yes" if ok else "NO"))
    lines.append("")
    return ok, lines


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    m_nvtx, nvtx = phases(argv[0])
    marker_runs = [phases(path) for path in argv[1].split(",")]
    m_markers = marker_runs[0][0]
    markers = mean_phases([p for _, p in marker_runs])
    m_both, both_markers = phases(argv[2])
    _, both_nvtx = phases(argv[2], "nvtx_")
    both_markers = {k: v for k, v in both_markers.items() if not k.startswith("nvtx_")}
    out = ["## NVTX ranges vs wattwise markers (tools/gpu/nvtx_evidence.sh)", ""]
    for label, m in (("nvtx run", m_nvtx), ("markers run", m_markers), ("both run", m_both)):
        out.append("- %s: gpus %s, energy %.1f J over %.2f s, markers %s" % (
            label, ", ".join(g.get("name", "?") for g in m.get("gpus", [])), m.get("energy_j", 0),
            m.get("wall_s", 0), json.dumps(m.get("markers", {}))))
    out.append("")
    ok_same, lines = compare("One run, both annotations at the same instants (nvtx_* ranges vs markers)",
                             "nvtx", both_nvtx, "markers", both_markers)
    out += lines
    title = "Separate runs: NVTX only (measure --nvtx) vs markers only"
    if len(marker_runs) > 1:
        title += " (the mean of the runs before and after it)"
    ok_runs, lines = compare(title, "nvtx", nvtx, "markers", markers)
    out += lines
    if len(marker_runs) > 1:
        _, lines = compare("Run-to-run noise: the two markers-only runs (informative, not judged)", "first",
                           marker_runs[0][1], "second", marker_runs[1][1], judged=False)
        out += lines
    if len(argv) > 3:
        out += ["### Cost of torch.cuda.nvtx.range_push + range_pop", "", "```"]
        with open(argv[3]) as f:
            out += [line.rstrip() for line in f]
        out += ["```", ""]
    print("\n".join(out))
    return 0 if ok_same and ok_runs else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
