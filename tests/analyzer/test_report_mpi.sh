#!/bin/sh
# tscope-report-mpi gives the single-process answer: on a generated 8-rank
# job with one slow rank (and one clock off), `mpirun -n 1/2/3` prints the
# same JSON and text as tscope-report, and on a damaged copy of the job (a
# file that is not a dump, a cut-short dump) the same JSON, problems in the
# same order and the same exit status.  Skips (77) without MPI.
set -u
REPORT="$1"
MPI_REPORT="$2"
GEN="$3"
[ -n "$MPI_REPORT" ] && [ -x "$MPI_REPORT" ] || { echo "tscope-report-mpi not built"; exit 77; }
command -v mpirun >/dev/null 2>&1 || { echo "no mpirun"; exit 77; }
T=$(mktemp -d /tmp/tsa_mpi_XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# Open MPI's own allocations are not ours to chase under ASan.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# Root in CI containers; no network needed for one node.
export OMPI_MCA_btl=self,vader
mpi() { n="$1"; shift; mpirun --oversubscribe --allow-run-as-root -n "$n" "$MPI_REPORT" "$@"; }

"$GEN" -o "$T/job" --ranks 8 --ranks-per-host 4 --steps 12 --straggler 5:0.3 \
    --clock-offset 3:5000000 --flops 1e12 --mem-base 100 >/dev/null || fail "generator"
"$REPORT" "$T/job" --json >"$T/one.json"; rc=$?
[ $rc -eq 0 ] || fail "tscope-report: exit $rc"
grep -q '"kind":[[:space:]]*"straggler-bound"' "$T/one.json" || fail "the slow rank is not found"
"$REPORT" "$T/job" --color never >"$T/one.txt"
for n in 1 2 3; do
    mpi $n "$T/job" --json >"$T/mpi$n.json" 2>"$T/err"; rc=$?
    [ $rc -eq 0 ] || { cat "$T/err"; fail "-n $n: exit $rc"; }
    cmp -s "$T/one.json" "$T/mpi$n.json" || {
        diff "$T/one.json" "$T/mpi$n.json" | head -20; fail "-n $n: JSON differs"; }
done
mpi 3 "$T/job" --color never >"$T/mpi.txt" || fail "-n 3 text: exit"
cmp -s "$T/one.txt" "$T/mpi.txt" || fail "-n 3: text differs"

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
"$REPORT" "$T/bad" --json >"$T/one_bad.json" 2>/dev/null; rc1=$?
[ $rc1 -eq 1 ] || fail "damaged job: tscope-report exit $rc1"
for n in 2 3; do
    mpi $n "$T/bad" --json >"$T/mpi_bad.json" 2>/dev/null; rc=$?
    [ $rc -eq $rc1 ] || fail "damaged job -n $n: exit $rc, want $rc1"
    cmp -s "$T/one_bad.json" "$T/mpi_bad.json" || {
        diff "$T/one_bad.json" "$T/mpi_bad.json" | head -20; fail "damaged -n $n: JSON differs"; }
done

mpi 2 "$T/missing" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] || fail "missing dir: exit $rc"
grep -q "no such directory" "$T/err" || fail "missing dir message"
mpi 2 "$T/job" --bogus >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "unknown option: exit $rc"
echo ok
