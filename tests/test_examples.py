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
    finally:
        del sys.modules["krang_model"]
