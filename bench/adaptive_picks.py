#!/usr/bin/env python3
"""Reads what bench_adaptive_regret dumps, for docs/evidence/adaptive-sweep.md (issue 21, band6).

    DEBUG_DUMP=runs.txt DEBUG_CASES=1 DEBUG_ALL=1 SKIP_AA=1 \
        ./build/bench/bench_adaptive_regret 101 120 > /dev/null 2> picks.txt
    python3 bench/adaptive_picks.py scatter runs.txt picks.txt   # bias or scatter: the picks per case
    python3 bench/adaptive_picks.py spline runs.txt 3            # one fit of e and t: a linear spline, 3 knots
    python3 bench/adaptive_picks.py poly runs.txt 4              # ... a polynomial of degree 4 over the range
    python3 bench/adaptive_picks.py local runs.txt 1 10          # ... local degree 1 within +-10 W of each value

The last three are the brief's idea 1 (one fit of energy and time, every metric computed from them) over the
adaptive sweeps' own runs; the pick is the measured value whose computed metric is lowest. Plain Python
(no numpy on the VM); the noise-free curve and the metrics are the bench's (300 W reference).
"""
import collections
import re
import statistics
import sys

METRICS = {'E': lambda e, t: e, 'EDP': lambda e, t: e * t,
           'EDS(k=2.0)': lambda e, t: e / 2 + t / 2, 'EDS(k=1.5)': lambda e, t: e / 3 + 2 * t / 3}
REFERENCE_W = 300.0


def read_dump(path):
    curves, runs = collections.defaultdict(dict), collections.defaultdict(list)
    for line in open(path):
        f = line.split()
        if f[0] == 'curve':
            curves[f[1]][float(f[2])] = (float(f[3]), float(f[4]))  # time_s, energy_j
        else:
            runs[(f[1], int(f[2]))].append((float(f[3]), float(f[4]), float(f[5])))  # W, time_s, energy_j
    return curves, runs


def regret_pct(curve, metric, w):
    ref_t, ref_e = curve[REFERENCE_W]
    values = {x: METRICS[metric](e / ref_e, t / ref_t) for x, (t, e) in curve.items()}
    return 100 * (values[w] / min(values.values()) - 1)


def solve(a, b):  # Gaussian elimination with partial pivoting; None when singular
    n = len(a)
    m = [a[i][:] + [b[i]] for i in range(n)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        if abs(m[c][c]) < 1e-12:
            return None
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            for k in range(c, n + 1):
                m[r][k] -= f * m[c][k]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))) / m[r][r]
    return x


def least_squares(rows, ys):
    n = len(rows[0])
    a = [[sum(r[i] * r[j] for r in rows) for j in range(n)] for i in range(n)]
    return solve(a, [sum(r[i] * y for r, y in zip(rows, ys)) for i in range(n)])


def normalised(rs):  # each run's (W, e, t) against the sweep's mean reference run
    ref = [r for r in rs if r[0] == REFERENCE_W]
    ref_t, ref_e = statistics.mean(r[1] for r in ref), statistics.mean(r[2] for r in ref)
    return [(w, e / ref_e, t / ref_t) for w, t, e in rs]


def spline_fit(runs, knots_wanted):
    """e and t as one continuous linear spline each, shared knots at measured values (coordinate descent)."""
    values = sorted({w for w, _, _ in runs})
    inner = [v for v in values if values[0] < v < values[-1]]
    basis = lambda x, knots: [1.0, (x - 225) / 75] + [max(0.0, (x - k) / 75) for k in knots]

    def fit(knots):
        rows = [basis(w, knots) for w, _, _ in runs]
        ce, ct = least_squares(rows, [e for _, e, _ in runs]), least_squares(rows, [t for _, _, t in runs])
        if ce is None or ct is None:
            return None, float('inf')
        sse = sum((sum(c * b for c, b in zip(ce, r)) - e) ** 2 + (sum(c * b for c, b in zip(ct, r)) - t) ** 2
                  for r, (_, e, t) in zip(rows, runs))
        return (ce, ct), sse

    k = min(knots_wanted, len(inner))
    knots = [inner[int(i * (len(inner) - 1) / (k + 1))] for i in range(1, k + 1)]
    best = fit(knots)
    for _ in range(4):
        changed = False
        for i in range(len(knots)):
            for v in inner:
                if v in knots:
                    continue
                trial = sorted(knots[:i] + [v] + knots[i + 1:])
                got = fit(trial)
                if got[1] < best[1] - 1e-15:
                    best, knots, changed = got, trial, True
        if not changed:
            break
    (ce, ct), _ = best
    return {v: (sum(c * b for c, b in zip(ce, basis(v, knots))), sum(c * b for c, b in zip(ct, basis(v, knots))))
            for v in values}


def local_fit(runs, degree, half_width_w):
    """e and t by a polynomial of `degree` in W over the runs within half_width_w of each measured value
    (widened by 5 W until it has degree + 2 values); its value there."""
    fitted = {}
    for v in sorted({w for w, _, _ in runs}):
        h = half_width_w
        while True:
            near = [r for r in runs if abs(r[0] - v) <= h]
            if len({r[0] for r in near}) >= degree + 2:
                break
            h += 5
        rows = [[((w - v) / 75) ** d for d in range(degree + 1)] for w, _, _ in near]
        fitted[v] = (least_squares(rows, [e for _, e, _ in near])[0], least_squares(rows, [t for _, _, t in near])[0])
    return fitted


def models(curves, runs, fit_of):
    ok, cases = collections.Counter(), collections.Counter()
    for (profile, _), rs in sorted(runs.items()):
        fitted = fit_of(normalised(rs))
        group = 'replayed' if profile.startswith('replay') else 'simulated'
        for name, metric in METRICS.items():
            pick = min(fitted, key=lambda v: metric(*fitted[v]))
            cases[group] += 1
            ok[group] += regret_pct(curves[profile], name, pick) <= 0.5
    for group in ('simulated', 'replayed'):
        print(f'{group}: within 0.5% in {ok[group]} of {cases[group]} ({100 * ok[group] / cases[group]:.1f}%)')


def scatter(curves, picks_path):
    """Per replayed profile and metric: the mean offset of the picks from the true optimum (bias) and their
    spread (scatter), for analyze over the exhaustive runs and over the adaptive runs; and how many would be
    within 0.5% if every pick were moved by its case's mean offset (rounded to 5 W): bias removed."""
    picks = collections.defaultdict(lambda: {'exh-an': [], 'ada': []})
    pattern = r'(replay:\S+) seed \d+ (.+): exh \S+ \(\S+\) exh-an (\S+) \(\S+\) ada (\S+) \(\S+\)'
    for line in open(picks_path):
        if m := re.match(pattern, line):
            picks[(m[1], m[2])]['exh-an'].append(float(m[3]))
            picks[(m[1], m[2])]['ada'].append(float(m[4]))
    totals = collections.Counter()
    for (profile, metric), by in sorted(picks.items()):
        curve = curves[profile]
        truth = min(curve, key=lambda w: regret_pct(curve, metric, w))
        band = [w for w in curve if regret_pct(curve, metric, w) <= 0.5]
        line = f'{profile:18} {metric:11} optimum {truth:.0f} W, within 0.5%: {min(band):.0f}..{max(band):.0f} W'
        for column, ps in by.items():
            offset = statistics.mean(ps) - truth
            shift = round(offset / 5) * 5
            ok = sum(regret_pct(curve, metric, p) <= 0.5 for p in ps)
            debiased = sum(regret_pct(curve, metric, min(max(p - shift, 150), 300)) <= 0.5 for p in ps)
            totals[column] += ok
            totals[column + ' debiased'] += debiased
            line += f' | {column} offset {offset:+5.1f} sd {statistics.pstdev(ps):4.1f} W ok {ok} debiased {debiased}'
        print(line)
    print('within 0.5%, of', sum(len(b['ada']) for b in picks.values()), 'replayed cases:', dict(totals))


def main():
    command, dump = sys.argv[1], sys.argv[2]
    curves, runs = read_dump(dump)
    if command == 'scatter':
        scatter(curves, sys.argv[3])
    elif command == 'spline':
        models(curves, runs, lambda r: spline_fit(r, int(sys.argv[3])))
    elif command == 'poly':
        models(curves, runs, lambda r: local_fit(r, int(sys.argv[3]), 1e9))
    elif command == 'local':
        models(curves, runs, lambda r: local_fit(r, int(sys.argv[3]), float(sys.argv[4])))
    else:
        sys.exit(f'unknown command {command}: scatter, spline, poly or local')


if __name__ == '__main__':
    main()
