#!/bin/sh
# Coverage-guided fuzzing of the whole analyzer pipeline with libFuzzer:
# load -> analyse -> text and JSON report -> trace export, each output
# checked (strict JSON, no control characters in text).
#   scripts/fuzz-pipeline.sh [SECONDS=60] [WORKDIR=/tmp/tscope-fuzz-pipeline] [JOBS=1]
# Needs clang with libFuzzer (Debian: apt-get install clang).  Crashes and
# broken outputs are written to WORKDIR/crashes; replay one with
# WORKDIR/fuzz_pipeline FILE.  The suite's short run is test
# 'pipeline_fuzz' (meson test -C build pipeline_fuzz; TSCOPE_FUZZ_ROUNDS=N
# runs it longer without clang).
set -eu
secs=${1:-60}
work=${2:-/tmp/tscope-fuzz-pipeline}
jobs=${3:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
cc=${CLANG:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "fuzz-pipeline: $cc not found (apt-get install clang)" >&2
    exit 2
fi
mkdir -p "$work/corpus" "$work/crashes"
version=$(sed -n "s/.*version: *'\([^']*\)'.*/\1/p" "$root/meson.build" | head -1)
cflags="-g -O1 -std=c11 -D_GNU_SOURCE -DTSC_VERSION=\"$version\""
cflags="$cflags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
inc="-I$root/analyzer"
inc="$inc -I$root/preload/core -I$root/format -I$root/tests/kineto -I$root/tests/analyzer"
analyzer_src=$(ls "$root"/analyzer/*/*.c | grep -v /mpi/)
libs="$(pkg-config --cflags --libs libcjson yajl zlib) -lm -lpthread"

# shellcheck disable=SC2086
"$cc" $cflags $inc -o "$work/fuzz_pipeline" \
    "$root/tests/kineto/fuzz_pipeline_main.c" "$root/tests/kineto/fuzz_pipeline.c" \
    "$root/tests/kineto/strict_json.c" "$root/tests/kineto/pipeline_seeds.c" \
    "$root/tests/kineto/test_util.c" "$root/tests/kineto/kineto_gen.c" \
    "$root/tests/analyzer/gen_job.c" "$root/tests/analyzer/gen_mem.c" "$root/preload/core/dump_file.c" "$root/format/crc32c.c" \
    $analyzer_src $libs

# Seeds: the seed jobs' rank-1 files, tagged as the harness reads them.
FUZZ_PIPELINE_SEEDS="$work/corpus" "$work/fuzz_pipeline" -runs=0 "$work/corpus" >/dev/null 2>&1
cd "$work"
# JOBS > 1: parallel workers, each logging to WORKDIR/fuzz-N.log
parallel=""
[ "$jobs" -gt 1 ] && parallel="-jobs=$jobs -workers=$jobs"
# shellcheck disable=SC2086
exec ./fuzz_pipeline -max_total_time="$secs" -max_len=262144 $parallel \
    -artifact_prefix="$work/crashes/" -print_final_stats=1 "$work/corpus"
