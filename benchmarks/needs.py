"""What the benchmarks need besides kanerobot's own dependencies, checked before they run.

Each script of ``benchmarks/`` has a ``check()`` that returns one line per
missing requirement (an empty list when everything is there), built by the
functions below.  A script that misses a requirement says so in that one
line on standard error before it starts, runs the part of its comparison
that does not need it (partial results), and exits with status
:data:`MISSING` (2); it never stops on a raw traceback for a missing package
or reference file.

Importing this module first checks that kanerobot itself can be imported
(``python benchmarks/X.py`` in a clone that was never installed): if not,
it prints how to install it and exits with status 2 at once, since nothing
can run without it.
"""

import importlib
import importlib.util
import sys
from pathlib import Path

#: Exit status of a benchmark that missed a requirement (argparse's for a usage error, the CLI's for bad input).
MISSING = 2
ROOT = Path(__file__).resolve().parents[1]
#: The OpenSYMORO corpus: in the repository, tests/data/opensymoro (the tests read the same folder).
OPENSYMORO = ROOT / "tests" / "data" / "opensymoro"
INSTALL = "pip install -e ."
BENCH_EXTRA = "pip install -e '.[bench]'"


def installed(module):
    """Whether ``module`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        # a parent package missing, or a module set to None in sys.modules
        return False


def kanerobot():
    """The line saying kanerobot is not installed, or None."""
    if installed("kanerobot"):
        return None
    return f"kanerobot is not installed in this Python ({sys.executable}): run {INSTALL!r} in the repository (or activate its .venv) first"


def pinocchio(skipped):
    """The line saying pinocchio is missing and what is ``skipped`` without it, or None."""
    if installed("pinocchio"):
        return None
    return f"pinocchio (the `pin` package) is not installed, so {skipped} is skipped: {BENCH_EXTRA} (the bench extra) to get it"


def opensymoro(names, folder=None):
    """The line naming the OpenSYMORO reference files missing from ``folder``, or None."""
    folder = Path(OPENSYMORO if folder is None else folder)
    missing = [name for name in names if not (folder / name).is_file()]
    if not missing:
        return None
    where = f"{folder} does not exist" if not folder.is_dir() else f"not in {folder}"
    return (
        f"OpenSYMORO's reference files {', '.join(missing)} are missing ({where}), so the comparison with OpenSYMORO is skipped: "
        "the corpus ships with the repository in tests/data/opensymoro (git checkout -- tests/data/opensymoro restores it)"
    )


def missing(*lines):
    """The lines that say something (the checks above return None for a requirement met)."""
    return [line for line in lines if line]


def announce(script, lines, stream=None):
    """Print each missing requirement of ``script`` as one line; return the exit status the script should end with."""
    lines = missing(*lines)
    for line in lines:
        print(f"{Path(script).name}: missing requirement: {line}", file=stream or sys.stderr, flush=True)
    return MISSING if lines else 0


def _exit_without_kanerobot():
    line = kanerobot()
    if line:
        announce(sys.argv[0] or "benchmarks", [line])
        sys.exit(MISSING)


_exit_without_kanerobot()
