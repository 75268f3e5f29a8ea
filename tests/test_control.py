"""Controllers and trajectories of kanerobot.control, and kr.cross_validate:
computed torque tracks on the exact model, shows a bounded error against a
plant with 10 % mass error, PD with gravity compensation reaches its set
point, every structure can be controlled, plots are written."""

import dataclasses
import sys

import numpy as np
import pytest
import sympy
from conftest import derived, library

import kanerobot as kr
from kanerobot import control
from kanerobot.control import ComputedTorque, PDGravity, Trajectory, computed_torque, pd_gravity, quintic, sinusoid, waypoints
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError

TIGHT = {"rtol": 1e-10, "atol": 1e-12}


def passive(robot, seed, **options):
    return random_parameters(robot, np.random.default_rng(seed), friction=False, wrench=False, **options)


def heavier(values, factor=1.1, links=None):
    """Every link's mass, first moments and inertia scaled: the same bodies, ``factor`` times as dense."""
    names = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")
    out = dict(values)
    for key in values:
        for name in names:
            if key.startswith(name) and key[len(name):] and (links is None or key[len(name):] in links) and not key[len(name)].isalpha():
                out[key] = values[key] * factor
    return out


# ------------------------------------------------------------ trajectories
def finite_differences(trajectory, t, h=1e-5):
    _q, qd, qdd = trajectory(t)
    dq = (trajectory.position(t + h) - trajectory.position(t - h)) / (2 * h)
    dqd = (trajectory.velocity(t + h) - trajectory.velocity(t - h)) / (2 * h)
    return qd - dq, qdd - dqd


@pytest.mark.parametrize(
    "trajectory",
    [
        quintic([0.0, 1.0], [1.0, -1.0], 2.0, t0=0.5),
        waypoints([0, 1, 2.5], [[0.0, 0.0], [1.0, 2.0], [-1.0, 0.5]]),
        sinusoid([0.1, 0.2], [0.5, 0.3], [0.7, 1.1], [0.0, 1.0]),
        Trajectory.from_arrays(np.linspace(0, 2, 21), np.column_stack([np.sin(np.linspace(0, 2, 21)), np.linspace(0, 2, 21) ** 2])),
    ],
    ids=["quintic", "waypoints", "sinusoid", "spline"],
)
def test_trajectories_are_consistent(trajectory):
    for t in np.linspace(0.13, 1.93, 7):  # between the knots of the waypoints (jerk jumps there)
        dv, da = finite_differences(trajectory, t)
        assert np.abs(dv).max() < 1e-6 and np.abs(da).max() < 1e-4


def test_quintic_boundary_conditions():
    tr = quintic([0.0, 1.0], [2.0, -1.0], 2.0, t0=1.0)
    for t, q in ((0.0, [0, 1]), (1.0, [0, 1]), (3.0, [2, -1]), (9.0, [2, -1])):
        q_d, qd_d, qdd_d = tr(t)
        np.testing.assert_allclose(q_d, q, atol=1e-15)
        np.testing.assert_allclose(qd_d, 0, atol=1e-15)
        np.testing.assert_allclose(qdd_d, 0, atol=1e-12)
    assert tr.t_span == (1.0, 3.0)
    with pytest.raises(KaneRobotError, match="positive duration"):
        quintic([0], [1], 0.0)
    with pytest.raises(KaneRobotError, match="q1 must be 1 values"):
        quintic([0], [1, 2], 1.0)


def test_trajectory_from_arrays_and_functions():
    t = np.linspace(0, 1, 11)
    tr = Trajectory.from_arrays(t, t**2, 2 * t)
    assert tr.n == 1 and tr.t_span == (0.0, 1.0)
    np.testing.assert_allclose(tr.position(0.55), [0.55**2], atol=1e-12)  # a cubic Hermite spline is exact on t^2
    np.testing.assert_allclose(tr.acceleration(0.55), [2.0], atol=1e-9)
    np.testing.assert_allclose(tr(2.0)[1], [0.0])  # holds the end sample
    f = Trajectory.from_functions(lambda t: np.array([np.sin(t)]))
    np.testing.assert_allclose(f.velocity(0.3), [np.cos(0.3)], atol=1e-9)
    np.testing.assert_allclose(f.acceleration(0.3), [-np.sin(0.3)], atol=1e-5)
    with pytest.raises(KaneRobotError, match="increasing"):
        Trajectory.from_arrays([0, 0], [[1], [2]])
    with pytest.raises(KaneRobotError, match=r"must have shape \(3, n\)"):
        Trajectory.from_arrays([0, 1, 2], [[1], [2]])


# ------------------------------------------------------------- controllers
def test_computed_torque_on_the_exact_model_tracks_to_1e_6():
    robot = library("rx90")
    fn = derived("rx90").numeric(random_parameters(robot, np.random.default_rng(1), wrench=False))
    q0 = np.zeros(6)
    q1 = np.array([0.5, -0.4, 0.3, 1.0, -0.8, 0.6])
    trajectory = quintic(q0, q1, 1.5)
    controller = computed_torque(fn, trajectory)
    # friction="model": the plant's Coulomb law is the controller model's own FS sign(qd)
    result = kr.simulate(fn, None, np.concatenate([q0, np.zeros(6)]), (0.0, 2.0), controller, t_eval=np.linspace(0, 2, 41), friction="model", **TIGHT)
    desired = trajectory.sample(result.t)[0]
    assert np.abs(result.q - desired).max() < 1e-6
    assert np.abs(result.tau).max() > 1.0


def test_cross_validate_newton_euler_controller_on_kane_plant():
    """Same parameters, two engines: the controller's model is exact, the error is the integrator's."""
    robot = library("rx90")
    values = passive(robot, 2)
    trajectory = quintic(np.zeros(6), [0.4, -0.3, 0.2, 0.6, -0.5, 0.4], 1.0)
    cv = kr.cross_validate((derived("rx90"), values), (derived("rx90", "kane"), values), "computed_torque", trajectory,
                           samples=21, **TIGHT)  # fmt: skip
    s = cv.summary()
    assert s["max_tracking_error"] < 1e-6
    assert s["max_mass_matrix_disagreement"] < 1e-9 and s["max_torque_disagreement"] < 1e-6
    assert "RX90 (kane)" in cv.report() and cv.coordinates == list(robot.joint_labels)


def test_cross_validate_against_ten_percent_mass_error():
    """Computed torque built on the nominal model, the plant's links 10 % heavier: a bounded error, reported."""
    robot = library("rx90")
    nominal = passive(robot, 3)
    plant = heavier(nominal, 1.1)
    trajectory = quintic(np.zeros(6), [0.8, -0.6, 0.5, 1.0, -0.8, 0.7], 1.0)
    cv = kr.cross_validate(derived("rx90"), derived("rx90", "kane"), "computed_torque", trajectory,
                           controller_values=nominal, plant_values=plant, t_span=(0.0, 3.0), samples=61, **TIGHT)  # fmt: skip
    s = cv.summary()
    # The model error acts as a disturbance of the loop e'' + Kd e' + Kp e = d (Kp = 100, Kd = 20):
    assert 1e-5 < s["max_tracking_error"] < 0.05
    # Once the motion stops the error settles where the loop balances the gravity the model misses:
    # A^ Kp e + Q^(q) = Q(q), so e = Kp^-1 A^(q)^-1 (Q(q) - Q^(q)), Kp = 100.
    fc, fp = cv.controller.model, cv.simulation.numeric
    q_end = cv.simulation.q[-1]
    predicted = np.linalg.solve(fc.mass_matrix(q_end), fp.gravity(q_end) - fc.gravity(q_end)) / 100.0
    np.testing.assert_allclose(cv.tracking_error[-1], predicted, rtol=1e-4, atol=1e-9)
    assert np.abs(predicted).max() > 1e-4
    # Inertias, bias forces and inverse dynamics all differ by about 10 %.
    assert 0.05 < s["relative_mass_matrix_disagreement"] < 0.2
    assert 0.05 < s["relative_torque_disagreement"]
    assert s["max_torque_disagreement"] > 0.01
    assert cv.tracking_error.shape == (61, 6) and cv.disagreement["mass_matrix"].shape == (61,)
    # The tighter the gains, the smaller the error: the same plant with omega = 30 rad/s.
    stiff = kr.cross_validate(derived("rx90"), derived("rx90", "kane"), "computed_torque", trajectory,
                              controller_values=nominal, plant_values=plant, gains={"kp": 900.0, "kd": 60.0},
                              t_span=(0.0, 3.0), samples=61, **TIGHT)  # fmt: skip
    assert stiff.summary()["max_tracking_error"] < 0.3 * s["max_tracking_error"]


def test_pd_with_gravity_compensation_reaches_its_set_point():
    robot = dataclasses.replace(library("planar2"), base=kr.Base.from_values(G=["G1", 0, 0]))  # a vertical plane
    values = passive(robot, 4)
    values["G1"] = 9.81
    fn = kr.derive(robot).numeric(values, backend="numpy")
    target = [0.7, -0.4]
    controller = pd_gravity(fn, target)
    assert isinstance(controller, PDGravity)
    result = kr.simulate(fn, None, [0.0, 0.0, 0.0, 0.0], (0.0, 5.0), controller, t_eval=[5.0])
    assert np.abs(result.q[-1] - target).max() < 1e-4
    # At the set point the torque is the gravity torque.
    np.testing.assert_allclose(result.tau[-1], fn.gravity(result.q[-1]), atol=1e-2)


@pytest.mark.long
def test_computed_torque_on_a_closed_loop():
    robot = dataclasses.replace(library("fourbar"), base=kr.Base.from_values(G=[0, "G2", 0]))
    fn = kr.derive(robot).numeric(passive(robot, 3), backend="numpy")
    trajectory = quintic([1.0], [1.5], 1.0)
    q0 = fn.configuration([1.0], guess=[-1.0, 1.0, -1.0])
    result = kr.simulate(fn, None, np.concatenate([q0, [0.0]]), (0.0, 1.2), computed_torque(fn, trajectory), t_eval=np.linspace(0, 1.2, 13), **TIGHT)
    np.testing.assert_allclose(result.q[:, 0], trajectory.sample(result.t)[0][:, 0], atol=1e-6)
    assert result.monitors["closure_residual"].max() < 1e-8


def test_computed_torque_on_a_floating_base():
    """The joints of a free-floating satellite track their trajectory; the base moves to keep the momentum."""
    robot = library("satellite")
    fn = derived("satellite").numeric(passive(robot, 5, gravity=0.0), backend="numpy")
    trajectory = quintic([0.0, 0.3, -0.3], [1.0, -0.5, 0.5], 1.0)
    cv = kr.cross_validate(fn, fn, ComputedTorque(fn, trajectory), None, samples=11, **TIGHT)
    assert cv.summary()["max_tracking_error"] < 1e-6
    assert cv.coordinates == ["1", "2", "3"]
    momentum = cv.simulation.monitors["momentum"]
    assert np.abs(momentum).max() < 1e-8  # started with zero momentum, no external force
    assert np.abs(cv.simulation.q[-1, :7] - [0, 0, 0, 0, 0, 0, 1]).max() > 1e-3  # the base reacted


@pytest.mark.long
def test_rigid_controller_on_a_flexible_plant():
    """Computed torque on the rigid arm against the same arm with stiff joints, fed back the motor positions:
    a bounded error that shrinks as 1/k."""
    flexible = library("planar2flex")
    rigid = dataclasses.replace(flexible, joint_parameters={label: dict(p, eta=0) for label, p in flexible.joint_parameters.items()})
    values = passive(flexible, 6)
    values.update(G1=9.81)
    trajectory = quintic([0.0, 0.0], [0.6, -0.5], 1.0)
    errors = []
    for k in (1e4, 1e5):
        plant_values = dict(values, k1=k, k2=k)
        cv = kr.cross_validate((kr.derive(rigid), values), (kr.derive(flexible), plant_values), "computed_torque", trajectory,
                               t_span=(0.0, 1.5), samples=31, method="Radau", rtol=1e-8, atol=1e-10)  # fmt: skip
        errors.append(cv.summary()["max_tracking_error"])
        assert "different coordinates" in cv.notes[0] and "torque" in cv.disagreement
        assert cv.tracking_error.shape == (31, 2)
    assert 1e-6 < errors[0] < 1e-2
    assert errors[1] == pytest.approx(errors[0] / 10, rel=0.2)


@pytest.mark.long
def test_pd_on_flexible_joints_reaches_its_set_point():
    robot = library("planar2flex")
    values = passive(robot, 6)
    values.update(G1=9.81, k1=200.0, k2=200.0)
    fn = derived("planar2flex").numeric(values, backend="numpy")
    assert control.controlled_coordinates(fn) == ["qr1", "qr2"]
    target = np.array([0.5, -0.3])
    result = kr.simulate(fn, None, np.zeros(8), (0.0, 8.0), pd_gravity(fn, target), t_eval=[8.0], method="Radau", rtol=1e-8, atol=1e-10)
    assert np.abs(result.q[-1, :2] - target).max() < 1e-3  # the links reach it; the motors sit K^-1 Q further


def test_controller_errors():
    robot = library("planar2")
    fn = derived("planar2").numeric(passive(robot, 1), backend="numpy")
    with pytest.raises(KaneRobotError, match="the trajectory has 1 coordinates; the controller tracks 2"):
        computed_torque(fn, quintic([0.0], [1.0], 1.0))
    with pytest.raises(KaneRobotError, match=r"kp must be a number, 2 values or an 2x2 matrix"):
        computed_torque(fn, [0.0, 0.0], kp=[1.0, 2.0, 3.0])
    flexible = library("planar2flex")
    ffn = derived("planar2flex").numeric(passive(flexible, 1), backend="numpy")
    with pytest.raises(KaneRobotError, match="computed torque needs a rigid model"):
        computed_torque(ffn, [0.0, 0.0])
    with pytest.raises(KaneRobotError, match="unknown controller 'lqr'"):
        kr.cross_validate(fn, fn, "lqr", [0.0, 0.0], t_span=(0, 1))
    with pytest.raises(KaneRobotError, match="gains takes kp and kd"):
        kr.cross_validate(fn, fn, "pd_gravity", [0.0, 0.0], t_span=(0, 1), gains={"ki": 1.0})
    with pytest.raises(KaneRobotError, match="give t_span"):
        kr.cross_validate(fn, fn, "pd_gravity", [0.0, 0.0])
    rx = library("rx90")
    rfn = derived("rx90").numeric(passive(rx, 1), backend="numpy")
    with pytest.raises(KaneRobotError, match="have different states"):
        kr.cross_validate(fn, rfn, "pd_gravity", [0.0, 0.0], t_span=(0, 1))


def test_a_controller_factory_and_a_plain_function():
    robot = library("planar2")
    fn = derived("planar2").numeric(passive(robot, 1), backend="numpy")
    trajectory = quintic([0.0, 0.0], [0.3, 0.2], 1.0)

    def my_controller(model, trajectory):
        return ComputedTorque(model, trajectory, kp=400.0, kd=40.0)

    cv = kr.cross_validate(fn, fn, my_controller, trajectory, samples=5, **TIGHT)
    assert cv.controller_name == "my_controller" and cv.summary()["max_tracking_error"] < 1e-6


# ------------------------------------------------------------------- plots
def cross_validation_of_planar2(**options):
    robot = library("planar2")
    values = passive(robot, 1)
    return kr.cross_validate((derived("planar2"), values), (derived("planar2", "kane"), heavier(values)), "computed_torque",
                             quintic([0.0, 0.0], [1.0, -1.0], 1.0), t_span=(0, 1.5), samples=61, backend="numpy", **options)  # fmt: skip


@pytest.mark.long
def test_plots_are_written(tmp_path):
    pytest.importorskip("matplotlib")
    cv = cross_validation_of_planar2(plot=tmp_path / "figures")
    names = sorted(path.name for path in cv.figures)
    assert names == [f"cross_validation_{kind}.png" for kind in ("disagreement", "energy", "torques", "tracking")]
    for path in cv.figures:
        assert path.is_file() and path.stat().st_size > 10_000
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    paths = cv.simulation.plot(tmp_path / "run", prefix="planar2")
    assert [p.name for p in paths] == ["planar2_motion.png", "planar2_torques.png", "planar2_energy.png"]
    assert all(p.stat().st_size > 10_000 for p in paths)


def test_asking_for_plots_without_matplotlib(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    with pytest.raises(KaneRobotError, match=r"needs matplotlib, which is not installed: pip install 'kanerobot\[plot\]'"):
        cross_validation_of_planar2(plot=tmp_path)
    cv = cross_validation_of_planar2()  # the numbers need no matplotlib
    assert cv.summary()["max_tracking_error"] > 0 and cv.figures == []
    with pytest.raises(KaneRobotError, match="needs matplotlib"):
        cv.plot(tmp_path)


def test_a_plain_controller_function_in_cross_validate():
    robot = library("planar2")
    fn = derived("planar2").numeric(passive(robot, 1), backend="numpy")
    trajectory = quintic([0.0, 0.0], [0.3, 0.2], 1.0)
    ct = ComputedTorque(fn, trajectory)

    def tau(t, q, qd):
        return ct(t, q, qd)

    cv = kr.cross_validate(fn, fn, tau, trajectory, samples=5, **TIGHT)
    assert cv.controller_name == "tau" and cv.summary()["max_tracking_error"] < 1e-6


# ----------------------------------------------------------- balancing LQR
_KRANG_WHEELED = {}


def krang_on_wheels(seed=5):
    """Krang on its wheels: random consistent bodies, gravity -9.81 along z, balanced wheels
    (centre of mass on the axle, inertia symmetric about it: the dynamics does not depend on
    the wheel angles)."""
    if seed not in _KRANG_WHEELED:
        _KRANG_WHEELED[seed] = derived("krang_wheeled").numeric(krang_wheel_values(seed))
    return _KRANG_WHEELED[seed]


def krang_wheel_values(seed):
    """:func:`krang_on_wheels`'s values."""
    values = passive(library("krang_wheeled"), seed)
    values["G3"] = -9.81
    for wheel in ("wr", "wl"):
        for name in ("MX", "MZ", "XY", "XZ", "YZ"):
            values[name + wheel] = 0.0
        values["ZZ" + wheel] = values["XX" + wheel]
    return values


def test_upright_equilibrium_of_krang_on_wheels():
    fn = krang_on_wheels()
    q0 = np.zeros(22)
    q0[6:] = np.random.default_rng(1).uniform(-0.5, 0.5, 16)  # some posture of the spine, torso and arms
    q = control.upright_equilibrium(fn, q0)
    pitch = fn.robot.joint_labels.index("1")
    assert np.array_equal(np.delete(q, pitch), np.delete(q0, pitch))
    Q = fn.gravity(q)
    assert abs(Q[2]) < 1e-9 * np.abs(Q).max()  # no gravity torque on the pitch ...
    assert abs(Q[0]) < 1e-9 and abs(Q[1]) < 1e-9  # ... nor on the wheels (horizontal ground)
    # ... and the potential energy is a maximum in the pitch: the centre of mass is above the axle.
    V = [fn.potential_energy(np.where(np.arange(22) == pitch, q + d, q)) for d in (-0.05, 0.0, 0.05)]
    assert V[1] > V[0] and V[1] > V[2]
    B, motors = control.actuation_matrix(fn)
    assert motors == ["wr", "wl"] + list(fn.model.independent[3:])
    np.testing.assert_array_equal(B[2], np.r_[-1.0, -1.0, np.zeros(16)])


@pytest.mark.long
def test_krang_linearisation_is_the_model_s():
    fn = krang_on_wheels()
    lqr = control.lqr_balance(fn, q0=np.zeros(22))
    A, B = lqr.A, lqr.B
    assert A.shape == (38, 38) and B.shape == (38, 18) and lqr.K.shape == (18, 38)
    # Another step of the central differences gives the same Jacobians.
    A2, B2 = control.linearize(fn, lqr.q_eq, lqr.u_eq, lqr.actuation, step=1e-4)
    assert np.abs(A2 - A).max() < 1e-5 * np.abs(A).max() and np.abs(B2 - B).max() < 1e-5 * np.abs(B).max()
    # A small displacement from the equilibrium: the model's acceleration is A dx + B du to second order.
    rng = np.random.default_rng(2)
    direction, torques = rng.uniform(-1, 1, 38), rng.uniform(-1, 1, 18)
    residuals = []
    for eps in (1e-3, 1e-4):
        dx, du = eps * direction, eps * torques
        q = lqr.q_eq.copy()
        q[fn.ind] += dx[:19]
        acc = fn.direct_dynamics(q, dx[19:], lqr.actuation @ (lqr.u_eq + du))
        residuals.append(np.abs(acc - (A @ dx + B @ du)[19:]).max() / np.abs(acc).max())
    # The remainder is of second order: relative to the first-order motion it falls as eps.
    assert residuals[0] < 1e-2 and 5 < residuals[0] / residuals[1] < 20
    # The body joints locked, the wheels and the pitch: A_s qdd_s + K_s q_s = 0 (K = dQ/dq) has one
    # unstable mode, the inverted pendulum, and two zero ones (the robot rolls and turns freely).
    M = fn.mass_matrix(lqr.q_eq)
    K = -M @ A[19:, :19]  # at rest: A qdd + K dq = 0
    s = [0, 1, 2]
    lam2 = np.linalg.eigvals(np.linalg.solve(M[np.ix_(s, s)], -K[np.ix_(s, s)]))  # lambda^2
    lam2 = np.sort(lam2.real)
    assert lam2[-1] > 1.0 and np.abs(lam2[:2]).max() < 1e-6 * lam2[-1]
    assert np.sum(lqr.open_loop_poles.real > 1e-6) >= 1  # unstable as a whole
    assert lqr.closed_loop_poles.real.max() < -0.1  # and stabilised by the LQR


def test_krang_balances_on_its_wheels_and_falls_without_control():
    fn = krang_on_wheels()
    lqr = control.lqr_balance(fn, q0=np.zeros(22))
    assert isinstance(lqr, control.BalanceLQR) and lqr.pitch == "1" and "18 motors" in repr(lqr)
    x0 = np.concatenate([lqr.q_eq, np.zeros(19)])
    x0[5] += 0.05  # the body pitched 0.05 rad forward of upright
    times = np.linspace(0.0, 5.0, 51)
    closed = kr.simulate(fn, None, x0, (0.0, 5.0), lqr, t_eval=times)
    error = np.abs(lqr.pitch_error(closed.q))
    assert error[0] == pytest.approx(0.05)
    assert error[times >= 4.0].max() < 1e-3  # upright again within a few seconds
    assert np.abs(closed.q[-1, 3:] - lqr.q_eq[3:]).max() < 1e-2  # wheels and body back where they were
    assert closed.monitors["constraint_residual"].max() < 1e-12
    # The torques it uses: the pitch's generalized force is minus the wheel motors' torques.
    np.testing.assert_allclose(closed.tau[:, 2], -(closed.tau[:, 0] + closed.tau[:, 1]), atol=1e-9)
    # Open loop (the constant torques of the equilibrium, no feedback): the pitch diverges, the robot falls.
    fall = kr.simulation.event(lambda t, q, qd: abs(lqr.pitch_error(q)) - 0.5, terminal=True, name="fall")
    open_loop = kr.simulate(fn, None, x0, (0.0, 5.0), lqr.tau_eq, events=fall)
    assert open_loop.terminated_by == "fall" and open_loop.t[-1] < 3.0


_KRANG_SLOPE = {}


def krang_on_a_slope(degrees=10.0, seed=5):
    """:func:`krang_on_wheels`'s robot on ground tilted by ``degrees`` about the y axis (gravity tilted in the
    ground's frame 0: G1 = -g sin, G3 = -g cos, downhill towards -x, the robot heading uphill at th = 0)."""
    if (degrees, seed) not in _KRANG_SLOPE:
        robot = library("krang_wheeled")
        robot = dataclasses.replace(robot, base=dataclasses.replace(robot.base, G=sympy.ImmutableMatrix(sympy.symbols("G1 G2 G3"))))
        a = np.radians(degrees)
        values = {**krang_wheel_values(seed), "G1": -9.81 * np.sin(a), "G2": 0.0, "G3": -9.81 * np.cos(a)}
        _KRANG_SLOPE[degrees, seed] = (kr.derive(robot).numeric(values), values)
    return _KRANG_SLOPE[degrees, seed]


def test_krang_stands_still_on_a_slope_with_its_centre_of_mass_above_the_wheels_contacts():
    """On a 10-degree slope the wheel motors hold Krang from rolling down: the equilibrium is where the gravity
    torques left over by the motors vanish, and statics says (closed form) that the whole robot's centre of mass
    is then on the vertical through the wheels' contact line: the body leans uphill."""
    fn, values = krang_on_a_slope()
    q0 = np.zeros(22)
    q0[6:] = np.random.default_rng(3).uniform(-0.3, 0.3, 16)
    q = control.upright_equilibrium(fn, q0)
    g = np.array([values[name] for name in ("G1", "G2", "G3")])
    c = fn.center_of_mass(q)  # frame 0 (the ground); th = 0: heading along x, contacts at (x, y +- b/2, 0)
    contact = np.array([q[0], q[1], 0.0])
    lever = np.cross(c - contact, g / np.linalg.norm(g))[1]  # the moment arm of gravity about the contact line (along y)
    assert abs(lever) < 1e-12 * np.linalg.norm(c - contact), lever
    # Up (against gravity) is (sin, 0, cos) in the slope's frame: the centre of mass is uphill, c_x = x + c_z tan(10 deg).
    assert np.isclose(c[0] - contact[0], (c[2] - contact[2]) * np.tan(np.radians(10.0)), rtol=1e-9)
    # The motors hold it: the direct dynamics at rest with the torques of B u = Q is zero.
    B, _ = control.actuation_matrix(fn)
    u = np.linalg.lstsq(B, fn.gravity(q), rcond=None)[0]
    assert np.abs(fn.direct_dynamics(q, np.zeros(19), B @ u)).max() < 1e-9
    assert abs(u[0]) > 1.0 and abs(u[1]) > 1.0  # the wheels' motors push against the slope
    # The flat-ground rule (no gravity torque on the pitch alone) is not the equilibrium here.
    assert abs(fn.gravity(q)[2]) > 1.0


@pytest.mark.long
def test_krang_balances_on_a_slope_for_ten_seconds():
    """Issue 28's acceptance: the balancing LQR holds Krang on a 10-degree slope for 10 s from a 0.1 rad push."""
    fn, _ = krang_on_a_slope()
    lqr = control.lqr_balance(fn, q0=np.zeros(22))
    x0 = np.concatenate([lqr.q_eq, np.zeros(19)])
    x0[5] += 0.1
    times = np.linspace(0.0, 10.0, 101)
    closed = kr.simulate(fn, None, x0, (0.0, 10.0), lqr, t_eval=times)
    assert closed.t[-1] == 10.0 and closed.terminated_by is None
    error = np.abs(lqr.pitch_error(closed.q))
    assert error[0] == pytest.approx(0.1) and error[times >= 8.0].max() < 1e-4
    assert np.abs(closed.q[-1, :2] - lqr.q_eq[:2]).max() < 0.05  # it has not rolled down the slope
    assert closed.monitors["constraint_residual"].max() < 1e-12
    fall = kr.simulation.event(lambda t, q, qd: abs(lqr.pitch_error(q)) - 0.5, terminal=True, name="fall")
    assert kr.simulate(fn, None, x0, (0.0, 10.0), lqr.tau_eq, events=fall).terminated_by == "fall"  # without feedback


def test_lqr_on_a_fully_actuated_arm_and_errors():
    """Any rigid fixed-base model: every joint a motor (pitch=None), the equilibrium given."""
    robot = dataclasses.replace(library("planar2"), base=kr.Base.from_values(G=["G1", 0, 0]))
    values = passive(robot, 4)
    values["G1"] = 9.81
    fn = kr.derive(robot).numeric(values, backend="numpy")
    q_eq = np.array([0.7, -0.4])
    lqr = control.lqr_balance(fn, q_eq, pitch=None, R=[0.1, 0.1])
    np.testing.assert_allclose(lqr.u_eq, fn.gravity(q_eq))
    assert lqr.motors == ["1", "2"] and lqr.pitch_error(q_eq) is None
    result = kr.simulate(fn, None, [0.9, -0.2, 0.0, 0.0], (0.0, 4.0), lqr, t_eval=[4.0])
    assert np.abs(result.q[-1] - q_eq).max() < 1e-4
    with pytest.raises(KaneRobotError, match="needs q_eq"):
        control.lqr_balance(fn, pitch=None)
    B, motors = control.actuation_matrix(fn, pitch="1")  # no wheel: every motor on its own joint, none on the pitch
    assert motors == ["2"] and B.tolist() == [[0.0], [1.0]]
    with pytest.raises(KaneRobotError, match="Q must be 4 values"):
        control.lqr_balance(fn, q_eq, Q=np.ones(3), pitch=None)
    with pytest.raises(KaneRobotError, match="not a controlled coordinate"):
        control.upright_equilibrium(fn, pitch="7")
    wheeled = krang_on_wheels()
    with pytest.raises(KaneRobotError, match="not an equilibrium the motors can hold"):
        control.lqr_balance(wheeled, np.zeros(22))


def test_linearize_is_analytic_on_a_fixed_base_and_equals_finite_differences():
    """The RX-90 (every joint a motor, a random actuation): the A, B of the derivative
    programs equal central differences of the direct dynamics to 1e-6 relative."""
    robot = library("rx90")
    rng = np.random.default_rng(7)
    values = random_parameters(robot, rng, friction=False)  # Coulomb friction has no derivative at rest
    fn = derived("rx90").numeric(values, backend="numpy")
    q_eq, actuation = rng.uniform(-1, 1, 6), rng.uniform(-1, 1, (6, 4))
    u_eq = rng.uniform(-2, 2, 4)
    A, B = control.linearize(fn, q_eq, u_eq, actuation)
    A_fd, B_fd = control.linearize(fn, q_eq, u_eq, actuation, analytic=False)
    assert np.abs(A - A_fd).max() < 1e-6 * np.abs(A).max() and np.abs(B - B_fd).max() < 1e-6 * np.abs(B).max()
    np.testing.assert_array_equal(A[:6], np.hstack([np.zeros((6, 6)), np.eye(6)]))
    dq, dqd, dtau = fn.direct_dynamics_derivatives(q_eq, np.zeros(6), actuation @ u_eq)
    np.testing.assert_array_equal(A[6:], np.hstack([dq, dqd]))
    np.testing.assert_array_equal(B[6:], dtau @ actuation)
    with pytest.raises(KaneRobotError, match=r"linearize\(analytic=True\): wheeled base models have no derivative programs"):
        control.linearize(krang_on_wheels(), np.zeros(22), analytic=True)
