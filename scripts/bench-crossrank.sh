#!/bin/sh
# Benchmark of the cross-rank pass (analyzer/crossrank) on synthetic
# in-memory jobs; figures go to docs/benchmarks-crossrank.md.
#   scripts/bench-crossrank.sh [build-dir]      (default /tmp/build-bench-crossrank)
# Builds with -O2 (release), then runs 1,000 ranks x 1,000 steps and a few
# smaller shapes for scale.
set -eu
cd "$(dirname "$0")/.."
build=${1:-/tmp/build-bench-crossrank}
if [ ! -d "$build" ]; then
    meson setup "$build" --buildtype=release >/dev/null
fi
ninja -C "$build" tests/crossrank/bench_crossrank >/dev/null
bench="$build/tests/crossrank/bench_crossrank"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC') $(uname -m), $(nproc) cores, $(gcc -dumpfullversion 2>/dev/null || echo gcc)"
for shape in "64 1000 2" "256 1000 2" "1000 1000 1" "1000 1000 2" "1000 1000 4"; do
    # shellcheck disable=SC2086
    "$bench" $shape
    echo
done
