#!/bin/sh
# Two analyzer builds side by side in one run, on the same inputs: the full
# report on generated dumps, the report on generated torch.profiler traces,
# the Kineto parse and the cross-rank pass.  Runs are interleaved (old, new,
# old, new, ...) so a change of load on a shared machine hits both; the
# figure to compare is CPU time (user + sys), and the median of the rounds.
#
#   scripts/bench-compare.sh OLD_BUILD NEW_BUILD [ROUNDS=3] [CASES]
#
# Both builds should be release builds (meson setup B -Dbuildtype=release;
# ninja -C B analyzer/tscope-report tests/analyzer/tsc-gen-job
# tests/kineto/tsc-gen-kineto tests/kineto/bench_kineto
# tests/crossrank/bench_crossrank).  CASES (default "8x0.8M 64x1M kineto
# crossrank"): 64x1M writes 2 GB of dumps under $TMPDIR.  Needs /usr/bin/time.
set -eu
old=$(cd "$1" && pwd) new=$(cd "$2" && pwd)
rounds=${3:-3}
cases=${4:-8x0.8M 64x1M kineto crossrank}
work=$(mktemp -d "${TMPDIR:-/tmp}/tsc_bench_cmp_XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -m), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# old: $old"
echo "# new: $new"

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# report CASE DIR EVENTS: rounds of `tscope-report DIR --json` per build
report() {
    name=$1 dir=$2 events=$3
    : >"$work/old.t"
    : >"$work/new.t"
    i=0
    while [ "$i" -lt "$rounds" ]; do
        for b in old new; do
            eval bin=\$$b/analyzer/tscope-report
            /usr/bin/time -f "%U %S %M" -o "$work/t" "$bin" "$dir" --json >"$work/$b.json"
            awk '{ printf "%.3f %d\n", $1 + $2, $3 }' "$work/t" >>"$work/$b.t"
        done
        cmp -s "$work/old.json" "$work/new.json" || echo "$name: the two builds' reports DIFFER"
        i=$((i + 1))
    done
    o=$(cut -d' ' -f1 "$work/old.t" | median) n=$(cut -d' ' -f1 "$work/new.t" | median)
    om=$(cut -d' ' -f2 "$work/old.t" | median) nm=$(cut -d' ' -f2 "$work/new.t" | median)
    awk -v c="$name" -v e="$events" -v o="$o" -v n="$n" -v om="$om" -v nm="$nm" \
        -v ol="$(cut -d' ' -f1 "$work/old.t" | tr '\n' ' ')" -v nl="$(cut -d' ' -f1 "$work/new.t" | tr '\n' ' ')" '
        BEGIN {
            printf "%-22s old %.3f s CPU (%.2fM ev/s, %.1f MiB)  new %.3f s (%.2fM ev/s, %.1f MiB)  new/old %.3f\n",
                c, o, e / o / 1e6, om / 1024, n, e / n / 1e6, nm / 1024, n / o
            printf "%-22s rounds old: %s new: %s\n", "", ol, nl
        }'
}

for c in $cases; do
    case $c in
    8x0.8M | 64x1M)
        if [ "$c" = 8x0.8M ]; then ranks=8 steps=1000; else ranks=64 steps=1250; fi
        "$new/tests/analyzer/tsc-gen-job" -o "$work/$c" --ranks $ranks --steps $steps \
            --events-per-step 1000 --step-ms 50 --stall 0.02 --flops 1e13 --straggler 3:0.1 \
            --truth "$work/truth.json" >/dev/null
        events=$(sed -n 's/.*"events": \([0-9]*\).*/\1/p' "$work/truth.json")
        report "report dumps $c" "$work/$c" "$events"
        rm -rf "${work:?}/$c"
        ;;
    kineto)
        "$new/tests/kineto/tsc-gen-kineto" "$work/k2" 2 4530 20 >/dev/null
        report "report kineto 2 ranks" "$work/k2" 480000
        for b in old new; do
            eval bench=\$$b/tests/kineto/bench_kineto
            f=$(ls "$work"/k2/*.json | head -1)
            echo "kineto parse ($b, best of $rounds): $("$bench" "$f" "$rounds" |
                awk '$1 == "events" || $1 == "best_cpu_s" || $1 == "events_per_cpu_s" { printf "%s %s  ", $1, $2 }')"
        done
        rm -rf "$work/k2"
        ;;
    crossrank)
        # the synthetic job's building and the pass: process CPU time
        : >"$work/old.t"
        : >"$work/new.t"
        i=0
        while [ "$i" -lt "$rounds" ]; do
            for b in old new; do
                eval bench=\$$b/tests/crossrank/bench_crossrank
                /usr/bin/time -f "%U %S %M" -o "$work/t" "$bench" 1000 1000 2 >/dev/null
                awk '{ printf "%.3f %d\n", $1 + $2, $3 }' "$work/t" >>"$work/$b.t"
            done
            i=$((i + 1))
        done
        o=$(cut -d' ' -f1 "$work/old.t" | median) n=$(cut -d' ' -f1 "$work/new.t" | median)
        echo "crossrank 1000x1000x2   old $o s CPU  new $n s  new/old $(awk -v o="$o" -v n="$n" 'BEGIN { printf "%.3f", n / o }')"
        echo "                        rounds old: $(cut -d' ' -f1 "$work/old.t" | tr '\n' ' ') new: $(cut -d' ' -f1 "$work/new.t" | tr '\n' ' ')"
        ;;
    *) echo "bench-compare: unknown case $c" >&2; exit 2 ;;
    esac
done
