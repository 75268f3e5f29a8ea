"""A robot's parameter tables, as data, and their text, HTML and LaTeX layouts.

SYMORO heads every model with the robot's tables: geometric parameters (the
Khalil-Kleinfinger table, or for general frames their rotation, position
and axis), dynamic inertia parameters, external forces and joint
parameters, base velocities.  :func:`parameter_tables` builds them once as
:class:`Table` rows; :func:`text_tables` lays them out as SYMORO's text
files do (:mod:`kanerobot.report`), :func:`html_tables` for Jupyter
(``Robot._repr_html_``) and :func:`latex_tables` for ``kanerobot model
... --lang latex``.

The builders take the formatting of a cell as arguments, so that one table
gives ``th2 - pi/2`` in text and ``\\theta_{2} - \\frac{\\pi}{2}`` in LaTeX.
"""

import html
import re
from typing import NamedTuple

import sympy

from kanerobot.robot.expressions import format_expression, format_joint, latex_expression
from kanerobot.robot.names import BASE_VECTOR_NAMES, INERTIAL_NAMES

__all__ = ["Table", "html_tables", "latex_tables", "latex_text", "parameter_tables", "text_tables"]

_WIDTH = 8
_KK_KEYS = ("gamma", "b", "alpha", "d", "theta", "r")
_JOINT_KEYS = ("FX", "FY", "FZ", "CX", "CY", "CZ", "FS", "FV", "QP", "QDP", "GAM")


class Table(NamedTuple):
    """One parameter table: a title, column names, rows of formatted cells, a closing note."""

    title: str
    columns: tuple
    rows: list
    note: str = ""


def _latex_math(expr):
    return f"${latex_expression(expr)}$"


def _latex_joint(variable, offset):
    return _latex_math(sympy.Add(variable, offset))


def _geometric_tables(robot, expression, joint):
    tables = []
    kk = [f for f in robot.frames if f.is_kk]
    general = [f for f in robot.frames if not f.is_kk]
    if kk:
        rows = []
        for f in kk:
            p = f.placement
            values = [joint(f.q, f.offset) if key == f.joint_key else expression(getattr(p, key)) for key in _KK_KEYS]
            rows.append([f.label, f.antecedent, str(f.sigma), str(f.mu)] + values)
        tables.append(Table("Geometric parameters", ("j", "ant", "sigma", "mu") + _KK_KEYS, rows))
    if general:
        rows = []
        for f in general:
            p = f.placement
            vec = "[" + ", ".join(expression(v) for v in p.axis) + "]"
            position = "[" + ", ".join(expression(v) for v in p.P) + "]"
            rotation = "[" + "; ".join(", ".join(expression(v) for v in p.R0.row(i)) for i in range(3)) + "]"
            q = joint(f.q, f.offset) if f.is_joint else "-"
            rows.append([f.label, f.antecedent, str(f.sigma), str(f.mu), q, vec, position, rotation])
        title = "Frames (rotation R0 row by row and position P at q = 0, joint axis e in the frame)"
        tables.append(Table(title, ("j", "ant", "sigma", "mu", "q", "axis", "P", "R0"), rows))
    return tables


def _dynamic_table(robot, expression):
    rows = [[label] + [expression(robot.dynamics[label][k]) for k in INERTIAL_NAMES] for label in robot.links]
    return Table("Dynamic inertia parameters", ("j",) + INERTIAL_NAMES, rows)


def _joint_table(robot, expression):
    rows = []
    for f in robot.frames:
        if f.label not in robot.dynamics and not f.is_joint:
            continue
        d = robot.dynamics.get(f.label, {})
        jp = robot.joint_parameters.get(f.label, {})
        cells = [expression(d[k]) if k in d else "-" for k in _JOINT_KEYS[:8]]
        cells += [expression(jp[k]) if k in jp else "-" for k in _JOINT_KEYS[8:]]
        rows.append([f.label] + cells)
    flexible = [label for label in robot.joint_labels if robot.joint_parameters[label]["eta"] != 0]
    note = ""
    if flexible:
        note = "Flexible joints: " + ", ".join(f"{label} (k = {expression(robot.joint_parameters[label]['k'])})" for label in flexible)
    return Table("External forces and joint parameters", ("j",) + _JOINT_KEYS, rows, note)


def _base_table(robot, expression):
    rows = [[axis] + [expression(getattr(robot.base, k)[i]) for k in BASE_VECTOR_NAMES] for i, axis in enumerate("XYZ")]
    note = ""
    if robot.base.Z != robot.base.Z.eye(4):
        note = "Z (frame 0 in the world frame): " + ", ".join(expression(v) for v in robot.base.Z)
    return Table("Base velocities parameters", ("axis",) + BASE_VECTOR_NAMES, rows, note)


def parameter_tables(robot, expression=format_expression, joint=format_joint):
    """The tables SYMORO prints before a model, as :class:`Table` rows.

    Parameters
    ----------
    robot : kanerobot.Robot
    expression : callable, optional
        Formats one parameter (a sympy expression) as a cell; the default
        prints it as the robot files write it.
    joint : callable, optional
        Formats a joint's cell from its variable and offset (``th2 - pi/2``).

    Returns
    -------
    list of Table
        Geometric (one or two tables: Khalil-Kleinfinger frames, general
        frames), dynamic, joint, base.

    Examples
    --------
    >>> from kanerobot.robot.io import load
    >>> from kanerobot.library import frames_path
    >>> tables = parameter_tables(load(frames_path("rx90")))
    >>> [t.title for t in tables]
    ['Geometric parameters', 'Dynamic inertia parameters', 'External forces and joint parameters', 'Base velocities parameters']
    >>> tables[0].columns
    ('j', 'ant', 'sigma', 'mu', 'gamma', 'b', 'alpha', 'd', 'theta', 'r')
    >>> tables[0].rows[3]
    ['4', '3', '0', '1', '0', '0', '-pi/2', '0', 'th4', 'RL4']
    """
    return _geometric_tables(robot, expression, joint) + [
        _dynamic_table(robot, expression),
        _joint_table(robot, expression),
        _base_table(robot, expression),
    ]


def _text_row(cells):
    return "".join(str(c).ljust(_WIDTH - 1) + " " for c in cells).rstrip() + "\n"


def text_tables(robot):
    """The tables as SYMORO's text files print them, separated by blank lines."""
    out = []
    for table in parameter_tables(robot):
        lines = [table.title + "\n", _text_row(table.columns)] + [_text_row(row) for row in table.rows]
        if table.note:
            lines.append(table.note + "\n")
        out.append("".join(lines))
    return "\n".join(out)


def html_tables(robot):
    """The tables as HTML ``<table>`` elements with captions (how Jupyter shows a Robot)."""
    out = []
    for table in parameter_tables(robot):
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in table.rows)
        note = f"<p>{html.escape(table.note)}</p>" if table.note else ""
        out.append(f"<table><caption>{html.escape(table.title)}</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{note}")
    return "\n".join(out)


_LATEX_COLUMNS = {"sigma": r"$\sigma$", "mu": r"$\mu$", "gamma": r"$\gamma$", "alpha": r"$\alpha$", "theta": r"$\theta$"}


def latex_text(text):
    """Plain text (labels, titles, notes) with LaTeX's special characters escaped; math (``$...$``) kept.

    >>> print(latex_text("GAM_a = G^T GAM, 5% $x_1$"))
    GAM\\_a = G\\^{}T GAM, 5\\% $x_1$
    """
    parts = re.split(r"(\$[^$]*\$)", text)
    return "".join(p if p.startswith("$") else re.sub(r"([_&%#{}])", r"\\\1", p).replace("^", r"\^{}") for p in parts)


def latex_tables(robot):
    """The tables as LaTeX ``tabular`` environments, cells in math mode (``longtable`` free: a table a line)."""
    out = []
    for table in parameter_tables(robot, expression=_latex_math, joint=_latex_joint):
        columns = " & ".join(_LATEX_COLUMNS.get(c, f"${latex_expression(sympy.Symbol(c))}$" if len(c) > 1 else c) for c in table.columns)
        rows = [" & ".join(latex_text(c) for c in row) + r" \\" for row in table.rows]
        lines = [
            rf"\subsection*{{{table.title}}}",
            r"\begin{tabular}{" + "l" * len(table.columns) + "}",
            r"\hline",
            columns + r" \\",
            r"\hline",
            *rows,
            r"\hline",
            r"\end{tabular}",
        ]
        if table.note:
            lines += ["", r"\noindent " + latex_text(table.note)]
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"
