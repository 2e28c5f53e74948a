#!/bin/sh
# A real Prometheus (Debian's `prometheus`) scrapes a running black-box job:
# the test bed's 4 ranks serve /metrics (TSCOPE_METRICS_PORT + local rank),
# Prometheus on 127.0.0.1 scrapes them every second, and the series read
# back through its HTTP API must hold what the job does: 4 ranks, bytes per
# NCCL call exactly 10240 (each step: one 16 KiB and one 4 KiB AllReduce),
# step counts no higher than the summaries written to the dumps.
# Skips (77) without prometheus, curl or python3.
set -u
. "$(dirname "$0")/prom_helpers.sh"
prom_require
web=$(prom_free_ports 1)
base=$(prom_free_run 4) || fail "no 4 consecutive free ports" # ranks use base..base+3
prom_start "$web" "127.0.0.1:$base" "127.0.0.1:$((base + 1))" "127.0.0.1:$((base + 2))" \
    "127.0.0.1:$((base + 3))"

out=$T/out
LD_PRELOAD="${TB_ASAN_RUNTIME:+$TB_ASAN_RUNTIME }$TB_PRELOAD" LD_LIBRARY_PATH="$TB_FAKENCCL_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    TSCOPE_OUT=$out TSCOPE_MODE=blackbox TSCOPE_FLUSH_MS=200 TSCOPE_BB_K=1000 \
    TSCOPE_METRICS_PORT=$base \
    "$TB_LAUNCH" -n 4 -- "$TB_RANK" --steps 2000 --compute-us 5000 --buckets 16K,4K \
    --grouped-buckets 0 --fsdp-bytes 0 --ring-bytes 0 --no-extras >"$T/job.out" 2>"$T/job.err" &
job=$!
# Scrape the running job until every rank has been seen (20 s at most);
# the three series are then read at one evaluation time.
i=0
while [ $i -lt 20 ]; do
    sleep 1
    at=$(date +%s.%N)
    n=$(q 'count(tscope_nccl_calls_total > 0)' "$at" | value)
    [ "$n" = 4 ] && break
    i=$((i + 1))
done
calls=$(q 'tscope_nccl_calls_total' "$at")
bytes=$(q 'tscope_nccl_bytes_total' "$at")
steps=$(q 'tscope_step_duration_seconds_count' "$at")
wait $job || { cat "$T/job.err"; fail "the job failed"; }
summaries=$("$TB_REPORT" blackbox "$out" | sed -n 's/.*steps 0-\([0-9]*\) summarized.*/\1/p')
[ -n "$summaries" ] || fail "no summaries in $out"
python3 - "$calls" "$bytes" "$steps" "$summaries" <<'PY' || fail "series do not match the job"
import json, sys
calls, byts, steps = (json.loads(a)["data"]["result"] for a in sys.argv[1:4])
last = int(sys.argv[4])
def by_rank(res):
    return {r["metric"]["rank"]: float(r["value"][1]) for r in res}
c, b, s = by_rank(calls), by_rank(byts), by_rank(steps)
assert sorted(c) == ["0", "1", "2", "3"], f"ranks scraped: {sorted(c)}"
for r in c:
    assert c[r] > 0 and b[r] / c[r] == 10240.0, f"rank {r}: {b[r]} bytes in {c[r]} calls"
    assert 0 < s[r] <= last + 1, f"rank {r}: {s[r]} steps scraped, {last + 1} summarized"
    assert c[r] == 2 * (s[r] - 2), f"rank {r}: {c[r]} calls for {s[r]} steps"
print("ok:", {r: (c[r], b[r], s[r]) for r in sorted(c)})
PY
