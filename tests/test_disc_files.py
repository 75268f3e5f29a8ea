"""Rolling discs declared in the files users have (issue 28): ``[[disc]]`` tables, ``kr.load(..., discs=)``, ``--disc``.

A differential drive (a chassis on x, y and heading joints, two coaxial
wheels) is written three ways here, its bodies random rigid bodies: a
``.toml`` robot whose wheels are ``[[disc]]`` tables, a URDF whose wheel
joints are named as discs when loading it, and the planar-chassis twin of
``frames/diffdrive.toml`` (``wheeled = true``, ``[[wheel]]`` tables: OpenSYMORO's
rows, :mod:`kanerobot.dynamics.wheeled`, an independent derivation of the
rolling constraints).  The three give the same constrained mass matrix and
h at random states; ``kr.derive`` of the ``.toml`` robot equals
:func:`~kanerobot.dynamics.rolling_disc.rolling_disc_model` built in Python
with every engine.
"""

from pathlib import Path

import numpy as np
import pytest
import sympy
from conftest import one_line_error

import kanerobot as kr
from kanerobot.cli import build_parser, main
from kanerobot.command_options import load_options
from kanerobot.dynamics.rolling_disc import RollingDisc, rolling_disc_model
from kanerobot.errors import DescriptionError, KaneRobotError, RobotFileError
from kanerobot.robot.description import Disc, Ground
from kanerobot.robot.frames_toml import frames_from_text
from kanerobot.robot.urdf import about_origin

METHODS = ("newton-euler", "lagrange", "kane")
I3 = "[[1, 0, 0], [0, 1, 0], [0, 0, 1]]"


def body(rng, size=0.2):
    """``(mass, centre, inertia about the centre)`` of a random rigid body."""
    m = rng.uniform(0.5, 3.0)
    a, b, c = m * rng.uniform(0.05, 1.0, 3) * size**2
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return m, rng.uniform(-size, size, 3), Q @ np.diag([b + c, a + c, a + b]) @ Q.T


# ------------------------------------------------------------------ the robot, three ways
@pytest.fixture(scope="module")
def drive():
    """Lengths, bodies (chassis, right wheel, left wheel) and the random states of the differential drive."""
    rng = np.random.default_rng(28)
    R, b = float(rng.uniform(0.1, 0.3)), float(rng.uniform(0.3, 0.6))
    q = rng.uniform(-1.0, 1.0, (4, 5))
    return {"R": R, "b": b, "bodies": [body(rng) for _ in range(3)], "q": q, "v": rng.uniform(-2.0, 2.0, (4, 2))}


def _dynamics_table(inertial):
    m, c, I = inertial
    J, MS = about_origin(m, c, I)
    names = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")
    numbers = (J[0, 0], J[0, 1], J[0, 2], J[1, 1], J[1, 2], J[2, 2], *MS, m)
    return "[frame.dynamics]\n" + "\n".join(f"{k} = {float(v)!r}" for k, v in zip(names, numbers)) + "\nIA = 0\nFV = 0\nFS = 0\n"


def _frame(label, antecedent, sigma, P, axis, q, extra=""):
    return (f'\n[[frame]]\nlabel = "{label}"\nantecedent = "{antecedent}"\nsigma = {sigma}\nR0 = {I3}\nP = {P}\n'
            f'axis = {axis}\nq = "{q}"\n{extra}')  # fmt: skip


def toml_text(drive, rolling="discs"):
    """The robot as a .toml text: its wheels ``[[disc]]`` tables (``rolling="discs"``), ``[[wheel]]`` tables of a
    planar chassis (``"wheels"``) or free (``"tree"``)."""
    chassis, right, left = (_dynamics_table(x) for x in drive["bodies"])
    top = {"discs": 'independent = ["wr", "wl"]\n', "wheels": 'wheeled = true\nposture = ["x", "y", "th"]\n', "tree": ""}[rolling]
    text = (f'name = "drive"\n{top}\n[base]\nG = [0, 0, -9.81]\n'
            + _frame("x", "0", 1, "[0, 0, 0]", "[1, 0, 0]", "x", "mu = 0\nlink = false\n")
            + _frame("y", "x", 1, "[0, 0, 0]", "[0, 1, 0]", "y", "mu = 0\nlink = false\n")
            + _frame("th", "y", 0, '[0, 0, "R"]', "[0, 0, 1]", "th", "mu = 0\n" + chassis)
            + _frame("wr", "th", 0, '[0, "-b/2", 0]', "[0, 1, 0]", "phi_r", right)
            + _frame("wl", "th", 0, '[0, "b/2", 0]', "[0, 1, 0]", "phi_l", left))  # fmt: skip
    table = {"discs": "disc", "wheels": "wheel"}.get(rolling)
    if table:
        text += "".join(f'\n[[{table}]]\njoint = "{w}"\nradius = "R"\n' for w in ("wr", "wl"))
    return text


def urdf_text(drive):
    """The same robot as a URDF: the chassis on joints x, y (prismatic, massless links) and yaw, the wheels continuous."""

    def inertial(x):
        m, c, I = float(x[0]), [float(v) for v in x[1]], np.asarray(x[2], dtype=float).tolist()
        return (f'<inertial><origin xyz="{c[0]!r} {c[1]!r} {c[2]!r}"/><mass value="{m!r}"/><inertia ixx="{I[0][0]!r}" '
                f'ixy="{I[0][1]!r}" ixz="{I[0][2]!r}" iyy="{I[1][1]!r}" iyz="{I[1][2]!r}" izz="{I[2][2]!r}"/></inertial>')  # fmt: skip

    def joint(name, kind, parent, child, xyz, axis):
        return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
                f'<origin xyz="{xyz}"/><axis xyz="{axis}"/></joint>')  # fmt: skip

    R, b = drive["R"], drive["b"]
    chassis, right, left = (inertial(x) for x in drive["bodies"])
    return "\n".join([
        '<?xml version="1.0"?>', '<robot name="drive">', '<link name="world"/>', '<link name="slide_x"/>', '<link name="slide_y"/>',
        f'<link name="chassis">{chassis}</link>', f'<link name="right">{right}</link>', f'<link name="left">{left}</link>',
        joint("x", "prismatic", "world", "slide_x", "0 0 0", "1 0 0"), joint("y", "prismatic", "slide_x", "slide_y", "0 0 0", "0 1 0"),
        joint("yaw", "continuous", "slide_y", "chassis", f"0 0 {R!r}", "0 0 1"),
        joint("right_wheel_joint", "continuous", "chassis", "right", f"0 {-b / 2!r} 0", "0 1 0"),
        joint("left_wheel_joint", "continuous", "chassis", "left", f"0 {b / 2!r} 0", "0 1 0"), "</robot>", "",
    ])  # fmt: skip


@pytest.fixture(scope="module")
def disc_robot(drive):
    return frames_from_text(toml_text(drive), "drive.toml")


@pytest.fixture(scope="module")
def urdf_path(drive, tmp_path_factory):
    path = tmp_path_factory.mktemp("urdf") / "drive.urdf"
    path.write_text(urdf_text(drive))
    return path


def lengths(drive):
    return {"R": drive["R"], "b": drive["b"]}


def matrices(model, values, drive):
    """M and h of ``model`` at the drive's random states (the wheels' rates the independent speeds)."""
    fn = model.numeric(values)
    return [(fn.mass_matrix(q), fn.h(q, v)) for q, v in zip(drive["q"], drive["v"])]


def assert_same(got, expected, tol=1e-10):
    for (M, h), (M0, h0) in zip(got, expected):
        np.testing.assert_allclose(M, M0, rtol=0, atol=tol)
        np.testing.assert_allclose(h, h0, rtol=0, atol=tol)


@pytest.fixture(scope="module")
def twin(drive):
    """M and h of the planar-chassis twin (``frames/diffdrive.toml``'s wheels, :mod:`kanerobot.dynamics.wheeled`)."""
    model = kr.derive(frames_from_text(toml_text(drive, "wheels")))
    assert model.independent == ("wr", "wl")
    return matrices(model, lengths(drive), drive)


# ------------------------------------------------------------------ the models
def test_discs_of_a_toml_robot_equal_its_planar_chassis_twin(disc_robot, drive, twin):
    """``[[disc]]`` tables derive through kr.derive (a RollingDisc) and give the wheeled twin's M and h."""
    assert disc_robot.discs == (Disc("wr", "R"), Disc("wl", "R")) and disc_robot.independent == ("wr", "wl")
    model = kr.derive(disc_robot)
    assert isinstance(model.constraint, RollingDisc) and model.independent == ("wr", "wl")
    # the contact rows vanish and the second lateral row is the first's on level ground: both dropped
    assert [kind for _, kind in model.constraint.rows] == ["rolling", "lateral", "rolling"]
    assert model.constraint.redundant == (("wl", "lateral"),)
    assert model.op_count("mass_matrix")["mul"] > 0  # the dependent block is square: symbolic programs too
    assert_same(matrices(model, lengths(drive), drive), twin)
    bound = model.numeric(lengths(drive), bind=True)  # the robot rebuilt with its numbers: its discs go with it
    np.testing.assert_allclose(bound.mass_matrix(drive["q"][0]), twin[0][0], rtol=0, atol=1e-10)


@pytest.mark.parametrize("method", [METHODS[0], pytest.param(METHODS[1], marks=pytest.mark.long), METHODS[2]])
def test_every_engine_equals_rolling_disc_model_built_in_python(disc_robot, drive, method, twin):
    tree = frames_from_text(toml_text(drive, "tree"))
    python = matrices(rolling_disc_model(tree, {"wr": "R", "wl": "R"}, method, independent=["wr", "wl"]), lengths(drive), drive)
    derived = matrices(kr.derive(disc_robot, method), lengths(drive), drive)
    assert_same(derived, python, tol=1e-12)
    assert_same(derived, twin)


def test_a_urdf_loaded_with_discs_equals_the_toml_robot(urdf_path, drive, twin):
    robot = kr.load(urdf_path, discs={"right_wheel_joint": drive["R"], "left_wheel_joint": drive["R"]})
    assert [d.joint for d in robot.discs] == ["right_wheel_joint", "left_wheel_joint"] and robot.ground == Ground()
    model = kr.derive(robot)
    assert model.independent == ("right_wheel_joint", "left_wheel_joint")  # chosen: x, y, yaw the dependent speeds
    assert_same(matrices(model, dict(robot.values), drive), twin)


def test_the_side_file_gives_what_the_option_gives(urdf_path, drive, tmp_path):
    side = tmp_path / "drive.discs.toml"
    side.write_text(f'[[disc]]\njoint = "right_wheel_joint"\nradius = {drive["R"]!r}\n\n'
                    f'[[disc]]\njoint = "left_wheel_joint"\nradius = {drive["R"]!r}\n')  # fmt: skip
    by_option = kr.load(urdf_path, discs={"right_wheel_joint": drive["R"], "left_wheel_joint": drive["R"]})
    assert kr.load(urdf_path, discs=side) == by_option == kr.load(urdf_path, discs=str(side))


def test_an_mjcf_robot_takes_discs_too(urdf_path, drive, tmp_path, twin):
    pytest.importorskip("mujoco", reason="pip install -e '.[test]' (MuJoCo compiles the file written)")
    xml = tmp_path / "drive.xml"
    kr.save(kr.load(urdf_path), xml)
    robot = kr.load(xml, discs={"right_wheel_joint": drive["R"], "left_wheel_joint": drive["R"]})
    assert_same(matrices(kr.derive(robot), dict(robot.values), drive), twin)


# ------------------------------------------------------------------ writing back
def test_toml_round_trip_keeps_discs_ground_and_independent(disc_robot, urdf_path, drive, tmp_path):
    tilted = frames_from_text(toml_text(drive, "tree")).with_discs(
        [("wr", "R", "rt"), ("wl", "R")], Ground(["sin(alpha)", 0, "cos(alpha)"], "h"), ["x", "wl"])
    for robot in (disc_robot, tilted, kr.load(urdf_path, discs={"left_wheel_joint": (0.2, 0.01)})):
        path = tmp_path / f"{robot.name}.toml"
        kr.save(robot, path)
        again = kr.load(path)
        assert again == robot and again.discs == robot.discs and again.ground == robot.ground
    assert "tyre = " in path.read_text() and "[ground]" not in path.read_text()
    kr.save(tilted, tmp_path / "tilted.toml")
    assert '[ground]\nnormal = ["sin(alpha)", 0, "cos(alpha)"]\nheight = "h"' in (tmp_path / "tilted.toml").read_text()
    assert kr.load(tmp_path / "tilted.toml").subs({"alpha": 0.1, "h": 0, "rt": 0.01, "R": 0.2}).ground.normal[0] == sympy.sin(0.1)


# ------------------------------------------------------------------ mistakes, each one line
def _line_of(text, needle):
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(
    "change, at, words",
    [
        (('joint = "wl"\nradius = "R"', 'joint = "wheel_l"\nradius = "R"'), 'joint = "wheel_l"', "there is no joint wheel_l"),
        (('joint = "wl"\nradius = "R"', 'joint = "x"\nradius = "R"'), 'joint = "x"', "joint x is prismatic, but a disc turns about its axle"),
        (('joint = "wl"\nradius = "R"', 'joint = "wl"\nradius = -0.2'), "radius = -0.2", "a disc's radius must be > 0"),
        (('joint = "wl"\nradius = "R"', 'joint = "wl"\nradius = "R"\ntyre = -1'), "tyre = -1", "tyre radius must be >= 0"),
        (('joint = "wl"\nradius = "R"', 'joint = "wr"\nradius = "R"'), None, "disc wr is declared twice"),
        (('joint = "wl"\nradius = "R"', 'joint = "wl"'), None, "disc wl has no radius"),
        (('joint = "wl"\nradius = "R"', 'joint = "wl"\nradius = "R"\nradiuss = 1'), "radiuss", "unknown key 'radiuss' in disc wl (did you mean 'radius'?)"),
        (('radius = "R"\n', 'radius = "R"\n\n[ground]\nnormal = [0, 0, 2]\n', 1), "normal = [0, 0, 2]", "is not a unit vector"),
        (('radius = "R"\n', 'radius = "R"\n\n[ground]\nnormal = [0, 1]\n', 1), "normal = [0, 1]", "must be a list of 3 values"),
        (('independent = ["wr", "wl"]', 'independent = ["wr", "wheel"]'), "independent", "independent speed wheel is not a frame"),
        (('independent = ["wr", "wl"]', 'wheeled = true\nposture = ["x", "y", "th"]'), 'joint = "wr"', "describe its wheels either as wheels"),
    ],
    ids=["unknown joint", "prismatic", "radius", "tyre", "twice", "no radius", "unknown key", "normal", "normal size",
         "independent", "wheeled"],
)  # fmt: skip
def test_every_malformed_disc_table_names_its_line(drive, change, at, words):
    old, new, *count = change
    text = toml_text(drive).replace(old, new, *count)
    with pytest.raises(RobotFileError) as info:
        frames_from_text(text, "drive.toml")
    message = str(info.value)
    assert words in message, message
    line = _line_of(text, at) if at else None
    if at == 'joint = "wr"' or at is None:  # the second [[disc]] (or the first, for the wheeled robot)
        assert message.startswith("drive.toml:") and message.split(":")[1].isdigit(), message
    else:
        assert message.startswith(f"drive.toml:{line}: "), message


@pytest.mark.parametrize(
    "discs, words",
    [
        ({"left_wheel": 0.2}, "discs={'left_wheel': 0.2} (--disc left_wheel=0.2 on the command line): disc left_wheel: there is no joint "
                              "left_wheel (did you mean 'left_wheel_joint'?)"),
        ({"x": 0.2}, "discs={'x': 0.2} (--disc x=0.2 on the command line): disc x: joint x is prismatic"),
        ({"left_wheel_joint": -0.2}, "discs={'left_wheel_joint': -0.2} (--disc left_wheel_joint=-0.2 on the command line): disc "
                                     "left_wheel_joint has radius -0.2"),
        ({"left_wheel_joint": (0.2, -0.01)}, "tyre radius must be >= 0"),
        ({"left_wheel_joint": (0.2, 0.01, 3)}, "give a disc's radius (a number or an expression), or (radius, tyre)"),
        ({"left_wheel_joint": True}, "give a disc's radius"),
        ({"left_wheel_joint": "q_yaw"}, "radius of disc left_wheel_joint uses q_yaw (the joint variable of frame yaw)"),
        (0.2, "discs=0.2: give {joint: radius}, [joint, ...] (the radii read from the file) or the path of a file of [[disc]] tables"),
    ],
    ids=["unknown", "prismatic", "radius", "tyre", "three", "bool", "joint variable", "not a mapping"],
)
def test_every_malformed_option_names_its_value(urdf_path, discs, words):
    with pytest.raises(RobotFileError) as info:
        kr.load(urdf_path, discs=discs)
    assert str(info.value).startswith(f"{urdf_path}: ") and words in str(info.value), str(info.value)


def test_side_file_mistakes_name_its_line(urdf_path, tmp_path):
    side = tmp_path / "bad.discs.toml"
    cases = [
        ('[[disc]]\njoint = "left_wheel_joint"\nradius = 0.2\n\n[[disc]]\njoint = "rigth_wheel_joint"\nradius = 0.2\n', 6,
         "there is no joint rigth_wheel_joint (did you mean 'right_wheel_joint'?)"),
        ('[[disc]]\njoint = "left_wheel_joint"\nradius = 0.2\n[[frame]]\nlabel = "1"\n', 4, "unknown key 'frame' in a file of discs"),
        ('independent = ["yaw"]\n', 1, "no discs: declare each in a [[disc]] table"),
        ('[[disc]]\njoint = "left_wheel_joint"\nradius = 0.2\n[ground]\nnormal = [0, 0.6, 0.7]\n', 5, "is not a unit vector"),
        ('[[disc]]\njoint = "left_wheel_joint"\nradius = [0.2]\n', 3, "radius of disc left_wheel_joint must be a number"),
    ]
    for text, line, words in cases:
        side.write_text(text)
        with pytest.raises(RobotFileError) as info:
            kr.load(urdf_path, discs=side)
        assert str(info.value).startswith(f"{side}:{line}: ") and words in str(info.value), str(info.value)
    with pytest.raises(RobotFileError, match="no such file"):
        kr.load(urdf_path, discs=tmp_path / "none.toml")


def test_a_file_with_discs_takes_no_option_and_the_description_refuses_in_python(disc_robot, tmp_path):
    path = tmp_path / "drive.toml"
    kr.save(disc_robot, path)
    with pytest.raises(RobotFileError, match=r"declares its discs \(wr, wl\) itself: load it without discs="):
        kr.load(path, discs={"wl": 0.1})
    tree = kr.load(kr.frames_path("planar2"))
    assert kr.Robot.create("arm", tree.frames, discs={"2": (0.1, 0.01)}).discs == (Disc("2", 0.1, 0.01),)
    with pytest.raises(DescriptionError, match="the robot has a ground but no discs"):
        tree.with_discs([], Ground([0, 1, 0]))
    with pytest.raises(DescriptionError, match="independent speeds are chosen for the constraints of rolling discs"):
        kr.Robot.create("arm", tree.frames, independent=["1"])
    with pytest.raises(KaneRobotError, match="rolling discs with mimic joints are not supported yet"):
        kr.derive(kr.Robot.create("arm", tree.frames, discs=[("2", 0.1)], mimics=[("2", "1", 1, 0)]))


# ------------------------------------------------------------------ the command line
def test_cli_disc_options_load_what_kr_load_does(urdf_path, drive, tmp_path, capsys):
    from kanerobot.report import robot_tables, summary

    R = drive["R"]
    options = {"discs": {"right_wheel_joint": R, "left_wheel_joint": R}}
    flags = ["--disc", f"right_wheel_joint={R!r}", "--disc", f"left_wheel_joint={R!r}"]
    assert load_options(build_parser().parse_args(["info", str(urdf_path), *flags])) == options
    assert main(["info", str(urdf_path), *flags]) == 0
    robot = kr.load(urdf_path, **options)
    assert capsys.readouterr().out == summary(robot) + "\n" + robot_tables(robot)
    assert load_options(build_parser().parse_args(["info", str(urdf_path), "--disc", "left_wheel_joint=0.2,0.01"])) == {
        "discs": {"left_wheel_joint": (0.2, 0.01)}}
    out = tmp_path / "drive.toml"
    assert main(["convert", str(urdf_path), str(out), *flags]) == 0
    assert kr.load(out) == robot
    side = tmp_path / "drive.discs.toml"
    side.write_text(f'[[disc]]\njoint = "right_wheel_joint"\nradius = {R!r}\n[[disc]]\njoint = "left_wheel_joint"\nradius = {R!r}\n')
    assert load_options(build_parser().parse_args(["model", str(urdf_path), "idm", "--discs", str(side)])) == {"discs": str(side)}


@pytest.mark.parametrize(
    "flags, words",
    [
        (["--disc", "left_wheel=0.2"], "kanerobot: error: "),
        (["--disc", "=0.2"], "argument --disc: takes JOINT=RADIUS, JOINT=RADIUS,TYRE (a torus wheel) or JOINT"),
        (["--disc", "left_wheel_joint=-1"], "disc left_wheel_joint has radius -1"),
        (["--disc", "left_wheel_joint=0.2", "--disc", "left_wheel_joint=0.3"], "joint 'left_wheel_joint' is given twice"),
        (["--disc", "left_wheel_joint=0.2", "--discs", "side.toml"], "argument --discs: not allowed with argument --disc"),
        (["--discs", "none.toml"], "none.toml: no such file: the side file of discs= (--discs on the command line)"),
    ],
    ids=["unknown", "no radius", "radius", "twice", "both", "no side file"],
)
def test_cli_disc_mistakes_exit_2_with_one_line(urdf_path, flags, words, capsys):
    line = one_line_error(capsys, "info", urdf_path, *flags)
    assert words in line, line
    if flags[1] == "left_wheel=0.2":
        assert "--disc left_wheel=0.2 on the command line" in line and "did you mean 'left_wheel_joint'" in line, line


def test_docs_example_reads(tmp_path):
    doc = (Path(__file__).resolve().parents[1] / "docs" / "frames-format.md").read_text()
    section = doc.split("## Rolling discs: `[[disc]]` and `[ground]`", 1)[1]
    block = section.split("```toml\n", 1)[1].split("```", 1)[0]
    drive = {"R": 0.2, "b": 0.5, "bodies": [body(np.random.default_rng(1)) for _ in range(3)]}
    frames = toml_text(drive, "tree").split("\n[base]", 1)[1]  # the frames of the example, written out
    robot = frames_from_text(block.split("\n\n", 1)[0] + '\nname = "drive"\n\n[base]' + frames + block.split("\n\n", 1)[1])
    assert [d.joint for d in robot.discs] == ["wr", "wl"] and robot.independent == ("wr", "wl") and robot.ground == Ground()


@pytest.mark.parametrize("suffix, words", [
    (".urdf", "joint(s) wr, wl are rolling discs (rolling on the ground has no URDF form)"),
    (".xml", "joint(s) wr, wl are rolling discs (rolling without slipping has no MJCF form)"),
    (".par", "rolling discs (wr, wl) have no place in a .par file"),
])  # fmt: skip
def test_the_formats_without_discs_refuse_them_rather_than_drop_them(disc_robot, suffix, words, tmp_path):
    """A URDF, MJCF or .par file cannot say that a wheel rolls: saving a disc robot there is one error and no file."""
    target = tmp_path / f"drive{suffix}"
    with pytest.raises(RobotFileError) as info:
        kr.save(disc_robot, target)
    assert words in str(info.value) and "\n" not in str(info.value), str(info.value)
    assert not target.exists()


def test_khalil_kleinfinger_conversion_and_pinocchio_refuse_discs(disc_robot):
    from kanerobot.interop import to_pinocchio
    from kanerobot.robot.khalil_kleinfinger import to_khalil_kleinfinger

    with pytest.raises(DescriptionError, match=r"drive has rolling discs \(wr, wl\)"):
        to_khalil_kleinfinger(disc_robot)
    with pytest.raises(KaneRobotError, match="no loops, wheels or rolling discs"):
        to_pinocchio(disc_robot, {})


def test_robot_dof_counts_the_discs_rows(disc_robot, urdf_path):
    """The differential drive: 5 joints, 3 independent rows (the two contact rows vanish, the two lateral rows of
    the common axle are one), so 2 degrees of freedom, the independent speeds of its model and of its twin."""
    assert disc_robot.dof == 2 == len(RollingDisc(disc_robot, {d.joint: d.radius for d in disc_robot.discs}).independent)
    assert kr.load(urdf_path, discs={"right_wheel_joint": 0.2, "left_wheel_joint": 0.2}).dof == 2
    assert kr.load(kr.frames_path("diffdrive")).dof == 2
