"""The free-flyer root joint in programs: its symbols, its checks, gravity in frame 0.

The free flyer is a joint type (:data:`kanerobot.robot.joints.FREE_FLYER`,
with its ``(nq, nv) = (7, 6)`` and its integration); this module holds what
the programs of every engine need of it, in a module that imports none of
them: the quaternion, speed and acceleration symbols in pinocchio's
free-flyer convention, the names of its six generalized forces, the checks
of a floating robot and the gravity vector in frame 0.  Link 0's motion in
the recursions is :func:`kanerobot.dynamics.root.root_motion`.
"""

import sympy

from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import BASE, INERTIAL_NAMES, WRENCH_NAMES

__all__ = [
    "BASE_ACCELERATION",
    "BASE_FORCE_NAMES",
    "BASE_VELOCITY",
    "QUATERNION",
    "RIGID_INERTIAL_NAMES",
    "check_floating",
    "check_masses",
    "gravity_in_base",
    "parameter_names",
]

#: Orientation of the base, the unit quaternion of wR_0, pinocchio's order (x y z w).
QUATERNION = tuple(sympy.symbols("QX0 QY0 QZ0 QW0"))
#: Base speeds: velocity of O_0 and angular velocity of link 0, in frame 0.
BASE_VELOCITY = tuple(sympy.symbols("VX0 VY0 VZ0 WX0 WY0 WZ0"))
#: Time derivatives of the base speeds.
BASE_ACCELERATION = tuple(sympy.symbols("DVX0 DVY0 DVZ0 DWX0 DWY0 DWZ0"))
#: Suffixes of the six base entries of a generalized-force program's outputs
#: (``GAMFX0 .. GAMCZ0``): force then moment about O_0, in frame 0.
BASE_FORCE_NAMES = ("FX0", "FY0", "FZ0", "CX0", "CY0", "CZ0")

#: The inertial parameters of a rigid link, without the rotor inertia ``IA`` (XX .. M).
RIGID_INERTIAL_NAMES = tuple(name for name in INERTIAL_NAMES if name != "IA")


# ------------------------------------------------------------------ checks
def check_masses(robot, values=None):
    """Raise unless the floating base and the whole robot have a positive mass.

    A floating base of zero mass makes the inertia matrix singular (a base
    motion that the first joint undoes moves no mass), and a robot of zero
    total mass has no base acceleration at all.

    Parameters
    ----------
    robot : Robot
    values : mapping, optional
        ``{name: float}``: masses that are symbols are checked with these
        values; without it, only masses that are numbers in ``robot``.

    Raises
    ------
    KaneRobotError
        Naming the robot, the link and what to change.

    Examples
    --------
    >>> import kanerobot as kr
    >>> robot = kr.load(kr.frames_path("satellite"))
    >>> check_masses(robot)
    >>> check_masses(robot, {"M0": 0.0, "M1": 1.0, "M2": 1.0, "M3": 1.0})
    Traceback (most recent call last):
      ...
    kanerobot.errors.KaneRobotError: robot satellite: the floating base (link 0) has mass M0 = 0; a floating base needs a positive mass and inertia: give M0 > 0 (M of link 0 in the robot file, or its value)
    """
    symbols = {sympy.Symbol(str(k)): v for k, v in (values or {}).items()}
    masses = {}
    for label in robot.links:
        expr = sympy.sympify(robot.dynamics[label]["M"])
        value = sympy.sympify(expr.xreplace(symbols))
        if value.is_number:
            masses[label] = (expr, float(value))
    for label, (expr, value) in masses.items():
        mass = f"{expr} = {value:g}" if isinstance(expr, sympy.Symbol) else f"{value:g}"
        if label == BASE and value <= 0:
            name = expr if isinstance(expr, sympy.Symbol) else "M of link 0"
            raise KaneRobotError(
                f"robot {robot.name}: the floating base (link 0) has mass {mass}; a floating base needs a "
                f"positive mass and inertia: give {name} > 0 (M of link 0 in the robot file, or its value)"
            )
        if value < 0:
            raise KaneRobotError(f"robot {robot.name}: link {label} has a negative mass {mass}: masses must be >= 0")
    if len(masses) == len(robot.links):
        total = sum(value for _, value in masses.values())
        if total <= 0:
            raise KaneRobotError(
                f"robot {robot.name}: the total mass is {total:g}; a floating robot needs a positive mass: give its links positive M"
            )


def check_floating(robot, what):
    """Raise unless ``robot`` is a floating tree the floating-base algorithms handle.

    ``what`` names the model being derived, for the message (no floating base,
    closed loops, wheels, flexible joints, no link 0, no mass: see
    :func:`check_masses`).
    """
    if not robot.floating:
        raise KaneRobotError(
            f"{what} of {robot.name}: {robot.name} has no floating base (is_floating = 0); use kanerobot.derive for a fixed base"
        )
    if robot.loops:
        raise KaneRobotError(f"{what} of {robot.name}: a floating base with closed loops is not implemented yet")
    if robot.wheeled:
        raise KaneRobotError(f"{what} of {robot.name}: a floating base cannot also be a wheeled base")
    flexible = robot.flexible_joints
    if flexible:
        raise KaneRobotError(
            f"{what} of {robot.name}: flexible joints ({', '.join(flexible)}) on a floating base are not implemented yet"
        )
    if BASE not in robot.links:
        raise KaneRobotError(f"{what} of {robot.name}: the floating base must carry link 0 (give its dynamic parameters)")
    check_masses(robot)


def parameter_names(rotor, friction, wrench):
    """Names of the link parameters a floating-base program takes: the rigid
    inertial ones, then ``IA`` (``rotor``), ``FV, FS`` (``friction``) and the
    external wrench (``wrench``), each when asked for."""
    return RIGID_INERTIAL_NAMES + (("IA",) if rotor else ()) + (("FV", "FS") if friction else ()) + (WRENCH_NAMES if wrench else ())


def gravity_in_base(program, robot):
    """``0g = 0R_w wg``: gravity in frame 0, from the unit quaternion (u, w).

    ``t = 2 (wg x u)``, ``0g = wg + w t + t x u`` (the rotation by the
    conjugate quaternion); names ``GT{r}`` and ``G0{r}``.
    """
    G = sympy.Matrix(robot.base.G)
    u, w = sympy.Matrix(QUATERNION[:3]), QUATERNION[3]
    t = program.assign_matrix("GT{i}", 2 * G.cross(u))
    return program.assign_matrix("G0{i}", G + w * t + t.cross(u))
