#!/bin/sh
# The streaming report stays within a hard memory limit that the in-memory
# path cannot meet: a generated 32-rank job (~80 MB of dumps; the in-memory
# path peaks near 115 MB) is reported under `ulimit -v` of 80 MB of address
# space with 2 threads, and its JSON is the in-memory path's.  The same
# limit makes --in-memory fail (so the limit binds), and a change that holds
# every rank's records again fails this test.  Skips (77) under ASan, whose
# shadow memory needs terabytes of address space.
set -u
REPORT="$1"
GEN="$2"
LIMIT_KB=${3:-80000}
if ldd "$REPORT" 2>/dev/null | grep -q libasan; then
    echo "ASan build: address-space limits do not apply"
    exit 77
fi
T=$(mktemp -d /tmp/tsa_streammem_XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$GEN" -o "$T/job" --ranks 32 --steps 100 --events-per-step 1000 --flops 1e12 \
    --straggler 7:0.2 >/dev/null || fail "generator"
"$REPORT" "$T/job" --json --in-memory >"$T/old.json" || fail "--in-memory without a limit"
(ulimit -v "$LIMIT_KB" && exec "$REPORT" "$T/job" --json --jobs 2) >"$T/new.json" 2>"$T/new.err" ||
    { cat "$T/new.err"; fail "streaming under ulimit -v $LIMIT_KB"; }
cmp -s "$T/old.json" "$T/new.json" || fail "streaming JSON under the limit differs"
(ulimit -v "$LIMIT_KB" && exec "$REPORT" "$T/job" --json --in-memory) >/dev/null 2>&1 &&
    fail "--in-memory fits under ulimit -v $LIMIT_KB: the limit does not bind"
echo "ok: streaming within $LIMIT_KB KB of address space; --in-memory is not"
