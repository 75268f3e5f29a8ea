"""Fourier excitation trajectories and the optimisation of the condition number."""

import warnings

import numpy as np
import pytest
import sympy
from conftest import library
from reference_dynamics import unit_regressor

import kanerobot as kr
from kanerobot import progress
from kanerobot.control import computed_torque
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError
from kanerobot.identification.base_parameters import BaseParameterSet
from kanerobot.identification.excitation import FourierTrajectory, PoorExcitationWarning, _problem, fourier_excitation
from kanerobot.identification.numeric_regressor import Regressors


@pytest.fixture(scope="module")
def planar():
    robot = library("planar2")
    values = random_parameters(robot, np.random.default_rng(0), wrench=False)
    return robot, values, Regressors(robot, values)


def test_fourier_series_derivatives_and_period():
    rng = np.random.default_rng(0)
    tr = FourierTrajectory([0.1, -0.2, 0.3], rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), 0.4)
    t = np.linspace(0.0, 5.0, 41)
    q, qd, qdd = tr.sample(t)
    e = 1e-5
    np.testing.assert_allclose(qd, (tr.position(t + e) - tr.position(t - e)) / (2 * e), atol=1e-8)
    np.testing.assert_allclose(qdd, (tr.velocity(t + e) - tr.velocity(t - e)) / (2 * e), atol=1e-7)
    np.testing.assert_allclose(tr.position(t + tr.period), q, atol=1e-12)  # periodic
    # zero-mean rates: the offset is the mean position over a period
    grid = np.arange(400) * tr.period / 400
    np.testing.assert_allclose(tr.position(grid).mean(axis=0), [0.1, -0.2, 0.3], atol=1e-12)
    # one state at a time too, as kanerobot.control wants
    q1, _qd1, _qdd1 = tr(t[3])
    np.testing.assert_allclose(q1, q[3])
    assert FourierTrajectory(**tr.coefficients()).position(1.3) == pytest.approx(tr.position(1.3))


def test_fourier_trajectory_is_tracked_by_computed_torque(planar):
    robot, values, _regs = planar
    fn = kr.derive(robot).numeric({k: values[k] for k in kr.derive(robot).parameters})
    tr = FourierTrajectory([0.0, 0.5], [[0.5, 0.2], [-0.3, 0.4]], [[0.1, 0.0], [0.2, -0.1]], 0.5)
    q0, qd0, _ = tr(0.0)
    t = np.linspace(0.0, 2.0, 21)
    # friction="model": the plant's Coulomb law is the controller model's own FS sign(qd)
    run = kr.simulate(fn, None, np.concatenate([q0, qd0]), (0.0, 2.0), controller=computed_torque(fn, tr), t_eval=t, friction="model")
    np.testing.assert_allclose(run.q, tr.position(t), atol=1e-6)


def test_excitation_lowers_the_condition_number_within_the_limits(planar):
    robot, values, regs = planar
    limits = [(-1.0, 1.5), (-2.0, 0.5)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # well conditioned: no PoorExcitationWarning
        out = fourier_excitation(regs, harmonics=3, frequency=0.25, q_limits=limits, qd_max=1.5, qdd_max=4.0, maxiter=60)
    assert out.success
    assert out.condition_number < 0.7 * out.initial_condition_number
    # the reported number, again with the unit-parameter regressor on the base columns of the same samples
    assert out.base is regs.base_parameter_set()
    columns = [regs.parameters.index(out.base.parameters[c]) for c in out.base.columns]
    q, qd, qdd = out.trajectory.sample(out.times)
    W = unit_regressor(robot, values, regs.parameters)(q, qd, qdd)[:, :, columns].reshape(-1, len(columns))
    assert out.condition_number == pytest.approx(np.linalg.cond(W), rel=1e-8)
    s = np.linalg.svd(W, compute_uv=False)
    np.testing.assert_allclose(out.singular_values, s, rtol=1e-8)
    # the least excited direction is the right singular vector of the smallest singular value
    v = np.linalg.svd(W)[2][-1]
    named = dict(out.weakest)
    k = max(named, key=lambda name: abs(named[name]))
    assert abs(named[k]) == pytest.approx(np.abs(v).max(), rel=1e-6)
    assert out.diagnosis.startswith(f"condition number {out.condition_number:.3g}") and out.iterations >= 1
    # limits hold at the samples, and nearly so between them
    lower, upper = np.array(limits).T
    assert np.all(q >= lower - 1e-8) and np.all(q <= upper + 1e-8)
    assert np.abs(qd).max() <= 1.5 + 1e-8 and np.abs(qdd).max() <= 4.0 + 1e-8
    fine = out.trajectory.sample(np.linspace(0.0, out.trajectory.period, 5000))
    assert np.all(fine[0] >= lower - 0.05) and np.all(fine[0] <= upper + 0.05)
    assert np.abs(fine[1]).max() <= 1.5 * 1.05


def test_excitation_arguments_are_checked(planar):
    _robot, _values, regs = planar
    with pytest.raises(KaneRobotError, match="q_limits must be"):
        fourier_excitation(regs, q_limits=[(1.0, -1.0)] * 2, maxiter=1)
    with pytest.raises(KaneRobotError, match="harmonics must be at least 1"):
        fourier_excitation(regs, harmonics=0)
    with pytest.raises(KaneRobotError, match=r"shape \(2, L\)"):
        FourierTrajectory([0.0, 0.0], np.zeros((3, 2)), np.zeros((3, 2)), 1.0)
    with pytest.raises(KaneRobotError, match="positive"):
        FourierTrajectory([0.0], [[1.0]], [[0.0]], 0.0)


def test_the_gradient_is_the_finite_differences_of_the_condition_number(planar):
    """The analytic gradient of log cond(W_b) against central differences of the value."""
    _robot, _values, regs = planar
    problem, _ = _problem(regs, regs.base_parameter_set(), 3, 0.25, None, (-np.pi, np.pi), 2.0, 10.0, None)
    x = 0.4 * np.random.default_rng(3).normal(size=2 * 2 * 3)
    h = 1e-6
    numeric = np.array([(problem.value(x + h * e) - problem.value(x - h * e)) / (2 * h) for e in np.eye(len(x))])
    np.testing.assert_allclose(problem.gradient(x), numeric, rtol=1e-5, atol=1e-6 * np.abs(numeric).max())


def test_progress_is_reported_at_each_iteration(planar, monkeypatch, capsys):
    _robot, _values, regs = planar
    seen = []
    out = fourier_excitation(regs, harmonics=2, maxiter=8, progress=lambda k, c: seen.append((k, c)))
    assert [k for k, _ in seen] == list(range(1, out.iterations + 1))
    assert all(c >= 1.0 for _, c in seen)
    # the lines on standard error (shown at once, every iteration)
    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    out = fourier_excitation(regs, harmonics=2, maxiter=8, progress=True)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == out.iterations + 1
    assert err[0].startswith("kanerobot: fourier_excitation planar2: iteration 1/8, condition number ")
    assert err[-1].startswith(f"kanerobot: fourier_excitation planar2: done, condition number {out.condition_number:.4g}")


def test_a_direction_no_motion_excites_is_diagnosed_with_a_warning(planar):
    """ZZ1 and IA1 have the same column (both multiply qdd1 on joint 1): a 'base' that keeps
    them apart has the null direction (ZZ1 - IA1) / sqrt(2), whatever the motion."""
    _robot, _values, regs = planar
    base = regs.base_parameter_set()
    ia1 = regs.parameters.index("IA1")
    names = ["ZZ1", "IA1"] + base.names[1:]
    expressions = {**{n: base.expressions[n] for n in base.names[1:]}, "ZZ1": sympy.Symbol("ZZ1"), "IA1": sympy.Symbol("IA1")}
    apart = BaseParameterSet(base.robot, base.method, base.model, names, expressions, [base.columns[0], ia1] + base.columns[1:])
    with pytest.warns(PoorExcitationWarning, match="numerically unidentifiable direction"):
        out = fourier_excitation(regs, harmonics=2, maxiter=5, base=apart)
    assert out.condition_number > 1e12
    assert [name for name, _ in out.weakest] in (["ZZ1", "IA1"], ["IA1", "ZZ1"])
    assert sorted(c for _, c in out.weakest) == pytest.approx([-np.sqrt(0.5), np.sqrt(0.5)], rel=1e-6)


def test_the_bounds_the_optimum_presses_on_are_named(planar):
    """A tight rate bound on joint 1 starves its parameters: the optimum runs joint 1 at that bound."""
    robot, _values, regs = planar
    bounds = np.array([0.05, 2.0])
    out = fourier_excitation(regs, harmonics=2, qd_max=bounds, q_limits=None, qdd_max=None, maxiter=30)
    _q, qd, _qdd = out.trajectory.sample(out.times)
    at_bound = [label for label, rate, bound in zip(robot.joint_labels, np.abs(qd).max(axis=0), bounds) if rate >= bound * (1 - 2e-3)]
    assert out.binding == {"q": [], "qd": at_bound, "qdd": []} and at_bound == ["1"]
    assert "the optimum presses on qd_max of joints 1:" in out.diagnosis


#: Two joints whose URDF stops are narrower than the default (-pi, pi), one continuous joint without.
STOPPED = """<robot name="stopped"><link name="base"/>
  <link name="a"><inertial><origin xyz="0.2 0 0"/><mass value="1.2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial></link>
  <link name="b"><inertial><origin xyz="0.25 0.02 0"/><mass value="0.8"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.015" iyz="0" izz="0.02"/></inertial></link>
  <link name="c"><inertial><origin xyz="0.1 0 0"/><mass value="0.3"/>
    <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.003" iyz="0" izz="0.004"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="a"/>
    <axis xyz="0 0 1"/><limit lower="-0.6" upper="0.5" effort="1" velocity="1"/></joint>
  <joint name="elbow" type="revolute"><parent link="a"/><child link="b"/>
    <origin xyz="0.4 0 0"/><axis xyz="0 0 1"/><limit lower="-0.3" upper="0.8" effort="1" velocity="1"/></joint>
  <joint name="wrist" type="continuous"><parent link="b"/><child link="c"/>
    <origin xyz="0.5 0 0"/><axis xyz="0 0 1"/></joint>
</robot>"""


def test_the_default_limits_are_the_robots_own(tmp_path):
    """Issue 25: the excitation stays within the URDF's stops (simulate stops a run at them), (-pi, pi) where there are none."""
    path = tmp_path / "stopped.urdf"
    path.write_text(STOPPED)
    robot = kr.load(path)
    out = fourier_excitation(robot, harmonics=2, frequency=0.25, maxiter=15, backend="numpy")
    lower, upper = np.array([[-0.6, 0.5], [-0.3, 0.8], [-np.pi, np.pi]]).T  # the file's numbers
    q = out.trajectory.sample(out.times)[0]
    assert np.all(q >= lower - 1e-8) and np.all(q <= upper + 1e-8)
    np.testing.assert_allclose(out.trajectory.q0, (lower + upper) / 2, atol=1e-12)  # offsets: the middle of the limits
