"""The examples run and their own checks pass."""

import runpy
from pathlib import Path

import numpy as np
import pytest

import kanerobot as kr

ROOT = Path(__file__).resolve().parents[1]
real_frames_path = kr.frames_path


@pytest.mark.long
def test_krang_kinematics_example(capsys):
    runpy.run_path(str(ROOT / "examples" / "krang" / "krang_kinematics.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "17 degrees of freedom" in out
    assert "right-arm columns all zero: True" in out


def run_dynamics_example(folder):
    module = runpy.run_path(str(ROOT / "examples" / "krang" / "krang_dynamics.py"))
    module["main"](str(folder))


# Krang's A and C take 8 s to derive, count and print as C: slow.  Its models
# are checked in the default run by tests/test_engines.py (every engine equal)
# and tests/test_kane.py (A' - 2C skew); the example's code runs on the RX-90 below.
@pytest.mark.slow
def test_krang_dynamics_example(tmp_path, capsys):
    run_dynamics_example(tmp_path)
    out = capsys.readouterr().out
    assert "A is 17x17" in out and "(skew-symmetric)" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["krang_A.c", "krang_C.c"]


def test_dynamics_example_runs_its_checks_and_writes_c(tmp_path, capsys, monkeypatch):
    """The Krang dynamics example, every line of it, on the RX-90 (the robot
    file it loads): its own checks (A-dot - 2C skew, torques = A qdd + C qd + Q)
    pass and it writes A and C as C code."""
    monkeypatch.setattr(kr, "frames_path", lambda name: real_frames_path("rx90"))
    run_dynamics_example(tmp_path)
    out = capsys.readouterr().out
    assert "A is 6x6" in out and "(skew-symmetric)" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["krang_A.c", "krang_C.c"]
    assert "void krang_C(" in (tmp_path / "krang_C.c").read_text()


@pytest.mark.long
def test_krang_kane_example(tmp_path, capsys):
    """The issue's one-command example: derive, check, export (Python and MATLAB)."""
    module = runpy.run_path(str(ROOT / "examples" / "krang" / "krang_kane.py"))
    module["main"](str(tmp_path))
    out = capsys.readouterr().out
    assert "b4 = J^T m at 10r" in out
    names = ["krang_A", "krang_C", "krang_Q", "krang_b1", "krang_b2", "krang_b3", "krang_b4"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([n + ".m" for n in names] + ["krang_model"])
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("krang_model", tmp_path / "krang_model" / "__init__.py")
    package = importlib.util.module_from_spec(spec)
    sys.modules["krang_model"] = package
    try:
        spec.loader.exec_module(package)
        import numpy as np

        A = package.krang_A(np.zeros(17), np.ones(len(package.PARAMETERS)))
        assert A.shape == (17, 17) and np.allclose(A, A.T)
        assert sorted(package.__all__) == sorted(["PARAMETERS", *names])
    finally:
        del sys.modules["krang_model"]
    # The package is written where the user runs the example (the checkout, as the README says):
    # it must pass the project's lint rules, which tests/test_lint.py applies to the whole folder.
    import shutil
    import subprocess

    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is not None:
        config = ["--config", str(ROOT / "pyproject.toml")]
        done = subprocess.run([ruff, "check", "--no-cache", *config, str(tmp_path / "krang_model")], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow  # about 20 s; run with -m slow (the balancing LQR has its own quick tests)
def test_krang_control_example(tmp_path, capsys):
    """The issue's control example in its --fast mode: computed torque cross-validated against
    the Kane plant and a 10 % heavier one, then Krang balancing on its wheels."""
    module = runpy.run_path(str(ROOT / "examples" / "krang" / "krang_control.py"))
    results = module["main"](str(tmp_path), fast=True)
    out = capsys.readouterr().out
    exact, heavier = results["tracking"]["kane"], results["tracking"]["kane_10pct_heavier"]
    assert exact["max_tracking_error"] < 1e-6 and exact["max_mass_matrix_disagreement"] < 1e-9
    assert 1e-4 < heavier["max_tracking_error"] < 0.1 and 0.05 < heavier["relative_mass_matrix_disagreement"] < 0.2
    balance = results["balancing"]
    assert balance["late_pitch_error"] < 1e-3 and balance["open_loop_falls"]
    assert "below 1e-3: True" in out and "falls, |pitch error| 0.5 rad" in out
    slope = results["slope"]  # 10 degrees, pushed 0.1 rad: upright again, not rolled away, falls without feedback
    assert slope["late_pitch_error"] < 1e-3 and slope["drift"] < 0.5 and slope["open_loop_falls"] and slope["lean"] > 0.05
    lab = results["lab_urdf"]  # krang_lab.urdf with two discs: (b)'s upright pitch, held after a 0.1 rad push
    assert lab["equilibrium_difference"] < 1e-10 and lab["late_pitch_error"] < 1e-3
    if module["matplotlib_available"]():
        names = {p.name for p in tmp_path.iterdir()}
        assert "krang_slope_pitch.png" in names and "krang_balance_pitch.png" in names and "krang_ct_kane_10pct_heavier_tracking.png" in names
        assert all(p.stat().st_size > 10_000 for p in tmp_path.iterdir())
    else:
        assert "matplotlib is not installed: no figures" in out


def run_optimal_example(name, folder):
    pytest.importorskip("casadi", reason="pip install -e '.[casadi]'")
    module = runpy.run_path(str(ROOT / "examples" / "optimal" / f"{name}.py"))
    return module["main"](str(folder), fast=True)


@pytest.mark.long  # about 10 s: two IPOPT solves and four re-simulations
def test_rx90_optimal_example(tmp_path, capsys):
    """Minimum torque and minimum time: IPOPT converges, the limits hold, and the re-simulated
    torques (C backend) track the collocated motion within the collocation error."""
    runs = run_optimal_example("rx90_min_torque", tmp_path)
    out = capsys.readouterr().out
    for name, run in runs.items():
        result = run["result"]
        assert result.success, (name, result.status)
        assert np.all(np.abs(result.u) <= np.array([40, 60, 40, 15, 15, 10]) + 1e-6) and np.abs(result.qd).max() <= 2.5 + 1e-6
        assert run["open_loop"] <= result.collocation_error, (name, run["open_loop"], result.collocation_error)
    assert runs["minimum time"]["result"].duration < 1.5
    assert "collocation error (estimate)" in out


@pytest.mark.long  # about 5 s
def test_swing_up_example(tmp_path):
    """The acrobot reaches upright at rest on its elbow torque alone; with a PD on the elbow the
    re-simulation stays within the collocation error (open loop, the unstable upright amplifies it)."""
    run = run_optimal_example("swing_up", tmp_path)
    result = run["result"]
    assert result.success and np.allclose(result.q[-1], [np.pi, 0.0])
    assert np.abs(result.u).max() <= 15.0 + 1e-6
    assert run["pd"] <= 2 * result.collocation_error, (run["pd"], result.collocation_error)


@pytest.mark.long  # about a minute: Krang's wheeled programs to CasADi and C, IPOPT on 19 speeds
def test_krang_reach_example(tmp_path):
    """Krang reaches the target while balancing (pitch unactuated, within its path constraint), the
    torques within their limits; re-simulated with the LQR on the error, within the collocation error."""
    run = run_optimal_example("krang_reach", tmp_path)
    result = run["result"]
    assert result.success and run["hand_error"] < 1e-8
    assert run["balanced"] <= result.collocation_error, (run["balanced"], result.collocation_error)


@pytest.mark.long
def test_rx90_reaching_with_mpc_example(capsys):
    """Computed torque exceeds the limits (by design: 60 % of its peaks), saturated it loses the reach, the MPC
    keeps within them and ends on the target."""
    pytest.importorskip("casadi", reason="pip install -e '.[casadi]'")
    rows = runpy.run_path(str(ROOT / "examples" / "mpc" / "rx90_reach.py"))["main"]()
    ct, saturated, mpc = rows["computed torque"], rows["computed torque saturated"], rows["MPC"]
    assert ct["max_error"] < 1e-6 and ct["over"] > 1.0
    assert saturated["over"] <= 1e-9 and saturated["final_error"] > 0.1
    assert mpc["over"] <= 1e-9 and mpc["final_error"] < 0.02


@pytest.mark.long  # about 15 s: Krang's MPC, 60 ticks of about 80 ms
def test_krang_push_with_mpc_example(capsys):
    """The push without the campaign (--runs 0): the LQR as designed exceeds the limits, saturated it falls, the
    MPC stays upright within them."""
    pytest.importorskip("casadi", reason="pip install -e '.[casadi]'")
    rows = runpy.run_path(str(ROOT / "examples" / "mpc" / "krang_push.py"))["main"](["--runs", "0"])["single"]
    assert rows["LQR as designed"]["upright"] and rows["LQR as designed"]["over"] > 0.5
    assert not rows["LQR saturated"]["upright"]
    assert rows["MPC"]["upright"] and rows["MPC"]["over"] <= 1e-9


@pytest.mark.slow  # about two minutes: Krang's reach collocated, then two MPC runs through kr.cross_validate
def test_krang_reach_with_mpc_example():
    """The MPC tracks the collocated reach within its motors' limits, on the plant it was built on and on one 10 %
    heavier, the body balanced (the pitch within 0.3 rad of upright)."""
    pytest.importorskip("casadi", reason="pip install -e '.[casadi]'")
    runs = runpy.run_path(str(ROOT / "examples" / "mpc" / "krang_reach.py"))["main"](fast=True)["runs"]
    for name, run in runs.items():
        assert run["over"] <= 1e-9 and run["pitch"] < 0.3, (name, run)
    assert runs["same plant"]["hand_error"] < 0.02 and runs["same plant"]["max_error"] < 0.1
