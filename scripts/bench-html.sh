#!/bin/sh
# Size of the HTML report (tscope-report html) on generated jobs, and the
# extra time a headless browser takes to load it (figures, not a timed
# test; docs/html.md quotes them).
#
#   scripts/bench-html.sh [BUILD_DIR]
#
# Cases: 8 ranks x 30 steps, 1,024 ranks x 30 steps (rows in bands), and
# 1,024 ranks x 250 steps (rows and columns in bands: the largest page the
# banding allows).  For each: the page's bytes, cells per heatmap, the
# seconds `tscope-report html` took, and with chromium installed the
# seconds of `chromium --headless --dump-dom` on the page next to the same
# on an empty page (browser start-up included in both; compare the two).
set -eu
BUILD=${1:-build}
REPORT="$BUILD/analyzer/tscope-report"
GEN="$BUILD/tests/analyzer/tsc-gen-job"
for f in "$REPORT" "$GEN"; do
    [ -x "$f" ] || { echo "bench-html: $f not found (build first)" >&2; exit 2; }
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tsc_bench_html_XXXXXX")
trap 'rm -rf "$WORK"' EXIT
BROWSER=$(command -v chromium || true)

now() { date +%s.%N; }
secs() { echo "$1 $2" | awk '{ printf "%.2f", $2 - $1 }'; }
load_time() { # seconds for chromium to load and serialize PAGE
    t0=$(now)
    HOME=$WORK timeout 120 "$BROWSER" --headless --disable-gpu --no-sandbox --no-first-run \
        --user-data-dir="$WORK/profile" --dump-dom "file://$1" >/dev/null 2>&1 || true
    secs "$t0" "$(now)"
}

echo '<!DOCTYPE html><html><body></body></html>' >"$WORK/empty.html"
printf '%-22s %10s %8s %9s %11s %11s\n' case bytes cells html_s browser_s empty_s
for c in 8x30 1024x30 1024x250; do
    ranks=${c%x*} steps=${c#*x}
    "$GEN" -o "$WORK/$c" --ranks "$ranks" --ranks-per-host 8 --steps "$steps" \
        --events-per-step 16 --straggler 5:0.2 >/dev/null
    t0=$(now)
    "$REPORT" html "$WORK/$c" -o "$WORK/$c.html" 2>/dev/null || true
    t1=$(now)
    bytes=$(wc -c <"$WORK/$c.html")
    cells=$(sed -n '/id="heatmap-step"/,/<\/svg>/p' "$WORK/$c.html" | grep -o '</title></rect>' | wc -l)
    b=- e=-
    if [ -n "$BROWSER" ]; then
        b=$(load_time "$WORK/$c.html")
        e=$(load_time "$WORK/empty.html")
    fi
    printf '%-22s %10s %8s %9s %11s %11s\n' "$ranks ranks x $steps steps" "$bytes" "$cells" \
        "$(secs "$t0" "$t1")" "$b" "$e"
done
