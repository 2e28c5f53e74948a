#!/bin/sh
# The streaming report stays within hard memory limits that the in-memory
# path cannot meet (`ulimit -v`: address space), on two jobs:
#
# 1. Memory does not grow with a rank's records: a generated 32-rank job
#    (~80 MB of dumps; the in-memory path peaks near 115 MB) is reported
#    under 80 MB with 2 threads.
# 2. Memory grows by little per rank-step: 96 ranks x 400 steps x 16
#    collectives a step (614,000 NCCL calls, 38,400 steps, few other
#    records) under 80 MB with 1 thread (one thread allocates in the same
#    order every run: the figure is exact).  The lean ranks keep their
#    calls (~15 B each), steps (~20 B) and the cross-rank pass its members
#    (~8 B) compact: 62 MB measured, of which up to 32 MB is freed memory
#    glibc keeps (util/mem_hint.h).  Before they did (104, 120 and 40
#    bytes) it took 124 MB, the in-memory path 157 MB.

# Each time the JSON is the in-memory path's, and the same limit makes
# --in-memory fail (so the limit binds): a change that holds every rank's
# records again, or gives back the compact per-call stores, fails this test.
# Skips (77) under ASan, whose shadow memory needs terabytes of address
# space.
set -u
REPORT="$1"
GEN="$2"
LIMIT_KB=${3:-80000}
STEPS_LIMIT_KB=${4:-80000}
. "$(dirname "$0")/stream_check.sh"
scratch tsa_streammem
skip_under_asan
"$GEN" -o "$T/events" --ranks 32 --steps 100 --events-per-step 1000 --flops 1e12 \
    --straggler 7:0.2 >/dev/null || fail "generator"
within "$T/events" "$LIMIT_KB" 2
rm -rf "$T/events"

"$GEN" -o "$T/steps" --ranks 96 --steps 400 --buckets 16 --events-per-step 8 --flops 1e12 \
    --straggler 7:0.2 >/dev/null || fail "generator"
within "$T/steps" "$STEPS_LIMIT_KB" 1
