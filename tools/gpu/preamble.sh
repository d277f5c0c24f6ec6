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

step() { echo "== $(date +%T) $*"; }  # a script may define its own after sourcing this

# pack_on_exit NAME: when the script ends (done, failed or stopped), the busy loops stop, its children are
# waited for, $W goes into $OUT/NAME.tar.gz with $W/summary.txt beside it where there is one, and $OUT is
# listed: a run cut short still leaves what it had.
pack_on_exit() {
  PACK_NAME=$1
  trap pack_now EXIT
}
pack_now() {
  stop_burners
  wait 2>/dev/null
  tar czf "$OUT/$PACK_NAME.tar.gz" -C "$W" . && { [[ ! -f "$W/summary.txt" ]] || cp "$W/summary.txt" "$OUT/"; }
  ls -la "$OUT"
}

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

# Every core busy, as data loaders keep a node: twice as many spinners as cores and a fork loop. The caller's
# EXIT trap calls stop_burners, so no spinner outlives the script.
burners=()
burn_every_core() {
  for ((i = 0; i < 2 * $(nproc); ++i)); do bash -c 'while :; do :; done' & burners+=($!); done
  bash -c 'while :; do /bin/true; done' & burners+=($!)
}
stop_burners() { for pid in "${burners[@]}"; do kill "$pid" 2>/dev/null; done; burners=(); }

# The settings read before and after a run (nothing here sets one), and their comparison into
# DIR/settings-diff.txt: "settings unchanged", or the diff.
gpu_settings() {
  nvidia-smi --query-gpu=index,name,power.limit,power.default_limit,clocks_event_reasons.active,clocks.sm,clocks.mem,persistence_mode,compute_mode \
      --format=csv
}
compare_settings() {
  local dir=$1
  if diff -q "$dir/settings-before.txt" "$dir/settings-after.txt" > /dev/null; then
    echo "settings unchanged" | tee "$dir/settings-diff.txt"
  else
    diff "$dir/settings-before.txt" "$dir/settings-after.txt" | tee "$dir/settings-diff.txt"
  fi
}
