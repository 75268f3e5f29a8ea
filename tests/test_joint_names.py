"""Issue 24, point 6: a URDF's joint names are the labels exactly (``joint_0.0``,
``l-hip.y``), the symbols and program variables take the frames' stems
(``q_l_hip_y``, ``GAMl_hip_y``); two names with one stem (``a.b``, ``a-b``)
get two stems.  The numbers are checked against pinocchio's RNEA on the same
file and against the same robot with its names sanitised by hand."""

import importlib.util
import re
import shutil
import subprocess

import numpy as np
import pytest

import kanerobot as kr
from kanerobot.cli import main as cli
from kanerobot.errors import DescriptionError
from kanerobot.robot.description import Frame, KKPlacement, Robot
from kanerobot.robot.names import label_stem
from kanerobot.robot.urdf import parse_urdf, urdf_from_text
from kanerobot.robot.urdf_writer import write_urdf

NAMES = ("joint_0.0", "l-hip.y", "panda_joint1", "a.b", "a-b")
HAND = ("joint_0_0", "l_hip_y", "panda_joint1", "a_b", "a_b_2")  # the same names, sanitised by hand

URDF = """<robot name="dotted">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="0.1 0.02 -0.3" rpy="0.1 0.2 0.3"/><mass value="2"/>
    <inertia ixx="0.1" ixy="0.01" ixz="0.002" iyy="0.12" iyz="0.003" izz="0.05"/></inertial></link>
  <link name="l2"><inertial><origin xyz="0.05 0.1 0.2"/><mass value="1.5"/>
    <inertia ixx="0.03" ixy="0" ixz="0" iyy="0.04" iyz="0.001" izz="0.02"/></inertial></link>
  <link name="l3"><inertial><origin xyz="0 0.1 0.05"/><mass value="0.8"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.015"/></inertial></link>
  <link name="l4"><inertial><origin xyz="0.02 0 0.1"/><mass value="0.5"/>
    <inertia ixx="0.005" ixy="0" ixz="0" iyy="0.006" iyz="0" izz="0.004"/></inertial></link>
  <link name="l5"><inertial><origin xyz="0.01 0.03 0"/><mass value="0.3"/>
    <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.003" iyz="0" izz="0.001"/></inertial></link>
  <joint name="J0" type="revolute"><parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.5"/><axis xyz="0 0 1"/><limit lower="-2" upper="2" velocity="3" effort="50"/></joint>
  <joint name="J1" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.1 0 0.3" rpy="1.5707963267948966 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" velocity="3" effort="50"/></joint>
  <joint name="J2" type="prismatic"><parent link="l2"/><child link="l3"/>
    <origin xyz="0 0.2 0" rpy="0 0.3 0"/><axis xyz="1 0 0"/><limit lower="-0.5" upper="0.5" velocity="1" effort="100"/></joint>
  <joint name="J3" type="revolute"><parent link="l3"/><child link="l4"/>
    <origin xyz="0 0 0.2"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" velocity="3" effort="50"/></joint>
  <joint name="J4" type="revolute"><parent link="l2"/><child link="l5"/>
    <origin xyz="0.2 0 0"/><axis xyz="1 0 0"/><limit lower="-1" upper="1" velocity="3" effort="50"/></joint>
</robot>
"""


def text_with(names):
    text = URDF
    for k, name in enumerate(names):
        text = text.replace(f'name="J{k}"', f'name="{name}"')
    return text


@pytest.fixture(scope="module")
def dotted_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("names") / "dotted.urdf"
    path.write_text(text_with(NAMES))
    return path


@pytest.fixture(scope="module")
def robots(dotted_file):
    return kr.load(dotted_file), urdf_from_text(text_with(HAND))


def states(n, count=4, seed=7):
    rng = np.random.default_rng(seed)
    return [tuple(rng.uniform(-1.5, 1.5, n) for _ in range(3)) for _ in range(count)]


def test_labels_are_the_names_and_symbols_take_stems(robots, dotted_file):
    robot, _ = robots
    assert robot.joint_labels == NAMES
    assert [robot.stems[label] for label in NAMES] == list(HAND)
    assert [str(robot.frame(label).q) for label in NAMES] == [f"q_{stem}" for stem in HAND]
    assert str(robot.joint_parameters["l-hip.y"]["GAM"]) == "GAMl_hip_y"
    assert robot.values["Ma_b_2"] == 0.3 and robot.values["PZjoint_0_0"] == 0.5
    assert dict(parse_urdf(dotted_file).joint_names) == {name: name for name in NAMES}
    assert set(robot.limits) == set(NAMES)


# every engine on numpy; the C backend on Newton-Euler by default, on Kane and Lagrange with -m slow (the
# names reach C through the same printer: one compiled engine says it, and each costs a compile)
CASES = [pytest.param(backend, method, marks=pytest.mark.slow) if backend == "c" and method != "newton-euler" else (backend, method)
         for backend in ("numpy", "c") for method in ("newton-euler", "kane", "lagrange")]  # fmt: skip


@pytest.mark.parametrize(("backend", "method"), CASES)
@pytest.mark.long
def test_same_numbers_as_the_robot_named_by_hand(robots, method, backend):
    if backend == "c" and shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("needs a C compiler")
    robot, hand = robots
    f = kr.derive(robot, method=method).numeric(robot.values, backend=backend)
    g = kr.derive(hand, method="newton-euler").numeric(hand.values, backend="numpy")
    for q, qd, qdd in states(robot.nj):
        assert np.allclose(f.inverse_dynamics(q, qd, qdd), g.inverse_dynamics(q, qd, qdd), rtol=0, atol=1e-12)
        assert np.allclose(f.mass_matrix(q), g.mass_matrix(q), rtol=0, atol=1e-12)


def test_inverse_dynamics_is_pinocchios_rnea(robots, dotted_file):
    if importlib.util.find_spec("pinocchio") is None:
        pytest.skip("needs pinocchio: pip install pin")
    import pinocchio

    robot, _ = robots
    model = pinocchio.buildModelFromUrdf(str(dotted_file))
    data = model.createData()
    order = [model.idx_qs[model.getJointId(name)] for name in NAMES]  # pinocchio's q index of each of our joints
    assert [model.names[model.getJointId(name)] for name in NAMES] == list(NAMES)
    f = kr.derive(robot).numeric(robot.values)
    for q, qd, qdd in states(robot.nj):
        Q, QD, QDD = (np.zeros(model.nq) for _ in range(3))
        Q[order], QD[order], QDD[order] = q, qd, qdd
        tau = pinocchio.rnea(model, data, Q, QD, QDD)
        assert np.allclose(f.inverse_dynamics(q, qd, qdd), tau[order], rtol=0, atol=1e-10)


def test_direct_dynamics_and_flexible_joints(robots):
    robot, hand = robots
    f, g = (kr.derive(r).numeric(r.values) for r in (robot, hand))
    q, qd, tau = states(robot.nj, 1)[0]
    assert np.allclose(f.direct_dynamics(q, qd, tau), g.direct_dynamics(q, qd, tau), rtol=0, atol=1e-12)


def test_code_export_has_identifiers_and_compiles(dotted_file, tmp_path):
    out = tmp_path / "idm.py"
    assert cli(["model", str(dotted_file), "idm", "--lang", "python", "-o", str(out)]) == 0
    text = out.read_text()
    compile(text, str(out), "exec")
    assert "GAMl_hip_y" in text and "q_a_b_2" in text and "l-hip.y" not in re.sub(r"#.*|\"\"\"[\s\S]*?\"\"\"", "", text)
    c_file = tmp_path / "idm.c"
    assert cli(["model", str(dotted_file), "idm", "--lang", "c", "-o", str(c_file)]) == 0
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler:
        subprocess.run([compiler, "-fsyntax-only", str(c_file)], check=True)


def test_identify_reads_columns_with_the_names(robots, tmp_path):
    robot, _ = robots
    f = kr.derive(robot).numeric(robot.values)
    t = np.linspace(0, 4, 400)
    k = np.arange(1, robot.nj + 1)[None, :]
    q = 0.6 * np.sin(0.9 * k * t[:, None] + k)
    qd = 0.6 * 0.9 * k * np.cos(0.9 * k * t[:, None] + k)
    qdd = -0.6 * (0.9 * k) ** 2 * np.sin(0.9 * k * t[:, None] + k)
    tau = np.array([f.inverse_dynamics(*row) for row in zip(q, qd, qdd)])
    path = tmp_path / "run.csv"
    header = ["t"] + [f"q_{n}" for n in NAMES] + [f"tau_{n}" for n in NAMES] + [f"qd_{n}" for n in NAMES] + [f"qdd_{n}" for n in NAMES]
    np.savetxt(path, np.column_stack([t, q, tau, qd, qdd]), delimiter=",", header=",".join(header), comments="")
    result = kr.identify(robot, path, robot.values)
    assert result.relative_residual < 1e-8  # the torques are the model's: the fit is exact
    shuffled = tmp_path / "shuffled.csv"  # columns found by name, in any order
    order = [0] + [1 + k for k in (3, 0, 4, 1, 2)] + [6 + k for k in (3, 0, 4, 1, 2)] + list(range(11, 21))
    np.savetxt(shuffled, np.column_stack([t, q, tau, qd, qdd])[:, order], delimiter=",", header=",".join(header[k] for k in order), comments="")
    assert kr.identify(robot, shuffled, robot.values).relative_residual < 1e-8


def test_urdf_round_trip_keeps_the_names(robots):
    robot, _ = robots
    back = urdf_from_text(write_urdf(robot))
    assert back.joint_labels == NAMES
    f, g = (kr.derive(r).numeric(r.values) for r in (robot, back))
    q, qd, qdd = states(robot.nj, 1)[0]
    assert np.allclose(f.inverse_dynamics(q, qd, qdd), g.inverse_dynamics(q, qd, qdd), rtol=0, atol=1e-12)


def test_create_refuses_two_labels_with_one_stem():
    th = [kr.robot.expressions.symbol(f"th{k}") for k in (1, 2)]
    frames = [Frame("a.b", "0", 0, 1, KKPlacement(theta=th[0])), Frame("a-b", "a.b", 0, 1, KKPlacement(theta=th[1]))]
    with pytest.raises(DescriptionError, match=r"frames a\.b and a-b have the same stem 'a_b'.*stem='a_b_2'"):
        Robot.create("clash", frames)
    frames[1] = Frame("a-b", "a.b", 0, 1, KKPlacement(theta=th[1]), stem="a_b_2")
    robot = Robot.create("ok", frames)
    assert dict(robot.stems) == {"0": "0", "a.b": "a_b", "a-b": "a_b_2"} and str(robot.dynamics["a-b"]["XX"]) == "XXa_b_2"


@pytest.mark.parametrize("label", ["", "a b", "tab\there", "0"])
def test_create_refuses_labels_that_are_no_names(label):
    with pytest.raises(DescriptionError, match="frame label"):
        Robot.create("bad", [Frame(label, "0", 0, 1, KKPlacement(theta=kr.robot.expressions.symbol("th1")))])


def test_stem_is_the_identity_on_todays_labels():
    assert [label_stem(x) for x in ("1", "4l", "wrist_1", "joint_0.0", "é")] == ["1", "4l", "wrist_1", "joint_0_0", "_"]
    arm = kr.load(kr.frames_path("rx90"))
    assert all(arm.stems[label] == label for label in arm.labels)
