#!/bin/sh
# tscope-report html on generated dumps, generated torch.profiler traces
# and, where present, the shared corpus of real traces: every chart is
# there, the waterfall sums to wall exactly, the straggler is the light
# stripe of "time not computing", and names carrying markup (run id,
# device, kernel) come out escaped and inert.
#
#   test_html.sh TSCOPE_REPORT TSC_GEN_JOB TSC_GEN_KINETO [CORPUS_DIR]
set -u
report=$1 gen=$2 genk=$3 corpus=${4:-}
T=$(mktemp -d "${TMPDIR:-/tmp}/tsc_html_XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "$0")/html_checks.sh"

# Dumps: 8 ranks, rank 5 computes 30% longer; markup in the run id and device.
"$gen" -o "$T/g8" --ranks 8 --steps 20 --straggler 5:0.3 \
    --run-id '<script>alert(1)</script>' --device '<img src=x onerror=alert(2)>' >/dev/null ||
    fail "tsc-gen-job"
"$report" html "$T/g8" -o "$T/g8.html" 2>"$T/err" || { cat "$T/err"; fail "html on dumps"; }
grep -q "^wrote $T/g8.html\$" "$T/err" || fail "no 'wrote' line"
has_charts "$T/g8.html"
no_active_content "$T/g8.html"
waterfall_sums "$T/g8.html"
grep -q '<h1>tscope report: run &lt;script&gt;alert(1)&lt;/script&gt;</h1>' "$T/g8.html" ||
    fail "the run id is not escaped in the title"
grep -q 'device &lt;img src=x onerror=alert(2)&gt;' "$T/g8.html" || fail "the device is not escaped"
grep -q 'Time not computing per step: most on rank [0-7] ([0-9.]* ms mean), least on rank 5 ' \
    "$T/g8.html" || fail "the straggler (rank 5) is not the row that waits least"
grep -q '<b>straggler-bound</b>: rank 5 ' "$T/g8.html" || fail "the verdict"
# Rank 5 computes 1.3 times as long as the others (kernel jitter aside).
grep -qE 'Rank 5 computes \+(29\.[5-9]|30\.[0-4])% against the median rank over 18 steps' \
    "$T/g8.html" || fail "the blamed-rank chart does not show rank 5 30% above the median"
[ "$(sed -n '/id="blamed-rank"/,/<\/svg>/p' "$T/g8.html" | grep -c '<polyline')" -eq 2 ] ||
    fail "the blamed-rank chart has not two lines"
grep -q 'class="id">DIST.STRAGGLER</span>' "$T/g8.html" || fail "the straggler finding"
grep -q '<div class="finding cause" id="cause-0"><b>rank 5 ([^)]*), straggler</b>' "$T/g8.html" &&
    grep -q '<br>1\. <b>device</b> explains' "$T/g8.html" ||
    fail "the straggler's cause block (its kernels run 30% longer: device)"
# 8 ranks x 18 analysed steps: one cell each, no bands.
[ "$(sed -n '/id="heatmap-step"/,/<\/svg>/p' "$T/g8.html" | grep -o '</title></rect>' | wc -l)" -eq 144 ] ||
    fail "the step heatmap does not have 8 x 18 cells"
grep -q 'bands, to keep' "$T/g8.html" && fail "8 ranks are banded"
# The same page on stdout, and through report --html.
"$report" html "$T/g8" -o - >"$T/stdout.html" 2>/dev/null || fail "html -o -"
cmp -s "$T/g8.html" "$T/stdout.html" || fail "-o - differs from the file"
"$report" "$T/g8" --html >"$T/rep.html" 2>/dev/null || fail "report --html"
cmp -s "$T/g8.html" "$T/rep.html" || fail "report --html differs from html -o"

# The blamed rank's own timeline: rank 5 (30% more compute) against the
# median rank (ranks 0-4, 6, 7 compute alike, so the middle one by index,
# rank 3), in a job whose steps open with a 10 ms data stall.  Step 122.5
# ms: stall 10, compute 75 (97.5 on rank 5), the bucket AllReduces from 15
# ms before compute ends to the last rank's end (107.5) plus 15 ms; the
# axis 0-150 ms over 590 px.
"$gen" -o "$T/g8s" --ranks 8 --steps 12 --straggler 5:0.3 --stall 0.1 >/dev/null ||
    fail "tsc-gen-job stall"
"$report" html "$T/g8s" -o "$T/g8s.html" 2>/dev/null || fail "html on the stall job"
sed -n '/id="rank-timeline"/,/<\/svg>/p' "$T/g8s.html" >"$T/tl.svg"
for lane in 5:kernels 5:comm 5:idle 3:kernels 3:comm 3:idle; do
    grep -q "<g class=\"lane\" data-rank=\"${lane%%:*}\" data-lane=\"${lane#*:}\">" "$T/tl.svg" ||
        fail "timeline: no lane $lane"
done
[ "$(grep -c '<g class="lane"' "$T/tl.svg")" -eq 6 ] || fail "timeline: not 6 lanes"
grep -q 'Step 2, rank 5&#39;s median step: rank 5 computes 97.5 ms, 15.0 ms in collectives not hidden by compute, 10.0 ms GPU idle; the median rank 3 computes 75.0 ms, 37.5 ms in collectives not hidden by compute, 10.0 ms GPU idle.' \
    "$T/g8s.html" || fail "timeline: the reading"
# The stall: 10 ms idle from the step's start on both ranks, then the
# step's 1 us input copy (the generator's evidence of input work, issue 38;
# the timeline draws no copy lane): 590 x 10.001/150 px.
[ "$(grep -c '<rect class="idle" x="150.00" y="[0-9]*" width="39.34" height="16"><title>GPU idle 0.000-10.001 ms' "$T/tl.svg")" -eq 2 ] ||
    fail "timeline: the 10 ms stall is not idle on both ranks"
# NCCL: rank 5 from 92.5 to 122.5 ms, rank 3 from 70 to 122.5 ms (it waits).
grep -q '<rect class="comm" x="513.83" y="40" width="118.00" height="16"><title>NCCL 92.500-122.500 ms' "$T/tl.svg" ||
    fail "timeline: rank 5's NCCL span"
grep -q '<rect class="comm" x="425.33" y="116" width="206.50" height="16"><title>NCCL 70.000-122.500 ms' "$T/tl.svg" ||
    fail "timeline: rank 3's NCCL span (waiting for rank 5)"
# Kernels by category, each run a whole pixel column; the optimizer kernel last.
grep -q '<rect class="k6" x="[0-9]*" y="20" width="[0-9]*" height="16"><title>optimizer [0-9.]*-107.542 ms' "$T/tl.svg" ||
    fail "timeline: rank 5's kernels do not end with the optimizer at 107.5 ms"
grep -q '<text class="unit" x="445" y="[0-9]*" text-anchor="middle">ms since the step began</text>' "$T/tl.svg" &&
    grep -q '>150</text>' "$T/tl.svg" || fail "timeline: the axis"

grep -q 'No device memory records in this input.' "$T/g8.html" || fail "memory: no records said"

# Device memory: 2 GiB at start, a 256 MiB pool, rank 1 leaks 16 MiB a step.
"$gen" -o "$T/mem" --ranks 4 --steps 24 --mem-base 2048 --mem-leak 16@1 --mem-churn 64 \
    --mem-pool 256 --mem-total 81559 --mem-free 80000 >/dev/null || fail "tsc-gen-job mem"
"$report" html "$T/mem" -o "$T/mem.html" 2>/dev/null || fail "html on the memory job"
grep -q 'Rank 1 peaks at 2.69 GiB of 78.12 GiB it could hold (3.4%); it grows 16.0 MiB per step.' \
    "$T/mem.html" || fail "memory: rank 1's peak and growth"
[ "$(sed -n '/id="memory-over-time"/,/<\/svg>/p' "$T/mem.html" | grep -c '<polyline')" -eq 2 ] ||
    fail "memory: not two lines (highest and lowest peak)"

# Two runs on one page: the budget pairs and every row of the diff, the
# line that changed most the same as the JSON diff's.
"$report" diff "$T/g8" "$T/mem" --html >"$T/diff.html" 2>/dev/null || fail "diff --html"
no_active_content "$T/diff.html"
grep -q '<svg id="diff-budget"' "$T/diff.html" && grep -q '<table id="diff-rows">' "$T/diff.html" ||
    fail "diff --html: no budget chart or rows table"
most=$("$report" diff "$T/g8" "$T/mem" --json 2>/dev/null | sed -n 's/^[[:space:]]*"text":[[:space:]]*"\(.*\)"$/\1/p')
[ -n "$most" ] && grep -qF "$most" "$T/diff.html" || fail "diff --html: the changed-most line '$most'"
grep -q 'device &lt;img src=x onerror=alert(2)&gt;' "$T/diff.html" || fail "diff --html: device not escaped"
[ "$(sed -n '/id="diff-budget"/,/<\/svg>/p' "$T/diff.html" | grep -o '<rect ' | wc -l)" -eq 16 ] ||
    fail "diff --html: not two bars for each of the 8 budget lines"

# 200 ranks: rows in bands of 4, said in the chart.
"$gen" -o "$T/g200" --ranks 200 --steps 8 --events-per-step 16 >/dev/null || fail "tsc-gen-job 200"
"$report" html "$T/g200" -o "$T/g200.html" 2>/dev/null || fail "html on 200 ranks"
grep -q 'Each row is the mean of 4 ranks and each column of 1 step (bands' "$T/g200.html" ||
    fail "200 ranks are not said to be in bands of 4"
grep -q '>ranks 196-199, step ' "$T/g200.html" || fail "the last band is not ranks 196-199"
waterfall_sums "$T/g200.html"

# Usage errors.
"$report" html "$T/g8" 2>/dev/null
[ $? -eq 2 ] || fail "html without -o"
"$report" html "$T/nowhere" -o "$T/x.html" 2>/dev/null
[ $? -eq 2 ] || fail "html on a missing directory"
[ -e "$T/x.html" ] && fail "a page was written for a missing directory"
"$report" html --help | grep -q 'tscope-report html DIR -o FILE' || fail "html --help"

# torch.profiler traces, a kernel name carrying a script tag.
"$genk" "$T/k2" 2 20 5 >/dev/null || fail "tsc-gen-kineto"
sed -i 's#"cutlass_80_wgrad_gemm_kernel"#"<script>alert(3)</script>wgrad"#' "$T"/k2/*.json
"$report" html "$T/k2" -o "$T/k2.html" 2>/dev/null || fail "html on traces"
has_charts "$T/k2.html"
no_active_content "$T/k2.html"
waterfall_sums "$T/k2.html"
grep -q '<td class="name">&lt;script&gt;alert(3)&lt;/script&gt;wgrad</td>' "$T/k2.html" ||
    fail "the kernel name is not escaped in the kernel table"
grep -q 'vectorized_elementwise_kernel&lt;4&gt;' "$T/k2.html" || fail "template brackets not escaped"

# Real traces recorded by others (the shared corpus next to the source
# tree, or TSC_GOLDEN_CORPUS=DIR as for the golden outputs).
n=0
[ -d "$corpus" ] || corpus=${TSC_GOLDEN_CORPUS:-}
if [ -n "$corpus" ] && [ -d "$corpus" ]; then
    for d in "$corpus"/*/; do
        name=$(basename "$d")
        "$report" html "$d" -o "$T/c_$name.html" 2>/dev/null
        rc=$?
        [ $rc -le 1 ] || fail "html on $d: exit status $rc"
        has_charts "$T/c_$name.html"
        no_active_content "$T/c_$name.html"
        waterfall_sums "$T/c_$name.html"
        n=$((n + 1))
    done
fi
echo "ok ($n corpus pages)"
