#!/bin/sh
# The streaming report against the in-memory path (--in-memory) and, when
# given, a build of the tree before streaming, side by side in one run on
# the same dumps (or torch.profiler traces): wall, CPU (user + system) and peak RSS of
# `tscope-report DIR --json`, rounds interleaved (before, in-memory,
# streaming, ...) so a change of load on a shared machine hits all, and the
# JSON reports compared on every round (figures, not a timed test).
#
#   scripts/bench-stream.sh [BUILD_DIR=build-rel] [ROUNDS=3] [CASES] [BASE_BUILD]
#
# BUILD_DIR: a release build (meson setup build-rel -Dbuildtype=release;
# ninja -C build-rel analyzer/tscope-report tests/analyzer/tsc-gen-job
# tests/kineto/tsc-gen-kineto).
# BASE_BUILD (optional): a release build of the tree before streaming
# (git archive fbf8a69), whose plain `tscope-report DIR --json` is run too:
# the figures "before" (its JSON is not compared: changes merged since
# move some outputs).  Streaming is forced (--stream-above 0); on a job
# small enough to be held whole by default the default path runs too.
# CASES (default "small 256x1000"):
#   small      8 ranks x 40 steps x ~16k events per step (~5M events)
#   RxS        R ranks x S steps x the generator's default 64 events a step
#              asked (~58 written), 4 AllReduces a step (256x1000,
#              2048x1000, 10240x1000: issue 27's target, ~18 GiB)
#   kRxSxP     R torch.profiler traces (tsc-gen-kineto) x S steps x P extra
#              kernels a step (k32x200x200: 451 MiB of JSON)
#   RxS+light  the same with the NCCL profiler plugin's records of light
#              capture (the preload's default: one per collective); run
#              after RxS, it prints what they cost per rank: the peak RSS
#              difference over the ranks, per path (--jobs 1 allocates in
#              the same order every run: its figure is the exact one)
# A path that is run only when it fits: the in-memory path and BASE when
# the dumps are under half the machine's memory, --jobs 1 under 4 GiB of
# dumps (it would take as long again).
#
# Per case it also prints the dumps' read speed: cold (each dump dropped
# from the page cache first with `dd iflag=nocache count=0`, which needs no
# privilege; where that does nothing the figure is the cache's) and warm,
# `cat` to /dev/null; the load average before and after; and the streaming
# run's phases (TSCOPE_STREAM_TIMING=1): the loading and stage 3 run on
# --jobs threads, the job-level passes on one, from which the wall time on
# idle cores is projected.
#
# BENCH_KEEP=DIR: generated jobs are kept in DIR/<case> and reused by later
# runs (a 10,240-rank job takes minutes to write); otherwise they are made
# under $TMPDIR and deleted.  Needs /usr/bin/time, and 1.2x the dumps of
# free disk.
set -eu
BUILD=$(cd "${1:-build-rel}" && pwd)
ROUNDS=${2:-3}
CASES=${3:-small 256x1000}
BASE=${4:+$(cd "$4" && pwd)/analyzer/tscope-report}
REPORT="$BUILD/analyzer/tscope-report"
GEN="$BUILD/tests/analyzer/tsc-gen-job"
KGEN="$BUILD/tests/kineto/tsc-gen-kineto"
for f in "$REPORT" "$GEN" /usr/bin/time; do
    [ -x "$f" ] || { echo "bench-stream: $f not found (build first; apt-get install time)" >&2; exit 2; }
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tsc_bench_stream_XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mem_kb=$(awk '/MemTotal/ { print $2 }' /proc/meminfo)
cores=$(nproc)
load() { cut -d' ' -f1-3 /proc/loadavg; }
TSA_STREAM_ABOVE_MB=256   # driver/stream.h: smaller jobs are held whole by default
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -m), $cores cores, $((mem_kb / 1024)) MiB, load $(load)"
echo "# $REPORT"

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# run PATH DIR OPTIONS...: one report, appends "wall cpu rss_kb" to $WORK/PATH.t
run() {
    path=$1 rdir=$2
    shift 2
    bin=$REPORT
    [ "$path" = base ] && bin=$BASE
    TSCOPE_STREAM_TIMING=1 /usr/bin/time -f "%e %U %S %M" -o "$WORK/t" "$bin" "$rdir" --json "$@" \
        >"$WORK/$path.json" 2>"$WORK/$path.err" ||
        { cat "$WORK/$path.err" >&2; echo "bench-stream: tscope-report $* failed" >&2; exit 1; }
    awk '{ printf "%.2f %.2f %d\n", $1, $2 + $3, $4 }' "$WORK/t" >>"$WORK/$path.t"
    sed -n 's/^tscope-report: stream timing (wall s \/ CPU s): //p' "$WORK/$path.err" >>"$WORK/$path.phases"
}

# col NAME K: median of column K of NAME's rounds
col() { awk -v k="$2" '{ print $k }' "$WORK/$1.t" | median; }
rounds() { awk -v k="$2" '{ printf "%s%s", sep, $k; sep = " " }' "$WORK/$1.t"; }

# read_speed DIR BYTES: cold and warm `cat` of the dumps (or traces)
read_speed() {
    sync "$1"/* 2>/dev/null || sync   # dirty pages (a job just written) cannot be dropped
    for f in "$1"/*; do dd if="$f" iflag=nocache count=0 status=none 2>/dev/null || true; done
    t=$(now)
    cat "$1"/* >/dev/null
    cold=$(since "$t")
    t=$(now)
    cat "$1"/* >/dev/null
    warm=$(since "$t")
    awk -v b="$2" -v c="$cold" -v w="$warm" 'BEGIN {
        printf "  read (cat): cold %.1f s, %.0f MiB/s; warm %.1f s, %.0f MiB/s\n",
            c, b / 1048576 / c, w, b / 1048576 / w }'
    echo "$cold" >"$WORK/cold"
}

# bench NAME RANKS STEPS EVENTS_PER_STEP [--kineto PAD | GENERATOR OPTIONS]: traces or dumps
bench() {
    name=$1 ranks=$2 steps=$3 eps=$4
    shift 4   # traces: --kineto PAD; dumps: the generator's further options
    pad= what=dumps
    if [ "${1:-}" = --kineto ]; then
        pad=$2 what=traces
        shift 2
    fi
    dir="$WORK/$name"
    [ -n "${BENCH_KEEP:-}" ] && mkdir -p "$BENCH_KEEP" && dir="$BENCH_KEEP/$name"
    gen="reused"
    if [ ! -s "$dir.complete" ]; then
        rm -rf "$dir"
        t0=$(now)
        if [ -n "$pad" ]; then
            [ -x "$KGEN" ] || { echo "bench-stream: $KGEN not found" >&2; exit 2; }
            "$KGEN" "$dir" "$ranks" "$steps" "$pad" >/dev/null
        else
            "$GEN" -o "$dir" --ranks "$ranks" --ranks-per-host 8 --steps "$steps" \
                --events-per-step "$eps" --flops 1e12 --straggler 3:0.2 --truth "$dir.truth.json" \
                "$@" >/dev/null
        fi
        gen="generated in $(since "$t0") s"
        echo ok >"$dir.complete"
    fi
    bytes=$(du -sbL "$dir" | cut -f1)
    events="$(sed -n 's/.*"events": \([0-9]*\).*/\1/p' "$dir.truth.json" 2>/dev/null || echo "?") events"
    [ -n "$pad" ] && events="$pad extra kernels a step"
    echo "$name: $ranks ranks x $steps steps, $events, $(awk -v b="$bytes" 'BEGIN { printf "%.1f MiB", b / 1048576 }') of $what ($gen); load $(load)"
    read_speed "$dir" "$bytes"
    rm -f "$WORK"/base.* "$WORK"/old.* "$WORK"/new.* "$WORK"/new1.* "$WORK"/dflt.*
    old=1 one=1 dflt=0
    [ "$bytes" -le $((TSA_STREAM_ABOVE_MB << 20)) ] && dflt=1
    [ "$bytes" -gt $((mem_kb * 512)) ] && old=0
    [ "$bytes" -gt $((4 << 30)) ] && one=0
    i=0
    while [ "$i" -lt "$ROUNDS" ]; do
        [ $old = 1 ] && [ -n "$BASE" ] && run base "$dir"
        [ $old = 1 ] && run old "$dir" --in-memory
        [ $dflt = 1 ] && run dflt "$dir"
        run new "$dir" --stream-above 0
        [ $one = 1 ] && run new1 "$dir" --jobs 1 --stream-above 0
        if [ $old = 1 ]; then
            cmp -s "$WORK/old.json" "$WORK/new.json" || echo "$name: streaming and in-memory JSON DIFFER"
        fi
        if [ $one = 1 ]; then
            cmp -s "$WORK/new1.json" "$WORK/new.json" || echo "$name: --jobs 1 and --jobs $cores JSON DIFFER"
        fi
        if [ $dflt = 1 ]; then
            cmp -s "$WORK/dflt.json" "$WORK/new.json" || echo "$name: default and streaming JSON DIFFER"
        fi
        i=$((i + 1))
    done
    printf '  %-26s %9s %9s %11s   %s\n' path "wall s" "cpu s" "peak MiB" "rounds (wall s / peak MiB)"
    for p in base old dflt new new1; do
        [ -s "$WORK/$p.t" ] || continue
        case $p in base) label="before (base build)";; old) label="--in-memory";;
        dflt) label="default (held whole)";; new) label="streaming, --jobs $cores";;
        new1) label="streaming, --jobs 1";; esac
        printf '  %-26s %9.2f %9.2f %11.1f   %s / %s\n' "$label" "$(col $p 1)" "$(col $p 2)" \
            "$(col $p 3 | awk '{ print $1 / 1024 }')" "$(rounds $p 1)" \
            "$(awk '{ printf "%s%.0f", sep, $3 / 1024; sep = " " }' "$WORK/$p.t")"
    done
    if [ -s "$WORK/base.t" ]; then
        awk -v bw="$(col base 1)" -v bc="$(col base 2)" -v brss="$(col base 3)" -v nw="$(col new 1)" \
            -v nc="$(col new 2)" -v nrss="$(col new 3)" 'BEGIN {
            printf "  streaming / before: wall %.2f, cpu %.2f, peak RSS %.2f\n", nw / bw, nc / bc, nrss / brss }'
    fi
    if [ -s "$WORK/dflt.t" ]; then
        awk -v ow="$(col old 1)" -v oc="$(col old 2)" -v dw="$(col dflt 1)" -v dc="$(col dflt 2)" 'BEGIN {
            printf "  default / in-memory (%d MiB of dumps or less are held whole): wall %.2f, cpu %.2f\n",
                '"$TSA_STREAM_ABOVE_MB"', dw / ow, dc / oc }'
    fi
    if [ $old = 1 ]; then
        awk -v ow="$(col old 1)" -v oc="$(col old 2)" -v nw="$(col new 1)" -v nc="$(col new 2)" \
            -v orss="$(col old 3)" -v nrss="$(col new 3)" 'BEGIN {
            printf "  streaming / in-memory: wall %.2f, cpu %.2f, peak RSS %.2f\n", nw / ow, nc / oc, nrss / orss }'
    else
        echo "  in-memory not run: $((bytes / 1048576)) MiB of dumps > half of $((mem_kb / 1024)) MiB"
    fi
    echo "  streaming phases (wall s / CPU s), last round: $(tail -n 1 "$WORK/new.phases")"
    # Projection on idle cores: the threaded phases' CPU shared by the
    # cores, the job-level passes on one, or the two reads of the dumps
    # from a cold disk if slower.
    tail -n 1 "$WORK/new.phases" | awk -v cores="$cores" -v b="$bytes" -v cold="$(cat "$WORK/cold")" \
        -v w="$(col new 1)" -v r="$(col new 3)" -v n="$ranks" '{
        for (i = 1; i <= NF; i++) {
            if ($i == "load") lc = $(i + 3);
            if ($i == "3") pc = $(i + 3);
            if ($i == "output") jc = $(i + 3);
        }
        par = (lc + pc) / cores;
        printf "  projected wall on %d idle cores: %.1f s (threaded phases %.1f CPU s / %d + job-level %.1f CPU s); the dumps read twice cold: %.1f s\n",
            cores, par + jc, lc + pc, cores, jc, 2 * cold
        printf "  streaming: %.0f MiB/s of dumps analysed; peak RSS %.1f KiB per rank; load %s\n",
            b / 1048576 / w, r / n, "'"$(load)"'"
    }'
    for p in base old new new1; do
        [ -s "$WORK/$p.t" ] && echo "$(col $p 3)" >"$WORK/$name.$p.rss"
    done
    per_rank_delta "$name" "$ranks"
    [ -z "${BENCH_KEEP:-}" ] && rm -rf "$dir" "$dir.truth.json" "$dir.complete"
    return 0
}

# per_rank_delta NAME RANKS: for NAME = X+light after X, the plugin
# records' cost per rank, before and streaming.
per_rank_delta() {
    case $1 in *+light) plain=${1%+light} ;; *) return 0 ;; esac
    for p in base old new new1; do
        [ -s "$WORK/$plain.$p.rss" ] && [ -s "$WORK/$1.$p.rss" ] || continue
        case $p in base) label="before (base build)";; old) label="--in-memory";;
        new) label="streaming, --jobs $cores";; new1) label="streaming, --jobs 1";; esac
        awk -v a="$(cat "$WORK/$plain.$p.rss")" -v b="$(cat "$WORK/$1.$p.rss")" -v n="$2" \
            -v l="$label" 'BEGIN { printf "  plugin records (light), %s: peak RSS +%.1f MiB, %.0f B per rank\n", l, (b - a) / 1024, (b - a) * 1024 / n }'
    done
    echo "  load $(load)"
}

for c in $CASES; do
    case $c in
    small) bench small 8 40 20000 ;;
    k*x*x*) k=${c#k}; bench "$c" "${k%%x*}" "$(echo "$k" | cut -dx -f2)" 0 --kineto "${k##*x}" ;;
    *x*+light) rs=${c%+light}; bench "$c" "${rs%x*}" "${rs#*x}" 64 --nccl-plugin light ;;
    *x*) bench "$c" "${c%x*}" "${c#*x}" 64 ;;
    *) echo "bench-stream: unknown case $c" >&2; exit 2 ;;
    esac
done
