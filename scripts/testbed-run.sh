#!/usr/bin/env bash
# Run a GPU-less test-bed job (test NCCL + training-like ranks) under the
# tscope preload, for trying the capture or the analyzer by hand.
#
#   scripts/testbed-run.sh [-b BUILD_DIR] [-n RANKS] [-o OUT_DIR] [-P] [--] [RANK OPTIONS...]
#
#   -b  build directory (default ./build; must be built already)
#   -n  number of ranks (default 4)
#   -o  dump directory, emptied first (default ./tscope_out)
#   -P  run without the preload (to compare results)
# RANK OPTIONS go to tsc-testbed-rank (see its --help), e.g.
#   scripts/testbed-run.sh -n 8 -- --steps 50 --slow-ranks 3 --slow-factor 1.5
set -euo pipefail
cd "$(dirname "$0")/.."

build=build nranks=4 out=tscope_out preload=1
while getopts "b:n:o:Ph" opt; do
    case $opt in
    b) build=$OPTARG ;;
    n) nranks=$OPTARG ;;
    o) out=$OPTARG ;;
    P) preload=0 ;;
    h) sed -n '2,13p' "$0"; exit 0 ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift

tb=$build/tests/testbed
for f in "$tb/tsc-testbed-launch" "$tb/tsc-testbed-rank" "$tb/fakenccl/libnccl.so.2"; do
    [ -e "$f" ] || { echo "testbed-run: $f missing: build first (ninja -C $build)" >&2; exit 2; }
done
rm -rf "$out"
env_args=("LD_LIBRARY_PATH=$(realpath "$tb/fakenccl")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
          "TSCOPE_OUT=$out")
if [ $preload -eq 1 ]; then
    env_args+=("LD_PRELOAD=$(realpath "$build/preload/libtscope_preload.so")")
fi
env "${env_args[@]}" "$tb/tsc-testbed-launch" -n "$nranks" -- "$tb/tsc-testbed-rank" "$@"
if [ $preload -eq 1 ]; then
    "$build/analyzer/tscope-report" info "$out"
fi
