"""Text of a program in SYMORO's layout.

The OpenSYMORO model files (RX90_*.txt) list a model under ``Equations:``,
one assignment ``name = expr`` a line, in the order they are computed, the
outputs last.  Expressions are printed with sympy's ``str`` printer, which
reads like the files (``cos(th1)``, ``QP1**2``, ``C2*QDP1 - QP2*WI12``).
"""

import re

import sympy

from kanerobot.robot.expressions import latex_expression

__all__ = ["format_assignments", "format_matrix", "format_operations", "format_program", "latex_equations", "latex_lines"]


def format_operations(counts):
    """One-line summary of an operation count (see :func:`count_ops`).

    Examples
    --------
    >>> format_operations({"add": 12, "mul": 30, "fn": 4})
    "Number of operations : 12 '+' or '-', 30 '*' or '/', 4 functions"
    """
    return (
        f"Number of operations : {counts['add']} '+' or '-', "
        f"{counts['mul']} '*' or '/', {counts['fn']} functions"
    )


def program_rows(program):
    """``[(name, expr), ...]``: the assignments the outputs need, then the outputs, in program order."""
    return [(sym.name, expr) for sym, expr in program.assignments()] + program.output_lines()


def format_program(program, title=None, latex=False):
    """SYMORO-style text of a :class:`~kanerobot.symbolic.Program`.

    Only the assignments the outputs need are printed (all of them for a
    program without outputs), then the outputs, then the operation count.

    Parameters
    ----------
    program : Program
    title : str, optional
        First line(s), e.g. ``"Fast geometric model"``.
    latex : bool, optional
        LaTeX instead of text (:func:`latex_equations`; no title).

    Returns
    -------
    str
        Ends with a newline.

    Examples
    --------
    >>> from kanerobot.symbolic import Program
    >>> th1, QP1 = sympy.symbols("th1 QP1")
    >>> p = Program(inputs=[th1, QP1])
    >>> C1, S1 = p.sin_cos(th1, "1")
    >>> p.set_output("WI12", QP1 * S1)
    'WI12'
    >>> print(format_program(p, "Example"), end="")
    Example
    <BLANKLINE>
    Equations:
    S1 = sin(th1)
    WI12 = QP1*S1
    <BLANKLINE>
    Number of operations : 0 '+' or '-', 1 '*' or '/', 1 functions
    """
    if latex:
        return latex_equations(program_rows(program), program.op_count())
    lines = []
    if title:
        lines += [title, ""]
    lines.append("Equations:")
    lines += [f"{name} = {sympy.sstr(expr)}" for name, expr in program_rows(program)]
    lines += ["", format_operations(program.op_count())]
    return "\n".join(lines) + "\n"


def format_assignments(rows, latex=False):
    """``Equations:`` then one ``name = expr`` line per (name, expr) pair.

    For models printed as plain expressions (SYMORO's Jacobian, velocities).

    >>> th1 = sympy.Symbol("th1")
    >>> print(format_assignments([("DETJ", sympy.sin(th1))]), end="")
    Equations:
    DETJ = sin(th1)
    """
    if latex:
        return latex_equations(rows)
    return "Equations:\n" + "".join(f"{name} = {sympy.sstr(expr)}\n" for name, expr in rows)


def matrix_entry_names(prefix, shape):
    """Names ``prefix + row + column`` (1-based), with ``_`` between the two
    indices when one of them has two digits (``J1_12``)."""
    rows, cols = shape
    sep = "_" if max(rows, cols) > 9 else ""
    return [[f"{prefix}{i + 1}{sep}{j + 1}" for j in range(cols)] for i in range(rows)]


def matrix_rows(prefix, matrix):
    """``[(name, entry), ...]`` column by column, named by :func:`matrix_entry_names`."""
    names = matrix_entry_names(prefix, matrix.shape)
    return [(names[i][j], matrix[i, j]) for j in range(matrix.shape[1]) for i in range(matrix.shape[0])]


def format_matrix(prefix, matrix, latex=False):
    """The entries of ``matrix`` as assignments, column by column, as SYMORO
    prints a Jacobian (``J11, J21, ..., J61, J12, ...``).

    >>> print(format_matrix("T", sympy.Matrix([[1, 0], [0, sympy.Symbol("c")]])), end="")
    Equations:
    T11 = 1
    T21 = 0
    T12 = 0
    T22 = c
    """
    return format_assignments(matrix_rows(prefix, matrix), latex)


def latex_lines(rows):
    """``name &= expression`` in LaTeX, one string per ``(name, expr)`` pair (SYMORO's names whole).

    >>> latex_lines([("WI12", sympy.Symbol("QP1") / 2)])
    ['\\\\mathrm{WI12} &= \\\\frac{\\\\mathrm{QP1}}{2}']
    """
    return [f"{latex_expression(sympy.Symbol(str(name)))} &= {latex_expression(expr)}" for name, expr in rows]


def latex_equations(rows, counts=None):
    """``Equations:`` as LaTeX: one aligned ``name = expression`` line per pair.

    The body of a SYMORO report in LaTeX (``kanerobot model ... --lang
    latex``): an ``align*`` environment, which may break across pages,
    and the operation count after it when given.

    Parameters
    ----------
    rows : iterable of (str or sympy.Symbol, sympy.Expr)
        Assignments in program order (:meth:`Program.assignments` then
        :meth:`Program.output_lines`, or a model's plain rows).
    counts : dict, optional
        :func:`count_ops`'s result, printed as :func:`format_operations`.

    Returns
    -------
    str

    Examples
    --------
    >>> th1, QP1 = sympy.symbols("th1 QP1")
    >>> print(latex_equations([("WI12", QP1 * sympy.sin(th1))]), end="")
    \\paragraph{Equations:}
    \\begin{align*}
    \\mathrm{WI12} &= \\mathrm{QP1} \\sin{\\left(\\mathrm{th1} \\right)}
    \\end{align*}
    """
    text = "\\paragraph{Equations:}\n\\begin{align*}\n" + " \\\\\n".join(latex_lines(rows)) + "\n\\end{align*}\n"
    if counts is not None:
        text += "\n\\noindent " + re.sub(r"'(.)'", r"`\1'", format_operations(counts)) + "\n"
    return text
