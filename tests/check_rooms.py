#!/usr/bin/env python3
"""The house plan of the analyzer, checked over #include lines.

  tests/check_rooms.py [SOURCE_ROOT]          exit 1 on any violation
  tests/check_rooms.py [SOURCE_ROOT] --rooms  also print which room includes which
  tests/check_rooms.py --selftest             plant each kind of violation in a
                                              scratch tree and check it is found

Rooms, lowest first (docs/architecture.md says what each holds):

  format < util < model < reader, kineto < load < passes < crossrank, hang
         < findings < driver < report < batch < cmds < mpi

A file of analyzer/<room>/ may include its own room and rooms below it;
rooms on one level (reader and kineto, crossrank and hang) do not include
each other; analyzer/main.c belongs to cmds.  Every "quoted" include must
resolve to a file next to the includer, under analyzer/ (room-qualified,
"model/model.h") or under format/: an include that compiles only through
an extra include path is reported too.

Calls: a file that names a function defined in a higher room (or a room on
its own level) breaks the order as an upward include would, even when the
declaration it uses sits in a low header (a result type's header declaring
the driver, say).  Functions are the non-static ones defined in .c files;
a file's own static functions are not mistaken for them.

Cycles: a module is a path without its extension (x.c with x.h).  A module
depends on another when one of its files includes one of the other's, or
when its .c file calls a function the other defines (a header that declares
the functions of several .c files is a module of its own).  Any cycle among the modules of format/
and analyzer/ is reported, within a room as well as across rooms.

The capture (preload/README.md): rooms preload/core, the parts
preload/nccl, preload/nprof, preload/blackbox, preload/telemetry and cupti/
(the GPU part), and preload/process.  core/ includes and names only core/
and format/; a part only its own room, core/ and format/, never another
part; only process/ names the parts.  The capture and the analyzer never
include each other; a capture file outside the rooms is reported; cycles
among capture modules are reported as among the analyzer's.  Functions the
library exports (exports-*.txt: the interposed libc, NCCL and CUPTI entry
points) belong to no room.  CAPTURE_EXCEPTIONS lists the breaks that were
there before the rule; it only shrinks.
"""
import glob
import os
import re
import sys

LEVELS = [['format'], ['util'], ['model'], ['reader', 'kineto'], ['load'], ['passes'],
          ['crossrank', 'hang'], ['whatif'], ['findings'], ['driver'], ['report'], ['batch'], ['cmds'],
          ['mpi']]
LEVEL = {room: i for i, rooms in enumerate(LEVELS) for room in rooms}
# The capture (preload/README.md): the core, the optional parts, and process/,
# the only room that names the parts.  cupti/ is the GPU part.
CAPTURE_PARTS = ('nccl', 'nprof', 'blackbox', 'telemetry', 'cupti')
CAPTURE_ROOMS = ('core',) + CAPTURE_PARTS + ('process',)
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"', re.S)
# A function definition: at the start of a line, a name and its parameters,
# then the body (not a prototype's semicolon).
DEFINITION = re.compile(r'^([A-Za-z_][\w \t*]*?)\b([A-Za-z_]\w*)\s*\([^;{}]*\)\s*'
                        r'(?:__attribute__\s*\(\(.*?\)\)\s*)?\{', re.M | re.S)
IDENT = re.compile(r'\b[A-Za-z_]\w*\b')


def room_of(path):
    parts = path.split('/')
    if parts[0] == 'format':
        return 'format'
    if parts[0] == 'cupti':
        return 'cupti'
    if parts[0] == 'preload':
        return parts[1] if len(parts) > 2 and parts[1] in CAPTURE_ROOMS else 'preload'
    if parts[0] == 'analyzer':
        return 'cmds' if len(parts) == 2 else parts[1]
    return None


def sources(root):
    out = []
    for top in ('format', 'analyzer', 'preload', 'cupti'):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if name.endswith(('.c', '.h')):
                    out.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(out)


# Known breaks of the capture's rule, (file, included file or named function)
# or ('cycle', its modules), left from before the capture had rooms.  The
# parts table (preload/core/parts.h) and the sink (core/sink.h) emptied it
# of every include and call across rooms; what remains are three circles,
# each inside one room (docs/architecture.md, "What is left").  It only
# shrinks: an entry that no longer occurs is reported.
CAPTURE_EXCEPTIONS = {(path, what) for path, whats in {
    # empty: the last circle (inside core/) was broken by direction
}.items() for what in whats.split()}


def is_capture(room):
    return room in CAPTURE_ROOMS or room == 'preload'


def capture_may_use(src, dst):
    """Whether capture room src may include or name something of room dst."""
    if dst in (src, 'format'):
        return True
    if src == 'core':
        return False
    return dst == 'core' or (src == 'process' and dst in CAPTURE_ROOMS)


def capture_rule(src):
    if src == 'core':
        return 'the core includes and names only core/ and format/'
    return 'a part includes and names only its own room, core/ and format/'



def resolve(files, path, inc):
    bases = [os.path.dirname(path), 'analyzer', 'format']
    if is_capture(room_of(path)):
        # every room is on the capture's include path (the top meson.build)
        bases = ([os.path.dirname(path)] + ['preload/' + r for r in CAPTURE_ROOMS if r != 'cupti']
                 + ['cupti', 'format', 'analyzer', '.'])
    for base in bases:
        p = os.path.normpath(os.path.join(base, inc))
        if p in files:
            return p
    return None


def definitions(text):
    """(exported, static) function names defined in one source text."""
    exported, static = set(), set()
    for m in DEFINITION.finditer(text):
        words = m.group(1).split()
        if words and words[0] in ('typedef', 'struct', 'enum', 'union', 'return', 'else'):
            continue
        (static if 'static' in words else exported).add(m.group(2))
    return exported, static


def cycles(edges):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        work = [(v, iter(sorted(edges.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def main(argv):
    args = [a for a in argv[1:] if not a.startswith('--')]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
    files = set(sources(root))
    problems, edges, room_edges, n_inc, used = [], {}, {}, 0, set()
    texts, defined_in, statics = {}, {}, {}
    for path in sorted(files):
        with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
            texts[path] = f.read()
        exported, statics[path] = definitions(COMMENT.sub(' ', texts[path]))
        if path.endswith('.c'):
            for name in exported:
                defined_in.setdefault(name, set()).add(path)
    # The interposed APIs (libc's signal, NCCL's, CUPTI's) are entry points
    # of the library, not a room's functions, whoever calls them.
    entry_points = set()
    for path in glob.glob(os.path.join(root, 'preload', '*', 'exports-*.txt')) + \
            glob.glob(os.path.join(root, 'cupti', 'exports-*.txt')):
        with open(path, encoding='utf-8') as f:
            entry_points |= {w.strip() for w in f if w.strip() and not w.startswith('#')}
    for path in sorted(files):
        src_room = room_of(path)
        if src_room == 'preload':
            problems.append(f'{path}: a capture source outside the rooms of preload/')
            continue
        if src_room not in LEVEL and not is_capture(src_room):
            continue
        own = statics[path] | {'main'}
        for name in sorted(set(IDENT.findall(COMMENT.sub(' ', texts[path]))) - own):
            for where in sorted(defined_in.get(name, ())):
                if (path, name) in CAPTURE_EXCEPTIONS:
                    used.add((path, name))
                    continue
                if name in entry_points:
                    continue
                dst_room = room_of(where)
                # The capture and the analyzer are linked apart: a capture
                # word equal to an analyzer function's name (a local
                # variable) is no call; the include check keeps them apart.
                if is_capture(src_room) and not is_capture(dst_room) and dst_room != 'format':
                    continue
                src_mod, dst_mod = os.path.splitext(path)[0], os.path.splitext(where)[0]
                if src_mod != dst_mod and path.endswith('.c'):
                    edges.setdefault(src_mod, set()).add(dst_mod)
                if is_capture(src_room):
                    if not capture_may_use(src_room, dst_room):
                        problems.append(f'{path} ({src_room}) names {name}(), defined in {where} '
                                        f'({dst_room}): {capture_rule(src_room)}')
                    continue
                if dst_room == src_room or dst_room not in LEVEL:
                    continue
                if LEVEL[dst_room] >= LEVEL[src_room]:
                    problems.append(f'{path} ({src_room}) names {name}(), defined in {where} '
                                    f'({dst_room})')
    for path in sorted(files):
        text = texts[path]
        src_room = room_of(path)
        for inc in INCLUDE.findall(text):
            target = resolve(files, path, inc)
            if target is None:
                if is_capture(src_room):
                    continue   # their own test doubles and CUDA headers
                problems.append(f'{path}: #include "{inc}" resolves nowhere next to it, '
                                'under analyzer/ or under format/')
                continue
            n_inc += 1
            if (path, os.path.basename(target)) in CAPTURE_EXCEPTIONS:
                used.add((path, os.path.basename(target)))
                continue
            dst_room = room_of(target)
            if is_capture(src_room):
                if not is_capture(dst_room) and dst_room != 'format':
                    problems.append(f'{path}: the capture includes the analyzer\'s "{inc}"')
                elif not capture_may_use(src_room, dst_room):
                    problems.append(f'{path} ({src_room}) includes "{inc}" of {dst_room}: '
                                    f'{capture_rule(src_room)}')
            elif is_capture(dst_room):
                problems.append(f'{path}: the analyzer includes the capture\'s "{inc}"')
            elif dst_room != src_room:
                room_edges.setdefault(src_room, set()).add(dst_room)
                if dst_room not in LEVEL:
                    problems.append(f'{path}: includes "{inc}" of {dst_room}/')
                elif LEVEL[dst_room] > LEVEL[src_room]:
                    problems.append(f'{path} ({src_room}) includes "{inc}" of a higher room '
                                    f'({dst_room})')
                elif LEVEL[dst_room] == LEVEL[src_room]:
                    problems.append(f'{path} ({src_room}) includes "{inc}" of {dst_room}, '
                                    'a room on the same level')
            src_mod, dst_mod = os.path.splitext(path)[0], os.path.splitext(target)[0]
            if src_mod != dst_mod and (src_room in LEVEL or is_capture(src_room)):
                edges.setdefault(src_mod, set()).add(dst_mod)
    for comp in cycles(edges):
        if ('cycle', ','.join(comp)) in CAPTURE_EXCEPTIONS:
            used.add(('cycle', ','.join(comp)))
            continue
        problems.append('include cycle among modules: ' + ' '.join(comp))
    if os.path.isfile(os.path.join(root, 'preload', 'core', 'rec_lifecycle.c')):
        for path, what in sorted(CAPTURE_EXCEPTIONS - used):
            problems.append(f'CAPTURE_EXCEPTIONS lists {path}: {what}, which no longer occurs: '
                            'take it out of the table')
    if '--rooms' in argv:
        for room in sorted(room_edges, key=lambda r: (LEVEL.get(r, -1), r)):
            print(f'{room:10} -> ' + ', '.join(sorted(room_edges[room],
                                                     key=lambda r: (LEVEL.get(r, -1), r))))
    for p in problems:
        print(p)
    print(f'{len(files)} files, {n_inc} includes, {len(problems)} problems')
    return 1 if problems else 0


def selftest():
    """Each planted violation must be reported, and a clean tree must pass."""
    import contextlib
    import io
    import tempfile
    cases = {
        'clean': ({'analyzer/model/t.h': '', 'analyzer/passes/p.c': '#include "model/t.h"\n'},
                  None),
        'upward include': ({'analyzer/passes/p.c': '#include "findings/f.h"\n',
                            'analyzer/findings/f.h': ''}, 'of a higher room (findings)'),
        'same level': ({'analyzer/hang/h.c': '#include "crossrank/x.h"\n',
                        'analyzer/crossrank/x.h': ''}, 'a room on the same level'),
        'include cycle': ({'analyzer/util/a.c': '#include "b.h"\n',
                           'analyzer/util/a.h': '',
                           'analyzer/util/b.c': '#include "a.h"\n', 'analyzer/util/b.h': ''},
                          'include cycle among modules: analyzer/util/a analyzer/util/b'),
        'call cycle': ({'analyzer/util/a.c': 'int a_fn(void)\n{\n    return b_fn();\n}\n',
                        'analyzer/util/b.c': 'int b_fn(void)\n{\n    return a_fn();\n}\n'},
                       'include cycle among modules: analyzer/util/a analyzer/util/b'),
        'upward declaration': ({'analyzer/model/m.h': 'int run_all(void);\n',
                                'analyzer/driver/d.c': 'int run_all(void)\n{\n    return 0;\n}\n'},
                               'names run_all(), defined in analyzer/driver/d.c'),
        'unresolved': ({'analyzer/load/l.c': '#include "steps.h"\n',
                        'analyzer/passes/steps.h': ''}, 'resolves nowhere'),
        'capture includes analyzer': ({'preload/nccl/w.c': '#include "model/t.h"\n',
                                       'analyzer/model/t.h': ''}, 'the capture includes'),
        'analyzer includes capture': ({'analyzer/model/m.c': '#include "../../preload/core/r.h"\n',
                                       'preload/core/r.h': ''}, 'the analyzer includes'),
        'capture clean': ({'preload/core/r.h': '', 'preload/core/r.c': '#include "r.h"\n',
                           'preload/nccl/w.c': '#include "r.h"\n#include "tsc_format.h"\n',
                           'format/tsc_format.h': '',
                           'preload/process/p.c': '#include "w.h"\n#include "s.h"\n',
                           'preload/nccl/w.h': '', 'cupti/s.h': ''}, None),
        'cross-part include': ({'preload/nccl/w.c': '#include "bb.h"\n',
                                'preload/blackbox/bb.h': ''},
                               '(nccl) includes "bb.h" of blackbox'),
        'part includes the GPU part': ({'preload/nprof/n.c': '#include "s.h"\n', 'cupti/s.h': ''},
                                       '(nprof) includes "s.h" of cupti'),
        'core includes a part': ({'preload/core/r.c': '#include "t.h"\n',
                                  'preload/telemetry/t.h': ''}, '(core) includes "t.h" of telemetry'),
        'core names a part': ({'preload/core/r.c': 'void r(void)\n{\n    bb_take();\n}\n',
                               'preload/blackbox/bb.c': 'void bb_take(void)\n{\n}\n'},
                              'names bb_take(), defined in preload/blackbox/bb.c'),
        'part names a part': ({'cupti/s.c': 'int s(void)\n{\n    return in_call();\n}\n',
                               'preload/nccl/w.c': 'int in_call(void)\n{\n    return 1;\n}\n'},
                              'names in_call(), defined in preload/nccl/w.c'),
        'outside the rooms': ({'preload/x.c': ''}, 'outside the rooms of preload/'),
        'capture cycle': ({'preload/core/a.c': 'int a_fn(void)\n{\n    return b_fn();\n}\n',
                           'preload/core/b.c': 'int b_fn(void)\n{\n    return a_fn();\n}\n'},
                          'include cycle among modules: preload/core/a preload/core/b'),
    }
    failed = 0
    for name, (tree, expect) in cases.items():
        with tempfile.TemporaryDirectory() as d:
            for path, text in tree.items():
                os.makedirs(os.path.join(d, os.path.dirname(path)), exist_ok=True)
                with open(os.path.join(d, path), 'w') as f:
                    f.write(text)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                rc = main(['check_rooms.py', d])
            ok = rc == 0 if expect is None else rc == 1 and expect in out.getvalue()
            print(f'{"ok  " if ok else "FAIL"} {name}')
            if not ok:
                print(out.getvalue())
                failed += 1
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(selftest() if '--selftest' in sys.argv else main(sys.argv))
