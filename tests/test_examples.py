"""The examples run and their own checks pass."""

import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_krang_kinematics_example(capsys):
    runpy.run_path(str(ROOT / "examples" / "krang" / "krang_kinematics.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "17 degrees of freedom" in out
    assert "right-arm columns all zero: True" in out


def test_krang_dynamics_example(tmp_path, capsys):
    module = runpy.run_path(str(ROOT / "examples" / "krang" / "krang_dynamics.py"))
    module["main"](str(tmp_path))
    out = capsys.readouterr().out
    assert "A is 17x17" in out and "(skew-symmetric)" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["krang_A.c", "krang_C.c"]
