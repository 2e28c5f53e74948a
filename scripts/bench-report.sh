#!/bin/sh
# Benchmark of tscope-report on generated jobs (figures, not a timed test).
#
#   scripts/bench-report.sh [BUILD_DIR] [CASE...]
#
# BUILD_DIR (default: build) must hold analyzer/tscope-report and
# tests/analyzer/tsc-gen-job; build it optimised (docs/benchmarks-analyzer.md
# says which buildtype each of its tables used).
# Cases: 64x1M (64 ranks x ~1M events each) and 1000x100k (1,000 ranks x
# ~100k events each); default: both.  Needs /usr/bin/time (Debian package
# "time") and about 2x the dump size of free disk under $TMPDIR (default
# /tmp).  For each case it prints: events, dump bytes, wall and user
# seconds of the full report (--json), events per second, peak RSS and
# RSS / dump size, and the load average just before the report (the machine
# may be shared: CPU seconds are the figure to compare).
set -eu
BUILD=${1:-build}
[ $# -gt 0 ] && shift
CASES=${*:-64x1M 1000x100k}
REPORT="$BUILD/analyzer/tscope-report"
GEN="$BUILD/tests/analyzer/tsc-gen-job"
for f in "$REPORT" "$GEN" /usr/bin/time; do
    [ -x "$f" ] || { echo "bench-report: $f not found (build first; apt-get install time)" >&2; exit 2; }
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tsc_bench_XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# Events per step requested from the generator: it writes about 0.8 of it
# (kernels come with their launch records), so 1,250 steps of 1,000 give
# about 1M events per rank.
run_case() {
    name=$1 ranks=$2 steps=$3
    dir="$WORK/$name"
    "$GEN" -o "$dir" --ranks "$ranks" --steps "$steps" --events-per-step 1000 \
        --step-ms 50 --stall 0.02 --flops 1e13 --straggler 3:0.1 --truth "$WORK/truth.json"
    events=$(sed -n 's/.*"events": \([0-9]*\).*/\1/p' "$WORK/truth.json")
    bytes=$(sed -n 's/.*"bytes": \([0-9]*\).*/\1/p' "$WORK/truth.json")
    sync
    load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
    /usr/bin/time -v "$REPORT" "$dir" --json >"$WORK/report.json" 2>"$WORK/time.txt" || {
        echo "bench-report: tscope-report failed:" >&2; cat "$WORK/time.txt" >&2; exit 1; }
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$WORK/time.txt")
    user=$(sed -n 's/.*User time (seconds): //p' "$WORK/time.txt")
    sys=$(sed -n 's/.*System time (seconds): //p' "$WORK/time.txt")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/time.txt")
    echo "$name load average before the report: $load"
    awk -v n="$name" -v e="$events" -v b="$bytes" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" '
        BEGIN {
            k = split(w, p, ":"); sec = 0
            for (i = 1; i <= k; i++) sec = sec * 60 + p[i]
            cpu = u + s
            printf "%-10s events %d  dumps %.1f MiB  wall %.2f s  cpu %.2f s (user %.2f)\n", n, e, b / 1048576, sec, cpu, u
            printf "%-10s %.2f M events/s (wall), %.2f M events/s (cpu)  peak RSS %.1f MiB = %.2f x dump size\n", n, e / sec / 1e6, e / cpu / 1e6, r / 1024, r * 1024 / b
        }'
    rm -rf "$dir"
}

for c in $CASES; do
    case $c in
    64x1M) run_case 64x1M 64 1250 ;;
    1000x100k) run_case 1000x100k 1000 125 ;;
    *) echo "bench-report: unknown case $c" >&2; exit 2 ;;
    esac
done
