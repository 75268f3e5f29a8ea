"""Mimic joints as a constraint (issue 27): ``q_m = k q_l + o``, the model in the independent joints.

Independent paths: pinocchio's own model with mimic joints
(``buildModelFromXML(text, mimic=True)``: ``JointModelMimic``), its ``crba``,
``rnea``, ``nonLinearEffects`` and ``computeGeneralizedGravity``; the direct
dynamics by solving pinocchio's ``A qdd = tau - h`` (its ``aba`` refuses
mimic joints).  Where pinocchio cannot build the mimic model (a leader after
its mimic in the file: Romeo, Talos full), pinocchio's model with every joint
free projected by hand, ``G^T A G`` and ``G^T rnea(q, G qd_a, G qdd_a)``
(G constant, so Gdot = 0).  The robot is a URDF written here with random
rigid bodies (mass, box-shaped principal moments, random axes and centres).

On a floating base (the free flyer kept, its six speeds independent): the
floating ball tree (tests/ball_robots.py) with a random mimic against
pinocchio's floating tree projected by a G built here, and against MuJoCo
(a free joint and a joint equality, tests/mujoco_reference.py); Talos full
and Romeo as humanoids in the long group.
"""

import dataclasses
import warnings

import numpy as np
import pytest
from ball_robots import ball_tree
from conftest import benchmark, one_line_error

import kanerobot as kr
from kanerobot.cli import main
from kanerobot.dynamics.mimic import MimicDynamics, MimicModel
from kanerobot.errors import KaneRobotWarning
from kanerobot.robot.description import MimicJoint
from kanerobot.robot.urdf import urdf_from_text

pin = pytest.importorskip("pinocchio", reason="pip install -e '.[test]' for pinocchio's mimic joints")

#: (name, type, parent link, child link, axis, mimic (leader, multiplier, offset) or None)
JOINTS = [
    ("shoulder", "continuous", "base", "upper", "0 0 1", None),
    ("elbow", "revolute", "upper", "fore", "0 1 0", None),
    ("wrist", "revolute", "fore", "hand", "1 0 0", ("elbow", 1.7, 0.3)),
    ("finger_a", "prismatic", "hand", "pad_a", "0 1 0", None),
    ("finger_b", "prismatic", "hand", "pad_b", "0 1 0", ("finger_a", -1.0, 0.0)),
]


def body(rng):
    """A random rigid body's ``<inertial>``: principal moments of a box, turned, off centre."""
    m = float(rng.uniform(0.5, 2.0))
    a, b, c = rng.uniform(0.05, 0.4, 3)
    moments = (m / 12 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])).tolist()
    xyz, rpy = rng.uniform(-0.2, 0.2, 3).tolist(), rng.uniform(-np.pi, np.pi, 3).tolist()
    return (f'<inertial><origin xyz="{" ".join(map(repr, xyz))}" rpy="{" ".join(map(repr, rpy))}"/><mass value="{m!r}"/>'
            f'<inertia ixx="{moments[0]!r}" ixy="0" ixz="0" iyy="{moments[1]!r}" iyz="0" izz="{moments[2]!r}"/></inertial>')  # fmt: skip


def gripper_urdf(seed=0, joints=JOINTS, extra=""):
    """The arm and gripper of :data:`JOINTS` with random bodies and joint origins, as URDF text."""
    rng = np.random.default_rng(seed)
    links = ["base"] + [child for *_, child, _, _ in joints]
    text = '<robot name="gripper">\n' + "".join(f'<link name="{name}">{body(rng)}</link>\n' for name in links)
    for name, kind, parent, child, axis, mimic in joints:
        xyz, rpy = rng.uniform(-0.3, 0.3, 3).tolist(), rng.uniform(-1, 1, 3).tolist()
        coupling = f'<mimic joint="{mimic[0]}" multiplier="{mimic[1]!r}" offset="{mimic[2]!r}"/>' if mimic else ""
        text += (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
                 f'<origin xyz="{" ".join(map(repr, xyz))}" rpy="{" ".join(map(repr, rpy))}"/><axis xyz="{axis}"/>'
                 f'<limit lower="-1" upper="1" effort="10" velocity="1"/>{coupling}</joint>\n')  # fmt: skip
    return text + extra + "</robot>\n"


def without_friction(robot):
    """The file's numbers, friction 0 (pinocchio's algorithms have none)."""
    return {k: (0.0 if k[:2] in ("FV", "FS") else v) for k, v in robot.values.items()}


def pinocchio_q(pmodel, robot, q):
    """pinocchio's configuration of our joint vector ``q`` (joints of one coordinate; a continuous joint's cos, sin)."""
    out = pin.neutral(pmodel)
    if robot.floating:  # pinocchio's root free flyer first, in our convention (x y z, quaternion x y z w)
        out[:7], q = q[:7], q[7:]
    for label, value in zip(robot.joint_labels, q):
        joint = pmodel.joints[pmodel.getJointId(label)]
        if joint.shortname() == "JointModelMimic":
            continue
        if joint.nq == 2:
            out[joint.idx_q : joint.idx_q + 2] = np.cos(value), np.sin(value)
        else:
            out[joint.idx_q] = value
    return out


def speed_map(pmodel, robot, independent):
    """``P`` (pmodel.nv, m): pinocchio's speeds of our independent ones; with every joint free in
    ``pmodel``, the mimic joints' rows hold their multipliers (G by hand)."""
    column, size = {}, 0
    for label in independent:  # a floating base "0" has six speeds, pinocchio's first
        column[label], size = size, size + (6 if label == "0" else 1)
    P = np.zeros((pmodel.nv, size))
    if "0" in column:
        P[:6, column["0"] : column["0"] + 6] = np.eye(6)
    for label in robot.joint_labels:
        joint = pmodel.joints[pmodel.getJointId(label)]
        if label in column:
            P[joint.idx_v, column[label]] = 1.0
        elif joint.nv:  # a free joint of pinocchio's: qd_m = k qd_l
            item = next(m for m in robot.mimics if m.joint == label)
            P[joint.idx_v, column[item.leader]] = float(item.multiplier)
    return P


def references(pmodel, robot, independent, q, qd, qdd, tau):
    """pinocchio's A, h, gravity, inverse and direct dynamics in the independent speeds (P^T ... P)."""
    data, P = pmodel.createData(), speed_map(pmodel, robot, independent)
    pq = pinocchio_q(pmodel, robot, q)
    A = pin.crba(pmodel, data, pq)
    A = np.triu(A) + np.triu(A, 1).T
    A = P.T @ A @ P
    h = P.T @ pin.nonLinearEffects(pmodel, data, pq, P @ qd)
    out = {"mass_matrix": A, "h": h, "gravity": P.T @ pin.computeGeneralizedGravity(pmodel, data, pq),
           "inverse_dynamics": P.T @ pin.rnea(pmodel, data, pq, P @ qd, P @ qdd)}  # fmt: skip
    if np.linalg.cond(A) < ILL:  # a joint moving massless links alone: A singular, no direct dynamics (any solver's)
        out["direct_dynamics"] = np.linalg.solve(A, np.concatenate([np.zeros(len(h) - len(tau)), tau]) - h)  # a base not actuated
    return out


#: Condition number of A above which the direct dynamics is not compared (benchmarks/urdf_vs_pinocchio.py's ILL).
ILL = 1e6


def worst_error(fn, reference, q, qd, qdd, tau):
    """``max |ours - reference| / max(1, |reference|)`` over the models of ``reference``."""
    ours = {"mass_matrix": lambda: fn.mass_matrix(q), "h": lambda: fn.h(q, qd), "gravity": lambda: fn.gravity(q),
            "inverse_dynamics": lambda: fn.inverse_dynamics(q, qd, qdd), "direct_dynamics": lambda: fn.direct_dynamics(q, qd, tau)}  # fmt: skip
    return max(float(np.abs(ours[k]() - reference[k]).max() / max(1.0, np.abs(reference[k]).max())) for k in reference)


def random_states(fn, rng, count=3):
    """``(q, qd, qdd, tau)``: q from random independent joints (every joint of a robot without mimic joints)."""
    coupled = isinstance(fn, MimicDynamics)
    base = 7 if fn.model.robot.floating else 0  # a unit quaternion for a floating base
    for _ in range(count):
        q = rng.uniform(-1, 1, len(fn._free) if coupled else fn.nq)
        if base:
            q[3:7] /= np.linalg.norm(q[3:7])
        q = fn.configuration(q) if coupled else q
        yield q, rng.uniform(-1, 1, fn.nv), rng.uniform(-1, 1, fn.nv), rng.uniform(-1, 1, fn.nv - (6 if base else 0))


@pytest.fixture(scope="module")
def gripper():
    text = gripper_urdf()
    robot = urdf_from_text(text)
    model = kr.derive(robot)
    return text, robot, model, model.numeric(without_friction(robot), backend="numpy")


# ------------------------------------------------------------------ the model
def test_a_urdf_mimic_is_a_constraint_by_default(gripper):
    _, robot, model, fn = gripper
    assert robot.mimics == (MimicJoint("wrist", "elbow", 1.7, 0.3), MimicJoint("finger_b", "finger_a", -1, 0))
    assert robot.dof == 3 and robot.joint_labels == ("shoulder", "elbow", "wrist", "finger_a", "finger_b")
    assert isinstance(model, MimicModel) and model.independent == ("shoulder", "elbow", "finger_a") and model.dof == 3
    space = model.state_space
    assert space.nv == 3 and space.nq == 5 and space.kind == "mimic joints"
    assert space.layout_qd == "the independent joints shoulder, elbow, finger_a (mimic joints wrist, finger_b follow them)"
    assert "the mimic joints wrist, finger_b at multiplier * leader + offset" in space.layout_q
    assert fn.configuration([0.1, 0.2, 0.05]).tolist() == pytest.approx([0.1, 0.2, 1.7 * 0.2 + 0.3, 0.05, -0.05], abs=1e-15)
    bound = model.numeric(without_friction(robot), backend="numpy", bind=True)  # the numbers folded into the code
    q = fn.configuration([0.1, 0.2, 0.05])
    assert np.allclose(bound.mass_matrix(q), fn.mass_matrix(q), rtol=0, atol=1e-12)
    assert urdf_from_text(gripper_urdf(), mimic="independent").mimics == ()


def test_the_model_equals_pinocchios_mimic_joints(gripper):
    text, robot, model, fn = gripper
    pmodel = pin.buildModelFromXML(text, mimic=True)
    assert pmodel.nv == model.dof
    rng = np.random.default_rng(1)
    for q, qd, qdd, tau in random_states(fn, rng):
        assert worst_error(fn, references(pmodel, robot, model.independent, q, qd, qdd, tau), q, qd, qdd, tau) < 1e-9


def test_the_model_equals_the_free_tree_projected_by_hand(gripper):
    """G^T A G and G^T (h + A Gdot qd_a) with G built here from the multipliers (Gdot = 0), on pinocchio's free joints."""
    text, robot, model, fn = gripper
    pmodel = pin.buildModelFromXML(text)
    assert pmodel.nv == 5
    rng = np.random.default_rng(2)
    for q, qd, qdd, tau in random_states(fn, rng):
        assert worst_error(fn, references(pmodel, robot, model.independent, q, qd, qdd, tau), q, qd, qdd, tau) < 1e-9


@pytest.mark.parametrize("method", ["lagrange", "kane"])
def test_every_engine_gives_the_same_numbers(gripper, method):
    _, robot, _, fn = gripper
    other = kr.derive(robot, method).numeric(without_friction(robot), backend="numpy")
    rng = np.random.default_rng(3)
    for q, qd, qdd, tau in random_states(fn, rng, 2):
        reference = {"mass_matrix": fn.mass_matrix(q), "h": fn.h(q, qd), "gravity": fn.gravity(q),
                     "inverse_dynamics": fn.inverse_dynamics(q, qd, qdd), "direct_dynamics": fn.direct_dynamics(q, qd, tau)}  # fmt: skip
        assert worst_error(other, reference, q, qd, qdd, tau) < 1e-9


@pytest.mark.parametrize("method", ["newton-euler", "lagrange", "kane"])
def test_the_programs_fold_the_mimic_force_onto_the_leader(gripper, method):
    """The symbolic program (each engine's tree spliced, no numeric projection) gives the numeric model's numbers."""
    _, robot, model, fn = gripper
    model = model if method == "newton-euler" else kr.derive(robot, method)
    q, qd, qdd, _ = next(random_states(fn, np.random.default_rng(4)))
    point = without_friction(robot) | dict(zip(map(str, robot.q), q)) | dict(zip(map(str, model.qd), qd)) | dict(zip(map(str, model.qdd), qdd))
    program = model.program("inverse_dynamics")
    assert {str(x) for x in program.inputs} >= {"q_wrist", "QPelbow"} and "QPwrist" not in {str(x) for x in program.inputs}
    f = program.to_function()
    got = np.ravel(f(*[point[str(a)] for a in f.args]))
    assert np.allclose(got, fn.inverse_dynamics(q, qd, qdd), rtol=0, atol=1e-10)


def test_a_configuration_off_the_couplings_is_refused(gripper):
    _, _, _, fn = gripper
    q = fn.configuration([0.1, 0.2, 0.05])
    q[2] += 1e-3
    with pytest.raises(kr.KaneRobotError, match=r"mimic joint wrist is 0.641, not 1.7 \* elbow \+ 0.3 = 0.64 .*fn.configuration\(q_independent\)"):
        fn.mass_matrix(q)
    assert fn.coupling_residual(q) == pytest.approx(1e-3)


def test_a_simulation_keeps_the_couplings(gripper):
    *_, fn = gripper
    q0 = fn.configuration([0.1, 0.2, 0.05])
    run = kr.simulate(fn, None, np.concatenate([q0, [0.3, -0.2, 0.1]]), (0.0, 0.05))
    q = np.asarray(run.q)
    assert q.shape[1] == 5 and np.abs(q[-1] - q0).max() > 1e-3
    assert np.abs(q[:, 2] - 1.7 * q[:, 1] - 0.3).max() < 1e-9 and np.abs(q[:, 4] + q[:, 3]).max() < 1e-9


def test_a_ball_and_plane_tree_with_a_symbolic_multiplier_equals_pinocchio_projected_by_hand():
    """Joints of several coordinates beside the mimic (q and qd columns differ), a multiplier ``k`` bound
    with the other parameters, random physically consistent parameters (tests/ball_robots.py)."""
    from ball_robots import pinocchio_q as ball_q
    from ball_robots import random_state, random_values

    from kanerobot.dynamics.mimic import mimic_tree
    from kanerobot.interop import to_pinocchio

    tree = ball_tree()
    robot = kr.Robot.create(tree.name, tree.frames, mimics=[("4", "1", "k", "o")])
    values = random_values(tree, 7) | {"k": -1.3, "o": 0.2}
    model = kr.derive(robot)
    assert {"k", "o"} <= set(model.parameters) and mimic_tree(robot) == tree
    fn = model.numeric(values, backend="numpy")
    pmodel = to_pinocchio(tree, {n: v for n, v in values.items() if n not in ("k", "o")})
    data = pmodel.createData()
    G = np.zeros((8, 7))
    G[:7, :7] = np.eye(7)
    G[7, 0] = -1.3
    rng = np.random.default_rng(8)
    for _ in range(3):
        q_tree, _, _ = random_state(tree, rng)
        q = fn.configuration(q_tree[:8])
        assert q[8] == pytest.approx(-1.3 * q[0] + 0.2) and np.allclose(q[:8], q_tree[:8])
        qd, qdd = rng.normal(size=7), rng.normal(size=7)
        pq = ball_q(tree, q)
        M = pin.crba(pmodel, data, pq)
        M = np.triu(M) + np.triu(M, 1).T
        assert np.allclose(fn.mass_matrix(q), G.T @ M @ G, rtol=0, atol=1e-9)
        tau = G.T @ pin.rnea(pmodel, data, pq, G @ qd, G @ qdd)
        assert np.allclose(fn.inverse_dynamics(q, qd, qdd), tau, rtol=0, atol=1e-9 * max(1.0, np.abs(tau).max()))
        assert np.allclose(fn.direct_dynamics(q, qd, tau), qdd, rtol=0, atol=1e-8)
    f = model.program("inverse_dynamics").to_function()  # k an input of the program
    point = values | dict(zip(map(str, robot.q), q)) | dict(zip(map(str, model.qd), qd)) | dict(zip(map(str, model.qdd), qdd))
    assert "k" in map(str, f.args)
    assert np.allclose(np.ravel(f(*[point[str(a)] for a in f.args])), tau, rtol=0, atol=1e-9 * max(1.0, np.abs(tau).max()))


# ------------------------------------------------------------------ on a floating base
#: A floating tree (tests/ball_robots.py) whose revolute joint 4 mimics revolute joint 1: ``q4 = k q1 + o``.
FLOATING_MIMIC = ("4", "1", "k", "o")
FLOATING_VALUES = {"k": -1.3, "o": 0.2}


def floating_mimic_projection(k):
    """``G`` (14, 13) built here from the mimic's row: the tree's speeds (base six, joints 1, 2 (3), 3 (3), 4)
    from the independent ones (base six, joints 1, 2, 3); the mimic's row ``qd4 = k qd1``."""
    G = np.zeros((14, 13))
    G[:13, :13] = np.eye(13)
    G[13, 6] = k
    return G


@pytest.fixture(scope="module")
def floating():
    """``(tree, robot, values, model, fn)``: the floating ball tree with joint 4 mimicking joint 1."""
    from ball_robots import random_values

    tree = ball_tree(floating=True)
    robot = kr.Robot.create(tree.name, tree.frames, floating=True, mimics=[FLOATING_MIMIC])
    values = random_values(tree, 12) | FLOATING_VALUES
    model = kr.derive(robot)
    return tree, robot, values, model, model.numeric(values, backend="numpy")


def floating_states(tree, fn, rng, count=3):
    """``(q, qd, qdd)``: random unit quaternions (base, ball joint), joint 4 set from joint 1, random speeds."""
    from ball_robots import random_state

    for _ in range(count):
        q_tree, _, _ = random_state(tree, rng)
        q = fn.configuration(q_tree[:-1])  # every coordinate but the mimic joint's (the last)
        yield q, rng.normal(size=13), rng.normal(size=13)


def test_a_floating_tree_with_a_mimic_equals_the_free_tree_projected_by_hand(floating):
    """Base speeds and the independent joints' are the speeds; ``G^T M G``, ``G^T rnea(q, G qd, G qdd)`` and the
    gravity of pinocchio's floating tree (every joint free), G built here; the direct dynamics inverts them."""
    from ball_robots import pinocchio_q as ball_q

    from kanerobot.interop import to_pinocchio

    tree, _, values, model, fn = floating
    assert model.dof == 13 and model.independent == ("0", "1", "2", "3") and fn.nq == 16 and fn.nv == 13
    assert model.state_space.kind == "mimic joints" and model.state_space.nq == 16 and model.state_space.nv == 13
    pmodel = to_pinocchio(tree, {n: v for n, v in values.items() if n not in FLOATING_VALUES})
    data = pmodel.createData()
    G = floating_mimic_projection(FLOATING_VALUES["k"])
    for q, qd, qdd in floating_states(tree, fn, np.random.default_rng(13)):
        assert q[-1] == pytest.approx(-1.3 * q[7] + 0.2, abs=1e-15)
        pq = ball_q(tree, q)
        M = pin.crba(pmodel, data, pq)
        M = G.T @ (np.triu(M) + np.triu(M, 1).T) @ G
        tau = G.T @ pin.rnea(pmodel, data, pq, G @ qd, G @ qdd)
        scale = max(1.0, np.abs(tau).max())
        np.testing.assert_allclose(fn.mass_matrix(q), M, rtol=0, atol=1e-9 * max(1.0, np.abs(M).max()))
        np.testing.assert_allclose(fn.inverse_dynamics(q, qd, qdd), tau, rtol=0, atol=1e-9 * scale)
        h = G.T @ pin.nonLinearEffects(pmodel, data, pq, G @ qd)
        np.testing.assert_allclose(fn.h(q, qd), h, rtol=0, atol=1e-9 * scale)
        np.testing.assert_allclose(fn.gravity(q), G.T @ pin.computeGeneralizedGravity(pmodel, data, pq), rtol=0, atol=1e-9 * scale)
        # the base is not actuated: the torques of joints 1, 2, 3 that give this motion, the base wrench at zero
        free = np.linalg.solve(M[:6, :6], -(h[:6] + M[:6, 6:] @ qdd[6:]))
        qdd_free = np.concatenate([free, qdd[6:]])
        torques = (M @ qdd_free + h)[6:]
        np.testing.assert_allclose(fn.direct_dynamics(q, qd, torques), qdd_free, rtol=0, atol=1e-8 * max(1.0, np.abs(qdd_free).max()))


def test_to_pinocchio_carries_the_mimic_and_equals_the_floating_model(floating):
    """pinocchio's own mimic joint (``transformJointIntoMimic``) on the floating tree: its crba and rnea in the
    independent speeds are our floating mimic model's."""
    from ball_robots import pinocchio_q as ball_q

    from kanerobot.interop import to_pinocchio

    tree, robot, values, _, fn = floating
    pmodel = to_pinocchio(robot, values)
    assert pmodel.nv == 13 and "JointModelMimic" in {pmodel.joints[i].shortname() for i in range(1, pmodel.njoints)}
    data = pmodel.createData()
    for q, qd, qdd in floating_states(tree, fn, np.random.default_rng(14), 2):
        pq = ball_q(tree, q)[: pmodel.nq]  # pinocchio keeps no coordinate of the mimic joint (the last)
        M = pin.crba(pmodel, data, pq)
        M = np.triu(M) + np.triu(M, 1).T
        np.testing.assert_allclose(fn.mass_matrix(q), M, rtol=0, atol=1e-9 * max(1.0, np.abs(M).max()))
        tau = pin.rnea(pmodel, data, pq, qd, qdd)
        np.testing.assert_allclose(fn.inverse_dynamics(q, qd, qdd), tau, rtol=0, atol=1e-9 * max(1.0, np.abs(tau).max()))


@pytest.mark.parametrize(
    "mimic, words",
    [(("4", "1", 2.0, 0.0, (("2", 1.0),)), "mimic joint 4 follows 2 joints (1, 2): pinocchio's mimic joint has one leader"),
     (("2", "5", 2.0, 0.0), "mimic joint 2 comes before its leader 5 in the tree: pinocchio's mimic joint follows its leader")],
    ids=["several leaders", "leader after"],
)
def test_to_pinocchio_refuses_a_coupling_it_cannot_build_in_one_line(mimic, words):
    from ball_robots import random_values

    from kanerobot.interop import to_pinocchio

    robot = kr.Robot.create("arm", ARM.frames, mimics=[mimic])
    with pytest.raises(kr.KaneRobotError) as info:
        to_pinocchio(robot, random_values(ARM, 1))
    assert words in str(info.value) and "to_pinocchio(mimic_tree(robot), values)" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("method", ["lagrange", "kane"])
def test_every_engine_gives_the_floating_mimic_model(floating, method):
    tree, robot, values, _, fn = floating
    other = kr.derive(robot, method).numeric(values, backend="numpy")
    for q, qd, qdd in floating_states(tree, fn, np.random.default_rng(15), 2):
        np.testing.assert_allclose(other.mass_matrix(q), fn.mass_matrix(q), rtol=0, atol=1e-9)
        tau = fn.inverse_dynamics(q, qd, qdd)
        np.testing.assert_allclose(other.inverse_dynamics(q, qd, qdd), tau, rtol=0, atol=1e-9 * max(1.0, np.abs(tau).max()))


def test_the_floating_program_takes_the_base_state(floating):
    """The symbolic program (the floating tree's spliced): quaternion, base speeds and accelerations are inputs."""
    from ball_robots import state_symbols

    tree, _, values, model, fn = floating
    q, qd, qdd = next(floating_states(tree, fn, np.random.default_rng(16)))
    names = state_symbols(tree)
    point = dict(values) | dict(zip(names[0], q)) | dict(zip(map(str, model.qd), qd)) | dict(zip(map(str, model.qdd), qdd))
    program = model.program("inverse_dynamics")
    inputs = {str(x) for x in program.inputs}
    assert {"QW0", "VX0", "DWZ0", "QP1"} <= inputs and "QP4" not in inputs and "QDP4" not in inputs
    f = program.to_function()
    np.testing.assert_allclose(np.ravel(f(*[point[str(a)] for a in f.args])), fn.inverse_dynamics(q, qd, qdd), rtol=0, atol=1e-9)


def test_a_floating_simulation_keeps_the_coupling_and_the_momentum(floating):
    """Free flight without gravity: the mimic joint stays at ``k q1 + o``, the quaternion unit, and the momentum
    ``A_G G qd_a`` (the tree's centroidal momentum matrix) is conserved."""
    tree, _, values, model, _ = floating
    fn = model.numeric(values | {"G3": 0.0}, backend="numpy")
    q0 = next(floating_states(tree, fn, np.random.default_rng(17)))[0]
    qd0 = np.random.default_rng(18).normal(size=13) * 0.5
    run = kr.simulate(fn, None, np.concatenate([q0, qd0]), (0.0, 0.2))
    q, qd = np.asarray(run.q), np.asarray(run.qd)
    assert q.shape[1] == 16 and np.abs(q[-1] - q0).max() > 1e-2
    assert np.abs(q[:, 15] - (-1.3 * q[:, 7] + 0.2)).max() < 1e-12
    assert np.abs(np.linalg.norm(q[:, 3:7], axis=1) - 1).max() < 1e-12
    h0 = fn.centroidal_momentum_matrix(q[0]) @ qd[0]
    h1 = fn.centroidal_momentum_matrix(q[-1]) @ qd[-1]
    assert np.abs(h1 - h0).max() < 1e-6 * max(1.0, np.abs(h0).max())


def mjcf_floating_mimic(seed):
    """A free body with three hinges and a slide, random bodies, frames and axes; hinge ``c`` follows hinge ``b``
    through a joint equality (``c = 0.1 - 0.7 b``, no refs)."""
    rng = np.random.default_rng(seed)

    def numbers(values):
        return " ".join(f"{float(x)!r}" for x in values)

    def inertial():
        quat = rng.normal(size=4)
        return (f'<inertial pos="{numbers(rng.uniform(-0.1, 0.1, 3))}" quat="{numbers(quat / np.linalg.norm(quat))}" '
                f'mass="{rng.uniform(0.5, 2)!r}" diaginertia="{numbers(rng.uniform(0.05, 0.1, 3))}"/>')  # fmt: skip

    def body(name, joint, inner=""):
        axis = rng.normal(size=3)
        return (f'<body name="{name}" pos="{numbers(rng.uniform(-0.3, 0.3, 3))}" euler="{numbers(rng.uniform(-1, 1, 3))}">'
                f'<joint name="{name}" type="{joint}" axis="{numbers(axis / np.linalg.norm(axis))}"/>{inertial()}{inner}</body>')  # fmt: skip

    tree = body("a", "hinge", body("b", "hinge", body("s", "slide"))) + body("c", "hinge")
    return (f'<mujoco><compiler angle="radian"/><worldbody><body name="base" pos="0 0 1"><freejoint name="root"/>'
            f'{inertial()}{tree}</body></worldbody>'
            '<equality><joint joint1="c" joint2="b" polycoef="0.1 -0.7 0 0 0"/></equality></mujoco>')


def test_a_floating_mimic_equals_mujocos_free_joint_and_equality():
    """MuJoCo's own model of the file: its equality holds at our configurations (``efc_pos`` 0), and our model is
    its M, bias and inverse dynamics (free joint mapped, tests/mujoco_reference.py) projected by G built here."""
    mujoco = pytest.importorskip("mujoco", reason="pip install -e '.[test]' (MuJoCo is a reference of mimic joints)")
    from mujoco_reference import MujocoReference, assert_projected

    from kanerobot.robot.mjcf import mjcf_from_text

    text = mjcf_floating_mimic(19)
    parsed = mjcf_from_text(text)
    robot = parsed.robot
    assert robot.floating and robot.joint_labels == ("a", "b", "s", "c") and [m.joint for m in robot.mimics] == ["c"]
    mmodel = mujoco.MjModel.from_xml_string(text)
    reference = MujocoReference(parsed, mmodel)
    values = {name: (0.0 if name.startswith(("FV", "FS")) else value) for name, value in robot.values.items()}
    fn = kr.derive(robot).numeric(values, backend="numpy")
    G = np.zeros((10, 9))  # the tree's speeds (base six, a, b, s, c) from the independent ones (base six, a, b, s)
    G[:9, :9] = np.eye(9)
    G[9, 7] = -0.7
    rng, data = np.random.default_rng(20), mujoco.MjData(mmodel)
    for _ in range(3):
        quat = rng.normal(size=4)
        q = fn.configuration(np.concatenate([rng.uniform(-1, 1, 3), quat / np.linalg.norm(quat), rng.uniform(-1, 1, 3)]))
        v, a = rng.normal(size=9), rng.normal(size=9)
        mmodel.opt.disableflags = 0
        data.qpos[:] = reference.qpos(q)
        mujoco.mj_forward(mmodel, data)
        assert data.nefc >= 1 and abs(data.efc_pos[0]) < 1e-12  # MuJoCo's equality holds there
        assert_projected(fn, reference, q, v, a, G, relative=True)


# ------------------------------------------------------------------ several leaders
#: finger_b = 0.6 shoulder - 1.3 elbow + 0.8 finger_a + 0.1: a linear coupling of several joints (an MJCF fixed tendon).
SEVERAL = ("finger_b", "shoulder", 0.6, 0.1, (("elbow", -1.3), ("finger_a", 0.8)))


@pytest.fixture(scope="module")
def several():
    free = [joint[:5] + (None,) for joint in JOINTS]
    text = gripper_urdf(5, free)
    tree = urdf_from_text(text)
    robot = kr.Robot.create(tree.name, tree.frames, links=tree.links, dynamics=tree.dynamics, values=tree.values,
                              base=tree.base, mimics=[SEVERAL])
    return text, robot, kr.derive(robot).numeric(without_friction(robot), backend="numpy")


def test_a_coupling_of_several_leaders_equals_the_free_tree_projected_by_hand(several):
    text, robot, fn = several
    assert robot.mimics == (MimicJoint(*SEVERAL),) and robot.dof == 4 and fn.nv == 4
    pmodel = pin.buildModelFromXML(text)
    data = pmodel.createData()
    G = np.zeros((5, 4))  # columns: shoulder, elbow, wrist, finger_a; rows: the five joints
    G[[0, 1, 2, 3], [0, 1, 2, 3]] = 1
    G[4] = [0.6, -1.3, 0, 0.8]
    rng = np.random.default_rng(9)
    for _ in range(3):
        qa = rng.uniform(-1, 1, 4)
        q = fn.configuration(qa)
        assert q[4] == pytest.approx(0.6 * qa[0] - 1.3 * qa[1] + 0.8 * qa[3] + 0.1, abs=1e-15)
        qd, qdd = rng.normal(size=4), rng.normal(size=4)
        pq = pinocchio_q(pmodel, robot, q)
        A = pin.crba(pmodel, data, pq)
        A = np.triu(A) + np.triu(A, 1).T
        tau = G.T @ pin.rnea(pmodel, data, pq, G @ qd, G @ qdd)
        assert np.allclose(fn.mass_matrix(q), G.T @ A @ G, rtol=0, atol=1e-9)
        assert np.allclose(fn.inverse_dynamics(q, qd, qdd), tau, rtol=0, atol=1e-9 * max(1.0, np.abs(tau).max()))
        for method in ("lagrange", "kane"):
            other = kr.derive(robot, method).numeric(without_friction(robot), backend="numpy")
            assert np.allclose(other.inverse_dynamics(q, qd, qdd), tau, rtol=0, atol=1e-9 * max(1.0, np.abs(tau).max()))
    q[4] += 1e-3
    with pytest.raises(kr.KaneRobotError, match=r"mimic joint finger_b is .*, not 0.6 \* shoulder \+ -1.3 \* elbow \+ 0.8 \* finger_a \+ 0.1"):
        fn.mass_matrix(q)


def test_a_mimic_of_a_coupling_of_several_leaders_is_resolved():
    robot = kr.Robot.create("chain", ARM.frames, mimics=[("4", "3", 2, 1), ("3", "1", 0.5, 0, (("2", -1),))])
    assert robot.mimics == (MimicJoint("4", "1", 1.0, 1, (("2", -2),)), MimicJoint("3", "1", 0.5, 0, (("2", -1),)))


def test_urdf_refuses_and_toml_keeps_a_coupling_of_several_leaders(several, tmp_path):
    _, robot, _ = several
    with pytest.raises(kr.RobotFileError) as info:
        kr.save(robot, tmp_path / "g.urdf")
    assert "mimic joint finger_b follows 3 joints (shoulder, elbow, finger_a)" in str(info.value) and "\n" not in str(info.value)
    assert not (tmp_path / "g.urdf").exists()
    kr.save(robot, tmp_path / "g.toml")
    assert kr.load(tmp_path / "g.toml").mimics == robot.mimics
    from kanerobot.report import summary

    assert "Mimic joints: finger_b = 0.6 * shoulder + -1.3 * elbow + 0.8 * finger_a + 0.1" in summary(robot)


# ------------------------------------------------------------------ the description
ARM = kr.load(kr.frames_path("rx90"))


def test_a_mimic_of_a_mimic_is_resolved():
    robot = kr.Robot.create("chain", ARM.frames, mimics=[("3", "2", 2, 0.5), ("4", "3", -3, 1)])
    assert robot.mimics == (MimicJoint("3", "2", 2, 0.5), MimicJoint("4", "2", -6, -0.5)) and robot.dof == 4


@pytest.mark.parametrize(
    "mimics, words",
    [
        ([("9", "1", 1, 0)], "mimic joint 9: mimic joint 9 is not a frame of the robot; a mimic couples revolute or prismatic joints"),
        ([("2", "x", 1, 0)], "mimic joint 2: its leader x is not a frame of the robot"),
        ([("2", "2", 1, 0)], "mimic joint 2 mimics itself: name another joint as its leader"),
        ([("2", "1", 1, 0), ("2", "3", 1, 0)], "mimic joint 2 mimics both 1 and 3: give it one coupling"),
        ([("2", "3", 1, 0), ("3", "2", 1, 0)], "mimic joints form a cycle (2 -> 3 -> 2): one of them must move on its own"),
        ([("2", "1", "k k", 0)], "multiplier of mimic joint 2"),
        ([("2",)], "give (joint, leader, multiplier, offset[, more])"),
        ([("2", "1", "th1", 0)], "multiplier of mimic joint 2 uses th1"),
        ([("2", "1", 1, 0, (("3", 1), ("1", 2)))], "mimic joint 2 names leader 1 twice: give each leader once, multipliers summed"),
        ([("2", "1", 1, 0, (("2", 1),))], "mimic joint 2 mimics itself"),
        ([("2", "1", 1, 0, (("x", 1),))], "mimic joint 2: its leader x is not a frame of the robot"),
        ([("2", "1", 1, 0, ("3",))], "mimic joint 2: more=('3',) must be (leader, multiplier) pairs"),
        ([("2", "1", 1, 0, (("3", "k k"),))], "multiplier of mimic joint 2 (leader 3)"),
    ],
    ids=["unknown joint", "unknown leader", "itself", "twice", "cycle", "bad multiplier", "short", "state leak",
         "leader twice", "itself among leaders", "unknown further leader", "not pairs", "bad further multiplier"],
)
def test_malformed_couplings_are_refused_in_one_line(mimics, words):
    with pytest.raises(kr.DescriptionError) as info:
        kr.Robot.create("bad", ARM.frames, mimics=mimics)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_a_mimic_joint_of_several_speeds_is_refused():
    ball = ball_tree()
    with pytest.raises(kr.DescriptionError, match="mimic joint 2: mimic joint 2 is spherical, not a joint of one speed"):
        kr.Robot.create("bad", ball.frames, mimics=[("2", "1", 1, 0)])
    with pytest.raises(kr.DescriptionError, match="mimic joint 4: its leader 3 is planar, not a joint of one speed"):
        kr.Robot.create("bad", ball.frames, mimics=[("4", "3", 1, 0)])


def test_structures_mimics_do_not_compose_with_say_so():
    fourbar = kr.load(kr.frames_path("fourbar"))
    robot = kr.Robot.create("coupled", fourbar.frames, loops=fourbar.loops, mimics=[("3", "1", 2, 0)])
    with pytest.raises(kr.KaneRobotError, match=r"mimic joints \(3\) with closed loops are not supported yet: load the robot with mimic='independent'"):
        kr.derive(robot)


# ------------------------------------------------------------------ the URDF reader
def test_a_mimic_on_a_fixed_joint_loads_and_says_so_once():
    extra = ('<link name="tool"/><joint name="flange" type="fixed"><parent link="hand"/><child link="tool"/>'
             '<mimic joint="elbow"/></joint>\n<link name="cam"/><joint name="lens" type="fixed"><parent link="hand"/>'
             '<child link="cam"/><mimic joint="elbow"/></joint>\n')  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        robot = urdf_from_text(gripper_urdf(extra=extra), path="g.urdf")
    said = [str(w.message) for w in caught if issubclass(w.category, KaneRobotWarning)]
    assert len(said) == 1 and said[0].startswith("g.urdf: <mimic> of fixed joints 'flange' (line ") and "ignored" in said[0]
    assert [m.joint for m in robot.mimics] == ["wrist", "finger_b"]


def test_a_mimic_naming_no_joint_is_read_as_a_joint_of_its_own():
    joints = [*JOINTS[:4], ("finger_b", "prismatic", "hand", "pad_b", "0 1 0", ("index_q1", 1.0, 0.0))]
    with pytest.warns(KaneRobotWarning, match="<mimic> naming no joint of the file ignored.*'finger_b' mimics 'index_q1'"):
        robot = urdf_from_text(gripper_urdf(joints=joints))
    assert [m.joint for m in robot.mimics] == ["wrist"] and robot.dof == 4


@pytest.mark.parametrize(
    "joints, options, line, words",
    [
        ([*JOINTS[:4], ("finger_b", "prismatic", "hand", "pad_b", "0 1 0", ("finger_b", 1.0, 0.0))], {}, 12,
         "mimic joint finger_b mimics itself"),
        ([*JOINTS[:4], ("finger_b", "prismatic", "hand", "pad_b", "0 1 0", ("finger_a", "two", 0.0))], {}, 12,
         'mimic of joint \'finger_b\': multiplier="\'two\'" must be 1 finite number'),
        ([*JOINTS[:3], ("finger_a", "fixed", "hand", "pad_a", "0 1 0", None), JOINTS[4]], {}, 12,
         "joint 'finger_b' mimics joint 'finger_a', which is fixed: name a moving joint, or remove <mimic>"),
        (JOINTS, {"mimic": "refuse"}, 10, "joint 'wrist' mimics joint 'elbow', and mimic joints are refused (mimic='refuse'): load with "
                                          "mimic='constraint' (--mimic constraint on the command line) to couple them"),
    ],
    ids=["itself", "multiplier", "fixed leader", "refuse"],
)
def test_malformed_mimics_name_the_line(joints, options, line, words):
    with pytest.raises(kr.RobotFileError) as info:
        urdf_from_text(gripper_urdf(joints=joints), path="bad.urdf", **options)
    assert str(info.value).startswith(f"bad.urdf:{line}: ") and words in str(info.value), str(info.value)


def test_the_command_line_loads_mimic_joints_by_default(tmp_path, capsys):
    path = tmp_path / "gripper.urdf"
    path.write_text(gripper_urdf())
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "3 degrees of freedom (5 joints: the mimic joints fix 2)" in out
    assert "Mimic joints: wrist = 1.7 * elbow + 0.3, finger_b = -1 * finger_a + 0" in out
    assert "--mimic constraint on the command line" in one_line_error(capsys, "info", path, "--mimic", "refuse")


# ------------------------------------------------------------------ example-robot-data
def compare_file(path, seed=0):
    """``(file, joints, mimic joints, dof, reference, worst error)`` of one URDF loaded with the default options."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", KaneRobotWarning)  # a mimic on a fixed joint, Alex's unknown leaders
        robot = kr.load(path, physical=False)
    model = kr.derive(robot)
    fn = model.numeric(without_friction(robot), backend="numpy", physical=False)
    try:
        pmodel, reference = pin.buildModelFromUrdf(str(path), mimic=True), "pinocchio mimic"
    except (RuntimeError, ValueError):
        pmodel, reference = pin.buildModelFromUrdf(str(path)), "pinocchio free, G by hand"
    if not robot.mimics:
        reference = "no moving mimic"
    independent = model.independent if robot.mimics else robot.joint_labels
    error = max(worst_error(fn, references(pmodel, robot, independent, *state), *state)
                for state in random_states(fn, np.random.default_rng(seed), 2))  # fmt: skip
    return path.stem, robot.nj, len(robot.mimics), robot.dof, reference, error


def compare_floating(path, seed=0):
    """``(file, dof, reference, worst error)`` of one URDF loaded with a floating base and its mimic joints."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", KaneRobotWarning)
        robot = kr.load(path, physical=False, floating=True)
    assert robot.floating and robot.mimics
    model = kr.derive(robot)
    fn = model.numeric(without_friction(robot), backend="numpy", physical=False)
    try:
        pmodel, reference = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer(), mimic=True), "pinocchio mimic"
    except (RuntimeError, ValueError):
        pmodel, reference = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()), "pinocchio free, G by hand"
    assert model.independent[0] == "0" and fn.nv == pmodel.nv - (len(robot.mimics) if reference.endswith("hand") else 0)
    error = max(worst_error(fn, references(pmodel, robot, model.independent, *state), *state)
                for state in random_states(fn, np.random.default_rng(seed), 2))  # fmt: skip
    return path.stem, robot.dof, reference, error


@pytest.mark.long
@pytest.mark.parametrize("name", ["talos_full_v2", "romeo"])
def test_humanoids_with_mimic_grippers_on_a_floating_base_equal_pinocchio(name):
    """Talos full and Romeo as humanoids: the free flyer and the mimic joints of their grippers together."""
    files = mimic_files()
    if name not in files:
        pytest.skip("example-robot-data is not installed: pip install -e '.[bench]'")
    row = compare_floating(files[name])
    print("{:12s} {:3d} DOF  {:26s} {:.1e}".format(*row))
    assert row[-1] < 1e-9


def mimic_files():
    robots = benchmark("urdf_vs_pinocchio").corpus()
    return {name: path for name, path in robots.items() if "<mimic" in path.read_text()}


def test_pandas_gripper_equals_pinocchio():
    """The default run's example-robot-data check: Panda's fingers (one mimics the other)."""
    files = mimic_files()
    if "panda" not in files:
        pytest.skip("example-robot-data is not installed: pip install -e '.[bench]'")
    _, _, mimics, dof, reference, error = compare_file(files["panda"])
    assert (mimics, dof, reference) == (1, 8, "pinocchio mimic") and error < 1e-9


@pytest.mark.long
def test_every_mimic_urdf_of_example_robot_data_loads_and_equals_pinocchio():
    files = mimic_files()
    if not files:
        pytest.skip("example-robot-data is not installed: pip install -e '.[bench]'")
    rows = [compare_file(path) for path in files.values()]
    for row in rows:
        print("{:28s} {:3d} joints {:3d} mimic {:3d} DOF  {:26s} {:.1e}".format(*row))
    assert len(rows) == 13 and all(row[-1] < 1e-9 for row in rows)


# ------------------------------------------------------------------ written back
def test_toml_and_urdf_files_carry_the_mimics(gripper, tmp_path):
    _, robot, _, _ = gripper
    kr.save(robot, tmp_path / "g.toml")
    assert "[[mimic]]" in (tmp_path / "g.toml").read_text()
    assert kr.load(tmp_path / "g.toml") == dataclasses.replace(robot, limits={})  # the format has no limits
    kr.save(robot, tmp_path / "g.urdf")
    again = kr.load(tmp_path / "g.urdf")
    assert again.mimics == robot.mimics and again.dof == 3


def test_a_mimic_table_is_checked_with_its_line(tmp_path):
    text = kr.robot.frames_toml.write_frames(kr.Robot.create("arm", ARM.frames, mimics=[("3", "2", "k", 0.5)]))
    assert 'multiplier = "k"' in text and kr.robot.frames_toml.frames_from_text(text).mimics[0].multiplier.name == "k"
    bad = text.replace('leader = "2"', 'leader = "7"')
    with pytest.raises(kr.RobotFileError) as info:
        kr.robot.frames_toml.frames_from_text(bad, path="arm.toml")
    line = bad.splitlines().index("[[mimic]]") + 1
    assert str(info.value).startswith(f"arm.toml:{line}: mimic joint 3: its leader 7 is not a frame of the robot"), str(info.value)


def test_khalil_kleinfinger_frames_keep_the_couplings_and_par_files_refuse_them(gripper, tmp_path):
    from kanerobot.robot.khalil_kleinfinger import to_khalil_kleinfinger

    _, robot, _, fn = gripper
    kk = to_khalil_kleinfinger(robot)
    assert kk.mimics == robot.mimics
    q = fn.configuration([0.3, -0.4, 0.02])
    other = kr.derive(kk).numeric(without_friction(kk), backend="numpy")
    assert np.allclose(other.mass_matrix(q), fn.mass_matrix(q), rtol=0, atol=1e-9)
    with pytest.raises(kr.RobotFileError, match=r"cannot write gripper as \.par: mimic joints wrist, finger_b have no place in a \.par file"):
        kr.save(kk, tmp_path / "g.par")
