"""tscope, installed as a Python package: where its files are.

The profiler itself is native code; this package carries it and says where:

    import os, subprocess, tscope
    env = dict(os.environ, LD_PRELOAD=tscope.preload_path(), TSCOPE_OUT="/scratch/run42")
    subprocess.run(["torchrun", "--nproc-per-node", "8", "train.py"], env=env)
    subprocess.run([tscope.report_path(), "/scratch/run42"])

The commands tscope, tscope-report and tscope-ctl on PATH start the same files
(tscope.__main__); `python -m tscope` is the tscope launcher.
"""
import os

__all__ = ['preload_path', 'report_path', 'launcher_path', 'ctl_path']

_HERE = os.path.dirname(os.path.abspath(__file__))


def _installed(*parts):
    path = os.path.join(_HERE, *parts)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f'tscope: {path} is missing from this install; reinstall the package '
            '(pip install --force-reinstall tscope-*.whl)')
    return path


def preload_path():
    """The capture library to put in LD_PRELOAD of a training job."""
    return _installed('lib', 'libtscope_preload.so')


def report_path():
    """The analyzer, tscope-report (its libraries besides glibc lie in tscope/lib)."""
    return _installed('bin', 'tscope-report')


def launcher_path():
    """The tscope launcher (a POSIX shell script): tscope run / tscope report."""
    return _installed('bin', 'tscope')


def ctl_path():
    """tscope-ctl (a POSIX shell script): capture windows of a black-box job."""
    return _installed('bin', 'tscope-ctl')
