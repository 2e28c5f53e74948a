#!/bin/sh
# Every output format of tscope-report on fixed inputs, one file per case,
# so two builds (or a build and the committed checksums) can be compared
# byte for byte.  tests/golden/check.sh runs it; see tests/golden/README.md.
#
#   tests/golden/outputs.sh BUILD_DIR OUT_DIR [CORPUS_DIR]
#
# Inputs: jobs written by BUILD_DIR's tsc-gen-job (64 ranks among them),
# torch.profiler traces written by its tsc-gen-kineto, the committed
# test-bed dumps and Kineto traces under tests/data, and every trace
# directory of CORPUS_DIR (default: the shared corpus next to the source
# tree; its cases are left out when it is absent).  Each case file holds
# stdout, then stderr, then the exit status; an exported trace's case file
# holds the trace.  Paths in the outputs are relative (the commands run in
# a work directory), so the files do not depend on where things live.
set -u
build=$(cd "$1" && pwd) || exit 2
out=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
corpus=${3:-$src/../shared/corpus/kineto}
report=$build/analyzer/tscope-report
gen=$build/tests/analyzer/tsc-gen-job
genk=$build/tests/kineto/tsc-gen-kineto
for f in "$report" "$gen" "$genk"; do
    [ -x "$f" ] || { echo "outputs.sh: $f not built" >&2; exit 2; }
done
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tsc_golden_XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2

# ---------------------------------------------------------------- inputs
mkdir gen kin
g() { name=$1; shift; "$gen" -o "gen/$name" "$@" >/dev/null || exit 2; }
g g64 --ranks 64 --ranks-per-host 8 --steps 16 --events-per-step 48 --straggler 5:0.15 \
    --clock-offset 9:3000000 --flops 1e12 --seed 3
g g8io --ranks 8 --ranks-per-host 4 --steps 30 --events-per-step 80 --copy-share 0.2 --pageable \
    --memset-share 0.05 --syncs-per-step 2 --sync-gap-us 200 --stall 0.1 --stall-every 3 \
    --fp32-gemm --flops 1e12 --seed 5
g g4mem --ranks 4 --steps 24 --mem-base 2048 --mem-leak 16@1 --mem-churn 64 --mem-pool 256 \
    --mem-total 81559 --mem-free 80000 --straggler 2:0.3 --clock-offset 1:5000000
g g3host --ranks 3 --steps 20 --host-only
# a damaged job: one dump cut to two thirds, and a file that is no dump
g g4cut --ranks 4 --steps 12 --run-id cut-run
f=$(ls gen/g4cut/*.tsd | head -1)
head -c $(( $(wc -c <"$f") * 2 / 3 )) "$f" >"$work/cut" && mv "$work/cut" "$f"
echo "not a dump" >gen/g4cut/junk.tsd
"$genk" kin/k2 2 40 5 >/dev/null && "$genk" kin/k4gz 4 12 3 gz >/dev/null || exit 2
cp -r "$src/tests/data/kineto-2rank" kin/ && rm -f kin/kineto-2rank/README.md
ln -s "$src/tests/data/testbed" tb
have_corpus=0
if [ -d "$corpus" ]; then
    ln -s "$corpus" corpus
    have_corpus=1
fi

# ----------------------------------------------------------------- cases
n=0
# run CASE ARGS...: the command's stdout, stderr and exit status
run() {
    name=$1; shift
    "$report" "$@" >"$work/o" 2>"$work/e"
    rc=$?
    { cat "$work/o"; echo "--- stderr"; cat "$work/e"; echo "--- rc $rc"; } \
        >"$out/$name"
    n=$((n + 1))
}
# trace CASE DIR ARGS...: the exported trace, then stderr and exit status
trace() {
    name=$1 dir=$2; shift 2
    rm -f t.json
    "$report" trace "$dir" -o t.json "$@" >"$work/o" 2>"$work/e"
    rc=$?
    { cat t.json 2>/dev/null; echo "--- stdout"; cat "$work/o";
      echo "--- stderr"; cat "$work/e"; echo "--- rc $rc"; } >"$out/$name"
    n=$((n + 1))
}
# every single-job view of one job directory; reports (dumps or traces) streamed
# (driver/stream.h), which jobs this small are not by default: the
# checksums, taken on the path before streaming, prove the two alike
job() {
    tag=$(echo "$1" | tr / _)
    run "$tag.report.txt" "$1" --stream-above 0
    run "$tag.report.json" "$1" --json --stream-above 0
    run "$tag.gpuspan.json" "$1" --window gpu-span --json --stream-above 0
    run "$tag.info.txt" info "$1"
    run "$tag.info.json" info --json "$1"
    run "$tag.hang.txt" hang "$1"
    run "$tag.hang.json" hang "$1" --json
    trace "$tag.trace.json" "$1"
}

for d in gen/g64 gen/g8io gen/g4mem gen/g3host gen/g4cut tb/straggler tb/hang tb/desync \
    tb/exit kin/k2 kin/k4gz kin/kineto-2rank; do
    job "$d"
done
run gen_g8io.options.txt gen/g8io --warmup 3 --peak-tflops 400 --samples-per-step 32 \
    --tokens-per-step 4096 --color always
run gen_g8io.flops.json gen/g8io --json --params 1e9 --tokens-per-step 4096 --layers 12 \
    --seq 1024 --hidden 2048
run gen_g8io.gpuspan.txt gen/g8io --window gpu-span
run gen_g4cut.runid.txt gen/g4cut --run-id cut-run
trace gen_g8io.trace-steps.json gen/g8io --steps 3-5
trace gen_g4mem.trace-raw.json gen/g4mem --no-analysis
f=$(ls tb/straggler/*.tsd | head -1)
run tb_straggler.dump.txt dump --descs "$f"
run tb_straggler.dump.json dump --json "$f"
run tb_hang.dump.json dump --json tb/hang
run diff.tb.txt diff tb/straggler tb/exit
run diff.gen.json diff gen/g8io gen/g4mem --json
run diff.kin.txt diff kin/k2 kin/kineto-2rank --warmup 1 --peak-tflops 100
run batch.txt batch gen tb kin --no-write -q -j 2
run batch.csv batch gen tb kin --no-write -q -j 2 --csv
run batch.ndjson batch gen tb kin --no-write -q -j 2 --ndjson --top 3
cp "$out/batch.ndjson" "$work/rows.ndjson"
sed -i '/^--- /,$d' "$work/rows.ndjson"
run batch.merge.txt batch merge "$work/rows.ndjson" --top 4
sed -i "s|$work/||g" "$out/batch.merge.txt"
run usage.txt --help
run version.txt --version
for c in report info dump trace diff batch hang; do
    run "help.$c.txt" $c --help
done
run error.option.txt gen/g3host --bogus
run error.value.txt gen/g3host --warmup x
run error.nodir.txt no/such/dir
run error.nodir.json no/such/dir --json
run error.trace.txt trace gen/g3host
run error.diff.txt diff gen/g3host

if [ $have_corpus -eq 1 ]; then
    for d in corpus/*/; do
        d=${d%/}
        job "$d"
    done
    run diff.corpus.txt diff corpus/trace_diff_control corpus/trace_diff_test
    run diff.corpus.json diff corpus/trace_diff_control corpus/trace_diff_test --json
    run batch.corpus.ndjson batch corpus --no-write -q -j 2 --ndjson
fi
echo "$n cases written to $out (corpus: $([ $have_corpus -eq 1 ] && echo yes || echo absent))"
