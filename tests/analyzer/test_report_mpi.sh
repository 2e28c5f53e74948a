#!/bin/sh
# tscope-report-mpi gives the single-process answer: on a generated 8-rank
# job with one slow rank (and one clock off), and on a job with the NCCL
# profiler plugin's records (full capture), `mpirun -n 1/2/3` prints the
# same JSON and text as tscope-report, and on a damaged copy of the job (a
# file that is not a dump, a cut-short dump) the same JSON, problems in the
# same order and the same exit status.  Skips (77) without MPI.
set -u
REPORT="$1"
MPI_REPORT="$2"
GEN="$3"
. "$(dirname "$0")/mpi_same_answer.sh"

"$GEN" -o "$T/job" --ranks 8 --ranks-per-host 4 --steps 12 --straggler 5:0.3 \
    --clock-offset 3:5000000 --flops 1e12 --mem-base 100 >/dev/null || fail "generator"
same_answer "$T/job"
grep -q '"kind":[[:space:]]*"straggler-bound"' "$T/one.json" || fail "the slow rank is not found"

# The NCCL profiler plugin's records travel reduced (load/nprof_lean.h):
# full capture with a slow link has the summary, transfer tables and
# links; light capture is test_stream_same.sh's.  Under 2 processes only
# (process 0 holds the other's ranks lean), JSON and text.
"$GEN" -o "$T/full" --ranks 8 --ranks-per-host 4 --steps 12 --flops 1e12 \
    --nccl-plugin full --slow-link 2:4 >/dev/null || fail "generator (full)"
same_answer "$T/full" 2
grep -q '"id":[[:space:]]*"NET.SLOW_LINK"' "$T/one.json" || fail "full: no slow link found"

# Damaged: a file that is not a dump and two dumps cut in the middle, one
# loaded by process 0 and one by process 1 (under -n 2 and -n 3), whose
# problems must still come in path order.
cp -r "$T/job" "$T/bad"
head -c 3000 /dev/urandom >"$T/bad/tscope_r9_junk_1.tsd"
for r in 1 6; do
    f=$(ls "$T/bad"/tscope_r${r}_*.tsd)
    size=$(wc -c <"$f")
    head -c $((size * 2 / 3)) "$f" >"$T/cut" && mv "$T/cut" "$f"
done
same_damaged "$T/bad"

# Names that are not valid UTF-8, with a terminal escape: every process
# cleans what it read, as tscope-report does, so the JSON is the same.
"$GEN" -o "$T/names" --ranks 4 --steps 8 --device "$(printf 'H100\377\376\033[31mX')" \
    >/dev/null || fail "generator (names)"
"$REPORT" "$T/names" --json >"$T/one_names.json" || fail "names: tscope-report"
mpi 2 "$T/names" --json >"$T/mpi_names.json" || fail "names: -n 2"
cmp -s "$T/one_names.json" "$T/mpi_names.json" || {
    diff "$T/one_names.json" "$T/mpi_names.json" | head; fail "names: JSON differs"; }

mpi 2 "$T/missing" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] || fail "missing dir: exit $rc"
grep -q "no such directory" "$T/err" || fail "missing dir message"
mpi 2 "$T/job" --bogus >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "unknown option: exit $rc"
echo ok
