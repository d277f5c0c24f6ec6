#!/bin/sh
# A meter that prints what is not a reading.
echo "Instantaneous power reading: lots"
