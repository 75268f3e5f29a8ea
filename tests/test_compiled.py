"""The C backend of the numeric models (kanerobot.codegen.compiled).

Compiled C gives the numbers of the numpy backend for every model, single
states and batches; without a compiler, or when compiling fails, "auto"
falls back to numpy and says why while "c" raises; compiled libraries are
reused from the cache folder without running the compiler again.

Every test compiles into its own temporary cache folder, so the times below
are those of a cold cache (about 20 s in all, most of it Krang's Coriolis
matrix, 4 to 8 s of gcc -O2).
"""

import shutil
import subprocess
import threading

import numpy as np
import pytest
import sympy
from conftest import assert_close

import kanerobot as kr
from kanerobot.codegen import compiled
from kanerobot.dynamics.model import MODELS
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.symbolic import Program

HAVE_COMPILER = any(shutil.which(name) for name in compiled.COMPILERS)
needs_compiler = pytest.mark.skipif(not HAVE_COMPILER, reason="no C compiler")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kanerobot-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KANEROBOT_CACHE", str(folder))
        yield folder


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """An empty cache folder and no library loaded in this process: a fresh start."""
    monkeypatch.setenv("KANEROBOT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(compiled, "_LIBRARIES", {})
    return tmp_path / "cache" / "c"


def _models(name, seed):
    robot = kr.load(kr.frames_path(name))
    model = kr.derive(robot)
    values = random_parameters(robot, np.random.default_rng(seed))
    return robot, model, values


def _calls(fn, q, qd, qdd):
    return {
        "inverse_dynamics": lambda: fn.inverse_dynamics(q, qd, qdd),
        "mass_matrix": lambda: fn.mass_matrix(q),
        "h": lambda: fn.h(q, qd),
        "coriolis_matrix": lambda: fn.coriolis_matrix(q, qd),
        "gravity": lambda: fn.gravity(q),
        "direct_dynamics": lambda: fn.direct_dynamics(q, qd, qdd),
    }


@needs_compiler
# Krang's case (11 s, compiling into a fresh cache) is slow: the RX-90 checks
# every model in the default run, and test_floating the floating ones.
@pytest.mark.parametrize("name", ["rx90", pytest.param("krang", marks=pytest.mark.slow)])
@pytest.mark.long
def test_c_backend_matches_numpy_for_every_model(name, cache):
    robot, model, values = _models(name, len(name))
    model.compile()  # all models, the compilers running side by side
    fc, fn = model.numeric(values, backend="c"), model.numeric(values, backend="numpy")
    assert (fc.backend, fc.fallback_reason, fn.backend) == ("c", None, "numpy")
    assert model.numeric(values).backend == "c"  # "auto" with a compiler
    rng = np.random.default_rng(7)
    n, N = robot.nj, 7
    q, qd, qdd = rng.uniform(-np.pi, np.pi, (N, n)), rng.uniform(-2, 2, (N, n)), rng.uniform(-3, 3, (N, n))
    batch_c, batch_numpy = _calls(fc, q, qd, qdd), _calls(fn, q, qd, qdd)
    single_c, single_numpy = _calls(fc, q[3], qd[3], qdd[3]), _calls(fn, q[3], qd[3], qdd[3])
    mixed_c, mixed_numpy = _calls(fc, q, qd[0], qdd[0]), _calls(fn, q, qd[0], qdd[0])
    assert set(batch_c) == set(MODELS)
    for model_name in MODELS:
        expected = batch_numpy[model_name]()
        assert_close(batch_c[model_name](), expected, rtol=1e-12, what=model_name)
        assert_close(single_c[model_name](), single_numpy[model_name](), rtol=1e-12, what=model_name)
        assert_close(single_c[model_name](), expected[3], rtol=1e-12, what=model_name)
        assert_close(mixed_c[model_name](), mixed_numpy[model_name](), rtol=1e-12, what=model_name)
        assert model.compiled(model_name).library.parent == cache / "c"
    A = fc.mass_matrix(q)
    assert np.array_equal(A, np.transpose(A, (0, 2, 1)))  # filled by symmetry
    assert fc.inverse_dynamics(q[:0], qd[:0], qdd[:0]).shape == (0, n)
    for wrench in model.wrench:  # the RX-90 describes a wrench on link 6
        w = rng.uniform(-5, 5, (N, 6))
        assert_close(fc.inverse_dynamics(q, qd, qdd, wrench={wrench: w}), fn.inverse_dynamics(q, qd, qdd, wrench={wrench: w}), rtol=1e-12)
        assert_close(fc.inverse_dynamics(q, qd, qdd, wrench={wrench: w[0]}), fn.inverse_dynamics(q, qd, qdd, wrench={wrench: w[0]}), rtol=1e-12)
        assert_close(fc.inverse_dynamics(q[1], qd[1], qdd[1], {wrench: w[1]}), fn.inverse_dynamics(q[1], qd[1], qdd[1], {wrench: w[1]}), rtol=1e-12)
    with pytest.raises(kr.KaneRobotError, match="no external wrench is described on link"):
        fc.inverse_dynamics(q, qd, qdd, wrench={"bogus": np.zeros(6)})
    with pytest.raises(kr.KaneRobotError, match=r"q must have shape"):
        fc.mass_matrix(q[:, :-1])
    with pytest.raises(ValueError):
        fc.h(q, qd[:2])


def test_no_compiler_falls_back_to_numpy(monkeypatch):
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: None)
    _robot, model, values = _models("planar2", 1)
    fn = model.numeric(values)
    assert fn.backend == "numpy" and fn.requested_backend == "auto"
    assert "no C compiler found" in fn.fallback_reason
    q = np.array([[0.1, 0.2], [0.3, -0.4]])
    assert_close(fn.mass_matrix(q), model.numeric(values, backend="numpy").mass_matrix(q), rtol=1e-12)
    with pytest.raises(kr.KaneRobotError, match="backend 'c': no C compiler found"):
        model.numeric(values, backend="c")
    with pytest.raises(compiled.CompileError, match="no C compiler found"):
        compiled.find_compiler()
    monkeypatch.setenv("CC", "kanerobot-no-such-cc")
    with pytest.raises(compiled.CompileError, match=r"\$CC='kanerobot-no-such-cc' is not found"):
        model.numeric(values, backend="c")
    with pytest.raises(kr.KaneRobotError, match="unknown backend 'fortran': choose among auto, c, numpy"):
        model.numeric(values, backend="fortran")


@needs_compiler
def test_compiler_failure_falls_back_to_numpy(private_cache, monkeypatch):
    def broken(command, **kwargs):
        return subprocess.CompletedProcess(command, 1, "", "kr.c:1:1: error: the compiler is broken\n")

    monkeypatch.setattr(subprocess, "run", broken)
    _robot, model, values = _models("planar2", 2)
    fn = model.numeric(values)
    assert fn.backend == "c"  # a compiler is there: its failure shows on the first call
    q, qd = np.array([0.5, -0.5]), np.array([1.0, 2.0])
    assert_close(fn.h(q, qd), model.numeric(values, backend="numpy").h(q, qd), rtol=1e-12)
    assert fn.backend == "numpy"
    assert "h: " in fn.fallback_reason and "the compiler is broken" in fn.fallback_reason
    with pytest.raises(compiled.CompileError, match=r"(?s)failed to compile kr_h-.*the compiler is broken"):
        model.numeric(values, backend="c").h(q, qd)
    assert not list(private_cache.iterdir())  # nothing half-written is left


def _norm_program():
    x, y, k = sympy.symbols("x y k")
    p = Program(inputs=[x, y, k])
    p.set_output("r", k * sympy.sqrt(p.assign("R2", x**2 + y**2)))
    p.set_output("s", sympy.sign(y))
    return p, [("xy", [x, y]), ("p", [k])]


@needs_compiler
def test_the_cache_is_reused_without_the_compiler(private_cache, monkeypatch):
    program, args = _norm_program()
    first = compiled.compile_program(program, "scaled_norm", args, constant=["p"])
    assert first.build_seconds > 0 and first.library.is_file() and first.library.parent == private_cache
    assert sorted(p.name for p in private_cache.iterdir()) == [first.library.with_suffix(".c").name, first.library.name]
    assert "void scaled_norm_batch(long N, const double *xy, const double *p, double *out)" in first.source

    def no_compiler(*args, **kwargs):
        raise AssertionError("the compiler ran although the library is cached")

    monkeypatch.setattr(subprocess, "run", no_compiler)
    again = compiled.compile_program(program, "scaled_norm", args, constant=["p"])  # loaded in this process
    monkeypatch.setattr(compiled, "_LIBRARIES", {})  # as in a new process
    reloaded = compiled.compile_program(program, "scaled_norm", args, constant=["p"])
    for f in (again, reloaded):
        assert f.build_seconds == 0.0 and f.library == first.library
        assert np.allclose(f([3.0, 4.0], [2.0]), [10.0, 1.0])
    # A dynamic model in a "new process" finds its libraries too.
    robot, model, values = _models("planar2", 3)
    monkeypatch.undo()
    monkeypatch.setenv("KANEROBOT_CACHE", str(private_cache.parent))
    model.numeric(values, backend="c").gravity([0.1, 0.2])
    monkeypatch.setattr(compiled, "_LIBRARIES", {})
    monkeypatch.setattr(subprocess, "run", no_compiler)
    fresh = kr.derive(robot).numeric(values, backend="c")
    assert_close(fresh.gravity([0.1, 0.2]), model.numeric(values, backend="numpy").gravity([0.1, 0.2]), rtol=1e-12)
    assert fresh.model.compiled("gravity").build_seconds == 0.0


@needs_compiler
def test_compiled_function_shapes_and_broadcasting(private_cache):
    program, args = _norm_program()
    f = compiled.compile_program(program, "scaled_norm", args, constant=["p"])
    xy = np.array([[3.0, 4.0], [6.0, -8.0], [0.0, 0.0]])
    assert f.args == ("xy", "p") and f.sizes == (2, 1) and f.shape == (2,) and f.constant == {"p"}
    assert np.array_equal(f([3.0, 4.0], [2.0]), [10.0, 1.0])  # one state: (m,)
    assert np.array_equal(f(xy, [0.5]), [[2.5, 1.0], [5.0, -1.0], [0.0, 0.0]])  # a batch: (N, m)
    assert np.array_equal(f(np.asfortranarray(xy), np.array([0.5])), f(xy, [0.5]))  # any layout
    assert np.array_equal(f(xy[::2], [1.0]), f(xy[[0, 2]], [1.0]))
    assert f(xy[:0], [1.0]).shape == (0, 2)
    with pytest.raises(kr.KaneRobotError, match=r"p is passed once for all states, shape \(1,\)"):
        f(xy, np.ones((3, 1)))
    with pytest.raises(kr.KaneRobotError, match=r"xy must have shape \(2,\) or \(N, 2\)"):
        f(np.ones(3), [1.0])
    with pytest.raises(kr.KaneRobotError, match="takes 2 arrays"):
        f(xy)
    with pytest.raises(kr.KaneRobotError, match=r"xy must have shape \(3, 2\)"):
        f.batch(3, [xy[:2], np.ones(1)])
    # Two batched groups, one broadcast; a matrix result.
    a, b, c = sympy.symbols("a b c")
    p = Program(inputs=[a, b, c])
    for out, value in [("M11", a), ("M12", b), ("M22", c * a)]:
        p.set_output(out, value)
    g = compiled.compile_program(p, "sym2", [("u", [a]), ("v", [b]), ("w", [c])], outputs=(2, 2), constant=["w"])
    assert "void sym2_batch(long N, const double *u, const double *v, const double *w, double *out)" in g.source
    assert "sym2(u + i*1L, v + i*1L, w, out + i*4L);" in g.source
    got = g(np.array([[1.0], [2.0]]), [5.0], [3.0])
    assert np.array_equal(got, [[[1.0, 5.0], [5.0, 3.0]], [[2.0, 5.0], [5.0, 6.0]]])
    assert g([1.0], [5.0], [3.0]).shape == (2, 2)
    with pytest.raises(kr.KaneRobotError, match="v has 3 states, other arguments 2"):
        g(np.ones((2, 1)), np.ones((3, 1)), [1.0])
    with pytest.raises(kr.KaneRobotError, match="constant group"):
        compiled.compile_program(p, "sym2", [("u", [a]), ("v", [b]), ("w", [c])], constant=["p"])


@needs_compiler
def test_concurrent_builds_give_one_library(private_cache):
    program, args = _norm_program()
    results, errors = [], []

    def build():
        try:
            results.append(compiled.compile_program(program, "scaled_norm", args, constant=["p"]))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len({f.library for f in results}) == 1
    assert all(np.allclose(f([3.0, 4.0], [1.0]), [5.0, 1.0]) for f in results)
    assert sorted(p.suffix for p in private_cache.iterdir()) == [".c", ".so"]  # no temporary left


@needs_compiler
def test_the_one_state_entry_point_takes_an_array_of_pointers(private_cache):
    """name_state(groups, out), called here through ctypes, gives what the batch function gives."""
    import ctypes

    a, b, c = sympy.symbols("a b c")
    p = Program(inputs=[a, b, c])
    for out, value in [("M11", a * c), ("M12", b - a), ("M22", c * c)]:
        p.set_output(out, value)
    g = compiled.compile_program(p, "sym2", [("u", [a]), ("v", [b]), ("w", [c])], outputs=(2, 2), constant=["w"])
    assert "void sym2_state(const double *const *groups, double *out)" in g.source
    assert "    sym2(groups[0], groups[1], groups[2], out);" in g.source
    assert g.state_address == ctypes.cast(g.handle.sym2_state, ctypes.c_void_p).value
    state = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)(g.state_address)
    u, v, w, out = np.array([2.0]), np.array([7.0]), np.array([3.0]), np.zeros((2, 2))
    state((ctypes.c_void_p * 3)(u.ctypes.data, v.ctypes.data, w.ctypes.data), out.ctypes.data)
    assert np.array_equal(out, [[6.0, 5.0], [5.0, 9.0]])  # M21 mirrored from M12
    assert np.array_equal(out, g(u, v, w))


@needs_compiler
def test_library_path_and_build_library(private_cache):
    """The public pieces the extension's build reuses: one key per source and flags, an atomic build."""
    compiler = compiled.find_compiler()
    source = "double kr_twice(double x) { return 2.0 * x; }\n"
    path = compiled.library_path("twice", source, compiler, ("-O2", "-shared", "-fPIC"))
    assert path.parent == private_cache and path.name.startswith("twice-") and path.suffix == ".so"
    assert path != compiled.library_path("twice", source, compiler, ("-O1", "-shared", "-fPIC"))
    assert path != compiled.library_path("twice", source + "\n", compiler, ("-O2", "-shared", "-fPIC"))
    elsewhere = compiled.library_path("twice", source, compiler, ("-O2", "-shared", "-fPIC"), cache=private_cache.parent, suffix=".abc")
    assert elsewhere == private_cache.parent / (path.stem + ".abc")  # same key, the folder and suffix given
    assert compiled.build_library(source, path, compiler, ("-O2", "-shared", "-fPIC")) > 0
    twice = ctypes_function(path, "kr_twice")
    assert twice(21.0) == 42.0
    assert sorted(p.name for p in private_cache.iterdir()) == [path.with_suffix(".c").name, path.name]
    with pytest.raises(compiled.CompileError, match="failed to compile twice-"):
        compiled.build_library("this is not C", path, compiler, ("-O2", "-shared", "-fPIC"))


def ctypes_function(path, name):
    import ctypes

    function = getattr(ctypes.CDLL(str(path)), name)
    function.argtypes, function.restype = [ctypes.c_double], ctypes.c_double
    return function
