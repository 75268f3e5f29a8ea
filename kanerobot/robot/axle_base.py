"""A floating base on two coaxial discs: the free flyer replaced by the motions the ground leaves it.

A two-wheeled robot as its URDF gives it (the Krang lab's, a Segway's) is a
base link with two wheel joints on it.  Loaded with ``floating=True`` and its
wheels declared as discs, its base can only move as two coaxial discs rolling
on a plane let it: along the plane (x, y), about the plane's normal (the
heading) and about the axle (the pitch); its height and its roll are fixed by
the contacts.  :func:`on_axle` writes exactly that, in the description: the
free flyer of link 0 becomes a chain of four joints

======= ========== ============ =============================================
joint   on         kind         what
======= ========== ============ =============================================
x       0          prismatic    along ``e1``, a unit vector of the plane
y       x          prismatic    along ``e2 = n x e1``
heading y          revolute     about the plane's normal ``n``, its origin at
                                ``(h + r) n``: the axle's height above the plane
pitch   heading    revolute     about the axle ``a`` (in link 0's axes), its
                                origin the middle of the two discs' centres
base    pitch      fixed        link 0 itself, at ``-m`` (``m`` the axle's middle
                                in link 0): its body, and every frame link 0 carried
======= ========== ============ =============================================

massless but for ``base``, which carries link 0's body as the file gives it
(nothing is moved or re-expressed: the frames on link 0 hang on ``base`` with
their placements unchanged).  At ``x = y = heading = pitch = 0`` link 0 has
the orientation the file gives it and its axle lies in the plane's
directions: the discs touch the plane by construction, the holonomic contact
conditions vanish and only the rolling rows are left
(:class:`~kanerobot.dynamics.rolling_disc.RollingDisc`: three independent
rows, the two lateral ones being one).  This is what users used to do by
hand (re-parenting the wheels, moving the base's inertia, adding the posture
joints); the wheels' angles stay the file's, relative to the base link, so
each wheel motor is the generalized force on its own joint and the pitch has
none (:func:`kanerobot.control.actuation_matrix`).

The file must give the two discs equal radii, a common axle (both axes
along the line through both centres) lying in the plane's directions in
the file's pose; a floating base carrying discs that are not such a pair is
left to :class:`~kanerobot.dynamics.rolling_disc.RollingDisc` (a
wheel-legged robot's discs on its feet).
"""

from dataclasses import replace

import numpy as np
import sympy

from kanerobot.errors import DescriptionError
from kanerobot.robot.description import BASE, Frame, GeneralPlacement, KKPlacement, Robot, root_discs

__all__ = ["AXLE_JOINTS", "on_axle"]

#: The labels :func:`on_axle` gives the base's joints and its fixed frame (``base_`` prefixed while a label is taken).
AXLE_JOINTS = ("x", "y", "heading", "pitch", "base")


def on_axle(robot: Robot) -> Robot:
    """``robot``, a floating base on two coaxial discs, with its free flyer replaced by x, y, heading and pitch joints.

    See the module's table.  A robot that is not floating or whose base
    link does not carry two discs is returned as it is.  :func:`kanerobot.load`
    applies it to every robot it reads (the discs of the file, of
    ``discs=`` or of a side file); a robot built in Python calls it.

    Parameters
    ----------
    robot : Robot
        Floating (``robot.floating``), two of its :attr:`~Robot.discs` on
        link 0, with its :attr:`~Robot.ground`.

    Returns
    -------
    Robot
        Not floating: ``x, y, heading, pitch`` then a fixed frame ``base``
        (labels prefixed ``base_`` where the robot already has them) carrying
        link 0's body and every frame that hung on link 0.

    Raises
    ------
    DescriptionError
        ``key`` ``"disc:joint"``, ``label`` a disc: when the two discs'
        radii differ, their axes are not one axle, or the axle is not along
        the ground in the file's pose (with the remedy).

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.robot.description import Frame, GeneralPlacement
    >>> I = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    >>> wheels = [Frame(w, "0", 0, 1, GeneralPlacement(R0=I, P=[0, y, 0], axis=[0, 1, 0], q=f"phi_{w}"))
    ...           for w, y in (("right", -0.3), ("left", 0.3))]
    >>> segway = on_axle(kr.Robot.create("segway", wheels, floating=True, discs={"right": 0.25, "left": 0.25}))
    >>> segway.floating, segway.joint_labels
    (False, ('x', 'y', 'heading', 'pitch', 'right', 'left'))
    >>> segway.frame("heading").placement.P.T, segway.frame("pitch").axis.T
    (Matrix([[0, 0, 0.25]]), Matrix([[0, 1, 0]]))
    """
    if not robot.floating:
        return robot
    pair = root_discs(robot)
    if len(pair) != 2:
        return robot
    robot = _axle_bound(robot, pair)
    values = {sympy.Symbol(k): sympy.Float(v) for k, v in robot.values.items()}
    discs = [next(d for d in robot.discs if d.joint == label) for label in pair]
    centres, axles = zip(*(_centre_and_axle(robot, label) for label in pair))
    radius = discs[0].radius + discs[0].tyre
    normal = sympy.Matrix(robot.ground.normal)
    _check_pair(robot, pair, radius - discs[1].radius - discs[1].tyre, centres, axles, normal, values)
    middle = (centres[0] + centres[1]) / 2
    e1, e2 = _plane_axes(normal, values)
    labels = _labels(robot)
    x, y, heading, pitch, base = labels
    identity = sympy.eye(3)
    zero = sympy.zeros(3, 1)
    chain = [
        Frame(x, BASE, 1, 0, GeneralPlacement(identity, zero, e1, _variable(robot, x))),
        Frame(y, x, 1, 0, GeneralPlacement(identity, zero, e2, _variable(robot, y))),
        Frame(heading, y, 0, 0, GeneralPlacement(identity, (robot.ground.height + radius) * normal, normal, _variable(robot, heading))),
        Frame(pitch, heading, 0, 0, GeneralPlacement(identity, zero, axles[0], _variable(robot, pitch))),
        Frame(base, pitch, 2, 0, GeneralPlacement(identity, -middle, sympy.Matrix([0, 0, 1]))),
    ]
    frames = chain + [replace(f, antecedent=base) if f.antecedent == BASE else f for f in robot.frames]
    links = [base if label == BASE else label for label in robot.links]
    dynamics = {base if label == BASE else label: dict(table) for label, table in robot.dynamics.items()}
    joint_parameters = {label: dict(table) for label, table in robot.joint_parameters.items()}
    for label in (x, y, heading, pitch):  # the ground's motions: no motor, no friction, no spring
        joint_parameters[label] = {"QP": sympy.Symbol(f"QP{label}"), "QDP": sympy.Symbol(f"QDP{label}"),
                                   "GAM": sympy.S.Zero, "eta": sympy.S.Zero, "k": sympy.S.Zero}  # fmt: skip
    return Robot.create(robot.name, frames, links=links, dynamics=dynamics, joint_parameters=joint_parameters, base=robot.base,
                        values=robot.values, limits=robot.limits, discs=robot.discs, ground=robot.ground,
                        independent=robot.independent)  # fmt: skip


def _axle_bound(robot, pair):
    """``robot`` with the file's numbers in the placements of the discs and the fixed frames they hang by.

    The discs touch the plane by construction only if they are coaxial, which
    the numbers say and symbols (a URDF's ``PYwr``) do not: the axle's
    geometry is bound, so that the contact conditions vanish identically.
    """
    names = set()
    for label in pair:
        for k in robot.root_path(label):
            p = robot.frame(k).placement
            exprs = [p.R0, p.P, p.axis] if isinstance(p, GeneralPlacement) else [getattr(p, key) for key in KKPlacement.KEYS]
            names |= {str(x) for e in exprs for x in sympy.sympify(e).free_symbols}
    bound = {name: robot.values[name] for name in names if name in robot.values}
    return robot.subs(bound) if bound else robot


def _centre_and_axle(robot, label):
    """A disc's centre and unit axle in link 0's axes (the fixed frames' placements composed), exact."""
    T = sympy.eye(4)
    for k in robot.root_path(label):
        frame = robot.frame(k)
        T = T * frame.transform().subs({q: 0 for q in frame.coordinates if q is not None})
    axis = robot.frame(label).axis
    return sympy.Matrix(T[:3, 3]), sympy.Matrix(T[:3, :3] * axis)


def _number(expr, values):
    """``expr`` (a matrix or a scalar) with the file's values, as floats; None where a symbol has no value."""
    out = sympy.sympify(expr).xreplace(values)
    if getattr(out, "free_symbols", set()):
        return None
    return np.array(sympy.Matrix(out).evalf() if isinstance(out, sympy.MatrixBase) else [out.evalf()], dtype=float).reshape(-1)


def _check_pair(robot, pair, radius_difference, centres, axles, normal, values):
    """Equal radii, one axle through both centres, level on the plane: else one error naming the disc and the remedy."""
    numbers = [_number(e, values) for e in (radius_difference, centres[0], centres[1], axles[0], axles[1], normal)]
    if any(x is None for x in numbers):
        free = sorted({str(s) for e in (radius_difference, *centres, *axles, normal) for s in sympy.sympify(e).free_symbols
                       if s not in values})  # fmt: skip
        raise DescriptionError(f"discs {pair[0]} and {pair[1]} on the base link of {robot.name}: {', '.join(free)} need values to "
                               f"check that they share one axle: give them in the file", key="disc:joint", label=pair[0])  # fmt: skip
    dr, c0, c1, a0, a1, n = numbers
    scale = max(1.0, np.abs(c1 - c0).max())
    if abs(dr[0]) > 1e-9 * scale:
        problem = "their radii differ: the axle would tilt; give both the same radius"
    elif np.linalg.norm(np.cross(a0, a1)) > 1e-9 or np.linalg.norm(np.cross(a0, c1 - c0)) > 1e-9 * scale or np.linalg.norm(c1 - c0) < 1e-9:
        problem = (f"their axes {np.round(a0, 6).tolist()} and {np.round(a1, 6).tolist()} through {np.round(c0, 6).tolist()} and "
                   f"{np.round(c1, 6).tolist()} are not one axle: a base on two wheels needs coaxial wheels")  # fmt: skip
    elif abs(a0 @ n) > 1e-9:
        problem = (f"their axle {np.round(a0, 6).tolist()} is not along the ground (normal {np.round(n, 6).tolist()}) in the file's "
                   f"pose: give the base link a pose with the axle level")  # fmt: skip
    else:
        return
    raise DescriptionError(f"discs {pair[0]} and {pair[1]} on the base link of {robot.name}: {problem}", key="disc:joint", label=pair[0])


def _plane_axes(normal, values):
    """Two unit vectors of the plane, ``e1`` (link 0's x projected on it, else its y) and ``e2 = n x e1``."""
    n = _number(normal, values)
    for guess in (sympy.Matrix([1, 0, 0]), sympy.Matrix([0, 1, 0])):
        along = guess - (normal.T * guess)[0] * normal
        if n is None or np.linalg.norm(np.array(guess, dtype=float).ravel() - (n @ np.array(guess, dtype=float).ravel()) * n) > 0.1:
            e1 = sympy.simplify(along / sympy.sqrt((along.T * along)[0]))
            return e1, sympy.simplify(normal.cross(e1))
    raise AssertionError("unreachable: x or y is off a unit normal")


def _labels(robot):
    """:data:`AXLE_JOINTS`, each prefixed ``base_`` (again) while the robot has a frame or a symbol of that name."""
    taken = set(robot.labels) | {str(s) for s in robot.q}
    out = []
    for label in AXLE_JOINTS:
        while label in taken:
            label = "base_" + label
        taken.add(label)
        out.append(label)
    return tuple(out)


def _variable(robot, label):
    """The joint variable ``q_<label>`` (``q_`` repeated while the robot has that symbol)."""
    name = f"q_{label}"
    taken = {str(s) for s in robot.q} | set(robot.values)
    while name in taken:
        name = "q_" + name
    return sympy.Symbol(name)
