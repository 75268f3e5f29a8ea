"""Shared robots and helpers of the tests.

Corpus robots come from OpenSYMORO's .par files in tests/data/opensymoro
(:data:`CORPUS`, kept in the repository); library robots from frames/
(:func:`library`).
:func:`tree_robot` (the ``tree`` fixture) is a two-branch robot built in
Python that mixes Khalil-Kleinfinger frames (with gamma and b) and general
frames with oblique revolute and prismatic axes; :func:`plate_robot` has a
fixed frame inside the tree that carries a link; :func:`floating_copy` puts
a robot on a free-flying base.  :func:`opensymoro_equations`
reads the equations of an OpenSYMORO output file of the corpus;
:func:`program_outputs` and :func:`mass_matrix_function` evaluate programs.
:func:`derived` caches the models of a library robot for the whole process
(every module that needs them shares one derivation), and
:func:`assert_close` is the one tolerance check of the tests.

Test modules import these by name (``from conftest import tree_robot``), never
from each other.
"""

import functools
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy
import pytest
import sympy

import kanerobot as kr
from kanerobot.robot.description import Frame, GeneralPlacement, KKPlacement, Robot
from kanerobot.robot.expressions import parse_expression
from kanerobot.robot.joints import rot_x, rot_z
from kanerobot.symbolic import count_ops
from kanerobot.symbolic.printing import matrix_entry_names

ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config):
    """Compiled models go to a cache folder of this test run, not the user's;
    no progress lines on standard error (tests read it: tests/test_progress.py turns them on)."""
    os.environ.setdefault("KANEROBOT_PROGRESS", "0")
    if "KANEROBOT_CACHE" not in os.environ:
        folder = tempfile.mkdtemp(prefix="kanerobot-test-cache-")
        os.environ["KANEROBOT_CACHE"] = folder
        config._kanerobot_cache = folder


#: The longest tests of the default run, started first: a minute-long test picked up last by one worker
#: would keep the run going while the other core idles (xdist's worksteal splits the list in order).
LONG_FIRST = (
    "tests/test_docs.py::test_site_builds",
    "tests/test_examples.py::test_krang_kane_example",
    "tests/test_readme.py::test_section_runs_as_written[Identification]",
)


def pytest_collection_modifyitems(config, items):
    rank = {nodeid: k for k, nodeid in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid, len(rank)))  # stable: the others keep their order


def pytest_unconfigure(config):
    folder = getattr(config, "_kanerobot_cache", None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
        del os.environ["KANEROBOT_CACHE"]
#: OpenSYMORO's reference files (tests/data/opensymoro/README.md): in the
#: repository, so that a clone alone runs every test that reads them.
CORPUS = ROOT / "tests" / "data" / "opensymoro"


def _corpus_missing(what):
    # An error, never a skip: a test that reads the corpus must not pass quietly without it.
    return FileNotFoundError(
        f"{what} is missing: the OpenSYMORO corpus ships with the repository; restore it (git checkout -- tests/data/opensymoro)"
    )


def corpus_file(name):
    """The path of ``name`` in the corpus (:data:`CORPUS`); a missing file is one clear error."""
    path = CORPUS / name
    if not path.is_file():
        raise _corpus_missing(path)
    return path


def corpus_files(pattern):
    """The corpus files matching ``pattern``, sorted; none is one clear error (a parametrization never shrinks quietly)."""
    paths = sorted(CORPUS.glob(pattern))
    if not paths:
        raise _corpus_missing(CORPUS / pattern)
    return paths


def corpus_robot(name):
    """The robot of ``<name>.par`` from the corpus."""
    from kanerobot.robot.io import load

    return load(corpus_file(f"{name}.par"))


def one_line_error(capsys, *args):
    """Run ``kanerobot ARGS`` in-process: exit status 2 and one line on standard error; the line."""
    from kanerobot.cli import main

    try:
        status = main([str(a) for a in args])
    except SystemExit as exc:  # argparse's usage errors
        status = exc.code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@functools.cache
def benchmark(name):
    """The module ``benchmarks/<name>.py`` (imported once), with benchmarks/ on the path while it loads."""
    import importlib.util
    import sys

    folder = ROOT / "benchmarks"
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(folder))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(folder))
    return module


@functools.cache
def library(name):
    """The robot ``name`` of frames/ (robots are immutable: loaded once)."""
    return kr.load(kr.frames_path(name))


@functools.cache
def derived(name, method="newton-euler"):
    """``kr.derive(library(name), method)``, derived once per process.

    The derivation is the slow part of most dynamics tests; models are not
    changed by evaluating them, so the modules share them.  Tests of
    compilation caches derive their own (a shared model keeps its libraries).
    """
    return kr.derive(library(name), method=method)


def assert_close(actual, expected, *, rtol=1e-9, what=""):
    """Assert ``actual == expected`` to ``rtol`` relative to the largest entry of ``expected``.

    The error bound is ``rtol * max(1, max|expected|)`` on every entry (an
    absolute ``rtol`` when ``expected`` is smaller than 1), the shapes must be
    equal, and a NaN anywhere fails.

    Parameters
    ----------
    actual, expected : array_like or Mapping
        Numbers; two mappings (``name -> number``) must have the same keys
        and are compared key by key.
    rtol : float
        The relative tolerance.
    what : str
        What is compared, for the failure message.
    """
    label = f"{what}: " if what else ""
    keys = None
    if isinstance(expected, Mapping):
        assert sorted(actual) == sorted(expected), f"{label}outputs differ: {sorted(set(actual) ^ set(expected))}"
        keys = sorted(expected)
        actual, expected = [actual[k] for k in keys], [expected[k] for k in keys]
    actual, expected = numpy.asarray(actual, dtype=float), numpy.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f"{label}shape {actual.shape}, expected {expected.shape}"
    if expected.size == 0:
        return
    scale = max(1.0, float(numpy.abs(expected).max()))
    error = numpy.abs(actual - expected)
    failed = ~(error <= rtol * scale)  # NaN compares False: it fails
    if failed.any():
        flat = int(numpy.argmax(numpy.where(numpy.isnan(error), numpy.inf, error)))
        entry = keys[flat] if keys is not None else numpy.unravel_index(flat, expected.shape)
        raise AssertionError(
            f"{label}{int(failed.sum())} of {expected.size} entries off; worst at {entry}: "
            f"{actual.flat[flat]!r} for {expected.flat[flat]!r}, error {error.flat[flat]:.3g} > {rtol:g} * {scale:.3g}"
        )


def assert_models_close(got, expected, q, qd, qdd, *, rtol=1e-9, what=""):
    """Assert two numeric dynamics give the same models at the states ``(q, qd, qdd)``.

    Inverse dynamics, inertia matrix, Coriolis matrix, gravity, H, and direct
    dynamics (``qdd`` taken as the torques) of ``got`` and ``expected``
    (``NumericDynamics`` of one robot), each by :func:`assert_close`.
    """
    calls = {
        "inverse_dynamics": lambda fn: fn.inverse_dynamics(q, qd, qdd),
        "mass_matrix": lambda fn: fn.mass_matrix(q),
        "coriolis_matrix": lambda fn: fn.coriolis_matrix(q, qd),
        "gravity": lambda fn: fn.gravity(q),
        "h": lambda fn: fn.h(q, qd),
        "direct_dynamics": lambda fn: fn.direct_dynamics(q, qd, qdd),
    }
    for name, call in calls.items():
        assert_close(call(got), call(expected), rtol=rtol, what=f"{what} {name}")


def opensymoro_equations(filename):
    """``[(name, expression text), ...]`` under ``Equations:`` in the corpus file ``filename``."""
    lines = corpus_file(filename).read_text().split("Equations:", 1)[1].split("*=*", 1)[0].strip().splitlines()
    return [tuple(line.split(" = ", 1)) for line in lines if " = " in line]


def opensymoro_operations(filename):
    """Total operations of the equations of an OpenSYMORO file (our count_ops rules)."""
    return sum(sum(count_ops(parse_expression(expr)).values()) for _, expr in opensymoro_equations(filename))


_FUNCTIONS = {}


def program_function(program):
    """``program.to_function()``, generated once per program for the process
    (the program is kept with it, so that its id stays its own)."""
    if id(program) not in _FUNCTIONS:
        _FUNCTIONS[id(program)] = (program, program.to_function())
    return _FUNCTIONS[id(program)][1]


def program_outputs(program, values):
    """Outputs of ``program`` as a dict ``name -> value``, inputs taken by name from ``values``."""
    f = program_function(program)
    return dict(zip(f.outputs, f(*[values[s.name] for s in f.args])))


def mass_matrix_function(robot, program, values):
    """``q -> A(q)``, the (nj, nj) matrix of an inertia-matrix program
    (outputs ``A<i><j>``, i <= j, mirrored), parameters taken by name from
    ``values``."""
    n = robot.nj
    parameters = sorted(set(program.inputs) - set(robot.q), key=str)
    f = program.to_function(args=list(robot.q) + parameters)
    fixed = [values[s.name] for s in parameters]
    names = matrix_entry_names("A", (n, n))
    where = {names[r][c]: (r, c) for r in range(n) for c in range(r, n)}
    assert sorted(f.outputs) == sorted(where), "one output per upper-triangle entry"

    def A(q):
        out = f(*q, *fixed)
        M = numpy.zeros((n, n))
        for name, value in zip(f.outputs, out):
            r, c = where[name]
            M[r, c] = M[c, r] = value
        return M

    return A


def random_values(robot, rng, low=0.4, high=1.6):
    """Random values for every geometric symbol of ``robot``."""
    return {name: float(rng.uniform(low, high)) for name in robot.geometric_parameters}


@pytest.fixture
def rng():
    return numpy.random.default_rng(20240611)


@pytest.fixture(scope="session", params=["RX90", "Stanford"])
def serial(request):
    return corpus_robot(request.param)


@pytest.fixture(scope="session")
def rx90():
    return corpus_robot("RX90")


@pytest.fixture(scope="session")
def stanford():
    return corpus_robot("Stanford")


@pytest.fixture(scope="session")
def sr400():
    return corpus_robot("SR400")


@pytest.fixture(scope="session")
def testloop():
    return corpus_robot("testLoop")


@pytest.fixture(scope="session")
def twoloops():
    return corpus_robot("TwoLoops")


@pytest.fixture(scope="session")
def akr3000():
    return corpus_robot("AKR3000")


def tree_robot(links=None):
    """Two branches on joint 1: 1-2-3 (KK frames, 3 prismatic) and 1-4-5-6-7
    (gamma and b, general frames with oblique revolute and prismatic axes,
    7 a fixed leaf).  ``links``: the frames that carry a link (default the
    joints)."""
    q = sympy.symbols("q1:7")
    L2, L3, g4, b4, L4, L5, L6, L7 = sympy.symbols("L2 L3 g4 b4 L4 L5 L6 L7")
    third = sympy.Rational(1, 3)
    frames = [
        Frame("1", "0", 0, 1, KKPlacement(theta=q[0])),
        Frame("2", "1", 0, 1, KKPlacement(alpha=sympy.pi / 2, d=L2, theta=q[1])),
        Frame("3", "2", 1, 1, KKPlacement(alpha=-sympy.pi / 2, d=L3, theta=sympy.pi / 6, r=q[2])),
        Frame("4", "1", 0, 1, KKPlacement(gamma=g4, b=b4, alpha=sympy.pi / 3, d=L4, theta=q[3])),
        Frame("5", "4", 0, 1, GeneralPlacement(
            sympy.ImmutableMatrix(rot_z(0.4) * rot_x(0.7)), sympy.ImmutableMatrix([L5, 0.1, 0.2]),
            sympy.ImmutableMatrix([third, 2 * third, 2 * third]), q[4])),
        Frame("6", "5", 1, 1, GeneralPlacement(
            sympy.ImmutableMatrix(sympy.eye(3)), sympy.ImmutableMatrix([0, L6, 0]),
            sympy.ImmutableMatrix([0, sympy.Rational(3, 5), sympy.Rational(4, 5)]), q[5])),
        Frame("7", "6", 2, 0, KKPlacement(alpha=0.3, d=L7)),
    ]
    return Robot.create("tree", frames, links=links)


def plate_robot(**options):
    """A fixed frame p inside the tree that carries its own link (a tool
    plate), with a prismatic joint 2 on an oblique axis and a revolute
    joint 3 (gamma and b) hanging on it.  ``options`` go to
    :meth:`Robot.create` (``dynamics``, ``base``)."""
    q1, q2, q3, L, b = sympy.symbols("q1 q2 q3 L b")
    frames = [
        Frame("1", "0", 0, 1, KKPlacement(theta=q1)),
        Frame("p", "1", 2, 0, KKPlacement(alpha=sympy.pi / 3, d=L, theta=0.4)),
        Frame("2", "p", 1, 1, GeneralPlacement(sympy.eye(3), [0, b, 0], [0, 0.6, 0.8], q2)),
        Frame("3", "p", 0, 1, KKPlacement(gamma=0.2, b=b, alpha=-sympy.pi / 2, theta=q3)),
    ]
    return Robot.create("plate", frames, links=["1", "p", "2", "3"], **options)


def floating_copy(robot):
    """``robot`` (built by :meth:`Robot.create`) on a free-flying base that
    carries link 0, gravity ``(G1, G2, G3)`` in the world frame."""
    return Robot.create(
        robot.name + "_floating",
        robot.frames,
        links=("0",) + tuple(robot.links),
        base=kr.Base.from_values(G=["G1", "G2", "G3"]),
        floating=True,
    )


@pytest.fixture(scope="session")
def tree():
    return tree_robot()
