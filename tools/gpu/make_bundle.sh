#!/usr/bin/env bash
# Builds wattwise here (Release) into build-gpu/bundle with the shared libraries the GPU machine lacks,
# so the device tool can carry it there (that machine has no package registry).
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DWATTWISE_TESTS=OFF -DWATTWISE_BENCHMARKS=OFF >/dev/null
cmake --build build-gpu --target wattwise -j"$(nproc)"
rm -rf build-gpu/bundle && mkdir -p build-gpu/bundle
cp build-gpu/src/cli/wattwise build-gpu/bundle/
cp -L /usr/lib/x86_64-linux-gnu/libfmt.so.9 build-gpu/bundle/
echo "bundle: $(du -sh build-gpu/bundle | cut -f1) in build-gpu/bundle"
