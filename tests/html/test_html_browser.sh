#!/bin/sh
# The HTML report in a real browser: Debian's chromium, headless, loads the
# pages of generated dumps (a straggler job, markup in its names) and of
# generated torch.profiler traces from disk.  The DOM it built must hold
# every chart (svg elements by id, the heatmap's cells), no script element,
# and the browser must log no console message (the page's policy blocks
# any script or fetch, and a block is logged there).  The fleet page of
# batch --html loads the same way.
#
# Screenshots: the first run keeps one per page in SHOT_DIR; later runs
# fail when theirs differs from it beyond the tolerance (a pixel differs
# when a colour channel moves by more than 16 of 255; at most 0.01% of the
# pixels may, 312 of 1300 x 2400: the same page renders to the same pixels
# here, and one recoloured bar is several times that).  The new screenshot
# is left beside it as NAME.new.png; after a change on purpose, accept it
# with TSC_SCREENSHOT_ACCEPT=1 (or remove SHOT_DIR).  Each run also checks
# the comparison itself: the page with its wall bar recoloured must be
# found different.  Skips (77) without chromium.
#
#   test_html_browser.sh TSCOPE_REPORT TSC_GEN_JOB TSC_GEN_KINETO SHOT_DIR PNG_DIFF
set -u
report=$1 gen=$2 genk=$3 shots=$4 pngdiff=$5
tol=16 share=0.0001
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

# shoot NAME PAGE: a screenshot of PAGE as $T/NAME.png, compared with the
# kept one (kept as the reference when there is none, or when accepting).
shoot() {
    run_browser --screenshot="$T/$1.png" "file://$2" >/dev/null 2>&1 || fail "$1: screenshot"
    [ "$(head -c 8 "$T/$1.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
        fail "$1: the screenshot is not a PNG"
    ref=$shots/$1.png
    if [ ! -f "$ref" ] || [ "${TSC_SCREENSHOT_ACCEPT:-0}" = 1 ]; then
        cp "$T/$1.png" "$ref" || exit 1
        rm -f "$shots/$1.new.png"
        echo "$1: screenshot kept as the reference: $ref"
        return
    fi
    "$pngdiff" "$ref" "$T/$1.png" $tol $share >"$T/$1.diff"
    rc=$?
    if [ $rc -eq 0 ]; then
        echo "$1: screenshot as the reference: $(cat "$T/$1.diff")"
        rm -f "$shots/$1.new.png"
    else
        cat "$T/$1.diff"
        cp "$T/$1.png" "$shots/$1.new.png"
        fail "$1: the screenshot differs from $ref (new one: $shots/$1.new.png; if on purpose, rerun with TSC_SCREENSHOT_ACCEPT=1)"
    fi
}

cd "$T" || exit 1
for case in dumps traces; do
    page=$T/$case.html
    # A relative input name: the page, and so the screenshot, is the same
    # from run to run.
    "$report" html "$case" -o "$page" 2>/dev/null || fail "html $case"
    run_browser --dump-dom "file://$page" >"$T/$case.dom" 2>"$T/$case.log" ||
        { tail -5 "$T/$case.log"; fail "$case: chromium did not load the page"; }
    for id in budget-waterfall heatmap-step heatmap-idle blamed-rank rank-timeline kernel-categories \
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

    shoot "$case" "$page"
    if [ "$case" = dumps ]; then
        # The comparison must see a real difference: the wall bar recoloured.
        sed '0,/class="wall"/s//class="loss"/' "$page" >"$T/mutant.html"
        cmp -s "$page" "$T/mutant.html" && fail "no wall bar to recolour"
        run_browser --screenshot="$T/mutant.png" "file://$T/mutant.html" >/dev/null 2>&1 ||
            fail "mutant: screenshot"
        "$pngdiff" "$T/$case.png" "$T/mutant.png" $tol $share >"$T/mutant.txt"
        [ $? -eq 1 ] || { cat "$T/mutant.txt"; fail "a recoloured bar is within the tolerance"; }
    fi
done

# The fleet page: two jobs with the straggler on the same host.
mkdir "$T/fleet" || exit 1
for j in a b; do
    "$gen" -o "$T/fleet/$j" --ranks 4 --steps 10 --straggler 1:0.3 >/dev/null || fail "tsc-gen-job $j"
done
"$report" batch fleet -q --no-write --html "$T/fleet.html" >/dev/null 2>&1 || fail "batch --html"
run_browser --dump-dom "file://$T/fleet.html" >"$T/fleet.dom" 2>"$T/fleet.log" ||
    fail "fleet: chromium did not load the page"
for id in fleet-hosts fleet-jobs; do
    grep -q "<svg id=\"$id\"" "$T/fleet.dom" || fail "fleet: no svg $id in the DOM"
done
grep -q '<table id="fleet-rows">' "$T/fleet.dom" || fail "fleet: no rows table in the DOM"
grep -q 'CONSOLE' "$T/fleet.log" && fail "fleet: the browser logged console messages"
shoot fleet "$T/fleet.html"
echo ok
