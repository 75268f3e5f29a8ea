"""Spherical and planar joints in the recursions: Newton-Euler's inverse dynamics and the composite-link A.

A tree with a revolute, a spherical (quaternion, three speeds) and a planar
joint (x, y, theta, three speeds), random physically consistent parameters;
the generated programs, evaluated by numpy, against pinocchio's ``rnea``
and ``crba`` on the same model (``JointModelSpherical``, ``JointModelPlanar``;
pinocchio's planar configuration holds cos and sin of theta).  The programs
of the one-speed joints are unchanged (benchmarks/program_snapshots.py).
"""

import numpy as np
import pytest

import kanerobot as kr
from kanerobot.dynamics import composite, newton_euler
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.robot import joints
from kanerobot.robot.description import GeneralPlacement
from kanerobot.symbolic.printing import matrix_entry_names

pin = pytest.importorskip("pinocchio", reason="pip install -e '.[bench]' (pinocchio) to compare spherical and planar joints with pinocchio")
from kanerobot.interop import to_pinocchio  # noqa: E402

ROTATION = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]


@pytest.fixture(scope="module")
def case():
    """(robot, values, pinocchio model) of a revolute-spherical-planar tree with a second branch."""
    frames = [
        kr.Frame("1", "0", 0, 1, GeneralPlacement(R0=ROTATION, P=[0, 0, "L0"], axis=[0, 1, 0], q="q1")),
        kr.Frame("2", "1", joints.Spherical(), 1, GeneralPlacement(R0=ROTATION, P=["L1", 0, 0], axis=[0, 0, 1])),
        kr.Frame("3", "2", joints.Planar(), 1, GeneralPlacement(R0=[[1, 0, 0], [0, 0, -1], [0, 1, 0]], P=["L2", 0, "L3"], axis=[0, 0, 1])),
        kr.Frame("4", "1", 1, 1, GeneralPlacement(R0=[[1, 0, 0], [0, 1, 0], [0, 0, 1]], P=[0, "L4", 0], axis=[1, 0, 0], q="q4")),
    ]
    robot = kr.Robot.create("ball_and_plane", frames)
    values = random_parameters(robot, np.random.default_rng(3))
    values.update({name: 0.0 for name in values if name[:2] in ("IA", "FV", "FS", "FX", "FY", "FZ", "CX", "CY", "CZ")})
    return robot, values, to_pinocchio(robot, values)


def states(robot, rng):
    """Random (q, qd, qdd): a unit quaternion for the ball joint."""
    quaternion = rng.normal(size=4)
    q = np.concatenate([[rng.uniform(-3, 3)], quaternion / np.linalg.norm(quaternion), rng.uniform(-1, 1, 3), [rng.uniform(-1, 1)]])
    assert len(q) == len(robot.q) and robot.dof == 8
    return q, rng.normal(size=8), rng.normal(size=8)


def pinocchio_q(q):
    return np.concatenate([q[:7], [np.cos(q[7]), np.sin(q[7])], q[8:]])


def evaluate(program, values, robot, q, qd=(), qdd=()):
    point = dict(values)
    for symbols, numbers in ((robot.q, q), (robot.qd, qd), (robot.qdd, qdd)):
        point.update({str(s): x for s, x in zip(symbols, numbers)})
    f = program.to_function()
    return np.asarray(f(*[point[str(a)] for a in f.args]), dtype=float)


def test_sizes_and_names(case):
    robot, _, _ = case
    assert [str(s) for s in robot.q] == ["q1", "QX2", "QY2", "QZ2", "QW2", "X3", "Y3", "TH3", "q4"]
    assert [str(s) for s in robot.qd] == ["QP1", "WX2", "WY2", "WZ2", "VX3", "VY3", "WZ3", "QP4"]
    assert list(newton_euler.inverse_dynamics(robot).outputs) == ["GAM1", "GAMCX2", "GAMCY2", "GAMCZ2", "GAMFX3", "GAMFY3", "GAMCZ3", "GAM4"]


def test_newton_euler_equals_rnea(case):
    robot, values, pmodel = case
    program = newton_euler.inverse_dynamics(robot)
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, qd, qdd = states(robot, rng)
        expected = pin.rnea(pmodel, pmodel.createData(), pinocchio_q(q), qd, qdd)
        np.testing.assert_allclose(evaluate(program, values, robot, q, qd, qdd), expected, rtol=0, atol=1e-12)


def test_composite_inertia_matrix_equals_crba(case):
    robot, values, pmodel = case
    program = composite.mass_matrix(robot)
    names = matrix_entry_names("A", (8, 8))
    where = {names[r][c]: (r, c) for r in range(8) for c in range(8)}
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, _, _ = states(robot, rng)
        A = np.zeros((8, 8))
        for name, value in zip(program.outputs, evaluate(program, values, robot, q)):
            r, c = where[name]
            A[r, c] = A[c, r] = value
        expected = pin.crba(pmodel, pmodel.createData(), pinocchio_q(q))
        np.testing.assert_allclose(A, np.triu(expected) + np.triu(expected, 1).T, rtol=0, atol=1e-12)
