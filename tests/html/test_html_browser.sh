#!/bin/sh
# The HTML report in a real browser: Debian's chromium, headless, loads the
# pages of generated dumps (a straggler job, markup in its names) and of
# generated torch.profiler traces from disk.  The DOM it built must hold
# every chart (svg elements by id, the heatmap's cells), no script element,
# and the browser must log no console message (the page's policy blocks
# any script or fetch, and a block is logged there).  A screenshot of each
# page is kept in SHOT_DIR and compared with the one the previous run left:
# a change is reported, not failed (a renderer change is one on purpose).
# Skips (77) without chromium.
#
#   test_html_browser.sh TSCOPE_REPORT TSC_GEN_JOB TSC_GEN_KINETO SHOT_DIR
set -u
report=$1 gen=$2 genk=$3 shots=$4
browser=$(command -v chromium || command -v chromium-browser) || { echo "no chromium"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/tsc_html_browser_XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$shots" || exit 1

"$gen" -o "$T/dumps" --ranks 16 --steps 20 --straggler 5:0.3 \
    --run-id '<script>alert(1)</script>' >/dev/null || fail "tsc-gen-job"
"$genk" "$T/traces" 2 20 5 >/dev/null || fail "tsc-gen-kineto"
sed -i 's#"cutlass_80_wgrad_gemm_kernel"#"<img src=x onerror=alert(3)>wgrad"#' "$T"/traces/*.json

# A fresh profile each run; no first-run dialogs, no background fetches.
run_browser() {
    HOME=$T timeout 90 "$browser" --headless --disable-gpu --no-sandbox --no-first-run \
        --user-data-dir="$T/profile" --disable-background-networking \
        --enable-logging=stderr --v=0 --window-size=1300,2400 "$@"
}

cd "$T" || exit 1
for case in dumps traces; do
    page=$T/$case.html
    # A relative input name: the page, and so the screenshot, is the same
    # from run to run.
    "$report" html "$case" -o "$page" 2>/dev/null || fail "html $case"
    run_browser --dump-dom "file://$page" >"$T/$case.dom" 2>"$T/$case.log" ||
        { tail -5 "$T/$case.log"; fail "$case: chromium did not load the page"; }
    for id in budget-waterfall heatmap-step heatmap-idle blamed-rank kernel-categories \
              collective-sizes memory-over-time; do
        grep -q "<svg id=\"$id\"" "$T/$case.dom" || fail "$case: no svg $id in the DOM"
    done
    grep -q '<aside id="findings">' "$T/$case.dom" || fail "$case: no findings in the DOM"
    grep -qi '<script' "$T/$case.dom" && fail "$case: a script element in the DOM"
    grep -qi '<img' "$T/$case.dom" && fail "$case: an img element in the DOM"
    if grep -q 'CONSOLE' "$T/$case.log"; then
        grep 'CONSOLE' "$T/$case.log" | head -3
        fail "$case: the browser logged console messages"
    fi
    cells=$(sed -n '/<svg id="heatmap-idle"/,/<\/svg>/p' "$T/$case.dom" | grep -o '</title></rect>' | wc -l)
    [ "$cells" -gt 0 ] || fail "$case: no heatmap cells in the DOM"

    shot=$shots/$case.png
    [ -f "$shot" ] && mv "$shot" "$shots/$case.previous.png"
    run_browser --screenshot="$shot" "file://$page" >/dev/null 2>&1 || fail "$case: screenshot"
    [ "$(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
        fail "$case: the screenshot is not a PNG"
    if [ -f "$shots/$case.previous.png" ]; then
        if cmp -s "$shot" "$shots/$case.previous.png"; then
            echo "$case: screenshot same as the previous run's"
        else
            echo "$case: screenshot CHANGED since the previous run: $shot vs $shots/$case.previous.png"
        fi
    else
        echo "$case: screenshot $shot (no previous one)"
    fi
done
echo ok
