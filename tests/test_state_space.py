"""kanerobot.state_space: the one description of (q, qd, tau) that simulation,
control, energy and the CLI read, for each structure of frames/ (planar2,
satellite, flexarm1, fourbar, diffdrive).

Sizes and names are held against the model's own functions and symbols;
``integrate`` against closed forms (a free flyer's screw motion, a
differential drive's circle) or the loop solver; ``qdot`` against finite
differences of ``integrate``; the actuation ``B`` against the direct
dynamics (``dqdd/dtau = A^-1 B^T``); the friction maps against ``G`` and
its finite-difference derivative."""

import functools

import numpy as np
import pytest
from conftest import derived

from kanerobot.cli import state_layout
from kanerobot.control import ControlView, controlled_coordinates
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError
from kanerobot.simulation import plant

ROBOTS = ("planar2", "satellite", "flexarm1", "fourbar", "diffdrive")


@functools.cache
def numeric(name):
    m = derived(name)
    return m.numeric(random_parameters(m.robot, np.random.default_rng(3)), backend="numpy")


def state(name, rng):
    """A random state of the model (a closed configuration for the four-bar, a unit quaternion)."""
    fn = numeric(name)
    s = fn.state_space
    if name == "fourbar":
        q = fn.configuration([0.7], guess=[-1.0, 1.0, -1.0])
        return q, rng.uniform(-1, 1, s.nv)
    return s.sample(rng)


def test_sizes_and_names_are_the_models():
    robot = {name: derived(name).robot for name in ROBOTS}
    expected = {
        # name: (kind, nq, nv, ntau, coordinates)
        "planar2": ("fixed base", 2, 2, 2, list(robot["planar2"].joint_labels)),
        "satellite": ("floating base", numeric("satellite").nq, numeric("satellite").nv, numeric("satellite").n,
                      ["x", "y", "z", "qx", "qy", "qz", "qw"] + list(robot["satellite"].joint_labels)),
        "flexarm1": ("flexible joints", numeric("flexarm1").m, numeric("flexarm1").m, numeric("flexarm1").n,
                     list(derived("flexarm1").coordinates)),
        "fourbar": ("closed loop", numeric("fourbar").n, numeric("fourbar").m, numeric("fourbar").m,
                    list(robot["fourbar"].joint_labels)),
        "diffdrive": ("wheeled base", numeric("diffdrive").n, numeric("diffdrive").m, numeric("diffdrive").m,
                      list(robot["diffdrive"].joint_labels)),
    }  # fmt: skip
    for name, (kind, nq, nv, ntau, coordinates) in expected.items():
        s = numeric(name).state_space
        assert (s.kind, s.nq, s.nv, s.ntau, list(s.coordinates)) == (kind, nq, nv, ntau, coordinates), name
        assert s.fn is numeric(name) and derived(name).state_space.fn is None
        # the model's own functions take these sizes
        q, qd = state(name, np.random.default_rng(0))
        assert np.shape(numeric(name).mass_matrix(q)) == (nv, nv), name
        assert np.shape(numeric(name).direct_dynamics(q, qd, np.zeros(ntau))) == (nv,), name
        # the controlled coordinates are control's, one per torque
        assert list(s.controlled_labels) == controlled_coordinates(numeric(name)) and len(s.controlled) == ntau
    assert numeric("planar2").state_space.q_names == tuple(map(str, derived("planar2").q))
    assert numeric("fourbar").state_space.qd_names == tuple(map(str, derived("fourbar").qd))
    assert numeric("diffdrive").state_space.controlled_labels == derived("diffdrive").independent


def test_layouts_as_messages_say_them():
    assert numeric("planar2").state_space.layout == "q (2: joints 1, 2) then qd (2: their rates)"
    assert numeric("fourbar").state_space.layout == (
        "q (4: every joint 1, 2, 3, 4, closing the loops) then qd (1: the active joints 1)"
    )
    assert numeric("flexarm1").state_space.tau_layout.endswith("(motor torques on flexible joints)")


def test_integrate_fixed_and_flexible_joints_move_linearly():
    rng = np.random.default_rng(1)
    for name in ("planar2", "flexarm1"):
        s = numeric(name).state_space
        q, qd = rng.uniform(-1, 1, s.nq), rng.uniform(-1, 1, s.nv)
        np.testing.assert_allclose(s.integrate(q, qd, 0.3), q + 0.3 * qd, rtol=0, atol=1e-14)
        np.testing.assert_array_equal(s.qdot(q, qd), qd)


def test_integrate_free_flyer_screw_motion():
    """Body velocity v along x, w about z: the base runs on a circle of radius v / w."""
    s = numeric("satellite").state_space
    v, w, t = 0.8, 1.3, 0.9
    q0 = s.origin.copy()
    q0[7:] = [0.1, -0.2, 0.3]
    qd = np.array([v, 0, 0, 0, 0, w, 0.5, -1.0, 2.0])
    q = s.integrate(q0, qd, t)
    r = v / w
    np.testing.assert_allclose(q[:3], [r * np.sin(w * t), r * (1 - np.cos(w * t)), 0.0], atol=1e-12)
    np.testing.assert_allclose(q[3:7], [0, 0, np.sin(w * t / 2), np.cos(w * t / 2)], atol=1e-12)
    np.testing.assert_allclose(q[7:], q0[7:] + t * qd[6:], atol=1e-14)


def test_qdot_is_the_derivative_of_integrate():
    rng = np.random.default_rng(2)
    for name in ROBOTS:
        s = numeric(name).state_space
        q, qd = state(name, rng)
        h = 1e-5
        central = (s.integrate(q, qd, h) - s.integrate(q, qd, -h)) / (2 * h)
        np.testing.assert_allclose(central, s.qdot(q, qd), rtol=1e-7, atol=1e-8, err_msg=name)


def test_integrate_differential_drive_on_its_circle():
    """Constant wheel rates: heading rate R (wr - wl) / b, speed R (wr + wl) / 2 (the robot's file)."""
    fn = numeric("diffdrive")
    s = fn.state_space
    R, b = fn.values_by_name["R"], fn.values_by_name["b"]
    q0 = np.zeros(s.nq)
    q0[:3] = [0.3, -0.2, 0.4]
    wr, wl, t = 2.0, 1.0, 0.7
    q = s.integrate(q0, [wr, wl], t, steps=200)
    omega, speed = R * (wr - wl) / b, R * (wr + wl) / 2
    th = q0[2] + omega * t
    circle = [q0[0] + speed / omega * (np.sin(th) - np.sin(q0[2])), q0[1] - speed / omega * (np.cos(th) - np.cos(q0[2])), th]
    labels = list(s.coordinates)
    np.testing.assert_allclose(q[:3], circle, atol=1e-10)
    np.testing.assert_allclose(q[[labels.index("wr"), labels.index("wl")]], [wr * t, wl * t], atol=1e-10)
    # the rolling constraints hold along the way
    assert fn.constraint_residual(q, fn.velocities(q, [wr, wl])) < 1e-12


def test_integrate_four_bar_stays_on_its_loop():
    fn = numeric("fourbar")
    s = fn.state_space
    q0 = fn.configuration([0.7], guess=[-1.0, 1.0, -1.0])
    q = s.integrate(q0, [0.4], 0.5)
    assert fn.closure_residual(q) < 1e-10
    closed = fn.configuration([0.7 + 0.4 * 0.5], guess=q0[1:])  # the loop solver, from the active joint
    np.testing.assert_allclose(q, closed, atol=1e-7)


def test_actuation_is_how_tau_enters_the_direct_dynamics():
    """``dqdd/dtau_k = A^-1 B^T e_k``: the inputs drive the rates ``B`` says."""
    rng = np.random.default_rng(4)
    for name in ROBOTS:
        fn = numeric(name)
        s = fn.state_space
        q, qd = state(name, rng)
        tau = rng.uniform(-1, 1, s.ntau)
        A = np.asarray(fn.mass_matrix(q), dtype=float)
        base = np.asarray(fn.direct_dynamics(q, qd, tau), dtype=float)
        for k in range(s.ntau):
            e = np.zeros(s.ntau)
            e[k] = 1.0
            change = np.asarray(fn.direct_dynamics(q, qd, tau + e), dtype=float) - base
            np.testing.assert_allclose(change, np.linalg.solve(A, s.actuation.T @ e), rtol=1e-8, atol=1e-10, err_msg=name)
    assert numeric("satellite").state_space.free_rates == tuple(range(6))
    flex = numeric("flexarm1")
    assert flex.state_space.controlled == tuple(flex.motor_index)  # the motor, behind the spring


def test_friction_maps():
    rng = np.random.default_rng(5)
    fn = numeric("diffdrive")
    s = fn.state_space
    q, qd = state("diffdrive", rng)
    np.testing.assert_allclose(s.rate_map(q), fn.G(q), rtol=1e-14)
    np.testing.assert_allclose(s.joint_rates(q, qd), fn.G(q) @ qd, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(s.force_map(q), fn.G(q).T, rtol=1e-14)
    # rdot = R qdd + c: c is d(G(q(t)))/dt qd, by central differences along qdot
    h, qdot = 1e-6, s.qdot(q, qd)
    c = (fn.G(q + h * qdot) - fn.G(q - h * qdot)) @ qd / (2 * h)
    np.testing.assert_allclose(s.rate_bias(q, qd), c, rtol=1e-6, atol=1e-8)
    sat = numeric("satellite").state_space
    q, qd = sat.sample(rng)
    np.testing.assert_array_equal(sat.joint_rates(q, qd), qd[6:])
    np.testing.assert_array_equal(sat.force_map(q), np.eye(3))
    assert sat.direct_friction and numeric("planar2").state_space.direct_friction
    assert not s.direct_friction and not numeric("flexarm1").state_space.direct_friction


def test_floating_base_control_reduction_and_rest():
    fn = numeric("satellite")
    s = fn.state_space
    q, _qd = s.sample(np.random.default_rng(6))
    A = np.asarray(fn.mass_matrix(q), dtype=float)
    A11, A12, A22 = A[:6, :6], A[:6, 6:], A[6:, 6:]
    np.testing.assert_allclose(ControlView(fn).inertia(q), A22 - A12.T @ np.linalg.inv(A11) @ A12, rtol=1e-10, atol=1e-12)
    v = np.array([0.3, -0.4, 0.5])
    rest = s.free_rates_at_rest(q, v)
    np.testing.assert_array_equal(rest[6:], v)
    np.testing.assert_allclose((A @ rest)[:6], 0.0, atol=1e-12)  # the base's momentum
    np.testing.assert_array_equal(s.configuration(v), np.concatenate([[0, 0, 0, 0, 0, 0, 1.0], v]))


def test_prepare_and_monitors():
    sat = numeric("satellite").state_space
    q = sat.origin.copy()
    q[3:7] = [0, 0, 0, 2.0]
    np.testing.assert_array_equal(sat.prepare(q)[3:7], [0, 0, 0, 1.0])
    four = numeric("fourbar")
    q0 = four.configuration([0.7], guess=[-1.0, 1.0, -1.0])
    drifted = q0 + [0.0, 1e-6, 0.0, 0.0]
    assert four.closure_residual(four.state_space.prepare(drifted)) < 1e-10
    monitors = four.state_space.monitors(np.array([drifted]), np.array([q0]), np.zeros((1, 1)))
    assert monitors["closure_residual"][0] == pytest.approx(four.closure_residual(drifted), rel=1e-12)
    flex = numeric("flexarm1").state_space
    z = np.array([[0.3, 0.1]])
    np.testing.assert_allclose(flex.monitors(z, z, np.zeros((1, 2)))["deflection"], [[0.2]])


def test_clear_errors():
    planar = numeric("planar2").state_space
    with pytest.raises(KaneRobotError, match=r"x0 for planar2 must have 4 values: q \(2: joints 1, 2\) then qd \(2: their rates\); got shape \(3,\)"):
        planar.split([0, 0, 1])
    with pytest.raises(KaneRobotError, match="'9' is not a coordinate of planar2: q holds 1, 2"):
        planar.column("9")
    with pytest.raises(KaneRobotError, match=r"the base quaternion q\[3:7\] \(x y z w\) is zero"):
        numeric("satellite").state_space.split(np.zeros(19))
    with pytest.raises(KaneRobotError, match="its q does not close the loops"):
        numeric("fourbar").state_space.split([1.0, 0.5, 0.0, 0.0, 1.0])
    with pytest.raises(KaneRobotError, match="needs the numeric model"):
        derived("satellite").state_space.free_rates_at_rest(np.zeros(10), np.zeros(3))
    with pytest.raises(KaneRobotError, match="cannot simulate object"):
        plant(object())
    # names of a flexible joint's sides
    flex = numeric("flexarm1").state_space
    assert (flex.column("1"), flex.column("r1"), flex.column("qr1")) == (0, 1, 1)


def test_cli_layout_reads_the_state_space():
    kind, q, qd, default = state_layout(derived("fourbar"))
    assert (kind, q[-1], qd, default) == ("closed-loop", "th4 (a closed configuration)", ["QP1"], None)
    kind, q, qd, default = state_layout(derived("satellite"))
    assert kind == "floating-base" and q[:7] == ["x", "y", "z", "qx", "qy", "qz", "qw"] and default[:7] == [0, 0, 0, 0, 0, 0, 1.0]
    assert len(default) == 19 and qd[:6] == ["vx", "vy", "vz", "wx", "wy", "wz"]
    kind, q, qd, default = state_layout(derived("flexarm1"))
    assert kind == "flexible-joint" and q == list(derived("flexarm1").coordinates) and len(qd) == 2
