#!/usr/bin/env bash
# Build tscope and run every test twice: a normal build, then the whole
# suite again under AddressSanitizer + UndefinedBehaviorSanitizer.  Ends
# with one line "tests: N passed, N failed, N skipped" over both runs
# (", N known bugs" added when tests marked should_fail failed as expected).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

passed=0 failed=0 skipped=0 known=0 status=0

count() { # count LABEL FILE: the number meson's summary gives for LABEL
    local n
    n=$(sed -n "s/^$1:[[:space:]]*\([0-9][0-9]*\).*/\1/p" "$2" | tail -n 1)
    echo "${n:-0}"
}

run_suite() {
    local dir=$1
    shift
    if [ -d "$dir" ]; then
        meson setup --reconfigure "$dir" "$@" >/dev/null
    else
        meson setup "$dir" "$@" >/dev/null
    fi
    ninja -C "$dir" >/dev/null
    local log="$dir/test-summary.txt" rc=0
    meson test -C "$dir" --print-errorlogs --num-processes 2 | tee "$log" || rc=$?
    passed=$((passed + $(count Ok "$log")))
    failed=$((failed + $(count Fail "$log") + $(count Timeout "$log") \
        + $(count "Unexpected Pass" "$log")))
    skipped=$((skipped + $(count Skipped "$log")))
    known=$((known + $(count "Expected Fail" "$log")))
    if [ "$rc" -ne 0 ]; then
        status=1
    fi
}

echo "== tests (debugoptimized build) =="
run_suite build
echo "== tests under AddressSanitizer + UndefinedBehaviorSanitizer =="
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
run_suite build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug

known_note=""
if [ "$known" -gt 0 ]; then
    known_note=", $known known bugs (expected failures)"
fi
echo "tests: $passed passed, $failed failed, $skipped skipped$known_note"
exit "$status"
