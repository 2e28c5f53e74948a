#!/bin/sh
# tscope against Holistic Trace Analysis (HTA) on the same torch.profiler
# traces, side by side in one run (issue 43): 2 ranks x 200 steps x 600
# extra kernels a step (tsc-gen-kineto, gzip: 485k trace events).  Rounds
# are interleaved (tscope on every core, tscope --jobs 1, HTA, ...) so a
# change of load on a shared machine hits all three; it prints each round
# and the medians of wall time, CPU time (user + system, children
# included) and peak memory, and the ratios HTA / tscope.
#
#   scripts/bench-hta.sh [BUILD_DIR=build-rel] [ROUNDS=3] [HTA_DIR]
#
# BUILD_DIR: a release build (meson setup build-rel -Dbuildtype=release;
# ninja -C build-rel analyzer/tscope-report tests/kineto/tsc-gen-kineto).
# HTA_DIR (or $HTA_DIR): a folder holding HTA's `hta` package, from its
# source (not part of this repository), e.g.
#   git clone https://github.com/facebookresearch/HolisticTraceAnalysis H
#   (the figures in docs/benchmarks.md: commit f4d0062)
# run by Debian's Python with Debian's packages (apt-get install
# python3-pandas python3-plotly python3-networkx python3-pydot).  Where HTA
# cannot be imported, it says why and measures tscope alone.
#
# What each side does: tscope, its whole report (`tscope-report DIR
# --json`); HTA, TraceAnalysis(trace_dir=DIR) (parses every rank, in a
# process per rank), then get_temporal_breakdown() and
# get_comm_comp_overlap().  The overlap each gives is printed (tscope's
# from --window gpu-span, HTA's definitions).  Memory: tscope is one
# process (peak RSS); HTA's ranks are parsed in child processes, so its
# figure is the peak of the RSS summed over its process tree, sampled
# every 0.1 s (and the largest single process, which /usr/bin/time sees).
set -eu
BUILD=$(cd "${1:-build-rel}" && pwd)
ROUNDS=${2:-3}
HTA_DIR=${3:-${HTA_DIR:-}}
PY=${HTA_PYTHON:-/usr/bin/python3}
REPORT="$BUILD/analyzer/tscope-report"
KGEN="$BUILD/tests/kineto/tsc-gen-kineto"
for f in "$REPORT" "$KGEN" /usr/bin/time; do
    [ -x "$f" ] || { echo "bench-hta: $f not found (build first; apt-get install time)" >&2; exit 2; }
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tsc_bench_hta_XXXXXX")
trap 'rm -rf "$WORK"' EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -m), $(nproc) cores, load $(load)"
echo "# $REPORT"

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

"$KGEN" "$WORK/job" 2 200 600 gz >/dev/null
echo "# job: 2 ranks x 200 steps x 600 extra kernels a step, $(du -sbL "$WORK/job" | cut -f1) bytes of gzip"

# HTA's driver: parse, temporal breakdown, overlap; prints the overlap.
cat >"$WORK/hta_run.py" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import logging
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=sys.argv[2])
a.get_temporal_breakdown(visualize=False)
ov = a.get_comm_comp_overlap(visualize=False)
print("overlap " + " ".join("%.2f%%" % v for v in ov["comp_comm_overlap_pctg"]))
EOF
hta=0
if [ -z "$HTA_DIR" ]; then
    echo "# HTA: not run (no HTA_DIR given: see the header of this script)"
elif ! err=$(cd "$WORK" && "$PY" -c "import sys; sys.path.insert(0, '$HTA_DIR'); import hta.trace_analysis" 2>&1); then
    echo "# HTA: not run (cannot import it from $HTA_DIR with $PY: $(echo "$err" | tail -n 1))"
else
    hta=1
    echo "# HTA: $HTA_DIR ($(git -C "$HTA_DIR" rev-parse --short HEAD 2>/dev/null || echo "no git")), $PY, pandas $("$PY" -c 'import pandas; print(pandas.__version__)')"
fi

# tree_rss PID: the RSS in KiB of PID and all its descendants.
tree_rss() {
    ps -eo pid=,ppid=,rss= | awk -v root="$1" '
        { parent[$1] = $2; rss[$1] = $3 }
        END {
            for (p in rss) {
                q = p
                while (q != root && q in parent && q > 1) q = parent[q]
                if (q == root) sum += rss[p]
            }
            print sum + 0
        }'
}

# run NAME CMD...: one timed run; appends "wall cpu rss_kb tree_rss_kb" to
# $WORK/NAME.t.  Only HTA's process tree is sampled (ps costs CPU that a
# sub-second run would feel; tscope is one process: /usr/bin/time has it).
run() {
    name=$1
    shift
    start=$(date +%s.%N)
    /usr/bin/time -f "%U %S %M" -o "$WORK/t" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
    pid=$!
    peak=0
    while [ "$name" = hta ] && kill -0 "$pid" 2>/dev/null; do
        r=$(tree_rss "$pid")
        [ "$r" -gt "$peak" ] && peak=$r
        sleep 0.1
    done
    wait "$pid" || { cat "$WORK/$name.err" >&2; echo "bench-hta: $name failed" >&2; exit 1; }
    end=$(date +%s.%N)
    awk -v s="$start" -v e="$end" -v p="$peak" '{ printf "%.3f %.3f %d %d\n", e - s, $1 + $2, $3, (p > $3 ? p : $3) }' \
        "$WORK/t" >>"$WORK/$name.t"
}

i=0
while [ "$i" -lt "$ROUNDS" ]; do
    run tscope "$REPORT" "$WORK/job" --json
    run tscope1 "$REPORT" "$WORK/job" --json --jobs 1
    cmp -s "$WORK/tscope.out" "$WORK/tscope1.out" || echo "bench-hta: --jobs 1 and the default report DIFFER"
    [ $hta = 1 ] && run hta "$PY" "$WORK/hta_run.py" "$HTA_DIR" "$WORK/job"
    i=$((i + 1))
    echo "# round $i done, load $(load)"
done

col() { awk -v k="$2" '{ print $k }' "$WORK/$1.t" | median; }
rounds() { awk -v k="$2" '{ printf "%s%s", sep, $k; sep = " " }' "$WORK/$1.t"; }
printf '%-22s %9s %9s %13s   %s\n' side "wall s" "cpu s" "peak MiB" "rounds: wall s"
for s in tscope tscope1 hta; do
    [ -s "$WORK/$s.t" ] || continue
    case $s in tscope) label="tscope (--jobs $(nproc))";; tscope1) label="tscope --jobs 1";; hta) label="HTA";; esac
    printf '%-22s %9.3f %9.3f %13.1f   %s\n' "$label" "$(col $s 1)" "$(col $s 2)" \
        "$(col $s 4 | awk '{ print $1 / 1024 }')" "$(rounds $s 1)"
done
if [ -s "$WORK/hta.t" ]; then
    echo "HTA's largest single process: $(col hta 3 | awk '{ printf "%.1f", $1 / 1024 }') MiB"
    # ratios per round (the same round's load on both sides), then the median
    for s in tscope tscope1; do
        paste "$WORK/hta.t" "$WORK/$s.t" | awk '{ print $1 / $5, $2 / $6 }' >"$WORK/ratio.$s"
        echo "HTA / $s: wall $(cut -d' ' -f1 "$WORK/ratio.$s" | median | awk '{ printf "%.0fx", $1 }') (rounds $(awk '{ printf "%s%.0f", sep, $1; sep = " " }' "$WORK/ratio.$s")), CPU $(cut -d' ' -f2 "$WORK/ratio.$s" | median | awk '{ printf "%.0fx", $1 }') (rounds $(awk '{ printf "%s%.0f", sep, $2; sep = " " }' "$WORK/ratio.$s"))"
    done
    echo "HTA: $(cat "$WORK/hta.out")"
fi
echo "tscope: overlap $("$REPORT" "$WORK/job" --window gpu-span 2>/dev/null | awk '/^HTA-COMPATIBLE/ { on = 1; next } on && NF == 0 { exit } on && $1 ~ /^[0-9]+$/ { printf "%s%s", sep, $NF; sep = " " }')"
echo "# load $(load)"
