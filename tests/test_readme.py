"""The README as tests: every Python and shell block runs as written.

Each ``## `` section of README.md is one session, as a reader who starts
reading there would run it: an empty folder (``tmp_path``, made the current
directory), one Python namespace shared by the section's ``python`` blocks in
order (its ``###`` subsections included), and a shell in that same folder for
its ``sh`` blocks.  So every section imports what it uses and makes every
file it reads (the identification walkthrough writes its own recording
before identifying from it).

* A ``python`` block that starts with ``>>>`` is a doctest session: what it
  shows is checked (``ELLIPSIS`` and ``NORMALIZE_WHITESPACE``).  Any other
  ``python`` block is executed; it shows nothing, so there is nothing else to
  check but that it runs.
* A ``sh`` block holds ``kanerobot`` commands only (comments allowed), run in
  order through :func:`kanerobot.cli.main`; each must exit 0 and print
  something or write a file, and a file named by ``-o`` or a folder named by
  ``--plot`` (with figures in it) must have been written.
  The Quick start's three blocks are install commands: they are checked
  against ``.ci/run`` and the example they run, not run here
  (``tests/test_examples.py`` runs ``examples/krang/krang_kane.py``,
  ``tests/test_docs.py`` builds the documentation as the third says).
* Blocks of no language are listings (the layout), not run; any other
  language fails :func:`test_blocks_have_known_languages`, so that a block
  is never skipped silently.

The operation-count table of the Dynamics section is checked against the
code (:func:`test_op_count_table`), and its OpenSYMORO column against
OpenSYMORO's files when the corpus is beside the checkout.
"""

import contextlib
import doctest
import importlib.util
import io
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import corpus_file

import kanerobot as kr
from kanerobot import cli

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
QUICK_START = "Quick start"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@dataclass
class Block:
    """A fenced block: its language, text, and the README line of its first line of code."""

    language: str
    code: str
    line: int


def sections(text=None):
    """``{title of a '## ' section: [Block, ...]}`` in the README's order."""
    text = README.read_text() if text is None else text
    found, title, block = {}, None, None
    for number, line in enumerate(text.splitlines(), start=1):
        if block is not None:
            if line.startswith("```"):
                found.setdefault(title, []).append(Block(block[0], "\n".join(block[2]) + "\n", block[1]))
                block = None
            else:
                block[2].append(line)
        elif line.startswith("```"):
            block = (line[3:].strip(), number + 1, [])
        elif line.startswith("## "):
            title = line[3:].strip()
    assert block is None, f"README.md: the block opened at line {block[1] - 1} is never closed"
    return found


def runnable_sections():
    return [title for title, blocks in sections().items() if title != QUICK_START and any(b.language in ("python", "sh") for b in blocks)]


def run_doctest(block, namespace, title):
    """Run a ``>>>`` block with ``namespace`` as its globals (updated in place); fail with doctest's report."""
    test = doctest.DocTestParser().get_doctest(block.code, namespace, f"README.md, {title}", str(README), block.line - 1)
    report = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test, out=report.write, clear_globs=False)
    namespace.update(test.globs)
    if runner.failures:
        pytest.fail(f"README.md block at line {block.line} ({title}):\n{report.getvalue()}", pytrace=False)
    return runner.tries


def run_python(block, namespace):
    """Execute a plain block; tracebacks name README.md and its lines."""
    exec(compile("\n" * (block.line - 1) + block.code, str(README), "exec"), namespace)


def shell_commands(block):
    """The commands of a ``sh`` block, each as argv, comments dropped."""
    commands = []
    for offset, line in enumerate(block.code.splitlines()):
        argv = shlex.split(line, comments=True)
        if argv:
            commands.append((block.line + offset, argv))
    return commands


def run_kanerobot(argv, where):
    """``kanerobot ARGS`` through the CLI entry point: (status, stdout, stderr)."""
    assert argv[0] == "kanerobot", f"{where}: README shell blocks hold kanerobot commands only, got {argv[0]!r}"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(argv[1:])
        except SystemExit as stop:  # --help
            status = stop.code
    return status or 0, out.getvalue(), err.getvalue()


def run_shell(block):
    for line, argv in shell_commands(block):
        where = f"README.md:{line}: {shlex.join(argv)}"
        before = set(Path.cwd().iterdir())
        status, out, err = run_kanerobot(argv, where)
        assert status == 0, f"{where}: exit status {status}\n{err}"
        assert out or set(Path.cwd().iterdir()) - before, f"{where}: printed nothing and wrote nothing"
        for option in ("-o", "--plot"):
            if option in argv:
                written = Path(argv[argv.index(option) + 1])
                assert written.exists() and (written.is_dir() or written.stat().st_size > 0), f"{where}: {written} not written"
                if option == "--plot":
                    assert sorted(written.glob("*.png")), f"{where}: no figure in {written}"


@pytest.mark.parametrize("title", runnable_sections())
@pytest.mark.long
def test_section_runs_as_written(title, tmp_path, monkeypatch):
    """The section's blocks, in order, in an empty folder; doctests check what they show."""
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__readme__"}
    for block in sections()[title]:
        if block.language == "python" and block.code.lstrip().startswith(">>>"):
            assert run_doctest(block, namespace, title) > 0
        elif block.language == "python":
            run_python(block, namespace)
        elif block.language == "sh":
            run_shell(block)


def test_blocks_have_known_languages():
    """python, sh, or none (a listing): nothing else would be run, so nothing else is allowed."""
    for title, blocks in sections().items():
        for block in blocks:
            assert block.language in ("python", "sh", ""), f"README.md:{block.line - 1}: block of language {block.language!r} in {title!r}"
    assert {"Python", "Dynamics", "Identification", "Simulation and controllers", "Command line"} <= set(runnable_sections())


def test_quick_start_commands():
    """Three commands: the headline (Krang's A and C by Kane's method), exactly what CI runs, and
    the documentation build (``tests/test_docs.py`` holds it to the build it runs)."""
    blocks = sections()[QUICK_START]
    assert [b.language for b in blocks] == ["sh", "sh", "sh"]
    main_job, tests, _docs = (b.code.strip() for b in blocks)
    assert main_job == "python3 -m venv .venv && . .venv/bin/activate && pip install . && python examples/krang/krang_kane.py"
    example = ROOT / "examples" / "krang" / "krang_kane.py"
    assert example.is_file() and "method=\"kane\"" in example.read_text() and '"coriolis_matrix"' in example.read_text()
    assert tests in (ROOT / ".ci" / "run").read_text().splitlines()


def test_sections_parse():
    """The parser itself: sections, languages, first lines of code, an unclosed block named."""
    text = "# t\n## A\n```python\n>>> 1 + 1\n2\n```\n### sub\n```sh\nkanerobot list  # x\n```\n## B\n```\nlisting\n```\n"
    found = sections(text)
    assert list(found) == ["A", "B"]
    assert [(b.language, b.line) for b in found["A"]] == [("python", 4), ("sh", 9)]
    assert shell_commands(found["A"][1]) == [(9, ["kanerobot", "list"])]
    assert found["B"][0].code == "listing\n"
    with pytest.raises(AssertionError, match="line 3 is never closed"):
        sections("## A\n\n```python\nx = 1\n")


def test_doctest_failure_names_the_readme_line():
    """A block whose output is wrong fails with the README line of the example."""
    block = Block("python", ">>> 1 + 1\n3\n", 40)
    with pytest.raises(pytest.fail.Exception, match=r'line 40'):
        run_doctest(block, {}, "X")


def op_count_table():
    """``{model label: (ours (mul, add), OpenSYMORO's (mul, add))}`` from the table of the Dynamics section."""
    text = README.read_text()
    table = text[text.index("Operation counts for the RX-90"):].split("\n\n")[1]
    rows = {}
    for line in table.splitlines()[2:]:
        label, ours, theirs = (cell.strip() for cell in line.strip("|").split("|"))
        rows[label] = tuple(tuple(int(x) for x in cell.split(" / ")) for cell in (ours, theirs))
    return rows


TABLE_MODELS = {
    "inverse dynamics (with gravity; OpenSYMORO's leaves it out)": ("inverse_dynamics", "idm"),
    "inertia matrix": ("mass_matrix", "inm"),
    "centrifugal, Coriolis, gravity": ("h", "ccg"),
    "direct dynamics": ("direct_dynamics", "ddm"),
}


def test_op_count_table():
    """Every figure of kanerobot's column is what the code gives today."""
    rows = op_count_table()
    assert set(rows) == set(TABLE_MODELS)
    model = kr.derive(kr.load(kr.frames_path("rx90")), method="newton-euler")
    for label, (name, _) in TABLE_MODELS.items():
        counts = model.op_count(name)
        assert rows[label][0] == (counts["mul"], counts["add"]), label


def test_op_count_table_opensymoro_column(monkeypatch):
    """OpenSYMORO's column counted from its RX90_*.txt by benchmarks/op_counts.py's rules."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))  # the script imports benchmarks/needs.py
    spec = importlib.util.spec_from_file_location("op_counts_for_readme", ROOT / "benchmarks" / "op_counts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for label, (_, key) in TABLE_MODELS.items():
        theirs = module.opensymoro_count(corpus_file(f"RX90_{key}.txt"))
        assert op_count_table()[label][1] == (theirs["mul"], theirs["add"]), label


def test_other_figures_of_the_prose():
    """Figures said in prose rather than shown by a block: the base parameters of the RX-90 (40 plus 12 friction)."""
    text = README.read_text()
    assert "(40 inertial parameters plus 12 friction)" in text
    robot = kr.load(kr.frames_path("rx90"))
    assert len(kr.base_parameters(robot, friction=False)) == 40
    assert len(kr.base_parameters(robot)) == 52
