#!/usr/bin/env python3
"""The table of event kinds against the dump format's description.

  tests/check_event_kinds.py [SOURCE_ROOT]   exit 1 on any difference
  tests/check_event_kinds.py --selftest      plant each kind of difference
                                             in a scratch copy and check it
                                             is found

format/tsc_event_kinds.h generates the codes written in dumps; docs/
format.md is what readers of the format (ours and others') go by.  Codes
are append-only: a line of the table whose code moved, a kind the document
does not list or lists with another code, or a descriptor type that differs
from the document's "desc" column is reported.  In the document's tables
of kinds ("| kind | value | ..."), a desc cell that starts with a
descriptor type's name (NCCL_CALL, STRING, ...) names the kind's
descriptor; any other cell (0, a count, a rank, "see below") means none.
"""
import os
import re
import shutil
import sys
import tempfile

ROW = re.compile(r'^\s*X\((\w+),\s*(0x[0-9a-fA-F]+),\s*(\w+),\s*(\w+),\s*(\w+),')
DESC_TYPE = re.compile(r'^\s*TSC_DESC_(\w+)\s*=\s*\d+')


def table(root):
    """{ID: (code, DESC)} from the X-macro lines of the header."""
    kinds = {}
    with open(os.path.join(root, 'format', 'tsc_event_kinds.h')) as f:
        for line in f:
            m = ROW.match(line)
            if m:
                kinds[m.group(1)] = (int(m.group(2), 16), m.group(4))
    return kinds


def desc_types(root):
    with open(os.path.join(root, 'format', 'tsc_format.h')) as f:
        return {m.group(1) for m in map(DESC_TYPE.match, f) if m}


def documented(root, types):
    """{ID: (code, DESC)} from the document's tables of kinds."""
    kinds = {}
    desc_col = None
    with open(os.path.join(root, 'docs', 'format.md')) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip('|').split('|')]
            if not line.startswith('|'):
                desc_col = None
                continue
            if cells[:2] == ['kind', 'value']:
                desc_col = cells.index('desc')
                continue
            if desc_col is None or not re.match(r'0x[0-9a-fA-F]+', cells[1]):
                continue
            ident = cells[0].split()[0]
            code = int(re.match(r'0x[0-9a-fA-F]+', cells[1]).group(0), 16)
            first = re.match(r'\w+', cells[desc_col])
            desc = first.group(0) if first and first.group(0) in types else 'NONE'
            kinds[ident] = (code, desc)
    return kinds


def check(root):
    problems = []
    ours, doc = table(root), documented(root, desc_types(root))
    if not ours:
        problems.append('format/tsc_event_kinds.h: no table lines found')
    for ident in sorted(set(ours) | set(doc)):
        if ident not in doc:
            problems.append('TSC_EV_%s is not in docs/format.md' % ident)
        elif ident not in ours:
            problems.append('docs/format.md lists %s, the table does not' % ident)
        elif ours[ident][0] != doc[ident][0]:
            problems.append('TSC_EV_%s is 0x%02x, docs/format.md says 0x%02x' %
                            (ident, ours[ident][0], doc[ident][0]))
        elif ours[ident][1] != doc[ident][1]:
            problems.append('TSC_EV_%s refers to descriptor %s, docs/format.md says %s' %
                            (ident, ours[ident][1], doc[ident][1]))
    return problems


def selftest():
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    plants = [
        ('format/tsc_event_kinds.h', 'X(PROC_FAULTS, 0x45,', 'X(PROC_FAULTS, 0x4a,', 'is 0x4a'),
        ('format/tsc_event_kinds.h', 'X(SCHED_RUN, 0x47, sched_run, NONE,',
         'X(SCHED_RUN, 0x47, sched_run, STRING,', 'refers to descriptor STRING'),
        ('docs/format.md', '| HOST_LOAD | 0x43', '| HOST_LOAD | 0x4c', 'says 0x4c'),
        ('docs/format.md', '| NP_CE_SYNC | 0x56 |', '| NP_CE_SYNK | 0x56 |',
         'NP_CE_SYNC is not in docs'),
    ]
    failed = 0
    if check(src):
        print('FAIL the tree itself differs: %s' % check(src)[0])
        failed = 1
    for path, old, new, expect in plants:
        with tempfile.TemporaryDirectory() as tmp:
            for sub in ('format', 'docs'):
                shutil.copytree(os.path.join(src, sub), os.path.join(tmp, sub))
            with open(os.path.join(tmp, path)) as f:
                text = f.read()
            if old not in text:
                print('FAIL cannot plant %r in %s' % (old, path))
                failed = 1
                continue
            with open(os.path.join(tmp, path), 'w') as f:
                f.write(text.replace(old, new, 1))
            found = [p for p in check(tmp) if expect in p]
            print('%s %s -> %s' % ('ok  ' if found else 'FAIL', old, new))
            failed |= not found
    return failed


def main():
    if sys.argv[1:] == ['--selftest']:
        return selftest()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    problems = check(root)
    for p in problems:
        print(p)
    print('%d kinds in the table, %d problems' % (len(table(root)), len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
