"""SYMORO .par files: the OpenSYMORO corpus round-trips, bad files fail clearly."""

import os
from pathlib import Path

import pytest
import sympy
from conftest import corpus_files

import kanerobot as kr
from kanerobot.robot.par import read_par, write_par

CORPUS_FILES = corpus_files("*.par")
FRAMES = Path(__file__).resolve().parents[1] / "frames"

# Facts read off the corpus README: NL / NJ / NF and the active joints.
EXPECTED = {
    "RX90.par": (6, 6, 6, "serial", 6),
    "Stanford.par": (6, 6, 6, "serial", 6),
    "Stanford4.par": (4, 4, 4, "serial", 4),
    "SR400.par": (8, 9, 10, "closed loop", 6),
    "AKR3000.par": (10, 12, 14, "closed loop", 6),
    "TwoLoops.par": (8, 10, 12, "closed loop", 4),
    "testLoop.par": (4, 5, 6, "closed loop", 2),
}


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_corpus_is_present():
    assert {p.name for p in CORPUS_FILES} == set(EXPECTED)


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_corpus_loads_saves_and_loads_again(path, tmp_path):
    robot = kr.load(path)
    nl, nj, nf, structure, dof = EXPECTED[path.name]
    assert (robot.nl, robot.nj, robot.nf, robot.structure, robot.dof) == (nl, nj, nf, structure, dof)
    assert robot.joint_labels == tuple(str(j) for j in range(1, nj + 1))
    copy = tmp_path / path.name
    kr.save(robot, copy)
    again = kr.load(copy)
    assert again == robot
    assert write_par(again) == copy.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temporary left
    assert copy.stat().st_mode & 0o777 == 0o666 & ~_umask()  # as open() would create it


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_saved_file_keeps_every_statement_of_the_original(path, tmp_path):
    """Same keys with the same values, statement by statement."""

    def statements(text):
        out = {}
        for line in text.splitlines():
            if "=" in line and not line.startswith("(*"):
                key, value = line.split("=", 1)
                out[key.strip()] = [sympy.sympify(v) for v in value.strip(" {}").split(",")] if "{" in value else value.strip()
        out.pop("is_floating", None)
        return out

    kr.save(kr.load(path), tmp_path / "copy.par")
    assert statements((tmp_path / "copy.par").read_text()) == statements(path.read_text())


def test_corpus_values_are_read_as_written():
    sr400 = kr.load(FRAMES / "sr400.par")
    assert sr400.loops == (("9", "10"),)
    assert sr400.frame("1").placement.b == sympy.Symbol("b1") or sr400.frame("1").placement.b == 1
    assert sr400.frame("10").placement.gamma == sympy.pi / 2
    assert sr400.frame("8").placement.d == -sympy.Symbol("d8")
    assert sr400.dynamics["8"]["FX"] == sympy.Symbol("FX8")
    assert sr400.dynamics["7"]["FX"] == 0
    assert sr400.active_joints == ("1", "2", "4", "5", "6", "7")
    rx90 = kr.load(FRAMES / "rx90.par")
    assert rx90.frame("4").placement.r == sympy.Symbol("RL4")
    assert rx90.base.G == sympy.ImmutableMatrix([0, 0, sympy.Symbol("G3")])
    assert rx90.joint_parameters["3"]["QP"] == sympy.Symbol("QP3")


@pytest.mark.parametrize("path", sorted(FRAMES.glob("*.par")), ids=lambda p: p.name)
def test_library_par_files_round_trip(path, tmp_path):
    robot = kr.load(path)
    kr.save(robot, tmp_path / "copy.par")
    assert kr.load(tmp_path / "copy.par") == robot
    # Degrees of freedom known from the robots themselves.
    assert robot.dof == {
        "rx90": 6, "stanford": 6, "puma560": 6, "sr400": 6, "planar2": 2,
        "satellite": 9, "flexarm1": 2, "planar2flex": 4,  # a floating base adds 6, a flexible joint's motor 1
    }[path.stem]


def test_multiline_lists_aliases_and_mathematica_pi(tmp_path):
    text = (FRAMES / "rx90.par").read_text()
    text = text.replace("alpha = {0,pi/2,0,-pi/2,pi/2,-pi/2}", "Alpha = {0,Pi/2,\n   0,-Pi/2,\n  pi/2,-pi/2}")
    path = tmp_path / "multi.par"
    path.write_text(text)
    assert kr.load(path) == kr.load(FRAMES / "rx90.par")


def test_write_refuses_general_frames(tmp_path):
    krang = kr.load(FRAMES / "krang.toml")
    with pytest.raises(kr.RobotFileError, match=r"save it as .toml"):
        kr.save(krang, tmp_path / "krang.par")
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------- bad files
RX90 = (FRAMES / "rx90.par").read_text()
RX90_LINES = RX90.splitlines()


def _line_of(fragment):
    return next(i for i, line in enumerate(RX90_LINES, 1) if fragment in line)


BAD = {
    # name: (text, expected line or None, words the message must contain)
    "injection": (
        RX90.replace("theta = {th1", "theta = {__import__('os').system('touch PWNED')"),
        _line_of("theta ="),
        "not an allowed",
    ),
    "short_list": (RX90.replace("d = {0,0,D3,0,0,0}", "d = {0,0,D3,0,0}"), _line_of("d = {"), "has 5 values, expected 6"),
    "unknown_keyword": (RX90.replace("NJ = 6", "NJ = 6\nfoo = {1,2}"), _line_of("NJ =") + 1, "unknown keyword 'foo'"),
    "antecedent_after": (RX90.replace("ant = {0,1,2,3,4,5}", "ant = {0,1,2,5,4,5}"), _line_of("ant ="), "earlier frame"),
    "bad_sigma": (RX90.replace("sigma = {0,0,0,0,0,0}", "sigma = {0,0,7,0,0,0}"), _line_of("sigma ="), "sigma of frame 3"),
    "list_not_closed": (RX90.replace("d = {0,0,D3,0,0,0}", "d = {0,0,D3,0,0,0"), _line_of("d = {"), "not closed"),
    "unbalanced": (RX90.replace("alpha = {0,pi/2", "alpha = {0,pi/2)"), _line_of("alpha ="), "unbalanced"),
    "fractional_antecedent": (RX90.replace("ant = {0,1,2,3,4,5}", "ant = {0,1,2.5,3,4,5}"), _line_of("ant ="), "whole number"),
    "missing_NL": (RX90.replace("NL = 6\n", ""), None, "NL is missing"),
    "twice": (RX90.replace("NL = 6", "NL = 6\nNL = 6"), _line_of("NL =") + 1, "given twice"),
    "comment_not_closed": (RX90.replace("(* Geometric parameters *)", "(* Geometric parameters"), _line_of("Geometric"), "not closed"),
    "no_equals": (RX90.replace("NL = 6", "NL 6"), _line_of("NL ="), "expected 'KEY = value'"),
    "type_mismatch": (RX90.replace("Type = 0", "Type = 2"), _line_of("Type ="), "closed loops have Type = 2"),
    "revolute_without_theta": (RX90.replace("theta = {th1", "theta = {0"), _line_of("theta ="), "theta holds the joint variable"),
    "unknown_function": (RX90.replace("d = {0,0,D3", "d = {0,0,open(D3)"), _line_of("d = {"), "unknown function 'open'"),
    "attribute": (RX90.replace("d = {0,0,D3", "d = {0,0,D3.real"), _line_of("d = {"), "is not allowed"),
    "wrong_nf": (RX90.replace("NF = 6", "NF = 7"), _line_of("NF ="), "NL + 2B"),
    # Found by tests/test_fuzz.py (issue 13): each of these was a raw
    # RecursionError or ValueError, or a silently accepted value.
    "deep_unary": (RX90.replace("d = {0,0,D3", "d = {0,0," + "-" * 1500 + "D3"), _line_of("d = {"), "nested more than"),
    "long_sum": (RX90.replace("d = {0,0,D3", "d = {0,0,D3" + "+1" * 600), _line_of("d = {"), "nested more than"),
    "tower_of_powers": (RX90.replace("d = {0,0,D3", "d = {0,0,((10**60)**60)**60"), _line_of("d = {"), "beyond a double's range"),
    "power_of_power": (RX90.replace("d = {0,0,D3", "d = {0,0,10**10**10"), _line_of("d = {"), "exponent '10000000000' is too large"),
    "float_overflow": (RX90.replace("d = {0,0,D3", "d = {0,0,1e999"), _line_of("d = {"), "1e999 is not a finite number"),
    "product_overflow": (RX90.replace("d = {0,0,D3", "d = {0,0,D3*1e308*10"), _line_of("d = {"), "beyond a double's range"),
    "huge_integer": (RX90.replace("d = {0,0,D3", "d = {0,0,1" + "0" * 400), _line_of("d = {"), "too large"),
    "nan_name": (RX90.replace("d = {0,0,D3", "d = {0,0,NaN"), _line_of("d = {"), "'NaN' is not a finite number"),
    "inf_name": (RX90.replace("d = {0,0,D3", "d = {0,0,-inf"), _line_of("d = {"), "'inf' is not a finite number"),
    "log_zero": (RX90.replace("d = {0,0,D3", "d = {0,0,log(0)"), _line_of("d = {"), "'log(0)' is zoo, not a finite number"),
    "not_real": (RX90.replace("d = {0,0,D3", "d = {0,0,acos(2)*D3"), _line_of("d = {"), "not a real number"),
    "joint_variable_as_inertia": (
        RX90.replace("XX = {XX1,XX2", "XX = {XX1,th1"),
        _line_of("XX = {"),
        "XX of link 2 uses th1",
    ),
    "joint_variable_in_geometry": (
        RX90.replace("d = {0,0,D3", "d = {0,0,2*th2"),
        _line_of("d = {"),
        "d of frame 3 uses th2",
    ),
    "rate_as_mass": (RX90.replace("M = {M1", "M = {QP1"), _line_of("M = {"), "M of link 1 uses QP1"),
    "rate_is_joint_variable": (
        RX90.replace("QP = {QP1,QP2", "QP = {QP1,th2"),
        _line_of("QP = {"),
        "QP of joint 2 is th2, the joint variable of frame 2",
    ),
    "rate_twice": (RX90.replace("QP = {QP1,QP2", "QP = {QP1,QP1"), _line_of("QP = {"), "QP of joint 2 is QP1, QP of joint 1"),
    "rate_expression": (RX90.replace("QP = {QP1,QP2", "QP = {QP1,2*QP2"), _line_of("QP = {"), "is a name (e.g. QP2) or a number"),
    "joint_variable_twice": (
        RX90.replace("theta = {th1,th2", "theta = {th1,th1+1"),
        _line_of("theta ="),
        "frames 1 and 2 use the same joint variable th1",
    ),
    "joint_without_variable": (
        RX90.replace("theta = {th1,th2", "theta = {th1,1.5"),
        _line_of("theta ="),
        "frame 2 is revolute but its theta is 1.50000000000000: theta holds the joint variable",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_file_gives_one_clear_error(name, tmp_path, monkeypatch):
    text, line, words = BAD[name]
    monkeypatch.chdir(tmp_path)
    path = tmp_path / f"{name}.par"
    path.write_text(text)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(kr.RobotFileError) as info:
        read_par(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: " if line else f"{path}: "), message
    assert words in message
    assert "\n" not in message
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing created (no PWNED)


def test_line_of_a_dynamic_parameter_counts_the_base_link(tmp_path):
    """With a floating base the dynamic lists start with the base (link 0):
    the error points at the item of the link at fault, not one before."""
    text = (FRAMES / "satellite.par").read_text()
    text = text.replace("XX = {XX0,XX1,XX2,XX3}", "XX = {XX0,\nXX1,\nth1,\nXX3}")
    path = tmp_path / "satellite.par"
    path.write_text(text)
    bad_line = text.splitlines().index("th1,") + 1
    with pytest.raises(kr.RobotFileError) as info:
        read_par(path)
    assert info.value.line == bad_line, str(info.value)
    assert "XX of link 2 uses th1" in str(info.value)


def test_byte_order_mark_is_not_text(tmp_path):
    """Windows editors may start a UTF-8 file with a byte-order mark."""
    path = tmp_path / "rx90.par"
    path.write_bytes(RX90.encode("utf-8-sig"))
    assert kr.load(path) == read_par(FRAMES / "rx90.par")


def test_binary_file(tmp_path):
    path = tmp_path / "binary.par"
    path.write_bytes(b"\xff\xfe\x00NL")
    with pytest.raises(kr.RobotFileError, match="not a text file"):
        kr.load(path)


def test_missing_file_and_unknown_extension(tmp_path):
    with pytest.raises(kr.RobotFileError, match="no such file"):
        kr.load(tmp_path / "absent.par")
    with pytest.raises(kr.RobotFileError, match="no such file"):
        kr.load(tmp_path / "robot.urdf")
    (tmp_path / "robot.sdf").write_text("<sdf version='1.6'/>")  # .urdf is read since issue 15: another format
    with pytest.raises(kr.RobotFileError, match="unknown file type"):
        kr.load(tmp_path / "robot.sdf")


def test_failed_save_leaves_target_untouched(tmp_path):
    target = tmp_path / "keep.par"
    target.write_text("original")
    krang = kr.load(FRAMES / "krang.toml")
    with pytest.raises(kr.RobotFileError):
        kr.save(krang, target)
    assert target.read_text() == "original"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.par"]
