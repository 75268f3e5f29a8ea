"""Closed loops through ball (spherical) and planar joints, and with a ball joint as the cut joint.

Three spatial loops of mobility one, their geometry random: a crank (the
active revolute joint 1) and a second chain from the base, closed by frame 6
on link 2 at the cut joint 5 (``Robot.create(..., loops=[("5", "6")])``).
The closing frame is placed where frame 5 is at a random configuration of
the tree, so that configuration closes the loop.

Independent path: pinocchio's rnea and crba on the open tree
(``to_pinocchio(equivalent_tree(robot))``), projected with the loop's
constraint as pinocchio writes it: the relative twist of the cut frame and
the closing frame from its ``LOCAL`` frame Jacobians, and its bias from
their spatial accelerations at zero joint acceleration.
"""

import numpy as np
import pytest
import sympy
from ball_robots import pinocchio_q, random_values, symmetric_matrix

import kanerobot as kr
from kanerobot.dynamics.closed_loop import equivalent_tree
from kanerobot.dynamics.constrained import coordinate_rates, speed_columns
from kanerobot.interop import to_pinocchio
from kanerobot.robot import joints
from kanerobot.robot.description import GeneralPlacement

pin = pytest.importorskip("pinocchio", reason="pip install -e '.[bench]' (pinocchio): the loops are closed and checked with pinocchio's kinematics and rnea")

#: Joint models of frames 1..5 of each loop: (2 on 1, 3 on the base, 4 on 3, 5 the cut joint on 4).
LOOPS = {
    "ball": (0, joints.Spherical(), 0, 0, 0),
    "ball_cut": (0, 0, 0, 0, joints.Spherical()),
    "planar": (0, 0, joints.Planar(), 0, 0),
}
ANTECEDENTS = ("0", "1", "0", "3", "4")
Z = [0, 0, 1]


def axes_rotation(rng):
    """A rotation that permutes the axes (with signs): short expressions, a generic spatial loop all the same."""
    while True:
        R = np.eye(3)[rng.permutation(3)] * rng.choice([-1, 1], 3)[:, None]
        if np.linalg.det(R) > 0:
            return R.astype(int).tolist()


def tree_frames(kind, rng):
    out = []
    for k, (joint, antecedent) in enumerate(zip(LOOPS[kind], ANTECEDENTS), start=1):
        P = [sympy.Rational(int(x), 10) for x in rng.integers(-5, 6, 3)]
        q = f"q{k}" if joint == 0 else 0
        out.append(kr.Frame(str(k), antecedent, joint, int(k == 1), GeneralPlacement(R0=axes_rotation(rng), P=P, axis=Z, q=q)))
    return out


def loop_robot(kind, seed=0):
    """The loop ``kind`` and a configuration q (numpy, ``robot.q`` order) that closes it."""
    rng = np.random.default_rng(seed)
    frames = tree_frames(kind, rng)
    tree = kr.Robot.create(f"{kind}_tree", frames)
    q = np.concatenate([frame.joint.random_configuration(rng) for frame in frames])
    model = to_pinocchio(tree, random_values(tree, seed))
    data = model.createData()
    pin.forwardKinematics(model, data, pinocchio_q(tree, q))
    placement = data.oMi[model.getJointId("joint2")].inverse() * data.oMi[model.getJointId("joint5")]
    R, P = placement.rotation.tolist(), placement.translation.tolist()
    closing = kr.Frame("6", "2", 2, 0, GeneralPlacement(R0=R, P=P, axis=Z))
    return kr.Robot.create(f"{kind}_loop", frames + [closing], loops=[("5", "6")]), q


def pinocchio_projection(robot, values, q, qd_a, qdd_a):
    """pinocchio's tree projected on the loop's constraint at (q, qd_a, qdd_a): a dict of
    tau, A, h, gravity (of the active joint), G (qd = G qd_a) and qdd (every joint's)."""
    model = to_pinocchio(equivalent_tree(robot), values)
    closing = robot.frame("6")
    placement = np.array(closing.transform(), dtype=float)
    frame = model.addFrame(pin.Frame("closing", model.getJointId("joint2"), 0, pin.SE3(placement[:3, :3], placement[:3, 3]), pin.FrameType.OP_FRAME))
    cut = model.getJointId("joint5")
    data = model.createData()
    qp = pinocchio_q(robot, q)
    pin.computeJointJacobians(model, data, qp)
    pin.updateFramePlacements(model, data)
    kXc = (data.oMi[cut].inverse() * data.oMf[frame]).action
    J = pin.getJointJacobian(model, data, cut, pin.LOCAL) - kXc @ pin.getFrameJacobian(model, data, frame, pin.LOCAL)
    active = speed_columns(robot, robot.active_joints)
    others = [c for c in range(model.nv) if c not in active]
    G = np.zeros((model.nv, len(active)))
    G[active] = np.eye(len(active))
    G[others] = -np.linalg.lstsq(J[:, others], J[:, active], rcond=None)[0]
    qd = G @ qd_a
    pin.forwardKinematics(model, data, qp, qd, np.zeros(model.nv))
    bias = data.a[cut].vector - kXc @ pin.getFrameAcceleration(model, data, frame, pin.LOCAL).vector
    g = np.zeros(model.nv)
    g[others] = -np.linalg.lstsq(J[:, others], bias, rcond=None)[0]
    assert np.abs(J @ qd).max() < 1e-12 and np.abs(J @ g + bias).max() < 1e-12  # the constraint holds to rounding
    tau = G.T @ pin.rnea(model, data, qp, qd, G @ qdd_a + g)
    h = G.T @ pin.rnea(model, data, qp, qd, g)
    gravity = G.T @ pin.rnea(model, data, qp, np.zeros(model.nv), np.zeros(model.nv))
    A = G.T @ pin.crba(model, data, qp) @ G
    return {"tau": tau, "A": np.triu(A) + np.triu(A, 1).T, "h": h, "gravity": gravity, "G": G, "qdd": G @ qdd_a + g}


def run_program(model, name, values, q, qd_a, qdd_a):
    robot = model.robot
    point = dict(values)
    point.update(zip(map(str, robot.q), q))
    point.update(zip(map(str, model.qd), qd_a))
    point.update(zip(map(str, model.qdd), qdd_a))
    f = model.program(name).to_function()
    return np.asarray(f(*[point[str(a)] for a in f.args]), dtype=float)


#: A geometry per loop where the passive speeds are well determined (smallest singular value of Wp above 0.1).
SEEDS = {"ball": 2, "ball_cut": 4, "planar": 5}


@pytest.fixture(scope="module", params=sorted(LOOPS))
def loop(request):
    robot, q = loop_robot(request.param, SEEDS[request.param])
    return robot, kr.derive(robot), q


def test_coordinate_rates_are_the_joint_models_configuration_derivatives(loop):
    robot, _, q = loop
    rng = np.random.default_rng(1)
    v = rng.normal(size=len(robot.qd))
    point = dict(zip(robot.q, q)) | dict(zip(robot.qd, v))
    ours = np.array([float(x.xreplace(point)) for x in coordinate_rates(robot)])
    theirs, k, c = [], 0, 0
    for label in robot.joint_labels:
        joint = robot.frame(label).joint
        theirs.append(joint.configuration_derivative(q[k:k + joint.nq], v[c:c + joint.nv]))
        k, c = k + joint.nq, c + joint.nv
    assert np.allclose(ours, np.concatenate(theirs), atol=1e-14)


def test_closed_loop_programs_equal_pinocchio_projected_on_the_loop(loop):
    """inverse dynamics, A, h and gravity of the active joint: G^T (rnea, crba) G to 1e-10."""
    robot, model, q = loop
    values = random_values(robot, 3)
    rng = np.random.default_rng(4)
    qd_a, qdd_a = rng.normal(size=model.dof), rng.normal(size=model.dof)
    ref = pinocchio_projection(robot, values, q, qd_a, qdd_a)
    scale = 1 + np.abs(ref["tau"]).max()
    got = {name: run_program(model, name, values, q, qd_a, qdd_a) for name in ("inverse_dynamics", "h", "gravity", "mass_matrix")}
    assert np.allclose(got["inverse_dynamics"], ref["tau"], rtol=0, atol=1e-10 * scale)
    assert np.allclose(got["h"], ref["h"], rtol=0, atol=1e-10 * scale)
    assert np.allclose(got["gravity"], ref["gravity"], rtol=0, atol=1e-10 * scale)
    A = symmetric_matrix(model.program("mass_matrix"), got["mass_matrix"], model.dof)
    assert np.allclose(A, ref["A"], rtol=0, atol=1e-10 * (1 + np.abs(ref["A"]).max()))


_NUMERIC = {}


def _numeric_state(loop):
    """The numeric model (made once per loop), pinocchio's projection and the state it is at."""
    robot, model, q = loop
    values = random_values(robot, 5)
    if robot.name not in _NUMERIC:
        _NUMERIC[robot.name] = model.numeric(values, backend="numpy")
    rng = np.random.default_rng(6)
    qd_a, qdd_a = rng.normal(size=model.dof), rng.normal(size=model.dof)
    return _NUMERIC[robot.name], pinocchio_projection(robot, values, q, qd_a, qdd_a), q, qd_a, qdd_a


@pytest.mark.long
def test_numeric_speed_map_and_gravity_equal_pinocchio(loop):
    """G(q) (qd = G qd_a, one row per speed), every joint's acceleration G qdd_a + g, and G^T Q."""
    fn, ref, q, qd_a, qdd_a = _numeric_state(loop)
    assert fn.closure_residual(q) < 1e-12
    assert np.allclose(fn.G(q), ref["G"], rtol=0, atol=1e-10 * (1 + np.abs(ref["G"]).max()))
    assert np.allclose(fn.accelerations(q, qd_a, qdd_a), ref["qdd"], rtol=0, atol=1e-10 * (1 + np.abs(ref["qdd"]).max()))
    assert np.allclose(fn.gravity(q), ref["gravity"], rtol=0, atol=1e-10 * (1 + np.abs(ref["gravity"]).max()))


@pytest.mark.long
def test_numeric_dynamics_equal_pinocchio(loop):
    """A, inverse dynamics, h and direct dynamics of ClosedLoopDynamics (the tree's NumericDynamics projected)."""
    fn, ref, q, qd_a, qdd_a = _numeric_state(loop)
    scale = 1 + np.abs(ref["tau"]).max()
    assert np.allclose(fn.mass_matrix(q), ref["A"], rtol=0, atol=1e-10 * scale)
    assert np.allclose(fn.inverse_dynamics(q, qd_a, qdd_a), ref["tau"], rtol=0, atol=1e-10 * scale)
    assert np.allclose(fn.h(q, qd_a), ref["h"], rtol=0, atol=1e-10 * scale)
    assert np.allclose(fn.direct_dynamics(q, qd_a, ref["tau"]), qdd_a, rtol=0, atol=1e-9 * (1 + np.abs(qdd_a).max()))


@pytest.mark.long
@pytest.mark.parametrize("method", ["lagrange", "kane"])
def test_engines_agree_on_loops_through_ball_and_planar_joints(loop, method):
    """The programs of Lagrange and Kane equal Newton-Euler's (the tree of each engine, one projection)."""
    robot, model, q = loop
    values = random_values(robot, 7)
    rng = np.random.default_rng(8)
    qd_a, qdd_a = rng.normal(size=model.dof), rng.normal(size=model.dof)
    other = kr.derive(robot, method)
    for name in ("inverse_dynamics", "mass_matrix"):
        reference = run_program(model, name, values, q, qd_a, qdd_a)
        assert np.allclose(run_program(other, name, values, q, qd_a, qdd_a), reference, rtol=0, atol=1e-10 * (1 + np.abs(reference).max()))


def test_solving_a_loop_through_a_ball_or_planar_joint_is_refused_in_one_line_but_a_ball_cut_is_solved(loop):
    robot, model, q = loop
    fn = model.numeric(random_values(robot, 5), backend="numpy") if robot.name not in _NUMERIC else _NUMERIC[robot.name]
    if robot.name == "ball_cut_loop":  # a ball joint cutting the loop is turned to close it: solved
        guess = {label: q[k] + 0.05 for k, label in enumerate(robot.joint_labels[1:4], start=1)}
        solved = fn.configuration(q[:1], guess=guess)
        sign = np.sign(solved[-1] * q[-1])  # q and -q: the same turn of the ball
        np.testing.assert_allclose(solved, np.concatenate([q[:4], sign * q[4:]]), rtol=0, atol=1e-9)
        return
    with pytest.raises(kr.KaneRobotError, match=r"the loop solver takes joints of one coordinate \(and ball joints cutting a loop\), "
                                                r"not joint\(s\) [23]: give"):  # fmt: skip
        fn.configuration(q[:1])
