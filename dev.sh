#!/usr/bin/env bash
# One entry point for people and CI on a fresh Debian machine:
#   ./dev.sh demo    install what is missing, build, run the main job on its embedded default
#   ./dev.sh test    install what is missing, build, run every test
#   ./dev.sh build   install what is missing and build (Release build in build/)
#   ./dev.sh sanitize [address|undefined|thread]
#                    build the tests with that sanitizer (build-address/, build-undefined/, build-thread/)
#                    and run them all; a sanitizer report fails the test
#   ./dev.sh fuzz [SECONDS]
#                    build the libFuzzer targets with clang (build-fuzz/) and run each on its seed corpus
#                    for SECONDS (default 5); `test` runs this for 3 s per target
set -euo pipefail
cd "$(dirname "$0")"

BUILD_DIR=${WATTWISE_BUILD_DIR:-build}
PACKAGES=(cmake ninja-build g++ pkg-config libcli11-dev nlohmann-json3-dev libfmt-dev libsqlite3-dev
          libboost-math-dev libgtest-dev libgmock-dev libbenchmark-dev python3 libjs-chart.js chromium
          python3-pip python3-setuptools python3-wheel python3-venv  # pip install ./python offline; cmake --install into a venv (tests)
          python3-torch  # wattwise.torch in a real (CPU) training loop (python/tests/test_torch_helpers.py)
          libcpp-httplib-dev prometheus  # the exporter's HTTP server; the real Prometheus of `ctest -R prometheus`
          clang-14 libclang-rt-14-dev  # clang-14 and its compiler-rt (libFuzzer, sanitizers) for fuzz/
          munge slurmctld slurmd slurm-client)  # the SLURM test's localhost cluster (tests/slurm)

install_missing() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "dev.sh: installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

build() {
  install_missing
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD_DIR" -j"$(nproc)"
}

# Sanitizer reports fail the run, with a stack.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

sanitize() {
  local sanitizer=$1
  case "$sanitizer" in
    address|undefined|thread) ;;
    *) echo "usage: ./dev.sh sanitize [address|undefined|thread]" >&2; exit 2 ;;
  esac
  install_missing
  local dir="build-$sanitizer"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWATTWISE_SANITIZE="$sanitizer" \
        -DWATTWISE_BENCHMARKS=OFF >/dev/null
  cmake --build "$dir" -j"$(nproc)"
  cd "$dir"
  # train_cnn_flops: a Python process cannot load the instrumented marker library (the sanitizer runtime
  # must come first in the process); the C clients cover the same code.
  ctest --output-on-failure -j"$(nproc)" --timeout 900 -E '^train_cnn_flops$'
}

fuzz() {
  local seconds=${1:-5}
  install_missing
  CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DWATTWISE_FUZZ=ON -DWATTWISE_FUZZ_SECONDS="$seconds" -DWATTWISE_TESTS=OFF \
        -DWATTWISE_BENCHMARKS=OFF -DWATTWISE_WERROR=OFF >/dev/null
  cmake --build build-fuzz -j"$(nproc)" --target fuzz_marker_codec fuzz_runs_csv fuzz_trace_csv fuzz_plan \
        fuzz_journal fuzz_window_protocol fuzz_daemon_protocol
  (cd build-fuzz && ctest --output-on-failure -L fuzz)
}

case "${1:-}" in
  demo)
    build
    shift
    exec ./tools/demo.sh "$BUILD_DIR" "$@"
    ;;
  test)
    build
    (cd "$BUILD_DIR" && ctest --output-on-failure -j"$(nproc)" --timeout 600)
    fuzz 3  # the short corpus run of every fuzz target
    ;;
  sanitize)
    sanitize "${2:-address}"
    ;;
  fuzz)
    fuzz "${2:-5}"
    ;;
  build)
    build
    ;;
  *)
    echo "usage: ./dev.sh demo|test|build|sanitize [address|undefined|thread]|fuzz [SECONDS]" >&2
    exit 2
    ;;
esac
