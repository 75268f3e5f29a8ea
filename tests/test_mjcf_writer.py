"""kr.save(robot, "x.xml"): MJCF that MuJoCo compiles, with kanerobot's mass matrix and bias forces.

Every robot is written with its numbers (random physically consistent
parameters, or a URDF's own), compiled by MuJoCo (``MjModel.from_xml_path``)
and evaluated by MuJoCo at random states: ``mj_fullM`` (with the armature,
our rotor inertia ``IA``) and ``qfrc_bias - qfrc_passive`` (``C qd + g`` and
the viscous friction ``FV qd``, MuJoCo's damping) equal our numeric model's
``mass_matrix`` and ``h`` (with ``FS`` = 0: MuJoCo's frictionloss is a
constraint force) to 1e-9.  The states are mapped by MuJoCo's conventions,
not by the writer: joints by name, quaternions w x y z, the free joint's
linear velocity in the world frame, a planar joint's slide speeds in its
antecedent's axes.  The whole example-robot-data corpus is in the long
test and in benchmarks/mjcf_writer_vs_mujoco.py.
"""

import sys
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest
import sympy
from ball_robots import ball_tree
from conftest import library, one_line_error

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotWarning, RobotFileError
from kanerobot.robot import joints
from kanerobot.robot.description import DYNAMIC_NAMES, GeneralPlacement
from kanerobot.robot.mjcf_writer import write_mjcf

mujoco = pytest.importorskip("mujoco", reason="pip install -e '.[test]' (mujoco) to check the MJCF writer against MuJoCo")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import mjcf_writer_vs_mujoco as reference  # noqa: E402
from urdf_vs_pinocchio import corpus  # noqa: E402

#: The tree robots of frames/ (the others are refused: test_robots_mjcf_cannot_hold_are_refused).
FRAMES_TREES = ["arm7", "krang", "planar2", "puma560", "rx90", "satellite", "stanford"]
#: Cheap URDFs of example-robot-data for the default run: fixed frames and massless links on them folded, a floating quadruped.
URDFS = [("ur5_robot", False), ("solo", True), ("double_pendulum_simple", False)]
TOL = 1e-9


# ------------------------------------------------------------------- helpers
def bind(robot, seed):
    """Random physically consistent values (with rotor inertia and friction, no wrench); gravity random too."""
    rng = np.random.default_rng(seed)
    values = random_parameters(robot, rng, wrench=False)
    values.update({name: float(g) for name, g in zip(("G1", "G2", "G3"), rng.normal(size=3) * 5) if name in values})
    return values


def without_coulomb(values):
    """MuJoCo's frictionloss is a constraint force, not part of qfrc_bias: compare with FS = 0."""
    return {name: 0.0 if name.startswith("FS") else value for name, value in values.items()}


def mujoco_model(robot, values, tmp_path):
    path = tmp_path / f"{robot.name}.xml"
    kr.save(robot if values is None else robot_with(robot, values), path)
    return mujoco.MjModel.from_xml_path(str(path))


def robot_with(robot, values):
    """``robot`` with ``values`` over its own (what kr.save writes)."""
    return replace(robot, values=MappingProxyType({**robot.values, **values}))


def worst_errors(robot, values, model, seed, states=3):
    """Largest relative differences of the mass matrix and of h (FS = 0) from MuJoCo's over random states."""
    return reference.worst_errors(kr.derive(robot).numeric(without_coulomb(values), backend="numpy"), robot, model, seed, states)


def assert_names(model, robot):
    """Every joint label is a MuJoCo joint (a planar joint's three), every moving link a body; the parameters are MuJoCo's."""
    for name, joint in reference.joint_list(robot):
        names = [name + suffix for suffix in reference.PLANAR] if isinstance(joint, joints.Planar) else [name]
        for one in names if name is not None else []:
            assert model.joint(one).name == one
    moving = {label for label in robot.links if label == "0" or robot.frame(label).is_joint}
    assert {model.body(b).name for b in range(1, model.nbody)} <= moving


def assert_joint_parameters(model, robot, values):
    """armature, damping and frictionloss of every dof are IA, FV and FS of its joint."""
    numbers = {**robot.values, **values}
    for name, joint in reference.joint_list(robot):
        if name is None or name not in robot.links:
            continue
        names = [name + suffix for suffix in reference.PLANAR] if isinstance(joint, joints.Planar) else [name]
        for one in names:
            d = model.joint(one).dofadr[0]
            nv = 3 if isinstance(joint, joints.Spherical) else 1
            for array, key in ((model.dof_armature, "IA"), (model.dof_damping, "FV"), (model.dof_frictionloss, "FS")):
                assert np.allclose(array[d:d + nv], float(robot.dynamics[name][key].xreplace(_symbols(numbers)))), (one, key)


def _symbols(values):
    return {sympy.Symbol(k): v for k, v in values.items()}


# --------------------------------------------------------------------- tests
@pytest.mark.parametrize("name", FRAMES_TREES)
def test_frames_tree_robots_give_mujocos_mass_matrix_and_bias(name, tmp_path):
    robot = library(name)
    values = {} if robot.values else bind(robot, FRAMES_TREES.index(name))
    model = mujoco_model(robot, values, tmp_path)
    assert_names(model, robot)
    assert_joint_parameters(model, robot, values)
    assert model.nbody == 1 + len([f for f in robot.frames if f.is_joint]) + robot.floating
    errors = worst_errors(robot, {**robot.values, **values}, model, seed=7)
    assert max(errors) < TOL, errors


@pytest.mark.parametrize("floating", [False, True])
def test_ball_and_plane_tree_gives_mujocos_mass_matrix_and_bias(floating, tmp_path):
    """Spherical (ball, quaternion w x y z) and planar (two slides and a hinge) joints, fixed and free-flying base."""
    robot = ball_tree(floating)
    values = {**bind(robot, 3 + floating), "IA3": 0.0, "FS3": 0.0}  # MuJoCo's armature and frictionloss act on d(x, y)/dt
    model = mujoco_model(robot, values, tmp_path)
    assert_names(model, robot)
    assert_joint_parameters(model, robot, values)
    assert [model.jnt_type[model.joint(n).id] for n in ("2", "3_x", "3_theta")] == [
        mujoco.mjtJoint.mjJNT_BALL, mujoco.mjtJoint.mjJNT_SLIDE, mujoco.mjtJoint.mjJNT_HINGE]  # fmt: skip
    assert np.allclose(model.opt.gravity, [values.get(g, 0.0) for g in ("G1", "G2", "G3")] if floating else [0, 0, values["G3"]])
    errors = worst_errors(robot, values, model, seed=11, states=4)
    assert max(errors) < TOL, errors


def test_fixed_base_placed_by_z(tmp_path):
    """Frame 0 placed by the base's Z: the world body is frame 0 at Z (site "0"), gravity turned into the world frame."""
    robot = library("rx90")
    Z = sympy.ImmutableMatrix([[1, 0, 0, 0.3], [0, 0, -1, -0.2], [0, 1, 0, 1.5], [0, 0, 0, 1]])
    robot = replace(robot, base=replace(robot.base, Z=Z, G=sympy.ImmutableMatrix(sympy.symbols("G1 G2 G3"))))
    values = {**bind(robot, 9), "G1": 1.0, "G2": -9.0, "G3": 0.5}
    model = mujoco_model(robot, values, tmp_path)
    assert np.allclose(model.opt.gravity, [1.0, -0.5, -9.0], rtol=0, atol=1e-15)
    assert np.allclose(model.site("0").pos, [0.3, -0.2, 1.5]) and np.allclose(model.site("0").quat, [np.sqrt(0.5), np.sqrt(0.5), 0, 0])
    errors = worst_errors(robot, values, model, seed=2)
    assert max(errors) < TOL, errors


def gimbal(point_mass=True):
    """A massless link 1 whose joints move into link 2 (MuJoCo refuses a moving body without mass), a fixed frame 3
    with a point mass folded into link 2, a prismatic joint 4 beyond it and a revolute 5 on link 1's child."""
    frames = [
        kr.Frame("1", "0", 0, 1, GeneralPlacement(R0=[[0, 0, 1], [1, 0, 0], [0, 1, 0]], P=[0.1, 0, "L0"], axis=[0, 0, 1], q="q1")),
        kr.Frame("2", "1", 0, 1, GeneralPlacement(R0=[[1, 0, 0], [0, 0, -1], [0, 1, 0]], P=[0, "L1", 0.05], axis=[0.6, 0, 0.8], q="q2")),
        kr.Frame("3", "2", 2, 0, GeneralPlacement(R0=[[0, -1, 0], [1, 0, 0], [0, 0, 1]], P=["L2", 0, 0], axis=[0, 0, 1])),
        kr.Frame("4", "3", 1, 1, GeneralPlacement(R0=[[1, 0, 0], [0, 1, 0], [0, 0, 1]], P=[0, 0, "L3"], axis=[0, 1, 0], q="q4")),
    ]
    links = ["1", "2", "3", "4"] if point_mass else ["1", "2", "4"]
    robot = kr.Robot.create("gimbal", frames, links=links)
    values = bind(robot, 5)
    values.update({f"{name}1": 0.0 for name in DYNAMIC_NAMES if f"{name}1" in values and name not in ("IA", "FV", "FS")})
    if point_mass:  # 0.8 kg at (0.1, -0.2, 0.05) in frame 3: J = m (|c|^2 1 - c c^T)
        c, m = np.array([0.1, -0.2, 0.05]), 0.8
        J = m * (c @ c * np.eye(3) - np.outer(c, c))
        values.update(M3=m, MX3=m * c[0], MY3=m * c[1], MZ3=m * c[2], XX3=J[0, 0], XY3=J[0, 1], XZ3=J[0, 2], YY3=J[1, 1], YZ3=J[1, 2], ZZ3=J[2, 2])
    return robot, values


def test_massless_link_and_fixed_point_mass_are_folded(tmp_path):
    robot, values = gimbal()
    model = mujoco_model(robot, values, tmp_path)
    assert model.nbody == 3 and model.njnt == 3 and model.body_jntnum[model.body("2").id] == 2  # joints 1 and 2 in link 2's body
    assert model.site("3").name == "3" and model.site("0").name == "0"
    assert_names(model, robot)
    assert_joint_parameters(model, robot, values)
    errors = worst_errors(robot, values, model, seed=13, states=4)
    assert max(errors) < TOL, errors


@pytest.mark.parametrize("name, floating", URDFS)
def test_urdfs_give_mujocos_mass_matrix_and_bias(name, floating, tmp_path):
    """Their own numbers; solo free-flying; double_pendulum_simple's massless end link on a fixed joint folded."""
    paths = corpus()
    if name not in paths:
        pytest.skip("example-robot-data is not installed: pip install -e '.[bench]'")
    robot = kr.load(paths[name], floating=floating)
    model = mujoco_model(robot, None, tmp_path)
    assert_names(model, robot)
    assert_joint_parameters(model, robot, {})
    errors = worst_errors(robot, dict(robot.values), model, seed=17)
    assert max(errors) < TOL, errors


def test_limits_and_motors(tmp_path):
    """A URDF's position limits are MuJoCo ranges (radians), its efforts the motors' ctrlrange."""
    paths = corpus()
    if "ur5_joint_limited_robot" not in paths:
        pytest.skip("example-robot-data is not installed: pip install -e '.[bench]'")
    robot = kr.load(paths["ur5_joint_limited_robot"])
    model = mujoco_model(robot, None, tmp_path)
    for label, limit in robot.limits.items():
        joint = model.joint(label)
        assert model.jnt_limited[joint.id] == (limit.lower is not None)
        if limit.lower is not None:
            assert np.array_equal(model.jnt_range[joint.id], [limit.lower, limit.upper])
        actuator = model.actuator(label)
        assert model.actuator_trnid[actuator.id, 0] == joint.id and model.actuator_gear[actuator.id, 0] == 1
        assert np.array_equal(model.actuator_ctrlrange[actuator.id], [-limit.effort, limit.effort])


# ------------------------------------------------------------------ refusals
def refused(robot, tmp_path, values=None):
    """The one line of the RobotFileError of saving ``robot`` as x.xml, with nothing written."""
    before = sorted(tmp_path.iterdir())
    with pytest.raises(RobotFileError) as info:
        kr.save(robot if values is None else robot_with(robot, values), tmp_path / "x.xml")
    assert sorted(tmp_path.iterdir()) == before
    line = str(info.value)
    assert "\n" not in line and line.startswith(f"{tmp_path / 'x.xml'}: cannot write robot "), line
    return line


def test_unbound_parameters_are_refused(tmp_path):
    line = refused(library("rx90"), tmp_path)
    assert "no value for CX6, CY6, CZ6, D3, FS1" in line and "give them in robot.values or values={...}" in line


def test_an_unbound_mimic_multiplier_is_refused(tmp_path):
    """A mimic joint's multiplier and offset are numbers of the file: a symbol without a value is named."""
    arm = library("planar2")
    coupled = kr.Robot.create("coupled", arm.frames, mimics=[("2", "1", "k", "o")])
    line = refused(coupled, tmp_path, {name: value for name, value in bind(coupled, 1).items() if name not in ("k", "o")})
    assert "no value for k, o: give them" in line


@pytest.mark.parametrize("name, words", [
    ("fourbar", "its loops cut at joint(s) 4-5 are not cut at a ball joint"),
    ("sr400", "its loops cut at joint(s) 9-10 are not cut at a ball joint"),
    ("diffdrive", "it is a wheeled robot"),
    ("krang_wheeled", "it is a wheeled robot"),
    ("flexarm1", "are flexible (eta = 1)"),
])  # fmt: skip
def test_robots_mjcf_cannot_hold_are_refused(name, words, tmp_path):
    robot = library(name)
    line = refused(robot, tmp_path, bind(robot, 1))
    assert words in line and "save it as .toml" in line, line


def unfoldable():
    """A massless link 1 with two moving children (its joint cannot move into one of them) and a rod (link 4,
    a point mass on its axis: a principal inertia 0), as ``(robot, values)``: MuJoCo refuses both as they are."""
    robot, values = gimbal(point_mass=False)
    branched = kr.Robot.create("branched", [*robot.frames, kr.Frame("5", "1", 0, 1, GeneralPlacement(R0=np.eye(3).tolist(), P=[0, 0, 0.1], axis=[1, 0, 0], q="q5"))],
                               links=["1", "2", "4", "5"])  # fmt: skip
    c = np.array([0.0, 0.0, 0.3])
    point = {"M4": 2.0, "MX4": 0.0, "MY4": 0.0, "MZ4": 0.6, "XX4": 0.18, "YY4": 0.18, "ZZ4": 0.0, "XY4": 0.0, "XZ4": 0.0, "YZ4": 0.0}
    assert np.isclose(point["XX4"], 2.0 * c @ c)
    return branched, {**bind(branched, 2), **values, **point}


def test_massless_links_and_point_masses_are_bounded_by_mujocos_compiler(tmp_path):
    """By default the file keeps their numbers and asks MuJoCo's compiler for boundmass/boundinertia (1e-12), with one
    warning naming them; MuJoCo's M and h then differ from ours by about that."""
    robot, values = unfoldable()
    path = tmp_path / "x.xml"
    with pytest.warns(KaneRobotWarning, match=r"link\(s\) 1, 4 of branched move without mass or as point masses") as caught:
        kr.save(robot_with(robot, values), path)
    assert len(caught) == 1 and str(path) in str(caught[0].message)
    model = mujoco.MjModel.from_xml_path(str(path))
    assert 'boundmass="1e-12" boundinertia="1e-12"' in path.read_text()
    assert np.isclose(model.body("1").mass[0], 1e-12, rtol=0, atol=1e-20) and model.body("4").mass[0] == 2.0
    errors = worst_errors(robot, values, model, seed=19, states=4)
    assert 1e-15 < max(errors) < TOL, errors  # the bound shows, far under the tolerance


def test_what_mujoco_refuses_is_one_line(tmp_path):
    """With bound=0 a massless link with two moving children and a moving rod; an inertia no rigid body has, a
    negative damping, a constant wrench."""
    branched, values = unfoldable()
    for drop, words in (({}, "link 1 moves (joint 1) but has no mass"), ({"M1": 1.0, "XX1": 0.1, "YY1": 0.1, "ZZ1": 0.1},
                                                                          "link 4 (with what is fixed to it) has principal inertias 0")):  # fmt: skip
        with pytest.raises(RobotFileError) as info:
            write_mjcf(branched, tmp_path / "x.xml", {**values, **drop}, bound=0)
        line = str(info.value)
        assert words in line and "or save with bound > 0 (1e-12" in line and "\n" not in line, line
    with pytest.raises(RobotFileError, match="it carries 2 moving links"):
        write_mjcf(branched, None, values, bound=0)
    with pytest.raises(RobotFileError, match=r"bound=-1 must be a number from 0 \(refuse\)"):
        write_mjcf(branched, None, values, bound=-1)
    robot, values = gimbal(point_mass=False)
    flat = {**values, "XX4": 0.01, "YY4": 0.01, "ZZ4": 0.05, "XY4": 0.0, "XZ4": 0.0, "YZ4": 0.0, "MX4": 0.0, "MY4": 0.0, "MZ4": 0.0}
    line = refused(robot, tmp_path, flat)
    assert "link 4 (with what is fixed to it) has principal inertias 0.01 0.01 0.05" in line and "A + B < C" in line, line
    assert "FV2 = -0.5 < 0" in refused(robot, tmp_path, {**values, "FV2": -0.5})
    world = kr.Robot.create("worldly", [kr.Frame("world", "0", 0, 1, GeneralPlacement(R0=np.eye(3).tolist(), P=[0, 0, 0], axis=[0, 0, 1], q="q1"))])
    assert "link 'world' would have the name of MuJoCo's world body: rename its frame" in refused(world, tmp_path, bind(world, 1))
    planar = ball_tree()
    line = refused(planar, tmp_path, {**bind(planar, 3), "IA3": 0.25})
    assert "planar joint 3 has IA3 = 0.25, which MuJoCo's armature on its slides" in line and "set IA3 to 0" in line, line
    wrench = kr.Robot.create("pushed", robot.frames, links=["1", "2", "4"], dynamics={"4": {"FX": "FX4"}})
    assert "constant external wrench FX" in refused(wrench, tmp_path, {**bind(wrench, 2), **values, "FX4": 1.0})


def test_unwritable_path_is_one_line(tmp_path):
    robot = library("planar2")
    (tmp_path / "notes.txt").write_text("")
    before = sorted(tmp_path.iterdir())
    with pytest.raises(RobotFileError) as info:
        kr.save(robot_with(robot, bind(robot, 1)), tmp_path / "notes.txt" / "x.xml")
    assert str(info.value) == f"{tmp_path / 'notes.txt' / 'x.xml'}: {tmp_path / 'notes.txt'} is a file, not a folder"
    assert sorted(tmp_path.iterdir()) == before


def test_convert_writes_mjcf_and_refuses_in_one_line(tmp_path, capsys):
    from kanerobot.cli import main

    target = tmp_path / "arm7.xml"
    assert main(["convert", "arm7", str(target)]) == 0
    assert capsys.readouterr().err == f"written {target}\n"
    assert mujoco.MjModel.from_xml_path(str(target)).nv == 7
    line = one_line_error(capsys, "convert", "rx90", str(tmp_path / "rx90.xml"))
    assert line.startswith("kanerobot: error: ") and "cannot write robot RX90 as MJCF: no value for" in line, line
    assert not (tmp_path / "rx90.xml").exists()


def test_write_mjcf_takes_values():
    robot = library("planar2")
    text = write_mjcf(robot, values=bind(robot, 4))
    assert mujoco.MjModel.from_xml_string(text).nv == 2


# ------------------------------------------------------------- the corpus
#: The URDFs of example-robot-data whose MJCF the writer refuses, and why: an inertia no rigid body has (read with
#: physical=False), which MuJoCo refuses and could only change (balanceinertia).
REFUSED = {
    "romeo_small": "link RShoulderYaw (with what is fixed to it) has principal inertias 0.00066",
    "romeo_laas_small": "link LShoulderYaw_joint (with what is fixed to it) has principal inertias 0.00051",
}
#: Those whose massless moving links or point masses MuJoCo's compiler raises to the writer's bound (1e-12).
BOUNDED = {"icub", "icub_reduced", "romeo"}
#: Those kr.load refuses with a fixed base (nothing moves) or at all (an empty xacro output).
NOT_LOADED = {"quadrotor_base", "iris_simple", "ur3"}


@pytest.mark.long
def test_every_urdf_of_the_corpus():
    """Every URDF of example-robot-data (mimic joints read as independent joints) gives MuJoCo's M and h, or a known refusal."""
    table = reference.rows()
    if not table:
        pytest.skip("example-robot-data is not installed: pip install -e '.[bench]'")
    compared = [row for row in table if row.error is not None]
    assert len(compared) >= 64 and all(max(row.error) < TOL for row in compared), [row for row in compared if max(row.error) >= TOL]
    assert {row.name for row in compared if row.bounded} == BOUNDED
    refused = {row.name: row.refusal for row in table if row.error is None}
    assert set(refused) == set(REFUSED) | NOT_LOADED, refused
    for name, words in REFUSED.items():
        assert words in refused[name], refused[name]


def test_mimic_joints_round_trip_through_mujoco(tmp_path, monkeypatch):
    """A URDF's mimic joints are written as MuJoCo joint equalities: MuJoCo's own constraint holds at our
    coupled configurations, and reading the file back gives the same couplings and the same constrained
    model (mass matrix and h on the independent joints)."""
    from test_mimic import gripper_urdf

    monkeypatch.chdir(tmp_path)
    robot = kr.robot.urdf.urdf_from_text(gripper_urdf(seed=3))
    path = tmp_path / "gripper.xml"
    kr.save(robot, path)
    model = mujoco.MjModel.from_xml_path(str(path))
    assert model.neq == len(robot.mimics) == 2
    back = kr.load(path)
    assert {(m.joint, m.leader, float(m.multiplier), float(m.offset)) for m in back.mimics} == {
        (m.joint, m.leader, float(m.multiplier), float(m.offset)) for m in robot.mimics
    }
    values = without_coulomb(dict(robot.values))
    ours = kr.derive(robot).numeric(values, backend="numpy")
    read = kr.derive(back).numeric(without_coulomb(dict(back.values)), backend="numpy")
    data = mujoco.MjData(model)
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = ours.configuration(rng.uniform(-1, 1, ours.nv))
        data.qpos[:] = [q[robot.joint_labels.index(mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j))] for j in range(model.njnt)]
        mujoco.mj_forward(model, data)
        assert np.abs(data.efc_pos[: model.neq]).max() < 1e-12  # MuJoCo's equalities hold at our configuration
        v = rng.normal(size=ours.nv)
        np.testing.assert_allclose(read.mass_matrix(q), ours.mass_matrix(q), rtol=0, atol=TOL)
        np.testing.assert_allclose(read.h(q, v), ours.h(q, v), rtol=0, atol=TOL)


@pytest.mark.parametrize("name", ["rx90", "satellite"])
def test_frames_trees_round_trip_through_mjcf(name, tmp_path):
    """kr.save then kr.load (the MJCF reader) gives back the joints and the dynamics of the robot."""
    robot = library(name)
    written = robot_with(robot, without_coulomb(bind(robot, 2)))
    kr.save(written, tmp_path / f"{name}.xml")
    back = kr.load(tmp_path / f"{name}.xml")
    assert back.joint_labels == written.joint_labels and back.floating == written.floating
    ours = kr.derive(written).numeric(dict(written.values), backend="numpy")
    read = kr.derive(back).numeric(dict(back.values), backend="numpy")
    rng = np.random.default_rng(6)
    for _ in range(2):
        q = ours.random_configuration(rng)
        v = rng.normal(size=ours.nv)
        np.testing.assert_allclose(read.mass_matrix(q), ours.mass_matrix(q), rtol=0, atol=1e-12)
        np.testing.assert_allclose(read.h(q, v), ours.h(q, v), rtol=0, atol=1e-12)


def test_a_coupling_of_several_leaders_round_trips_as_a_fixed_tendon(tmp_path, monkeypatch):
    """A mimic joint of several leaders is written as a fixed tendon and its equality: MuJoCo's constraint
    holds at our coupled configurations, and reading the file back gives the same coupling."""
    from test_mimic import JOINTS, SEVERAL, gripper_urdf

    monkeypatch.chdir(tmp_path)
    tree = kr.robot.urdf.urdf_from_text(gripper_urdf(5, [joint[:5] + (None,) for joint in JOINTS]))
    robot = kr.Robot.create(tree.name, tree.frames, links=tree.links, dynamics=tree.dynamics, values=tree.values,
                            base=tree.base, mimics=[SEVERAL])  # fmt: skip
    kr.save(robot, tmp_path / "several.xml")
    back = kr.load(tmp_path / "several.xml")
    (mimic,) = back.mimics
    assert mimic.joint == "finger_b" and float(mimic.offset) == pytest.approx(0.1, abs=1e-15)
    assert {label: float(k) for label, k in mimic.terms} == pytest.approx({"shoulder": 0.6, "elbow": -1.3, "finger_a": 0.8}, abs=1e-15)
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "several.xml"))
    data = mujoco.MjData(model)
    fn = kr.derive(robot).numeric(without_coulomb(dict(robot.values)), backend="numpy")
    q = fn.configuration(np.random.default_rng(3).uniform(-1, 1, fn.nv))
    data.qpos[:] = [q[robot.joint_labels.index(mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j))] for j in range(model.njnt)]
    mujoco.mj_forward(model, data)
    assert abs(data.efc_pos[0]) < 1e-12
