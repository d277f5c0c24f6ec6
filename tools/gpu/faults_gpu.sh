#!/usr/bin/env bash
# Issue 10 on a real GPU, READ-ONLY: the fault paths that need no setting change (signals, orphans, a job
# that handles or ignores SIGTERM, hostile markers, a read-only sweep stopped and resumed from its database),
# run against the real NVML and driver. Nothing here calls a setter: `measure` and `sweep --read-only` only
# (no `info --probe`, which sets a limit to its own value). The GPU's limits and clocks are read before and
# after to show they are untouched. Expects build-gpu/bundle (tools/gpu/make_bundle.sh) carried along.
#   usage: bash tools/gpu/faults_gpu.sh      (writes $OUT/faults-gpu.tar.gz and $OUT/faults-gpu.txt)
source "$(dirname "$0")/preamble.sh"
W=/tmp/ww-faults
mkdir -p "$OUT" "$W"
export WATTWISE_STATE_DIR="$W/state"
JOB=(python3 tools/gpu/fault_job.py)
LOG="$OUT/faults-gpu.txt"
exec > >(tee "$LOG") 2>&1
trap 'tar czf "$OUT/faults-gpu.tar.gz" -C "$W" .' EXIT
step() { echo; echo "== $(date +%T) $*"; }
settings() { nvidia-smi --query-gpu=index,uuid,power.limit,clocks.applications.graphics,clocks.applications.memory,clocks_event_reasons.active --format=csv,noheader; }
alive() { local n=0; for p in "$@"; do kill -0 "$p" 2>/dev/null && n=$((n+1)); done; echo $n; }

step environment
nvidia-smi -L; "$WW" --version; uname -r; nproc
settings | tee "$W/settings-before.csv"

step "1. measure a 10 s GPU job with 2 worker processes: a complete result, valid JSON"
"$WW" measure --json "$W/plain.json" -- "${JOB[@]}" --seconds 10 --workers 2 --pids "$W/plain.pids"
echo "rc=$?"
python3 -c "import json; d=json.load(open('$W/plain.json')); print('complete', d.get('complete'), 'energy_j', d['energy_j'], 'wall_s', d['wall_s'], 'cpu_s', d['wattwise_cpu_s'])"
echo "processes of the job alive after it: $(alive $(cat "$W/plain.pids"))"

step "2. kill -9 of wattwise during the job: the job and its workers must not live on"
"$WW" measure -- "${JOB[@]}" --seconds 60 --workers 2 --pids "$W/kill9.pids" > "$W/kill9.txt" 2>&1 &
ww=$!
for i in $(seq 1 100); do [ -s "$W/kill9.pids" ] && break; sleep 0.1; done; sleep 3
kill -9 $ww; wait $ww; echo "wattwise rc=$? (137 expected)"
for i in $(seq 1 50); do [ "$(alive $(cat "$W/kill9.pids"))" = 0 ] && break; sleep 0.1; done
echo "processes of the job alive 5 s after kill -9: $(alive $(cat "$W/kill9.pids")) of $(wc -l < "$W/kill9.pids")"
cat "$W/kill9.txt" | tail -3

step "3. SIGTERM to wattwise; the job checkpoints and exits 0: result written, wattwise exits 143"
"$WW" measure --json "$W/term.json" -- "${JOB[@]}" --seconds 60 --on-stop exit0 > "$W/term.txt" 2>&1 &
ww=$!; sleep 6; t0=$(date +%s.%N); kill -TERM $ww; wait $ww; rc=$?
echo "rc=$rc (143 expected), stopped after $(python3 -c "print(round($(date +%s.%N)-$t0,2))") s"
tail -4 "$W/term.txt"; python3 -c "import json; d=json.load(open('$W/term.json')); print('exit_code', d['exit_code'], 'energy_j', d['energy_j'])"

step "4. the job ignores SIGTERM: wattwise escalates to SIGKILL after its grace"
"$WW" measure -- "${JOB[@]}" --seconds 120 --on-stop ignore --workers 1 --pids "$W/ignore.pids" > "$W/ignore.txt" 2>&1 &
ww=$!; sleep 6; t0=$(date +%s.%N); kill -TERM $ww; wait $ww; rc=$?
echo "rc=$rc (143 expected), stopped after $(python3 -c "print(round($(date +%s.%N)-$t0,2))") s; alive: $(alive $(cat "$W/ignore.pids"))"
tail -4 "$W/ignore.txt"

step "5. hostile markers from the real Python client: invalid UTF-8, terminal escapes"
"$WW" measure --json "$W/hostile.json" -- "${JOB[@]}" --seconds 3 --hostile > "$W/hostile.txt" 2>&1; echo "rc=$?"
python3 -c "import json; d=json.load(open('$W/hostile.json')); print([p['name'] for p in d['phases']])"
grep -c $'\x1b' "$W/hostile.txt" | sed 's/^/raw ESC bytes in the summary: /'

step "6. read-only job-knob sweep stopped by SIGINT during run 2, resumed from its database alone"
"$WW" sweep --read-only --param seconds=4,5,6 --db "$W/sweep.db" -- "${JOB[@]}" --seconds {seconds} --on-stop exit0 > "$W/sweep1.txt" 2>&1 &
ww=$!; sleep 11; kill -INT $ww; wait $ww; echo "first part rc=$? (130 expected)"; tail -3 "$W/sweep1.txt"
"$WW" sweep --resume --db "$W/sweep.db" > "$W/sweep2.txt" 2>&1; echo "resume rc=$?"; tail -3 "$W/sweep2.txt"
python3 - "$W/sweep.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select plan_index, count(*), max(error) from runs group by plan_index").fetchall()
print("runs per plan index:", rows)
PY

step "settings after (must equal before)"
settings | tee "$W/settings-after.csv"
if cmp -s <(cut -d, -f1-5 "$W/settings-before.csv") <(cut -d, -f1-5 "$W/settings-after.csv"); then echo "settings unchanged"; else echo "SETTINGS DIFFER"; fi
step done
