#!/bin/sh
# The streaming report against the in-memory path (--in-memory), side by
# side in one run on the same dumps: wall, CPU and peak RSS of
# `tscope-report DIR --json`, rounds interleaved (in-memory, streaming,
# in-memory, ...) so a change of load on a shared machine hits both, and
# the two JSON reports compared on every round (figures, not a timed test).
#
#   scripts/bench-stream.sh [BUILD_DIR=build-rel] [ROUNDS=3] [CASES] [BASE_BUILD]
#
# BASE_BUILD (optional): a release build of the tree before streaming
# (git archive fbf8a69), whose plain `tscope-report DIR --json` is run too
# and its JSON compared: the figures "before this change".
# BUILD_DIR: a release build (meson setup build-rel -Dbuildtype=release;
# ninja -C build-rel analyzer/tscope-report tests/analyzer/tsc-gen-job).
# CASES (default "small 256x1000"):
#   small      8 ranks x 40 steps x ~16k events per step (~5M events)
#   256x1000   256 ranks x 1,000 steps x ~51 events per step (the
#              generator's default 64 asked; about 0.8 of it is written)
#   RxS        R ranks x S steps, same shape (e.g. 2048x1000); when its
#              dumps exceed half the machine's memory the in-memory path is
#              not run (it would not fit) and only the streaming path is
# Also prints, per case, the dumps' read speed (`cat` to /dev/null: what the
# disk, or the page cache, gives right before the report) and the
# generator's time.  Needs /usr/bin/time and 1.2x the dumps of free disk
# under $TMPDIR.
set -eu
BUILD=$(cd "${1:-build-rel}" && pwd)
ROUNDS=${2:-3}
CASES=${3:-small 256x1000}
BASE=${4:+$(cd "$4" && pwd)/analyzer/tscope-report}
REPORT="$BUILD/analyzer/tscope-report"
GEN="$BUILD/tests/analyzer/tsc-gen-job"
for f in "$REPORT" "$GEN" /usr/bin/time; do
    [ -x "$f" ] || { echo "bench-stream: $f not found (build first; apt-get install time)" >&2; exit 2; }
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tsc_bench_stream_XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mem_kb=$(awk '/MemTotal/ { print $2 }' /proc/meminfo)
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -m), $(nproc) cores, $((mem_kb / 1024)) MiB, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $REPORT"

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# run NAME DIR OPTIONS...: one report, appends "wall cpu rss_kb" to $WORK/NAME.t
run() {
    name=$1 dir=$2
    shift 2
    bin=$REPORT
    [ "$name" = base ] && bin=$BASE
    /usr/bin/time -f "%e %U %S %M" -o "$WORK/t" "$bin" "$dir" --json "$@" >"$WORK/$name.json" ||
        { echo "bench-stream: tscope-report $* failed" >&2; exit 1; }
    awk '{ printf "%.2f %.2f %d\n", $1, $2 + $3, $4 }' "$WORK/t" >>"$WORK/$name.t"
}

# col NAME K: median of column K of NAME's rounds
col() { awk -v k="$2" '{ print $k }' "$WORK/$1.t" | median; }
rounds() { awk -v k="$2" '{ printf "%s%s", sep, $k; sep = " " }' "$WORK/$1.t"; }

bench() {
    name=$1 ranks=$2 steps=$3 eps=$4
    dir="$WORK/$name"
    t0=$(date +%s.%N)
    "$GEN" -o "$dir" --ranks "$ranks" --ranks-per-host 8 --steps "$steps" \
        --events-per-step "$eps" --flops 1e12 --straggler 3:0.2 --truth "$WORK/truth.json" >/dev/null
    t1=$(date +%s.%N)
    bytes=$(du -sb "$dir" | cut -f1)
    events=$(sed -n 's/.*"events": \([0-9]*\).*/\1/p' "$WORK/truth.json")
    t2=$(date +%s.%N)
    cat "$dir"/*.tsd >/dev/null
    t3=$(date +%s.%N)
    echo "$name: $ranks ranks x $steps steps, $events events, $(awk -v b="$bytes" 'BEGIN { printf "%.1f MiB", b / 1048576 }') of dumps; generated in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f s", b - a }'); read (cat) at $(awk -v b="$bytes" -v a="$t2" -v c="$t3" 'BEGIN { printf "%.0f MiB/s", b / 1048576 / (c - a) }')"
    rm -f "$WORK"/base.t "$WORK"/old.t "$WORK"/new.t "$WORK"/new1.t
    old=1
    [ "$bytes" -gt $((mem_kb * 512)) ] && old=0
    i=0
    while [ "$i" -lt "$ROUNDS" ]; do
        [ $old = 1 ] && [ -n "$BASE" ] && run base "$dir"
        [ $old = 1 ] && run old "$dir" --in-memory
        run new "$dir"
        run new1 "$dir" --jobs 1
        if [ $old = 1 ]; then
            cmp -s "$WORK/old.json" "$WORK/new.json" || echo "$name: streaming and in-memory JSON DIFFER"
        fi
        cmp -s "$WORK/new1.json" "$WORK/new.json" || echo "$name: --jobs 1 and default JSON DIFFER"
        if [ $old = 1 ] && [ -n "$BASE" ]; then
            cmp -s "$WORK/base.json" "$WORK/new.json" || echo "$name: base build and streaming JSON DIFFER"
        fi
        i=$((i + 1))
    done
    printf '  %-26s %9s %9s %11s   %s\n' path "wall s" "cpu s" "peak MiB" "rounds (wall s / peak MiB)"
    for p in base old new new1; do
        [ -s "$WORK/$p.t" ] || continue
        case $p in base) label="before (base build)";; old) label="--in-memory";; new) label="streaming, --jobs $(nproc)";; new1) label="streaming, --jobs 1";; esac
        printf '  %-26s %9.2f %9.2f %11.1f   %s / %s\n' "$label" "$(col $p 1)" "$(col $p 2)" \
            "$(col $p 3 | awk '{ print $1 / 1024 }')" "$(rounds $p 1)" \
            "$(awk '{ printf "%s%.0f", sep, $3 / 1024; sep = " " }' "$WORK/$p.t")"
    done
    if [ -s "$WORK/base.t" ]; then
        awk -v bw="$(col base 1)" -v bc="$(col base 2)" -v brss="$(col base 3)" -v nw="$(col new 1)" \
            -v nc="$(col new 2)" -v nrss="$(col new 3)" -v n1w="$(col new1 1)" -v n1c="$(col new1 2)" \
            -v n1rss="$(col new1 3)" 'BEGIN {
            printf "  streaming / before: wall %.2f, cpu %.2f, peak RSS %.2f (--jobs 1: wall %.2f, cpu %.2f, peak RSS %.2f)\n",
                nw / bw, nc / bc, nrss / brss, n1w / bw, n1c / bc, n1rss / brss }'
    fi
    if [ $old = 1 ]; then
        awk -v ow="$(col old 1)" -v nw="$(col new 1)" -v orss="$(col old 3)" -v nrss="$(col new 3)" \
            -v n1w="$(col new1 1)" -v n1rss="$(col new1 3)" 'BEGIN {
            printf "  streaming / in-memory: wall %.2f (--jobs 1: %.2f), peak RSS %.2f (--jobs 1: %.2f)\n",
                nw / ow, n1w / ow, nrss / orss, n1rss / orss }'
    else
        echo "  in-memory not run: $((bytes / 1048576)) MiB of dumps > half of $((mem_kb / 1024)) MiB"
    fi
    awk -v b="$bytes" -v w="$(col new 1)" -v r="$(col new 3)" -v n="$ranks" 'BEGIN {
        printf "  streaming: %.0f MiB/s of dumps analysed; peak RSS %.1f KiB per rank\n", b / 1048576 / w, r / n }'
    rm -rf "$dir"
}

for c in $CASES; do
    case $c in
    small) bench small 8 40 20000 ;;
    *x*) bench "$c" "${c%x*}" "${c#*x}" 64 ;;
    *) echo "bench-stream: unknown case $c" >&2; exit 2 ;;
    esac
done
