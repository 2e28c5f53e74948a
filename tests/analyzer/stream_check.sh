# Sourced by the streaming report's tests (test_stream_same.sh,
# test_stream_memory.sh, tests/kineto/test_stream_traces*.sh).  The caller
# sets REPORT and n=0, and calls scratch.
fail() { echo "FAIL: $*"; exit 1; }

# scratch NAME: T, a folder under /tmp removed on exit, also when meson's
# timeout ends the test (dash runs no EXIT trap on a signal by itself).
scratch() {
    T=$(mktemp -d "/tmp/$1_XXXXXX") || fail "mktemp"
    trap 'rm -rf "$T"' EXIT
    trap 'exit 143' TERM INT HUP
}

# same DIR [options]: the streamed report (--stream-above 0) under 1, 2 and
# 3 threads (or those in $same_jobs) prints what --in-memory prints, byte
# for byte: stdout, stderr and exit status.
same() {
    dir=$1; shift
    "$REPORT" "$dir" --in-memory "$@" >"$T/old.out" 2>"$T/old.err"; old=$?
    for j in ${same_jobs:-1 2 3}; do
        "$REPORT" "$dir" --stream-above 0 --jobs $j "$@" >"$T/new.out" 2>"$T/new.err"; new=$?
        [ $new -eq $old ] || fail "$dir $* --jobs $j: exit $new, --in-memory $old"
        cmp -s "$T/old.out" "$T/new.out" || {
            diff "$T/old.out" "$T/new.out" | head; fail "$dir $* --jobs $j: output differs"; }
        cmp -s "$T/old.err" "$T/new.err" || {
            diff "$T/old.err" "$T/new.err" | head; fail "$dir $* --jobs $j: stderr differs"; }
        n=$((n + 1))
    done
}

# within JOB LIMIT_KB THREADS: the streamed report fits under ulimit -v
# LIMIT_KB and prints the JSON of --in-memory, which does not fit (so the
# limit binds).
within() {
    job=$1 limit=$2 threads=$3
    "$REPORT" "$job" --json --in-memory >"$T/old.json" || fail "$job: --in-memory without a limit"
    (ulimit -v "$limit" && exec "$REPORT" "$job" --json --jobs "$threads" --stream-above 0) >"$T/new.json" 2>"$T/new.err" ||
        { cat "$T/new.err"; fail "$job: streaming under ulimit -v $limit"; }
    cmp -s "$T/old.json" "$T/new.json" || fail "$job: streaming JSON under the limit differs"
    (ulimit -v "$limit" && exec "$REPORT" "$job" --json --in-memory) >/dev/null 2>&1 &&
        fail "$job: --in-memory fits under ulimit -v $limit: the limit does not bind"
    echo "ok: $job: streaming ($threads threads) within $limit KB of address space; --in-memory is not"
}

# Address-space limits do not apply under ASan (its shadow memory needs
# terabytes of it): exit 77, skip.
skip_under_asan() {
    if ldd "$REPORT" 2>/dev/null | grep -q libasan; then
        echo "ASan build: address-space limits do not apply"
        exit 77
    fi
}
