#!/usr/bin/env bash
# Runs on the GPU machine (device tool), READ-ONLY: wattwise measure never changes a GPU setting, and nothing
# here calls a setter; the settings are read before and after. Expects build-gpu/bundle
# (tools/gpu/make_bundle.sh) carried along.
# Why: starved_evidence.sh busies every core, yet on a 16-core machine wattwise's threads still ran often
# enough that no counter read was held up past its posting and no sample gap opened (docs/evidence/
# starved-h100.md): the held-up-read placement and the gap bars were shown on fakes and replays only. Here
# wattwise's own threads (not the job's) are pinned to core 0 beside busy loops pinned there too, at a lower
# priority, so that the sampler gets a known sliver of one core: the case of a node whose data loaders own
# every cycle. Levels "NICE:SPINNERS" (CFS shares: nice 0 weighs 1024, nice 10 110, nice 19 15).
#   usage: [LEVELS="0:2 10:4 19:4 19:8"] [TRAIN_S=40] bash tools/gpu/pinned_starved.sh   (~70 s a level)
source "$(dirname "$0")/preamble.sh"
W=/tmp/ww-pinned
rm -rf "$W"; mkdir -p "$OUT" "$W"
pack_on_exit evidence-pinned
TRAIN=(python3 workloads/train_cnn.py --model resnet50 --batch 128 --max-seconds "${TRAIN_S:-40}")
LEVELS=(${LEVELS:-0:2 10:4 19:4 19:8})

step environment
{ nvidia-smi -L; "$WW" --version; uname -r; echo "cores: $(nproc)"; cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null; } \
    > "$W/environment.txt" 2>&1
gpu_settings > "$W/settings-before.txt" 2>&1
cat "$W/environment.txt" "$W/settings-before.txt"

# run NAME [NICE]: the training under `wattwise measure`, the independent counter read around it; with NICE,
# once the job has started, every thread of wattwise (not its job's processes, which were forked before) is
# pinned to core 0 at that nice value. NAME.sched: the threads' affinity and nice as set, their CPU at the end.
run() {
  local name=$1 nice=${2:-}
  # A hard stop per run, so that a run the starvation stalls still leaves the others' files.
  timeout -s INT "${RUN_LIMIT_S:-120}" "$WW" measure --json "$W/$name.json" --trace "$W/$name.csv" -- \
      python3 tools/gpu/counter_job.py --out "$W/${name}_independent.json" -- "${TRAIN[@]}" \
      > "$W/$name.txt" 2> "$W/$name.stderr" &
  local limiter=$! pid=""
  for _ in $(seq 100); do pid=$(pgrep -P "$limiter" | head -1); [[ -n "$pid" ]] && break; sleep 0.02; done
  pid=${pid:-$limiter}  # wattwise, the child of timeout
  # The job: a process running counter_job.py other than wattwise and timeout, whose command lines name it
  # too (python3 may run under another argv[0], as a pyenv shim's full path).
  job_running() { pgrep -f "tools/gpu/counter_job.py" | grep -qvxE "$pid|$limiter"; }
  if [[ -n "$nice" ]]; then
    # The job running means it was forked with the machine's affinity; a watchdog or guardian wattwise forks
    # is its own process, left alone too.
    for _ in $(seq 200); do job_running && break; sleep 0.05; done
    taskset -a -p -c 0 "$pid" > "$W/$name.sched" 2>&1
    for t in /proc/"$pid"/task/*; do renice -n "$nice" -p "${t##*/}" >> "$W/$name.sched" 2>&1; done
    ps -L -o tid,comm,psr,ni,pcpu -p "$pid" >> "$W/$name.sched" 2>&1
  fi
  watch_threads "$pid" "$W/$name.threads" &
  if [[ -n "$nice" ]]; then
    # The busy loops stop with the job, as a job's data loaders do: wattwise's accounting after the job
    # would otherwise run on a sliver of one core for many minutes.
    while kill -0 "$pid" 2>/dev/null && job_running; do sleep 0.2; done
    stop_burners
  fi
  wait "$limiter"
  echo "rc=$?" >> "$W/$name.txt"
  cp "$W/$name".{json,txt,stderr,sched} "${W}/${name}_independent.json" "$OUT/" 2>/dev/null
  wait
  grep '^wattwise:' "$W/$name.stderr" | head -20
  tail -14 "$W/$name.txt"
}

step "resnet50, wattwise on an idle CPU (baseline)"
run idle
names=(idle)
for level in "${LEVELS[@]}"; do
  nice=${level%%:*} spinners=${level##*:} name="pinned-n${level%%:*}-s${level##*:}"
  step "resnet50, wattwise's threads on core 0 at nice $nice beside $spinners busy loops pinned there"
  for ((i = 0; i < spinners; ++i)); do taskset -c 0 bash -c 'while :; do :; done' & burners+=($!); done
  run "$name" "$nice"
  names+=("$name")
done

gpu_settings > "$W/settings-after.txt" 2>&1
compare_settings "$W"

step summary
python3 tools/gpu/starved_summary.py "$W" "${names[@]}" > "$W/summary.txt" 2>&1
cat "$W/summary.txt"
step done
