#!/usr/bin/env bash
# Build tscope and run every test twice: a normal build, then the whole
# suite again under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

run_suite() {
    local dir=$1
    shift
    if [ -d "$dir" ]; then
        meson setup --reconfigure "$dir" "$@" >/dev/null
    else
        meson setup "$dir" "$@" >/dev/null
    fi
    ninja -C "$dir" >/dev/null
    meson test -C "$dir" --print-errorlogs --num-processes 2
}

echo "== tests (debugoptimized build) =="
run_suite build
echo "== tests under AddressSanitizer + UndefinedBehaviorSanitizer =="
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
run_suite build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug
