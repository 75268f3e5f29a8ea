"""Spherical and planar joints in the recursions: Newton-Euler's inverse dynamics and the composite-link A.

The tree of tests/ball_robots.py (a revolute, a spherical joint with a
quaternion and three speeds, a planar joint with x, y, theta and three
speeds, a second revolute branch), on a fixed and a free-flying base, with
random physically consistent parameters; the generated programs, evaluated
by numpy, against pinocchio's ``rnea`` and ``crba`` on the same model
(``JointModelSpherical``, ``JointModelPlanar``, ``JointModelFreeFlyer``).
The programs of the one-speed joints are unchanged
(benchmarks/program_snapshots.py).
"""

import numpy as np
import pytest
from ball_robots import ball_tree, evaluate, pinocchio_q, random_state, random_values, symmetric_matrix

from kanerobot.dynamics import composite, newton_euler

pin = pytest.importorskip("pinocchio", reason="pip install -e '.[bench]' (pinocchio) to compare spherical and planar joints with pinocchio")
from kanerobot.interop import to_pinocchio  # noqa: E402


@pytest.fixture(scope="module", params=[False, True], ids=["fixed", "floating"])
def case(request):
    """(robot, values, pinocchio model) of the ball-and-plane tree."""
    robot = ball_tree(floating=request.param)
    values = random_values(robot, 3)
    return robot, values, to_pinocchio(robot, values)


def test_sizes_and_names():
    robot = ball_tree()
    assert [str(s) for s in robot.q] == ["q1", "QX2", "QY2", "QZ2", "QW2", "X3", "Y3", "TH3", "q4"]
    assert [str(s) for s in robot.qd] == ["QP1", "WX2", "WY2", "WZ2", "VX3", "VY3", "WZ3", "QP4"]
    assert list(newton_euler.inverse_dynamics(robot).outputs) == ["GAM1", "GAMCX2", "GAMCY2", "GAMCZ2", "GAMFX3", "GAMFY3", "GAMCZ3", "GAM4"]


def test_newton_euler_equals_rnea(case):
    robot, values, pmodel = case
    program = newton_euler.inverse_dynamics(robot)
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, qd, qdd = random_state(robot, rng)
        expected = pin.rnea(pmodel, pmodel.createData(), pinocchio_q(robot, q), qd, qdd)
        np.testing.assert_allclose(evaluate(program, values, robot, q, qd, qdd), expected, rtol=0, atol=1e-12)


def test_composite_inertia_matrix_equals_crba(case):
    robot, values, pmodel = case
    program = composite.mass_matrix(robot)
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, _, _ = random_state(robot, rng)
        A = symmetric_matrix(program, evaluate(program, values, robot, q), robot.dof)
        expected = pin.crba(pmodel, pmodel.createData(), pinocchio_q(robot, q))
        np.testing.assert_allclose(A, np.triu(expected) + np.triu(expected, 1).T, rtol=0, atol=1e-12)
