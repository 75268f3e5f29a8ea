"""The examples run and their own checks pass."""

import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_krang_kinematics_example(capsys):
    runpy.run_path(str(ROOT / "examples" / "krang" / "krang_kinematics.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "17 degrees of freedom" in out
    assert "right-arm columns all zero: True" in out
