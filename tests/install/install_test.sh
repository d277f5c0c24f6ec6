#!/usr/bin/env bash
# cmake --install into a temporary prefix (a fresh venv without pip), then what a user runs from there:
# the installed binary, `import wattwise` with the prefix's python and no PYTHONPATH, and a C program built
# against the installed header and library. Usage: install_test.sh BUILD_DIR CMAKE
set -euo pipefail
build=$1
cmake=${2:-cmake}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
python3 -m venv --without-pip "$prefix"
"$cmake" --install "$build" --prefix "$prefix" > "$work/install.log"

fail() { echo "install_test: $*" >&2; cat "$work/install.log" >&2; exit 1; }
[ -x "$prefix/bin/wattwise" ] || fail "no bin/wattwise"
version=$(env -u PYTHONPATH "$prefix/bin/wattwise" --version)
[[ $version == wattwise\ * ]] || fail "bin/wattwise --version printed '$version'"
"$prefix/bin/wattwise" measure --simulate v100:resnet50 --json "$work/m.json" 2> "$work/summary.txt" \
  || fail "the installed binary could not measure a simulated job"
grep -q '"energy_j"' "$work/m.json" || fail "no energy in the installed binary's JSON"

# `wattwise exporter` runs wattwise-exporter beside the installed wattwise, as the systemd unit of
# docs/operators.md starts it (its ExecStart, with this prefix for /usr/local; --help: it must not serve).
[ -x "$prefix/bin/wattwise-exporter" ] || fail "no bin/wattwise-exporter"
unit_command=$(sed -n 's|^ExecStart=/usr/local/||p' "$(dirname "$0")/../../docs/operators.md" | head -1)
[ -n "$unit_command" ] || fail "no ExecStart=/usr/local/... in docs/operators.md"
read -r -a unit_argv <<< "$unit_command"
exporter_help=$(env -u PYTHONPATH "$prefix/${unit_argv[0]}" "${unit_argv[@]:1}" --help 2>&1) \
  || fail "the systemd unit's command failed from the prefix: $exporter_help"
[[ $exporter_help == *--listen* ]] || fail "the unit's command did not reach wattwise-exporter: $exporter_help"

py_version=$(cd "$work" && env -u PYTHONPATH "$prefix/bin/python3" -c 'import wattwise; print(wattwise.__version__)') \
  || fail "the prefix's python cannot import wattwise"
[ "${version#wattwise }" = "$py_version" ] || fail "binary $version, python package $py_version"
(cd "$work" && env -u PYTHONPATH "$prefix/bin/python3" -c 'import wattwise; assert wattwise.enabled() is False') \
  || fail "outside wattwise the package must say it is not enabled"

[ -f "$prefix/include/wattwise/markers.h" ] || fail "no include/wattwise/markers.h"
libdir=$(dirname "$(find "$prefix" -name 'libwattwise_markers.so*' | head -1)")
[ -n "$libdir" ] || fail "no libwattwise_markers.so"
cat > "$work/client.c" <<'C'
#include <wattwise/markers.h>
int main(void) { return ww_enabled() || ww_begin("epoch") != 0 ? 1 : 0; }
C
cc "$work/client.c" -I"$prefix/include" -L"$libdir" -lwattwise_markers -o "$work/client" \
  || fail "a C program does not build against the installed header and library"
LD_LIBRARY_PATH="$libdir" "$work/client" || fail "the C client says it is enabled outside wattwise"
# `measure --nvtx` finds the injection library in the prefix's library directory: with no NVML to load, the
# error must be about NVML (checked after the library was found), never about the library.
nvtx_lib=$(find "$prefix" -name 'libwattwise-nvtx.so' | head -1)
[ -n "$nvtx_lib" ] || fail "no libwattwise-nvtx.so"
nvtx_err=$(env -u WATTWISE_NVTX_LIB WATTWISE_NVML_LIB="$work/no-nvml.so" "$prefix/bin/wattwise" measure --nvtx -- true 2>&1) \
  && fail "measure without NVML succeeded"
[[ $nvtx_err != *libwattwise-nvtx.so* ]] || fail "the installed binary did not find $nvtx_lib: $nvtx_err"
echo "install_test: ok ($version; exporter; python package $py_version; C client from $libdir)"
