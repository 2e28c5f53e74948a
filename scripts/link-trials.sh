#!/bin/bash
# Trials of NET.SLOW_LINK (docs/findings.md) on the test bed: 8 ranks (by
# default) of a real multi-process job under the preload, whose test NCCL
# loads tscope as its profiler plugin (full capture) and simulates a
# network where every step of a ring channel takes STEP_US on the wire.
# "slow" trials make one link FACTOR times slower: rank A -> rank A+1 with
# A moving from trial to trial, on every channel (odd trials) or on
# channel 1 only (even trials); the report must name exactly that pair.
# "balanced" trials have no slow link and must give no NET.SLOW_LINK.
#
#   scripts/link-trials.sh BUILD_DIR [TRIALS] [RANKS] [CASES] [FACTOR]
#
# TB_ASAN_RUNTIME (an ASan build's libasan.so) is preloaded first when set.
# KEEP_FAILED=PREFIX keeps the dumps of a trial that missed in PREFIX.CASE.N.
# Prints one line per trial, a count per case, and exits 1 when a case
# scores below its bar (slow: 19 of 20, i.e. 95%; balanced: all).
set -u
build=$(cd "${1:?usage: link-trials.sh BUILD_DIR [TRIALS] [RANKS] [CASES] [FACTOR]}" && pwd) || exit 2
trials=${2:-20}
ranks=${3:-8}
cases=${4:-"slow balanced"}
factor=${5:-4}
step_us=${STEP_US:-200}
work=$(mktemp -d /tmp/link-trials.XXXXXX)
trap 'rm -rf "$work"' EXIT

launch=$build/tests/testbed/tsc-testbed-launch
report=$build/analyzer/tscope-report
preload=$build/preload/libtscope_preload.so
fakenccl=$build/tests/testbed/fakenccl

job() {
    local out=$1; shift
    env "$@" TSCOPE_NCCL_PROFILER=full FAKENCCL_NET_STEP_US="$step_us" FAKENCCL_CHANNELS=2 \
        LD_PRELOAD="${TB_ASAN_RUNTIME:+$TB_ASAN_RUNTIME }$preload" LD_LIBRARY_PATH="$fakenccl" \
        TSCOPE_OUT="$out/d" \
        "$launch" -n "$ranks" --rdzv "$out/rdzv" -- "$build/tests/testbed/tsc-testbed-rank" \
        --steps 6 --compute-us 1000 --buckets 64K,16K --no-extras >/dev/null 2>&1
}

# "SRC->DST" of every NET.SLOW_LINK finding, space separated, or "none".
slow_links() {
    "$report" "$1/d" --json 2>/dev/null | python3 -c '
import json, sys
fs = [f for f in json.load(sys.stdin).get("findings", []) if f["id"] == "NET.SLOW_LINK"]
print(" ".join("%d->%d" % (f["numbers"]["src_rank"], f["numbers"]["dst_rank"]) for f in fs) or "none")'
}

fail=0
for case in $cases; do
    ok=0
    for t in $(seq 1 "$trials"); do
        out=$work/$case.$t
        mkdir -p "$out/rdzv"
        src=$(( (t * 3) % ranks )); dst=$(( (src + 1) % ranks ))
        ch=""; [ $((t % 2)) -eq 0 ] && ch=":1"
        case $case in
        slow) want="$src->$dst"; job "$out" FAKENCCL_SLOW_LINK="$src:$dst:$factor$ch" ;;
        balanced) want=none; job "$out" ;;
        *) echo "unknown case $case" >&2; exit 2 ;;
        esac
        got=$(slow_links "$out")
        [ "$got" = "$want" ] && ok=$((ok + 1))
        [ "$case" = slow ] || ch=""
        echo "$case trial $t: $got (want $want${ch:+, channel ${ch#:} only})"
        if [ "$got" != "$want" ] && [ -n "${KEEP_FAILED:-}" ]; then
            mv "$out" "$KEEP_FAILED.$case.$t"; echo "  kept in $KEEP_FAILED.$case.$t"
        fi
        rm -rf "$out"
    done
    echo "$case: $ok of $trials"
    if [ "$case" = slow ]; then
        [ $((ok * 20)) -ge $((trials * 19)) ] || fail=1
    else
        [ "$ok" -eq "$trials" ] || fail=1
    fi
done
exit $fail
