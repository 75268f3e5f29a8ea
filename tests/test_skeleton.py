"""kanerobot.visual.skeleton: the numbers every view draws.

The drawn origins are checked against the geometric model (the symbolic
transforms of kanerobot.geometry, and the generated ``fn.pose`` programs
where a structure has them) for every robot of frames/; the polyline of a
Khalil-Kleinfinger frame against its parameters one by one; the loops
against the loop solver; the wheels against the ground; missing values
against the exact message.
"""

import json

import numpy
import pytest
import sympy
from conftest import assert_close, library, random_values, tree_robot
from scipy.spatial.transform import Rotation

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.geometry import direct_geometric_model, numeric_function, solve_loops, transform
from kanerobot.robot.description import Base, Frame, KKPlacement, Robot
from kanerobot.robot.joints import kk_transform
from kanerobot.visual.skeleton import skeleton


def geometry_values(robot, rng):
    """Random values of every geometric symbol, the wheels' radii included."""
    values = random_values(robot, rng)
    for wheel in robot.wheels:
        values.update({str(s): float(rng.uniform(0.4, 1.6)) for s in wheel.radius.free_symbols})
    return values


def random_configuration(robot, rng):
    """``(q, wT_0)``: random joints (after a random free-flyer pose for a floating robot)."""
    joints = rng.uniform(-numpy.pi, numpy.pi, robot.nj)
    if not robot.floating:
        return joints, numpy.eye(4)
    quaternion = rng.normal(size=4)
    quaternion /= numpy.linalg.norm(quaternion)
    base = numpy.eye(4)
    base[:3, :3] = Rotation.from_quat(quaternion).as_matrix()  # scalar last, as the free flyer's
    base[:3, 3] = rng.uniform(-2, 2, 3)
    return numpy.concatenate([base[:3, 3], quaternion, joints]), base


@pytest.mark.parametrize("name", kr.robot_names())
@pytest.mark.long
def test_drawn_frames_are_the_geometric_model(name, rng):
    robot = library(name)
    values = geometry_values(robot, rng)
    draw = skeleton(robot, values)
    cache = {}
    poses = {label: numeric_function(robot, transform(robot, "0", label, cache=cache), values) for label in robot.labels}
    Z = numeric_function(robot, robot.base.Z, values)(numpy.zeros(robot.nj))
    for _ in range(3):
        q, base = random_configuration(robot, rng)
        scene = draw(q)
        joints = q[7:] if robot.floating else q
        world = base if robot.floating else Z
        assert_close(scene.base, world, rtol=1e-12, what=f"{name} base")
        for label, pose in poses.items():
            assert_close(scene.poses[label], world @ pose(joints), rtol=1e-12, what=f"{name} frame {label}")
        for link in scene.links:  # every polyline ends at its frame's origin and starts at its antecedent's
            assert_close(link.points[-1], scene.origin(link.label), rtol=1e-12)
            assert_close(link.points[0], scene.origin(link.antecedent), rtol=1e-12)
    assert set(scene.poses) == set(robot.labels) | {"0"}


@pytest.mark.parametrize("name", ["rx90", "stanford", "satellite", "krang"])
def test_drawn_frames_are_the_generated_pose_programs(name, rng):
    """``fn.pose``: the generated programs of the numeric model (in the world frame for the satellite)."""
    robot = library(name)
    values = random_parameters(robot, rng)
    fn = kr.derive(robot).numeric(values, backend="numpy")
    draw = skeleton(robot, values)
    q, _ = random_configuration(robot, rng)
    scene = draw(q)
    for label in robot.labels:
        assert_close(scene.poses[label], fn.pose(label, q), rtol=1e-12, what=f"{name} frame {label}")


def test_a_khalil_kleinfinger_polyline_follows_b_d_and_r(rng):
    """Frame 4 of the tree robot has gamma, b, alpha and d; frame 3 is prismatic (r)."""
    robot = tree_robot()
    values = random_values(robot, rng)
    q = rng.uniform(-1, 1, robot.nj)
    scene = skeleton(robot, values)(q)
    for label in ("3", "4"):
        f = robot.frame(label)
        p = f.placement
        numbers = {sympy.Symbol(k): v for k, v in values.items()} | dict(zip(robot.q, q))
        gamma, b, alpha, d = (float(sympy.sympify(x).xreplace(numbers)) for x in (p.gamma, p.b, p.alpha, p.d))
        parent = scene.poses[f.antecedent]
        after_b = parent @ numpy.array(kk_transform(gamma, b, 0, 0, 0, 0), dtype=float)
        after_d = parent @ numpy.array(kk_transform(gamma, b, alpha, d, 0, 0), dtype=float)
        link = next(k for k in scene.links if k.label == label)
        assert link.kind == "kk" and link.points.shape == (4, 3)
        assert_close(link.points, [parent[:3, 3], after_b[:3, 3], after_d[:3, 3], scene.origin(label)], rtol=1e-12)
        assert abs(numpy.linalg.norm(link.points[1] - link.points[0]) - abs(b)) < 1e-12
        assert abs(numpy.linalg.norm(link.points[2] - link.points[1]) - abs(d)) < 1e-12
    r3 = q[2]  # prismatic joint 3: the last segment is r along z_3
    link3 = next(k for k in scene.links if k.label == "3")
    assert_close(link3.points[3] - link3.points[2], r3 * scene.poses["3"][:3, 2], rtol=1e-12)
    general = next(k for k in scene.links if k.label == "5")
    assert general.kind == "general" and general.points.shape == (2, 3)


def test_joint_axes_kinds_and_flags(rng):
    robot = tree_robot()
    scene = skeleton(robot, random_values(robot, rng))(rng.uniform(-1, 1, robot.nj))
    by_label = {j.label: j for j in scene.joints}
    assert [j.label for j in scene.joints] == list(robot.joint_labels)
    assert [by_label[k].kind for k in ("1", "3", "5", "6")] == ["revolute", "prismatic", "revolute", "prismatic"]
    assert_close(by_label["2"].axis, scene.poses["2"][:3, 2], rtol=1e-12)  # z of a KK frame
    R5 = scene.poses["5"][:3, :3]  # a general frame's axis (1, 2, 2)/3 in its own frame
    assert_close(by_label["5"].axis, R5 @ numpy.array([1, 2, 2]) / 3, rtol=1e-12)
    assert_close(by_label["6"].origin, scene.origin("6"), rtol=1e-12)
    assert all(j.active and not j.cut for j in scene.joints)
    assert [j.variable for j in scene.joints] == [str(v) for v in robot.q]


def test_loops_are_closed_from_the_active_joints():
    fourbar = library("fourbar")
    draw = skeleton(fourbar)
    guess = [-0.7, 0.7, -0.7]
    scene = draw([0.7], guess=guess)
    assert_close(scene.q, solve_loops(fourbar, {}, [0.7], guess=guess), rtol=1e-12)
    assert_close(scene.q, [0.7, -0.7, 0.7, -0.7], rtol=1e-9)  # the parallelogram
    [cut] = scene.cuts
    assert (cut.cut, cut.closing) == ("4", "5") and cut.gap < 1e-9
    assert_close(scene.origin("5"), scene.origin("4"), rtol=1e-9)
    assert [(j.label, j.active, j.cut) for j in scene.joints] == [("1", True, False), ("2", False, False), ("3", False, False), ("4", False, True)]
    opened = draw([0.7, 0.0, 0.0, 0.0])  # every joint given: drawn as given, the gap shows
    assert opened.cuts[0].gap == pytest.approx(numpy.linalg.norm(opened.origin("5") - opened.origin("4")))
    assert opened.cuts[0].gap > 0.1
    with pytest.raises(kr.KaneRobotError) as info:
        draw([0.1, 0.2])
    assert str(info.value) == (
        "q of fourbar needs 4 values (1, 2, 3, 4), or 1 (the active joints 1, the loops closed numerically), got 2"
    )


def test_sr400_closes_its_loop_at_rest(rng):
    robot = library("sr400")
    scene = skeleton(robot, random_values(robot, rng))()
    assert scene.cuts and all(c.gap < 1e-9 for c in scene.cuts)


def test_wheels_stand_on_the_ground(rng):
    """diffdrive: each wheel's centre is its radius above z = 0 whatever the posture, its axle the chassis' y."""
    robot = library("diffdrive")
    values = geometry_values(robot, rng)
    draw = skeleton(robot, values)
    for _ in range(3):
        q = rng.uniform(-2, 2, robot.nj)
        scene = draw(q)
        assert [w.joint for w in scene.wheels] == ["wr", "wl", "cw"]
        for w in scene.wheels:
            radius = values[str(robot.wheel(w.joint).radius)]
            assert w.radius == pytest.approx(radius, rel=1e-14) and w.kind == robot.wheel(w.joint).kind
            assert abs(w.centre[2] - radius) < 1e-12
            assert_close(w.centre, scene.origin(w.joint), rtol=1e-12)
        chassis_y = scene.poses["th"][:3, 1]
        for w in scene.wheels[:2]:
            assert_close(w.axis, chassis_y, rtol=1e-12)
        track = numpy.linalg.norm(scene.wheels[0].centre - scene.wheels[1].centre)
        assert abs(track - values["b"]) < 1e-12


def test_the_base_placement_z_is_drawn():
    """A symbolic fT0: every pose is Z 0T_j (direct_geometric_model(world=True))."""
    th1, L, h = sympy.symbols("th1 L h")
    Z = [0, -1, 0, 1, 1, 0, 0, 2, 0, 0, 1, "h", 0, 0, 0, 1]
    arm = Robot.create("raised", [Frame("1", "0", 0, 1, KKPlacement(d=L, theta=th1)), Frame("2", "1", 2, 0, KKPlacement(d=L))],
                       base=Base.from_values(Z=Z))
    scene = skeleton(arm, {"L": 0.5, "h": 3.0})([0.4])
    expected = direct_geometric_model(arm, "2", world=True).subs({th1: 0.4, L: 0.5, h: 3.0})
    assert_close(scene.poses["2"], numpy.array(expected, dtype=float), rtol=1e-12)
    assert_close(scene.base[:3, 3], [1, 2, 3], rtol=1e-12)


def test_missing_values_are_listed_with_how_to_give_them():
    with pytest.raises(kr.ParameterError) as info:
        skeleton(library("rx90"), {"D3": 0.5})
    assert str(info.value) == (
        "robot RX90: no value for the geometric parameter RL4: give it as values={'RL4': ...} in Python, "
        "or --set RL4=VALUE on the command line"
    )
    with pytest.raises(kr.ParameterError, match=r"^the value of D3 is 'long', not a number$"):
        skeleton(library("rx90"), {"D3": "long", "RL4": 1})
    draw = skeleton(library("rx90"), {"D3": 0.5, "RL4": 0.4, "M1": 3.0})  # other names are ignored
    assert draw.values == {"D3": 0.5, "RL4": 0.4}


def test_floating_base_configuration():
    robot = library("satellite")
    draw = skeleton(robot, {"D1": 0.3, "D3": 0.4, "RL1": 0.2})
    assert draw.coordinates == ("x", "y", "z", "qx", "qy", "qz", "qw", "1", "2", "3")
    scene = draw([1, 2, 3, 0, 0, 0, 2, 0, 0, 0])  # the quaternion is normalised
    assert_close(scene.base, [[1, 0, 0, 1], [0, 1, 0, 2], [0, 0, 1, 3], [0, 0, 0, 1]], rtol=1e-12)
    assert_close(scene.origin("1"), [1.3, 2, 3.2], rtol=1e-12)
    assert scene.floating
    with pytest.raises(kr.KaneRobotError, match=r"the base quaternion q\[3:7\] \(x y z w\) is zero"):
        draw([0] * 10)
    with pytest.raises(kr.KaneRobotError, match=r"^q of satellite needs 10 values \(x, y, z, qx, qy, qz, qw, 1, 2, 3\), got 3$"):
        draw([0, 0, 0])


def test_scene_as_json(rng):
    robot = library("fourbar")
    scene = skeleton(robot)([0.5], guess=[-0.5, 0.5, -0.5])
    data = json.loads(json.dumps(scene.as_dict()))
    assert_close(data["poses"]["4"], scene.poses["4"], rtol=1e-15)
    assert [(j["label"], j["variable"]) for j in data["joints"]] == [("1", "th1"), ("2", "th2"), ("3", "th3"), ("4", "th4")]
    assert data["cuts"][0]["cut"] == "4" and data["name"] == "fourbar"
    assert scene.size == pytest.approx(float(numpy.ptp(scene.points(), axis=0).max()))
