#!/usr/bin/env bash
# Browser test of the HTML report: renders a simulated 31 x 5 power-limit sweep (tools/report_e2e_sweep.cpp),
# opens it in headless Chromium with no network, and fails on any JavaScript error or on a chart that was not
# drawn or has no data. Writes the page's DOM, the timing and one screenshot per section into OUTDIR.
#
#   tools/report_e2e.sh GENERATOR OUTDIR        (ctest runs it as report_html_browser)
# Exit 77 (skipped) when Chromium is not installed; ./dev.sh installs it.
set -euo pipefail

generator=$1
outdir=$2
mkdir -p "$outdir"

chromium_bin=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium_bin" ]; then
  echo "report_e2e: chromium not installed; skipping (./dev.sh installs it)" >&2
  exit 77
fi

expected=$("$generator" "$outdir/report.html" --md "$outdir/report.md" --csv "$outdir/report.csv")
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --user-data-dir="$profile" --hide-scrollbars)
url="file://$(cd "$outdir" && pwd)/report.html"

start_ns=$(date +%s%N)
timeout 120 "$chromium_bin" "${flags[@]}" --dump-dom "$url" >"$outdir/dom.html" 2>"$outdir/chromium.log"
end_ns=$(date +%s%N)

body=$(grep -o '<body[^>]*>' "$outdir/dom.html" | head -1)
attr() { sed -n "s/.* $1=\"\([^\"]*\)\".*/\1/p" <<<"$body"; }
charts_expected=$(attr data-charts-expected)
charts_drawn=$(attr data-charts-drawn)
js_errors=$(attr data-js-errors)
draw_ms=$(attr data-draw-ms)
wall_ms=$(( (end_ns - start_ns) / 1000000 ))
echo "report_e2e: charts expected $charts_expected (generator: $expected), drawn ${charts_drawn:-none}," \
     "JavaScript errors ${js_errors:-?}, drawn ${draw_ms:-?} ms after navigation, browser run ${wall_ms} ms"
{
  echo "charts_expected=$charts_expected"
  echo "charts_drawn=$charts_drawn"
  echo "js_errors=$js_errors"
  echo "draw_ms=$draw_ms"
  echo "browser_wall_ms=$wall_ms"
  echo "html_bytes=$(wc -c <"$outdir/report.html")"
} >"$outdir/timing.txt"

failed=0
if [ "$js_errors" != "0" ]; then echo "report_e2e: FAIL: JavaScript errors: $js_errors" >&2; failed=1; fi
if [ -z "$charts_drawn" ]; then echo "report_e2e: FAIL: the page's script did not finish" >&2; failed=1; fi
if [ "$charts_expected" != "$expected" ] || [ "${charts_drawn:-x}" != "$expected" ]; then
  echo "report_e2e: FAIL: $expected charts expected, page has ${charts_expected:-?}, drew ${charts_drawn:-none}" >&2
  failed=1
fi
for id in $(grep -o 'canvas id="[^"]*"' "$outdir/report.html" | cut -d'"' -f2); do
  grep -q "id=\"$id\"" "$outdir/dom.html" || { echo "report_e2e: FAIL: chart $id missing" >&2; failed=1; }
done
[ "$failed" -eq 0 ] || exit 1

# One screenshot per section, each alone on the page ("#only=" in report.js).
for section in per-knob plane traces phases fits tables; do
  timeout 120 "$chromium_bin" "${flags[@]}" --window-size=1280,1100 --screenshot="$outdir/report-$section.png" \
    "$url#only=$section" >/dev/null 2>>"$outdir/chromium.log"
done
echo "report_e2e: OK; screenshots in $outdir"
