"""Frame-tree TOML files: round trips, and one clear error per bad file."""

import os
import textwrap
from pathlib import Path

import pytest
import sympy
from conftest import corpus_files

from kanerobot.errors import RobotFileError
from kanerobot.robot import frames_toml
from kanerobot.robot.description import Base, Frame, GeneralPlacement, KKPlacement, Robot

FRAMES = Path(__file__).resolve().parents[1] / "frames"
KRANG = FRAMES / "krang.toml"

S = sympy.Symbol
M = sympy.ImmutableMatrix


def load(path):
    """kanerobot.robot.io.load, or the TOML reader itself if io cannot import."""
    try:
        from kanerobot.robot.io import load as io_load
    except ImportError:
        return frames_toml.read_frames(path)
    return io_load(path)


def save(robot, path):
    try:
        from kanerobot.robot.io import save as io_save
    except ImportError:
        from kanerobot.robot.io import atomic_write_text

        return atomic_write_text(path, frames_toml.write_frames(robot, path))
    return io_save(robot, path)


def round_trip(robot, tmp_path, name="robot.toml"):
    path = tmp_path / name
    save(robot, path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temporary left
    again = load(path)
    assert again == robot
    assert frames_toml.write_frames(again, path) == path.read_text()
    return path


# ------------------------------------------------------------------ robots
def serial_3r():
    th1, th2, th3, d2, d3 = sympy.symbols("th1 th2 th3 d2 d3")
    return Robot.create(
        "serial3R",
        [
            Frame("1", "0", 0, 1, KKPlacement(theta=th1)),
            Frame("2", "1", 0, 1, KKPlacement(alpha=sympy.pi / 2, d=d2, theta=th2)),
            Frame("3", "2", 0, 1, KKPlacement(d=d3, theta=th3 - sympy.pi / 2, r=sympy.Rational(1, 4))),
        ],
    )


def tree():
    th = sympy.symbols("th1:6")
    return Robot.create(
        "tree",
        [
            Frame("1", "0", 0, 1, KKPlacement(theta=th[0])),
            Frame("2", "1", 0, 1, KKPlacement(d=S("D2"), theta=th[1])),
            Frame("3", "1", 0, 1, KKPlacement(d=-S("D2"), theta=th[2])),
            Frame("4", "2", 1, 1, KKPlacement(alpha=-sympy.pi / 2, r=S("r4"))),
            Frame("5", "3", 0, 1, KKPlacement(gamma=S("g5"), b=S("b5"), theta=th[4])),
            Frame("6", "4", 2, 1, KKPlacement(r=0.125)),
        ],
    )


def four_bar():
    """Base, crank 1, coupler 2, rocker 3; the loop is cut at joint 4
    (between the rocker and the base) and closed by fixed frame 5."""
    th = sympy.symbols("th1:5")
    return Robot.create(
        "fourbar",
        [
            Frame("1", "0", 0, 1, KKPlacement(theta=th[0])),
            Frame("2", "1", 0, 0, KKPlacement(d=S("L1"), theta=th[1])),
            Frame("3", "2", 0, 0, KKPlacement(d=S("L2"), theta=th[2])),
            Frame("4", "0", 0, 0, KKPlacement(d=S("L0"), theta=th[3])),
            Frame("5", "3", 2, 0, KKPlacement(d=S("L3"))),
        ],
        loops=[("4", "5")],
    )


def customised():
    """Mixed placements, floating base, non-default everything."""
    c, s = sympy.cos(S("a")), sympy.sin(S("a"))
    R = M([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    return Robot.create(
        "custom",
        [
            Frame("1", "0", 0, 1, KKPlacement(theta=S("q1"), r=sympy.Float(0.5))),
            Frame("a", "1", 1, 1, GeneralPlacement(R, M([S("L1"), 0, S("h") / 2]), M([0, 1, 0]), S("qa"))),
            Frame("tool", "a", 2, 1, GeneralPlacement(M(sympy.eye(3)), M([0, 0, S("Lt")]), M([1, 0, 0]))),
            Frame("b", "1", 0, 1, GeneralPlacement(M(sympy.eye(3)), M([0, 0, 0]), M([0, 0, 1]), S("qb"))),
        ],
        links=["0", "1", "a", "tool"],
        dynamics={"0": {"M": 12}, "1": {"M": S("m1"), "FV": 0}, "a": {"XX": 0.25, "MZ": S("MZa") * 2}},
        joint_parameters={"a": {"eta": 1, "k": 1000}, "b": {"QP": 0}},
        base=Base.from_values(G=[0, 0, "-g"], W0=[0, 0, "w"], Z=[[0, -1, 0, 1], [1, 0, 0, 0], [0, 0, 1, "h0"], [0, 0, 0, 1]]),
        floating=True,
    )


# -------------------------------------------------------------- round trips
def test_krang_round_trip(tmp_path):
    robot = load(KRANG)
    path = round_trip(robot, tmp_path, "krang.toml")
    text = path.read_text()
    assert "[base]" not in text and "dynamics" not in text and "[frame.joint]" not in text
    assert text.count("[[frame]]") == 17


@pytest.mark.parametrize("build", [serial_3r, tree, four_bar, customised], ids=lambda f: f.__name__)
def test_round_trip(build, tmp_path):
    round_trip(build(), tmp_path)


def test_four_bar_file_reads_the_loop(tmp_path):
    robot = four_bar()
    path = round_trip(robot, tmp_path)
    again = load(path)
    assert again.loops == (("4", "5"),)
    assert again.structure == "closed loop"
    assert again.links == ("1", "2", "3")
    assert again.active_joints == ("1",)
    assert 'closes = "4"' in path.read_text()


def test_writer_leaves_out_defaults():
    text = frames_toml.write_frames(customised())
    assert "[base]" in text and "[base.dynamics]" in text and "M = 12" in text
    assert "G3" not in text and 'G = [0, 0, "-g"]' in text
    assert "XX1" not in text and "FV = 0" in text and "XX = 0.25" in text
    assert 'link = true' in text  # the fixed frame 'tool' carries a link
    assert "eta = 1" in text and "QP = 0" in text and "QDP" not in text
    assert 'R0 = [["cos(a)", "-sin(a)", 0], ["sin(a)", "cos(a)", 0], [0, 0, 1]]' in text


def test_writer_refuses_what_the_format_cannot_say(tmp_path):
    robot = serial_3r()
    robot = Robot.create(robot.name, robot.frames, links=["3", "1", "2"])
    with pytest.raises(RobotFileError, match="frame order"):
        save(robot, tmp_path / "out.toml")
    assert list(tmp_path.iterdir()) == []


def test_name_defaults_to_the_file_name(tmp_path):
    path = tmp_path / "arm.toml"
    path.write_text('[[frame]]\nlabel = 1\nantecedent = 0\nsigma = 0\ntheta = "t1"\n')
    robot = load(path)
    assert robot.name == "arm" and robot.labels == ("1",) and robot.frame("1").antecedent == "0"


def test_shipped_example_in_the_docs_reads(tmp_path):
    doc = (Path(__file__).resolve().parents[1] / "docs" / "frames-format.md").read_text()
    block = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "example.toml"
    path.write_text(block)
    robot = load(path)
    assert robot.structure == "closed loop"
    again = tmp_path / "again"
    again.mkdir()
    round_trip(robot, again)


# ------------------------------------------------------------ bad files
GOOD_HEAD = """\
name = "bad"

[[frame]]
label = "1"
antecedent = "0"
sigma = 0
theta = "th1"
"""

BAD = {
    "toml_syntax": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent "1"    # <-
sigma = 0
""",
    "unknown_top_key": 'nmae = "x"  # <-\n' + GOOD_HEAD,
    "unknown_frame_key": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 0
thetta = "th2"   # <-
""",
    "unknown_dynamics_key": GOOD_HEAD + """
[frame.dynamics]
M = 3
MASS = 4   # <-
""",
    "unknown_base_key": """\
name = "bad"
[base]
g = [0, 0, -9.81]   # <-
""" + GOOD_HEAD.split("\n", 1)[1],
    "R0_2x3": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 0
R0 = [[1, 0, 0], [0, 1, 0]]   # <-
P = [0, 0, 0]
axis = [0, 0, 1]
q = "q2"
""",
    "P_two_values": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 0
R0 = [
  [1, 0, 0],
  [0, 1, 0],
  [0, 0, 1],
]
P = [0, "L1"]   # <-
axis = [0, 0, 1]
q = "q2"
""",
    "axis_not_unit": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 0
R0 = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
P = [0, 0, 0]
axis = [1, 1, 0]   # <-
q = "q2"
""",
    "R0_not_rotation": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 0
R0 = [[1, 0, 0], [0, 1, 0], [0, 0, -1]]   # <-
P = [0, 0, 0]
axis = [0, 0, 1]
q = "q2"
""",
    "sigma_5": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 5   # <-
theta = "th2"
""",
    "mu_float": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 0
mu = 1.0   # <-
theta = "th2"
""",
    "antecedent_cycle": """\
name = "cycle"

[[frame]]
label = "1"
antecedent = "2"   # <-
sigma = 0
theta = "th1"

[[frame]]
label = "2"
antecedent = "1"
sigma = 0
theta = "th2"
""",
    "unknown_antecedent": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "7"   # <-
sigma = 0
theta = "th2"
""",
    "closes_missing_frame": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 2
d = "L2"
closes = "9"   # <-
""",
    "closes_a_fixed_frame": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "0"
sigma = 2
d = "L0"

[[frame]]
label = "3"
antecedent = "1"
sigma = 2
d = "L1"
closes = "2"   # <-
""",
    "joint_closes": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "0"
sigma = 0
theta = "th2"

[[frame]]
label = "3"
antecedent = "1"
sigma = 0
theta = "th3"
closes = "2"   # <-
""",
    "injection_q": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 0
R0 = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
P = [0, 0, 0]
axis = [0, 0, 1]
q = "__import__('os').system('touch PWNED')"   # <-
""",
    "injection_dynamics": GOOD_HEAD + """
[frame.dynamics]
XX = "().__class__.__base__.__subclasses__()"   # <-
""",
    "duplicate_label": GOOD_HEAD + """
[[frame]]
label = "1"   # <-
antecedent = "1"
sigma = 0
theta = "th2"
""",
    "mixed_placements": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 0
d = "L1"
theta = "th2"
P = [0, 0, 1]   # <-
""",
    "revolute_without_variable": GOOD_HEAD + """
[[frame]]   # <-
label = "2"
antecedent = "1"
sigma = 0
d = "L1"
""",
    "general_joint_without_q": GOOD_HEAD + """
[[frame]]   # <-
label = "2"
antecedent = "1"
sigma = 1
P = [0, 0, 1]
""",
    "same_joint_variable": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 0
R0 = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
P = [0, 0, 0]
axis = [0, 0, 1]
q = "th1"   # <-
""",
    "single_bracket_frame": 'name = "x"\n[frame]   # <-\nlabel = "1"\nantecedent = "0"\nsigma = 0\ntheta = "t"\n',
    "dynamics_on_fixed_frame": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 2
d = "L1"
[frame.dynamics]   # <-
M = 2
""",
    "flexible_eta_2": GOOD_HEAD + """
[frame.joint]
eta = 2   # <-
""",
    "complex_value": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 0
R0 = [[1, 0, 0], [0, "sqrt(-1)", 0], [0, 0, 1]]   # <-
P = [0, 0, 0]
axis = [0, 0, 1]
q = "q2"
""",
    "not_finite": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 0
d = nan   # <-
theta = "th2"
""",
    "bad_expression": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 0
d = "L1 +* 2"   # <-
theta = "th2"
""",
    "link_not_bool": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 0
theta = "th2"
link = "yes"   # <-
""",
    # Found by tests/test_fuzz.py (issue 13): a raw ValueError from tomllib,
    # a bare RecursionError message, joint variables and rates taken as parameters.
    "integer_of_5000_digits": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 0
d = """ + "9" * 5000 + """   # <-
theta = "th2"
""",
    "deep_nesting": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 0
d = "%s"   # <-
theta = "th2"
""" % ("-" * 1500 + "L1"),
    "deep_arrays": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 0
P = %s   # <-
q = "th2"
""" % ("[" * 3000 + "]" * 3000),
    "joint_variable_as_mass": GOOD_HEAD + """
[frame.dynamics]
M = "2*th1"   # <-
""",
    "joint_variable_in_P": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 0
P = ["L1", "th1", 0]   # <-
q = "th2"
""",
    "rate_in_gravity": GOOD_HEAD + """
[base]
G = [0, 0, "QP1"]   # <-
""",
    "rate_is_a_joint_variable": GOOD_HEAD + """
[[frame]]
label = "2"
antecedent = "1"
sigma = 0
theta = "th2"
[frame.joint]
QDP = "th1"   # <-
""",
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_file_gives_one_error_at_its_line(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = textwrap.dedent(BAD[case])
    expected = [n for n, line in enumerate(text.splitlines(), 1) if "# <-" in line]
    assert len(expected) == 1, "the test file marks its bad line with '# <-'"
    path = tmp_path / f"{case}.toml"
    path.write_text(text)
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(RobotFileError) as info:
        load(path)
    err = info.value
    assert err.line == expected[0], str(err)
    assert f"{case}.toml:{expected[0]}: " in str(err)
    assert str(path) in str(err)
    assert "Traceback" not in str(err)
    assert sorted(os.listdir(tmp_path)) == before  # nothing was created
    assert not (tmp_path / "PWNED").exists() and not Path("PWNED").exists()


def test_messages_say_what_to_fix(tmp_path):
    def message(case):
        path = tmp_path / f"{case}.toml"
        path.write_text(textwrap.dedent(BAD[case]))
        with pytest.raises(RobotFileError) as info:
            load(path)
        return info.value.reason

    assert "'thetta'" in message("unknown_frame_key") and "did you mean 'theta'" in message("unknown_frame_key")
    assert "known keys: label, antecedent, sigma" in message("unknown_frame_key")
    assert "3 rows of 3 values" in message("R0_2x3")
    assert "unit" in message("axis_not_unit")
    assert "rotation" in message("R0_not_rotation")
    assert "0 (revolute), 1 (prismatic) or 2 (fixed)" in message("sigma_5")
    assert "cycle" in message("antecedent_cycle")
    assert "not a frame" in message("unknown_antecedent")
    assert "does not close" in message("closes_missing_frame")
    assert "does not close" in message("closes_a_fixed_frame")
    assert "must be fixed" in message("joint_closes")
    assert "is not an allowed" in message("injection_q")
    assert "TOML syntax error" in message("toml_syntax")
    assert "[[frame]]" in message("single_bracket_frame")


def test_fuzz_findings_say_what_is_wrong(tmp_path):
    def message(case):
        path = tmp_path / f"{case}.toml"
        path.write_text(textwrap.dedent(BAD[case]))
        with pytest.raises(RobotFileError) as info:
            load(path)
        return info.value.reason

    assert "too many digits" in message("integer_of_5000_digits")
    assert "nested more than" in message("deep_nesting")
    assert "nested too deeply (more than 50 levels)" in message("deep_arrays")
    assert "M of link 1 uses th1" in message("joint_variable_as_mass")
    assert "P of frame 2 uses th1" in message("joint_variable_in_P")
    assert "G of the base uses QP1" in message("rate_in_gravity")
    assert "QDP of joint 2 is th1, the joint variable of frame 1" in message("rate_is_a_joint_variable")


def test_byte_order_mark_is_not_text(tmp_path):
    """Windows editors may start a UTF-8 file with a byte-order mark."""
    path = tmp_path / "krang.toml"
    path.write_bytes(KRANG.read_text().encode("utf-8-sig"))
    assert load(path) == load(KRANG)


def test_unreadable_and_missing_files(tmp_path):
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"name = \"\xff\xfe\"\n")
    with pytest.raises(RobotFileError, match="not a text file"):
        load(binary)
    with pytest.raises(RobotFileError):
        load(tmp_path / "missing.toml")


def test_syntax_error_at_end_of_document(tmp_path):
    path = tmp_path / "open.toml"
    path.write_text(GOOD_HEAD + 'P = [0, 0,\n')
    with pytest.raises(RobotFileError) as info:
        load(path)
    assert info.value.line is not None and "TOML syntax error" in str(info.value)


PAR_FILES = sorted(FRAMES.glob("*.par")) + corpus_files("*.par")


@pytest.mark.parametrize("path", PAR_FILES, ids=lambda p: p.name)
def test_par_robots_round_trip_through_toml(path, tmp_path):
    """Every SYMORO table (serial, closed loops) can be written as a frame tree."""
    par = pytest.importorskip("kanerobot.robot.par")
    robot = par.read_par(path)
    round_trip(robot, tmp_path, path.stem + ".toml")
