"""Sampled-data control in kr.simulate (control_period): the controller is called once per tick at the
state integrated so far and its torque held until the next tick (zero-order hold).  Checked against the
exact discrete-time solution of a rotor (expm of the continuous model), by counting the controller's
calls, and against the MPC's own hold."""

import numpy as np
import pytest
import sympy
from scipy.integrate import solve_ivp
from scipy.linalg import expm
from test_simulate import HINGE, UPPER, G, J, L, M

import kanerobot as kr
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import Frame, KKPlacement, Robot


@pytest.fixture(scope="module")
def rotor():
    """One revolute joint without gravity: J qdd = tau - FV qd (random J, FV), and the exact sampled model."""
    rng = np.random.default_rng(29)
    robot = Robot.create("rotor", [Frame("1", "0", 0, 1, KKPlacement(theta=sympy.Symbol("th1")))], base=kr.Base.from_values(G=[0, 0, 0]))
    model = kr.derive(robot)
    values = dict.fromkeys(model.parameters, 0.0)
    values.update(ZZ1=rng.uniform(0.2, 1.0), IA1=rng.uniform(0.0, 0.2), FV1=rng.uniform(0.05, 0.5))
    J = values["ZZ1"] + values["IA1"]
    A, B = np.array([[0.0, 1.0], [0.0, -values["FV1"] / J]]), np.array([[0.0], [1.0 / J]])
    return model.numeric(values, backend="numpy"), A, B


def sampled(A, B, T):
    """``Phi, Gamma`` of the zero-order hold at period T (Van Loan's block exponential)."""
    M = expm(np.block([[A, B], [np.zeros((1, 3))]]) * T)
    return M[:2, :2], M[:2, 2:]


class Counted:
    """A sampled PD ``u = -K x`` that counts its calls and remembers the times it was called at."""

    def __init__(self, K, period=None):
        self.K, self.times = np.asarray(K, dtype=float), []
        if period is not None:
            self.period = period

    def __call__(self, t, q, qd):
        self.times.append(float(t))
        return [-(self.K @ np.concatenate([q, qd]))]


def test_ticks_are_the_exact_discrete_time_solution(rotor):
    """x_{k+1} = Phi x_k + Gamma u_k at every tick (ticks in t_eval), u_k = -K x_k computed once per tick."""
    fn, A, B = rotor
    T, ticks = 0.1, 20
    controller = Counted([4.0, 1.5])
    times = np.arange(ticks + 1) * T
    result = kr.simulate(fn, None, [0.8, -0.3], (0.0, ticks * T), controller, t_eval=times, control_period=T, rtol=1e-11, atol=1e-13)
    Phi, Gamma = sampled(A, B, T)
    x, expected, inputs = np.array([0.8, -0.3]), [], []
    for _ in range(ticks + 1):
        expected.append(x)
        inputs.append(-(controller.K @ x))
        x = Phi @ x + Gamma[:, 0] * inputs[-1]
    np.testing.assert_allclose(np.column_stack([result.q, result.qd]), expected, rtol=1e-8, atol=1e-10)
    # called once per tick, at the tick, not at t1 (nothing is held after it)
    np.testing.assert_allclose(controller.times, times[:-1], rtol=0, atol=1e-12)
    # what acted: u_k from each tick on (the last output, at t1, keeps the last tick's)
    np.testing.assert_allclose(result.tau[:-1, 0], inputs[:-1], rtol=1e-8, atol=1e-10)
    assert result.tau[-1, 0] == result.tau[-2, 0]
    assert result.relative_energy_drift < 1e-8  # the work of the held torque is integrated with the state


def test_the_controller_s_period_is_picked_up_and_tau_is_piecewise_constant(rotor):
    """``controller.period`` is used without control_period; between ticks (solver's steps as outputs)
    ``result.tau`` is the torque held since the last tick, and the ticks are among the outputs' segments."""
    fn, _, _ = rotor
    T = 0.07
    controller = Counted([3.0, 1.0], period=T)
    result = kr.simulate(fn, None, [0.5, 0.0], (0.0, 1.0), controller)
    ticks = np.arange(15) * T  # 0 ... 0.98 < 1
    np.testing.assert_allclose(controller.times, ticks, rtol=0, atol=1e-12)
    assert result.segments == len(ticks)
    held = {round(t, 9): u for t, u in zip(controller.times, [None] * len(ticks))}
    k = np.minimum(np.floor(result.t / T + 1e-9).astype(int), len(ticks) - 1)
    for j in range(len(ticks)):
        rows = result.tau[k == j, 0]
        assert len(rows) and np.all(rows == rows[0]), j  # constant over the tick
        held[round(ticks[j], 9)] = rows[0]
    assert len(set(held.values())) == len(ticks)  # and a new value at each
    # no step across a tick: each tick is an output (the end of one segment, the start of the next)
    assert all(np.min(np.abs(result.t - t)) < 1e-12 for t in ticks)


def test_a_terminal_event_inside_a_segment_ends_the_run_there(rotor):
    fn, _, _ = rotor
    T = 0.1
    controller = Counted([4.0, 1.5])

    @kr.simulation.event(terminal=True, direction=-1)
    def crosses(t, q, qd):
        return q[0] - 0.2

    recorded = kr.simulation.Event(lambda t, q, qd: q[0] - 0.5, name="half")  # not terminal: recorded, the run goes on
    result = kr.simulate(fn, None, [0.8, 0.0], (0.0, 5.0), controller, events=[crosses, recorded], control_period=T, rtol=1e-10, atol=1e-12)
    te = result.events["crosses"]["t"]
    assert result.terminated_by == "crosses" and len(te) == 1 and result.t[-1] == pytest.approx(te[0], abs=1e-12)
    assert te[0] / T % 1 > 1e-6 and result.q[-1, 0] == pytest.approx(0.2, abs=1e-9)  # inside a segment
    assert len(result.events["half"]["t"]) == 1 and result.events["half"]["t"][0] < te[0]
    assert len(controller.times) == int(np.floor(te[0] / T)) + 1  # no tick after the event


def test_a_stuck_joint_slips_at_the_tick_whose_torque_exceeds_its_friction(rotor):
    """Exact Coulomb friction (stick-slip) at rest: 0.5 FS held from t = 0 keeps it stuck; 2 FS from the tick
    at 0.1 s makes it slip at once, ``J qdd = FS - FV qd``: qd = (FS / FV) (1 - exp(-FV s / J)), s = t - 0.1."""
    fn, _, _ = rotor
    values = dict(zip(fn.model.parameters, fn.parameter_values), FS1=0.3)
    J, FV, FS = values["ZZ1"] + values["IA1"], values["FV1"], values["FS1"]
    fn = fn.model.numeric(values, backend="numpy")
    calls = []

    def steps(t, q, qd):
        calls.append(t)
        return [0.5 * FS if t < 0.05 else 2.0 * FS]

    times = np.array([0.0, 0.05, 0.1, 0.2, 0.3])
    result = kr.simulate(fn, None, [0.0, 0.0], (0.0, 0.3), steps, t_eval=times, friction="stick-slip", control_period=0.1, rtol=1e-11, atol=1e-13)
    s = np.maximum(times - 0.1, 0.0)
    qd = FS / FV * (1 - np.exp(-FV * s / J))
    q = FS / FV * (s - J / FV * (1 - np.exp(-FV * s / J)))
    np.testing.assert_allclose(np.column_stack([result.q[:, 0], result.qd[:, 0]]), np.column_stack([q, qd]), rtol=1e-8, atol=1e-12)
    assert calls == pytest.approx([0.0, 0.1, 0.2], abs=1e-12)
    assert [(e["t"], e["event"]) for e in result.friction_events] == [(0.0, "stick"), (pytest.approx(0.1), "slip")]


def test_a_joint_resting_on_its_stop_leaves_it_at_the_tick_that_pulls_it_away(tmp_path):
    """The URDF hinge of test_simulate at rest on its upper stop, pressed there by gravity (limits="impact"):
    nothing held from t = 0, then -2 m g l from the tick at 0.1 s pulls it off at once; from there the motion
    is J qdd = m g l cos q - 2 m g l (solve_ivp on that equation)."""
    path = tmp_path / "hinge.urdf"
    path.write_text(HINGE)
    robot = kr.load(path)
    fn = kr.derive(robot).numeric(robot.values, backend="numpy")

    def pull(t, q, qd):
        return [0.0 if t < 0.05 else -2.0 * M * G * L]

    times = np.array([0.0, 0.1, 0.2, 0.3])
    result = kr.simulate(fn, None, [UPPER, 0.0], (0.0, 0.3), pull, t_eval=times, limits="impact", control_period=0.1, rtol=1e-11, atol=1e-13)
    assert [(r["event"], r["t"]) for r in result.limit_events] == [("rest", 0.0), ("release", pytest.approx(0.1))]
    free = solve_ivp(lambda t, x: [x[1], M * G * L * (np.cos(x[0]) - 2.0) / J], (0.1, 0.3), [UPPER, 0.0], t_eval=times[1:], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(result.q[1:, 0], free.y[0], rtol=0, atol=1e-8)
    np.testing.assert_allclose(result.qd[1:, 0], free.y[1], rtol=0, atol=1e-8)


def test_bad_control_period_is_one_line(rotor):
    fn, _, _ = rotor
    for value, message in [
        (0.0, "control_period must be a positive, finite time in seconds, got 0.0"),
        (-0.1, "control_period must be a positive, finite time in seconds, got -0.1"),
        (float("inf"), "control_period must be a positive, finite time in seconds, got inf"),
        (float("nan"), "control_period must be a positive, finite time in seconds, got nan"),
        ("fast", "control_period must be a positive, finite time in seconds, got 'fast'"),
        (True, "control_period must be a positive, finite time in seconds, got True"),
    ]:
        with pytest.raises(KaneRobotError) as error:
            kr.simulate(fn, None, [0.0, 0.0], (0.0, 1.0), Counted([1.0, 1.0]), control_period=value)
        assert str(error.value) == message
    with pytest.raises(KaneRobotError) as error:
        kr.simulate(fn, None, [0.0, 0.0], (0.0, 1.0), Counted([1.0, 1.0], period=-1.0))
    assert str(error.value) == "the controller's period must be a positive, finite time in seconds, got -1.0 (or give control_period)"
    with pytest.raises(KaneRobotError, match="dense_output is not available with a control period"):
        kr.simulate(fn, None, [0.0, 0.0], (0.0, 1.0), Counted([1.0, 1.0]), control_period=0.1, dense_output=True)


def test_the_mpc_under_control_period_is_its_own_hold_with_one_solve_per_tick():
    """The MPC declares ``period = dt``: kr.simulate calls it once per tick (stats["ticks"] is the number of
    ticks); the motion is the one its own hold gives (a plain function around it, which has no period)
    within the integrator's reach: its hold takes the state at the first evaluation at or after a tick,
    within one step (max_step) of it."""
    pytest.importorskip("casadi", reason="pip install -e '.[casadi]'")
    from kanerobot import control
    from kanerobot.dynamics.parameters import random_parameters
    from kanerobot.mpc import balance_mpc

    robot = kr.load(kr.frames_path("planar2"))
    fn = kr.derive(robot).numeric(random_parameters(robot, np.random.default_rng(4), friction=False), backend="numpy")
    lqr = control.lqr_balance(fn, [0.7, -0.4], pitch=None)
    mpc = balance_mpc(lqr, horizon=5, dt=0.05, limits=np.abs(lqr.u_eq) + 2.0)
    assert mpc.period == 0.05
    x0, times = lqr.x_eq + np.array([0.2, -0.2, 0.0, 0.0]), np.linspace(0.0, 0.5, 11)
    options = dict(t_eval=times, rtol=1e-9, atol=1e-11)
    sampled_run = kr.simulate(fn, None, x0, (0.0, 0.5), mpc, **options)
    assert mpc.stats["ticks"] == 10 and sampled_run.segments == 10
    before = kr.simulate(fn, None, x0, (0.0, 0.5), lambda t, q, qd: mpc(t, q, qd), max_step=1e-3, **options)

    np.testing.assert_allclose(sampled_run.q, before.q, atol=2e-4)
    # (at t1 the sampled run holds the last tick's torque; the MPC's own hold, called there, solves tick 10)
    np.testing.assert_allclose(sampled_run.tau[:-1], before.tau[:-1], atol=2e-2 * np.abs(before.tau).max())
    # kr.cross_validate picks the period up through its observer's wrapper: the same run, the same ticks
    cv = kr.cross_validate(fn, fn, mpc, t_span=(0.0, 0.5), x0=x0, t_eval=times, rtol=1e-9, atol=1e-11)
    assert mpc.stats["ticks"] == 10
    np.testing.assert_allclose(cv.simulation.q, sampled_run.q, rtol=0, atol=1e-12)


def test_a_campaign_samples_a_ready_controller_and_refuses_a_bad_period(rotor):
    pytest.importorskip("pandas", reason="pip install -e '.[cluster]'")
    fn, _, _ = rotor
    controller = Counted([4.0, 1.5], period=0.1)
    table = kr.campaign(fn.model, dict(zip(fn.model.parameters, fn.parameter_values)), controller, runs=1, sample={"FV1": (0.1, 0.2)}, t_span=(0.0, 0.5),
                        x0=[0.3, 0.0], samples=6, scheduler="in-process", backend="numpy")  # fmt: skip
    assert list(table["status"]) == ["ok"] and controller.times == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4], abs=1e-12)
    with pytest.raises(KaneRobotError) as error:
        kr.campaign(fn.model, dict(zip(fn.model.parameters, fn.parameter_values)), controller, runs=1, sample={"FV1": (0.1, 0.2)}, t_span=(0.0, 0.5),
                    x0=[0.3, 0.0], scheduler="in-process", backend="numpy", control_period=-1.0)  # fmt: skip
    assert str(error.value) == "control_period must be a positive, finite time in seconds, got -1.0"
