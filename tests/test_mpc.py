"""Nonlinear MPC (kanerobot.mpc): near its reference it is the LQR, its torques stay within their
limits where the LQR's do not, it runs in kr.simulate, kr.cross_validate and kr.campaign, and its
prediction model is the numeric model's (Krang on its wheels)."""

import dataclasses
import sys

import numpy as np
import pytest
from conftest import derived, library
from scipy.linalg import expm, solve_discrete_are

import kanerobot as kr
from kanerobot import control
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError

pytest.importorskip("casadi", reason="pip install -e '.[casadi]'")

from kanerobot.mpc import MPC, PredictionModel, balance_mpc

Q = np.diag([100.0, 100.0, 10.0, 10.0])
R = np.eye(2)


@pytest.fixture(scope="module")
def arm():
    """A planar two-link arm under gravity along x0 (its joints feel it), random consistent bodies, and
    the LQR about an equilibrium that is not at rest under gravity (the motors hold it)."""
    robot = dataclasses.replace(library("planar2"), base=kr.Base.from_values(G=["G1", 0, 0]))
    values = random_parameters(robot, np.random.default_rng(4), friction=False, wrench=False)
    values["G1"] = 9.81
    fn = kr.derive(robot).numeric(values)  # C: the zero-order hold's steps make the integrator call it often
    lqr = control.lqr_balance(fn, [0.7, -0.4], Q=Q, R=R, pitch=None)
    return robot, values, fn, lqr


def discrete_lqr(lqr, dt):
    """The gain of the LQR sampled at dt (zero-order hold, exact: expm), cost sum dt (x'Qx + u'Ru)."""
    n, k = lqr.B.shape
    M = expm(np.block([[lqr.A, lqr.B], [np.zeros((k, n + k))]]) * dt)
    Ad, Bd = M[:n, :n], M[:n, n:]
    P = solve_discrete_are(Ad, Bd, dt * lqr.Q, dt * lqr.R)
    return np.linalg.solve(dt * lqr.R + Bd.T @ P @ Bd, Bd.T @ P @ Ad), P


def first_tick(mpc, x):
    mpc.reset()
    m = len(x) // 2
    return mpc.motor_torques(0.0, x[:m], x[m:])


def test_near_the_equilibrium_the_mpc_is_the_lqr(arm):
    """Without active limits, u_mpc - u_eq = -K_d (x - x_eq) to first order, K_d the LQR's gain sampled at
    dt (independent path: the analytic linearisation of the numeric model, expm, scipy's Riccati).  The
    terminal cost is the sampled LQR's cost to go, so any horizon gives it; the differences left are RK4's
    (O(dt^5) a step: 3e-8 relative here) and the second order in |dx| = 1e-5.  The continuous LQR's K is
    the same to O(dt) (3.5 % at dt = 0.02)."""
    _, _, _fn, lqr = arm
    dt = 0.02
    Kd, P = discrete_lqr(lqr, dt)
    mpc = balance_mpc(lqr, horizon=5, dt=dt)
    rng = np.random.default_rng(0)
    for _ in range(3):
        dx = 1e-5 * rng.normal(size=4)
        du = first_tick(mpc, lqr.x_eq + dx) - lqr.u_eq
        assert np.abs(du + Kd @ dx).max() < 1e-6 * np.abs(Kd @ dx).max()
        assert np.abs(du + lqr.K @ dx).max() < 0.1 * np.abs(lqr.K @ dx).max()
    assert np.abs(mpc.P - P).max() < 1e-6 * np.abs(P).max()


def test_a_long_horizon_without_terminal_cost_tends_to_the_lqr(arm):
    """No terminal cost: the horizon's finite-time gain tends to the LQR's as the horizon grows (the
    slowest closed-loop pole is -0.4 1/s: 8 s of horizon leave exp(-6.4) of the tail)."""
    _, _, _fn, lqr = arm
    dt = 0.05
    Kd, _ = discrete_lqr(lqr, dt)
    dx = 1e-5 * np.random.default_rng(1).normal(size=4)
    errors = []
    for horizon in (20, 160):
        mpc = balance_mpc(lqr, horizon=horizon, dt=dt, terminal=None)
        du = first_tick(mpc, lqr.x_eq + dx) - lqr.u_eq
        errors.append(np.abs(du + Kd @ dx).max() / np.abs(Kd @ dx).max())
    assert errors[1] < 0.01 < errors[0]


def limited(lqr):
    """From 0.5 rad away the LQR asks for more than these limits give (4 N m beyond holding the equilibrium)."""
    return lqr.x_eq + np.array([0.5, -0.5, 0.0, 0.0]), np.abs(lqr.u_eq) + 4.0


def test_the_torques_saturate_at_their_limits_where_the_lqr_s_exceed_them(arm):
    """The first tick from 0.5 rad away: the LQR's torques exceed the limits, the MPC's reach them exactly."""
    _, _, _fn, lqr = arm
    x0, limit = limited(lqr)
    assert np.any(np.abs(lqr.motor_torques(0.0, x0[:2], x0[2:])) > limit)
    u = first_tick(balance_mpc(lqr, horizon=20, dt=0.05, limits=limit), x0)
    assert np.any(np.isclose(np.abs(u), limit, rtol=0, atol=1e-9)) and np.all(np.abs(u) <= limit + 1e-9)


@pytest.mark.long
def test_the_torques_stay_within_their_limits_along_a_run(arm):
    """kr.simulate under the MPC from 0.5 rad away: never beyond the limits, and at the equilibrium after 4 s."""
    _, _, fn, lqr = arm
    x0, limit = limited(lqr)
    mpc = balance_mpc(lqr, horizon=20, dt=0.05, limits=limit)
    result = kr.simulate(fn, None, x0, (0.0, 4.0), mpc, t_eval=np.linspace(0, 4, 41), max_step=0.05, rtol=1e-6, atol=1e-8)
    assert np.all(np.abs(result.tau) <= limit + 1e-9)
    assert np.abs(result.q[-1] - lqr.q_eq).max() < 0.02
    assert mpc.stats["qp_failures"] == 0


@pytest.mark.long
def test_a_trajectory_reference_is_tracked(arm):
    """A quintic reference with its inputs from the model (inverse dynamics): tracked to its end."""
    _, _, fn, lqr = arm
    trajectory = control.quintic(lqr.q_eq, lqr.q_eq + [0.3, 0.2], 1.0)
    mpc = MPC(fn, trajectory, horizon=10, dt=0.05, Q=np.diag(Q), R=np.diag(R))
    x0 = np.concatenate([lqr.q_eq, np.zeros(2)])
    result = kr.simulate(fn, None, x0, (0.0, 2.0), mpc, t_eval=np.linspace(0, 2, 41), max_step=0.05, rtol=1e-6, atol=1e-8)
    assert np.abs(result.q[-1] - (lqr.q_eq + [0.3, 0.2])).max() < 0.01


def test_ticks_hold_the_input_and_an_integrator_going_back_solves_them_again(arm):
    _, _, _fn, lqr = arm
    mpc = balance_mpc(lqr, horizon=5, dt=0.1)
    x = lqr.x_eq + 0.01
    u0 = mpc.motor_torques(0.0, x[:2], x[2:])
    assert np.array_equal(mpc.motor_torques(0.05, x[:2] + 1, x[2:]), u0)  # held over the tick
    u2 = mpc.motor_torques(0.25, x[:2], x[2:])  # tick 2 (tick 1 skipped)
    assert sorted(mpc._ticks) == [0, 2]
    mpc.motor_torques(0.15, x[:2], x[2:])  # back into tick 1: tick 2 came from a rejected step
    assert sorted(mpc._ticks) == [0, 1]
    assert np.array_equal(mpc.motor_torques(0.0, x[:2], x[2:]), u0)  # t0 again: a new run, the same start
    assert sorted(mpc._ticks) == [0] and mpc.stats["ticks"] == 1
    assert not np.array_equal(u2, u0)
    state = mpc.__getstate__()  # what pickling takes: CasADi's functions and solver are rebuilt where it lands
    assert state["_built"] is None and mpc._built is not None


@pytest.mark.long
def test_mpc_in_cross_validate_and_a_tiny_campaign(arm):
    """The MPC built on the nominal model drives a plant 10 % heavier (cross_validate) and two plants of a
    campaign drawn the same: the two rows are equal (the controller starts each run afresh)."""
    pytest.importorskip("pandas", reason="pip install -e '.[cluster]'")
    robot, values, fn, lqr = arm
    heavier = {k: v * 1.1 if k[:2] in ("XX", "YY", "ZZ", "MX", "MY") or (k[:1] == "M" and k[1:].isdigit()) else v
               for k, v in values.items()}  # fmt: skip
    x0 = lqr.x_eq + np.array([0.2, -0.2, 0.0, 0.0])
    limit = np.abs(lqr.u_eq) + 4.0
    mpc = balance_mpc(lqr, horizon=10, dt=0.05, limits=limit)
    cv = kr.cross_validate(fn, (kr.derive(robot), heavier), mpc, t_span=(0.0, 3.0), x0=x0, samples=31, max_step=0.05,
                           rtol=1e-6, atol=1e-8)  # fmt: skip
    assert cv.controller_name == "MPC" and np.all(np.abs(cv.tau) <= limit + 1e-9)
    assert np.abs(cv.tracking_error[-1]).max() < 0.15  # no integral action: the heavier arm sags by 0.09 rad
    table = kr.campaign(kr.derive(robot), values, mpc, runs=2, sample=lambda rng: {"M2": values["M2"] * 1.05}, t_span=(0.0, 1.0),
                        x0=x0, samples=11, scheduler="in-process", max_step=0.05, rtol=1e-6, atol=1e-8)  # fmt: skip
    assert list(table["status"]) == ["ok", "ok"], list(table["error"])
    assert table["peak_torque"][0] == table["peak_torque"][1] <= limit.max() + 1e-9
    assert table["max_tracking_error"][0] == table["max_tracking_error"][1]


def test_bad_input_is_one_line(arm, monkeypatch):
    _robot, _values, fn, lqr = arm
    cases = [
        (lambda: MPC(fn, [0, 0], horizon=0), "horizon must be a whole number of steps >= 1, got 0"),
        (lambda: MPC(fn, [0, 0], dt=-0.1), "step dt must be a positive time"),
        (lambda: MPC(fn, [0, 0], limits=([1.0, 2.0], [3.0, 1.0])), "torque limits of motor 2: lower 2 > upper 1"),
        (lambda: MPC(fn, [0, 0], limits=[1.0, 2.0, 3.0]), "limits must be a bound, 2 bounds or (lower, upper)"),
        (lambda: MPC(fn, [0, 0], Q=np.ones(3)), "Q must be a number, 4 values or a 4x4 matrix"),
        (lambda: MPC(fn, [0, 0], solver="ipopt"), "unknown QP solver 'ipopt'"),
        (lambda: MPC(fn, [0, 0], terminal="riccati"), "terminal must be 'lqr', None or a 4x4 matrix"),
        (lambda: balance_mpc(lqr, limits=0.1), "the reference needs"),
    ]
    for call, message in cases:
        with pytest.raises(KaneRobotError) as error:
            call()
        assert message in str(error.value) and "\n" not in str(error.value)
    floating = derived("satellite").numeric(random_parameters(library("satellite"), np.random.default_rng(0)), backend="numpy")
    with pytest.raises(KaneRobotError, match="MPC needs a rigid model whose state is its coordinates"):
        MPC(floating, np.zeros(3))
    monkeypatch.setitem(sys.modules, "casadi", None)  # import casadi raises ImportError
    with pytest.raises(KaneRobotError) as error:
        balance_mpc(lqr, horizon=3, dt=0.1)
    assert str(error.value) == "backend 'casadi' needs CasADi, which is not installed: pip install 'kanerobot[casadi]'"


@pytest.mark.long
def test_krang_s_prediction_model_is_its_numeric_model():
    """Krang on its wheels (the projected programs through CasADi): xdot = f(x, u) equals the numeric
    model's direct dynamics (tree dynamics and G solved numerically, an independent path) to 1e-9, and
    the RK4 interval's chain-rule Jacobians equal central differences of it to 1e-6."""
    robot = library("krang_wheeled")
    values = random_parameters(robot, np.random.default_rng(5), friction=False, wrench=False)
    values["G3"] = -9.81
    fn = derived("krang_wheeled").numeric(values)
    B, _ = control.actuation_matrix(fn)
    q_ref = np.zeros(22)
    model = PredictionModel(fn, q_ref, B)
    rng = np.random.default_rng(6)
    view = control.ControlView(fn)
    for _ in range(3):
        x, u = rng.uniform(-0.5, 0.5, 38), rng.uniform(-2, 2, 18)
        q = q_ref.copy()
        q[view.columns] = x[:19]
        expected = fn.direct_dynamics(q, x[19:], B @ u)
        xdot = np.asarray(model.f(x, u)).ravel()
        np.testing.assert_allclose(xdot[19:], expected, rtol=0, atol=1e-9 * max(1.0, np.abs(expected).max()))
        np.testing.assert_array_equal(xdot[:19], x[19:])
    interval = model.interval(0.05)
    z = np.concatenate([x, u])
    _, Fx, Fu = (np.asarray(v) for v in interval(x, u))
    h = 1e-6
    columns = []
    for k in range(len(z)):
        e = np.zeros(len(z))
        e[k] = h
        plus, minus = (np.asarray(interval((z + s)[:38], (z + s)[38:])[0]).ravel() for s in (e, -e))
        columns.append((plus - minus) / (2 * h))
    J = np.column_stack(columns)
    assert np.abs(np.hstack([Fx, Fu]) - J).max() < 1e-6 * np.abs(J).max()
