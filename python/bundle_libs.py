#!/usr/bin/env python3
"""Copy the shared libraries a tool needs besides glibc next to it in a wheel.

    bundle_libs.py TOOL OUTDIR NAME...

ldd resolves what TOOL loads on this (the build) machine, its libraries'
libraries included.  Each NAME is copied from there to OUTDIR/NAME, and
OUTDIR/BUNDLED.txt says where each came from with its copyright notice (the
Debian package's, where dpkg knows the file).  Anything ldd lists that is
neither glibc nor a NAME fails the build: the wheel would need it on the
machine it is installed on, and say so only when the tool fails to start.
"""
import os
import re
import shutil
import subprocess
import sys

# Part of glibc (or the kernel's vDSO): present wherever the tool can run.
GLIBC = re.compile(r'^(linux-vdso|ld-linux[-\w.]*|libc|libm|libdl|libpthread|librt|libresolv)\.so')


def resolved(tool):
    """soname -> path, for every library ldd says the tool loads."""
    out = subprocess.run(['ldd', tool], check=True, capture_output=True, text=True).stdout
    libs = {}
    for line in out.splitlines():
        m = re.match(r'\s*(\S+)\s+=>\s+(\S+)', line)
        if m:
            if m.group(2) == 'not':
                sys.exit(f'bundle_libs: {tool} needs {m.group(1)}, which is not found here')
            libs[m.group(1)] = m.group(2)
        else:
            m = re.match(r'\s*(\S+)\s+\(0x', line)
            if m:
                libs[os.path.basename(m.group(1))] = m.group(1)
    return libs


def notice(path):
    """The copyright text of the Debian package that holds path, or a line saying none was found."""
    real = os.path.realpath(path)
    for candidate in (path, real):
        r = subprocess.run(['dpkg', '-S', candidate], capture_output=True, text=True)
        if r.returncode == 0 and ':' in r.stdout:
            pkg = r.stdout.split(':')[0].strip()
            doc = f'/usr/share/doc/{pkg}/copyright'
            if os.path.isfile(doc):
                with open(doc, encoding='utf-8', errors='replace') as f:
                    return f'Debian package {pkg}, {doc}:\n\n{f.read()}'
            return f'Debian package {pkg} (no {doc})'
    return 'no package database knows this file: see the library\'s own distribution for its license'


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    tool, outdir, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    try:
        libs = resolved(tool)
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f'bundle_libs: ldd {tool} failed: {e}')
    unlisted = sorted(n for n in libs if n not in names and not GLIBC.match(n))
    if unlisted:
        sys.exit(f'bundle_libs: {tool} needs {", ".join(unlisted)}, not in the list to bundle '
                 '(python/meson.build, wheel_bundled_libs)')
    missing = [n for n in names if n not in libs]
    if missing:
        sys.exit(f'bundle_libs: {tool} does not load {", ".join(missing)}: '
                 'drop it from wheel_bundled_libs (python/meson.build)')
    text = ['Libraries copied into this package from the machine that built it, for tscope-report.', '']
    for n in names:
        shutil.copyfile(libs[n], os.path.join(outdir, n))
        text += ['=' * 72, f'{n}  (from {os.path.realpath(libs[n])})', notice(libs[n]), '']
    with open(os.path.join(outdir, 'BUNDLED.txt'), 'w', encoding='utf-8') as f:
        f.write('\n'.join(text))


if __name__ == '__main__':
    main()
