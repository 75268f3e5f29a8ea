"""Joint offsets (issue 13): theta = th_j + c_j or r = r_j + c_j, in every structure and engine.

A robot whose joint j reads ``theta = th_j + c_j`` is the same machine as
the one reading ``theta = th_j``, seen through shifted coordinates: every
model of the first at q equals the model of the second at q + c.  The
programs are evaluated with the same random parameters on both sides, so
the check is independent of how each engine forms its equations.
"""

from dataclasses import replace

import numpy as np
import pytest
import sympy
from conftest import library

import kanerobot as kr
from kanerobot import geometry
from kanerobot.dynamics.flexible import motor_symbols
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import DescriptionError, KaneRobotError, RobotFileError
from kanerobot.robot.description import Frame, KKPlacement, Robot


def shifted(robot, offsets):
    """``robot`` with ``offsets[label]`` added to each listed joint's theta, r or q."""
    frames = []
    for frame in robot.frames:
        if frame.label in offsets:
            p = frame.placement
            if frame.is_kk:
                key = "theta" if frame.sigma == 0 else "r"
                p = replace(p, **{key: getattr(p, key) + offsets[frame.label]})
            else:
                p = replace(p, q=p.q + offsets[frame.label])
            frame = replace(frame, placement=p)
        frames.append(frame)
    return replace(robot, frames=tuple(frames))


def random_offsets(robot, rng):
    return {label: float(rng.uniform(-1.5, 1.5)) for label in robot.joint_labels}


def coordinate_shift(robot, offsets):
    """{symbol: c}: the joint variables and, for flexible joints, their motor angles."""
    shift = {robot.frame(label).q: c for label, c in offsets.items()}
    motors = motor_symbols(robot) if any(robot.joint_parameters[l]["eta"] == 1 for l in robot.joint_labels) else {}
    for label, symbols in motors.items():
        shift[symbols[0]] = offsets[label]
    return shift


def assert_programs_shift(plain_model, offset_model, shift, rng, names):
    """Each program of ``offset_model`` at x equals ``plain_model``'s at x + c."""
    for name in names:
        plain, moved = plain_model.program(name), offset_model.program(name)
        symbols = sorted(set(plain.inputs) | set(moved.inputs) | set(shift), key=str)
        values = {s: rng.uniform(0.2, 1.2) for s in symbols}
        args_plain = [values[s] + shift.get(s, 0.0) for s in symbols]
        args_moved = [values[s] for s in symbols]
        a = plain.to_function(symbols)(*args_plain)
        b = moved.to_function(symbols)(*args_moved)
        assert plain.outputs.keys() == moved.outputs.keys(), name
        scale = max(1.0, float(np.max(np.abs(a))))
        assert np.max(np.abs(a - b)) < 1e-9 * scale, (name, np.max(np.abs(a - b)))


STRUCTURES = [
    ("rx90", "newton-euler"),
    ("rx90", "kane"),
    ("rx90", "lagrange"),
    ("stanford", "newton-euler"),  # a prismatic joint: r3 + c
    ("fourbar", "newton-euler"),  # closed loop
    ("planar2flex", "newton-euler"),  # flexible joints
    ("satellite", "newton-euler"),  # floating base
    ("diffdrive", "newton-euler"),  # wheels, general frames
]


@pytest.mark.parametrize("name,method", STRUCTURES)
@pytest.mark.long
def test_every_model_sees_the_offset(name, method):
    rng = np.random.default_rng(13)
    robot = library(name)
    offsets = random_offsets(robot, rng)
    moved = shifted(robot, offsets)
    assert list(moved.q) == list(robot.q)
    plain_model, offset_model = kr.derive(robot, method), kr.derive(moved, method)
    assert offset_model.parameters == plain_model.parameters
    assert not {str(q) for q in moved.q} & set(offset_model.parameters)
    names = [n for n in ("inverse_dynamics", "mass_matrix", "gravity", "coriolis_matrix") if offset_model.has_program(n)]
    assert names
    assert_programs_shift(plain_model, offset_model, coordinate_shift(robot, offsets), rng, names)


def test_geometry_and_jacobian_see_the_offset():
    rng = np.random.default_rng(2)
    robot = library("stanford")
    offsets = random_offsets(robot, rng)
    moved = shifted(robot, offsets)
    values = {name: rng.uniform(0.1, 0.5) for name in robot.geometric_parameters}
    q = rng.uniform(-1, 1, robot.dof)
    c = np.array([offsets[label] for label in robot.joint_labels])
    T_plain = geometry.numeric_transform(robot, "0", "6", values)(q + c)
    T_moved = geometry.numeric_transform(moved, "0", "6", values)(q)
    np.testing.assert_allclose(T_moved, T_plain, atol=1e-12)


PAR = """(* Robotname = 'offset2' *)
NL = 2
NJ = 2
NF = 2
Type = 0
ant = {0,1}
sigma = {0,1}
b = {0,0}
d = {0,L1}
r = {0,r2 + L0}
gamma = {0,0}
alpha = {0,pi/2}
mu = {1,1}
theta = {th1 + 0.3,-pi/2}
G = {0,G2,0}
"""


def test_par_offsets_load_and_round_trip(tmp_path):
    path = tmp_path / "offset2.par"
    path.write_text(PAR)
    robot = kr.load(path)
    assert list(robot.q) == [sympy.Symbol("th1"), sympy.Symbol("r2")]
    assert robot.frame("1").offset == sympy.Float(0.3)
    assert robot.frame("2").offset == sympy.Symbol("L0")
    assert "L0" in robot.geometric_parameters and "th1" not in robot.geometric_parameters
    for suffix in (".par", ".toml"):
        out = tmp_path / f"again{suffix}"
        kr.save(robot, out)
        assert kr.load(out) == robot


def test_numeric_model_takes_the_joint_variable_not_the_offset_angle(tmp_path):
    """Defect 1: gravity([0]) == gravity([1]) when the offset hid th1."""
    path = tmp_path / "offset2.par"
    path.write_text(PAR)
    robot = kr.load(path)
    for method in ("newton-euler", "kane", "lagrange"):
        model = kr.derive(robot, method)
        assert "th1" not in model.parameters and "r2" not in model.parameters
        fn = model.numeric(random_parameters(robot, np.random.default_rng(1)), backend="numpy")
        g0, g1 = fn.gravity([0.0, 0.0]), fn.gravity([1.0, 0.0])
        # link 1 turns about z, gravity along y: its torque is -(MX1 cos + ...) G2, it changes with th1
        assert abs(g0[0] - g1[0]) > 0.1, method


def test_general_frame_offset_in_toml(tmp_path):
    text = """name = "gen1"
[[frame]]
label = "1"
antecedent = "0"
sigma = 0
R0 = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
P = [0, 0, 0]
axis = [0, 0, 1]
q = "q1 - pi/2"
"""
    path = tmp_path / "gen1.toml"
    path.write_text(text)
    robot = kr.load(path)
    assert list(robot.q) == [sympy.Symbol("q1")] and robot.frame("1").offset == -sympy.pi / 2
    T = geometry.numeric_transform(robot, "0", "1", {})([0.0])
    np.testing.assert_allclose(T[:2, :2], [[0, 1], [-1, 0]], atol=1e-15)
    kr.save(robot, tmp_path / "back.toml")
    assert kr.load(tmp_path / "back.toml") == robot


@pytest.mark.parametrize(
    "theta,words",
    [
        ("2*th1", "not 'joint variable + constant'"),
        ("a + b", "several symbols could be it: a, b"),
        ("th1 + th1**2", "appears in its offset"),
        ("sin(th1)", "not 'joint variable + constant'"),
    ],
)
def test_a_joint_expression_that_is_not_variable_plus_constant_is_refused(tmp_path, theta, words):
    path = tmp_path / "bad.par"
    path.write_text(PAR.replace("th1 + 0.3", theta))
    with pytest.raises(RobotFileError) as info:
        kr.load(path)
    message = str(info.value)
    assert message.startswith(f"{path}:14: theta of frame 1"), message
    assert words in message


def test_an_offset_may_not_use_another_joint_variable(tmp_path):
    path = tmp_path / "bad.par"
    path.write_text(PAR.replace("r2 + L0", "r2 + th1"))
    with pytest.raises(RobotFileError, match=r":10: r of frame 2 is r2 \+ th1: its offset uses the joint variable th1 of frame 1"):
        kr.load(path)


@pytest.mark.parametrize(
    "old,new,line,words",
    [
        ("d = {0,L1}", "d = {0,th1}", 9, "d of frame 2 uses th1"),
        ("G = {0,G2,0}", "G = {0,QP1,0}", 15, "G of the base uses QP1"),
    ],
)
def test_a_joint_variable_or_rate_outside_its_joint_is_refused(tmp_path, old, new, line, words):
    path = tmp_path / "bad.par"
    path.write_text(PAR.replace(old, new))
    with pytest.raises(RobotFileError) as info:
        kr.load(path)
    assert str(info.value).startswith(f"{path}:{line}: {words}"), str(info.value)


def test_derive_refuses_a_robot_whose_state_leaks_into_its_parameters():
    """The invariant holds for robots built without Robot.create too."""
    th1, th2 = sympy.symbols("th1 th2")
    arm = Robot.create("arm", [Frame("1", "0", 0, 1, KKPlacement(theta=th1)), Frame("2", "1", 0, 1, KKPlacement(d="L1", theta=th2))])
    frames = (arm.frames[0], replace(arm.frames[1], placement=KKPlacement(d=th1, theta=th2)))
    leaky = replace(arm, frames=frames)
    assert leaky.state_leaks()[0][2].startswith("d of frame 2 uses th1 (the joint variable of frame 1)")
    for method in ("newton-euler", "kane", "lagrange"):
        with pytest.raises(KaneRobotError, match="d of frame 2 uses th1"):
            kr.derive(leaky, method)
    with pytest.raises(DescriptionError, match="d of frame 2 uses th1"):
        Robot.create("arm", frames)


def _angle_gap(a, b):
    return float(np.max(np.abs(np.angle(np.exp(1j * (np.asarray(a) - np.asarray(b)))))))


@pytest.mark.parametrize("name,method", [("rx90", "auto"), ("rx90", "paul"), ("rx90", "numeric"), ("stanford", "auto")])
@pytest.mark.long
def test_inverse_geometric_reports_q_not_theta(name, method):
    rng = np.random.default_rng(21)
    robot = library(name)
    offsets = random_offsets(robot, rng)
    moved = shifted(robot, offsets)
    values = {p: rng.uniform(0.2, 0.6) for p in robot.geometric_parameters}
    q = rng.uniform(-1, 1, robot.dof)
    T = geometry.numeric_transform(moved, "0", "6", values)(q)
    sols = kr.inverse_geometric(moved, T, values, method=method)
    assert sols and min(_angle_gap(s, q) for s in sols) < 1e-9, sols.message
    pose = geometry.numeric_transform(moved, "0", "6", values)
    for s in sols:
        np.testing.assert_allclose(pose(s), T, atol=1e-9)


def test_the_closed_form_solver_of_a_robot_with_offsets_subtracts_them():
    from kanerobot.igm import derive_igm

    rng = np.random.default_rng(4)
    robot = library("rx90")
    moved = shifted(robot, random_offsets(robot, rng))
    values = {"D3": 0.45, "RL4": 0.38}
    q = rng.uniform(-1, 1, 6)
    T = geometry.numeric_transform(moved, "0", "6", values)(q)
    igm = derive_igm(moved)
    assert "with the joint offsets: th1 = th1 + " in str(igm)
    assert min(_angle_gap(s, q) for s in igm.solver(values)(T)) < 1e-9


@pytest.mark.parametrize("name", ["stanford", "fourbar"])
@pytest.mark.long
def test_identification_sees_the_offset(name):
    from kanerobot.identification import base_parameters, identification_model

    rng = np.random.default_rng(8)
    robot = library(name)
    offsets = random_offsets(robot, rng)
    moved = shifted(robot, offsets)
    plain, offset_model = identification_model(robot), identification_model(moved)
    assert plain.parameters == offset_model.parameters
    assert not {str(q) for q in moved.q} & set(offset_model.values_needed)
    symbols = sorted(set(plain.program.inputs) | set(offset_model.program.inputs) | set(moved.q), key=str)
    values = {s: rng.uniform(0.2, 1.2) for s in symbols}
    shift = coordinate_shift(robot, offsets)
    a = plain.program.to_function(symbols)(*[values[s] + shift.get(s, 0.0) for s in symbols])
    b = offset_model.program.to_function(symbols)(*[values[s] for s in symbols])
    np.testing.assert_allclose(b, a, atol=1e-9 * max(1.0, np.max(np.abs(a))))
    if robot.loops:
        return  # the base parameters of loops are the tree's, projected: stanford covers them
    numbers = {p: 0.4 for p in robot.geometric_parameters}
    for method in ("symbolic", "numeric"):
        grouped = base_parameters(robot, method=method, friction=False, values=numbers)
        assert [str(p) for p in base_parameters(moved, method=method, friction=False, values=numbers)] == [str(p) for p in grouped]


def test_files_write_the_joint_variable_first(tmp_path):
    path = tmp_path / "offset2.par"
    path.write_text(PAR)
    robot = kr.load(path)
    kr.save(robot, tmp_path / "out.par")
    assert "theta = {th1 + 0.3,-pi/2}" in (tmp_path / "out.par").read_text()
    assert "r = {0,r2 + L0}" in (tmp_path / "out.par").read_text()
    kr.save(robot, tmp_path / "out.toml")
    text = (tmp_path / "out.toml").read_text()
    assert 'theta = "th1 + 0.3"' in text and 'r = "r2 + L0"' in text
