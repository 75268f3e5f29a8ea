"""kr.derive and the numeric API: the models hold together as dynamics must.

Each identity below links two models computed by different algorithms
(Newton-Euler, composite links, program differentiation, the recursive
direct model), on random states and random physically consistent
parameters:  Gamma = A qdd + H,  H = C qd + Q + friction,  A symmetric
positive definite,  A-dot - 2C skew-symmetric (A-dot by finite differences),
direct dynamics inverts inverse dynamics.
"""

import numpy as np
import pytest
from conftest import assert_close, derived, library

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters

ROBOTS = ["rx90", "stanford", "puma560", "krang"]


# Krang (10 s here) is slow: tests/test_engines.py holds its models in the default run.
@pytest.fixture(scope="module", params=[pytest.param(n, marks=pytest.mark.slow) if n == "krang" else n for n in ROBOTS])
def case(request):
    robot, model = library(request.param), derived(request.param)
    rng = np.random.default_rng(ROBOTS.index(request.param) + 10)
    values = random_parameters(robot, rng)
    fn = model.numeric({name: values[name] for name in model.parameters})
    return robot, model, fn, values, rng


def _friction(robot, values, qd):
    fv = np.array([values[str(robot.dynamics[l]["FV"])] for l in robot.joint_labels])
    fs = np.array([values[str(robot.dynamics[l]["FS"])] for l in robot.joint_labels])
    return fv * qd + fs * np.sign(qd)


def _rotor(robot, values):
    return np.array([values[str(robot.dynamics[l]["IA"])] for l in robot.joint_labels])


def test_models_agree_with_each_other(case):
    robot, model, fn, values, rng = case
    n = robot.nj
    rotors = {str(robot.dynamics[label]["IA"]) for label in robot.joint_labels}
    without_rotors = model.numeric({name: 0.0 if name in rotors else values[name] for name in model.parameters})
    for _ in range(3):
        q, qd, qdd = rng.uniform(-np.pi, np.pi, n), rng.uniform(-2, 2, n), rng.uniform(-3, 3, n)
        A, H, Q, C = fn.mass_matrix(q), fn.h(q, qd), fn.gravity(q), fn.coriolis_matrix(q, qd)
        tau = fn.inverse_dynamics(q, qd, qdd)
        assert_close(A, A.T, rtol=1e-12)
        assert np.linalg.eigvalsh(A).min() > 0
        assert_close(tau, A @ qdd + H)
        assert_close(H, C @ qd + Q + _friction(robot, values, qd))
        assert_close(fn.direct_dynamics(q, qd, tau), qdd, rtol=1e-8)
        # Rotor inertia sits on the diagonal of A only: A less A without rotors is diag(IA).
        assert_close(A - without_rotors.mass_matrix(q), np.diag(_rotor(robot, values)))


def test_adot_minus_2c_is_skew_symmetric(case):
    robot, _model, fn, _values, rng = case
    n = robot.nj
    q, qd = rng.uniform(-np.pi, np.pi, n), rng.uniform(-2, 2, n)
    h = 1e-6
    A_dot = (fn.mass_matrix(q + h * qd) - fn.mass_matrix(q - h * qd)) / (2 * h)
    N = A_dot - 2 * fn.coriolis_matrix(q, qd)
    assert np.abs(N + N.T).max() < 1e-6 * (1 + np.abs(A_dot).max())


def test_batches_equal_single_states(case):
    robot, _model, fn, _values, rng = case
    n, N = robot.nj, 7
    q, qd, qdd = rng.uniform(-1, 1, (N, n)), rng.uniform(-1, 1, (N, n)), rng.uniform(-1, 1, (N, n))
    tau = fn.inverse_dynamics(q, qd, qdd)
    A = fn.mass_matrix(q)
    assert tau.shape == (N, n) and A.shape == (N, n, n)
    for k in range(N):
        assert_close(tau[k], fn.inverse_dynamics(q[k], qd[k], qdd[k]), rtol=1e-12)
        assert_close(A[k], fn.mass_matrix(q[k]), rtol=1e-12)
    assert fn.direct_dynamics(q, qd, tau).shape == (N, n)
    assert fn.coriolis_matrix(q, qd).shape == (N, n, n) and fn.gravity(q).shape == (N, n)


def test_external_wrench_is_the_jacobian_transpose():
    """A wrench exerted by link 6 on the environment adds J6^T (f, m) to the torques
    (projected in frame 6, SYMORO's convention)."""
    robot, model = library("rx90"), derived("rx90")
    rng = np.random.default_rng(3)
    values = random_parameters(robot, rng)
    fn = model.numeric({k: values[k] for k in model.parameters})
    from kanerobot.geometry import numeric_function
    from kanerobot.kinematics import jacobian

    J6 = numeric_function(robot, jacobian(robot, "6", projection="6"), values)
    q, qd, qdd = rng.uniform(-1, 1, (3, 6))
    w = rng.uniform(-5, 5, 6)
    difference = fn.inverse_dynamics(q, qd, qdd, wrench={"6": w}) - fn.inverse_dynamics(q, qd, qdd)
    assert_close(difference, J6(q).T @ w)
    with pytest.raises(kr.KaneRobotError, match="no external wrench is described on link"):
        fn.inverse_dynamics(q, qd, qdd, wrench={"3": w})


def test_parameters_and_value_errors():
    robot, model = library("rx90"), derived("rx90")
    names = model.parameters
    # the robot's order: frame by frame (link 1 only turns about z1), SYMORO's order within a frame, gravity last
    assert names[:6] == ["ZZ1", "IA1", "FV1", "FS1", "XX2", "XY2"] and names[-1] == "G3"
    assert names.index("D3") + 1 == names.index("XX3") and names.index("RL4") + 1 == names.index("XX4")
    assert {"D3", "RL4", "G3", "ZZ1", "XX6", "ZZ6", "MX6", "IA1", "FV6", "FS6"} <= set(names)
    assert "XX1" not in names  # link 1 only turns about z1: only ZZ1 matters
    assert not {"th1", "QP1", "QDP1", "GAM1", "FX6"} & set(names)
    values = {name: 1.0 for name in names}
    del values["D3"]
    values["BOGUS"] = 2.0
    with pytest.raises(kr.ParameterError, match="no value for D3; BOGUS is not a symbol of this robot"):
        model.numeric(values)
    values.update(D3=1.0, XX1=5.0)
    del values["BOGUS"]
    model.numeric(values, physical=False)  # XX1 is a robot symbol the models do not need: accepted (1.0 is no body)
    with pytest.raises(kr.KaneRobotError, match="unknown method"):
        kr.derive(robot, method="hamilton")
    with pytest.raises(kr.ParameterError, match="no value for"):
        derived("sr400").numeric({})


def test_op_counts_are_reported_and_cached():
    model = derived("rx90")
    first = model.program("inverse_dynamics")
    assert model.program("inverse_dynamics") is first
    for name in ("inverse_dynamics", "mass_matrix", "h", "coriolis_matrix", "gravity", "direct_dynamics"):
        counts = model.op_count(name)
        assert set(counts) == {"mul", "add", "fn"} and counts["mul"] > 0
    assert model.op_count("gravity")["mul"] < model.op_count("h")["mul"] < model.op_count("inverse_dynamics")["mul"]


def test_a_fixed_robot_without_joints_has_no_model():
    """Nothing moves: derive says so instead of numeric functions failing on empty programs."""
    import kanerobot as kr
    from kanerobot.errors import KaneRobotError
    from kanerobot.robot.description import Frame, GeneralPlacement, Robot

    plate = Robot.create("plate", [Frame("1", "0", 2, 1, GeneralPlacement([[1, 0, 0], [0, 1, 0], [0, 0, 1]], [0, 0, 1], [0, 0, 1], 0))])
    with pytest.raises(KaneRobotError, match="plate has no moving joint and a fixed base"):
        kr.derive(plate)


def test_a_derivation_pauses_the_garbage_collector_and_restores_it(monkeypatch):
    """The collector walks a derivation's millions of live sympy objects for nothing: off while
    a model is derived, back as it was after (also when it was off, and after an error)."""
    import gc

    from kanerobot.dynamics.dynamic_model import DynamicModel

    seen = []
    derive = DynamicModel._derive

    def recording(self, name):
        seen.append(gc.isenabled())
        return derive(self, name)

    monkeypatch.setattr(DynamicModel, "_derive", recording)
    model = kr.derive(library("planar2"))
    assert gc.isenabled()
    model.program("inverse_dynamics")
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        model.program("mass_matrix")
        assert not gc.isenabled()  # the caller's choice kept
    finally:
        gc.enable()
    with pytest.raises(kr.KaneRobotError, match="unknown model"):
        model.program("no_such_model")
    monkeypatch.setattr(DynamicModel, "has_program", lambda self, name: False)
    with pytest.raises(kr.KaneRobotError, match="has no program"):
        model.program("gravity")
    assert gc.isenabled()


@pytest.mark.parametrize(
    "name, models",
    [("rx90", ["mass_matrix", "coriolis_matrix", "inverse_dynamics"]), ("satellite", ["mass_matrix", "gravity"]), ("planar2", ["direct_dynamics_derivatives"])],
)
def test_matrix_is_the_numeric_model_as_sympy(name, models):
    """model.matrix(name), the program substituted back, evaluated by sympy's lambdify equals the
    numeric model (issue 17: A(q) as a sympy matrix without help())."""
    import sympy

    robot = library(name)
    model = derived(name)
    rng = np.random.default_rng(len(name))
    values = random_parameters(robot, rng)
    fn = model.numeric(values, backend="numpy")
    n, nq, nv = model.n, model.nq, model.nv
    q = rng.uniform(-np.pi, np.pi, nq)
    if nq > n:
        q[3:7] /= np.linalg.norm(q[3:7])
    qd, qdd, tau = rng.uniform(-2, 2, nv), rng.uniform(-3, 3, nv), rng.uniform(-3, 3, n)
    numeric = {
        "mass_matrix": lambda: fn.mass_matrix(q),
        "coriolis_matrix": lambda: fn.coriolis_matrix(q, qd),
        "inverse_dynamics": lambda: fn.inverse_dynamics(q, qd, qdd)[:, None],
        "gravity": lambda: fn.gravity(q)[:, None],
        "direct_dynamics_derivatives": lambda: np.concatenate(fn.direct_dynamics_derivatives(q, qd, tau), axis=1),
    }
    floating = nq > n  # the free flyer's groups: quaternion, base speeds and accelerations
    arrays = {
        "q": q[7:] if floating else q, "quaternion": q[3:7], "tau": tau,
        "qd": qd[6:] if floating else qd, "base_velocity": qd[:6],
        "qdd": qdd[6:] if floating else qdd, "base_acceleration": qdd[:6],
    }  # fmt: skip
    state = {
        s: float(arrays[key][k]) if key in arrays else 0.0  # external wrenches: zero, as the numeric model's default
        for key, symbols in model._state_groups() for k, s in enumerate(symbols) if isinstance(s, sympy.Symbol)
    }
    for key in models:
        M = model.matrix(key)
        assert isinstance(M, sympy.Matrix) and not any(s.name.startswith(("S", "C")) and s.name[1:].isdigit() for s in M.free_symbols)
        given = {**{s: values[s.name] for s in M.free_symbols if s.name in values}, **state}  # the state wins (wrenches)
        missing = M.free_symbols - set(given)
        assert not missing, missing
        assert_close(np.array(M.xreplace(given).evalf(), dtype=float), numeric[key](), rtol=1e-10, what=f"{name} {key}")
