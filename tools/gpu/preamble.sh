# Sourced by the GPU-machine scripts (tools/gpu/*.sh): the repository root as the working directory, $OUT
# made, the bundled wattwise (tools/gpu/make_bundle.sh, carried as build-gpu/bundle) as $WW with its libraries
# found, and Python unbuffered so that a job's progress reaches the log as it happens.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT=${OUT:-/tmp/ww-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/build-gpu/bundle${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
WW="$PWD/build-gpu/bundle/wattwise"
