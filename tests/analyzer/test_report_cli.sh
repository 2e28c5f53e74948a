#!/bin/sh
# tscope-report end to end on generated jobs: exit codes (missing dir 2,
# no dumps 2, nothing readable 2, damaged dumps 1 with the problems listed,
# healthy 0), color only when asked, --json keys.
set -u
REPORT="$1"
GEN="$2"
T=$(mktemp -d /tmp/tsa_cli_XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$REPORT" "$T/missing" >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 2 ] || fail "missing dir: exit $rc"
grep -q "no such directory" "$T/err" || fail "missing dir message"

mkdir "$T/empty"
"$REPORT" "$T/empty" >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 2 ] || fail "empty dir: exit $rc"
grep -q "no tscope dumps" "$T/err" || fail "empty dir message"

mkdir "$T/garbage"
head -c 5000 /dev/urandom >"$T/garbage/tscope_r0_x_1.tsd"
"$REPORT" "$T/garbage" >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 2 ] || fail "garbage dump: exit $rc"

"$REPORT" report --bogus "$T/empty" >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 2 ] || fail "unknown option: exit $rc"

"$REPORT" "$T/empty" --warmup abc >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 2 ] || fail "bad value: exit $rc"
grep -q "bad value 'abc' for --warmup" "$T/err" || fail "bad value message: $(cat "$T/err")"

"$GEN" -o "$T/job" --ranks 4 --steps 8 --stall 0.1 --flops 1e13 || fail "generator"
"$REPORT" "$T/job" >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 0 ] || fail "good job: exit $rc: $(cat "$T/err")"
for s in VERDICT "EFFICIENCY BUDGET" "COMMUNICATION OVERLAP" PHASES "PER RANK" COLLECTIVES "KERNELS by category" \
         "TOP KERNELS" CROSS-RANK FINDINGS DATA.STALL "MFU"; do
    grep -q "$s" "$T/out" || fail "text report lacks $s"
done
grep -q "CROSS-RANK (one row per rank" "$T/out" || fail "4 ranks: no cross-rank table"
# One rank: the cross-rank section says in one line why there is no table.
"$GEN" -o "$T/one" --ranks 1 --steps 8 >/dev/null || fail "generator, one rank"
"$REPORT" "$T/one" >"$T/out" 2>"$T/err" || fail "one rank: exit $?"
grep -q "^  one rank: nothing to compare across ranks" "$T/out" || fail "one rank: no reason given"
if grep -q "one row per rank" "$T/out"; then fail "one rank: empty cross-rank table"; fi
"$REPORT" "$T/job" >"$T/out" 2>/dev/null
# Piped output has no escape codes; --color always has them; NO_COLOR wins over auto.
if grep -q "$(printf '\033')" "$T/out"; then fail "color when piped"; fi
"$REPORT" "$T/job" --color always >"$T/out" 2>/dev/null
grep -q "$(printf '\033')" "$T/out" || fail "no color with --color always"
NO_COLOR=1 "$REPORT" "$T/job" --color auto >"$T/out" 2>/dev/null
if grep -q "$(printf '\033')" "$T/out"; then fail "color with NO_COLOR"; fi

# Throughput: samples/s and tokens/s only when the batch is given; a bad
# batch is a usage error.
grep -q "steps/s" "$T/out" || fail "no steps/s"
if grep -q "[0-9] samples/s" "$T/out"; then fail "samples/s without --samples-per-step"; fi
"$REPORT" "$T/job" --samples-per-step 16 --tokens-per-step 2048 >"$T/out" 2>/dev/null
grep -q "[0-9] samples/s" "$T/out" || fail "no samples/s with --samples-per-step"
grep -q "[0-9] tokens/s" "$T/out" || fail "no tokens/s with --tokens-per-step"
"$REPORT" "$T/job" --samples-per-step x >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 2 ] || fail "bad --samples-per-step: exit $rc"
# The sparkline is ASCII when piped, whatever the locale.
LC_ALL=C.UTF-8 "$REPORT" "$T/job" >"$T/out" 2>/dev/null
if LC_ALL=C grep -q "$(printf '\342\226')" "$T/out"; then fail "block characters when piped"; fi
LC_ALL=C.UTF-8 "$REPORT" "$T/job" --color always >"$T/out" 2>/dev/null
LC_ALL=C grep -q "$(printf '\342\226')" "$T/out" || fail "no block characters on a UTF-8 color terminal"

"$REPORT" "$T/job" --json >"$T/json" 2>"$T/err"; rc=$?
[ $rc -eq 0 ] || fail "json: exit $rc"
for k in '"wall_ns"' '"ranks":	4' '"steps":	6' '"budget"' '"mfu"' '"lines"' '"overlap"' \
         '"exposed_wait_ns"' '"findings"' '"verdict"' '"collectives"' '"confidence"' \
         '"throughput"' '"recoverable_ns"'; do
    grep -q "$k" "$T/json" || fail "json lacks $k"
done
# No memory records: memory is null and there is no MEMORY section.
grep -q '"memory":	null' "$T/json" || fail "json memory not null without records"

# Memory records (format 1.1): the generator's options on the command line
# (peak 1024 + 256 + 8 x 64 + 128 MiB on rank 1),
# the MEMORY section, the findings, the JSON object and the dump view.
"$GEN" -o "$T/memjob" --ranks 2 --steps 8 --mem-base 1024 --mem-leak 64@1 --mem-churn 128 \
    --mem-pool 256 --mem-free 4096 --truth "$T/memtruth" || fail "generator (memory)"
grep -q '"peak_reserved_bytes": 2013265920' "$T/memtruth" || fail "memory truth: $(cat "$T/memtruth")"
"$REPORT" "$T/memjob" >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 0 ] || fail "memory job: exit $rc: $(cat "$T/err")"
for s in "MEMORY (reserved GPU memory per rank)" MEM.GROWTH MEM.CHURN "rank 1's reserved GPU memory grows 64.0 MiB"; do
    grep -q "$s" "$T/out" || fail "memory report lacks $s"
done
"$REPORT" "$T/memjob" --json >"$T/json" 2>/dev/null
grep -q '"peak_reserved_bytes":	2013265920' "$T/json" || fail "json memory peak"
"$REPORT" dump --json "$T/memjob" >"$T/dump" 2>"$T/err" || fail "dump --json of memory records"
grep -q '"mem_alloc"' "$T/dump" || fail "dump lacks mem_alloc records"
grep -q '"mem_pool"' "$T/dump" || fail "dump lacks mem_pool records"
grep -q '"pool_op"' "$T/dump" || fail "dump lacks pool_op"

# A damaged dump (cut mid-chunk) still yields a report, exit 1, problems listed.
f=$(ls "$T/job"/*.tsd | head -n 1)
size=$(wc -c <"$f")
head -c $((size - 100)) "$f" >"$f.tmp" && mv "$f.tmp" "$f"
"$REPORT" "$T/job" >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 1 ] || fail "damaged dump: exit $rc"
grep -q "problem" "$T/err" || fail "damaged dump: problems not listed"
grep -q "EFFICIENCY BUDGET" "$T/out" || fail "damaged dump: no report"
# Ranks cut to two thirds between whole ones: the loader hands per-rank
# scratch (the API array lean emptied) from rank to rank, also past ranks
# that leave none.
"$GEN" -o "$T/cut" --ranks 8 --ranks-per-host 4 --steps 12 --straggler 5:0.3 \
    --flops 1e12 --mem-base 100 >/dev/null || fail "generator (cut)"
for r in 1 6; do
    f=$(ls "$T/cut"/tscope_r${r}_*.tsd)
    size=$(wc -c <"$f")
    head -c $((size * 2 / 3)) "$f" >"$f.tmp" && mv "$f.tmp" "$f"
done
"$REPORT" "$T/cut" --json >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 1 ] || fail "cut dumps: exit $rc"
grep -q '"budget"' "$T/out" || fail "cut dumps: no report"

# Another run in the same directory is reported, not mixed in.
"$GEN" -o "$T/job" --ranks 2 --steps 8 --run-id other-run || fail "generator 2"
"$REPORT" "$T/job" --json >"$T/json" 2>/dev/null
grep -q '"ranks":	4' "$T/json" || fail "other run mixed in"
grep -q 'other-run' "$T/json" || fail "other run not listed"
echo "ok"
