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


# ------------------------------------------------------------------ on a floating tree
class Lift(VelocityConstraint):
    """``qd1 - e_z . wR_0 v = 0`` on the floating satellite: joint 1 turns at the base's vertical speed in the world.

    J has one column per speed of the floating tree (``VX0 .. WZ0`` first) and reads the base quaternion,
    so its derivative along the motion takes the free flyer's quaternion rate: the way a rolling contact
    on a floating tree is written.
    """

    kind = adjective = "lifted"

    def __init__(self, robot):
        from kanerobot.dynamics.free_flyer import QUATERNION
        from kanerobot.robot.joints.quaternion import rotation_matrix

        self.robot = self.tree = robot
        self.independent = ("0", "2", "3")
        vertical = rotation_matrix(QUATERNION)[2, :]
        self.J = sympy.Matrix([[*(-vertical), 0, 0, 0, 1, 0, 0]])


@pytest.fixture(scope="module")
def lifted():
    robot = kr.load(kr.frames_path("satellite"))
    return robot, constrained(Lift)(robot, "newton-euler"), random_values(robot, 3)


def test_a_constraint_on_a_floating_tree_is_one_class_too(lifted):
    """Independent path: pinocchio's floating tree (rnea, crba) at ``qd = G qd_a`` and ``qdd = G qdd_a + g``,
    projected by G, with G and g written here: ``qd1 = e_z . R v``, ``qdd1 = e_z . R (vdot + w x v)``
    (R from the quaternion by Rodrigues' formula, tests/reference_dynamics.py)."""
    pin = pytest.importorskip("pinocchio", reason="pip install -e '.[bench]' (pinocchio): the reference is pinocchio's rnea and crba, projected")
    from reference_dynamics import quaternion_matrix

    robot, model, values = lifted
    assert model.dof == 8 and model.constraint.dependent == ("1",) and model.floating
    fn = model.numeric(values, backend="numpy")
    pmodel = to_pinocchio(robot, values)
    data = pmodel.createData()
    rng = np.random.default_rng(5)
    for _ in range(3):
        quat = rng.normal(size=4)
        q = np.concatenate([rng.uniform(-1, 1, 3), quat / np.linalg.norm(quat), rng.uniform(-1, 1, 3)])
        qd_a, qdd_a = rng.normal(size=8), rng.normal(size=8)
        R = quaternion_matrix(q[3:7])
        G = np.zeros((9, 8))
        G[:6, :6], G[7:, 6:] = np.eye(6), np.eye(2)
        G[6, :3] = R[2]
        v, w = qd_a[:3], qd_a[3:6]
        bias = np.zeros(9)
        bias[6] = R[2] @ np.cross(w, v)
        tau = G.T @ pin.rnea(pmodel, data, q, G @ qd_a, G @ qdd_a + bias)
        A = pin.crba(pmodel, data, q)
        A = G.T @ (np.triu(A) + np.triu(A, 1).T) @ G
        np.testing.assert_allclose(fn.velocities(q, qd_a), G @ qd_a, rtol=0, atol=1e-12)
        np.testing.assert_allclose(fn.mass_matrix(q), A, rtol=0, atol=1e-9 * max(1.0, np.abs(A).max()))
        np.testing.assert_allclose(fn.inverse_dynamics(q, qd_a, qdd_a), tau, rtol=0, atol=1e-9 * max(1.0, np.abs(tau).max()))
        point = dict(values) | dict(zip(["X0", "Y0", "Z0", "QX0", "QY0", "QZ0", "QW0", "th1", "th2", "th3"], q))
        point |= dict(zip(map(str, model.qd), qd_a)) | dict(zip(map(str, model.qdd), qdd_a))
        f = model.program("inverse_dynamics").to_function()
        np.testing.assert_allclose(np.ravel(f(*[point[str(a)] for a in f.args])), tau, rtol=0, atol=1e-9 * max(1.0, np.abs(tau).max()))
        torques = (A @ qdd_a + fn.h(q, qd_a))[6:]  # the base unactuated: tau_a holds joints 2 and 3
        free = fn.direct_dynamics(q, qd_a, torques)
        np.testing.assert_allclose(A @ free + fn.h(q, qd_a), np.concatenate([np.zeros(6), torques]), rtol=0, atol=1e-8 * max(1.0, np.abs(torques).max()))


@pytest.mark.parametrize("method", ["lagrange", "kane"])
def test_every_engine_composes_with_a_constraint_on_a_floating_tree(lifted, method):
    robot, model, values = lifted
    fn, other = model.numeric(values, backend="numpy"), constrained(Lift)(robot, method).numeric(values, backend="numpy")
    rng = np.random.default_rng(6)
    quat = rng.normal(size=4)
    q = np.concatenate([rng.uniform(-1, 1, 3), quat / np.linalg.norm(quat), rng.uniform(-1, 1, 3)])
    qd_a, qdd_a = rng.normal(size=8), rng.normal(size=8)
    tau = fn.inverse_dynamics(q, qd_a, qdd_a)
    np.testing.assert_allclose(other.inverse_dynamics(q, qd_a, qdd_a), tau, rtol=0, atol=1e-9 * max(1.0, np.abs(tau).max()))
    np.testing.assert_allclose(other.mass_matrix(q), fn.mass_matrix(q), rtol=0, atol=1e-9)


class Towed(VelocityConstraint):
    """``v = (qd1 + qd2) e_x``, ``w = qd3 e_z`` (in frame 0): the floating satellite's base dependent, its joints independent."""

    kind = adjective = "towed"

    def __init__(self, robot):
        self.robot = self.tree = robot
        self.independent = ("1", "2", "3")
        self.J = sympy.Matrix.hstack(sympy.eye(6), -sympy.Matrix([[1, 1, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 1]]))


def test_a_floating_base_can_be_the_dependent_speeds():
    """The base's six speeds follow the joints': the model is pinocchio's floating tree projected by G (by hand),
    the base pose still in q; the program (base speeds and accelerations assigned, not inputs) gives the same."""
    pin = pytest.importorskip("pinocchio", reason="pip install -e '.[bench]' (pinocchio): the reference is pinocchio's rnea and crba, projected")
    robot = kr.load(kr.frames_path("satellite"))
    values = random_values(robot, 4)
    model = constrained(Towed)(robot, "newton-euler")
    assert model.dof == 3 and model.constraint.dependent == ("0",) and list(map(str, model.tau)) == ["GAM1", "GAM2", "GAM3"]
    inputs = {str(x) for x in model.program("inverse_dynamics").inputs}
    assert {"QW0", "QP1"} <= inputs and not {"VX0", "DVX0", "WZ0"} & inputs
    fn = model.numeric(values, backend="numpy")
    assert fn.nq == 10 and fn.nv == 3 and fn.state_space.nq == 10 and fn.state_space.layout_q.startswith("base x y z, quaternion")
    pmodel = to_pinocchio(robot, values)
    data = pmodel.createData()
    G = np.zeros((9, 3))
    G[0, :2], G[5, 2], G[6:, :] = 1, 1, np.eye(3)
    rng = np.random.default_rng(7)
    quat = rng.normal(size=4)
    q = np.concatenate([rng.uniform(-1, 1, 3), quat / np.linalg.norm(quat), rng.uniform(-1, 1, 3)])
    qd, qdd = rng.normal(size=3), rng.normal(size=3)
    A = pin.crba(pmodel, data, q)
    A = G.T @ (np.triu(A) + np.triu(A, 1).T) @ G
    tau = G.T @ pin.rnea(pmodel, data, q, G @ qd, G @ qdd)
    np.testing.assert_allclose(fn.mass_matrix(q), A, rtol=0, atol=1e-9 * max(1.0, np.abs(A).max()))
    np.testing.assert_allclose(fn.inverse_dynamics(q, qd, qdd), tau, rtol=0, atol=1e-9 * max(1.0, np.abs(tau).max()))
    np.testing.assert_allclose(fn.direct_dynamics(q, qd, tau), qdd, rtol=0, atol=1e-8)
    point = dict(values) | dict(zip(["X0", "Y0", "Z0", "QX0", "QY0", "QZ0", "QW0", "th1", "th2", "th3"], q))
    point |= dict(zip(map(str, model.qd), qd)) | dict(zip(map(str, model.qdd), qdd))
    f = model.program("inverse_dynamics").to_function()
    np.testing.assert_allclose(np.ravel(f(*[point[str(a)] for a in f.args])), tau, rtol=0, atol=1e-9 * max(1.0, np.abs(tau).max()))
