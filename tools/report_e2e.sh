#!/usr/bin/env bash
# Browser test of the HTML report: renders a simulated 31 x 5 power-limit sweep and the single-run report of
# its reference run's trace CSV (tools/report_e2e_sweep.cpp), opens both in headless Chromium with no
# network, and fails on any JavaScript error or on a chart that was not drawn or has no data. Writes the
# pages' DOM, the timing (timing.txt) and one screenshot per section into OUTDIR.
#
#   tools/report_e2e.sh GENERATOR OUTDIR        (ctest runs it as report_html_browser)
# Exit 77 (skipped) when Chromium is not installed; ./dev.sh installs it.
set -euo pipefail

generator=$1
outdir=$(mkdir -p "$2" && cd "$2" && pwd)

chromium_bin=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium_bin" ]; then
  echo "report_e2e: chromium not installed; skipping (./dev.sh installs it)" >&2
  exit 77
fi

mapfile -t expected < <("$generator" "$outdir/report.html" --md "$outdir/report.md" --csv "$outdir/report.csv" \
                          --trace-report "$outdir/run.html")
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --user-data-dir="$profile" --hide-scrollbars)
: >"$outdir/timing.txt"
failed=0

# check_page NAME EXPECTED_CHARTS: opens OUTDIR/NAME.html, reads what the page's script wrote on <body>.
check_page() {
  local name=$1 want=$2
  local url="file://$outdir/$name.html"
  local start_ns end_ns
  start_ns=$(date +%s%N)
  timeout 120 "$chromium_bin" "${flags[@]}" --dump-dom "$url" >"$outdir/$name.dom.html" 2>>"$outdir/chromium.log"
  end_ns=$(date +%s%N)
  local body
  body=$(grep -o '<body[^>]*>' "$outdir/$name.dom.html" | head -1)
  attr() { sed -n "s/.* $1=\"\([^\"]*\)\".*/\1/p" <<<"$body"; }
  local page_expected drawn errors draw_ms wall_ms
  page_expected=$(attr data-charts-expected)
  drawn=$(attr data-charts-drawn)
  errors=$(attr data-js-errors)
  draw_ms=$(attr data-draw-ms)
  wall_ms=$(( (end_ns - start_ns) / 1000000 ))
  echo "report_e2e: $name.html: charts expected $want, drawn ${drawn:-none}; JavaScript errors ${errors:-?};" \
       "all drawn ${draw_ms:-?} ms after navigation; browser start to exit ${wall_ms} ms"
  printf '%s: html_bytes=%s charts_expected=%s charts_drawn=%s js_errors=%s draw_ms=%s browser_wall_ms=%s\n' \
    "$name" "$(wc -c <"$outdir/$name.html")" "$want" "$drawn" "$errors" "$draw_ms" "$wall_ms" >>"$outdir/timing.txt"
  if [ "$errors" != "0" ]; then echo "report_e2e: FAIL: $name: JavaScript errors: ${errors:-unknown}" >&2; failed=1; fi
  if [ -z "$drawn" ]; then echo "report_e2e: FAIL: $name: the page's script did not finish" >&2; failed=1; fi
  if [ "$page_expected" != "$want" ] || [ "${drawn:-x}" != "$want" ]; then
    echo "report_e2e: FAIL: $name: $want charts expected, page has ${page_expected:-?}, drew ${drawn:-none}" >&2
    failed=1
  fi
  local id
  for id in $(grep -o '<canvas id="[^"]*"' "$outdir/$name.html" | cut -d'"' -f2); do
    grep -q "<canvas id=\"$id\"[^>]*style=" "$outdir/$name.dom.html" ||
      { echo "report_e2e: FAIL: $name: chart $id was not drawn" >&2; failed=1; }
  done
}

two_knobs=$("$generator" "$outdir/two-knobs.html" --limits 7 --repeats 2 --batches 64,128)
check_page report "${expected[0]}"
check_page run "${expected[1]}"
check_page two-knobs "$two_knobs"
[ "$failed" -eq 0 ] || exit 1

# The check itself must catch a failing script: a page whose script throws half-way has to fail it.
sed 's/^  planeChart();$/  planeChart(); notDefinedAnywhere();/' "$outdir/report.html" >"$outdir/broken.html"
grep -q notDefinedAnywhere "$outdir/broken.html" || { echo "report_e2e: FAIL: could not break the page" >&2; exit 1; }
check_page broken "${expected[0]}" 2>/dev/null
if [ "$failed" -eq 0 ]; then echo "report_e2e: FAIL: a page with a JavaScript error passed the check" >&2; exit 1; fi
echo "report_e2e: (the broken page was caught, as it should be)"
failed=0

# One screenshot per section, each alone on the page ("#only=" in report.js): shoot PAGE NAME HEIGHT [SECTION]
# (SECTION defaults to NAME after its first "-": report-plane -> plane).
shoot() {
  timeout 120 "$chromium_bin" "${flags[@]}" --window-size=1280,"$3" --screenshot="$outdir/$2.png" \
    "file://$outdir/$1.html#only=${4:-${2#*-}}" >/dev/null 2>>"$outdir/chromium.log"
}
for section in recommendation per-knob plane fits tables; do shoot report "report-$section" 1100; done
shoot two-knobs two-knobs-plane 1100 plane
shoot two-knobs two-knobs-traces 1750 traces
shoot report report-traces 1750
shoot report report-phases 1300
shoot run "run-traces" 1400
echo "report_e2e: OK; screenshots in $outdir"
