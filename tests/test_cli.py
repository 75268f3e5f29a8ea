"""The command line, as a user runs it: output, files written, one-line errors."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import one_line_error

from kanerobot.cli import main

ROOT = Path(__file__).resolve().parents[1]
RX90 = (ROOT / "frames" / "rx90.par").read_text()


def run(*args, cwd=None):
    """Run ``python -m kanerobot ARGS`` in a separate process."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "kanerobot", *args], capture_output=True, text=True, cwd=cwd or ROOT, env=env, timeout=600
    )


def test_help_lists_every_model():
    out = run("model", "--help")
    assert out.returncode == 0
    for model in ("trm", "fgm", "jac", "det", "vel", "acc", "jpqp", "loops", "loopvel"):
        assert model in out.stdout


def test_list_and_info(capsys):
    assert main(["list"]) == 0
    listing = capsys.readouterr().out
    for name in ("rx90", "stanford", "puma560", "sr400", "krang"):
        assert name in listing
    assert main(["info", "sr400"]) == 0
    info = capsys.readouterr().out
    assert "closed loop" in info and "6 degrees of freedom" in info and "9 = 10" in info
    assert "Geometric parameters" in info and "th9" in info


@pytest.mark.parametrize(
    "args, words",
    [
        (["rx90", "trm"], ["transformation matrix 0T6", "T0T6_11 ="]),
        (["rx90", "fgm"], ["Fast geometric model 0T6", "C1 = cos(th1)"]),
        (["rx90", "jac", "--frame", "6"], ["Jacobian matrix for frame 6", "J13 ="]),
        (["rx90", "jpqp", "--frame", "6"], ["JPQP"]),
        (["rx90", "vel"], ["W36 =", "V36 ="]),
        (["stanford", "acc"], ["WP36 =", "VP36 ="]),
        (["sr400", "loops"], ["10T9 = I4 when the loop is closed", "T10T9_33 = 1"]),
        (["sr400", "loopvel"], ["passive joints: 3, 8; cut joints: 9", "WA11 ="]),
        (["krang", "trm", "--start", "3", "--frame", "10l"], ["3T10l"]),
        (["rx90", "idm"], ["Inverse dynamic model", "GAM6 = ", "Number of operations"]),
        (["rx90", "inm"], ["Inertia matrix", "A66 = ", "Number of operations"]),
        (["rx90", "ccg"], ["Centrifugal, Coriolis", "GAM1 = ", "Number of operations"]),
        (["planar2", "grav"], ["Q2 = "]),
        (["planar2", "cor"], ["C22 = "]),
        (["stanford", "ddm"], ["Direct dynamic model", "QDP6 = "]),
        (["planar2", "didm"], ["Derivatives of the inverse dynamic model", "dGAM1_dQP2 = 2*CA12 - 2*CN12"]),
        (["planar2", "dddm"], ["Derivatives of the direct dynamic model", "dQDP2_dGAM2 = "]),
        (["planar2", "inm", "--method", "kane"], ["A22 = "]),
        (["planar2", "idm", "--method", "lagrange"], ["GAM2 = "]),
    ],
)
def test_models_print_symoro_layout(args, words, capsys):
    assert main(["model", *args]) == 0
    out = capsys.readouterr().out
    assert "Equations:" in out and out.rstrip().endswith("*=*")
    for word in words:
        assert word in out


def test_det_with_task_rows(capsys):
    """Planar 2R arm, origin of frame 2 (on joint 2): V = L1 qd1 (-S1, C1, 0) in
    frame 0 and wz = qd1 + qd2, so det of rows (Vy, wz) is L1*C1; in frame 1,
    V = (0, L1 qd1, 0) and the determinant is L1."""
    assert main(["model", "planar2", "det", "--rows", "1,5"]) == 0
    assert "DETJ = L1*cos(th1)" in capsys.readouterr().out
    assert main(["model", "planar2", "det", "--rows", "1,5", "--projection", "1"]) == 0
    assert "DETJ = L1\n" in capsys.readouterr().out
    assert main(["model", "planar2", "det"]) == 2
    assert "choose 2 task rows" in capsys.readouterr().err


def test_output_file(tmp_path, capsys):
    target = tmp_path / "jac.txt"
    assert main(["model", "rx90", "jac", "-o", str(target)]) == 0
    assert "Jacobian matrix for frame 6" in target.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jac.txt"]


def test_convert_round_trip(tmp_path, capsys):
    target = tmp_path / "sr400.toml"
    assert main(["convert", "sr400", str(target)]) == 0
    assert main(["info", str(target)]) == 0
    assert "9 = 10" in capsys.readouterr().out


BAD = {
    "injection.par": RX90.replace("theta = {th1", "theta = {__import__('os').system('touch PWNED')"),
    "short.par": RX90.replace("d = {0,0,D3,0,0,0}", "d = {0,0,D3,0,0}"),
    "unknown.par": RX90.replace("NJ = 6", "NJ = 6\nfoo = {1,2}"),
    "cycle.par": RX90.replace("ant = {0,1,2,3,4,5}", "ant = {0,1,2,5,4,5}"),
    "sigma.par": RX90.replace("sigma = {0,0,0,0,0,0}", "sigma = {0,0,7,0,0,0}"),
    "open.par": RX90.replace("d = {0,0,D3,0,0,0}", "d = {0,0,D3,0,0,0"),
    "paren.par": RX90.replace("alpha = {0,pi/2", "alpha = {0,pi/2)"),
    "comment.par": RX90.replace("(* Geometric parameters *)", "(* Geometric parameters"),
    "noequal.par": RX90.replace("NL = 6", "NL 6"),
    "twice.par": RX90.replace("NL = 6", "NL = 6\nNL = 6"),
    "axis.toml": '[[frame]]\nlabel = "1"\nantecedent = "0"\nsigma = 0\nR0 = [[1,0,0],[0,1,0],[0,0,1]]\nP = [0,0,0]\naxis = [1,1,0]\nq = "q1"\n',
    "syntax.toml": '[[frame]\nlabel = "1"\n',
}


def assert_one_line_error(name, returncode, out, err, folder, before):
    """The command failed with status 2, printed nothing on stdout and one line
    naming the file on stderr, no traceback, and wrote no file into ``folder``."""
    assert returncode == 2, err
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"kanerobot: error: {name}"), err
    assert "Traceback" not in err
    assert sorted(p.name for p in folder.iterdir()) == before


# In the test process (a new interpreter per command costs 3 s, 72 s for the
# 24 commands); the process's own exit status and streams are checked below.
@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_files_give_one_line_and_change_nothing(name, tmp_path, monkeypatch, capsys):
    (tmp_path / name).write_text(BAD[name])
    before = sorted(p.name for p in tmp_path.iterdir())
    monkeypatch.chdir(tmp_path)
    for command in (["info", name], ["model", name, "fgm", "-o", "out.txt"]):
        returncode = main(command)
        captured = capsys.readouterr()
        assert_one_line_error(name, returncode, captured.out, captured.err, tmp_path, before)


@pytest.mark.parametrize("name", ["injection.par", "syntax.toml"])
@pytest.mark.long
def test_bad_files_fail_the_process_with_one_line(name, tmp_path):
    """``python -m kanerobot`` on a bad file: exit status 2, one line on stderr."""
    (tmp_path / name).write_text(BAD[name])
    before = sorted(p.name for p in tmp_path.iterdir())
    for command in (["info", name], ["model", name, "fgm", "-o", "out.txt"]):
        out = run(*command, cwd=tmp_path)
        assert_one_line_error(name, out.returncode, out.stdout, out.stderr, tmp_path, before)


def test_unknown_robot_and_frame(capsys):
    assert main(["info", "no_such_robot"]) == 2
    assert "no robot 'no_such_robot'" in capsys.readouterr().err
    assert main(["model", "rx90", "jac", "--frame", "9"]) == 2
    assert "has no frame '9'" in capsys.readouterr().err
    assert main(["model", "krang", "jac"]) == 2
    assert "several end frames (10l, 10r): choose one with --frame" in capsys.readouterr().err
    assert main(["model", "krang", "det", "--frame", "10l"]) == 2
    assert "redundantly actuated" in capsys.readouterr().err
    assert main(["model", "rx90", "vel", "--lang", "c"]) == 2  # jac is exported now (issue 25); vel is not
    err = capsys.readouterr().err
    assert "--lang exports fgm, jac, idm, inm" in err and "as c functions, not vel" in err
    assert main(["model", "rx90", "ddm", "--method", "kane"]) == 2
    assert "solved numerically" in capsys.readouterr().err
    assert main(["model", "sr400", "ddm"]) == 2
    assert "no closed-loop program for 'direct_dynamics'" in capsys.readouterr().err
    assert main(["model", "rx90", "loops"]) == 2
    assert "no closed loop" in capsys.readouterr().err


def test_floating_and_flexible_models_print_and_export(capsys):
    for robot in ("satellite", "flexarm1"):
        assert main(["model", robot, "idm"]) == 0
        assert "Number of operations" in capsys.readouterr().out
        assert main(["model", robot, "ddm", "--lang", "python"]) == 0
        out = capsys.readouterr().out
        assert "x holds the state, p the parameters" in out and "Arguments:" in out
    for method in ("newton-euler", "kane", "lagrange"):
        assert main(["model", "satellite", "cor", "--method", method]) == 0
        assert "C99 = " in capsys.readouterr().out
    assert main(["model", "satellite", "ddm", "--method", "lagrange"]) == 2
    assert "solved numerically" in capsys.readouterr().err


def test_simulate_command_runs_saves_and_reports_bad_input(tmp_path, capsys):
    import numpy

    target = tmp_path / "run.npz"
    assert main(["simulate", "planar2", "--t", "0.3", "--x0", "0.5,0,0,0", "--controller", "pd", "--target", "0,0", "-o", str(target)]) == 0
    out = capsys.readouterr().out
    assert "relative_energy_drift" in out and "max_abs_tau" in out
    run = numpy.load(target)
    assert run["q"].shape == (201, 2) and abs(run["q"][0, 0] - 0.5) < 1e-12
    # The PD controller pulls joint 1 towards 0.
    assert abs(run["q"][-1, 0]) < 0.5
    values = tmp_path / "values.toml"
    values.write_text('M1 = "heavy"\n')
    assert main(["simulate", "planar2", "--values", str(values)]) == 2
    assert f"{values}: M1 must be numbers" in capsys.readouterr().err
    values.write_text("M1 = 1.0\n")
    assert main(["simulate", "planar2", "--values", str(values)]) == 2
    assert "no value for" in capsys.readouterr().err
    assert main(["simulate", "fourbar"]) == 2
    assert "give --x0" in capsys.readouterr().err
    assert main(["simulate", "planar2", "--t", "0.1", "-o", str(tmp_path / "run.txt")]) == 2
    assert "use a .npz or .csv file" in capsys.readouterr().err
    assert not (tmp_path / "run.txt").exists()


# ------------------------------------------- inputs checked before the work
@pytest.fixture
def no_work(monkeypatch):
    """Make deriving or simulating fail loudly: an error must come before them."""
    import kanerobot.dynamics.model
    import kanerobot.simulation

    def forbidden(*args, **kwargs):
        raise AssertionError("the work started before the inputs were checked")

    monkeypatch.setattr(kanerobot.dynamics.model, "derive", forbidden)
    monkeypatch.setattr(kanerobot.simulation, "simulate", forbidden)


@pytest.mark.parametrize(
    "args, words",
    [
        (["--samples", "0"], "argument --samples: takes at least 2 samples (the start and the end), got 0"),
        (["--samples", "-5"], "argument --samples: takes at least 2 samples"),
        (["--samples", "many"], "argument --samples: takes a whole number of samples, got 'many'"),
        (["--t", "-1"], "argument --t: takes a positive duration in seconds, got '-1'"),
        (["--t", "nan"], "argument --t: takes a positive duration"),
        (["--x0", "0,nan,0,0"], "--x0 takes finite numbers, got nan"),
        (["-o", "no_such_folder/run.npz"], "folder no_such_folder does not exist: create it first"),
        (["-o", "run.txt"], "use a .npz or .csv file"),
    ],
)
def test_simulate_options_are_checked_before_the_work(args, words, capsys, no_work, tmp_path, monkeypatch):
    """--samples 0 and -5 gave raw tracebacks, --t -1 ran backwards, a missing
    -o folder was reported after the whole run (issue 13, defect 4)."""
    monkeypatch.chdir(tmp_path)
    line = one_line_error(capsys, "simulate", "planar2", *args)
    assert words in line and line.startswith("kanerobot"), line
    assert list(tmp_path.iterdir()) == []


def test_plot_without_matplotlib_says_what_to_install(capsys, no_work, monkeypatch, tmp_path):
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else find_spec(name, *a))
    line = one_line_error(capsys, "simulate", "planar2", "--plot", str(tmp_path / "figures"))
    assert "--plot needs matplotlib, which is not installed: pip install 'kanerobot[plot]'" in line
    (tmp_path / "file").write_text("")
    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    assert "is a file, not a folder" in one_line_error(capsys, "simulate", "planar2", "--plot", str(tmp_path / "file" / "figures"))


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes anywhere")
def test_unwritable_output_folder_is_reported_first(capsys, no_work, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert "is not writable" in one_line_error(capsys, "simulate", "planar2", "-o", str(locked / "run.npz"))
    finally:
        locked.chmod(0o700)


@pytest.mark.parametrize(
    "robot, layout",
    [
        ("fourbar", "give --x0 with 5 values: q = th1, th2, th3, th4 (a closed configuration), then qd = QP1"),
        ("diffdrive", "give --x0 with 9 values: q = x, y, th, phi_r, phi_l, beta_c, phi_c, then qd = QPwr, QPwl"),
    ],
)
def test_x0_of_special_structures_comes_with_its_layout(robot, layout, capsys):
    """The CLI asked for --x0 without saying what it holds (issue 13, defect 9)."""
    assert layout in one_line_error(capsys, "simulate", robot)
    line = one_line_error(capsys, "simulate", "satellite", "--x0", "1,2")
    assert "--x0 of satellite (floating-base) takes 19 values, got 2: q = x, y, z, qx, qy, qz, qw, th1, th2, th3, then qd = vx, vy, vz, wx, wy, wz, QP1, QP2, QP3" in line
    line = one_line_error(capsys, "simulate", "satellite", "--controller", "pd", "--target", "1,2")
    assert "--target of satellite (floating-base) takes 3 values, one per controlled coordinate, got 2" in line


@pytest.mark.parametrize("robot", ["flexarm1", "planar2flex"])
def test_simulate_flexible_robots_hang_at_rest(robot, tmp_path, capsys):
    """AttributeError: 'FlexibleModel' object has no attribute 'q' (issue 13,
    defect 3).  Released at rest from z = 0 (springs at rest, no friction, no
    torque), the arm swings: its potential energy (gravity and springs) never
    exceeds the initial one, the energy being conserved."""
    import numpy

    target = tmp_path / "run.csv"
    assert main(["simulate", robot, "--t", "0.2", "--samples", "5", "-o", str(target)]) == 0
    out = capsys.readouterr().out
    assert "final_time             0.2" in out
    table = numpy.loadtxt(target, delimiter=",", skiprows=1)
    header = target.read_text().splitlines()[0].split(",")
    assert table.shape == (5, len(header))
    q = table[:, [k for k, name in enumerate(header) if name.startswith("q_")]]
    assert q.shape[1] == {"flexarm1": 2, "planar2flex": 4}[robot]
    assert numpy.abs(q[0]).max() == 0 and numpy.abs(q[-1]).max() > 1e-3  # from rest, it moved
    column = dict(zip(header, table.T))
    assert numpy.all(column["potential"] <= column["potential"][0] + 1e-9)
    assert numpy.abs(column["energy_drift"]).max() < 1e-6 * numpy.abs(column["potential"]).max()


def test_satellite_in_orbit_stays_where_it_is(tmp_path, capsys):
    """The satellite (gravity 0 in orbit) fell under random gravity (issue 13,
    defect 5); by default it starts at the origin, at rest, and stays."""
    import numpy

    target = tmp_path / "run.npz"
    assert main(["simulate", "satellite", "--t", "0.5", "-o", str(target)]) == 0
    capsys.readouterr()
    run = numpy.load(target)
    numpy.testing.assert_allclose(run["q"][-1], [0, 0, 0, 0, 0, 0, 1, 0, 0, 0], atol=1e-12)
    values = (tmp_path / "run.values.toml").read_text()
    assert "G1 = 0.0\nG2 = 0.0\nG3 = 0.0\n" in values


def test_random_parameters_are_shown_saved_and_read_back(tmp_path, capsys):
    """The CLI neither showed nor saved the values it drew (issue 13, defect 5)."""
    import numpy

    first = tmp_path / "run.npz"
    args = ["simulate", "planar2", "--t", "0.3", "--x0", "0.5,0,0,0", "--controller", "pd", "--target", "0,0"]
    assert main([*args, "-o", str(first)]) == 0
    err = capsys.readouterr().err
    saved = tmp_path / "run.values.toml"
    assert f"saved to {saved}" in err and f"written {saved}" in err
    text = saved.read_text()
    assert "G3 = -9.81\n" in text and "M2 = " in text
    again = tmp_path / "again.npz"
    assert main([*args, "--values", str(saved), "-o", str(again)]) == 0
    assert not (tmp_path / "again.values.toml").exists()  # the user's values are theirs
    numpy.testing.assert_array_equal(numpy.load(first)["q"], numpy.load(again)["q"])
    # without -o they are printed, as a file --values reads
    assert main([*args[:3], "0.01"]) == 0
    err = capsys.readouterr().err
    printed = tmp_path / "printed.toml"
    printed.write_text(err.split("(these lines are such a file):\n", 1)[1])
    assert printed.read_text() == text



def test_many_random_parameters_are_summarised(capsys, monkeypatch):
    import numpy

    import kanerobot as kr
    import kanerobot.cli
    from kanerobot.dynamics.parameters import random_parameters

    count = len(random_parameters(kr.load(kr.frames_path("planar2")), numpy.random.default_rng(0)))
    monkeypatch.setattr(kanerobot.cli, "PRINTED_VALUES", 5)
    assert main(["simulate", "planar2", "--t", "0.01"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"kanerobot: {count} random physically consistent parameters (seed 0; gravity G3 = -9.81); "
        "-o FILE saves them with the results, --seed draws them again; give yours with --values FILE"
    ]


def test_set_refuses_names_where_numbers_are_expected(capsys):
    """--set D3=abc silently became a symbol (issue 13, defect 9)."""
    line = one_line_error(capsys, "model", "rx90", "fgm", "--set", "D3=abc")
    assert "--set D3=abc: abc is not a number; --set takes a number or an expression of numbers" in line
    assert "FOO is not a symbol of RX90's tables" in one_line_error(capsys, "model", "rx90", "fgm", "--set", "FOO=1")
    assert "not a real number" in one_line_error(capsys, "model", "rx90", "fgm", "--set", "D3=sqrt(-1)")
    assert main(["model", "rx90", "trm", "--frame", "3", "--set", "D3=pi/4"]) == 0
    assert "pi/4" in capsys.readouterr().out


def test_usage_errors_are_one_line(capsys):
    assert "invalid choice: 'simulat'" in one_line_error(capsys, "simulat", "planar2")
    assert one_line_error(capsys, "model", "rx90").startswith("kanerobot model: error: the following arguments are required: MODEL")


def test_identify_and_model_outputs_are_checked_before_the_work(capsys, no_work, tmp_path, monkeypatch):
    import importlib

    module = importlib.import_module("kanerobot.identification.identify")
    monkeypatch.setattr(module, "identify", lambda *a, **k: pytest.fail("identified first"))
    (tmp_path / "run.csv").write_text("t,q_1,q_2,tau_1,tau_2\n")
    data = str(tmp_path / "run.csv")
    line = one_line_error(capsys, "identify", "planar2", data, "-o", str(tmp_path / "missing" / "estimates.toml"))
    assert f"folder {tmp_path / 'missing'} does not exist: create it first" in line
    line = one_line_error(capsys, "identify", "planar2", data, "-o", str(tmp_path / "estimates.txt"))
    assert "cannot save identification results as 'estimates.txt': use a .toml or .csv file" in line
    assert "nothere.csv: no such file (the recording" in one_line_error(capsys, "identify", "planar2", str(tmp_path / "nothere.csv"))
    line = one_line_error(capsys, "model", "rx90", "idm", "-o", str(tmp_path / "missing" / "idm.txt"))
    assert "does not exist: create it first" in line


# ------------------------------------- unwritable places (issue 25, defect 4)
#: A folder nobody can create files in, root included (os.access says yes to root there).
PROC = Path("/proc")
needs_proc = pytest.mark.skipif(not PROC.is_dir() or os.name != "posix", reason="no /proc: the not-a-folder cases run instead")


def listing(folder):
    return sorted(p.name for p in folder.iterdir())


@needs_proc
def test_convert_into_an_unwritable_folder_is_one_line(capsys):
    """``convert rx90 /proc/x.par`` raised FileNotFoundError from the temporary file."""
    line = one_line_error(capsys, "convert", "rx90", "/proc/x.par")
    assert line == "kanerobot: error: /proc/x.par: folder /proc is not writable", line
    assert not list(PROC.glob(".x.par*"))


def test_convert_under_a_file_is_one_line(capsys, tmp_path):
    (tmp_path / "notes.txt").write_text("")
    before = listing(tmp_path)
    line = one_line_error(capsys, "convert", "rx90", str(tmp_path / "notes.txt" / "x.par"))
    assert line == f"kanerobot: error: {tmp_path / 'notes.txt' / 'x.par'}: {tmp_path / 'notes.txt'} is a file, not a folder", line
    assert listing(tmp_path) == before


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes anywhere: the /proc case runs instead")
def test_convert_into_a_read_only_folder_is_one_line(capsys, tmp_path):
    locked = tmp_path / "ro"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        line = one_line_error(capsys, "convert", "rx90", str(locked / "x.par"))
        assert line == f"kanerobot: error: {locked / 'x.par'}: folder {locked} is not writable (Permission denied)", line
        assert listing(locked) == []
    finally:
        locked.chmod(0o700)


@needs_proc
@pytest.mark.parametrize(
    "args, words",
    [
        (["--plot", "/proc/forbidden"], "--plot /proc/forbidden: folder /proc is not writable"),
        (["--plot", "/proc/forbidden/deeper"], "--plot /proc/forbidden/deeper: folder /proc is not writable"),
        (["-o", "/proc/run.npz"], "-o /proc/run.npz: folder /proc is not writable"),
        (["--animate", "/proc/run.gif"], "/proc/run.gif: folder /proc is not writable"),
    ],
)
def test_simulate_outputs_nobody_can_write_are_reported_first(args, words, capsys, no_work):
    """``simulate planar2 --plot /proc/forbidden`` ran, then raised FileNotFoundError making the folder (root passes os.access)."""
    assert words in one_line_error(capsys, "simulate", "planar2", *args)


def test_every_writer_reports_a_failed_write_in_one_line(tmp_path):
    """The shared atomic write: an OSError while writing (a full disk) is one RobotFileError, and no temporary file stays."""
    import errno

    from kanerobot.errors import RobotFileError
    from kanerobot.robot.files import atomic_write

    def full_disk(handle):
        handle.write(b"half")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(RobotFileError, match=r"^.*out\.bin: cannot write: No space left on device$"):
        atomic_write(tmp_path / "out.bin", full_disk)
    assert listing(tmp_path) == []
    (tmp_path / "folder.bin").mkdir()
    with pytest.raises(RobotFileError, match=r"folder\.bin: is a folder: give a file name$"):
        atomic_write(tmp_path / "folder.bin", lambda handle: handle.write(b"x"))
    assert listing(tmp_path) == ["folder.bin"]


def test_unwritable_output_fails_the_process_with_one_line(tmp_path):
    """The same through ``python -m kanerobot``: exit status 2, one line on stderr, nothing written."""
    (tmp_path / "notes.txt").write_text("")
    target = Path("/proc/x.par") if PROC.is_dir() else tmp_path / "notes.txt" / "x.par"
    out = run("convert", "rx90", str(target))
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1 and lines[0].startswith(f"kanerobot: error: {target}: "), out.stderr
    assert out.stdout == "" and listing(tmp_path) == ["notes.txt"]
