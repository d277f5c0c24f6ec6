#!/usr/bin/env bash
# Builds wattwise here (Release) into build-gpu/bundle with the shared libraries the GPU machine lacks,
# so the device tool can carry it there (that machine has no package registry).
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DWATTWISE_TESTS=OFF -DWATTWISE_BENCHMARKS=OFF >/dev/null
cmake --build build-gpu --target wattwise wattwise-exporter wattwise-nvtx -j"$(nproc)"
rm -rf build-gpu/bundle && mkdir -p build-gpu/bundle
# libwattwise-nvtx.so beside wattwise, where `measure --nvtx` looks first (docs/nvtx.md).
cp build-gpu/src/cli/wattwise build-gpu/src/cli/wattwise-exporter build-gpu/src/cli/libwattwise-nvtx.so build-gpu/bundle/
# The libraries the GPU machine may lack: fmt, and the exporter's cpp-httplib with what it links (OpenSSL 3,
# brotli), and SQLite. glibc, libstdc++ and zlib are on every machine.
for lib in libfmt.so.9 libcpp-httplib.so.0.11 libssl.so.3 libcrypto.so.3 libbrotlidec.so.1 libbrotlienc.so.1 \
           libbrotlicommon.so.1 \
           libsqlite3.so.0; do
  cp -L "/usr/lib/x86_64-linux-gnu/$lib" build-gpu/bundle/
done
echo "bundle: $(du -sh build-gpu/bundle | cut -f1) in build-gpu/bundle"
