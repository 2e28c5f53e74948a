#!/bin/sh
# A real Prometheus (Debian's `prometheus`) scrapes `tscope-report live` on
# a running 4-rank black-box job whose rank 2 computes twice as long: on
# 127.0.0.1 with a bounded config (1 s scrapes, 1 h retention), read back
# through its HTTP API.  While the job runs the scraped series name rank 2
# the straggler; after it has ended, every tscope_job_* series Prometheus
# holds equals `tscope-report live --once` on the final summaries (whose
# values test_e2e_bb_live checks against the files), and the complete steps
# equal the summaries each rank wrote (`tscope-report blackbox --json`).
# Skips (77) without prometheus, curl or python3.
set -u
. "$(dirname "$0")/prom_helpers.sh"
prom_require
set -- $(prom_free_ports 2)
live=$2
prom_start "$1" "127.0.0.1:$live"

out=$T/out
mkdir -p "$out"
"$TB_REPORT" live "$out" --port "$live" --period 0.3 --window 100 >"$T/live.out" 2>"$T/live.err" &
pids="$pids $!"
prom_wait_up 1 # scraping before the job starts: it runs ~7 s
LD_PRELOAD="${TB_ASAN_RUNTIME:+$TB_ASAN_RUNTIME }$TB_PRELOAD" LD_LIBRARY_PATH="$TB_FAKENCCL_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    TSCOPE_OUT=$out TSCOPE_MODE=blackbox TSCOPE_FLUSH_MS=200 TSCOPE_BB_K=1000 \
    "$TB_LAUNCH" -n 4 -- "$TB_RANK" --steps 1000 --compute-us 3000 --buckets 16K,4K \
    --grouped-buckets 0 --fsdp-bytes 0 --ring-bytes 0 --no-extras --slow-ranks 2 \
    --slow-factor 2 >"$T/job.out" 2>"$T/job.err" &
job=$!
# While the job runs: Prometheus sees rank 2 named (30 s at most).
i=0 named=
while [ $i -lt 30 ] && kill -0 $job 2>/dev/null; do
    sleep 1
    at=$(date +%s.%N) # both series at one evaluation time: one scrape
    v=$(q 'tscope_job_straggler_rank' "$at" | value)
    steps=$(q 'tscope_job_complete_steps_total' "$at" | value)
    if [ "$v" = 2 ]; then named=$steps; break; fi
    i=$((i + 1))
done
[ -n "$named" ] || fail "Prometheus never saw rank 2 named while the job ran (last: $v)"
share=$(q 'tscope_job_straggler_persistence_ratio{rank="2"}' | value)
python3 -c "import sys; sys.exit(0 if float('$share') >= 0.5 else 1)" ||
    fail "rank 2's persistence scraped: $share"
wait $job || { cat "$T/job.err"; fail "the job failed"; }
# Named while running (before step 1000), not before the window holds the
# 10 steps live needs to name anyone (Prometheus scrapes from the job's
# start, so this comes early).
python3 -c "import sys; sys.exit(0 if 10 <= float('$named') < 1000 else 1)" ||
    fail "named at $named complete steps: not while running, or too early"
echo "rank 2 named at $named complete steps (persistence $share)"
# After the end: wait until a scrape holds the final figures, then compare.
"$TB_REPORT" live "$out" --once --window 100 >"$T/final.prom" || fail "live --once"
if command -v promtool >/dev/null 2>&1; then
    promtool check metrics <"$T/final.prom" || fail "promtool check metrics on live's output"
fi
"$TB_REPORT" blackbox "$out" --json >"$T/bb.json" || fail "blackbox --json"
# Prometheus holds the final figures once it has scraped a read of the
# final files (each series of one scrape: the same read): compare every
# second until a scrape equals, 30 s at most (the last difference is said).
cat >"$T/compare.py" <<'PY'
import json, math, re, sys
want = {}
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    m = re.match(r'([a-z_]+)\{([^}]*)\} (\S+)$', line.strip())
    labels = tuple(sorted(x for x in m.group(2).split(",") if not x.startswith("job=")))
    want[(m.group(1), labels)] = float(m.group(3))
got = {}
for r in json.load(open(sys.argv[2]))["data"]["result"]:
    m = r["metric"]
    labels = tuple(sorted(f'{k}="{v}"' for k, v in m.items()
                          if k not in ("__name__", "job", "instance")))
    got[(m["__name__"], labels)] = float(r["value"][1])
assert set(got) == set(want), f"series: only scraped {set(got) - set(want)}, only live {set(want) - set(got)}"
for k, v in want.items():
    assert got[k] == v or (math.isnan(v) and math.isnan(got[k])), f"{k}: scraped {got[k]}, live {v}"
bb = json.load(open(sys.argv[3]))
per_rank = [r["steps"] for r in bb["ranks"]]
assert len(per_rank) == 4 and want[("tscope_job_complete_steps_total", ())] == min(per_rank), \
    f"complete steps {want[('tscope_job_complete_steps_total', ())]}, summaries {per_rank}"
assert want[("tscope_job_straggler_rank", ())] == 2
print(f"ok: {len(want)} series equal; {min(per_rank)} complete steps; rank 2 named")
PY
i=0
while :; do
    sleep 1
    curl -s -m 5 "http://127.0.0.1:$web/api/v1/query" \
        --data-urlencode 'query={__name__=~"tscope_job_.*"}' >"$T/scraped.json"
    python3 "$T/compare.py" "$T/final.prom" "$T/scraped.json" "$T/bb.json" 2>"$T/compare.err" && break
    i=$((i + 1))
    [ $i -lt 30 ] || { cat "$T/compare.err"; fail "scraped series differ"; }
done
