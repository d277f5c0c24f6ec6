# Sourced by the GPU-machine scripts (tools/gpu/*.sh): the repository root as the working directory, $OUT
# made, the bundled wattwise (tools/gpu/make_bundle.sh, carried as build-gpu/bundle) as $WW with its libraries
# found, and Python unbuffered so that a job's progress reaches the log as it happens.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT=${OUT:-/tmp/ww-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/build-gpu/bundle${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
WW=${WATTWISE_BIN:-"$PWD/build-gpu/bundle/wattwise"}  # WATTWISE_BIN: another build (local trials)

# Every 5 s while PID runs: one line per thread, "unix_time thread_name utime_ticks stime_ticks" (the
# fields after the command name of /proc/PID/task/TID/stat, which may itself hold spaces).
watch_threads() {
  local pid=$1 out=$2 t stat fields
  while kill -0 "$pid" 2>/dev/null; do
    for t in /proc/"$pid"/task/*; do
      stat=$(cat "$t/stat" 2>/dev/null) || continue
      read -r -a fields <<< "${stat##*) }"
      echo "$(date +%s.%N) $(cat "$t/comm" 2>/dev/null | tr ' ' _) ${fields[11]} ${fields[12]}"
    done >> "$out"
    echo "$(date +%s.%N) $(awk '/^VmRSS/ {print $2}' /proc/"$pid"/status 2>/dev/null)" >> "${out%.threads}.rss"
    sleep 5
  done
}
# measure_watched NAME [measure flags] -- JOB: runs wattwise measure in the background, its threads watched,
# into $W/NAME.txt and $W/NAME.threads; the caller's FLAGS come first.
measure_watched() {
  local name=$1; shift
  "$WW" measure "${FLAGS[@]}" "$@" > "$W/$name.txt" 2>&1 &
  local pid=$!
  watch_threads "$pid" "$W/$name.threads" &
  wait "$pid"
  wait
}
