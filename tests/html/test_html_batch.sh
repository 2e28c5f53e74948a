#!/bin/sh
# The fleet view as an HTML page (tscope-report batch --html, batch merge
# --html; docs/html.md): five generated jobs, the straggler on host node2
# in three of them (two slow-kernel jobs, cause device; one host-only job,
# cause unknown) and on node0 in one; the hosts chart counts them with
# their causes at exact bar lengths, the jobs chart and every row follow.
# Rows with markup in the host, cause, job and verdict (a summary is
# untrusted) come out escaped and inert.
#
#   test_html_batch.sh TSCOPE_REPORT TSC_GEN_JOB
set -u
report=$1 gen=$2
T=$(mktemp -d "${TMPDIR:-/tmp}/tsc_htmlb_XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "$0")/html_checks.sh"

F=$T/fleet
mkdir "$F" || exit 1
g() { name=$1; shift; "$gen" -o "$F/$name" --steps 10 --ranks-per-host 2 "$@" >/dev/null 2>&1 ||
        fail "tsc-gen-job $name"; }
g jobA --ranks 8 --straggler 5:0.3
g jobB --ranks 8 --straggler 4:0.3 --seed 3
g jobC --ranks 4 --straggler 1:0.4 --host-only
g jobD --ranks 8 --straggler 5:0.3 --host-only
g clean --ranks 4

"$report" batch "$F" -q --no-write --html "$T/fleet.html" >"$T/table.txt" 2>"$T/err" ||
    { cat "$T/err"; fail "batch --html"; }
grep -q "^wrote $T/fleet.html\$" "$T/err" || fail "no 'wrote' line"
grep -q 'node2: 3 jobs' "$T/table.txt" || fail "the text fleet view is still printed"
no_active_content "$T/fleet.html"
for id in fleet-hosts fleet-jobs fleet-rows; do
    grep -q "id=\"$id\"" "$T/fleet.html" || fail "no element with id $id"
done
sed -n '/id="fleet-hosts"/,/<\/svg>/p' "$T/fleet.html" >"$T/hosts.svg"
grep -q 'node2 was the straggler&#39;s host in 3 of 5 jobs (cause: device x2, unknown x1); 1 of 2 blamed hosts came back in more than one job (orange).' \
    "$T/fleet.html" || fail "the hosts chart's reading"
# Axis 0-5 jobs over 380 px: 3 jobs 228 px, 1 job 76 px.
grep -q '>node2</text><rect class="loss" x="180" y="27" width="228.0" height="16"/><text x="412.0" y="39">3 jobs (cause: device x2, unknown x1)<' \
    "$T/hosts.svg" || fail "node2's bar"
grep -q '>node0</text><rect class="neutral" x="180" y="49" width="76.0" height="16"/><text x="260.0" y="61">1 job (cause: unknown x1)<' \
    "$T/hosts.svg" || fail "node0's bar"
[ "$(grep -c '<rect ' "$T/hosts.svg")" -eq 2 ] || fail "not two host bars"
[ "$(sed -n '/id="fleet-jobs"/,/<\/svg>/p' "$T/fleet.html" | grep -c '<rect ')" -eq 5 ] ||
    fail "not five job bars"
[ "$(grep -c '^<tr><td class="name">' "$T/fleet.html")" -eq 5 ] || fail "not five rows"
grep -q '<td>rank 4</td><td>node2</td><td>device</td>' "$T/fleet.html" || fail "jobB's row"

# --top bounds the jobs chart; --html with --shard is refused.
"$report" batch "$F" -q --no-write --top 2 --html "$T/top2.html" >/dev/null 2>&1 || fail "--top 2"
[ "$(sed -n '/id="fleet-jobs"/,/<\/svg>/p' "$T/top2.html" | grep -c '<rect ')" -eq 2 ] ||
    fail "--top 2 does not give two job bars"
"$report" batch "$F" -q --no-write --shard 0/2 --html "$T/s.html" >/dev/null 2>&1
[ $? -eq 2 ] || fail "--html with --shard is not a usage error"
[ -e "$T/s.html" ] && fail "a page was written for a shard"
"$report" batch "$F" -q --no-write --html "$T/no/such/dir/x.html" >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unwritable page is not an error"

# Hostile rows through batch merge: markup in every text field.
"$report" batch "$F" -q --no-write --ndjson >"$T/rows.ndjson" 2>/dev/null
sed -e 's#"node2"#"<script>alert(1)</script>"#' -e 's#"device"#"<img src=x onerror=alert(2)>"#' \
    -e 's#"straggler-bound"#"<b onclick=alert(3)>"#' -e 's#/jobA"#/<svg onload=alert(4)>"#' \
    "$T/rows.ndjson" >"$T/hostile.ndjson"
"$report" batch merge "$T/hostile.ndjson" --html "$T/hostile.html" >/dev/null 2>&1 ||
    fail "batch merge --html"
no_active_content "$T/hostile.html"
grep -q '>&lt;script&gt;alert(1)&lt;/script&gt;</text><rect class="loss"' "$T/hostile.html" ||
    fail "the host is not escaped in the chart"
grep -q '(cause: &lt;img src=x onerror=alert(2)&gt; x2, unknown x1)' "$T/hostile.html" ||
    fail "the cause is not escaped"
grep -q '<td>&lt;b onclick=alert(3)&gt;</td>' "$T/hostile.html" || fail "the verdict is not escaped"
grep -q '/&lt;svg onload=alert(4)&gt;</td>' "$T/hostile.html" || fail "the job is not escaped"
echo ok
