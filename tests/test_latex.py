"""LaTeX and HTML layouts of a model and a robot (issue 17, "Equations to read").

``kanerobot model ROBOT MODEL --lang latex`` writes SYMORO's report as a
LaTeX document: every equation line is parsed back with sympy's LaTeX
parser and must equal the program's line at random values, and pdflatex
compiles the document when it is installed.  ``Robot._repr_html_`` shows
the parameter tables; its cells must be the text tables' cells.
"""

import html
import re
import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pytest
import sympy
from conftest import derived, library

from kanerobot.cli import main
from kanerobot.robot.tables import parameter_tables
from kanerobot.symbolic.printing import program_rows

_NAME = re.compile(r"\\mathrm\{([A-Za-z0-9\\_]+)\}")


def _latex_document(tmp_path, robot, model, *options):
    path = tmp_path / f"{robot}_{model}.tex"
    assert main(["model", robot, model, "--lang", "latex", "-o", str(path), *options]) in (0, None)
    return path.read_text()


def _equation_lines(text):
    body = text.split("\\begin{align*}\n", 1)[1].split("\n\\end{align*}", 1)[0]
    return body.split(" \\\\\n")


def _parse(latex):
    """An equation side back to sympy: SYMORO's names (``\\mathrm{WI12}``) stand in as ``v_{k}`` for the parser."""
    from sympy.parsing.latex import parse_latex

    names = {}

    def placeholder(match):  # v_{ab}: the lark grammar takes letters in a braced subscript, not digits
        k = len(names)
        token = f"v_{{{chr(97 + k // 26 // 26)}{chr(97 + k // 26 % 26)}{chr(97 + k % 26)}}}"
        names[token] = match.group(1).replace("\\_", "_")
        return token

    # the parser has no sign(): read sign(x) as (x), and the expected side does the same (_unsigned)
    latex = latex.replace("\\operatorname{sign}{\\left(", "{\\left(")
    # and "L1 (x)" is ambiguous to it (a product or a call): make the products explicit
    expr = parse_latex(_NAME.sub(placeholder, latex).replace("} \\left(", "} \\cdot \\left("), backend="lark")
    return expr.subs({sympy.Symbol(token): sympy.Symbol(name) for token, name in names.items()})


def _unsigned(expr):
    return sympy.sympify(expr).replace(sympy.sign, lambda x: x)


def _assert_environments_balanced(text):
    assert text.startswith("\\documentclass") and text.rstrip().endswith("\\end{document}")
    assert text.count("{") == text.count("}")
    begins, ends = re.findall(r"\\begin\{(\w+\*?)\}", text), re.findall(r"\\end\{(\w+\*?)\}", text)
    assert sorted(begins) == sorted(ends)


@pytest.mark.parametrize("robot, model, name", [("planar2", "idm", "inverse_dynamics"), ("planar2", "inm", "mass_matrix")])  # lark parses ~10 lines/s
@pytest.mark.long
def test_latex_equations_read_back_as_the_program(tmp_path, robot, model, name):
    """Each line of the LaTeX document, parsed by sympy, is the program's line: same name,
    same value at random inputs (1e-12); then the operation count and SYMORO's ``*=*``."""
    pytest.importorskip("lark", reason="parsing LaTeX back needs lark: pip install lark (in the test extra)")
    text = _latex_document(tmp_path, robot, model)
    _assert_environments_balanced(text)
    program = derived(robot).program(name)
    rows = program_rows(program)
    lines = _equation_lines(text)
    assert len(lines) == len(rows)
    rng = np.random.default_rng(7)
    values = {s: sympy.Float(rng.uniform(0.3, 1.7)) for s in program.inputs}  # then each line's value, in order
    for line, (name_, expr) in zip(lines, rows):
        left, right = line.split(" &= ")
        assert _parse(left) == sympy.Symbol(name_)
        got = float(_parse(right).xreplace(values))
        expected = float(_unsigned(expr).xreplace(values))
        values[sympy.Symbol(name_)] = sympy.Float(expected)
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-12), (name_, line)
    counts = program.op_count()
    assert f"{counts['add']} `+' or `-', {counts['mul']} `*' or `/'" in text
    assert "\n*=*\n" in text


def test_latex_tables_hold_the_robots_parameters(tmp_path):
    """The tables before the equations: one tabular per parameter table, a row per frame, and
    the Khalil-Kleinfinger cells in math mode (th4's row of the RX-90 with alpha = -pi/2, r = RL4)."""
    text = _latex_document(tmp_path, "rx90", "fgm")
    titles = [t.title for t in parameter_tables(library("rx90"))]
    assert re.findall(r"\\subsection\*\{([^}]*)\}", text) == titles
    assert text.count("\\begin{tabular}") == len(titles)
    assert "4 & 3 & 0 & 1 & $0$ & $0$ & $- \\frac{\\pi}{2}$ & $0$ & $\\mathrm{th4}$ & $\\mathrm{RL4}$ \\\\" in text


def test_latex_escapes_the_titles_and_labels(tmp_path):
    """A closed loop's heading and notes have G^T, WP^-1 and qd_passive: the document still
    balances, and no bare ``_`` or ``^`` is left outside math mode."""
    text = _latex_document(tmp_path, "sr400", "loopvel")
    _assert_environments_balanced(text)
    outside_math = re.sub(r"\$[^$]*\$", "", re.sub(r"\\begin\{align\*\}.*?\\end\{align\*\}", "", text, flags=re.S))
    assert not re.search(r"(?<!\\)[_^]", outside_math.replace("\\^{}", ""))


def test_latex_is_refused_for_the_igm(capsys):
    assert main(["model", "rx90", "igm", "--lang", "latex"]) == 2
    assert "igm" in capsys.readouterr().err


@pytest.mark.parametrize("robot, model", [("rx90", "idm"), ("sr400", "loopvel"), ("krang", "inm")])
def test_pdflatex_compiles_the_report(tmp_path, robot, model):
    """pdflatex (TeX Live's texlive-latex-base) compiles the document without an error."""
    if shutil.which("pdflatex") is None:
        pytest.skip("needs pdflatex: apt-get install texlive-latex-base (the parse test checks the LaTeX without it)")
    path = tmp_path / f"{robot}_{model}.tex"
    path.write_text(_latex_document(tmp_path, robot, model))
    run = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", path.name], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stdout[-2000:]
    assert (tmp_path / f"{robot}_{model}.pdf").stat().st_size > 0


class _Cells(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables, self.captions, self._text = [], [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th", "caption"):
            self._text = ""

    def handle_data(self, data):
        if self._text is not None:
            self._text += data

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self._text)
        elif tag == "caption":
            self.captions.append(self._text)
        if tag in ("td", "th", "caption"):
            self._text = None


@pytest.mark.parametrize("name", ["rx90", "krang", "satellite", "fourbar"])
def test_robots_display_their_tables_in_notebooks(name):
    """Robot._repr_html_ (Jupyter): the summary, then every parameter table with its header and
    the cells of the text tables, HTML-escaped (parsed back here)."""
    robot = library(name)
    parser = _Cells()
    page = robot._repr_html_()
    parser.feed(page)
    tables = parameter_tables(robot)
    assert parser.captions == [t.title for t in tables]
    for got, table in zip(parser.tables, tables):
        assert got == [list(table.columns)] + [list(row) for row in table.rows]
    assert html.escape(repr(robot)) in page
