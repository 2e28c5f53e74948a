#!/bin/sh
# Same-answer check between two builds of tscope-report (a loader change
# must not move a byte of the report).
#
#   scripts/compare-reports.sh OLD_BUILD NEW_BUILD [JOB_DIR...]
#
# Writes a set of generated jobs (tsc-gen-job of NEW_BUILD: straggler,
# clock offset, copies, syncs, memory records, host-only, ...), adds every
# JOB_DIR given (dumps of the test bed, a big benchmark job), runs both
# builds' `tscope-report DIR --json` and plain text on each and compares
# them with cmp.  Prints one line per job; exits 1 when any differs.
set -eu
OLD=$1 NEW=$2
shift 2
GEN="$NEW/tests/analyzer/tsc-gen-job"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tsc_cmp_XXXXXX")
trap 'rm -rf "$WORK"' EXIT

i=0
gen() {
    i=$((i + 1))
    "$GEN" -o "$WORK/gen$i" "$@" >/dev/null
    echo "$WORK/gen$i $*" >>"$WORK/jobs"
}
: >"$WORK/jobs"
gen --ranks 8 --steps 1000 --events-per-step 1000 --step-ms 50 --stall 0.02 --flops 1e13 --straggler 3:0.1
gen --ranks 4 --steps 50 --straggler 2:0.3 --clock-offset 1:5000000
gen --ranks 4 --steps 40 --copy-share 0.2 --pageable --memset-share 0.05
gen --ranks 2 --steps 60 --syncs-per-step 3 --sync-gap-us 200 --stall 0.1 --stall-every 3
gen --ranks 4 --steps 30 --mem-base 2048 --mem-leak 16@1 --mem-churn 64 --mem-pool 256 --mem-total 81559 --mem-free 80000
gen --ranks 3 --steps 20 --host-only
gen --ranks 16 --ranks-per-host 4 --steps 100 --events-per-step 400 --fp32-gemm --flops 1e12 --seed 7
for d in "$@"; do echo "$d" >>"$WORK/jobs"; done

fail=0
while read -r dir args; do
    for fmt in --json ""; do
        # shellcheck disable=SC2086
        "$OLD/analyzer/tscope-report" "$dir" $fmt >"$WORK/old" 2>&1 || true
        # shellcheck disable=SC2086
        "$NEW/analyzer/tscope-report" "$dir" $fmt >"$WORK/new" 2>&1 || true
        if cmp -s "$WORK/old" "$WORK/new"; then
            echo "same  ${fmt:-text} $(wc -c <"$WORK/new") bytes: ${args:-$dir}"
        else
            echo "DIFF  ${fmt:-text}: ${args:-$dir}"
            fail=1
        fi
    done
done <"$WORK/jobs"
exit $fail
