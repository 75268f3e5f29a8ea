"""A disc's radius read from its wheel's shape in a URDF or MJCF file (issue 28): ``discs=["wr", "wl"]``, ``--disc wr``.

A differential drive (a chassis on x, y and yaw joints, two wheels, random
rigid bodies) is written with its wheels' shapes of a random radius R: the
radius read (:mod:`kanerobot.robot.wheel_shapes`) is the number the test
wrote, and the robot and its models (M, h at random states) are those of
the same file loaded with R typed.  MuJoCo, compiling the MJCF files, says
independently that the cylinders accepted lie along their joints' axes and
that the one refused does not.  Every file that does not give one radius is
one error naming its line.
"""

import math

import numpy as np
import pytest
from conftest import benchmark, one_line_error

import kanerobot as kr
from kanerobot.cli import build_parser, main
from kanerobot.command_options import load_options
from kanerobot.errors import RobotFileError

WHEELS = ("right_wheel_joint", "left_wheel_joint")
HALF_PI = repr(math.pi / 2)


@pytest.fixture(scope="module")
def drive():
    rng = np.random.default_rng(2811)
    bodies = []
    for _ in range(3):
        m = rng.uniform(0.5, 3.0)
        a, b, c = m * rng.uniform(0.05, 1.0, 3) * 0.04
        Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        bodies.append((m, rng.uniform(-0.2, 0.2, 3), Q @ np.diag([b + c, a + c, a + b]) @ Q.T))
    return {"R": float(rng.uniform(0.1, 0.3)), "b": float(rng.uniform(0.3, 0.6)), "bodies": bodies, "pitch": float(rng.uniform(-3, 3)),
            "q": rng.uniform(-1.0, 1.0, (3, 5)), "v": rng.uniform(-2.0, 2.0, (3, 2))}  # fmt: skip


def _inertial(body):
    m, c, I = float(body[0]), [float(v) for v in body[1]], np.asarray(body[2], dtype=float).tolist()
    return (f'<inertial><origin xyz="{c[0]!r} {c[1]!r} {c[2]!r}"/><mass value="{m!r}"/><inertia ixx="{I[0][0]!r}" ixy="{I[0][1]!r}" '
            f'ixz="{I[0][2]!r}" iyy="{I[1][1]!r}" iyz="{I[1][2]!r}" izz="{I[2][2]!r}"/></inertial>')  # fmt: skip


def cylinder(R, rpy="0 0 0", xyz="0 0 0", tag="collision"):
    return f'<{tag}><origin xyz="{xyz}" rpy="{rpy}"/><geometry><cylinder radius="{R!r}" length="0.05"/></geometry></{tag}>'


def urdf_text(drive, right, left):
    """The drive as a URDF, the wheel links holding the elements ``right`` and ``left``.

    The right wheel turns about y of the chassis, its cylinder's axis made y
    by its ``rpy`` (roll pi/2, any pitch); the left wheel's joint frame is
    turned by roll pi/2, so that its axis z is the chassis's -y."""
    R, b = drive["R"], drive["b"]
    chassis, r_body, l_body = (_inertial(x) for x in drive["bodies"])

    def joint(name, kind, parent, child, xyz, axis, rpy="0 0 0"):
        return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
                f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/></joint>')  # fmt: skip

    return "\n".join([
        '<?xml version="1.0"?>', '<robot name="drive">', '<link name="world"/>', '<link name="slide_x"/>', '<link name="slide_y"/>',
        f'<link name="chassis">{chassis}<visual><geometry><cylinder radius="?"/></geometry></visual></link>',  # read by no disc
        f'<link name="right">{r_body}', *right, '</link>',
        f'<link name="left">{l_body}', *left, '</link>',
        joint("x", "prismatic", "world", "slide_x", "0 0 0", "1 0 0"), joint("y", "prismatic", "slide_x", "slide_y", "0 0 0", "0 1 0"),
        joint("yaw", "continuous", "slide_y", "chassis", f"0 0 {R!r}", "0 0 1"),
        joint(WHEELS[0], "continuous", "chassis", "right", f"0 {-b / 2!r} 0", "0 1 0"),
        joint(WHEELS[1], "continuous", "chassis", "left", f"0 {b / 2!r} 0", "0 0 1", f"{HALF_PI} 0 0"), "</robot>", "",
    ])  # fmt: skip


def good_urdf(drive):
    """Collision cylinders along the wheels' axes (through rpy), beside a visual mesh and a box that do not count."""
    R = drive["R"]
    mesh = '<visual><geometry><mesh filename="package://drive/wheel.stl"/></geometry></visual>'
    box = '<collision><origin xyz="0 0 0.5"/><geometry><box size="0.1 0.1 0.1"/></geometry></collision>'
    return urdf_text(drive, [mesh, cylinder(R, f"{HALF_PI} {drive['pitch']!r} 0")], [box, cylinder(R, "0 0 0.7")])


@pytest.fixture(scope="module")
def urdf_path(drive, tmp_path_factory):
    path = tmp_path_factory.mktemp("radius") / "drive.urdf"
    path.write_text(good_urdf(drive))
    return path


def matrices(robot, drive):
    fn = kr.derive(robot).numeric(dict(robot.values))
    return [(fn.mass_matrix(q), fn.h(q, v)) for q, v in zip(drive["q"], drive["v"])]


def assert_same_models(robot, typed, drive):
    assert robot == typed
    for (M, h), (M0, h0) in zip(matrices(robot, drive), matrices(typed, drive)):
        np.testing.assert_allclose(M, M0, rtol=0, atol=1e-12)
        np.testing.assert_allclose(h, h0, rtol=0, atol=1e-12)


def radii(robot):
    return [float(disc.radius) for disc in robot.discs]


# ------------------------------------------------------------------ URDF
def test_collision_cylinders_along_the_joints_give_the_radius_and_the_typed_models(urdf_path, drive):
    R = drive["R"]
    robot = kr.load(urdf_path, discs=list(WHEELS))
    assert radii(robot) == [R, R] and [d.joint for d in robot.discs] == list(WHEELS)
    assert kr.load(urdf_path, discs=dict.fromkeys(WHEELS)) == robot == kr.load(urdf_path, discs=WHEELS)
    assert_same_models(robot, kr.load(urdf_path, discs=dict.fromkeys(WHEELS, R)), drive)
    # one radius typed, the other read
    assert kr.load(urdf_path, discs={WHEELS[0]: None, WHEELS[1]: 2 * R}).discs[1].radius == 2 * R


def test_a_side_file_table_without_radius_and_the_command_line_read_it_too(urdf_path, drive, tmp_path, capsys):
    R = drive["R"]
    side = tmp_path / "drive.discs.toml"
    side.write_text(f'[[disc]]\njoint = "{WHEELS[0]}"\n\n[[disc]]\njoint = "{WHEELS[1]}"\nradius = {R!r}\n')
    typed = kr.load(urdf_path, discs=dict.fromkeys(WHEELS, R))
    assert kr.load(urdf_path, discs=side) == typed
    flags = ["--disc", WHEELS[0], "--disc", WHEELS[1]]
    assert load_options(build_parser().parse_args(["info", str(urdf_path), *flags])) == {"discs": dict.fromkeys(WHEELS)}
    assert main(["info", str(urdf_path), *flags]) == 0
    assert "right_wheel_joint" in capsys.readouterr().out


@pytest.mark.parametrize("case", ["sphere", "visual", "visual beside a collision mesh"])
def test_a_sphere_or_a_visual_cylinder_gives_the_radius(drive, case, tmp_path):
    R = drive["R"]
    mesh = '<collision><geometry><mesh filename="package://drive/wheel.stl"/></geometry></collision>'
    right = {"sphere": [f'<collision><geometry><sphere radius="{R!r}"/></geometry></collision>'],
             "visual": [cylinder(R, f"{HALF_PI} 0 0", tag="visual")],
             "visual beside a collision mesh": [mesh, cylinder(R, f"{-math.pi / 2!r} 0 0", tag="visual")]}[case]  # fmt: skip
    path = tmp_path / "drive.urdf"
    path.write_text(urdf_text(drive, right, [cylinder(R, "0 0 0.7"), cylinder(2 * R, "0 0 0", tag="visual")]))
    assert radii(kr.load(path, discs=list(WHEELS))) == [R, R]  # a collision shape wins over a visual one (left)


def test_tiago_wheels_are_the_cylinders_pinocchio_reads():
    """TIAGo as example-robot-data gives it: its wheels' radii, read by kr.load, are those of the collision cylinders that
    pinocchio's own URDF geometry reader (``buildGeomFromUrdf``) hangs on the wheel joints, along their axes."""
    pin = pytest.importorskip("pinocchio", reason="pip install -e '.[test]' (pinocchio reads the URDF's geometry independently)")
    path = benchmark("urdf_vs_pinocchio").corpus().get("tiago")
    if path is None:
        pytest.skip("install example-robot-data (pip install -e '.[bench]')")
    joints = ("wheel_right_joint", "wheel_left_joint")
    model = pin.buildModelFromUrdf(str(path))
    data = model.createData()
    pin.forwardKinematics(model, data, pin.neutral(model))
    geometry = pin.buildGeomFromUrdf(model, str(path), pin.GeometryType.COLLISION, package_dirs=[str(path.parents[4])])
    expected = []
    for name in joints:
        j = model.getJointId(name)
        (cylinder,) = [g for g in geometry.geometryObjects if g.parentJoint == j]
        axis = np.asarray(data.joints[j].S)[3:]
        assert type(cylinder.geometry).__name__ == "Cylinder" and np.linalg.norm(np.cross(cylinder.placement.rotation[:, 2], axis)) < 1e-12
        expected.append(cylinder.geometry.radius)
    robot = kr.load(path, floating=True, discs=list(joints))
    assert radii(robot) == expected and robot.joint_labels[:6] == ("x", "y", "heading", "pitch", *joints)  # on its axle


# ------------------------------------------------------------------ MJCF
def mjcf_text(drive, right, left):
    """The drive as an MJCF file, the wheel bodies holding the geoms ``right`` and ``left`` (their mass from geoms)."""
    R, b = drive["R"], drive["b"]
    return f"""<mujoco model="drive">
  <compiler angle="radian"/>
  <default><default class="visual"><geom contype="0" conaffinity="0"/></default></default>
  <worldbody>
    <body name="chassis" pos="0 0 {R!r}">
      <joint name="x" type="slide" axis="1 0 0"/>
      <joint name="y" type="slide" axis="0 1 0"/>
      <joint name="yaw" type="hinge" axis="0 0 1"/>
      <geom type="box" size="0.2 0.1 0.05" mass="2"/>
      <body name="right" pos="0 {-b / 2!r} 0">
        <joint name="{WHEELS[0]}" type="hinge" axis="0 1 0"/>
        {right}
      </body>
      <body name="left" pos="0 {b / 2!r} 0" euler="{HALF_PI} 0 0">
        <joint name="{WHEELS[1]}" type="hinge" axis="0 0 1"/>
        {left}
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_mjcf_cylinders_and_spheres_give_the_radius(drive, tmp_path):
    R = drive["R"]
    right = (f'<geom type="cylinder" fromto="0 -0.02 0 0 0.02 0" size="{R!r}" mass="0.5"/>'
             f'<geom class="visual" type="cylinder" size="{2 * R!r} 0.01" euler="0 {drive["pitch"]!r} 0"/>')  # fmt: skip
    left = f'<geom type="cylinder" size="{R!r} 0.02" euler="0 0 0.7" mass="0.5"/>'
    path = tmp_path / "drive.xml"
    path.write_text(mjcf_text(drive, right, left))
    robot = kr.load(path, discs=list(WHEELS))
    assert radii(robot) == [R, R] and robot == kr.load(path, discs=dict.fromkeys(WHEELS, R))
    path.write_text(mjcf_text(drive, f'<geom size="{R!r}" mass="0.5"/>', f'<geom type="sphere" size="{R!r}" class="visual" mass="1"/>'))
    assert radii(kr.load(path, discs=list(WHEELS))) == [R, R]  # a geom's default type is a sphere; a visual one counts alone


def test_mujoco_agrees_which_cylinders_lie_along_their_joints(drive, tmp_path):
    """MuJoCo's own placement of the geoms (``geom_xmat``) and joint axes (``xaxis``) at qpos0: the cylinders the reader takes
    are along their joints' axes, the one it refuses across."""
    mujoco = pytest.importorskip("mujoco", reason="pip install -e '.[test]' (MuJoCo places the geoms independently)")
    R = drive["R"]
    cases = {
        "accepted": (f'<geom name="g0" type="cylinder" fromto="0 -0.02 0 0 0.02 0" size="{R!r}"/>',
                     f'<geom name="g1" type="cylinder" size="{R!r} 0.02" euler="0 0 0.7"/>'),
        "refused": (f'<geom name="g0" type="cylinder" size="{R!r} 0.02" euler="0 {drive["pitch"]!r} 0"/>',
                    f'<geom name="g1" type="sphere" size="{R!r}"/>'),
    }  # fmt: skip
    for case, (right, left) in cases.items():
        path = tmp_path / f"{case}.xml"
        path.write_text(mjcf_text(drive, right, left))
        model = mujoco.MjModel.from_xml_path(str(path))
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        across = np.linalg.norm(np.cross(data.geom_xmat[model.geom("g0").id].reshape(3, 3)[:, 2], data.xaxis[model.joint(WHEELS[0]).id]))
        if case == "accepted":
            assert across < 1e-12 and radii(kr.load(path, discs=list(WHEELS))) == [R, R]
        else:
            assert across > 0.1
            with pytest.raises(RobotFileError, match="not along the joint's axis"):
                kr.load(path, discs=list(WHEELS))


# ------------------------------------------------------------------ mistakes, each one line
URDF_MISTAKES = {
    "no shape": ([], '<link name="right">', "link 'right' has no shape to read the wheel's radius from"),
    "mesh only": (['<collision><geometry><mesh filename="wheel.stl"/></geometry></collision>'], "<mesh",
                  "the mesh of link 'right' has no radius (a wheel is a cylinder along its joint's axis, or a sphere"),
    "two radii": ([cylinder(0.1, f"{HALF_PI} 0 0"), cylinder(0.2, f"{HALF_PI} 0 0")], 'radius="0.2"',
                  "link 'right' has a cylinder of radius 0.1 (line 8) and a cylinder of radius 0.2 (line 9): which is the wheel?"),
    "across": ([cylinder(0.1, "0 0 0")], 'radius="0.1"',
               "the cylinder of link 'right' has its axis along (0 0 1), not along the joint's axis (0 1 0)"),
    "off centre": ([cylinder(0.1, f"{HALF_PI} 0 0", "0.03 0 0")], 'radius="0.1"',
                   "the cylinder of link 'right' is centred at (0.03 0 0), not on the joint's origin (0 0 0)"),
}  # fmt: skip


def _line_of(text, needle):
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize("case", list(URDF_MISTAKES))
def test_a_urdf_wheel_without_one_radius_is_one_error_naming_its_line(drive, case, tmp_path, capsys):
    shapes, at, words = URDF_MISTAKES[case]
    text = urdf_text(drive, shapes, [cylinder(drive["R"], "0 0 0")])
    path = tmp_path / "drive.urdf"
    path.write_text(text)
    instead = f"give its radius, discs={{'{WHEELS[0]}': RADIUS}} (--disc {WHEELS[0]}=RADIUS on the command line)"
    with pytest.raises(RobotFileError) as info:
        kr.load(path, discs=list(WHEELS))
    message = str(info.value)
    assert message.startswith(f"{path}:{_line_of(text, at)}: disc {WHEELS[0]}: ") and words in message and instead in message, message
    assert "\n" not in message
    line = one_line_error(capsys, "info", path, "--disc", WHEELS[0], "--disc", WHEELS[1])
    assert line == f"kanerobot: error: {message}", line


MJCF_MISTAKES = {
    "box only": ('<geom type="box" size="0.1 0.1 0.1"/>', 'size="0.1 0.1 0.1"', "the box of body 'right' has no radius"),
    "two radii": (f'<geom type="cylinder" size="0.1 0.02" euler="{HALF_PI} 0 0"/><geom type="sphere" size="0.2"/>', '"sphere"',
                  "body 'right' has a cylinder of radius 0.1 (line 12) and a sphere of radius 0.2 (line 12): which is the wheel?"),
    "across": ('<geom type="cylinder" fromto="0 0 -0.02 0 0 0.02" size="0.1"/>', 'fromto="0 0 -0.02',
               "the cylinder of body 'right' has its axis along (0 0 1), not along the joint's axis (0 1 0)"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(MJCF_MISTAKES))
def test_an_mjcf_wheel_without_one_radius_is_one_error_naming_its_line(drive, case, tmp_path):
    geom, at, words = MJCF_MISTAKES[case]
    text = mjcf_text(drive, geom + '<inertial mass="1" pos="0 0 0" diaginertia="1 1 1"/>', f'<geom type="sphere" size="{drive["R"]!r}"/>')
    path = tmp_path / "drive.xml"
    path.write_text(text)
    with pytest.raises(RobotFileError) as info:
        kr.load(path, discs=list(WHEELS))
    message = str(info.value)
    assert message.startswith(f"{path}:{_line_of(text, at)}: disc {WHEELS[0]}: ") and words in message, message
    assert f"give its radius, discs={{'{WHEELS[0]}': RADIUS}}" in message and "\n" not in message


def test_the_joints_are_checked_first_and_a_robot_without_shapes_says_what_to_give(urdf_path, tmp_path):
    with pytest.raises(RobotFileError, match=r"discs=\{'left_wheel': None\} \(--disc left_wheel on the command line\): disc "
                                             r"left_wheel: there is no joint left_wheel \(did you mean 'left_wheel_joint'\?\)"):
        kr.load(urdf_path, discs=["left_wheel"])
    with pytest.raises(RobotFileError, match="disc x: joint x is prismatic"):
        kr.load(urdf_path, discs=["x"])
    toml = tmp_path / "planar2.toml"
    kr.save(kr.load(kr.frames_path("planar2")), toml)
    with pytest.raises(RobotFileError) as info:
        kr.load(toml, discs=["2"])
    assert str(info.value) == (f"{toml}: discs={{'2': None}} (--disc 2 on the command line): give the disc's radius: a .toml file "
                               f"has no shapes to read it from (a .urdf or MJCF file has)")  # fmt: skip
    side = tmp_path / "planar2.discs.toml"
    side.write_text('[[disc]]\njoint = "2"\n')
    with pytest.raises(RobotFileError, match=f"{side}:1: disc 2 has no radius"):
        kr.load(toml, discs=side)


def test_a_side_file_without_radius_for_a_wheel_without_shape_names_both_lines(drive, tmp_path):
    path = tmp_path / "drive.urdf"
    text = urdf_text(drive, [], [])
    path.write_text(text)
    side = tmp_path / "drive.discs.toml"
    side.write_text(f'independent = ["{WHEELS[0]}", "{WHEELS[1]}"]\n\n[[disc]]\njoint = "{WHEELS[0]}"\nradius = 0.2\n\n'
                    f'[[disc]]\njoint = "{WHEELS[1]}"\n')  # fmt: skip
    line = _line_of(text, '<link name="left">')
    with pytest.raises(RobotFileError) as info:
        kr.load(path, discs=side)
    assert str(info.value) == (f"{path}:{line}: disc {WHEELS[1]}: link 'left' has no shape to read "
                               f"the wheel's radius from (no cylinder or sphere): give its radius, radius = RADIUS in its [[disc]] "
                               f"table ({side}:7)")  # fmt: skip


def test_krang_lab_urdf_has_no_shapes_so_its_radius_is_typed():
    """The Krang lab's URDF (examples/krang/krang_lab.urdf, generated) carries no geometry: its wheels' radius must be given."""
    path = kr.frames_path("krang").parents[1] / "examples" / "krang" / "krang_lab.urdf"
    if not path.is_file():
        pytest.skip("examples/ is not installed with the package")
    with pytest.raises(RobotFileError, match=r"krang_lab.urdf:\d+: disc wr: link '[^']+' has no shape to read the wheel's radius"):
        kr.load(path, floating=True, discs=["wr", "wl"])
