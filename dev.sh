#!/usr/bin/env bash
# One entry point for people and CI on a fresh Debian machine:
#   ./dev.sh demo    install what is missing, build, run the main job on its embedded default
#   ./dev.sh test    install what is missing, build, run every test
#   ./dev.sh build   install what is missing and build (Release build in build/)
set -euo pipefail
cd "$(dirname "$0")"

BUILD_DIR=${WATTWISE_BUILD_DIR:-build}
PACKAGES=(cmake ninja-build g++ pkg-config libcli11-dev nlohmann-json3-dev libfmt-dev libsqlite3-dev
          libgtest-dev libgmock-dev libbenchmark-dev python3 libjs-chart.js chromium)

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

case "${1:-}" in
  demo)
    build
    shift
    exec ./tools/demo.sh "$BUILD_DIR" "$@"
    ;;
  test)
    build
    cd "$BUILD_DIR"
    ctest --output-on-failure -j"$(nproc)" --timeout 600
    ;;
  build)
    build
    ;;
  *)
    echo "usage: ./dev.sh demo|test|build" >&2
    exit 2
    ;;
esac
