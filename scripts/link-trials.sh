#!/bin/bash
# Trials of NET.SLOW_LINK (docs/findings.md) on the test bed: 8 ranks (by
# default) of a real multi-process job under the preload, whose test NCCL
# loads tscope as its profiler plugin (full capture) and runs each
# collective as a plain ring over a simulated network (rank r sends only to
# r+1 on each of 2 channels; every step STEP_US on the wire; a step's data
# arrives when its sender has put it there: tests/testbed/fakenccl/fn_net.h).
# Cases, each trial drawing its rank (and channel) at random:
#   slow1     one link A -> A+1 FACTOR times slower on one channel: the
#             report must name exactly that link and channel
#   slow2     the same link slow on both channels: that link, channels 0,1
#   host      every link to and from one rank FACTOR times slower (a slow
#             host or NIC): no link named
#   starved   one rank's proxy late by LAG_US at every step state (a
#             process starved of CPU): no link named
#   balanced  nothing wrong: no link named
#
#   scripts/link-trials.sh BUILD_DIR [TRIALS] [RANKS] [CASES] [FACTOR] [SEED]
#
# SEED (default: the time) seeds the draws (the suite's run is fixed); TB_ASAN_RUNTIME (an ASan
# build's libasan.so) is preloaded first when set; KEEP_FAILED=PREFIX keeps
# the dumps of a trial that missed in PREFIX.CASE.N.  Prints one line per
# trial, a count per case, and exits 1 when a case scores below its bar
# (slow1, slow2: 19 of 20, i.e. 95%; the others: all).
set -u
build=$(cd "${1:?usage: link-trials.sh BUILD_DIR [TRIALS] [RANKS] [CASES] [FACTOR] [SEED]}" && pwd) || exit 2
trials=${2:-20}
ranks=${3:-8}
cases=${4:-"slow1 slow2 host starved balanced"}
factor=${5:-4}
step_us=${STEP_US:-200}
lag_us=${LAG_US:-600}
seed=${6:-$(date +%s)}
RANDOM=$seed
echo "link-trials: seed $seed, $ranks ranks, factor $factor, steps of $step_us us, lag $lag_us us"
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

# "SRC->DST:CHANNELS" of every NET.SLOW_LINK finding, space separated, or
# "none"; CHANNELS from the finding's channel mask.
slow_links() {
    "$report" "$1/d" --json 2>/dev/null | python3 -c '
import json, sys
fs = [f for f in json.load(sys.stdin).get("findings", []) if f["id"] == "NET.SLOW_LINK"]
def chans(m):
    return ",".join(str(c) for c in range(53) if int(m) >> c & 1)
print(" ".join("%d->%d:%s" % (f["numbers"]["src_rank"], f["numbers"]["dst_rank"],
                              chans(f["numbers"]["channel_mask"])) for f in fs) or "none")'
}

fail=0
for case in $cases; do
    ok=0
    for t in $(seq 1 "$trials"); do
        out=$work/$case.$t
        mkdir -p "$out/rdzv"
        src=$((RANDOM % ranks)); dst=$(( (src + 1) % ranks )); ch=$((RANDOM % 2))
        case $case in
        slow1) want="$src->$dst:$ch"; job "$out" FAKENCCL_SLOW_LINK="$src:$dst:$factor:$ch" ;;
        slow2) want="$src->$dst:0,1"; job "$out" FAKENCCL_SLOW_LINK="$src:$dst:$factor" ;;
        host) want=none; job "$out" FAKENCCL_SLOW_HOST="$src:$factor" ;;
        starved) want=none; job "$out" FAKENCCL_PROXY_LAG="$src:$lag_us" ;;
        balanced) want=none; job "$out" ;;
        *) echo "unknown case $case" >&2; exit 2 ;;
        esac
        got=$(slow_links "$out")
        [ "$got" = "$want" ] && ok=$((ok + 1))
        echo "$case trial $t (rank $src): $got (want $want) load $(cut -d' ' -f1 /proc/loadavg)"
        if [ "$got" != "$want" ] && [ -n "${KEEP_FAILED:-}" ]; then
            mv "$out" "$KEEP_FAILED.$case.$t"; echo "  kept in $KEEP_FAILED.$case.$t"
        fi
        rm -rf "$out"
    done
    echo "$case: $ok of $trials"
    case $case in
    slow1 | slow2) [ $((ok * 20)) -ge $((trials * 19)) ] || fail=1 ;;
    *) [ "$ok" -eq "$trials" ] || fail=1 ;;
    esac
done
exit $fail
