#!/bin/sh
# Coverage-guided fuzzing of the dump reader with libFuzzer.
#   scripts/fuzz-reader.sh [SECONDS=60] [WORKDIR=/tmp/tscope-fuzz-reader]
# Needs clang with libFuzzer (Debian: apt-get install clang).  Crashes are
# written to WORKDIR/crashes; replay one with WORKDIR/fuzz_reader FILE.
set -eu
secs=${1:-60}
work=${2:-/tmp/tscope-fuzz-reader}
root=$(cd "$(dirname "$0")/.." && pwd)
cc=${CLANG:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "fuzz-reader: $cc not found (apt-get install clang)" >&2
    exit 2
fi
mkdir -p "$work/corpus" "$work/crashes"
cflags="-g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined"
cflags="$cflags -fno-sanitize-recover=undefined"
inc="-I$root/analyzer -I$root/preload -I$root/format -I$root/tests/reader"
reader_src=$(ls "$root"/analyzer/reader/*.c)
cjson_flags=$(pkg-config --cflags --libs libcjson)

# shellcheck disable=SC2086
"$cc" $cflags $inc -o "$work/fuzz_reader" "$root/tests/reader/fuzz_reader.c" \
    "$root/tests/reader/fuzz_exercise.c" $reader_src "$root/format/crc32c.c" $cjson_flags

# Seeds: the sample dump in both modes (as is, and with CRC repair).
# shellcheck disable=SC2086
"$cc" -O1 -std=c11 -D_GNU_SOURCE $inc -o "$work/write_sample" \
    "$root/tests/reader/write_sample.c" "$root/tests/reader/sample_dump.c" \
    "$root/tests/reader/dump_builder.c" "$root/format/crc32c.c"
"$work/write_sample" "$work/corpus/seed_raw" 0
"$work/write_sample" "$work/corpus/seed_fixcrc" 1

printf 'kw1="TSCK"\nkw2="\\x89TSCOPE\\x0a"\nkw3="\\x04\\x03\\x02\\x01"\n' >"$work/dict"
cd "$work"
exec ./fuzz_reader -max_total_time="$secs" -max_len=65536 -dict="$work/dict" \
    -artifact_prefix="$work/crashes/" -print_final_stats=1 "$work/corpus"
