#!/bin/sh
# A job that ignores SIGINT, SIGTERM and SIGHUP (its sleep inherits that): only SIGKILL ends it.
# Writes its pid (its process group) to $1 once the signals are ignored.
trap '' INT TERM HUP
echo $$ > "$1"
sleep 600
