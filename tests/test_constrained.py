"""A new velocity constraint is one class: ConstrainedModel composes it with any tree and engine.

The constraint written here, ``qd2 = cos(q1) qd1`` on the planar two-link
arm, uses only the defaults of VelocityConstraint (its symbolic solution,
its numeric functions, Jdot from J).  Independent path: pinocchio's rnea on
the arm at ``qd = G qd1``, ``qdd = G qdd1 + (0, -sin(q1) qd1^2)``, projected
by ``G = (1, cos(q1))`` (virtual work), and crba projected the same way.
"""

import numpy as np
import pytest
import sympy
from ball_robots import random_values

import kanerobot as kr
from kanerobot.dynamics.constrained import ConstrainedModel, VelocityConstraint, constrained
from kanerobot.interop import to_pinocchio


class Coupling(VelocityConstraint):
    """``qd2 - cos(q1) qd1 = 0``: joint 2 follows joint 1 (a mimic joint with a ratio that varies)."""

    kind = adjective = "coupled"

    def __init__(self, robot):
        self.robot = self.tree = robot
        self.independent = ("1",)
        self.J = sympy.Matrix([[-sympy.cos(robot.q[0]), 1]])


@pytest.fixture(scope="module")
def arm():
    robot = kr.load(kr.frames_path("planar2"))
    return robot, constrained(Coupling)(robot, "newton-euler"), random_values(robot, 0)


def _reference(robot, values, q1, qd1, qdd1):
    pin = pytest.importorskip("pinocchio", reason="pip install -e '.[bench]' (pinocchio): the reference is pinocchio's rnea and crba, projected")
    model = to_pinocchio(robot, values)
    data = model.createData()
    q = np.array([q1, 0.4])
    G = np.array([1.0, np.cos(q1)])
    qd, qdd = G * qd1, G * qdd1 + np.array([0.0, -np.sin(q1) * qd1**2])
    return G @ pin.rnea(model, data, q, qd, qdd), G @ pin.crba(model, data, q) @ G


def test_a_new_constraint_is_one_class(arm):
    robot, model, values = arm
    assert isinstance(model, ConstrainedModel) and model.dof == 1 and model.constraint.dependent == ("2",)
    q1, qd1, qdd1 = 0.7, -1.3, 0.9
    tau, A = _reference(robot, values, q1, qd1, qdd1)
    point = dict(values) | dict(zip(map(str, robot.q), [q1, 0.4])) | {"QP1": qd1, "QDP1": qdd1}
    for name, expected in (("inverse_dynamics", tau), ("mass_matrix", A)):
        f = model.program(name).to_function()
        got = float(np.ravel(f(*[point[str(a)] for a in f.args]))[0])
        assert np.isclose(got, expected, rtol=0, atol=1e-10 * (1 + abs(expected)))
    fn = model.numeric(values, backend="numpy")
    q = [q1, 0.4]
    assert np.allclose(fn.inverse_dynamics(q, [qd1], [qdd1]), tau, rtol=0, atol=1e-10 * (1 + abs(tau)))
    assert np.allclose(fn.mass_matrix(q), A, rtol=0, atol=1e-12 * (1 + abs(A)))
    assert np.allclose(fn.direct_dynamics(q, [qd1], [tau]), qdd1, rtol=0, atol=1e-9)
    assert fn.state_space.kind == "coupled"


def test_a_constraint_without_a_symbolic_solution_says_so(arm):
    robot, _, _ = arm

    class Overdetermined(Coupling):
        def __init__(self, robot):
            super().__init__(robot)
            self.J = sympy.Matrix([[-sympy.cos(robot.q[0]), 1], [-2 * sympy.cos(robot.q[0]), 2]])

    with pytest.raises(kr.KaneRobotError, match="dependent block of the coupled constraint is 2 x 1, not square"):
        ConstrainedModel(robot, "newton-euler", Overdetermined(robot)).program("mass_matrix")
    with pytest.raises(kr.KaneRobotError, match="no coupled program for 'coriolis_matrix'"):
        ConstrainedModel(robot, "newton-euler", Coupling(robot)).program("coriolis_matrix")
