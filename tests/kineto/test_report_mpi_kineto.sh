#!/bin/sh
# tscope-report-mpi on torch.profiler traces: each process parses its
# share of the traces, process 0 makes tscope-report's choices over all of
# them, and the answer is tscope-report's.  A clean 4-rank run gives the
# same JSON under 1, 2 and 3 processes and the same text; a damaged copy
# (rank 3's trace cut short, a second trace of rank 2, a trace of another
# run) gives the same JSON, problems in the same order, and exit status 1;
# so do traces without distributedInfo, two of them cut short, whose cut
# notes must name the ranks process 0 numbers them by (not -1).
# Skips (77) without MPI.
set -u
REPORT="$1"
MPI_REPORT="$2"
GEN_KINETO="$3"
. "$(dirname "$0")/../analyzer/mpi_same_answer.sh"

"$GEN_KINETO" "$T/kin" 4 12 >/dev/null || fail "generator"
same_answer "$T/kin"

cp -r "$T/kin" "$T/bad"
"$GEN_KINETO" "$T/other" 2 12 >/dev/null || fail "generator (other run)"
cp "$T/other/host0_4000.1700000000.pt.trace.json" "$T/bad/zz_other.1700000000.pt.trace.json"
cp "$T/bad/host0_4002.1700000000.pt.trace.json" "$T/bad/host0_4002.1700000099.pt.trace.json"
f="$T/bad/host0_4003.1700000000.pt.trace.json"
head -c $(($(wc -c <"$f") * 2 / 3)) "$f" >"$T/cut" && mv "$T/cut" "$f"
same_damaged "$T/bad"
for want in "premature EOF" "another run" "second trace of rank 2"; do
    grep -q "$want" "$T/one_bad.json" || fail "damaged traces: no problem '$want'"
done

"$GEN_KINETO" "$T/nodist" 4 12 0 nodist >/dev/null || fail "generator (nodist)"
for part in 1:1:3 3:2:3; do
    f=$(echo "$T/nodist"/host0_400"${part%%:*}".*.json)
    keep=${part#*:}
    head -c $(($(wc -c <"$f") * ${keep%:*} / ${keep#*:})) "$f" >"$T/cut" && mv "$T/cut" "$f"
done
same_damaged "$T/nodist"
for r in 1 3; do
    grep -q "rank $r: host0_400$r.* ends early" "$T/one_bad.json" ||
        fail "traces without distributedInfo: no cut note of rank $r"
done
echo ok
