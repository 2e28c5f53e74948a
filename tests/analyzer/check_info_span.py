#!/usr/bin/env python3
"""info's span on a dump with the NCCL plugin's full records.

A plugin wait record (np_proxy_wait) keeps durations in its start/end
fields (docs/format.md), so the span `info` prints must come from the
records whose start/end are times.  The expected span is read from the
dump's own records (`dump --json`), never from info's earlier output.
  check_info_span.py TSC_GEN_JOB TSCOPE_REPORT
"""
import json
import subprocess
import sys
import tempfile

# start/end are not times of the record: a wait's durations, an id pair,
# the clock pairs (docs/format.md, the kinds table).
NOT_TIMES = {'np_proxy_wait', 'extcorr', 'clock', 'meta', 'desc'}


def main():
    gen, report = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([gen, '-o', d, '--ranks', '2', '--nccl-plugin', 'full'], check=True,
                       stdout=subprocess.DEVNULL)
        info = json.loads(subprocess.run([report, 'info', '--json', d], check=True,
                                         capture_output=True, text=True).stdout)
        failures = 0
        for f in info['files']:
            lines = subprocess.run([report, 'dump', '--json', f['path']], check=True,
                                   capture_output=True, text=True).stdout.splitlines()
            recs = [json.loads(line) for line in lines]
            waits = [r for r in recs if r['kind'] == 'np_proxy_wait']
            timed = [r for r in recs if r['kind'] not in NOT_TIMES and r.get('start_ns')]
            if not waits:
                print(f"{f['path']}: no np_proxy_wait record: the case is not exercised")
                return 1
            first = min(r['start_ns'] for r in timed)
            last = max(r['end_ns'] for r in timed)
            ok = f['first_ns'] == first and f['last_ns'] == last
            print(f"{'ok  ' if ok else 'FAIL'} {f['path']}: info {f['first_ns']}..{f['last_ns']}, "
                  f"records {first}..{last} ({len(waits)} waits)")
            failures += not ok
        return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
