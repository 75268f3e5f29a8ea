"""Text reports in SYMORO's layout: the parameter tables that head every model.

SYMORO prints a model as a title, the robot's parameter tables, then
``Equations:`` with one assignment per line and ``*=*`` at the end (see
OpenSYMORO's RX90_*.txt).  :func:`robot_tables` gives the tables and
:func:`model_text` the whole report.
"""

from kanerobot.robot.expressions import format_expression
from kanerobot.robot.tables import latex_tables, latex_text, text_tables


def robot_tables(robot):
    """All parameter tables of ``robot``, separated by blank lines (:mod:`kanerobot.robot.tables`)."""
    return text_tables(robot)


#: The one-letter kinds of the ``Joints:`` line; other joint types are named in full.
JOINT_LETTERS = {"revolute": "R", "prismatic": "P"}


def _letter(joint):
    """``R`` (revolute) or ``P`` (prismatic), the name of another joint type."""
    return JOINT_LETTERS.get(joint.name, joint.name)


def degrees_of_freedom(robot):
    """``"<dof> degrees of freedom"``, and where ``robot.dof`` is not ``robot.nj``, why.

    Examples
    --------
    >>> import kanerobot as kr
    >>> degrees_of_freedom(kr.load(kr.frames_path("rx90")))
    '6 degrees of freedom'
    >>> degrees_of_freedom(kr.load(kr.frames_path("diffdrive")))
    '2 degrees of freedom (7 joints: the rolling constraints of the wheels fix 5 speeds)'
    """
    return f"{robot.dof} degrees of freedom" + (f" ({why_not_joints(robot)})" if robot.dof != robot.nj else "")


def why_not_joints(robot):
    """Why ``robot.dof`` differs from its ``robot.nj`` joints: what fixes speeds and what adds some ('' where nothing does)."""
    fixed, added = [], []
    if robot.wheeled and robot.wheels:
        fixed.append(f"the rolling constraints of the wheels fix {robot.nj - robot.dof} speeds")
    if robot.loops:
        fixed.append(f"the closed loops fix {len(robot.passive_joints)}")
    if robot.mimics:
        fixed.append(f"the mimic joints fix {len(robot.mimics)}")
    if robot.floating:
        added.append("the 6 of the floating base")
    if robot.flexible_joints:
        added.append(f"the motors of {_count(len(robot.flexible_joints), 'flexible joint')}")
    if not fixed and not added:
        return ""
    return _count(robot.nj, "joint") + "".join(f": {text}" for text in fixed) + "".join(f" and {text}" for text in added)


def _count(n, noun):
    return f"{n} {noun}{'s' if n != 1 else ''}"


def summary(robot):
    """A short description of the structure: type, counts, joints, loops."""
    lines = [
        f"Robot {robot.name}: {robot.structure}"
        + (", floating base" if robot.floating else "")
        + (", wheeled mobile base" if robot.wheeled else ""),
        f"NL = {robot.nl} links, NJ = {robot.nj} joints, NF = {robot.nf} frames, {degrees_of_freedom(robot)}",
        "Joints: " + ", ".join(f"{l} ({_letter(robot.frame(l).joint)}, {format_expression(robot.frame(l).q)})" for l in robot.joint_labels),
    ]
    if robot.loops:
        lines.append("Loops (cut joint = closing frame): " + ", ".join(f"{k} = {c}" for k, c in robot.loops))
        lines.append("Active joints: " + ", ".join(robot.active_joints) + "; passive: " + ", ".join(robot.passive_joints))
    if robot.mimics:
        lines.append("Mimic joints: " + ", ".join(
            f"{m.joint} = {' + '.join(f'{format_expression(k)} * {leader}' for leader, k in m.terms)} + {format_expression(m.offset)}"
            for m in robot.mimics))  # fmt: skip
    if robot.wheeled and robot.wheels:
        lines.append("Wheels: " + ", ".join(f"{w.joint} ({w.kind}, radius {format_expression(w.radius)})" for w in robot.wheels))
    if robot.geometric_parameters:
        lines.append("Geometric symbols: " + ", ".join(robot.geometric_parameters))
    return "\n".join(lines) + "\n"


def model_text(title, robot, equations, note=None):
    """A whole SYMORO-style report: title, tables, equations, ``*=*``.

    ``equations`` is the text of the ``Equations:`` section (assignments, one
    per line, with the operation count if any).
    """
    parts = [title + "\n", "\n", robot_tables(robot), "\n"]
    if note:
        parts += [note.rstrip("\n") + "\n", "\n"]
    parts += [equations.rstrip("\n") + "\n", "*=*\n"]
    return "".join(parts)


def model_latex(title, robot, equations, note=None):
    """:func:`model_text`'s report as a LaTeX document (``kanerobot model ... --lang latex``).

    Title, the parameter tables as ``tabular`` environments, the note, the
    ``Equations:`` (``equations``, LaTeX from
    :func:`kanerobot.symbolic.printing.latex_equations`) and ``*=*``; it
    needs only amsmath, so that any TeX installation compiles it
    (``pdflatex``).
    """
    heading = r" \\ ".join(latex_text(line) for line in title.splitlines())
    parts = [
        r"\documentclass[10pt]{article}",
        r"\usepackage{amsmath}",
        r"\allowdisplaybreaks",
        r"\setlength{\parindent}{0pt}",
        r"\begin{document}",
        rf"\section*{{{heading}}}",
        r"{\footnotesize",
        latex_tables(robot),
        "}",
    ]
    if note:
        parts += [r" \\".join(latex_text(line) for line in note.rstrip("\n").splitlines()), ""]
    parts += [equations.rstrip("\n"), "", r"*=*", r"\end{document}", ""]
    return "\n".join(parts)
