"""Rolling constraints of a wheeled robot: ``W(q) qd = 0``, and its mobility.

OpenSYMORO section IV-E (eq. 42); Campion and Chung, *Wheeled robots*.
Each wheel of a wheeled robot (``wheeled = true``) rolls without slipping or
sliding: two rows per wheel of ``W(q) qd = 0`` (:func:`wheel_constraints`,
shape (2 * wheels, n), frame 0; :func:`check_wheels` checks the geometry).
The joint rates split into ``r = rank W`` dependent ones and ``m = n - r``
independent ones (:func:`mobility`): the robot's degrees of freedom
(:attr:`Robot.dof <kanerobot.robot.description.Robot.dof>`).  The
derivation is in ``docs/theory/wheeled.md``; the dynamics projected on the
independent speeds are :mod:`kanerobot.dynamics.wheeled`'s.

This module is kinematics of the description alone (it imports neither the
description nor the dynamics), so that ``Robot.dof`` can count a wheeled
robot's degrees of freedom.

Examples
--------
>>> import kanerobot as kr
>>> c = wheel_constraints(kr.load(kr.frames_path("diffdrive")))
>>> len(c.labels), c.rank, mobility(c.robot)
(7, 5, 2)
"""

import dataclasses
from functools import lru_cache
from typing import Any

import numpy as np
import sympy

from kanerobot.errors import KaneRobotError
from kanerobot.robot.joints import Prismatic, Revolute
from kanerobot.robot.names import BASE

__all__ = ["ROW_KINDS", "WheelConstraints", "check_wheeled_robot", "check_wheels", "disc_contact", "disc_mobility", "disc_rows", "ground", "mobility",
           "wheel_constraints"]

#: Row kinds of W, per wheel: non-slipping (along t = a x n), non-sliding (along the axle a).
ROW_KINDS = ("rolling", "lateral")


def check_wheeled_robot(robot, what):
    """Raise unless ``robot`` is a wheeled robot whose models kanerobot handles (wheels, no loops, a fixed ground ...); ``what`` names the model."""
    if not robot.wheeled:
        raise KaneRobotError(f"{what} of {robot.name}: {robot.name} is not a wheeled robot (wheeled = false)")
    if not robot.wheels:
        raise KaneRobotError(
            f"{what} of {robot.name}: the robot is wheeled but describes no wheels: give its posture and its wheels "
            f"([[wheel]] tables, see docs/frames-format.md)"
        )
    if robot.loops:
        raise KaneRobotError(f"{what} of {robot.name}: a wheeled robot with closed loops is not handled")
    if robot.floating:
        raise KaneRobotError(f"{what} of {robot.name}: a wheeled base cannot also be floating")
    flexible = robot.flexible_joints
    if flexible:
        raise KaneRobotError(f"{what} of {robot.name}: flexible joints ({', '.join(flexible)}) on a wheeled base are not handled")
    moving = [key for key in ("W0", "WP0", "V0", "VP0") if any(sympy.sympify(v) != 0 for v in getattr(robot.base, key))]
    if moving:
        raise KaneRobotError(
            f"{what} of {robot.name}: the base (the ground) moves ({', '.join(moving)} not zero); wheels roll on a fixed ground"
        )


def ground(robot):
    """``(n, h)``: the upward vertical of the world in frame 0 and the height of O_0."""
    Z = sympy.Matrix(robot.base.Z)
    return sympy.Matrix(Z[2, :3]).T, Z[2, 3]


class GroundGeometry:
    """Frame origins and joint axes in frame 0, shared by the constraints and the checks."""

    def __init__(self, robot):
        from kanerobot.geometry import transform

        self.robot = robot
        self.cache = {}
        self.n, self.h = ground(robot)
        self._transform = transform

    def T(self, label):
        return self._transform(self.robot, BASE, label, cache=self.cache)

    def origin(self, label):
        return sympy.Matrix(self.T(label)[:3, 3])

    def axis(self, label):
        return sympy.Matrix(self.T(label)[:3, :3]) * sympy.Matrix(self.robot.frame(label).axis)

    def contact_columns(self, label, point):
        """``{joint: d v_point / d qd_joint}`` (3x1, frame 0) for the point ``point``
        (frame 0) moving with the link of frame ``label``."""
        out = {}
        for k in self.robot.root_path(label):
            frame = self.robot.frame(k)
            if isinstance(frame.joint, Revolute):
                out[k] = self.axis(k).cross(point - self.origin(k))
            elif isinstance(frame.joint, Prismatic):
                out[k] = self.axis(k)
        return out


def _random_values(symbols, rng):
    return {s: sympy.Float(rng.uniform(0.2, 0.7) if rng.random() < 0.5 else -rng.uniform(0.2, 0.7)) for s in symbols}


def _identically_zero(exprs, rng, positive=(), trials=3):
    """Whether every expression of ``exprs`` vanishes at ``trials`` random points
    (the symbols in ``positive`` drawn positive: lengths, radii)."""
    exprs = [sympy.sympify(e) for e in exprs]
    symbols = sorted(set().union(*(e.free_symbols for e in exprs)) if exprs else set(), key=str)
    if not symbols:
        return all(abs(complex(e)) < 1e-12 for e in exprs)
    for _ in range(trials):
        values = _random_values(symbols, rng)
        values.update({s: sympy.Float(rng.uniform(0.2, 0.7)) for s in symbols if s in positive})
        for e in exprs:
            value = complex(e.xreplace(values).evalf())
            if abs(value) > 1e-9:
                return False
    return True


def _show(expr):
    return str(sympy.trigsimp(sympy.sympify(expr)))


def check_wheels(robot):
    """Raise unless the wheels and the posture of ``robot`` have a geometry that rolls.

    Checked identically in the joint variables and the parameters (at
    random values, lengths and radii positive): the posture's x and y axes
    are horizontal and perpendicular and theta's is vertical; each wheel's
    axle is horizontal and its centre (its frame's origin) is at the height
    of its radius above the ground ``z = 0`` of the world; a steering or
    castor wheel's steering axis is vertical, through the wheel centre for
    a steering wheel, at the horizontal distance ``offset`` for a castor.

    Raises
    ------
    KaneRobotError
        Naming the robot, the wheel or joint and what to change.

    Examples
    --------
    >>> import kanerobot as kr
    >>> check_wheels(kr.load(kr.frames_path("diffdrive")))
    """
    check_wheeled_robot(robot, "the wheels")
    geo = GroundGeometry(robot)
    rng = np.random.default_rng(20240505)
    n = geo.n
    positive = {s for w in robot.wheels for s in (w.radius.free_symbols | w.offset.free_symbols)}
    name = robot.name
    x, y, th = robot.posture
    ex, ey, et = geo.axis(x), geo.axis(y), geo.axis(th)
    if not _identically_zero([n.dot(ex), n.dot(ey)], rng, positive):
        raise KaneRobotError(f"robot {name}: the posture's x and y joints ({x}, {y}) must slide along horizontal axes")
    if not _identically_zero([ex.dot(ey)], rng, positive):
        raise KaneRobotError(f"robot {name}: the posture's x and y joints ({x}, {y}) must slide along perpendicular axes")
    if not _identically_zero(list(n.cross(et)), rng, positive):
        raise KaneRobotError(f"robot {name}: the posture's theta joint {th} must turn about the vertical (z of the world)")
    for wheel in robot.wheels:
        j = wheel.joint
        a, p = geo.axis(j), geo.origin(j)
        s = wheel.steer
        if s is not None and not _identically_zero(list(n.cross(geo.axis(s))), rng, positive):
            raise KaneRobotError(f"robot {name}: wheel {j} is steered by joint {s}, whose axis is not vertical")
        if not _identically_zero([n.dot(a)], rng, positive):
            raise KaneRobotError(
                f"robot {name}: wheel {j} has its axle (the axis of joint {j}) not horizontal: a wheel rolls upright "
                f"on the ground z = 0 of the world"
            )
        height = n.dot(p) + geo.h
        if not _identically_zero([height - wheel.radius], rng, positive):
            raise KaneRobotError(
                f"robot {name}: wheel {j} has its centre (the origin of frame {j}) at height {_show(height)} above the "
                f"ground, not at its radius {wheel.radius}: place the wheel's frame at its centre, at height radius "
                f"above the ground z = 0 of the world"
            )
        if s is None:
            continue
        d = p - geo.origin(s)
        horizontal = d - n * n.dot(d)
        if wheel.kind == "steering" and not _identically_zero(list(horizontal), rng, positive):
            raise KaneRobotError(
                f"robot {name}: steering wheel {j} has its centre off its steering axis (joint {s}): a steering wheel "
                f"turns about a vertical axis through its centre; an off-centred wheel is a castor (give kind = "
                f"\"castor\" and its offset)"
            )
        if wheel.kind == "castor" and not _identically_zero([horizontal.dot(horizontal) - wheel.offset**2], rng, positive):
            raise KaneRobotError(
                f"robot {name}: castor wheel {j} has its centre at the horizontal distance "
                f"{_show(sympy.sqrt(horizontal.dot(horizontal)))} from its steering axis (joint {s}), not its offset "
                f"{wheel.offset}: make them agree"
            )


@dataclasses.dataclass(frozen=True)
class WheelConstraints:
    """The rolling constraints ``W(q) qd = 0`` of a wheeled robot (see docs/theory/wheeled.md).

    Attributes
    ----------
    robot : Robot
    labels : tuple of str
        The joints, columns of W (``robot.joint_labels``).
    rows : tuple of (str, str)
        Per row of W, the wheel's joint and ``"rolling"`` (non-slipping,
        along ``t = a x n``) or ``"lateral"`` (non-sliding, along the axle).
    W : sympy.Matrix, shape (2 * wheels, n)
        In the joint variables and the geometric parameters.
    rank : int
        Rank of W at a generic configuration.
    dependent, independent : tuple of str
        The dependent and the independent speeds (joint labels, in joint
        order); ``len(independent)`` is the robot's mobility.
    square_rows : tuple of int
        ``rank`` rows of W whose dependent columns form an invertible
        block at a generic configuration: the rows a symbolic solution uses.
    velocity : tuple of sympy.Symbol
        ``V<label>``: the vector ``v`` of :attr:`Wv_dot`.
    Wv_dot : sympy.Matrix, shape (2 * wheels, 1)
        ``(d (W v) / dq) qd``, bilinear in ``v`` and ``qd`` (the robot's
        ``QP``): ``Wdot qd`` at ``v = qd``, ``Wdot G`` column by column.
    """

    robot: Any  # a Robot, not imported (not even for the type checker): the description imports this module for Robot.dof
    labels: tuple
    rows: tuple
    W: sympy.Matrix
    rank: int
    dependent: tuple
    independent: tuple
    square_rows: tuple
    velocity: tuple
    Wv_dot: sympy.Matrix

    def columns(self, labels):
        """Column indices of joint ``labels``."""
        return [self.labels.index(label) for label in labels]

    @property
    def W_dependent(self):
        """``W`` on the dependent columns, all rows."""
        return self.W.extract(list(range(self.W.rows)), self.columns(self.dependent))

    @property
    def W_independent(self):
        return self.W.extract(list(range(self.W.rows)), self.columns(self.independent))

    @property
    def geometric_symbols(self):
        """Free symbols of W besides the joint variables."""
        joint = set(self.robot.joint_symbols)
        return {s for s in self.W.free_symbols if s not in joint}


def _preference(robot):
    """Joint labels in the order they are preferred as dependent speeds."""
    order = list(robot.posture)
    order += [label for w in robot.wheels if w.kind == "castor" for label in (w.steer, w.joint)]
    order += [w.joint for w in reversed(robot.wheels) if w.kind != "castor"]
    rest = [label for label in reversed(robot.joint_labels) if label not in order]
    return order + rest


def _numeric_rank(M, scale=None):
    if M.size == 0:
        return 0
    s = np.linalg.svd(M, compute_uv=False)
    scale = max(float(np.max(np.abs(M))), 1.0) if scale is None else scale
    return int(np.sum(s > 1e-9 * scale))


def _generic_values(constraints_W, robot, rng):
    """W at a random configuration and random (positive) parameters, as floats."""
    symbols = sorted(constraints_W.free_symbols, key=str)
    values = {s: rng.uniform(-np.pi, np.pi) if s in robot.joint_symbols else rng.uniform(0.2, 0.7) for s in symbols}
    f = sympy.lambdify(symbols, constraints_W, modules="numpy")
    return np.array(f(*[values[s] for s in symbols]), dtype=float)


@lru_cache(maxsize=32)
def wheel_constraints(robot, independent=None):
    """The rolling constraints of ``robot`` and its choice of independent speeds.

    Parameters
    ----------
    robot : Robot
        A wheeled robot with its posture and wheels (:func:`check_wheels`
        holds).
    independent : tuple of str, optional
        The independent speeds (joint labels); by default chosen as
        docs/theory/wheeled.md (*Independent speeds*) says.  They must leave
        a dependent block of full rank.

    Returns
    -------
    WheelConstraints

    Raises
    ------
    KaneRobotError
        For a geometry that does not roll (:func:`check_wheels`), or
        independent speeds that do not determine the others.

    Examples
    --------
    >>> import kanerobot as kr
    >>> c = wheel_constraints(kr.load(kr.frames_path("diffdrive")))
    >>> c.rows[:2], c.rank, c.independent
    ((('wr', 'rolling'), ('wr', 'lateral')), 5, ('wr', 'wl'))
    >>> print(c.W[0, :5])
    Matrix([[cos(th), sin(th), b/2, -R, 0]])
    """
    stem = robot.stems
    check_wheels(robot)
    geo = GroundGeometry(robot)
    labels = robot.joint_labels
    n = geo.n
    rows, W = [], []
    columns = {label: k for k, label in enumerate(labels)}
    for wheel in robot.wheels:
        j = wheel.joint
        a, p = geo.axis(j), geo.origin(j)
        # An upright disc on level ground: a rolling disc (disc_rows) whose contact point is right below its centre
        # (disc_contact's u is n when n . a = 0) and whose lateral direction is its axle (n x (a x n) = a); its
        # contact row vanishes (check_wheels: the centre at the radius's height).
        for kind, row in zip(ROW_KINDS, disc_rows(geo, j, p - wheel.radius * n, (a.cross(n), a), columns, len(labels), False)):
            rows.append((j, kind))
            W.append([_tidy(e) for e in row])
    W = sympy.Matrix(W)
    rng = np.random.default_rng(7)
    W0 = _generic_values(W, robot, rng)
    W1 = _generic_values(W, robot, rng)
    rank = max(_numeric_rank(W0), _numeric_rank(W1))
    if independent is None:
        dependent, independent = _default_speeds(robot, labels, W0, rank)
    else:
        dependent, independent = _given_speeds(robot, labels, W0, rank, independent)
    cols = [labels.index(d) for d in dependent]
    square: list[int] = []
    for r in range(W.rows):
        if len(square) == len(cols):
            break
        if _numeric_rank(W0[np.ix_(square + [r], cols)]) == len(square) + 1:
            square.append(r)
    qd = sympy.Matrix(robot.qd)
    V = tuple(sympy.Symbol(f"V{stem[label]}") for label in labels)
    Wv = W * sympy.Matrix(V)
    q = list(robot.q)
    Wv_dot = sympy.zeros(W.rows, 1)
    for m, qm in enumerate(q):
        if qd[m] != 0:
            Wv_dot += Wv.diff(qm) * qd[m]
    Wv_dot = Wv_dot.applyfunc(_tidy)
    return WheelConstraints(
        robot=robot,
        labels=labels,
        rows=tuple(rows),
        W=sympy.ImmutableMatrix(W),
        rank=rank,
        dependent=dependent,
        independent=independent,
        square_rows=tuple(square),
        velocity=V,
        Wv_dot=sympy.ImmutableMatrix(Wv_dot),
    )


def _default_speeds(robot, labels, W0, rank):
    """(dependent, independent) joint labels: the first ``rank`` labels in order of preference with an independent column of W."""
    chosen: list[str] = []
    for label in _preference(robot):
        if len(chosen) == rank:
            break
        trial = robot.joint_labels.index(label)
        cols = [labels.index(d) for d in chosen] + [trial]
        if _numeric_rank(W0[:, cols]) == len(cols):
            chosen.append(label)
    dependent = tuple(label for label in labels if label in chosen)
    independent = tuple(label for label in labels if label not in dependent)
    return dependent, independent


def _given_speeds(robot, labels, W0, rank, independent):
    """(dependent, independent) joint labels for the independent speeds asked for: joints, as many as needed, determining the others."""
    independent = tuple(str(label) for label in independent)
    unknown = [label for label in independent if label not in labels]
    if unknown:
        raise KaneRobotError(f"robot {robot.name}: independent speeds {', '.join(unknown)} are not joints")
    if len(independent) != len(labels) - rank:
        raise KaneRobotError(
            f"robot {robot.name} has {len(labels) - rank} independent speeds (n = {len(labels)} joints, rank W = "
            f"{rank}), not {len(independent)}"
        )
    dependent = tuple(label for label in labels if label not in independent)
    independent = tuple(label for label in labels if label in independent)
    cols = [labels.index(d) for d in dependent]
    if _numeric_rank(W0[:, cols]) < len(cols):
        raise KaneRobotError(
            f"robot {robot.name}: with independent speeds {', '.join(independent)}, the dependent speeds "
            f"{', '.join(dependent)} are not determined (their block of W is singular): choose others"
        )
    return dependent, independent



def _tidy(expr):
    """Expand and simplify trigonometric products of one W entry (entries are short)."""
    expr = sympy.expand(sympy.sympify(expr))
    if expr == 0 or sympy.count_ops(expr) > 400:
        return expr
    return sympy.trigsimp(expr)


def mobility(robot):
    """The number of independent speeds of a wheeled robot, ``n - rank W``.

    Examples
    --------
    >>> import kanerobot as kr
    >>> mobility(kr.load(kr.frames_path("diffdrive")))
    2
    """
    return len(wheel_constraints(robot).independent)


def disc_contact(geometry, label, radius, tyre, n):
    """``(P, (t, l, n))``: a rolling disc's contact point and its rows' directions, in frame 0.

    The disc is the link of the revolute joint ``label`` (its axis ``a`` the
    axle, its origin ``C`` the centre); ``P = C - r u - rt n`` with ``u`` the
    unit vector of ``n - (n . a) a`` (the rim's point nearest to the plane
    of unit normal ``n``, a torus's tyre ``rt`` below it), ``t = a x n``,
    ``l = n x t`` (:mod:`kanerobot.dynamics.rolling_disc`'s rows).
    """
    a, C = geometry.axis(label), geometry.origin(label)
    across = n - (n.T * a)[0] * a  # in the disc's plane, towards the ground's normal: |across| = |a x n|
    point = C - radius * across / sympy.sqrt((across.T * across)[0]) - tyre * n
    t = a.cross(n)
    return point, (t, n.cross(t), n)


def disc_mobility(robot, seed=0):
    """The number of independent speeds of a robot with rolling discs: its speeds less the rank of their rows.

    The rank is the generic one: the rows at a random configuration, random
    parameter values and, on a floating base, a random ground normal in
    frame 0 (the base's speeds add the columns ``d`` and ``P x d`` of the
    base's velocity and angular velocity, in frame 0).

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.robot.description import GeneralPlacement
    >>> I = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    >>> frames = [kr.Frame("x", "0", 1, 1, GeneralPlacement(R0=I, P=[0, 0, 0], axis=[1, 0, 0], q="x")),
    ...           kr.Frame("w", "x", 0, 1, GeneralPlacement(R0=I, P=[0, 0, "r"], axis=[0, 1, 0], q="w"))]
    >>> disc_mobility(kr.Robot.create("rolling", frames, discs=[("w", "r")]))   # x = -r w
    1
    """
    rng = np.random.default_rng(seed)
    geometry = GroundGeometry(robot)
    if robot.floating:
        n = sympy.Matrix(rng.normal(size=3))
        n = n / sympy.sqrt((n.T * n)[0])
    else:
        n = sympy.Matrix(robot.ground.normal)
    columns, nv = {}, 6 if robot.floating else 0  # each joint's first speed, after a floating base's six
    for label in robot.joint_labels:
        columns[label], nv = nv, nv + robot.frame(label).joint.nv
    rows = []
    for disc in robot.discs:
        point, directions = disc_contact(geometry, disc.joint, sympy.sympify(disc.radius), sympy.sympify(disc.tyre), n)
        rows += disc_rows(geometry, disc.joint, point, directions, columns, nv, robot.floating)
    J = sympy.Matrix(rows)
    values = _random_values(sorted(J.free_symbols, key=str), rng)
    J0 = np.array(J.xreplace(values).evalf(), dtype=float)
    return nv - (int(np.linalg.matrix_rank(J0, tol=1e-9 * max(1.0, np.abs(J0).max()))) if J0.size else 0)


def disc_rows(geometry, label, point, directions, columns, size, floating):
    """The rows ``d . v_P`` of J, one per direction ``d``, for the disc of joint ``label`` touching at ``point``.

    ``columns`` gives each joint's speed column among ``size`` speeds; on a
    floating base the first six are the base's twist in frame 0, which
    moves the point by ``v + w x P`` (columns ``d`` and ``P x d``).  The
    joints between the disc and the base are revolute or prismatic
    (:meth:`GroundGeometry.contact_columns`).
    """
    parts = geometry.contact_columns(label, point)
    rows = []
    for d in directions:
        row = [sympy.S.Zero] * size
        if floating:
            row[:6] = [*d, *point.cross(d)]
        for joint, column in parts.items():
            row[columns[joint]] = (d.T * column)[0]
        rows.append(row)
    return rows
