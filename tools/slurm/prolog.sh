#!/bin/sh
# SLURM Prolog: records this node's GPU energy counters at the start of every job (slurm.conf:
# Prolog=/path/to/prolog.sh, Epilog=/path/to/epilog.sh; docs/slurm.md "Every job's GPU energy").
# It reads only; it never changes a GPU setting. A failing Prolog would drain the node, so every error is
# logged and the script exits 0.
#   WATTWISE_BIN        the wattwise binary (default: wattwise in PATH)
#   WATTWISE_SLURM_DIR  where the readings go (default /var/lib/wattwise/slurm; node-local or shared)
#   WATTWISE_OWNER_DIR  set (e.g. /run/wattwise/gpu-owner): also write who owns each of the job's GPUs, for
#                       the settings daemon's job-owner rule (docs/operators.md "The settings daemon")
wattwise=${WATTWISE_BIN:-wattwise}
dir=${WATTWISE_SLURM_DIR:-/var/lib/wattwise/slurm}
node=${SLURMD_NODENAME:-$(hostname)}
[ -n "$SLURM_JOB_ID" ] || exit 0
mkdir -p "$dir" 2>/dev/null || { logger -t wattwise-prolog "cannot create $dir" 2>/dev/null; exit 0; }
# The job's GPUs on this node, as SLURM numbers them; all of them when the job has none named.
"$wattwise" counter --gpus "${SLURM_JOB_GPUS:-all}" --json "$dir/$SLURM_JOB_ID.$node.prolog.json" \
  2>>"$dir/errors.log" || echo "$(date -u +%FT%TZ) job $SLURM_JOB_ID: prolog reading failed" >>"$dir/errors.log"
# The job-owner rule's files: "<user> <job id>" in <dir>/gpu<N>, root's and written by root alone.
if [ -n "$WATTWISE_OWNER_DIR" ] && [ -n "$SLURM_JOB_GPUS" ] && [ -n "$SLURM_JOB_USER" ]; then
  if mkdir -p -m 0755 "$WATTWISE_OWNER_DIR" 2>/dev/null; then
    for gpu in $(echo "$SLURM_JOB_GPUS" | tr ',' ' '); do
      printf '%s %s\n' "$SLURM_JOB_USER" "$SLURM_JOB_ID" >"$WATTWISE_OWNER_DIR/.gpu$gpu.tmp" &&
        chmod 0644 "$WATTWISE_OWNER_DIR/.gpu$gpu.tmp" &&
        mv -f "$WATTWISE_OWNER_DIR/.gpu$gpu.tmp" "$WATTWISE_OWNER_DIR/gpu$gpu"
    done
  else
    logger -t wattwise-prolog "cannot create $WATTWISE_OWNER_DIR" 2>/dev/null
  fi
fi
exit 0
