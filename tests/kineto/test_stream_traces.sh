#!/bin/sh
# A folder of torch.profiler traces streams (driver/stream_source.c; the
# default above 256 MiB, forced here with --stream-above 0) and prints what
# --in-memory prints, byte for byte (JSON, text, HTML, exit status and
# problems, 1 to 3 threads), on generated trace jobs: a straggler, .json.gz,
# traces without distributedInfo (ranks numbered by file), a damaged copy
# (a cut trace, a file that is not valid JSON, a trace of another run, a
# second trace of rank 2) and one damaged without distributedInfo (two cut
# traces, whose "ends early" notes must name the ranks chosen after every
# trace is in); then the recorded traces in tests/data and the public
# corpus next to the source tree (../shared/corpus/kineto, when present:
# its folders of 1 MiB or less, under 2 threads).
set -u
REPORT="$1"
GEN="$2"
SRC="$3"
n=0
. "$SRC/tests/analyzer/stream_check.sh"
scratch tsa_streamtr

# keep_part FILE NUM DEN: keeps the first NUM/DEN of the file.
keep_part() {
    size=$(wc -c <"$1")
    head -c $((size * $2 / $3)) "$1" >"$T/cut" && mv "$T/cut" "$1"
}

"$GEN" "$T/job" 8 20 >/dev/null || fail "generator"
same "$T/job" --json
same "$T/job" --html
same "$T/job" --json --window gpu-span
same "$T/job" --json --warmup 0 --step-marker ProfilerStep
"$GEN" "$T/gz" 4 10 0 gz >/dev/null || fail "generator (gz)"
same "$T/gz" --json
"$GEN" "$T/nodist" 6 15 0 nodist >/dev/null || fail "generator (nodist)"
same "$T/nodist" --json

cp -r "$T/job" "$T/bad"
keep_part "$T/bad"/host0_4003.*.json 2 3
printf '{"traceEvents": [ {"ph":"X", "name": 12, ' >"$T/bad/zz_junk.pt.trace.json"
"$GEN" "$T/other" 2 5 >/dev/null || fail "generator (other)"
cp "$T/other"/host0_4000.*.json "$T/bad/host9_4000.1700000001.pt.trace.json"
cp "$T/bad"/host0_4002.1700000000.pt.trace.json "$T/bad/host0_4002.1700000009.pt.trace.json"
same "$T/bad" --json
for what in "malformed JSON" "another run" "second trace of rank 2"; do
    grep -q "$what" "$T/new.err" || fail "damaged: no \"$what\" problem: not compared"
done
same "$T/bad"

cp -r "$T/nodist" "$T/badnd"
keep_part "$T/badnd"/host0_4001.*.json 1 3
keep_part "$T/badnd"/host0_4003.*.json 2 3
same "$T/badnd"
grep -q "rank 1: host0_4001.* ends early" "$T/new.out" || fail "no cut note of rank 1: not compared"
grep -q "rank 3: host0_4003.* ends early" "$T/new.out" || fail "no cut note of rank 3: not compared"
same "$T/badnd" --json

for d in "$SRC"/tests/data/kineto-2rank/ "$SRC"/tests/data/corpus/cpu_*/; do
    same "$d" --json
done
if [ -d "$SRC/../shared/corpus/kineto" ]; then
    same_jobs=2
    for d in "$SRC"/../shared/corpus/kineto/*/; do
        # Folders over 1 MiB take seconds a report (minutes under ASan):
        # compared by hand (docs/scale.md), not here.
        [ "$(du -sk "$d" | cut -f1)" -le 1024 ] && same "$d" --json
    done
else
    echo "no public corpus at $SRC/../shared/corpus/kineto: not compared"
fi
echo "ok: $n comparisons"
