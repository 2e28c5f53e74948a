"""The console scripts tscope, tscope-report and tscope-ctl, and `python -m tscope`.

Each replaces this Python process with the native tool or shell script in the
package (exec), so signals, exit status and the job's process tree are the
same as with a `meson install`.  The launcher finds the preload and the
analyzer from where it lies (tscope/bin, tscope/lib).
"""
import os
import sys

import tscope


def _exec(argv):
    try:
        os.execv(argv[0], argv)
    except OSError as e:
        sys.exit(f'tscope: cannot start {argv[0]}: {e}')


def _shell(path):
    _exec(['/bin/sh', path] + sys.argv[1:])


def tscope_main():
    _shell(tscope.launcher_path())


def report_main():
    _exec([tscope.report_path()] + sys.argv[1:])


def ctl_main():
    _shell(tscope.ctl_path())


if __name__ == '__main__':
    tscope_main()
