"""The package list in pyproject.toml covers every subpackage."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_subpackage_is_listed():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "kanerobot").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found | {"kanerobot.frames"} == listed
