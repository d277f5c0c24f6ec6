#!/bin/sh
# A meter whose device never answers.
sleep 60
echo "1 W"
