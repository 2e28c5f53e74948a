"""What both self-test modules use to run one check with its printed lines
hidden and read back the verdict levels it gave."""
import contextlib
import io

from . import verdicts


def quiet(fn, *a, **kw):
    """Run a check function with its own output hidden: (result, levels)."""
    v = verdicts.Verdicts()
    with contextlib.redirect_stdout(io.StringIO()):
        result = fn(v, *a, **kw)
    return result, [(lv, name) for lv, name, _ in v.lines]


def levels(lines, word):
    return [lv for lv, name in lines if word in name]
