#!/bin/sh
# A wall meter that always reads 250 W, in the style of a wrapper of `ipmitool dcmi power reading`.
echo "250 W"
