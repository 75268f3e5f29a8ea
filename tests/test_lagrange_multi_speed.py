"""Spherical and planar joints in the Lagrange engine, on a fixed and a free-flying base.

The tree of tests/ball_robots.py (a revolute, a ball joint with a quaternion
and three angular speeds, a planar joint with x, y, theta and three speeds,
a second revolute branch), random physically consistent parameters; the
Lagrange programs (Boltzmann-Hamel rows for the quasi-velocities),
evaluated by numpy, against pinocchio's ``rnea``, ``crba``,
``nonLinearEffects``, ``computeGeneralizedGravity``, ``computeCoriolisMatrix`` and energies, and against
Newton-Euler's program with every parameter (rotor inertia, friction,
wrenches) random.  The programs of the one-speed robots are unchanged
(benchmarks/program_snapshots.py).
"""

import numpy as np
import pytest
import sympy
from ball_robots import ball_tree, evaluate, pinocchio_q, random_state, random_values, symmetric_matrix

from kanerobot.dynamics import composite, lagrange, newton_euler
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.robot import joints

pin = pytest.importorskip("pinocchio", reason="pip install -e '.[bench]' (pinocchio) to compare spherical and planar joints with pinocchio")
from kanerobot.interop import to_pinocchio  # noqa: E402

MODELS = ("inverse_dynamics", "mass_matrix", "h", "gravity")


@pytest.fixture(scope="module", params=[False, True], ids=["fixed", "floating"])
def case(request):
    """(robot, values, pinocchio model, {model: Lagrange program}) of the ball-and-plane tree."""
    robot = ball_tree(floating=request.param)
    values = random_values(robot, 7)
    return robot, values, to_pinocchio(robot, values), {name: getattr(lagrange, name)(robot) for name in MODELS}


def _states(robot, seed, n=3):
    rng = np.random.default_rng(seed)
    return [random_state(robot, rng) for _ in range(n)]


def test_one_output_per_speed_as_newton_euler(case):
    robot, _, _, programs = case
    names = list(newton_euler.inverse_dynamics(robot).outputs)
    assert list(programs["inverse_dynamics"].outputs) == names
    assert list(programs["h"].outputs) == names
    assert list(programs["gravity"].outputs) == ["Q" + name[3:] for name in names]
    assert len(programs["mass_matrix"].outputs) == robot.dof * (robot.dof + 1) // 2


def test_inverse_dynamics_equals_rnea(case):
    robot, values, pmodel, programs = case
    for q, qd, qdd in _states(robot, 1):
        expected = pin.rnea(pmodel, pmodel.createData(), pinocchio_q(robot, q), qd, qdd)
        np.testing.assert_allclose(evaluate(programs["inverse_dynamics"], values, robot, q, qd, qdd), expected, rtol=0, atol=1e-12)


def test_mass_matrix_equals_crba(case):
    robot, values, pmodel, programs = case
    for q, _, _ in _states(robot, 2):
        A = symmetric_matrix(programs["mass_matrix"], evaluate(programs["mass_matrix"], values, robot, q), robot.dof)
        expected = pin.crba(pmodel, pmodel.createData(), pinocchio_q(robot, q))
        np.testing.assert_allclose(A, np.triu(expected) + np.triu(expected, 1).T, rtol=0, atol=1e-12)


def test_h_equals_nonlinear_effects(case):
    robot, values, pmodel, programs = case
    for q, qd, _ in _states(robot, 3):
        expected = pin.nonLinearEffects(pmodel, pmodel.createData(), pinocchio_q(robot, q), qd)
        np.testing.assert_allclose(evaluate(programs["h"], values, robot, q, qd), expected, rtol=0, atol=1e-12)


def test_gravity_equals_generalized_gravity(case):
    robot, values, pmodel, programs = case
    for q, _, _ in _states(robot, 4):
        expected = pin.computeGeneralizedGravity(pmodel, pmodel.createData(), pinocchio_q(robot, q))
        np.testing.assert_allclose(evaluate(programs["gravity"], values, robot, q), expected, rtol=0, atol=1e-12)


def test_equals_newton_euler_with_rotor_friction_and_wrenches(case):
    """Every parameter random (IA, FV, FS per speed of a joint and the links' wrenches included): the two engines agree."""
    robot, _, _, programs = case
    values = random_parameters(robot, np.random.default_rng(8))
    assert any(values[name] != 0 for name in ("IA2", "FV3", "FS2", "FX3", "CZ2"))
    ne = newton_euler.inverse_dynamics(robot)
    for q, qd, qdd in _states(robot, 5, n=2):
        expected = evaluate(ne, values, robot, q, qd, qdd)
        np.testing.assert_allclose(evaluate(programs["inverse_dynamics"], values, robot, q, qd, qdd), expected, rtol=0, atol=1e-11)


def test_energy_equals_pinocchio_and_the_composite_inertia():
    """T and U on the fixed base equal pinocchio's; with rotor inertias, T = 1/2 nu^T A nu of composite.mass_matrix (IA on each speed)."""
    robot = ball_tree()
    values = random_values(robot, 9)
    pmodel = to_pinocchio(robot, values)
    program = lagrange.energy(robot)
    rotors = dict(values, **{f"IA{label}": 0.5 + k for k, label in enumerate(robot.joint_labels)})
    A = composite.mass_matrix(robot)
    for q, qd, _ in _states(robot, 6, n=2):
        data, pq = pmodel.createData(), pinocchio_q(robot, q)
        expected = [pin.computeKineticEnergy(pmodel, data, pq, qd), pin.computePotentialEnergy(pmodel, data, pq)]
        np.testing.assert_allclose(evaluate(program, values, robot, q, qd), expected, rtol=0, atol=1e-12)
        inertia = symmetric_matrix(A, evaluate(A, rotors, robot, q), robot.dof)
        np.testing.assert_allclose(evaluate(program, rotors, robot, q, qd)[0], qd @ inertia @ qd / 2, rtol=0, atol=1e-12)


def test_coriolis_matrix_equals_pinocchio(case):
    """Christoffel form of Lagrange's A along each joint's tangent directions, Hamel terms for the quasi-velocities."""
    robot, values, pmodel, programs = case
    program = lagrange.coriolis_matrix(robot, programs["mass_matrix"])
    n = robot.dof
    for q, qd, _ in _states(robot, 8, n=2):
        C = evaluate(program, values, robot, q, qd).reshape(n, n)
        expected = pin.computeCoriolisMatrix(pmodel, pmodel.createData(), pinocchio_q(robot, q), qd)
        np.testing.assert_allclose(C, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("model", [joints.Revolute(), joints.Prismatic(), joints.Spherical(), joints.Planar(), joints.FreeFlyer()], ids=repr)
def test_configuration_rate_is_the_configuration_derivative(model):
    """The symbolic rate the engine seeds its passes with equals the joint model's numeric configuration_derivative."""
    rng = np.random.default_rng(10)
    q, v = sympy.symbols(f"q:{model.nq}"), sympy.symbols(f"v:{model.nv}")
    rate = sympy.lambdify([q, v], model.configuration_rate(q, v))
    for _ in range(3):
        qn, vn = model.random_configuration(rng), rng.normal(size=model.nv)
        np.testing.assert_allclose(rate(qn, vn), model.configuration_derivative(qn, vn), rtol=0, atol=1e-14)
