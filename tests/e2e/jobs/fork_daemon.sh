#!/bin/sh
# A job that leaves a daemon behind: a double-forked sleep in its own session (setsid), whose pid goes to
# $1; then the job writes its own pid to $2 and runs for $3 seconds.
(setsid sleep 600 & echo $! > "$1")
echo $$ > "$2"
sleep "$3"
