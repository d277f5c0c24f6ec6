#!/bin/sh
# A meter that counts cumulative joules: 100 J more at every reading (its state in $METER_STATE).
# The count is written aside and renamed into place: wattwise kills a reading still running when it stops
# (SIGKILL to its group), and a kill between `>`'s truncation and the write left the state empty, so the
# stop's own reading began again at 100 J (seen on a starved runner: 10 readings, state 100 at the end).
n=$(cat "$METER_STATE" 2>/dev/null || echo 0)
n=$((n + 100))
echo "$n" > "$METER_STATE.$$"
mv "$METER_STATE.$$" "$METER_STATE"
echo "$n J"
