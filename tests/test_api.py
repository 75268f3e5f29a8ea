"""The public API on every robot file we ship and every file of the corpus, and its type hints."""

import inspect
import typing
from pathlib import Path

import numpy as np
import pytest
import sympy
from conftest import corpus_files

import kanerobot as kr
from kanerobot.geometry import transform

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted((ROOT / "frames").glob("*.par")) + sorted((ROOT / "frames").glob("*.toml")) + corpus_files("*.par")


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_load_save_dof_labels(path, tmp_path):
    robot = kr.load(path)
    assert robot.dof >= 1
    assert len(robot.joint_labels) == robot.nj >= robot.dof - (6 if robot.floating else 0) - len(robot.flexible_joints)
    assert all(robot.frame(label).is_joint for label in robot.joint_labels)
    for suffix in (".toml",) + ((".par",) if path.suffix == ".par" else ()):
        target = tmp_path / f"copy{suffix}"
        kr.save(robot, target)
        assert kr.load(target) == robot


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_frame_transform_is_a_rigid_motion(path):
    """At random joint values and lengths, each aT_j has R^T R = I, det R = +1."""
    robot = kr.load(path)
    rng = np.random.default_rng(7)
    names = sorted({str(s) for f in robot.frames for s in f.transform().free_symbols})
    values = {sympy.Symbol(n): rng.uniform(-2, 2) for n in names}
    for f in robot.frames:
        T = np.array(transform(robot, f.antecedent, f.label).xreplace(values).evalf(), dtype=float)
        R = T[:3, :3]
        assert np.allclose(R.T @ R, np.eye(3), atol=1e-12)
        assert np.isclose(np.linalg.det(R), 1.0)
        assert np.allclose(T[3], [0, 0, 0, 1])


def test_library_names():
    names = kr.robot_names()
    for required in ("rx90", "stanford", "puma560", "sr400", "krang"):
        assert required in names
    assert kr.frames_path("krang").name == "krang.toml"
    with pytest.raises(kr.RobotFileError, match="no robot 'nope'"):
        kr.frames_path("nope")


def test_robot_is_immutable_and_subs_returns_a_new_robot():
    robot = kr.load(kr.frames_path("rx90"))
    with pytest.raises(AttributeError):
        robot.name = "other"
    with pytest.raises(TypeError):
        robot.dynamics["1"]["M"] = 3
    bound = robot.subs({"D3": 0.45, "RL4": "0.5"})
    assert robot.geometric_parameters == ["D3", "RL4"] and bound.geometric_parameters == []
    assert bound.frame("3").placement.d == sympy.Float(0.45)
    with pytest.raises(kr.DescriptionError, match="joint variable"):
        robot.subs({"th1": 0.3})


def test_python_built_robot_equals_file_robot():
    """Strings and numbers given in Python become the same sympy values a file gives."""
    from kanerobot.robot.description import Frame, KKPlacement, Robot

    rx90 = kr.load(kr.frames_path("rx90"))
    alphas = ["0", "pi/2", "0", "-pi/2", "pi/2", "-pi/2"]
    frames = [
        Frame(str(j), str(j - 1), 0, 1, KKPlacement(alpha=alphas[j - 1], d="D3" if j == 3 else 0, r="RL4" if j == 4 else 0, theta=f"th{j}"))
        for j in range(1, 7)
    ]
    wrench = {"6": {k: k + "6" for k in ("FX", "FY", "FZ", "CX", "CY", "CZ")}}
    assert Robot.create("RX90", frames, dynamics=wrench) == rx90


@pytest.mark.parametrize(
    "frames, words",
    [
        ([("1", "0", 0, "q1"), ("2", "1", 0, "q1")], "same joint variable"),
        ([("1", "2", 0, "q1"), ("2", "1", 0, "q2")], "antecedent cycle 1 -> 2 -> 1"),
        ([("1", "0", 3, "q1")], r"use 0 \(revolute\), 1 \(prismatic\) or 2 \(fixed\)"),
        ([("1", "0", 0, "q1"), ("1", "0", 0, "q2")], "used twice"),
    ],
)
def test_description_errors_name_the_problem(frames, words):
    from kanerobot.robot.description import Frame, KKPlacement, Robot

    with pytest.raises(kr.DescriptionError, match=words):  # an unknown joint code is refused as the frame is made
        Robot.create("bad", [Frame(label, ant, sigma, 1, KKPlacement(theta=q)) for label, ant, sigma, q in frames])


def test_general_frame_errors():
    from kanerobot.robot.description import Frame, GeneralPlacement, Robot

    eye = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    with pytest.raises(kr.DescriptionError, match="not a unit vector"):
        Robot.create("bad", [Frame("1", "0", 0, 1, GeneralPlacement(eye, [0, 0, 0], [1, 1, 0], "q"))])
    with pytest.raises(kr.DescriptionError, match="not a rotation"):
        Robot.create("bad", [Frame("1", "0", 0, 1, GeneralPlacement([[1, 0, 0], [0, 1, 0], [0, 0, -1]], [0, 0, 0], [0, 0, 1], "q"))])
    with pytest.raises(kr.DescriptionError, match="R0 needs 3x3"):
        GeneralPlacement([[1, 0], [0, 1]], [0, 0, 0], [0, 0, 1], "q")


def test_load_of_a_library_name_points_to_frames_path(tmp_path, monkeypatch):
    """kr.load("rx90") said "unknown file type '(none)'" (issue 13, defect 9)."""
    monkeypatch.chdir(tmp_path)
    for given in ("rx90", "rx90.par", "krang.toml"):
        name = given.split(".")[0]
        with pytest.raises(kr.RobotFileError, match=rf"^{given}: no such file; did you mean kr.load\(kr.frames_path\('{name}'\)\)"):
            kr.load(given)
    with pytest.raises(kr.RobotFileError, match=r"^nope: no such file$"):
        kr.load("nope")
    with pytest.raises(kr.RobotFileError, match="is a folder, not a robot file"):
        kr.load(tmp_path)
    (tmp_path / "robot.txt").write_text("NL = 1\n")
    with pytest.raises(kr.RobotFileError, match=r"unknown file type '.txt': use .par \(SYMORO table\), .toml \(frame tree\), .urdf or .xml \(MJCF\)"):
        kr.load("robot.txt")
    # a file of that name in the working folder is what load reads
    (tmp_path / "rx90.par").write_text(kr.frames_path("rx90").read_text())
    assert kr.load("rx90.par") == kr.load(kr.frames_path("rx90"))


# ---------------------------------------------------------------- type hints
def _constructor_or_function(obj):
    """The function whose signature a user calls: a class's ``__init__`` (without ``self``), else ``obj``."""
    if inspect.isclass(obj):
        return obj.__init__, True
    return obj, False


def _annotation_gaps(function, bound):
    """Names of ``function``'s parameters without annotation, plus ``"return"`` if it has none.

    ``bound``: the first parameter is ``self`` (a constructor), which needs none.
    """
    signature = inspect.signature(function)
    parameters = list(signature.parameters.values())[1 if bound else 0 :]
    gaps = [p.name for p in parameters if p.annotation is inspect.Parameter.empty]
    if signature.return_annotation is inspect.Signature.empty:
        gaps.append("return")
    return gaps


#: Public exception classes whose constructor is Exception's own (``*args``,
#: written in C): there is no Python signature to annotate.
BUILTIN_CONSTRUCTORS = [name for name in kr.__all__ if inspect.isclass(getattr(kr, name)) and getattr(kr, name).__init__ is Exception.__init__]


def test_annotation_gaps_finds_what_is_missing():
    """The checker below is not vacuous: it names each missing annotation."""

    def bare(robot, path: str, *args, flag=False, **options):
        return None

    def full(robot: kr.Robot, *args: int, **options: float) -> None:
        return None

    assert _annotation_gaps(bare, False) == ["robot", "args", "flag", "options", "return"]
    assert _annotation_gaps(full, False) == []
    assert _annotation_gaps(kr.DescriptionError.__init__, True) == []


@pytest.mark.parametrize("name", [name for name in kr.__all__ if callable(getattr(kr, name)) and name not in BUILTIN_CONSTRUCTORS])
def test_public_callables_are_annotated(name):
    """Every function and class constructor of ``kr.__all__`` annotates its parameters and return,
    and the annotations name real types (``typing.get_type_hints`` resolves them)."""
    function, bound = _constructor_or_function(getattr(kr, name))
    assert _annotation_gaps(function, bound) == [], f"kr.{name}: annotate these parameters (and the return)"
    hints = typing.get_type_hints(function)
    parameters = list(inspect.signature(function).parameters)[1 if bound else 0 :]
    assert set(hints) == set(parameters) | {"return"}


def test_unannotated_constructors_are_exceptions_with_a_message():
    """The only public classes left out above are errors built by Exception's C constructor: one message."""
    assert BUILTIN_CONSTRUCTORS == ["KaneRobotError", "ParameterError", "SingularityError"]
    for name in BUILTIN_CONSTRUCTORS:
        error = getattr(kr, name)("what is wrong and what to do")
        assert isinstance(error, kr.KaneRobotError) and str(error) == "what is wrong and what to do"
