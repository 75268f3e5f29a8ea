"""The numeric model of a robot with joints of several speeds (spherical, planar), fixed and floating.

``kr.derive(ball_tree()).numeric(values)`` sizes its state from the joint
models (the root's first: nq 9 / nv 8 on a fixed base, 16 / 14 on a free
flyer), normalises the quaternions on the way in and answers as pinocchio
does on the same model: ``rnea``, ``crba``, ``nle``, the generalized
gravity and ``aba`` (the direct dynamics solved from A and H where the
articulated-body program takes one speed per joint), ``integrate``,
``difference``, the centre of mass, the frame Jacobians and the centroidal
map.  Random physically consistent parameters (tests/ball_robots.py).
"""

import numpy as np
import pytest
from ball_robots import ball_tree, pinocchio_q, random_state, random_values

import kanerobot as kr

pin = pytest.importorskip("pinocchio", reason="pip install -e '.[bench]' (pinocchio) to compare joints of several speeds with pinocchio")
from kanerobot.interop import to_pinocchio  # noqa: E402

TOLERANCE = dict(rtol=0, atol=1e-12)


@pytest.fixture(scope="module", params=[False, True], ids=["fixed", "floating"])
def case(request):
    """(robot, numeric model (numpy), pinocchio model, pinocchio data) of the ball-and-plane tree."""
    robot = ball_tree(floating=request.param)
    values = random_values(robot, 7)
    pmodel = to_pinocchio(robot, values)
    return robot, kr.derive(robot).numeric(values, backend="numpy"), pmodel, pmodel.createData()


def test_sizes_and_names_come_from_the_joint_models():
    fn = kr.derive(ball_tree()).numeric(random_values(ball_tree(), 1), backend="numpy")
    space = fn.state_space
    assert (fn.nq, fn.nv, fn.n, space.ntau) == (9, 8, 8, 8)
    assert space.coordinates == ("1", "2.qx", "2.qy", "2.qz", "2.qw", "3.x", "3.y", "3.th", "4")
    assert space.torques == ("GAM1", "GAMCX2", "GAMCY2", "GAMCZ2", "GAMFX3", "GAMFY3", "GAMCZ3", "GAM4")
    assert space.layout_q == "joints 1, 2 (qx qy qz qw), 3 (x y th), 4"
    assert fn.neutral_configuration().tolist() == [0, 0, 0, 0, 1, 0, 0, 0, 0]
    floating = kr.derive(ball_tree(True)).numeric(random_values(ball_tree(True), 1), backend="numpy")
    assert (floating.nq, floating.nv, floating.n, floating.state_space.ntau) == (16, 14, 8, 8)
    assert floating.state_space.coordinates[:8] == ("x", "y", "z", "qx", "qy", "qz", "qw", "1")


def test_dynamics_equal_pinocchio(case):
    robot, fn, pmodel, data = case
    rng = np.random.default_rng(8)
    for _ in range(2):
        q, qd, qdd = random_state(robot, rng)
        pq = pinocchio_q(robot, q)
        tau = pin.rnea(pmodel, data, pq, qd, qdd)
        np.testing.assert_allclose(fn.inverse_dynamics(q, qd, qdd), tau, **TOLERANCE)
        M = pin.crba(pmodel, data, pq)
        np.testing.assert_allclose(fn.mass_matrix(q), np.triu(M) + np.triu(M, 1).T, **TOLERANCE)
        np.testing.assert_allclose(fn.h(q, qd), pin.nonLinearEffects(pmodel, data, pq, qd), **TOLERANCE)
        np.testing.assert_allclose(fn.gravity(q), pin.computeGeneralizedGravity(pmodel, data, pq), **TOLERANCE)
        joint_tau = tau[fn.nv - fn.n :]  # a floating base is not actuated: its six forces are zero
        expected = pin.aba(pmodel, data, pq, qd, np.concatenate([np.zeros(fn.nv - fn.n), joint_tau]))
        np.testing.assert_allclose(fn.direct_dynamics(q, qd, joint_tau), expected, rtol=0, atol=1e-11)


def test_quaternions_are_normalised_on_the_way_in(case):
    robot, fn, _, _ = case
    q, qd, qdd = random_state(robot, np.random.default_rng(9))
    scaled = q.copy()
    for _, qs, _ in fn._quaternions:
        scaled[qs.stop - 4 : qs.stop] = 3.0 * q[qs.stop - 4 : qs.stop]
    assert not np.allclose(scaled, q)
    np.testing.assert_allclose(fn.inverse_dynamics(scaled, qd, qdd), fn.inverse_dynamics(q, qd, qdd), rtol=0, atol=1e-12)
    np.testing.assert_allclose(fn.pose("3", scaled), fn.pose("3", q), rtol=0, atol=1e-12)


def test_configuration_operations_equal_pinocchio(case):
    robot, fn, pmodel, _ = case
    rng = np.random.default_rng(10)
    q0, v, _ = random_state(robot, rng)
    q1 = fn.integrate(q0, v, 0.3)
    np.testing.assert_allclose(pinocchio_q(robot, q1), pin.integrate(pmodel, pinocchio_q(robot, q0), 0.3 * v), rtol=0, atol=1e-12)
    np.testing.assert_allclose(fn.difference(q0, q1), 0.3 * v, rtol=0, atol=1e-10)
    # dq/dt by central differences of the exact integration
    h = 1e-6
    numeric = (fn.integrate(q0, v, h) - fn.integrate(q0, v, -h)) / (2 * h)
    np.testing.assert_allclose(fn.configuration_derivative(q0, v), numeric, rtol=0, atol=1e-8)
    for _, qs, _ in fn._quaternions:
        assert abs(np.linalg.norm(fn.random_configuration(rng)[qs][-4:]) - 1) < 1e-15


def test_kinematics_and_balance_equal_pinocchio(case):
    robot, fn, pmodel, data = case
    q, _qd, _ = random_state(robot, np.random.default_rng(11))
    pq = pinocchio_q(robot, q)
    pin.computeJointJacobians(pmodel, data, pq)  # and the joints' placements
    for label in ("2", "3", "4"):
        joint = pmodel.getJointId(f"joint{label}")
        np.testing.assert_allclose(fn.pose(label, q), data.oMi[joint].homogeneous, rtol=0, atol=1e-12)
        expected = pin.getJointJacobian(pmodel, data, joint, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        np.testing.assert_allclose(fn.jacobian(label, q), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fn.center_of_mass(q), pin.centerOfMass(pmodel, data, pq), rtol=0, atol=1e-12)
    np.testing.assert_allclose(fn.center_of_mass_jacobian(q), pin.jacobianCenterOfMass(pmodel, data, pq), rtol=0, atol=1e-12)
    np.testing.assert_allclose(fn.centroidal_momentum_matrix(q), pin.computeCentroidalMap(pmodel, data, pq), rtol=0, atol=1e-12)


def test_the_simulation_map_is_the_configuration_derivative(case):
    robot, fn, _, _ = case
    q, qd, _ = random_state(robot, np.random.default_rng(12))
    space = fn.state_space
    np.testing.assert_allclose(space.qdot(q, qd), fn.configuration_derivative(q, qd), rtol=0, atol=1e-15)
    np.testing.assert_allclose(space.integrate(q, qd, 0.2), fn.integrate(q, qd, 0.2), rtol=0, atol=1e-15)
    with pytest.raises(kr.KaneRobotError, match="zero; give a unit quaternion"):
        space.split(np.zeros(fn.nq + fn.nv))
