#!/bin/sh
# A rank whose own-cost budget stepped down to light (no per-kernel records
# from then on, docs/self-cost.md): the analysis window ends before the
# step, so the figures equal those of the same job cut there by hand; the
# text, JSON and HTML reports say where and what was left out; the same job
# with no step says nothing of it.
set -u
REPORT="$1"
GEN="$2"
T=$(mktemp -d /tmp/tsa_cut_XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 12 steps of 100 ms; rank 2 steps to light when step 7 starts, so kernels
# launched from then on are not in its dump.  By hand: the first 7 steps.
"$GEN" -o "$T/light" --ranks 4 --steps 12 --cost-light 2:7 || fail "gen light"
"$GEN" -o "$T/hand" --ranks 4 --steps 7 || fail "gen hand"
"$GEN" -o "$T/whole" --ranks 4 --steps 12 || fail "gen whole"
for j in light hand whole; do
    "$REPORT" "$T/$j" >"$T/$j.txt" 2>"$T/$j.err" || fail "$j: text report failed"
    "$REPORT" "$T/$j" --json >"$T/$j.json" 2>>"$T/$j.err" || fail "$j: JSON report failed"
    "$REPORT" html "$T/$j" -o "$T/$j.html" 2>>"$T/$j.err" || fail "$j: HTML report failed"
done

line="per-kernel records stop at +1.3 s on rank 2 (own-cost budget, light): figures cover"
grep -qF "$line" "$T/light.txt" || { cat "$T/light.txt"; fail "text: no cut line"; }
grep -qF "the remaining 0.5 s are counted but not analysed" "$T/light.txt" ||
    fail "text: what was left out"
grep -qF "$line" "$T/light.html" || fail "HTML: no cut line"
grep -q "DIST.HANG\|KERNELS_LOST" "$T/light.txt" &&
    fail "launches after the step taken for lost kernels or a hang"
# --window gpu-span (HTA's span, not bounded by steps) ends at the step too.
"$REPORT" "$T/light" --json --window gpu-span >"$T/light.span.json" || fail "span report"
"$REPORT" "$T/hand" --json --window gpu-span >"$T/hand.span.json" || fail "span report"
python3 - "$T" <<'PY' || fail "gpu-span window"
import json, sys
t = sys.argv[1]
a, b = (json.load(open(f"{t}/{j}.span.json")) for j in ("light", "hand"))
for k in ("wall_ns", "budget", "overlap", "idle_causes", "kernel_categories", "top_kernels"):
    assert a[k] == b[k], (k, a[k], b[k])
PY

# The streaming report (ranks read again per stage) takes the same cut.
"$REPORT" "$T/light" --json --stream-above 0 >"$T/light.stream.json" || fail "stream report"
"$REPORT" "$T/light" --json --in-memory >"$T/light.mem.json" || fail "in-memory report"
cmp -s "$T/light.stream.json" "$T/light.mem.json" || fail "streaming report differs"
grep -q "per-kernel records stop" "$T/whole.txt" "$T/whole.html" && fail "whole job: a cut"

python3 - "$T" <<'PY' || fail "JSON"
import json, sys
t = sys.argv[1]
light, hand, whole = (json.load(open(f"{t}/{j}.json")) for j in ("light", "hand", "whole"))
assert "records_cut" not in whole, "whole job: records_cut"
cut = light["records_cut"]["per_kernel"]
assert cut["rank"] == 2 and cut["steps_before"] == 7, cut
assert [r["rank"] for r in cut["ranks"]] == [2], cut["ranks"]
assert cut["ranks"][0]["at_ns"] == cut["at_ns"] and cut["resume_ns"] is None, cut
assert "nccl_plugin" not in light["records_cut"]
# Everything computed from per-kernel records equals the hand-cut job's.
# Not compared: the input's name, what each rank's dump holds (steps found,
# its own cost, the run's whole extent), and the cut itself.  The
# cross-rank pass's blame is compared: it ends at the same collective.
skip = {"dir", "self_cost", "records_cut"}
for k in light:
    if k in skip:
        continue
    if k == "crossrank":
        a, b = dict(light[k]), dict(hand[k])
        a.pop("job_wall_ns"), b.pop("job_wall_ns")
        assert a == b, (a, b)
        continue
    if k == "per_rank":
        for a, b in zip(light[k], hand[k]):
            for kk in a:
                if kk not in ("steps_found", "self_cost"):
                    assert a[kk] == b.get(kk), (kk, a[kk], b.get(kk))
        continue
    assert light[k] == hand.get(k), (k, light[k], hand.get(k))
assert light["steps"] == 5 and light["budget"] != whole["budget"]
PY

# Rank 1 steps to fewer NCCL plugin events at step 8 (no proxy or channel
# records from then on): the window stays, the slow link is still found on
# the records before the step, and its evidence says where they end.
"$GEN" -o "$T/plugin" --ranks 4 --steps 12 --nccl-plugin full --slow-link 1:4 \
    --cost-plugin 1:8 || fail "gen plugin"
"$GEN" -o "$T/plugin0" --ranks 4 --steps 12 --nccl-plugin full --slow-link 1:4 ||
    fail "gen plugin0"
"$REPORT" "$T/plugin" --json >"$T/plugin.json" || fail "plugin: JSON report failed"
"$REPORT" "$T/plugin0" --json >"$T/plugin0.json" || fail "plugin0: JSON report failed"
"$REPORT" "$T/plugin" >"$T/plugin.txt" || fail "plugin: text report failed"
grep -qF "NCCL plugin proxy and channel events stop at +1.4 s on rank 1" "$T/plugin.txt" ||
    fail "plugin: no text line"
python3 - "$T" <<'PY' || fail "plugin JSON"
import json, sys
t = sys.argv[1]
cut, whole = (json.load(open(f"{t}/{j}.json")) for j in ("plugin", "plugin0"))
c = cut["records_cut"]["nccl_plugin"]
assert c["rank"] == 1 and "per_kernel" not in cut["records_cut"], c
assert cut["budget"] == whole["budget"] and cut["steps"] == whole["steps"], "window moved"
link = [f for f in cut["findings"] if f["id"] == "NET.SLOW_LINK"]
assert link, "slow link lost"
note = "proxy events end at +1.4 s on rank 1 (own-cost budget, fewer NCCL plugin events)"
assert any(note in e for e in link[0]["evidence"]), link[0]["evidence"]
assert not any("proxy events end" in e for f in whole["findings"] for e in f.get("evidence", []))
PY
echo "ok"
