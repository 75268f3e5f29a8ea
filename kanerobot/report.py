"""Text reports in SYMORO's layout: the parameter tables that head every model.

SYMORO prints a model as a title, the robot's parameter tables, then
``Equations:`` with one assignment per line and ``*=*`` at the end (see
OpenSYMORO's RX90_*.txt).  :func:`robot_tables` gives the tables and
:func:`model_text` the whole report.
"""

from kanerobot.robot.description import BASE_VECTOR_NAMES, INERTIAL_NAMES
from kanerobot.robot.expressions import format_expression, format_joint

_WIDTH = 8


def _row(cells):
    return "".join(str(c).ljust(_WIDTH - 1) + " " for c in cells).rstrip() + "\n"


def geometric_table(robot):
    """Khalil-Kleinfinger frames as SYMORO prints them; general frames as R0, P, axis, q."""
    out = []
    kk = [f for f in robot.frames if f.is_kk]
    general = [f for f in robot.frames if not f.is_kk]
    if kk:
        out.append("Geometric parameters\n")
        out.append(_row(["j", "ant", "sigma", "mu", "gamma", "b", "alpha", "d", "theta", "r"]))
        for f in kk:
            p = f.placement
            keys = ("gamma", "b", "alpha", "d", "theta", "r")
            values = [format_joint(f.q, f.offset) if key == f.joint_key else format_expression(getattr(p, key)) for key in keys]
            out.append(_row([f.label, f.antecedent, f.sigma, f.mu] + values))
    if general:
        if out:
            out.append("\n")
        out.append("Frames (rotation R0 row by row and position P at q = 0, joint axis e in the frame)\n")
        out.append(_row(["j", "ant", "sigma", "mu", "q", "axis", "P", "R0"]))
        for f in general:
            p = f.placement
            vec = lambda m: "[" + ", ".join(format_expression(v) for v in m) + "]"  # noqa: E731
            rows = "[" + "; ".join(", ".join(format_expression(v) for v in p.R0.row(i)) for i in range(3)) + "]"
            q = format_joint(f.q, f.offset) if f.is_joint else "-"
            out.append(_row([f.label, f.antecedent, f.sigma, f.mu, q, vec(p.axis), vec(p.P), rows]))
    return "".join(out)


def dynamic_table(robot):
    out = ["Dynamic inertia parameters\n", _row(["j"] + list(INERTIAL_NAMES))]
    for label in robot.links:
        d = robot.dynamics[label]
        out.append(_row([label] + [format_expression(d[k]) for k in INERTIAL_NAMES]))
    return "".join(out)


def joint_table(robot):
    keys = ["FX", "FY", "FZ", "CX", "CY", "CZ", "FS", "FV", "QP", "QDP", "GAM"]
    out = ["External forces and joint parameters\n", _row(["j"] + keys)]
    for f in robot.frames:
        if f.label not in robot.dynamics and not f.is_joint:
            continue
        d = robot.dynamics.get(f.label, {})
        jp = robot.joint_parameters.get(f.label, {})
        cells = [format_expression(d[k]) if k in d else "-" for k in keys[:8]]
        cells += [format_expression(jp[k]) if k in jp else "-" for k in keys[8:]]
        out.append(_row([f.label] + cells))
    flexible = [label for label in robot.joint_labels if robot.joint_parameters[label]["eta"] != 0]
    if flexible:
        out.append("Flexible joints: " + ", ".join(f"{l} (k = {format_expression(robot.joint_parameters[l]['k'])})" for l in flexible) + "\n")
    return "".join(out)


def base_table(robot):
    out = ["Base velocities parameters\n", _row(["axis"] + list(BASE_VECTOR_NAMES))]
    for i, axis in enumerate("XYZ"):
        out.append(_row([axis] + [format_expression(getattr(robot.base, k)[i]) for k in BASE_VECTOR_NAMES]))
    if robot.base.Z != robot.base.Z.eye(4):
        out.append("Z (frame 0 in the world frame): " + ", ".join(format_expression(v) for v in robot.base.Z) + "\n")
    return "".join(out)


def robot_tables(robot):
    """All parameter tables of ``robot``, separated by blank lines."""
    return "\n".join([geometric_table(robot), dynamic_table(robot), joint_table(robot), base_table(robot)])


def degrees_of_freedom(robot):
    """``robot.dof``, or for a robot on wheels its mobility ``n - rank W``
    (the wheel constraints come with its dynamics: :mod:`kanerobot.dynamics.wheeled`)."""
    if robot.wheeled and robot.wheels:
        from kanerobot.dynamics.wheeled import mobility

        return mobility(robot)
    return robot.dof


def summary(robot):
    """A short description of the structure: type, counts, joints, loops."""
    lines = [
        f"Robot {robot.name}: {robot.structure}"
        + (", floating base" if robot.floating else "")
        + (", wheeled mobile base" if robot.wheeled else ""),
        f"NL = {robot.nl} links, NJ = {robot.nj} joints, NF = {robot.nf} frames, {degrees_of_freedom(robot)} degrees of freedom",
        "Joints: " + ", ".join(f"{l} ({'RPF'[robot.frame(l).sigma]}, {format_expression(robot.frame(l).q)})" for l in robot.joint_labels),
    ]
    if robot.loops:
        lines.append("Loops (cut joint = closing frame): " + ", ".join(f"{k} = {c}" for k, c in robot.loops))
        lines.append("Active joints: " + ", ".join(robot.active_joints) + "; passive: " + ", ".join(robot.passive_joints))
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
