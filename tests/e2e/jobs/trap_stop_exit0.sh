#!/bin/sh
# A job that handles the stop signals like a training script that checkpoints: it exits 0 on SIGINT,
# SIGTERM or SIGHUP. Writes its pid (its process group) to $1, then works for $2 x 20 ms.
trap 'exit 0' INT TERM HUP
echo $$ > "$1"
i=0
while [ "$i" -lt "$2" ]; do
  sleep 0.02
  i=$((i + 1))
done
