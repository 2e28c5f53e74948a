#!/bin/sh
# The streaming report (driver/stream.h; the default above 256 MiB of
# dumps, forced here with --stream-above 0) prints what the in-memory path
# (--in-memory) prints, byte for byte: JSON and text, exit
# status and problems, under 1, 2 and 3 threads, on generated jobs (a
# straggler with its causes, a clock offset, memory records, an I/O mix,
# the gpu-span window, a step marker), generated jobs with the NCCL
# profiler plugin's records (light capture, whose lean ranks keep a few
# counts of them; full capture with a slow link, whose keep them reduced
# per link: load/nprof_lean.h), a damaged copy (a file that is not a
# dump, two cut dumps, a second run, a duplicate rank), the recorded
# test-bed dumps, a pipeline job (loaded whole) and a torch.profiler
# trace directory (tests/kineto/test_stream_traces.sh has more).
set -u
REPORT="$1"
GEN="$2"
SRC="$3"
n=0
. "$(dirname "$0")/stream_check.sh"
scratch tsa_stream

"$GEN" -o "$T/strag" --ranks 8 --ranks-per-host 4 --steps 12 --straggler 5:0.3 \
    --clock-offset 3:5000000 --flops 1e12 --mem-base 100 --mem-leak 2@6 >/dev/null ||
    fail "generator"
same "$T/strag" --json
grep -q '"blamed_as":[[:space:]]*"straggler"' "$T/new.out" || fail "no cause block: not compared"
grep -q '"kind":[[:space:]]*"device"' "$T/new.out" || fail "no cause in the block"
same "$T/strag"
same "$T/strag" --json --window gpu-span
same "$T/strag" --html
same "$T/strag" --json --warmup 0 --step-marker ncclAllReduce

"$GEN" -o "$T/io" --ranks 4 --steps 20 --copy-share 0.2 --pageable --memset-share 0.05 \
    --syncs-per-step 2 --sync-gap-us 200 --stall 0.1 --stall-every 3 --fp32-gemm \
    --flops 1e12 >/dev/null || fail "generator (io)"
same "$T/io" --json

# The plugin's records: light (the preload's default) with a straggler,
# full with a slow link (its finding, link table and transfer tables), and
# a cut copy of the full job (a rank's records end mid-collective).
"$GEN" -o "$T/light" --ranks 8 --ranks-per-host 4 --steps 12 --straggler 5:0.3 \
    --flops 1e12 --nccl-plugin light >/dev/null || fail "generator (light)"
same "$T/light" --json
grep -q '"joined":[[:space:]]*392,' "$T/new.out" || fail "light: the plugin's collectives are not all joined"
same "$T/light"
"$GEN" -o "$T/full" --ranks 8 --ranks-per-host 4 --steps 12 --flops 1e12 \
    --nccl-plugin full --slow-link 2:4 >/dev/null || fail "generator (full)"
same "$T/full" --json
grep -q '"id":[[:space:]]*"NET.SLOW_LINK"' "$T/new.out" || fail "full: no slow link found"
grep -q '"collective_transfers"' "$T/new.out" || fail "full: no transfer tables"
same "$T/full"
f=$(ls "$T/full"/tscope_r4_*.tsd)
size=$(wc -c <"$f")
head -c $((size * 2 / 3)) "$f" >"$T/cut" && mv "$T/cut" "$f"
same "$T/full" --json

# Damaged: not a dump, two cut dumps, a dump of another run, a second dump
# of rank 2 (the better one is kept).
cp -r "$T/strag" "$T/bad"
head -c 3000 /dev/urandom >"$T/bad/tscope_r9_junk_1.tsd"
for r in 1 6; do
    f=$(ls "$T/bad"/tscope_r${r}_*.tsd)
    size=$(wc -c <"$f")
    head -c $((size * 2 / 3)) "$f" >"$T/cut" && mv "$T/cut" "$f"
done
"$GEN" -o "$T/other" --ranks 2 --steps 4 --run-id other-run >/dev/null || fail "generator (other)"
cp "$T/other"/tscope_r0_*.tsd "$T/bad/tscope_r0_zz_other.tsd"
f=$(ls "$T/bad"/tscope_r2_*.tsd)
size=$(wc -c <"$f")
head -c $((size / 2)) "$f" >"$T/bad/tscope_r2_zz_dup.tsd"
same "$T/bad" --json
grep -q "not a tscope dump" "$T/new.err" || fail "damaged: the junk file is not reported"
same "$T/bad"

for d in "$SRC"/tests/data/testbed/*/; do
    same "$d" --json
done
# A 4-stage x 2 pipeline of the test bed (scripts/pipeline-trials.sh, one
# slow worker): Send/Recv calls, so the job is loaded whole
# (tsa_stream_needs_whole; the test bed has no GPU kernels, so this job
# alone would not show a what-if that lost them).
same "$SRC/tests/data/pipeline" --json
grep -q '"pipeline":[[:space:]]*{' "$T/new.out" || fail "pipeline job: no pipeline what-if"
same "$SRC/tests/data/kineto-2rank" --json

"$REPORT" "$T/strag" --jobs 0 >/dev/null 2>&1 && fail "--jobs 0 accepted"
# A dump over --max-rank-mb is refused, named, and the other ranks are
# reported, even in a job small enough to be held whole otherwise.
"$GEN" -o "$T/big" --ranks 4 --steps 12 --events-per-step 6000 >/dev/null || fail "generator (big)"
"$GEN" -o "$T/lim" --ranks 4 --steps 12 >/dev/null || fail "generator (lim)"
cp "$T/big"/tscope_r3_*.tsd "$T/lim/" || fail "rank 3 (1.5 MB) into the small job"
"$REPORT" "$T/lim" --json --max-rank-mb 1 >"$T/new.out" 2>"$T/new.err"
[ $? -eq 1 ] || fail "--max-rank-mb: exit status not 1"
grep -q "tscope_r3_.*over the per-rank limit" "$T/new.err" || fail "--max-rank-mb: the big dump is not named"
grep -q '"ranks":[[:space:]]*3,' "$T/new.out" || fail "--max-rank-mb: the other ranks are not reported"
# A job this small is held whole by default: same output again.
"$REPORT" "$T/strag" --json >"$T/new.out" 2>&1 || fail "default path"
"$REPORT" "$T/strag" --json --in-memory >"$T/old.out" 2>&1
cmp -s "$T/old.out" "$T/new.out" || fail "default (held whole) and --in-memory differ"
echo "ok: $n comparisons"
