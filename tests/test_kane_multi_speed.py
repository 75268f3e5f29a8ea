"""Kane's method with joints of several speeds (spherical, planar) on a fixed and a floating base.

The tree of tests/ball_robots.py (a revolute, a spherical joint with a
quaternion and three speeds, a planar joint with x, y, theta and three
speeds, a second revolute branch), with random physically consistent
parameters: every Kane program, nested and read off KanesMethod, evaluated
by numpy, against pinocchio (``rnea``, ``crba``, ``nonLinearEffects``,
``computeGeneralizedGravity``, ``computeCoriolisMatrix``) and against
Newton-Euler's programs; a free-flyer joint inside the tree; the kinematic
equations KanesMethod is given against the joint models'; what a path cannot
take (a screw speed, the naive build's several speeds) named in a
KaneRobotError.  Each robot is derived once (module fixtures).
"""

import numpy as np
import pytest
import sympy
from ball_robots import ROTATION, ball_tree, evaluate, pinocchio_q, random_state, random_values, symmetric_matrix

import kanerobot as kr
from kanerobot.dynamics import newton_euler
from kanerobot.dynamics.kane import KaneSystem, naive_kanes_method
from kanerobot.errors import KaneRobotError
from kanerobot.robot import joints
from kanerobot.robot.description import GeneralPlacement
from kanerobot.robot.joints.model import OneSpeed
from kanerobot.robot.joints.transforms import homogeneous, rot_z

pin = pytest.importorskip("pinocchio", reason="pip install -e '.[bench]' (pinocchio) to compare spherical and planar joints with pinocchio")
from kanerobot.interop import to_pinocchio  # noqa: E402

SOURCES = ("nested", "kanes_method")
STATES = 2


@pytest.fixture(scope="module", params=[False, True], ids=["fixed", "floating"])
def case(request):
    """(robot, values, pinocchio model, KaneSystem, states) of the ball-and-plane tree."""
    robot = ball_tree(floating=request.param)
    values = random_values(robot, 7)
    rng = np.random.default_rng(11)
    return robot, values, to_pinocchio(robot, values), KaneSystem(robot), [random_state(robot, rng) for _ in range(STATES)]


def _pinocchio(pmodel, robot, q):
    return pmodel, pmodel.createData(), pinocchio_q(robot, q)


def _upper(M):
    """The symmetric matrix from the upper triangle pinocchio fills."""
    return np.triu(M) + np.triu(M, 1).T


def test_sizes_and_names(case):
    robot, _, _, system, _ = case
    assert system.n == robot.dof
    stems = ["1", "CX2", "CY2", "CZ2", "FX3", "FY3", "CZ3", "4"]
    base = ["FX0", "FY0", "FZ0", "CX0", "CY0", "CZ0"] if robot.floating else []
    assert list(system.program("inverse_dynamics").outputs) == [f"GAM{s}" for s in base + stems]
    assert list(system.program("gravity").outputs) == [f"Q{s}" for s in base + stems]
    assert len(system.program("mass_matrix").outputs) == robot.dof * (robot.dof + 1) // 2


@pytest.mark.parametrize("source", SOURCES)
def test_inverse_dynamics_equals_rnea(case, source):
    robot, values, pmodel, system, states = case
    program = system.program("inverse_dynamics", source=source)
    for q, qd, qdd in states:
        expected = pin.rnea(*_pinocchio(pmodel, robot, q), qd, qdd)
        np.testing.assert_allclose(evaluate(program, values, robot, q, qd, qdd), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("source", SOURCES)
def test_h_equals_nonlinear_effects(case, source):
    robot, values, pmodel, system, states = case
    program = system.program("h", source=source)
    for q, qd, _ in states:
        expected = pin.nonLinearEffects(*_pinocchio(pmodel, robot, q), qd)
        np.testing.assert_allclose(evaluate(program, values, robot, q, qd, 0 * qd), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("source", SOURCES)
def test_gravity_equals_generalized_gravity(case, source):
    robot, values, pmodel, system, states = case
    program = system.program("gravity", source=source)
    for q, qd, _ in states:
        expected = pin.computeGeneralizedGravity(*_pinocchio(pmodel, robot, q))
        np.testing.assert_allclose(evaluate(program, values, robot, q, 0 * qd, 0 * qd), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("source", SOURCES)
def test_mass_matrix_equals_crba(case, source):
    robot, values, pmodel, system, states = case
    program = system.program("mass_matrix", source=source)
    for q, qd, _ in states:
        A = symmetric_matrix(program, evaluate(program, values, robot, q, 0 * qd, 0 * qd), robot.dof)
        expected = _upper(pin.crba(*_pinocchio(pmodel, robot, q)))
        np.testing.assert_allclose(A, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("source", SOURCES)
def test_coriolis_matrix_equals_pinocchio(case, source):
    robot, values, pmodel, system, states = case
    program = system.program("coriolis_matrix", source=source)
    n = robot.dof
    for q, qd, _ in states:
        C = evaluate(program, values, robot, q, qd, 0 * qd).reshape(n, n)
        expected = pin.computeCoriolisMatrix(*_pinocchio(pmodel, robot, q), qd)
        np.testing.assert_allclose(C, expected, rtol=0, atol=1e-12)


def test_engines_agree(case):
    """Kane's nested programs equal Newton-Euler's (the same numbers from another derivation)."""
    robot, values, _, system, states = case
    q, qd, qdd = states[0]
    for name in ("inverse_dynamics", "h", "gravity"):
        kane, ne = system.program(name), getattr(newton_euler, name)(robot)
        assert list(kane.outputs) == list(ne.outputs)
        np.testing.assert_allclose(evaluate(kane, values, robot, q, qd, qdd), evaluate(ne, values, robot, q, qd, qdd), rtol=0, atol=1e-12)


def test_derive_uses_every_speed():
    """kr.derive(..., method="kane") outputs one torque per speed (it gave one per joint, silently wrong)."""
    robot = ball_tree()
    program = kr.derive(robot, method="kane").program("inverse_dynamics")
    assert len(program.outputs) == robot.dof


def test_naive_build_rejects_several_speeds():
    with pytest.raises(KaneRobotError, match="joint 2 of ball_and_plane is spherical"):
        naive_kanes_method(ball_tree())


@pytest.mark.parametrize("joint", [joints.Spherical(), joints.Planar(), joints.FreeFlyer()], ids=lambda j: j.name)
def test_kinematic_equations_equal_the_joint_models(joint):
    """KanesMethod's kd equations are the joint model's configuration_derivative, written symbolically."""
    q, u = sympy.symbols(f"q:{joint.nq}"), sympy.symbols(f"u:{joint.nv}")
    rates = sympy.lambdify([q, u], joint.configuration_rate(q, u))
    rng = np.random.default_rng(2)
    for _ in range(3):
        qk, uk = joint.random_configuration(rng), rng.normal(size=joint.nv)
        np.testing.assert_allclose(rates(qk, uk), joint.configuration_derivative(qk, uk), rtol=0, atol=1e-14)


def _arm_with(joint, name):
    """A revolute joint carrying link 2 on ``joint``."""
    frames = [
        kr.Frame("1", "0", 0, 1, GeneralPlacement(R0=ROTATION, P=[0, 0, "L0"], axis=[0, 1, 0], q="q1")),
        kr.Frame("2", "1", joint, 1, GeneralPlacement(R0=ROTATION, P=["L1", 0, 0], axis=[0, 0, 1], q="q2")),
    ]
    return kr.Robot.create(name, frames)


@pytest.fixture(scope="module")
def hovering():
    """(robot, values, pinocchio model, KaneSystem, state): link 2 free-flying on a revolute arm."""
    robot = _arm_with(joints.FreeFlyer(), "hovering")
    values = random_values(robot, 5)
    return robot, values, to_pinocchio(robot, values), KaneSystem(robot), random_state(robot, np.random.default_rng(6))


@pytest.mark.parametrize("source", SOURCES)
def test_free_flyer_joint_in_the_tree(hovering, source):
    """A free-flyer joint inside the tree (its quaternion and six speeds): rnea and the Coriolis matrix."""
    robot, values, pmodel, system, (q, qd, qdd) = hovering
    program = system.program("inverse_dynamics", source=source)
    expected = pin.rnea(*_pinocchio(pmodel, robot, q), qd, qdd)
    np.testing.assert_allclose(evaluate(program, values, robot, q, qd, qdd), expected, rtol=0, atol=1e-12)
    program = system.program("coriolis_matrix", source=source)
    C = evaluate(program, values, robot, q, qd, 0 * qd).reshape(robot.dof, robot.dof)
    np.testing.assert_allclose(C, pin.computeCoriolisMatrix(*_pinocchio(pmodel, robot, q), qd), rtol=0, atol=1e-12)


class _Helical(OneSpeed):
    """A screw joint: it turns about z and slides along it at once (pitch 1)."""

    name = "helical"

    def placed(self, R0, P, axis, q):
        R0 = sympy.Matrix(R0)
        return homogeneous(R0 * rot_z(q[0]), sympy.Matrix(P) + R0 * sympy.Matrix([0, 0, q[0]]))

    def subspace(self, axis):
        return sympy.Matrix([0, 0, 1]), sympy.Matrix([0, 0, 1])


def test_what_the_kanes_method_path_cannot_take_is_named():
    """A speed that both turns and slides: the nested path equals Newton-Euler, the KanesMethod path says it cannot."""
    robot = _arm_with(_Helical(), "screw")
    system = KaneSystem(robot)
    values = random_values(robot, 8)
    q, qd, qdd = random_state(robot, np.random.default_rng(9))
    np.testing.assert_allclose(evaluate(system.program("inverse_dynamics"), values, robot, q, qd, qdd),
                               evaluate(newton_euler.inverse_dynamics(robot), values, robot, q, qd, qdd), rtol=0, atol=1e-12)
    with pytest.raises(KaneRobotError, match=r"joint 2 of screw \(helical\).*use the nested path"):
        system.program("inverse_dynamics", source="kanes_method")


def test_kanes_method_forcing_takes_a_torque_per_speed(case):
    """KanesMethod's forcing is ``GAM - H``: each speed's actuator (and its reaction on the antecedent) works on it alone."""
    robot, values, _, system, states = case
    q, qd, _ = states[0]
    torques = dict(zip(map(str, system.GAM), np.random.default_rng(12).normal(size=len(system.GAM))))
    program = system.kanes_method_program()
    outputs = dict(zip(program.outputs, evaluate(program, values, robot, q, qd, 0 * qd, torques)))
    forcing = [outputs[f"FORCING{suffix}"] for suffix in system.suffixes]
    gam = np.concatenate([np.zeros(system.n - len(torques)), list(torques.values())])
    np.testing.assert_allclose(forcing, gam - evaluate(system.program("h"), values, robot, q, qd, 0 * qd), rtol=0, atol=1e-11)
