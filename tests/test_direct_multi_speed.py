"""Spherical and planar joints in the articulated bodies: the direct dynamic model and the free-floating inverse model.

The tree of tests/ball_robots.py (a revolute, a spherical joint with three
speeds, a planar joint with three speeds, a prismatic branch) on a fixed
and a free-flying base, with random physically consistent parameters.  The
direct program, evaluated by numpy, against two independent paths:
pinocchio's ``aba`` and its forward dynamics ``A^-1 (tau - nle)`` through
``crba`` and ``nle``; and our own Newton-Euler program, whose inertia
matrix (columns ``GAM(q, qd, e_k) - GAM(q, qd, 0)``) and bias
``GAM(q, qd, 0)`` give ``A^-1 (Gamma - H)``, there with rotor inertia,
friction and external wrenches (which pinocchio has no counterpart for).
The free flyer is not actuated: its six generalized forces are zero.
"""

import numpy as np
import pytest
from ball_robots import ball_tree, evaluate, pinocchio_q, random_state, random_values, state_symbols

from kanerobot.dynamics import newton_euler
from kanerobot.dynamics.direct import base_acceleration, direct_dynamics, joint_torques
from kanerobot.dynamics.parameters import random_parameters

pin = pytest.importorskip("pinocchio", reason="pip install -e '.[bench]' (pinocchio) to compare spherical and planar joints with pinocchio")
from kanerobot.interop import to_pinocchio  # noqa: E402


@pytest.fixture(scope="module", params=[False, True], ids=["fixed", "floating"])
def case(request):
    """(robot, values pinocchio shares, pinocchio model, direct program) of the ball-and-plane tree."""
    robot = ball_tree(floating=request.param)
    values = random_values(robot, 7)
    return robot, values, to_pinocchio(robot, values), direct_dynamics(robot)


def torque_names(robot):
    """The direct program's torque inputs, in the order of the joints' speeds."""
    return [str(s) for label in robot.joint_labels for s in joint_torques(robot, label)]


def accelerations(robot, program, values, q, qd, tau):
    """The direct program's outputs (root joint's accelerations, then the joints') at one state and torque."""
    return evaluate(program, values, robot, q, qd, extra=dict(zip(torque_names(robot), tau)))


def generalized_forces(robot, tau):
    """``tau`` with the free flyer's six zeros first (it is not actuated)."""
    return np.concatenate([np.zeros(robot.dof - len(tau)), tau])


def test_outputs_and_torque_inputs():
    robot = ball_tree(floating=True)
    program = direct_dynamics(robot)
    assert list(program.outputs) == state_symbols(robot)[2]  # DVX0 .. DWZ0, QDP1, DWX2 .. DWZ3, QDP4
    assert torque_names(robot) == ["GAM1", "GAMCX2", "GAMCY2", "GAMCZ2", "GAMFX3", "GAMFY3", "GAMCZ3", "GAM4"]
    assert set(torque_names(robot)) <= {s.name for s in program.inputs}


def test_direct_dynamics_equals_aba(case):
    robot, values, pmodel, program = case
    rng = np.random.default_rng(11)
    for _ in range(3):
        q, qd, _ = random_state(robot, rng)
        tau = rng.normal(size=len(torque_names(robot)))
        expected = pin.aba(pmodel, pmodel.createData(), pinocchio_q(robot, q), qd, generalized_forces(robot, tau))
        np.testing.assert_allclose(accelerations(robot, program, values, q, qd, tau), expected, rtol=0, atol=1e-12)


def test_direct_dynamics_equals_pinocchio_forward_dynamics(case):
    """``A^-1 (tau - nle)`` with pinocchio's ``crba`` (upper triangle) and ``nle``."""
    robot, values, pmodel, program = case
    rng = np.random.default_rng(12)
    for _ in range(3):
        q, qd, _ = random_state(robot, rng)
        tau = rng.normal(size=len(torque_names(robot)))
        data, pq = pmodel.createData(), pinocchio_q(robot, q)
        A = pin.crba(pmodel, data, pq)
        A = np.triu(A) + np.triu(A, 1).T
        expected = np.linalg.solve(A, generalized_forces(robot, tau) - pin.nle(pmodel, data, pq, qd))
        np.testing.assert_allclose(accelerations(robot, program, values, q, qd, tau), expected, rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def full_values(case):
    """Every parameter random, rotor inertia, friction and external wrenches included."""
    robot = case[0]
    return random_parameters(robot, np.random.default_rng(13))


def test_direct_dynamics_solves_our_newton_euler(case, full_values):
    """``qdd = A^-1 (Gamma - H)`` from the Newton-Euler program alone, with rotor inertia, friction and wrenches."""
    robot, _, _, program = case
    inverse = newton_euler.inverse_dynamics(robot)
    rng = np.random.default_rng(14)
    q, qd, _ = random_state(robot, rng)
    tau = rng.normal(size=len(torque_names(robot)))
    H = evaluate(inverse, full_values, robot, q, qd, np.zeros(robot.dof))
    A = np.column_stack([evaluate(inverse, full_values, robot, q, qd, e) - H for e in np.eye(robot.dof)])
    expected = np.linalg.solve(A, generalized_forces(robot, tau) - H)
    np.testing.assert_allclose(accelerations(robot, program, full_values, q, qd, tau), expected, rtol=0, atol=1e-10)


def test_base_acceleration_leaves_the_base_free():
    """The free-floating inverse model: at its base acceleration the Newton-Euler base wrench is zero
    and the joint torques are its outputs (rotor inertia, friction and wrenches included)."""
    robot = ball_tree(floating=True)
    values = random_parameters(robot, np.random.default_rng(15))
    program, inverse = base_acceleration(robot), newton_euler.inverse_dynamics(robot)
    rng = np.random.default_rng(16)
    q, qd, qdd = random_state(robot, rng)
    out = evaluate(program, values, robot, q, qd, qdd)
    forces = evaluate(inverse, values, robot, q, qd, np.concatenate([out[:6], qdd[6:]]))
    np.testing.assert_allclose(forces, generalized_forces(robot, out[6:]), rtol=0, atol=1e-10)
