"""kr.save(robot, "x.urdf"): write_urdf, and URDF -> kanerobot -> URDF round trips.

Every check compares numbers reached by two paths: the robot as described
(its frames' transforms, its SYMORO parameters, its Newton-Euler models) and
the robot read back from the written URDF.  The reader is tested against an
independent implementation of URDF's semantics in tests/test_urdf.py.
"""

import re
import runpy
from pathlib import Path

import numpy as np
import pytest
import sympy
from conftest import assert_close

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.geometry import numeric_function, transform
from kanerobot.robot.description import BASE, DYNAMIC_NAMES, Frame, KKPlacement, Robot
from kanerobot.robot.urdf import parse_urdf, rpy_matrix, urdf_from_text
from kanerobot.robot.urdf_writer import rpy_angles, write_urdf

ROOT = Path(__file__).resolve().parents[1]
TOL = 1e-12

# ------------------------------------------------------------- small URDFs
BRANCHED = """<robot name="branched">
  <link name="base"/>
  <link name="upper"><inertial><origin xyz="0.1 -0.05 0.3" rpy="0.2 -0.4 1.0"/><mass value="3.5"/>
    <inertia ixx="0.09" ixy="0.004" ixz="-0.002" iyy="0.07" iyz="0.001" izz="0.05"/></inertial></link>
  <link name="lower"><inertial><origin xyz="0 0 -0.25"/><mass value="1.2"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.004"/></inertial></link>
  <link name="slider"><inertial><origin xyz="0.05 0 0" rpy="0 1.5707963267948966 0"/><mass value="0.7"/>
    <inertia ixx="0.003" ixy="0.0001" ixz="0" iyy="0.0025" iyz="0" izz="0.0015"/></inertial></link>
  <link name="spacer"/>
  <link name="tool"><inertial><origin xyz="0 0.02 0.03"/><mass value="0.3"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.0005"/></inertial></link>
  <link name="side"><inertial><origin xyz="0.1 0.1 0" rpy="0.3 0.2 0.1"/><mass value="0.9"/>
    <inertia ixx="0.004" ixy="-0.0003" ixz="0.0002" iyy="0.005" iyz="0.0001" izz="0.003"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.4" rpy="0 0 0.3"/><axis xyz="0 0 1"/>
    <limit lower="-2.5" upper="2.5" velocity="3" effort="80"/><dynamics damping="0.3" friction="0.1"/></joint>
  <joint name="elbow" type="continuous"><parent link="upper"/><child link="lower"/>
    <origin xyz="0.05 0.1 0.6" rpy="1.2 -0.7 0.4"/><axis xyz="0.3 -0.5 0.8"/><dynamics damping="0.2"/></joint>
  <joint name="slide" type="prismatic"><parent link="lower"/><child link="slider"/>
    <origin xyz="0 0 -0.5" rpy="0 1.5707963267948966 0"/><axis xyz="1 1 0"/>
    <limit lower="-0.2" upper="0.3" velocity="1" effort="40"/></joint>
  <joint name="spacer_joint" type="fixed"><parent link="slider"/><child link="spacer"/>
    <origin xyz="0.1 0 0" rpy="3.141592653589793 0 0"/></joint>
  <joint name="flange" type="fixed"><parent link="spacer"/><child link="tool"/>
    <origin xyz="0 0 0.05" rpy="0.1 0.2 -0.3"/></joint>
  <joint name="side" type="revolute"><parent link="upper"/><child link="side"/>
    <origin xyz="-0.1 0.2 0.1" rpy="-1.5707963267948966 0 2.0"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" velocity="2" effort="10"/></joint>
</robot>
"""

# a chain hanging from a heavy root link (a free body when floating) through a fixed joint
TORSO = """<robot name="torso">
  <link name="pelvis"><inertial><origin xyz="0 0 0.1"/><mass value="8"/>
    <inertia ixx="0.2" ixy="0" ixz="0" iyy="0.25" iyz="0" izz="0.15"/></inertial></link>
  <link name="chest"><inertial><origin xyz="0.02 0 0.2" rpy="0 0.1 0"/><mass value="5"/>
    <inertia ixx="0.1" ixy="0.001" ixz="0" iyy="0.12" iyz="0" izz="0.08"/></inertial></link>
  <link name="head"><inertial><origin xyz="0 0 0.1"/><mass value="2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.008"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0 -0.2 0"/><mass value="1.5"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.003" iyz="0" izz="0.02"/></inertial></link>
  <joint name="waist" type="fixed"><parent link="pelvis"/><child link="chest"/><origin xyz="0 0 0.3" rpy="0 0 0.5"/></joint>
  <joint name="neck" type="revolute"><parent link="chest"/><child link="head"/>
    <origin xyz="0 0 0.45"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" velocity="2" effort="5"/></joint>
  <joint name="shoulder" type="continuous"><parent link="chest"/><child link="arm"/>
    <origin xyz="0 -0.2 0.4" rpy="0.3 0 0"/><axis xyz="0 1 0"/></joint>
</robot>
"""


# ------------------------------------------------------------- comparisons
def frame_transforms(robot, values):
    """{label: function q -> 0T_label} of every frame, from the robot's own description."""
    return {label: numeric_function(robot, transform(robot, BASE, label), values) for label in robot.labels}


def random_q(rng, robot, floating=False):
    q = rng.uniform(-np.pi, np.pi, len(robot.joint_labels))
    if floating:
        quaternion = rng.normal(size=4)
        q = np.concatenate([rng.uniform(-1, 1, 3), quaternion / np.linalg.norm(quaternion), q])
    return q


def parameter_values(robot, values):
    """{(label, name): float} of every SYMORO parameter of every link (0 for frames that carry none);
    friction only of moving joints (a fixed frame's FV, FS act on nothing: not written)."""
    out = {}
    for label in (BASE,) + robot.labels:
        table = robot.dynamics.get(label, dict.fromkeys(DYNAMIC_NAMES, 0))
        moving = label != BASE and robot.frame(label).is_joint
        for name in DYNAMIC_NAMES:
            if name in ("FV", "FS") and not moving:
                continue
            out[label, name] = float(sympy.sympify(table[name]).subs(values))
    return out


def assert_same_kinematics(a, values_a, b, values_b, floating=False):
    assert a.joint_labels == b.joint_labels and set(a.labels) == set(b.labels)
    ta, tb = frame_transforms(a, values_a), frame_transforms(b, values_b)
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = random_q(rng, a)[: len(a.joint_labels)]
        for label in a.labels:
            A, B = ta[label](q), tb[label](q)
            assert np.abs(A - B).max() <= TOL, (label, A, B)


def assert_same_parameters(a, values_a, b, values_b, links=None):
    pa, pb = parameter_values(a, values_a), parameter_values(b, values_b)
    for key in pa:
        if links is None or key[0] in links:
            assert abs(pa[key] - pb[key]) <= TOL * max(1.0, abs(pa[key])), (key, pa[key], pb[key])


def assert_same_models(a, values_a, b, values_b, floating=False, states=3):
    fa = kr.derive(a).numeric(values_a, backend="numpy")
    fb = kr.derive(b).numeric(values_b, backend="numpy")
    rng = np.random.default_rng(11)
    nv = len(a.joint_labels) + (6 if floating else 0)
    worst = 0.0
    for _ in range(states):
        q = random_q(rng, a, floating)
        qd, qdd = rng.uniform(-2, 2, nv), rng.uniform(-3, 3, nv)
        qd[np.abs(qd) < 0.1] = 0.5  # Coulomb friction's sign well defined
        for x, y in ((fa.inverse_dynamics(q, qd, qdd), fb.inverse_dynamics(q, qd, qdd)), (fa.mass_matrix(q), fb.mass_matrix(q))):
            error = np.abs(np.asarray(x) - np.asarray(y)).max() / max(1.0, np.abs(x).max())
            worst = max(worst, error)
    assert worst <= TOL, worst
    return worst


def read_back(robot, tmp_path, name="robot.urdf", floating=False, **options):
    path = tmp_path / name
    if options:
        path.write_text(write_urdf(robot, path, **options))
    else:
        kr.save(robot, path)
    return parse_urdf(path, floating=floating)


def assert_round_trip(robot, values, tmp_path, states=3):
    """``robot`` written with ``values`` and read back: the same frames, parameters and models; the robot read back."""
    back = read_back(robot, tmp_path, values=values).robot
    assert_same_kinematics(robot, values, back, back.values)
    assert_same_parameters(robot, values, back, back.values)
    assert_same_models(robot, values, back, back.values, states=states)
    return back


# ------------------------------------------------------------------ tests
def test_rpy_angles_invert_rpy_matrix():
    rng = np.random.default_rng(2)
    for _ in range(50):
        angles = rng.uniform(-np.pi, np.pi, 3) * np.array([1, 0.5, 1])
        assert np.abs(rpy_matrix(*rpy_angles(rpy_matrix(*angles))) - rpy_matrix(*angles)).max() < 1e-14
    for pitch in (np.pi / 2, -np.pi / 2):  # gimbal lock: roll folded into yaw
        R = rpy_matrix(0.7, pitch, -0.4)
        assert np.abs(rpy_matrix(*rpy_angles(R)) - R).max() < 1e-14


@pytest.mark.parametrize("text", [BRANCHED, TORSO], ids=["branched", "torso"])
@pytest.mark.long
def test_urdf_round_trip_fixed(text, tmp_path):
    first = urdf_from_text(text)
    second = read_back(first, tmp_path).robot
    assert second.labels == first.labels and second.links == first.links
    assert_same_kinematics(first, first.values, second, second.values)
    assert_same_parameters(first, first.values, second, second.values)
    assert_same_models(first, first.values, second, second.values)


def test_urdf_round_trip_floating(tmp_path):
    first = urdf_from_text(TORSO, floating=True)
    assert first.floating and "waist" not in first.links
    text = write_urdf(first)
    assert "free flyer is not written" in text and 'type="floating"' not in text
    second = urdf_from_text(text, floating=True)
    assert_same_kinematics(first, first.values, second, second.values)
    assert_same_parameters(first, first.values, second, second.values)
    assert_same_models(first, first.values, second, second.values, floating=True)


def test_limits_and_friction_written(tmp_path):
    parsed = parse_urdf_text(BRANCHED, tmp_path)
    text = write_urdf(parsed.robot, limits=parsed.limits)
    back = parse_urdf_text(text, tmp_path, "back.urdf")
    assert dict(back.limits) == {label: dict(limit) for label, limit in parsed.limits.items()}
    assert '<joint name="shoulder" type="revolute">' in text and '<joint name="elbow" type="continuous">' in text
    assert '<dynamics damping="0.3" friction="0.1"/>' in text and '<dynamics damping="0.2" friction="0.0"/>' in text
    # the robot's own limits by default; with none, a revolute joint is continuous (URDF requires <limit> on a revolute joint)
    assert '<joint name="shoulder" type="revolute">' in write_urdf(parsed.robot)
    assert '<joint name="shoulder" type="continuous">' in write_urdf(parsed.robot, limits={})
    with pytest.raises(kr.RobotFileError, match="limits given for 'spacer_joint', which is not a joint of the robot"):
        write_urdf(parsed.robot, limits={"spacer_joint": {"lower": 0.0}})


def parse_urdf_text(text, folder, name="in.urdf"):
    path = folder / name
    path.write_text(text)
    return parse_urdf(path)


def test_massless_links_have_no_inertial():
    text = write_urdf(urdf_from_text(BRANCHED))
    assert '<link name="link_spacer_joint"/>' in text and '<link name="link_0"/>' in text
    assert text.count("<inertial>") == 5


def test_rx90_round_trip_with_offsets_and_models(tmp_path):
    """RX-90 (Khalil-Kleinfinger, alpha = pi/2 twists): frames, parameters and models equal after reading back."""
    robot = kr.load(kr.frames_path("rx90"))
    values = random_parameters(robot, np.random.default_rng(7), rotor=False, wrench=False)
    values["G3"] = -9.81
    assert_round_trip(robot, values, tmp_path)


def offset_robot():
    """KK frames with joint offsets (theta = th2 - pi/2, r = r3 + L0), gamma/b and a fixed end frame."""
    th1, th2, r3, th4 = sympy.symbols("th1 th2 r3 th4")
    frames = [
        Frame("1", "0", 0, 1, KKPlacement(theta=th1, r="L1")),
        Frame("2", "1", 0, 1, KKPlacement(alpha=sympy.pi / 2, d="D2", theta=th2 - sympy.pi / 2)),
        Frame("3", "2", 1, 1, KKPlacement(alpha=-sympy.pi / 2, theta=0.3, r=r3 + sympy.Symbol("L0"))),
        Frame("4", "3", 0, 1, KKPlacement(gamma=0.4, b="B4", alpha=0.7, d=0.1, theta=th4 + 1.1, r=0.2)),
        Frame("5", "4", 2, 0, KKPlacement(gamma=-0.2, b=0.05, alpha=0.3, d=0.02, theta=0.5, r=0.1)),
    ]
    robot = Robot.create("offsets", frames, links=["1", "2", "3", "4", "5"], base=kr.Base.from_values(G=[0, 0, "G3"]))
    values = random_parameters(robot, np.random.default_rng(3), rotor=False, wrench=False)
    values["G3"] = -9.81
    return robot, values


def test_offsets_are_folded_into_the_origin(tmp_path):
    robot, values = offset_robot()
    assert robot.has_offsets
    back = assert_round_trip(robot, values, tmp_path)
    assert back.joint_labels == robot.joint_labels and not back.has_offsets


@pytest.mark.slow  # 7 s; test_krang_example_urdf_gives_the_same_a_c_q reads Krang's URDF by default
def test_krang_round_trip(tmp_path):
    robot = kr.load(kr.frames_path("krang"))
    values = random_parameters(robot, np.random.default_rng(19), rotor=False, wrench=False)
    values["G3"] = -9.81
    assert_round_trip(robot, values, tmp_path, states=2)


def test_satellite_floating_round_trip(tmp_path):
    robot = kr.load(kr.frames_path("satellite"))
    values = random_parameters(robot, np.random.default_rng(23), rotor=False, wrench=False)
    values.update(G1=0.0, G2=0.0, G3=-9.81)  # the reader's gravity; URDF holds none
    text = write_urdf(robot, values=values)
    back = urdf_from_text(text, floating=True)
    assert back.floating and back.joint_labels == robot.joint_labels
    assert_same_parameters(robot, values, back, back.values)
    assert_same_kinematics(robot, values, back, back.values)
    assert_same_models(robot, values, back, back.values, floating=True)


# ------------------------------------------------------------------ refusals
def test_closed_loops_and_wheels_are_refused_and_nothing_is_written(tmp_path):
    for name, words in (("sr400", r"it has closed loops \(cut joints 9-10\); a URDF is a tree: save it as .par or .toml"),
                        ("diffdrive", r"it is a wheeled robot \(wheels rolling on the ground have no URDF form\)")):
        robot = kr.load(kr.frames_path(name))
        target = tmp_path / f"{name}.urdf"
        with pytest.raises(kr.RobotFileError, match=f"{target}: cannot write robot {robot.name} as URDF: {words}"):
            kr.save(robot, target)
        assert list(tmp_path.iterdir()) == []


def test_missing_value_names_the_symbol_and_leaves_the_old_file(tmp_path):
    robot = kr.load(kr.frames_path("rx90"))
    target = tmp_path / "rx90.urdf"
    target.write_text("old")
    values = random_parameters(robot, np.random.default_rng(1), rotor=False, wrench=False)
    del values["D3"]
    with pytest.raises(kr.RobotFileError, match=r"cannot write robot RX90 as URDF: no value for D3: give it in robot.values or values=\{\.\.\.\}$"):
        write_urdf(robot, target, values=values)
    with pytest.raises(kr.RobotFileError, match=r"rx90.urdf: cannot write robot RX90 as URDF: no value for CX6, CY6, CZ6, D3, FS1, "):
        kr.save(robot, target)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["rx90.urdf"]


def test_rotor_inertia_wrench_and_massless_first_moments_are_refused():
    robot = kr.load(kr.frames_path("rx90"))
    values = random_parameters(robot, np.random.default_rng(1), rotor=False, wrench=False)
    with pytest.raises(kr.RobotFileError, match=r"link 2 has rotor inertia IA = 0.5 and URDF has none: set it to 0 \(values=\{'IA2': 0\}\)"):
        write_urdf(robot, values={**values, "IA2": 0.5})
    with pytest.raises(kr.RobotFileError, match=r"link 6 has external wrench FX = 2 and URDF has none"):
        write_urdf(robot, values={**values, "FX6": 2.0})
    with pytest.raises(kr.RobotFileError, match=r"link 3 has no mass \(M = 0\) but first moments MS = \[0.1, "):
        write_urdf(robot, values={**values, "M3": 0.0, "MX3": 0.1})


# ------------------------------------------------------------------ Krang example
def krang_example_values():
    """The values examples/krang/krang.urdf was written with (see its header)."""
    body = runpy.run_path(str(ROOT / "examples" / "krang" / "krang_control.py"))["body_values"]
    lengths = runpy.run_path(str(ROOT / "examples" / "krang" / "krang_kinematics.py"))["LENGTHS"]
    robot, values = body()
    values.update(lengths)
    values.update({name: 0.0 for name in values if name.startswith("IA")})
    return robot, values


@pytest.mark.long
def test_krang_example_urdf_gives_the_same_a_c_q():
    """examples/krang/krang.urdf against frames/krang.toml: inertia matrix A, Coriolis
    matrix C and gravity Q by Newton-Euler, at random states, to 1e-12."""
    robot, values = krang_example_values()
    urdf = kr.load(ROOT / "examples" / "krang" / "krang.urdf")
    assert urdf.joint_labels == robot.joint_labels
    fa = kr.derive(robot).numeric(values, backend="numpy")
    fb = kr.derive(urdf).numeric(urdf.values, backend="numpy")
    rng = np.random.default_rng(29)
    n = len(robot.joint_labels)
    for _ in range(3):
        q, qd = rng.uniform(-np.pi, np.pi, n), rng.uniform(-2, 2, n)
        for x, y in ((fa.mass_matrix(q), fb.mass_matrix(q)), (fa.coriolis_matrix(q, qd), fb.coriolis_matrix(q, qd)),
                     (fa.gravity(q), fb.gravity(q))):
            assert np.abs(x - y).max() <= TOL * max(1.0, np.abs(x).max())


def test_krang_example_urdf_is_a_fixed_point_of_read_then_write():
    """Reading examples/krang/krang.urdf and writing it again gives the same text, header aside."""
    text = (ROOT / "examples" / "krang" / "krang.urdf").read_text()
    header = text[text.index("<!--"): text.index("-->") + len("-->\n")]
    written, original = write_urdf(urdf_from_text(text)), text.replace(header, "")
    # the same text around the numbers, the numbers equal to the last digits or so: the inertia about
    # the centre of mass comes back through J_O = R I_c R^T + m (|c|^2 1 - c c^T), whose rounding
    # moves with the BLAS (numpy 2.4 writes ...862 where 2.3 wrote ...864)
    number = re.compile(r"-?\d+\.\d+(?:e-?\d+)?")
    assert number.sub("#", written) == number.sub("#", original)
    np.testing.assert_allclose([float(x) for x in number.findall(written)], [float(x) for x in number.findall(original)],
                               rtol=1e-13, atol=1e-15)  # fmt: skip


def test_limits_read_from_a_urdf_are_written_back(tmp_path):
    """URDF -> kanerobot -> URDF keeps each joint's <limit> (robot.limits is the default)."""
    from kanerobot.robot.urdf import urdf_from_text

    text = """<robot name="p">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-1.2" upper="1.2" velocity="3" effort="40"/></joint>
</robot>"""
    robot = urdf_from_text(text)
    assert robot.limits["j1"].upper == 1.2
    kr.save(robot, tmp_path / "p.urdf")
    again = kr.load(tmp_path / "p.urdf")
    assert again.limits["j1"] == robot.limits["j1"]
    assert 'type="revolute"' in (tmp_path / "p.urdf").read_text()


def test_krang_urdf_equals_pinocchio():
    """examples/krang/krang.urdf read by pinocchio (continuous joints as cos/sin pairs)
    gives kanerobot's inverse dynamics and inertia matrix of the same file to 1e-9."""
    try:
        import pinocchio as pin
    except ImportError:
        pytest.skip("install pin (pip install -e '.[bench]')")
    path = Path(__file__).resolve().parents[1] / "examples" / "krang" / "krang.urdf"
    robot = kr.load(path)
    fn = kr.derive(robot).numeric(dict(robot.values), backend="numpy", physical=False)
    model = pin.buildModelFromUrdf(str(path))
    data = model.createData()
    model.gravity.linear = np.array([0.0, 0.0, robot.values["G3"]])
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, qd, qdd = (rng.uniform(-1, 1, robot.dof) for _ in range(3))
        qp, vp, ap = np.zeros(model.nq), np.zeros(model.nv), np.zeros(model.nv)
        columns = []
        for k, label in enumerate(robot.joint_labels):
            joint = model.joints[model.getJointId(label)]
            qp[joint.idx_q : joint.idx_q + joint.nq] = [np.cos(q[k]), np.sin(q[k])] if joint.nq == 2 else [q[k]]
            vp[joint.idx_v], ap[joint.idx_v] = qd[k], qdd[k]
            columns.append(joint.idx_v)
        A = pin.crba(model, data, qp)
        A = np.triu(A) + np.triu(A, 1).T
        assert_close(fn.inverse_dynamics(q, qd, qdd), pin.rnea(model, data, qp, vp, ap)[columns], what="Krang idm")
        assert_close(fn.mass_matrix(q), A[np.ix_(columns, columns)], what="Krang A")


@pytest.mark.long
def test_cli_simulates_a_urdf_with_its_own_values(tmp_path, capsys):
    """kanerobot simulate on a URDF binds the file's numbers (robot.values), not random ones, and says so."""
    from kanerobot.cli import main

    path = Path(__file__).resolve().parents[1] / "examples" / "krang" / "krang.urdf"
    out = tmp_path / "run.csv"
    assert main(["simulate", str(path), "--t", "0.01", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"parameter values of {path}" in err and "random" not in err
    assert out.is_file()
