"""The command line, as a user runs it: output, files written, one-line errors."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

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


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_files_give_one_line_and_change_nothing(name, tmp_path):
    (tmp_path / name).write_text(BAD[name])
    before = sorted(p.name for p in tmp_path.iterdir())
    for command in (["info", name], ["model", name, "fgm", "-o", "out.txt"]):
        out = run(*command, cwd=tmp_path)
        assert out.returncode == 2, out.stderr
        assert out.stdout == ""
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"kanerobot: error: {name}"), out.stderr
        assert "Traceback" not in out.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_unknown_robot_and_frame(capsys):
    assert main(["info", "no_such_robot"]) == 2
    assert "no robot 'no_such_robot'" in capsys.readouterr().err
    assert main(["model", "rx90", "jac", "--frame", "9"]) == 2
    assert "has no frame '9'" in capsys.readouterr().err
    assert main(["model", "krang", "jac"]) == 2
    assert "several end frames (10l, 10r): choose one with --frame" in capsys.readouterr().err
    assert main(["model", "krang", "det", "--frame", "10l"]) == 2
    assert "redundantly actuated" in capsys.readouterr().err
    assert main(["model", "rx90", "jac", "--lang", "c"]) == 2
    assert "--lang exports the dynamic models" in capsys.readouterr().err
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
