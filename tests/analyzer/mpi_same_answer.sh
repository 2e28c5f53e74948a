# Sourced by the tscope-report-mpi tests (not run by itself): skips (77)
# without tscope-report-mpi or mpirun, makes the scratch folder $T, and
# checks that `mpirun -n 1/2/3` answers as tscope-report does.
# Needs REPORT and MPI_REPORT set before it is sourced.
[ -n "$MPI_REPORT" ] && [ -x "$MPI_REPORT" ] || { echo "tscope-report-mpi not built"; exit 77; }
command -v mpirun >/dev/null 2>&1 || { echo "no mpirun"; exit 77; }
T=$(mktemp -d /tmp/tsa_mpi_XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# Root in CI containers; no network needed for one node.
export OMPI_MCA_btl=self,vader
# Open MPI's own allocations are not ours to chase under ASan (only the
# MPI processes lose leak checks: the job and tscope-report keep them).
mpi() {
    n="$1"; shift
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        mpirun --oversubscribe --allow-run-as-root -n "$n" "$MPI_REPORT" "$@"
}

# same_answer DIR [COUNTS]: tscope-report's JSON of DIR, left in
# $T/one.json, is byte for byte that of tscope-report-mpi under 1, 2 and 3
# processes (or COUNTS), and the text under 3 (the last) is tscope-report's
# text; except the cause blocks, which tscope-report-mpi does not compute
# when ranks are on other processes (their kernels stay there;
# docs/findings.md "Causes", Limits):
# under 2 and 3 processes its "causes" must be [] and everything else the
# same.
no_causes() { # FILE OUT: FILE with the top-level causes list emptied (up to the
               # next top-level key), the CAUSE section gone
    awk 'skip && /^\t"/ { skip = 0 } skip { next }
         /^\t"causes":\t\[/ { print "\t\"causes\":\t[],"; if ($0 !~ /\],?$/) skip = 1; next }
         /^CAUSE \(/ { text = 1; next } text && /^$/ { text = 0; next } text { next }
         { print }' "$1" >"$2"
}
same_answer() {
    counts=${2:-1 2 3}
    "$REPORT" "$1" --json >"$T/one.json"; rc=$?
    [ $rc -eq 0 ] || fail "tscope-report: exit $rc"
    "$REPORT" "$1" --color never >"$T/one.txt"
    for n in $counts; do
        mpi $n "$1" --json >"$T/mpi$n.json" 2>"$T/err"; rc=$?
        [ $rc -eq 0 ] || { cat "$T/err"; fail "-n $n: exit $rc"; }
        if [ $n -eq 1 ]; then
            cmp -s "$T/one.json" "$T/mpi$n.json" || {
                diff "$T/one.json" "$T/mpi$n.json" | head -20; fail "-n $n: JSON differs"; }
        else
            grep -q '"causes":[[:space:]]*\[\]' "$T/mpi$n.json" || fail "-n $n: causes not empty"
            no_causes "$T/one.json" "$T/a" && no_causes "$T/mpi$n.json" "$T/b"
            cmp -s "$T/a" "$T/b" || { diff "$T/a" "$T/b" | head -20; fail "-n $n: JSON differs"; }
        fi
    done
    n=${counts##* }
    mpi $n "$1" --color never >"$T/mpi.txt" || fail "-n $n text: exit"
    no_causes "$T/one.txt" "$T/a"
    cmp -s "$T/a" "$T/mpi.txt" || { diff "$T/a" "$T/mpi.txt" | head -20; fail "-n $n: text differs"; }
}

# same_damaged DIR: tscope-report exits 1 on DIR (load problems), its JSON
# left in $T/one_bad.json; tscope-report-mpi under 2 and 3 processes gives
# the same JSON (but for the causes, as above), problems in the same
# order, and the same exit status.
same_damaged() {
    "$REPORT" "$1" --json >"$T/one_bad.json" 2>/dev/null; rc1=$?
    [ $rc1 -eq 1 ] || fail "damaged: tscope-report exit $rc1"
    for n in 2 3; do
        mpi $n "$1" --json >"$T/mpi_bad.json" 2>/dev/null; rc=$?
        [ $rc -eq $rc1 ] || fail "damaged -n $n: exit $rc, want $rc1"
        grep -q '"causes":[[:space:]]*\[\]' "$T/mpi_bad.json" || fail "damaged -n $n: causes not empty"
        no_causes "$T/one_bad.json" "$T/a" && no_causes "$T/mpi_bad.json" "$T/b"
        cmp -s "$T/a" "$T/b" || {
            diff "$T/a" "$T/b" | head -20; fail "damaged -n $n: JSON differs"; }
    done
}
