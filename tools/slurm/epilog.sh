#!/bin/sh
# SLURM Epilog: the energy each of the job's GPUs used on this node since the Prolog's reading, written to
# $WATTWISE_SLURM_DIR/<job id>.<node>.json (docs/slurm.md "Every job's GPU energy"); the Prolog's file is
# then removed. Same variables as prolog.sh; errors are logged and the script exits 0 (a failing Epilog would
# drain the node).
wattwise=${WATTWISE_BIN:-wattwise}
dir=${WATTWISE_SLURM_DIR:-/var/lib/wattwise/slurm}
node=${SLURMD_NODENAME:-$(hostname)}
[ -n "$SLURM_JOB_ID" ] || exit 0
# The job-owner rule's files of this job's GPUs go first (prolog.sh, WATTWISE_OWNER_DIR); another job's stay.
if [ -n "$WATTWISE_OWNER_DIR" ] && [ -n "$SLURM_JOB_GPUS" ]; then
  for gpu in $(echo "$SLURM_JOB_GPUS" | tr ',' ' '); do
    owner="$WATTWISE_OWNER_DIR/gpu$gpu"
    [ -f "$owner" ] && [ "$(cut -d' ' -f2 "$owner" 2>/dev/null)" = "$SLURM_JOB_ID" ] && rm -f "$owner"
  done
fi
start="$dir/$SLURM_JOB_ID.$node.prolog.json"
[ -f "$start" ] || { echo "$(date -u +%FT%TZ) job $SLURM_JOB_ID: no prolog reading" >>"$dir/errors.log"; exit 0; }
if "$wattwise" counter --gpus "${SLURM_JOB_GPUS:-all}" --since "$start" --json "$dir/$SLURM_JOB_ID.$node.json" \
  2>>"$dir/errors.log"; then
  rm -f "$start"
else
  echo "$(date -u +%FT%TZ) job $SLURM_JOB_ID: epilog reading failed" >>"$dir/errors.log"
fi
exit 0
