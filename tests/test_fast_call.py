"""One state from Python with the C backend (kanerobot.codegen.extension).

A one-state call of a fixed-base robot's numeric functions goes through a
small CPython extension that calls the compiled model directly.  Its numbers
must be those of the batch path (the same C function, through ctypes) and of
the numpy backend; every input it does not take (batches, wrong lengths,
non-finite values, strings, unsuitable ``out``) must reach the general path,
which words the errors as before; without Python's headers the calls keep
the ctypes path and say why.
"""

import shutil
import sysconfig

import numpy as np
import pytest
from conftest import assert_close, derived, floating_copy, library

import kanerobot as kr
from kanerobot.codegen import compiled, extension
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError

HAVE_COMPILER = any(shutil.which(name) for name in compiled.COMPILERS)
pytestmark = pytest.mark.skipif(not HAVE_COMPILER, reason="no C compiler: the one-state extension needs one")

#: method -> the arguments it takes, as keys of the state drawn by _state
CALLS = {
    "inverse_dynamics": ("q", "qd", "qdd"),
    "mass_matrix": ("q",),
    "h": ("q", "qd"),
    "gravity": ("q",),
    "coriolis_matrix": ("q", "qd"),
    "direct_dynamics": ("q", "qd", "tau"),
}
_FUNCTIONS = {}


def functions(name):
    """``(c, numpy)`` numeric functions of a library robot, same random values (made once)."""
    if name not in _FUNCTIONS:
        robot = library(name)
        values = random_parameters(robot, np.random.default_rng(3))
        model = derived(name)
        _FUNCTIONS[name] = model.numeric(values, backend="c"), model.numeric(values, backend="numpy")
    return _FUNCTIONS[name]


def floating_functions():
    """``(c, numpy)`` of the RX-90 on a free-flying base (made once)."""
    if "floating" not in _FUNCTIONS:
        robot = floating_copy(library("rx90"))
        values = random_parameters(robot, np.random.default_rng(5))
        model = kr.derive(robot)
        _FUNCTIONS["floating"] = model.numeric(values, backend="c"), model.numeric(values, backend="numpy")
    return _FUNCTIONS["floating"]


def _floating_state(fn, seed=0):
    """q (7+n, its quaternion not of unit norm), qd, qdd (6+n), tau (n)."""
    rng = np.random.default_rng(seed)
    q = np.concatenate([rng.uniform(-1, 1, 3), rng.uniform(0.2, 2.0, 4), rng.uniform(-1.5, 1.5, fn.n)])
    return {"q": q, "qd": rng.uniform(-1, 1, fn.nv), "qdd": rng.uniform(-1, 1, fn.nv), "tau": rng.uniform(-5, 5, fn.n)}


def _state(n, seed=0):
    rng = np.random.default_rng(seed)
    return {key: rng.uniform(-1.5, 1.5, n) for key in ("q", "qd", "qdd", "tau")}


@pytest.mark.parametrize(
    "name, methods",
    [("rx90", sorted(CALLS)), ("krang", ["inverse_dynamics", "mass_matrix", "direct_dynamics"])],
)
def test_one_state_equals_batch_path_and_numpy(name, methods):
    c, npy = functions(name)
    n = c.n
    for seed in range(3):
        state = _state(n, seed)
        for method in methods:
            args = [state[key] for key in CALLS[method]]
            one = getattr(c, method)(*args)
            assert type(c._fast[method]).__name__ == "FastFunction", c.fast_call_fallback
            batch = getattr(c, method)(*[a[np.newaxis] for a in args])  # through ctypes
            assert one.shape == batch.shape[1:] == ((n, n) if method in ("mass_matrix", "coriolis_matrix") else (n,))
            np.testing.assert_array_equal(one, batch[0])  # the same C function
            assert_close(one, getattr(npy, method)(*args), rtol=1e-12, what=f"{name} {method}")
    assert c.fast_call_fallback is None


# the satellite's (8 s of C compilation) with -m slow; the floating one-state path of the
# other models is test_floating_base_one_state_equals_batch_path_and_numpy's
@pytest.mark.parametrize("case", ["rx90", pytest.param("satellite", marks=pytest.mark.slow)])
@pytest.mark.long
def test_derivatives_of_one_state_equal_the_batch_path(case):
    """fn.inverse_dynamics_derivatives / direct_dynamics_derivatives of one state go through the extension
    (a fixed base, and the satellite's free flyer)."""
    c, npy = functions(case)
    state = _floating_state(c, 2) if case == "satellite" else _state(c.n, 2)
    for method, keys in [("inverse_dynamics_derivatives", ("q", "qd", "qdd")), ("direct_dynamics_derivatives", ("q", "qd", "tau"))]:
        args = [state[key] for key in keys]
        one = getattr(c, method)(*args)
        assert type(c._fast[method]).__name__ == "FastFunction", c.fast_call_fallback
        batch = getattr(c, method)(*[a[np.newaxis] for a in args])
        assert len(one) == len(batch) == (2 if method.startswith("inverse") else 3)
        for block, rows, expected in zip(one, batch, getattr(npy, method)(*args)):
            np.testing.assert_array_equal(block, rows[0])
            assert_close(block, expected, rtol=1e-12, what=f"{case} {method}")


def test_the_mass_matrix_is_symmetric_and_the_torques_are_A_qdd_plus_h():
    """Independent of the batch path: idm = A qdd + h, ddm solves A qdd = tau - h."""
    c, _ = functions("rx90")
    s = _state(c.n, 7)
    A, h = c.mass_matrix(s["q"]), c.h(s["q"], s["qd"])
    np.testing.assert_array_equal(A, A.T)
    assert_close(c.inverse_dynamics(s["q"], s["qd"], s["qdd"]), A @ s["qdd"] + h, rtol=1e-12)
    assert_close(c.direct_dynamics(s["q"], s["qd"], s["tau"]), np.linalg.solve(A, s["tau"] - h), rtol=1e-10)


def test_lists_tuples_and_other_arrays_give_the_same_numbers():
    c, _ = functions("rx90")
    s = _state(c.n, 1)
    expected = c.inverse_dynamics(s["q"], s["qd"], s["qdd"])
    strided = np.zeros((2 * c.n,))
    strided[::2] = s["qd"]
    variants = [
        (list(s["q"]), tuple(s["qd"]), [np.float64(x) for x in s["qdd"]]),  # numpy scalars in a list
        (np.stack([s["qd"], s["q"]])[1], strided[::2], np.asfortranarray(s["qdd"])),  # a row, a strided view
        (s["q"].astype(">f8"), s["qd"], s["qdd"]),  # big-endian: converted once
    ]
    for q, qd, qdd in variants:
        np.testing.assert_array_equal(c.inverse_dynamics(q, qd, qdd), expected)
    q32 = s["q"].astype(np.float32)
    np.testing.assert_array_equal(c.gravity(q32), c.gravity(q32.astype(np.float64)))
    ints = [0, 1, 0, -1, 0, 1]
    np.testing.assert_array_equal(c.gravity(ints), c.gravity(np.array(ints, dtype=float)))


def test_a_batch_goes_on_through_the_batch_path():
    c, npy = functions("rx90")
    rng = np.random.default_rng(4)
    q, qd, qdd = rng.uniform(-1, 1, (3, 5, c.n))
    batch = c.inverse_dynamics(q, qd, qdd)
    assert batch.shape == (5, c.n)
    for k in range(5):
        np.testing.assert_array_equal(batch[k], c.inverse_dynamics(q[k], qd[k], qdd[k]))
    # a batch as nested lists, and one state mixed with a batch (broadcast)
    np.testing.assert_array_equal(c.mass_matrix(q.tolist()), c.mass_matrix(q))
    mixed = c.inverse_dynamics(q, qd[0], qdd)
    assert mixed.shape == (5, c.n)
    assert_close(mixed, npy.inverse_dynamics(q, qd[0], qdd), rtol=1e-12)


def test_wrench_left_out_is_zero_and_a_given_wrench_is_used():
    """The RX-90 describes a wrench on link 6: the one-state call sets it to zero."""
    c, npy = functions("rx90")
    s = _state(c.n, 2)
    zero = c.inverse_dynamics(s["q"], s["qd"], s["qdd"], wrench={"6": np.zeros(6)})  # general path
    np.testing.assert_array_equal(c.inverse_dynamics(s["q"], s["qd"], s["qdd"]), zero)
    wrench = {"6": [1.0, -2.0, 3.0, 0.5, 0.25, -0.75]}
    pushed = c.inverse_dynamics(s["q"], s["qd"], s["qdd"], wrench=wrench)
    assert np.abs(pushed - zero).max() > 1e-3
    assert_close(pushed, npy.inverse_dynamics(s["q"], s["qd"], s["qdd"], wrench=wrench), rtol=1e-12)


@pytest.mark.parametrize("backend", ["c", "numpy"])
def test_bad_input_gets_the_same_clear_errors(backend):
    c, npy = functions("rx90")
    fn = c if backend == "c" else npy
    s = _state(fn.n, 0)
    q, qd, qdd = s["q"], s["qd"], s["qdd"]
    with pytest.raises(KaneRobotError, match=r"^q must have shape \(6,\) or \(N, 6\), got \(5,\)$"):
        fn.inverse_dynamics(q[:5], qd, qdd)
    with pytest.raises(KaneRobotError, match=r"^qdd must have shape \(6,\) or \(N, 6\), got \(7,\)$"):
        fn.inverse_dynamics(q, qd, list(qdd) + [0.0])
    bad = qd.copy()
    bad[3] = np.nan
    with pytest.raises(KaneRobotError, match=r"^qd\[3\] = nan: states must be finite numbers$"):
        fn.h(q, bad)
    with pytest.raises(KaneRobotError, match=r"^q\[0\] = inf: states must be finite numbers$"):
        fn.mass_matrix([np.inf] + list(q[1:]))
    with pytest.raises(KaneRobotError, match=r"^tau must be numbers, got \['a'"):
        fn.direct_dynamics(q, qd, ["a"] * 6)
    with pytest.raises(KaneRobotError, match=r"^out must be a writeable float64 array of shape \(6, 6\), got a float64 array of shape \(6,\)$"):
        fn.mass_matrix(q, out=np.empty(6))
    with pytest.raises(KaneRobotError, match=r"^out must be a writeable float64 array of shape \(6,\), got a float32 array"):
        fn.gravity(q, out=np.empty(6, dtype=np.float32))
    with pytest.raises(KaneRobotError, match=r"^out must be a writeable float64 array of shape \(6,\), got \[0.0"):
        fn.gravity(q, out=[0.0] * 6)


def test_unchecked_calls_let_non_finite_values_through():
    """With check=False the extension does not look: NaN in, NaN out (as the general path)."""
    robot, model = library("rx90"), derived("rx90")
    fn = model.numeric(random_parameters(robot, np.random.default_rng(3)), backend="c", check=False)
    q = _state(fn.n)["q"]
    q[1] = np.nan
    G = fn.gravity(q)
    assert type(fn._fast["gravity"]).__name__ == "FastFunction"
    assert np.isnan(G).any()
    fn.check = True  # read at each call
    with pytest.raises(KaneRobotError, match=r"^q\[1\] = nan"):
        fn.gravity(q)


def test_out_buffer_is_filled_and_returned():
    c, _ = functions("rx90")
    s = _state(c.n, 5)
    n = c.n
    expected = c.mass_matrix(s["q"])
    out = np.full((n, n), 7.0)
    assert c.mass_matrix(s["q"], out=out) is out
    np.testing.assert_array_equal(out, expected)
    tau = np.empty(n)
    assert c.inverse_dynamics(s["q"], s["qd"], s["qdd"], out=tau) is tau
    np.testing.assert_array_equal(tau, c.inverse_dynamics(s["q"], s["qd"], s["qdd"]))
    # a non-contiguous out, and an out that is also an input: the general path fills them
    wide = np.zeros((n, 2 * n))
    view = wide[:, ::2]
    assert c.mass_matrix(s["q"], out=view) is view
    np.testing.assert_array_equal(view, expected)
    qdd = s["qdd"].copy()
    expected_ddm = c.direct_dynamics(s["q"], s["qd"], s["tau"])
    tau_in = s["tau"].copy()
    assert c.direct_dynamics(s["q"], s["qd"], tau_in, out=tau_in) is tau_in
    np.testing.assert_array_equal(tau_in, expected_ddm)
    # a batch with out
    batch_out = np.empty((2, n))
    q2, qd2 = np.stack([s["q"], s["qd"]]), np.stack([s["qd"], s["q"]])
    assert c.h(q2, qd2, out=batch_out) is batch_out
    np.testing.assert_array_equal(batch_out[1], c.h(s["qd"], s["q"]))
    assert qdd.tolist() == s["qdd"].tolist()  # inputs left alone


def test_without_python_headers_the_ctypes_path_is_kept(monkeypatch, tmp_path):
    """No Python.h where sysconfig says: one-state calls go through ctypes, with the reason."""
    paths = dict(sysconfig.get_paths(), include=str(tmp_path / "include"))
    monkeypatch.setattr(sysconfig, "get_paths", lambda *args, **kwargs: paths)
    robot, model = library("rx90"), derived("rx90")
    values = random_parameters(robot, np.random.default_rng(3))
    fn = model.numeric(values, backend="c")
    reference, _ = functions("rx90")
    s = _state(fn.n, 6)
    for method, keys in CALLS.items():
        args = [s[key] for key in keys]
        np.testing.assert_array_equal(getattr(fn, method)(*args), getattr(reference, method)(*args))
        assert type(fn._fast[method]).__name__ == "function"
    assert fn.backend == "c"
    assert fn.fast_call_fallback.startswith("direct_dynamics: Python's headers are not installed (no Python.h in ")
    out = np.empty(fn.n)
    assert fn.gravity(s["q"], out=out) is out
    np.testing.assert_array_equal(out, reference.gravity(s["q"]))


def test_a_compiler_failure_keeps_the_ctypes_path(monkeypatch):
    """The extension's build fails (here: a flag the compiler refuses): the reason is recorded, once."""
    monkeypatch.setattr(extension, "_FLAGS", extension._FLAGS + ("-fno-such-flag-kanerobot",))
    monkeypatch.setattr(extension, "_LOADED", {})
    with pytest.raises(compiled.CompileError, match="failed to compile kanerobot_fastcall-"):
        extension.load_extension()
    remembered = list(extension._LOADED.values())
    assert len(remembered) == 1 and isinstance(remembered[0], compiled.CompileError)
    robot, model = library("rx90"), derived("rx90")
    fn = model.numeric(random_parameters(robot, np.random.default_rng(3)), backend="c")
    s = _state(fn.n, 8)
    reference, _ = functions("rx90")
    np.testing.assert_array_equal(fn.mass_matrix(s["q"]), reference.mass_matrix(s["q"]))
    assert "mass_matrix: " in fn.fast_call_fallback and "failed to compile kanerobot_fastcall-" in fn.fast_call_fallback


def test_the_numpy_backend_has_no_fast_call():
    _, npy = functions("rx90")
    npy.gravity(_state(npy.n)["q"])
    assert npy._fast["gravity"] is not None and type(npy._fast["gravity"]).__name__ == "function"
    assert npy.fast_call_fallback is None


def test_fast_function_checks_its_layout():
    c, _ = functions("rx90")
    function = c.model.compiled("gravity")
    with pytest.raises(ValueError, match=r"has 6 argument groups, the layout 2"):
        extension.fast_function(function, [None, None])
    layout = [None] + [np.zeros(k) for k in function.sizes[1:-1]] + [np.zeros(3)]
    with pytest.raises(ValueError, match=r": p has \d+ values, the layout gives \(3,\)"):
        extension.fast_function(function, layout)


def test_too_many_groups_keep_the_ctypes_path():
    """MAX_GROUPS bounds the extension's arrays: a function with more groups is refused before any call."""
    from types import SimpleNamespace

    many = extension.MAX_GROUPS + 1
    function = SimpleNamespace(name="huge", state_address=1, args=tuple(f"g{k}" for k in range(many)), sizes=(1,) * many)
    with pytest.raises(compiled.CompileError, match=f"^huge has {many} argument groups, the one-state extension takes 64$"):
        extension.fast_function(function, [None] * many)


def test_fast_function_called_directly():
    """The extension's own contract: the result, or None for what it does not take."""
    c, _ = functions("rx90")
    function = c.model.compiled("gravity")
    layout = [None] + [np.zeros(k) for k in function.sizes[1:-1]] + [c._parameter_array]
    f = extension.fast_function(function, layout)
    q = _state(c.n)["q"]
    G = f(q, None, True)
    np.testing.assert_array_equal(G, function(q, np.zeros(6), np.zeros(6), np.zeros(6), np.zeros(6), c._parameter_array))
    for refused in (q[:5], q[np.newaxis], [q.tolist()], "abcdef", None, 3.0, [1, 2, "x", 4, 5, 6]):
        assert f(refused, None, True) is None
    assert f(q, np.empty((6, 1)), True) is None  # out of the wrong shape
    assert f(q, np.empty(6, dtype=np.float32), True) is None
    with pytest.raises(TypeError, match="takes 3 arguments"):
        f(q, None)
    with pytest.raises(TypeError, match="no keyword arguments"):
        f(q, None, check=True)


@pytest.mark.long
def test_floating_base_one_state_equals_batch_path_and_numpy():
    """Slices of q, qd, qdd and the quaternion normalised in C give the general path's numbers."""
    c, npy = floating_functions()
    for seed in range(2):
        state = _floating_state(c, seed)
        for method, keys in CALLS.items():
            args = [state[key] for key in keys]
            one = getattr(c, method)(*args)
            assert type(c._fast[method]).__name__ == "FastFunction", c.fast_call_fallback
            batch = getattr(c, method)(*[a[np.newaxis] for a in args])[0]
            assert_close(one, batch, rtol=1e-14, what=method)
            assert_close(one, getattr(npy, method)(*args), rtol=1e-12, what=method)
    s = _floating_state(c, 3)
    A, h = c.mass_matrix(s["q"]), c.h(s["q"], s["qd"])
    assert_close(c.inverse_dynamics(s["q"], s["qd"], s["qdd"]), A @ s["qdd"] + h, rtol=1e-12)
    rhs = np.concatenate([np.zeros(6), s["tau"]]) - h  # the base is not actuated
    assert_close(c.direct_dynamics(s["q"], s["qd"], s["tau"]), np.linalg.solve(A, rhs), rtol=1e-10)
    unit = s["q"].copy()
    unit[3:7] /= np.linalg.norm(unit[3:7])
    assert_close(c.gravity(unit), c.gravity(s["q"]), rtol=1e-14)  # the quaternion's norm does not matter


def test_floating_base_bad_input_and_out():
    c, _ = floating_functions()
    s = _floating_state(c, 4)
    zero = s["q"].copy()
    zero[3:7] = 0.0
    with pytest.raises(KaneRobotError, match=r"the base quaternion \(q\[3:7\], x y z w\) is zero or not finite"):
        c.mass_matrix(zero)
    with pytest.raises(KaneRobotError, match=r"^q must have 13 values \(base position x y z, quaternion x y z w, joints"):
        c.gravity(s["q"][:12])
    with pytest.raises(KaneRobotError, match=r"^tau must have 6 values"):
        c.direct_dynamics(s["q"], s["qd"], s["qd"])
    bad = s["qd"].copy()
    bad[0] = np.inf
    with pytest.raises(KaneRobotError, match=r"^qd\[0\] = inf: states must be finite numbers"):
        c.h(s["q"], bad)
    out = np.empty(c.nv)
    assert c.direct_dynamics(s["q"], s["qd"], s["tau"], out=out) is out
    assert_close(out, c.direct_dynamics(s["q"][np.newaxis], s["qd"][np.newaxis], s["tau"][np.newaxis])[0], rtol=1e-14)
    with pytest.raises(KaneRobotError, match=r"^out must be a writeable float64 array of shape \(12, 12\)"):
        c.mass_matrix(s["q"], out=np.empty((12, 11)))


def test_slices_normalised_groups_and_finite_results(monkeypatch, tmp_path):
    """The layout's (argument, start, normalise) entries and finite_result, on a small program."""
    import sympy

    from kanerobot.symbolic import Program

    monkeypatch.setenv("KANEROBOT_CACHE", str(tmp_path))
    a, b, x, k = sympy.symbols("a b x k")
    program = Program(inputs=[a, b, x, k])
    program.set_output("r1", k * a)
    program.set_output("r2", b)
    program.set_output("r3", 1 / x)
    function = compiled.compile_program(program, "sliced", [("u", [a, b]), ("v", [x]), ("p", [k])], constant=["p"])
    # u is entries 1-2 of the first argument, normalised; v entry 0 of the second
    f = extension.fast_function(function, [(0, 1, True), (1, 0, False), [10.0]], sizes=[3, 2])
    np.testing.assert_array_equal(f([9.0, 3.0, 4.0], [0.5, 7.0], None, True), [10 * 0.6, 0.8, 2.0])
    assert f([9.0, 0.0, 0.0], [0.5, 7.0], None, True) is None  # zero norm: the general path says why
    assert f([9.0, 3.0], [0.5, 7.0], None, True) is None  # wrong length
    np.testing.assert_array_equal(f([9.0, 3.0, 4.0], [0.0, 7.0], None, True), [6.0, 0.8, np.inf])
    g = extension.fast_function(function, [(0, 1, True), (1, 0, False), [10.0]], sizes=[3, 2], finite_result=True)
    assert g([9.0, 3.0, 4.0], [0.0, 7.0], None, True) is None  # 1/0
    np.testing.assert_array_equal(g([9.0, 3.0, 4.0], [0.25, 7.0], None, True), [6.0, 0.8, 4.0])
    with pytest.raises(ValueError, match=r"u \(2 values\) from entry 2 of argument 0: out of range"):
        extension.fast_function(function, [(0, 2, True), (1, 0, False), [10.0]], sizes=[3, 2])
    with pytest.raises(ValueError, match="whole arguments \\(None\\) or slices of given sizes, not both"):
        extension.fast_function(function, [None, (1, 0, False), [10.0]], sizes=[3, 2])


def test_after_falling_back_to_numpy_one_state_runs_numpy_too(monkeypatch, tmp_path):
    """"auto" falls back to numpy when a later model fails to compile: the models already
    called through the extension follow (fn.backend says what runs)."""
    import subprocess

    monkeypatch.setenv("KANEROBOT_CACHE", str(tmp_path))
    robot = library("planar2")
    model = kr.derive(robot)  # its own: no library compiled yet
    values = random_parameters(robot, np.random.default_rng(2))
    fn, reference = model.numeric(values), model.numeric(values, backend="numpy")
    q, qd = np.array([0.5, -0.5]), np.array([1.0, 2.0])
    assert_close(fn.gravity(q), reference.gravity(q), rtol=1e-12)
    assert type(fn._fast["gravity"]).__name__ == "FastFunction"

    def broken(command, **kwargs):
        return subprocess.CompletedProcess(command, 1, "", "kr.c:1:1: error: the compiler is broken\n")

    monkeypatch.setattr(subprocess, "run", broken)
    assert_close(fn.h(q, qd), reference.h(q, qd), rtol=1e-12)
    assert fn.backend == "numpy" and "the compiler is broken" in fn.fallback_reason
    assert_close(fn.gravity(q), reference.gravity(q), rtol=1e-12)
    assert type(fn._fast["gravity"]).__name__ == "function"  # the general path, in numpy
