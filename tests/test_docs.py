"""The documentation site: it builds with warnings as errors, notebooks executed.

``docs/`` is a Sphinx site (``docs/conf.py``): the README as its landing
page, the API reference generated from the docstrings, the theory pages and
the tutorials, notebooks stored without outputs and executed at every build
(a cell that raises fails it).  :func:`test_site_builds` builds it as the
README's Quick start says, into a temporary folder, when the docs extra is
installed (CI installs it through the test extra); the checks of the stored
notebooks and of the index need nothing but the files.

The build writes the API stubs autosummary generates into ``docs/api/``
(git-ignored), as any build does.
"""

import importlib.util
import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kanerobot

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
TUTORIALS = sorted((DOCS / "tutorials").glob("*.ipynb"))
#: The arguments of ``python -m sphinx`` in the README's Quick start, the output folder aside.
SPHINX = ["-W", "--keep-going", "-b", "html", "docs"]
#: What building the site needs (the docs extra of pyproject.toml), by import name.
DOCS_EXTRA = ("sphinx", "myst_nb", "numpydoc", "furo", "ipykernel", "matplotlib")
#: A result each tutorial computes and prints: in its page only if its cells ran.
EXECUTED = {
    "krang": "max |A_Kane - A_NE| =",
    "urdf": "largest relative difference",
    "identification": "within 3 standard deviations",
    "recordings": "standard deviations of the truth",
}


def toctree_entries(text):
    """The document names of every ``{toctree}`` block of a MyST page."""
    entries = []
    for block in re.findall(r"```\{toctree\}\n(.*?)```", text, flags=re.S):
        entries += [line.strip() for line in block.splitlines() if line.strip() and not line.startswith(":")]
    return entries


def test_toctree_entries_parse():
    text = "x\n```{toctree}\n:caption: T\n:maxdepth: 1\n\na/b\nc\n```\n\n```{toctree}\nd\n```\n"
    assert toctree_entries(text) == ["a/b", "c", "d"]


def test_there_are_the_tutorials():
    assert [path.stem for path in TUTORIALS] == sorted(EXECUTED)


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda path: path.name)
def test_notebook_is_stored_without_outputs(path):
    """Outputs are made by the build, never stored: a stored output could hide a cell that no longer runs."""
    notebook = json.loads(path.read_text())
    for number, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [], f"{path.relative_to(ROOT)}: cell {number} has stored outputs: clear them"
            assert cell["execution_count"] is None, f"{path.relative_to(ROOT)}: cell {number} has an execution count: clear it"


def test_every_tutorial_is_linked_from_the_index():
    entries = toctree_entries((DOCS / "index.md").read_text())
    for path in TUTORIALS:
        assert f"tutorials/{path.stem}" in entries, f"docs/index.md: no toctree entry for tutorials/{path.stem}"


def test_readme_gives_the_build_command():
    """The README's one command builds the site as this test does: the docs extra, then sphinx with -W."""
    text = (ROOT / "README.md").read_text()
    quick_start = text[text.index("## Quick start") :].split("\n## ")[0]
    commands = [line for line in quick_start.splitlines() if "sphinx" in line]
    assert commands == [
        "python3 -m venv .venv && . .venv/bin/activate && pip install -q -e '.[docs]' && python -m sphinx "
        + " ".join(SPHINX)
        + " docs/_build/html"
    ]


@pytest.mark.long
def test_site_builds(tmp_path):
    """``python -m sphinx -W --keep-going -b html docs OUT``: no warning, every notebook executed, every page there."""
    for name in DOCS_EXTRA:
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed: pip install 'kanerobot[docs]' to build the documentation")
    out = tmp_path / "html"
    command = [sys.executable, "-m", "sphinx", *SPHINX, str(out), "-d", str(tmp_path / "doctrees")]
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, f"the documentation does not build ({' '.join(command[1:])}):\n{run.stderr[-6000:]}"
    for stem, printed in EXECUTED.items():
        page = (out / "tutorials" / f"{stem}.html").read_text()
        assert printed in page, f"tutorials/{stem}.html: {printed!r} not in the page: did its cells run?"
    assert "<img" in (out / "tutorials" / "krang.html").read_text(), "the Krang tutorial's figures are not in its page"
    # every name of kanerobot.__all__ in the table of api.html, linked to where it is documented
    api = (out / "api.html").read_text()
    for name in kanerobot.__all__:
        obj = getattr(kanerobot, name)
        target = f"api/{obj.__module__}.html#{obj.__module__}.{obj.__qualname__}"
        assert f'href="{target}"' in api, f"api.html: no link to {target} for kanerobot.{name}"
        assert (out / target.split("#")[0]).is_file()
    # a page for every public module, found by walking the package as autosummary does
    for module in pkgutil.walk_packages(kanerobot.__path__, "kanerobot."):
        if not any(part.startswith("_") for part in module.name.split(".")):
            assert (out / "api" / f"{module.name}.html").is_file(), f"no API page for {module.name}"
    assert "Articulated bodies" in (out / "theory" / "direct.html").read_text()
    # the README is the landing page, included (its Quick start there)
    assert "Quick start" in (out / "index.html").read_text()
