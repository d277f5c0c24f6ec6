#!/bin/sh
# SLURM Prolog: records this node's GPU energy counters at the start of every job (slurm.conf:
# Prolog=/path/to/prolog.sh, Epilog=/path/to/epilog.sh; docs/slurm.md "Every job's GPU energy").
# It reads only; it never changes a GPU setting. A failing Prolog would drain the node, so every error is
# logged and the script exits 0.
#   WATTWISE_BIN        the wattwise binary (default: wattwise in PATH)
#   WATTWISE_SLURM_DIR  where the readings go (default /var/lib/wattwise/slurm; node-local or shared)
wattwise=${WATTWISE_BIN:-wattwise}
dir=${WATTWISE_SLURM_DIR:-/var/lib/wattwise/slurm}
node=${SLURMD_NODENAME:-$(hostname)}
[ -n "$SLURM_JOB_ID" ] || exit 0
mkdir -p "$dir" 2>/dev/null || { logger -t wattwise-prolog "cannot create $dir" 2>/dev/null; exit 0; }
# The job's GPUs on this node, as SLURM numbers them; all of them when the job has none named.
"$wattwise" counter --gpus "${SLURM_JOB_GPUS:-all}" --json "$dir/$SLURM_JOB_ID.$node.prolog.json" \
  2>>"$dir/errors.log" || echo "$(date -u +%FT%TZ) job $SLURM_JOB_ID: prolog reading failed" >>"$dir/errors.log"
exit 0
