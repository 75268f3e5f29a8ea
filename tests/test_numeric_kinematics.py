"""Numeric poses and Jacobians of the generated programs (``fn.pose``, ``fn.jacobian``).

Each is checked against an independent path: the symbolic transform of
:func:`kanerobot.geometry.transform` and Jacobian of
:func:`kanerobot.kinematics.jacobian` evaluated by sympy's lambdify
(:func:`kanerobot.geometry.numeric_function`), finite differences of the
pose, the C backend against numpy, and pinocchio's frame placements and
frame Jacobians when `pin` is installed.
"""

import shutil

import numpy as np
import pytest
from conftest import library, tree_robot

import kanerobot as kr
from kanerobot.codegen import compiled
from kanerobot.dynamics.kinematic_programs import KinematicPrograms
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError, ParameterError
from kanerobot.geometry import numeric_function, transform
from kanerobot.kinematics import jacobian
from kanerobot.robot.joints import base_pose

HAVE_COMPILER = any(shutil.which(name) for name in compiled.COMPILERS)
ROBOTS = ["rx90", "stanford", "krang"]
#: (frame, projection) pairs of each robot: the end, an inner frame, other projections.
CASES = {
    "rx90": [("6", "0"), ("6", "6"), ("3", "5"), ("0", "0")],
    "stanford": [("6", "0"), ("4", "2")],
    "krang": [("10l", "0"), ("10r", "3"), ("7r", "10l")],
}


@pytest.fixture(scope="module", params=ROBOTS)
def case(request):
    """(robot, values, numpy functions, rng) of one library robot."""
    robot = library(request.param)
    rng = np.random.default_rng(ROBOTS.index(request.param))
    values = random_parameters(robot, rng)
    return robot, values, kr.derive(robot).numeric(values, backend="numpy"), rng


def configurations(robot, rng, N=4):
    return rng.uniform(-np.pi, np.pi, (N, len(robot.q)))


@pytest.mark.long
def test_against_symbolic(case):
    """Batched and single results equal the symbolic matrices evaluated by sympy."""
    robot, values, fn, rng = case
    q = configurations(robot, rng)
    for frame, projection in CASES[robot.name.lower()]:
        T_ref = numeric_function(robot, transform(robot, "0", frame), values)
        J_ref = numeric_function(robot, jacobian(robot, frame, projection), values)
        T, J = fn.pose(frame, q), fn.jacobian(frame, q, projection=projection)
        assert T.shape == (len(q), 4, 4) and J.shape == (len(q), 6, len(robot.q))
        for k in range(len(q)):
            np.testing.assert_allclose(T[k], T_ref(q[k]), rtol=0, atol=1e-12)
            np.testing.assert_allclose(J[k], J_ref(q[k]), rtol=0, atol=1e-12)
            np.testing.assert_array_equal(fn.pose(frame, q[k]), T[k])
            np.testing.assert_array_equal(fn.jacobian(frame, q[k], projection), J[k])


def rotation_vector_rate(R_plus, R_minus, R, h):
    """w from (dR/dq) R^T = hat(w), dR/dq by central differences."""
    W = (R_plus - R_minus) / (2 * h) @ R.T
    return np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]]) / 2


def test_jacobian_is_the_derivative_of_the_pose(case):
    """Linear rows: d(position)/dq; angular rows: from dR R^T (base projection)."""
    robot, _, fn, rng = case
    h = 1e-6
    frame = CASES[robot.name.lower()][0][0]
    for q in configurations(robot, rng, 2):
        J = fn.jacobian(frame, q)
        T = fn.pose(frame, q)
        for k in range(len(q)):
            step = np.zeros(len(q))
            step[k] = h
            T_plus, T_minus = fn.pose(frame, q + step), fn.pose(frame, q - step)
            np.testing.assert_allclose(J[:3, k], (T_plus[:3, 3] - T_minus[:3, 3]) / (2 * h), atol=1e-6)
            np.testing.assert_allclose(J[3:, k], rotation_vector_rate(T_plus[:3, :3], T_minus[:3, :3], T[:3, :3], h), atol=1e-6)


@pytest.mark.skipif(not HAVE_COMPILER, reason="no C compiler: the C backend of fn.pose / fn.jacobian is not tested")
@pytest.mark.long
def test_c_backend_equals_numpy(case):
    robot, values, fn, rng = case
    fc = kr.derive(robot).numeric(values, backend="c")
    q = configurations(robot, rng, 7)
    for frame, projection in CASES[robot.name.lower()]:
        np.testing.assert_allclose(fc.pose(frame, q), fn.pose(frame, q), rtol=0, atol=1e-13)
        np.testing.assert_allclose(fc.jacobian(frame, q, projection), fn.jacobian(frame, q, projection), rtol=0, atol=1e-13)
        np.testing.assert_allclose(fc.jacobian(frame, q[0], projection), fn.jacobian(frame, q[0], projection), rtol=0, atol=1e-13)
    assert fc.backend == "c"


def test_programs_are_kept_on_the_model():
    """Derived once per (frame, projection): a second numeric() of the model reuses them."""
    robot = library("rx90")
    model = kr.derive(robot)
    values = random_parameters(robot, np.random.default_rng(5))
    first, second = model.numeric(values, backend="numpy"), model.numeric(values, backend="numpy")
    first.jacobian("6", np.zeros(6))
    program = model._kinematics.program(("jacobian", "6", "0"))
    second.jacobian("6", np.ones(6))
    assert model._kinematics.program(("jacobian", "6", "0")) is program
    # the base projection is the column formula of SYMORO+ eq. 5: short, no simplify
    assert program.op_count()["mul"] <= 46


def test_frame_without_link_needs_its_own_parameter():
    """A fixed leaf (frame 7 of the tree, no link) uses L7, which no dynamic model needs."""
    robot = tree_robot()
    values = random_parameters(robot, np.random.default_rng(3))
    fn = kr.derive(robot).numeric({k: v for k, v in values.items() if k != "L7"}, backend="numpy")
    with pytest.raises(ParameterError, match=r"robot .*: no value for L7, which the pose of frame 7 needs: give it in the values of numeric\(\)"):
        fn.pose("7", np.zeros(6))
    fn = kr.derive(robot).numeric(values, backend="numpy")
    q = np.random.default_rng(4).uniform(-1, 1, 6)
    np.testing.assert_allclose(fn.pose("7", q), numeric_function(robot, transform(robot, "0", "7"), values)(q), atol=1e-12)
    np.testing.assert_allclose(fn.jacobian("7", q, "5"), numeric_function(robot, jacobian(robot, "7", "5"), values)(q), atol=1e-12)


def test_bad_input(case):
    robot, _, fn, _ = case
    n = len(robot.q)
    with pytest.raises(KaneRobotError, match=rf"pose: robot {robot.name} has no frame '99'; frames are 0, "):
        fn.pose("99", np.zeros(n))
    with pytest.raises(KaneRobotError, match=rf"jacobian projection: robot {robot.name} has no frame 'x'"):
        fn.jacobian(robot.labels[-1], np.zeros(n), projection="x")
    with pytest.raises(KaneRobotError, match=rf"q must have shape \({n},\) or \(N, {n}\), got \({n - 1},\)"):
        fn.pose(robot.labels[-1], np.zeros(n - 1))
    with pytest.raises(KaneRobotError, match=r"q\[1\] = nan: states must be finite numbers"):
        fn.jacobian(robot.labels[-1], [0.0, np.nan] + [0.0] * (n - 2))


# ---------------------------------------------------------- floating base
@pytest.fixture(scope="module")
def floating():
    """(robot, values, numpy functions, rng) of the satellite, a free-flying base carrying a 3R arm."""
    robot = library("satellite")
    rng = np.random.default_rng(5)
    values = random_parameters(robot, rng, friction=False, rotor=False, wrench=False)
    return robot, values, kr.derive(robot).numeric(values, backend="numpy"), rng


def floating_states(fn, rng, N=3):
    q = rng.uniform(-np.pi, np.pi, (N, fn.nq))
    q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    return q, rng.uniform(-2, 2, (N, fn.nv))


def test_floating_pose_is_the_base_pose_times_the_joints_part(floating):
    robot, values, fn, rng = floating
    q, _ = floating_states(fn, rng)
    for frame in robot.labels:
        T = fn.pose(frame, q)
        for k in range(len(q)):
            np.testing.assert_array_equal(fn.pose(frame, q[k]), T[k])
            T0 = numeric_function(robot, transform(robot, "0", frame), values)(q[k, 7:])  # 0T_frame, by sympy
            np.testing.assert_allclose(T[k], base_pose(q[k]) @ T0, rtol=0, atol=1e-12)


def test_floating_jacobian_moves_the_pose(floating):
    """J qd is the world velocity of the frame's origin and the world angular velocity of its
    axes: central differences of fn.pose along fn.integrate(q, +-h qd)."""
    _robot, _, fn, rng = floating
    q, qd = floating_states(fn, rng)
    h = 1e-6
    for frame, projection in [("3", "world"), ("2", "0"), ("1", "3")]:
        J = fn.jacobian(frame, q, projection)
        assert J.shape == (len(q), 6, fn.nv)
        for k in range(len(q)):
            T_plus, T_minus = fn.pose(frame, fn.integrate(q[k], qd[k], h)), fn.pose(frame, fn.integrate(q[k], qd[k], -h))
            T = fn.pose(frame, q[k])
            dT = (T_plus - T_minus) / (2 * h)
            w = dT[:3, :3] @ T[:3, :3].T  # [w]x in world axes
            twist = np.concatenate([dT[:3, 3], [w[2, 1], w[0, 2], w[1, 0]]])
            R_w = np.eye(3) if projection == "world" else fn.pose(projection, q[k])[:3, :3]
            expected = np.concatenate([R_w.T @ twist[:3], R_w.T @ twist[3:]])
            np.testing.assert_allclose(J[k] @ qd[k], expected, rtol=0, atol=1e-7)
            np.testing.assert_array_equal(fn.jacobian(frame, q[k], projection), J[k])


def test_floating_kinematics_against_pinocchio(floating):
    """oMf and getFrameJacobian(LOCAL_WORLD_ALIGNED) of the satellite on pinocchio's free flyer."""
    pin = pytest.importorskip("pinocchio", reason="install pin (pip install -e '.[bench]')")
    from kanerobot.interop import to_pinocchio

    robot, values, fn, rng = floating
    pmodel = to_pinocchio(robot, values)
    frames = {
        label: pmodel.addFrame(pin.Frame(f"frame{label}", pmodel.getJointId(f"joint{label}"), pin.SE3.Identity(), pin.FrameType.OP_FRAME))
        for label in robot.labels
    }
    data = pmodel.createData()
    q, _ = floating_states(fn, rng, 4)
    for label, frame_id in frames.items():
        T, J = fn.pose(label, q), fn.jacobian(label, q)
        for k in range(len(q)):
            pin.framesForwardKinematics(pmodel, data, q[k])
            np.testing.assert_allclose(T[k], data.oMf[frame_id].homogeneous, rtol=0, atol=1e-12)
            J_pin = pin.computeFrameJacobian(pmodel, data, q[k], frame_id, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
            np.testing.assert_allclose(J[k], J_pin, rtol=0, atol=1e-12)


def test_closed_loops_and_wheeled_bases_are_refused():
    with pytest.raises(KaneRobotError, match=r"the pose of frame 3 of fourbar: the numeric kinematics serve serial and tree robots, and fourbar has closed loops; kanerobot.geometry.transform and kanerobot.kinematics.jacobian give"):
        KinematicPrograms(library("fourbar")).program(("pose", "3"))
    robot = library("diffdrive")
    with pytest.raises(KaneRobotError, match=r"the Jacobian of frame .* has a wheeled mobile base"):
        KinematicPrograms(robot).program(("jacobian", robot.labels[-1], "0"))


def test_flexible_joints_are_served_on_the_link_side():
    """The programs of a robot with flexible joints read its link-side q, as the rigid robot's."""
    robot = library("planar2flex")
    programs = KinematicPrograms(robot)
    values = {"L1": 0.7}
    q = np.array([0.3, -1.1])
    for key, reference in [(("pose", "2"), transform(robot, "0", "2")), (("jacobian", "2", "1"), jacobian(robot, "2", "1"))]:
        out = programs.numpy_function(key)(*q, *programs.values(key, values))
        expected = numeric_function(robot, reference, values)(q)
        np.testing.assert_allclose(np.array(out, dtype=float), expected[: len(out) // expected.shape[1]].ravel(), atol=1e-12)



# ---------------------------------- closed loops, wheeled bases, flexible joints
#: (frame, projection) pairs: the end, the closing frame 10 of the SR400's loop, the chassis th of the
#: wheeled Krang (posture x, y, th), a rotor frame r2 of the flexible arm.
SPECIAL = {
    "sr400": [("6", "0"), ("10", "3")],
    "krang_wheeled": [("10l", "th"), ("th", "0")],
    "planar2flex": [("2", "0"), ("r2", "1")],
}


@pytest.fixture(scope="module", params=sorted(SPECIAL))
def special(request):
    """(name, reference tree, values, numpy functions, configurations (3, nq)) of a robot that is not a plain tree.

    The reference tree is the robot whose frames the model's configuration
    places: the SR400 with its loop opened, Krang with its wheels free, the
    flexible arm's links and rotors (z = (q, q_r))."""
    from kanerobot.dynamics.closed_loop import equivalent_tree
    from kanerobot.dynamics.flexible import augmented_robot
    from kanerobot.dynamics.wheeled import tree_robot as wheels_free

    name = request.param
    robot = library(name)
    rng = np.random.default_rng(sorted(SPECIAL).index(name) + 20)
    values = random_parameters(robot, rng)
    fn = kr.derive(robot).numeric(values, backend="numpy")
    if name == "sr400":
        reference = equivalent_tree(robot)
        q = np.array([fn.configuration(rng.uniform(-0.8, 0.8, robot.dof)) for _ in range(3)])
    elif name == "krang_wheeled":
        reference = wheels_free(robot)
        q = rng.uniform(-np.pi, np.pi, (3, len(robot.q)))
    else:
        reference = augmented_robot(robot)
        q = rng.uniform(-np.pi, np.pi, (3, len(reference.q)))
    return name, reference, values, fn, q


def speeds_map(name, fn, q, values):
    """dq/d(the model's speeds) at q, by a path of ours that is not the model's: finite differences of the loop
    solver (SR400), the null space of the rolling constraints W(q) evaluated by sympy (Krang), identity (z)."""
    if name == "sr400":
        robot = fn.robot
        active = [robot.joint_labels.index(label) for label in robot.active_joints]
        others = [c for c in range(robot.nj) if c not in active]
        columns = []
        for k in range(len(active)):
            step = np.zeros(len(active))
            step[k] = 1e-4
            plus = fn.configuration(q[active] + step, guess=q[others], tol=1e-13)
            minus = fn.configuration(q[active] - step, guess=q[others], tol=1e-13)
            columns.append((plus - minus) / 2e-4)
        return np.array(columns).T
    if name == "krang_wheeled":
        robot = fn.robot
        W = numeric_function(robot, fn.model.constraints.W, values)(q)
        independent = [robot.joint_labels.index(label) for label in fn.model.independent]
        dependent = [c for c in range(robot.nj) if c not in independent]
        G = np.zeros((robot.nj, len(independent)))
        G[independent] = np.eye(len(independent))
        G[dependent] = np.linalg.lstsq(W[:, dependent], -W[:, independent], rcond=None)[0]
        return G
    return np.eye(len(q))


@pytest.mark.long
def test_special_structures_pose_and_jacobian(special):
    """fn.pose and fn.jacobian of a closed loop, a wheeled base and flexible joints: they raised AttributeError
    (issue 25).  The pose is the reference tree's symbolic transform at the model's configuration; the
    Jacobian maps the model's speeds (active joints, independent speeds, zd) to the frame's twist: the tree's
    symbolic Jacobian times dq/d(speeds) of speeds_map."""
    name, reference, values, fn, q = special
    for frame, projection in SPECIAL[name]:
        T, J = fn.pose(frame, q), fn.jacobian(frame, q, projection)
        T_ref = numeric_function(reference, transform(reference, "0", frame), values)
        J_ref = numeric_function(reference, jacobian(reference, frame, projection), values)
        for k in range(len(q)):
            G = speeds_map(name, fn, q[k], values)
            assert J.shape == (len(q), 6, G.shape[1])
            np.testing.assert_allclose(T[k], T_ref(q[k]), rtol=0, atol=1e-12)
            np.testing.assert_allclose(J[k], J_ref(q[k]) @ G, rtol=0, atol=1e-7 if name == "sr400" else 1e-11)
            np.testing.assert_array_equal(fn.pose(frame, q[k]), T[k])
            np.testing.assert_array_equal(fn.jacobian(frame, q[k], projection), J[k])


def test_special_structures_refuse_what_is_not_a_configuration(special):
    name, _, _, fn, q = special
    with pytest.raises(KaneRobotError, match=r"has no frame '99'; frames are 0, "):
        fn.pose("99", q[0])
    if name == "sr400":
        opened = q[0] + 0.1
        with pytest.raises(KaneRobotError, match=r"does not close the loops of SR400 .*: give every joint of a closed configuration, e\.g\. from configuration\(q_active\)"):
            fn.pose("6", opened)
        with pytest.raises(KaneRobotError, match=r"does not close the loops"):
            fn.jacobian("6", opened)
    if name == "planar2flex":
        with pytest.raises(KaneRobotError, match=r"z must have shape \(4,\) or \(N, 4\), got \(2,\)"):
            fn.pose("2", q[0][:2])


@pytest.mark.skipif(not HAVE_COMPILER, reason="no C compiler: the C backend of fn.pose / fn.jacobian is not tested")
def test_flexible_kinematics_in_c_equal_numpy():
    robot = library("planar2flex")
    values = random_parameters(robot, np.random.default_rng(8))
    fc, fn = (kr.derive(robot).numeric(values, backend=backend) for backend in ("c", "numpy"))
    z = np.random.default_rng(9).uniform(-np.pi, np.pi, (5, 4))
    np.testing.assert_allclose(fc.pose("r2", z), fn.pose("r2", z), rtol=0, atol=1e-13)
    np.testing.assert_allclose(fc.jacobian("2", z, "1"), fn.jacobian("2", z, "1"), rtol=0, atol=1e-13)
    assert fc.backend == "c"


# ---------------------------------------------------------------- pinocchio
def test_against_pinocchio():
    """Frame placements and computeFrameJacobian (LOCAL_WORLD_ALIGNED) of the RX-90, as tests/test_pinocchio.py builds it."""
    pin = pytest.importorskip("pinocchio", reason="install pin (pip install -e '.[bench]')")
    from kanerobot.interop import to_pinocchio

    robot = library("rx90")
    rng = np.random.default_rng(11)
    values = random_parameters(robot, rng, friction=False, rotor=False, wrench=False)
    fn = kr.derive(robot).numeric(values)
    pmodel = to_pinocchio(robot, values)
    # every RX-90 frame is a joint's: an operational frame at each joint's origin
    frames = {
        label: pmodel.addFrame(pin.Frame(f"frame{label}", pmodel.getJointId(f"joint{label}"), pin.SE3.Identity(), pin.FrameType.OP_FRAME))
        for label in robot.labels
    }
    data = pmodel.createData()
    q = configurations(robot, rng, 5)
    for label, frame_id in frames.items():
        T, J = fn.pose(label, q), fn.jacobian(label, q)
        for k in range(len(q)):
            pin.forwardKinematics(pmodel, data, q[k])
            pin.updateFramePlacements(pmodel, data)
            np.testing.assert_allclose(T[k], data.oMf[frame_id].homogeneous, rtol=0, atol=1e-12)
            J_pin = pin.computeFrameJacobian(pmodel, data, q[k], frame_id, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
            np.testing.assert_allclose(J[k], J_pin, rtol=0, atol=1e-12)


def test_frames_whose_labels_are_not_identifiers():
    """A URDF label holds '-' or '.' (``base_link-base_fixed_joint``): the pose and
    Jacobian programs name their variables by the frame's stem, and agree with the
    symbolic transform; the label itself used to be refused as a variable name."""
    arm = library("planar2")
    tool = kr.Frame("tool-tip.x", "2", 2, 0, kr.KKPlacement(d=0.3, alpha=0.4))
    robot = kr.Robot.create("labels", [*arm.frames, tool], links=arm.links)
    rng = np.random.default_rng(7)
    values = random_parameters(robot, rng)
    fn = kr.derive(robot).numeric(values, backend="numpy")
    q = configurations(robot, rng)
    T_ref = numeric_function(robot, transform(robot, "0", "tool-tip.x"), values)
    J_ref = numeric_function(robot, jacobian(robot, "tool-tip.x", "0"), values)
    for k in range(len(q)):
        np.testing.assert_allclose(fn.pose("tool-tip.x", q[k]), T_ref(q[k]), rtol=0, atol=1e-12)
        np.testing.assert_allclose(fn.jacobian("tool-tip.x", q[k]), J_ref(q[k]), rtol=0, atol=1e-12)
