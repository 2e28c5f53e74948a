#!/bin/sh
# Batch benchmark: generate N synthetic jobs (tsc-gen-job: RANKS ranks x
# about EVENTS events per rank each), time `tscope-report batch` over them
# (cold, then the re-run that skips up-to-date jobs), and print the figures
# recorded in docs/benchmarks-views.md.  Also times the Kineto parser.
#
#   scripts/bench-batch.sh BUILD_DIR [JOBS] [RANKS] [EVENTS] [WORK_DIR]
#
# Defaults: 1000 jobs, 8 ranks, 100000 events per rank, a temporary work
# dir that is removed at the end (about 25 MB of dumps per job).
set -eu
build=${1:?usage: bench-batch.sh BUILD_DIR [JOBS] [RANKS] [EVENTS] [WORK_DIR]}
jobs=${2:-1000}
ranks=${3:-8}
events=${4:-100000}
work=${5:-}
gen=$build/tests/analyzer/tsc-gen-job
report=$build/analyzer/tscope-report
genk=$build/tests/kineto/tsc-gen-kineto
benchk=$build/tests/kineto/bench_kineto
for tool in "$gen" "$report"; do
    [ -x "$tool" ] || { echo "missing $tool (build first)" >&2; exit 2; }
done
if [ -z "$work" ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/tscope-bench-batch.XXXXXX")
    trap 'rm -rf "$work"' EXIT
fi
steps=100
per_step=$((events * 80 / 64 / steps))   # tsc-gen-job writes ~0.8 slots per requested event
echo "machine: $(nproc) cores, $(uname -m); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "generating $jobs jobs of $ranks ranks x ~$events events in $work"
t0=$(date +%s.%N)
i=0
while [ "$i" -lt "$jobs" ]; do
    # every 50th job has a straggler on rank 3 (the same host name each
    # time), so the fleet view has something to find
    extra=""
    [ $((i % 50)) -eq 7 ] && extra="--straggler 3:0.3"
    mkdir -p "$work/team$((i % 10))"
    "$gen" -o "$work/team$((i % 10))/job$i" --ranks "$ranks" --steps "$steps" \
        --events-per-step "$per_step" --flops 1e13 --seed "$i" $extra >/dev/null &
    [ $((i % 2)) -eq 1 ] && wait
    i=$((i + 1))
done
wait
t1=$(date +%s.%N)
bytes=$(du -sb "$work" | cut -f1)
slots=$(( bytes / 32 ))
echo "generated: $(echo "$t1 - $t0" | bc) s, $((bytes / 1000000)) MB, ~$slots event slots"
echo "batch (cold, -j $(nproc)):"
/usr/bin/time -f "  wall %e s  user %U s  sys %S s  max RSS of the parent %M KB" \
    "$report" batch "$work" --ndjson -q > "$work/rows.ndjson"
ok=$(grep -c '"status":"ok"' "$work/rows.ndjson" || true)
echo "  rows ok: $ok of $jobs"
echo "batch (re-run, all summaries up to date):"
/usr/bin/time -f "  wall %e s  user %U s  sys %S s" \
    "$report" batch "$work" --ndjson -q > "$work/rows2.ndjson"
cached=$(grep -c '"cached":true' "$work/rows2.ndjson" || true)
echo "  rows cached: $cached of $jobs"
grep '"type":"fleet_host"' "$work/rows.ndjson" | head -3
if [ -x "$genk" ] && [ -x "$benchk" ]; then
    echo "kineto parse speed (1 trace, 5000 steps, 20 extra kernels per step):"
    "$genk" "$work/kineto" 1 5000 20 && "$benchk" "$work"/kineto/*.json 3 | sed 's/^/  /'
    "$genk" "$work/kineto-gz" 1 5000 20 gz && "$benchk" "$work"/kineto-gz/*.json.gz 3 | sed 's/^/  /'
fi
