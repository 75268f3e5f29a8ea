"""ruff is clean on the whole checkout (pyproject's [tool.ruff]: pyflakes, bugbear, import order, complexity).

CI runs the tests, so the lint rules hold in CI too; ruff comes with the test extra.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_is_clean():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed: pip install -e '.[test]' brings it")
    done = subprocess.run([ruff, "check", "--no-cache", "--output-format", "concise", str(ROOT)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
