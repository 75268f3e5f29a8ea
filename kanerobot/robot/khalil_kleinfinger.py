"""Automatic conversion of a robot to Khalil-Kleinfinger frames.

A robot described with general frames (:class:`GeneralPlacement`: any
placement, any joint axis, as a URDF gives it) becomes SYMORO's compact form
(SYMORO+ eq. 1-b; Khalil and Kleinfinger 1986): each joint frame j gets

* z_j on joint j's axis, with the axis's direction (q keeps its sign);
* x_j on the common normal to z_j and the axis of j's first joint successor
  (its sign the one nearest to the original x_j).  Intersecting axes give
  d = 0; for parallel axes the normal through the point where x_{a(j)} meets
  z_j is taken, so that r_j = 0 (SYMORO's choice); a frame with no joint
  successor, or one on the same line, keeps x_j along the normal it comes
  in on (no offset on theta) and, at the end of a branch, its origin;
* gamma and b where x_{a(j)} is not the normal to z_j: the second and next
  branches of a tree, and joints hanging on a fixed frame or the base;
* the joint offset in theta (revolute) or r (prismatic), so that q = 0 is
  the configuration it was: ``theta = q + offset``.

Frame 0 (the base) is kept, and so is every fixed frame (sigma = 2): it keeps
its pose, written with the six parameters gamma, b, alpha, d, theta, r.  A
joint frame with no successor whose pose changed gets a fixed end frame at its
old pose, so that tool frames stay where they were: ``<label>e`` after it,
or, when the frames are numbered 1..N, N+1, N+2 ... after all the others
(SYMORO's numbering, which a .par needs).

Every link's parameters move exactly into its new frame: with the new frame
at rotation ``R`` and origin ``p`` in the old one, ::

    J' = R^T (J + hat(MS) hat(p) + hat(p) hat(MS) - M hat(p) hat(p)) R
    MS' = R^T (MS - M p)        F' = R^T F        C' = R^T (C - p x F)

(J about the origin, MS = M c, the external wrench (F, C) about the origin),
while IA, FV, FS stay with the joint.  A link whose ten inertial parameters
are SYMORO's default symbols (XX3 ... M3) keeps them, as the parameters of
its new frame: :attr:`Conversion.parameters` gives each as a function of
the original ones.

Rotations and axes must be numbers (lengths may be symbols, as in
frames/krang.toml).  The geometry is snapped within a tolerance (default
:data:`SNAP_TOLERANCE`, 1e-5; ``tolerance=``): angles near a multiple of
pi/2, rotation and axis entries near 0 or +-1, lengths near 0 (relative to
the robot's largest length) become exact, so that the models lose their
terms and a URDF's ``rpy="0 1.5708 0"`` gives alpha = pi/2.  Every snap
larger than the arithmetic's rounding (1e-12) is listed
(:attr:`Conversion.snapped`); inertias are only cleaned of that rounding.
Closed loops and wheeled robots are refused.

Examples
--------
Two joints about x of frame 0, the second 2 up the z axis: the first needs
gamma (x0 lies on its axis), the second is d = 2 along the normal, and an
end frame keeps the old axes of frame 2:

>>> import kanerobot as kr
>>> from kanerobot.robot.description import Frame, GeneralPlacement, Robot
>>> arm = Robot.create("bent", [
...     Frame("1", "0", 0, 1, GeneralPlacement([[1, 0, 0], [0, 1, 0], [0, 0, 1]], [0, 0, 0], [1, 0, 0], "q1")),
...     Frame("2", "1", 0, 1, GeneralPlacement([[1, 0, 0], [0, 1, 0], [0, 0, 1]], [0, 0, 2], [1, 0, 0], "q2"))])
>>> kk = kr.to_khalil_kleinfinger(arm)
>>> for f in kk.frames:
...     print(f.label, *(getattr(f.placement, key) for key in ("gamma", "b", "alpha", "d", "theta", "r")))
1 pi/2 0 pi/2 0 q1 + pi/2 0
2 0 0 0 2 q2 0
3 pi/2 0 pi/2 0 pi/2 0
"""

import contextlib
import contextvars
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy
import sympy

from kanerobot.errors import DescriptionError, KaneRobotError
from kanerobot.robot import joints
from kanerobot.robot.description import (
    BASE,
    DYNAMIC_NAMES,
    INERTIAL_NAMES,
    JOINT_NAMES,
    WRENCH_NAMES,
    Frame,
    GeneralPlacement,
    KKPlacement,
    Robot,
)

__all__ = ["Conversion", "khalil_kleinfinger_conversion", "to_khalil_kleinfinger"]

#: Relative size below which a number is the arithmetic's rounding of 0 (or of an integer):
#: inertias, and the geometry with ``tolerance=TOLERANCE``.
TOLERANCE = 1e-12
#: Default snapping tolerance of the geometry: angles within it (radians) of a
#: multiple of pi/2, rotation and axis entries within it of 0 or +-1, lengths
#: within it (relative to the robot's largest length) of 0 are made exact.  It
#: takes the roundings URDF files write for pi/2 (``1.5708``: 3.7e-6 off;
#: ``1.570796325``: 1.8e-9; ``1.570796327``: 2e-10) and the leftovers of
#: generated origins (``-1.9413e-11``).
SNAP_TOLERANCE = 1e-5
_EZ = sympy.Matrix([0, 0, 1])
_HALF_PI = sympy.pi / 2


@dataclass(frozen=True)
class Conversion:
    """A robot converted to Khalil-Kleinfinger frames, and what changed.

    Attributes
    ----------
    robot : Robot
        The converted robot.
    changes : mapping label -> 4x4 sympy.Matrix
        For every frame of the original robot, the constant pose of its new
        frame in the old one: ``T_new(q) = T_old(q) * changes[label]``
        (identity for the base, fixed frames and unchanged frames).
    parameters : mapping sympy.Symbol -> sympy.Expr
        Inertial symbols kept by name (SYMORO's defaults), now meaning the
        new frame's parameters, as functions of the original ones.
    branched : tuple of str
        Frames that need gamma or b (not the four serial parameters alone).
    general : tuple of str
        Frames left with a general placement (z on the joint axis all the
        same): parallel axes whose distance has a direction that depends on
        symbols (``P = [0, L1, -L2]``), which a common normal cannot follow.
    end_frames : tuple of str
        Fixed end frames added at the old pose of a terminal joint frame
        (``<label>e``; N+1, N+2 ... for frames numbered 1..N).
    tolerance : float
        The snapping tolerance used (see :func:`khalil_kleinfinger_conversion`).
    snapped : tuple of (str, float, sympy.Expr, float)
        Every number the tolerance snapped that the arithmetic's own
        rounding (:data:`TOLERANCE`) would have kept: ``(frame, value,
        exact value, change)``, as the conversion met them (a rotation's
        entries, angles, lengths).  The models differ from the original's
        by changes of that size.
    """

    robot: Robot
    changes: Mapping[str, sympy.Matrix]
    parameters: Mapping[sympy.Symbol, sympy.Expr] = field(default_factory=dict)
    branched: tuple[str, ...] = ()
    general: tuple[str, ...] = ()
    end_frames: tuple[str, ...] = ()
    tolerance: float = SNAP_TOLERANCE
    snapped: tuple[tuple[str, float, sympy.Expr, float], ...] = ()

    def without_end_frames(self) -> Robot:
        """The converted robot without the end frames (a .par holds no frame
        without a link but the loops' closing frames): same links, same models."""
        robot = self.robot
        return Robot.create(
            robot.name,
            [f for f in robot.frames if f.label not in self.end_frames],
            links=robot.links,
            dynamics=robot.dynamics,
            joint_parameters=robot.joint_parameters,
            base=robot.base,
            floating=robot.floating,
            limits=robot.limits,
            values=robot.values,
        )

    def summary(self) -> str:
        """One line saying what the conversion did, for a command line."""
        parts = [f"converted {self.robot.name} to Khalil-Kleinfinger frames"]
        parts.append(f"gamma/b needed by frames {', '.join(self.branched)}" if self.branched else "no frame needs gamma or b")
        if self.general:
            parts.append(f"frames {', '.join(self.general)} stay general frames (their normal's direction depends on symbols)")
        links = sorted({str(symbol)[2:] for symbol in self.parameters if str(symbol).startswith("XX")}, key=self.robot.labels.index)
        if links:
            parts.append(f"links {', '.join(links)} keep SYMORO's inertial symbols, now in their new frames")
        if self.end_frames:
            parts.append(f"end frames added at the old poses: {', '.join(self.end_frames)}")
        if self.snapped:
            parts.append(self.snapped_summary())
        return "; ".join(parts)

    def snapped_summary(self, most=8):
        """Which numbers the tolerance snapped, and by how much (the largest ``most`` of them, one per value)."""
        seen: dict[tuple[str, str, str], float] = {}  # (frame, value, snapped value) -> its largest change
        for where, value, exact, change in sorted(self.snapped, key=lambda item: -item[3]):
            seen.setdefault((where, f"{value:.10g}", str(exact)), change)
        items = [f"{where}: {value} -> {exact} ({change:.1e})" for (where, value, exact), change in seen.items()]
        more = f", and {len(items) - most} more" if len(items) > most else ""
        return (f"snapped to exact values within the tolerance {self.tolerance:g} (largest change "
                f"{max(item[3] for item in self.snapped):.1e}; --snap sets it): {', '.join(items[:most])}{more}")


# ------------------------------------------------------------------ numbers
@dataclass
class _Snapping:
    """The snapping tolerance of the conversion running, and what it snapped."""

    tolerance: float = TOLERANCE
    where: str = ""
    #: (frame, value, snapped value, change) of every snap larger than :data:`TOLERANCE` would make.
    log: list = field(default_factory=list)

    def record(self, value, snapped, change, scale):
        if change >= TOLERANCE * scale:
            self.log.append((self.where, value, snapped, change))


# The conversion's tolerance reaches the small helpers below without being
# passed through every one of them; a ContextVar keeps conversions in threads apart.
_SNAPPING: contextvars.ContextVar[_Snapping | None] = contextvars.ContextVar("kk_snapping", default=None)


def _snapping():
    """The running conversion's :class:`_Snapping` (a throw-away strict one outside a conversion)."""
    return _SNAPPING.get() or _Snapping()


def _snap_number(x, scale=1.0, tolerance=None):
    """``x`` as an exact 0 or integer when it rounds one, else the shortest float near it.

    ``tolerance`` (relative; default: the running conversion's) applies to
    ``scale`` for 0 and to ``max(1, |x|)`` for the integers."""
    snapping = _snapping()
    tol = snapping.tolerance if tolerance is None else tolerance
    if abs(x) < tol * scale:
        if x != 0:
            snapping.record(x, sympy.S.Zero, abs(x), scale)
        return sympy.S.Zero
    if abs(x - round(x)) < tol * max(1.0, abs(x)):
        snapping.record(x, sympy.Integer(round(x)), abs(x - round(x)), max(1.0, abs(x)))
        return sympy.Integer(round(x))
    short = float(f"{x:.15g}")
    # Floats computed from the file's numbers carry their last bits of
    # rounding: -0.42500000000000004 is the -0.425 the user wrote (15
    # digits change a float by an ulp or two at most).
    return sympy.Float(short if abs(short - x) <= 1e-15 * abs(x) else x)


def _snap(expr, scale=1.0, tolerance=None):
    """An expression with its float coefficients snapped (exact zeros and integers)."""
    expr = sympy.expand(sympy.sympify(expr))
    floats = expr.atoms(sympy.Float)
    if not floats:
        return expr
    return sympy.expand(expr.xreplace({f: _snap_number(float(f), scale, tolerance) for f in floats}))


def _angle(value):
    """An angle in (-pi, pi], exactly k pi/2 when within the tolerance of it."""
    k = round(value / (numpy.pi / 2))
    change = abs(value - k * numpy.pi / 2)
    if change < _snapping().tolerance * max(1.0, abs(value)):
        if change:
            _snapping().record(value, _HALF_PI * k, change, max(1.0, abs(value)))
        k = (k + 1) % 4 - 1  # -1, 0, 1, 2: angles in (-pi, pi]
        return _HALF_PI * k
    return sympy.Float(value)


def _unit(vector):
    """A numeric 3-vector made unit, its entries snapped, as a sympy column."""
    v = numpy.asarray(vector, dtype=float).reshape(3)
    v = v / numpy.linalg.norm(v)
    return sympy.Matrix([_snap_number(x) for x in v])


def _floats(vector):
    return numpy.array([float(x) for x in vector], dtype=float)


def _angle_between(a, b, axis):
    """Angle from unit vector ``a`` to unit vector ``b`` about ``axis`` (all perpendicular to it)."""
    a, b, e = _floats(a), _floats(b), _floats(axis)
    return _angle(float(numpy.arctan2(numpy.dot(numpy.cross(a, b), e), numpy.dot(a, b))))


# ------------------------------------------------------------------ lines
def _closest(a, u, b, w):
    """Parameters (t, s) of the closest points ``a + t u`` and ``b + s w`` of two non-parallel lines."""
    k = float(u.dot(w))
    du, dw = (b - a).dot(u), (b - a).dot(w)
    s = (dw - k * du) / (k * k - 1)
    return du + k * s, s


class _SymbolicNormal(Exception):
    """The common normal of two parallel axes has a direction that depends on symbols."""


def _direction(perp):
    """The numeric unit direction of a (possibly symbolic) vector known to be non-zero.

    A vector of symbols must keep its direction (up to sign) whatever the
    symbols' values: ``(0, L1, 0)`` does; ``(0, L1, -L2)`` does not, and
    would need a normal of symbolic direction (:class:`_SymbolicNormal`).
    """
    symbols = sorted(set().union(*(sympy.sympify(e).free_symbols for e in perp)), key=str)
    if not symbols:
        return _unit(_floats(perp))
    rng = numpy.random.default_rng(0)
    samples = []
    for _ in range(3):
        values = {s: sympy.Float(v) for s, v in zip(symbols, rng.uniform(0.5, 1.5, len(symbols)))}
        v = _floats([e.xreplace(values) for e in perp])
        samples.append(v / numpy.linalg.norm(v))
    if any(abs(abs(numpy.dot(samples[0], v)) - 1) > 1e-9 for v in samples[1:]):
        raise _SymbolicNormal
    return _unit(samples[0])


def _positive(n):
    """``n`` or ``-n``: the one with a positive x (else y) component, so that gamma is in (-pi/2, pi/2]."""
    x, y = float(n[0]), float(n[1])
    tol = _snapping().tolerance
    return -n if x < -tol or (abs(x) <= tol and y < 0) else n


def _normal(u, p, scale):
    """Common normal from the z axis of a frame to the line ``p + s u`` (in that frame).

    Returns ``(gamma, b, alpha, d, n, F)``: n the normal's unit direction, F
    its foot on the line.  Parallel lines: the normal through the origin
    (b = 0); the same line: n = x.
    """
    c = _EZ.cross(u)
    if numpy.linalg.norm(_floats(c)) > 1e-9:
        n = _positive(_unit(_floats(c)))
        b, s = _closest(sympy.zeros(3, 1), _EZ, p, u)
        foot = p + s * u
        d = n.dot(p)
        alpha = _angle(float(numpy.arctan2(float(c.dot(n)), float(u[2]))))
    else:
        perp = sympy.Matrix([_snap(p[0], scale), _snap(p[1], scale), 0])
        if perp == sympy.zeros(3, 1):
            n, d = sympy.Matrix([1, 0, 0]), sympy.S.Zero
        else:
            n = _positive(_direction(perp))
            d = n.dot(perp)
        b, foot = sympy.S.Zero, perp
        alpha = sympy.S.Zero if float(u[2]) > 0 else sympy.pi
    gamma = _angle(float(numpy.arctan2(float(n[1]), float(n[0]))))
    return gamma, _snap(b, scale), alpha, _snap(d, scale), n, foot


# ------------------------------------------------------------------ frames
def _pose_at_zero(frame):
    """``(R, p, e)`` of an old frame in its antecedent at joint variable 0: rotation (numbers), position, axis."""
    T = frame.transform()
    if frame.is_joint:
        T = T.xreplace({frame.q: 0})
    R = T[:3, :3]
    axis = frame.axis
    if not all(sympy.sympify(v).is_number for v in list(R) + list(axis)):
        raise DescriptionError(
            f"frame {frame.label}: its rotation or axis is symbolic; the conversion to Khalil-Kleinfinger frames "
            f"needs numbers there (lengths may be symbols)",
            key="R0",
            label=frame.label,
        )
    R = sympy.Matrix(3, 3, [_snap_number(float(v)) for v in R])
    return R, sympy.Matrix(T[:3, 3]), _unit(_floats(axis))


def _successor_line(robot, label, poses):
    """Axis line (point, direction) of the first joint successor of ``label``, in old frame ``label``; None if none."""
    for child in robot.children(label):
        frame = robot.frame(child)
        if frame.is_joint and child not in robot.cut_joints:
            R, p, e = poses[child]
            return p, R * e
    return None


def _choose(e, entry, incoming, successor, scale):
    """Pose (R, p) of the new frame of a joint of axis ``e`` in its old frame."""
    ref = sympy.Matrix([1, 0, 0]) - e[0] * e
    if numpy.linalg.norm(_floats(ref)) < 1e-6:
        ref = incoming
    origin, x = None, None
    if successor is not None:
        point, w = successor
        c = e.cross(w)
        if numpy.linalg.norm(_floats(c)) > 1e-9:
            t, _ = _closest(sympy.zeros(3, 1), e, point, w)
            origin, x = _snap(t, scale) * e, _unit(_floats(c))
        else:
            perp = (point - point.dot(e) * e).applyfunc(lambda v: _snap(v, scale))
            if perp != sympy.zeros(3, 1):
                # Parallel axes: the normal through the entry point, r = 0.
                with contextlib.suppress(_SymbolicNormal):  # the successor gets a general placement
                    origin, x = entry, _direction(perp)
        if x is not None and float(x.dot(ref)) < 0:
            x = -x
    if x is None:
        # No joint successor (or one on the same line): x along the normal
        # coming in (theta without offset); the origin stays at the end of a
        # branch, at the entry point otherwise.
        x = incoming
        origin = sympy.zeros(3, 1) if successor is None else entry
    y = e.cross(x)
    return sympy.Matrix.hstack(x, y, e), origin


def _parameters(R, p, scale):
    """KK parameters (gamma, b, alpha, d, theta, r) of a pose (R, p), and the normal n and its foot F."""
    u = R[:, 2]
    gamma, b, alpha, d, n, foot = _normal(u, p, scale)
    theta = _angle_between(n, R[:, 0], u)
    r = _snap((p - foot).dot(u), scale)
    return (gamma, b, alpha, d, theta, r), n, foot


def _placement(frame, R, p, scale):
    """Placement of ``frame``'s new pose (R, p) in its new antecedent: KK parameters,
    or a general placement (on the joint axis) where the common normal's
    direction depends on symbols."""
    try:
        (gamma, b, alpha, d, theta, r), _, _ = _parameters(R, p, scale)
    except _SymbolicNormal:
        P = p.applyfunc(lambda v: _snap(v, scale))
        return GeneralPlacement(R, P, [0, 0, 1], frame.q if frame.is_joint else 0)
    if frame.sigma == joints.REVOLUTE:
        theta = frame.q + theta
    elif frame.sigma == joints.PRISMATIC:
        r = frame.q + r
    return KKPlacement(gamma, b, alpha, d, theta, r)


def _perpendicular(e):
    """A unit vector perpendicular to ``e``: the old x axis made so, else the old y axis."""
    for helper in (sympy.Matrix([1, 0, 0]), sympy.Matrix([0, 1, 0])):
        v = helper - helper.dot(e) * e
        if numpy.linalg.norm(_floats(v)) > 0.5:
            return _unit(_floats(v))
    raise AssertionError("unreachable: x and y cannot both be near a unit vector")


def _new_pose(robot, frame, poses, inside, antecedent, scale):
    """Pose (R, p) of a joint's new frame in its old one.

    ``inside`` is the old frame's pose in the new antecedent, ``antecedent``
    the new antecedent's pose in the old one."""
    (Rin, pin), (Rc, pc) = inside, antecedent
    R, p, e = poses[frame.label]
    try:
        *_, n, foot = _normal(Rin * e, pin, scale)
        # Where the antecedent's normal meets the axis, and its direction, in the old frame.
        entry = (R.T * (Rc * foot + pc - p)).applyfunc(lambda v: _snap(v, scale))
        incoming = (R.T * Rc * n).applyfunc(lambda v: _snap_number(float(v)))
    except _SymbolicNormal:
        entry, incoming = sympy.zeros(3, 1), _perpendicular(e)
    return _choose(e, entry, incoming, _successor_line(robot, frame.label, poses), scale)


def _moved_inertia(values, R, p):
    """SYMORO's inertial parameters and wrench of a link in a frame at (R, p) of its own."""
    XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M = (values[k] for k in INERTIAL_NAMES[:10])
    J = sympy.Matrix([[XX, XY, XZ], [XY, YY, YZ], [XZ, YZ, ZZ]])
    MS = sympy.Matrix([MX, MY, MZ])
    hp, hms = joints.hat(p), joints.hat(MS)
    Jn = R.T * (J + hms * hp + hp * hms - M * hp * hp) * R
    MSn = R.T * (MS - M * p)
    F = sympy.Matrix([values[k] for k in WRENCH_NAMES[:3]])
    C = sympy.Matrix([values[k] for k in WRENCH_NAMES[3:]])
    Fn, Cn = R.T * F, R.T * (C - p.cross(F))
    moved = dict(zip(("XX", "XY", "XZ", "YY", "YZ", "ZZ"), (Jn[0, 0], Jn[0, 1], Jn[0, 2], Jn[1, 1], Jn[1, 2], Jn[2, 2])))
    moved.update(zip(("MX", "MY", "MZ"), MSn))
    moved["M"] = M
    moved.update(zip(WRENCH_NAMES, list(Fn) + list(Cn)))
    return moved


def _link_scale(values):
    numbers = [abs(float(v)) for v in values.values() if sympy.sympify(v).is_number]
    return max(numbers + [1e-300])


def _dynamics(robot, changes):
    """Every link's parameters in its new frame, and the kept symbols' meaning."""
    table, meaning = {}, {}
    for label in robot.links:
        values = dict(robot.dynamics[label])
        if label not in changes:
            table[label] = values
            continue
        T = changes[label]
        moved = _moved_inertia(values, T[:3, :3], T[:3, 3])
        scale = _link_scale(values)
        # Inertias are not rounded to the geometry's tolerance: only the
        # arithmetic's last bits go (a product of inertia 1e-8 of a 10 kg link is real).
        moved = {k: _snap(v, scale, TOLERANCE) for k, v in moved.items()}
        defaults = all(values[k] == sympy.Symbol(k + label) for k in INERTIAL_NAMES[:10])
        for key, value in moved.items():
            if defaults and key in INERTIAL_NAMES:
                # SYMORO's symbols name the parameters of the new frame.
                meaning[sympy.Symbol(key + label)] = value
            else:
                values[key] = value
        table[label] = values
    return table, meaning


def _scale(robot):
    numbers = [abs(float(v)) for f in robot.frames for v in f.transform()[:3, 3] if sympy.sympify(v).is_number]
    return max([n for n in numbers if n > 0] + [1.0])


def _end_label(label, taken, numbered):
    """``<label>e``, or the next number when the frames are numbered 1..N (SYMORO's
    way: fixed frames after the joints, so that the robot is still a .par)."""
    if numbered:
        return str(len(taken) + 1)
    name = f"{label}e"
    while name in taken:
        name += "e"
    return name


def khalil_kleinfinger_conversion(robot: Robot, tolerance: float | None = None) -> Conversion:
    """Convert ``robot`` to Khalil-Kleinfinger frames and say what changed.

    See the module's description for the rules.

    Parameters
    ----------
    robot : Robot
        Any serial or tree robot (floating base allowed) whose rotations
        and joint axes are numbers.
    tolerance : float, optional
        Snapping tolerance of the geometry (default :data:`SNAP_TOLERANCE`,
        1e-5): angles within it of a multiple of pi/2, rotation and axis
        entries within it of 0 or +-1, lengths within it (relative to the
        robot's largest length) of 0 become exact, so that a URDF's
        ``rpy="0 1.5708 0"`` gives alpha = pi/2 and d = 0 exactly.  Every
        such snap is listed in :attr:`Conversion.snapped`.
        :data:`TOLERANCE` (1e-12) keeps the numbers as they are but for
        the arithmetic's last bits.  Inertias are never rounded beyond
        :data:`TOLERANCE`.

    Returns
    -------
    Conversion

    Raises
    ------
    DescriptionError
        Closed loops, a wheeled robot, a symbolic rotation or axis, or
        parallel axes whose distance has a direction that depends on symbols.
    KaneRobotError
        A tolerance that is not a number in [0, 0.01].
    """
    tolerance = _checked_tolerance(tolerance)
    snapping = _Snapping(tolerance)
    token = _SNAPPING.set(snapping)
    try:
        conversion = _convert(robot)
    finally:
        _SNAPPING.reset(token)
    if robot.values:
        conversion = replace(conversion, robot=replace(conversion.robot, values=_moved_values(robot.values, conversion.parameters)))
    return replace(conversion, tolerance=tolerance, snapped=tuple(snapping.log))


def _moved_values(values, meaning):
    """``robot.values`` for the converted robot: the kept inertial symbols now
    name the new frames' parameters, so their numbers are those of their
    expressions in the original ones (a URDF's robot keeps numbers that mean
    what its symbols mean)."""
    out = dict(values)
    for name, expr in meaning.items():
        expr = sympy.sympify(expr)
        expr = expr.xreplace({s: sympy.Float(values[s.name]) for s in expr.free_symbols if s.name in values})
        if expr.free_symbols:
            out.pop(str(name), None)  # no number for it: the user gives one, as for any symbol
        else:
            out[str(name)] = float(expr)
    return MappingProxyType(out)


def _checked_tolerance(tolerance):
    if tolerance is None:
        return SNAP_TOLERANCE
    try:
        value = float(tolerance)
    except (TypeError, ValueError):
        value = float("nan")
    # Above 1e-2 a real angle (0.6 degree) or a real offset would be taken for a rounding.
    if not 0 <= value <= 1e-2:
        raise KaneRobotError(
            f"snapping tolerance {tolerance!r}: give a number between 0 and 0.01 (relative; e.g. 1e-6 "
            f"snaps 1.570796 to pi/2, 1e-12 keeps every number of the file)"
        )
    return value


def _convert(robot):
    if robot.loops:
        raise DescriptionError(
            f"{robot.name} has closed loops: the conversion to Khalil-Kleinfinger frames handles serial and tree "
            f"robots; write its frames in that form by hand",
            key="loops",
        )
    if robot.discs:
        raise DescriptionError(
            f"{robot.name} has rolling discs ({', '.join(d.joint for d in robot.discs)}): the conversion to "
            f"Khalil-Kleinfinger frames handles serial and tree robots; convert the tree, then declare its discs",
            key="discs",
        )
    if robot.wheeled:
        raise DescriptionError(
            f"{robot.name} is a wheeled robot: its posture joints and wheels are tied to their frames; "
            f"the conversion to Khalil-Kleinfinger frames handles serial and tree robots",
            key="wheeled",
        )
    scale = _scale(robot)
    poses = {}
    for f in robot.frames:
        _snapping().where = f.label
        poses[f.label] = _pose_at_zero(f)
    identity = (sympy.eye(3), sympy.zeros(3, 1))
    new = {BASE: identity}
    frames, branched, general, changes = [], [], [], {}
    end_frames: list[Frame] = []
    taken = set(robot.labels)
    numbered = robot.labels == tuple(str(n) for n in range(1, robot.nf + 1))
    for f in robot.frames:
        _snapping().where = f.label
        R, p, _e = poses[f.label]
        Rc, pc = new[f.antecedent]
        # The old frame in the new antecedent.
        Rin, pin = Rc.T * R, Rc.T * (p - pc)
        new[f.label] = _new_pose(robot, f, poses, (Rin, pin), (Rc, pc), scale) if f.is_joint else identity
        Rn, pn = new[f.label]
        placement = _placement(f, Rin * Rn, pin + Rin * pn, scale)
        if not isinstance(placement, KKPlacement):
            general.append(f.label)
        elif placement.gamma != 0 or placement.b != 0:
            branched.append(f.label)
        frames.append(Frame(f.label, f.antecedent, f.sigma, f.mu, placement, f.stem))
        changes[f.label] = joints.homogeneous(Rn, pn)
        if f.is_joint and not robot.children(f.label) and changes[f.label] != sympy.eye(4):
            label = _end_label(f.label, taken, numbered)
            taken.add(label)
            stem = f.stem + label[len(f.label):] if label.startswith(f.label) else None  # <stem>e: the frame's own names
            end = Frame(label, f.label, joints.FIXED, 0, KKPlacement(), stem)
            # Numbered frames: the end frames come after all the others.
            (end_frames if numbered else frames).append(replace(end, placement=_placement(end, Rn.T, -Rn.T * pn, scale)))
    frames += end_frames
    ends = [f.label for f in frames if f.label not in changes]
    dynamics, meaning = _dynamics(robot, {k: v for k, v in changes.items() if v != sympy.eye(4)})
    converted = Robot.create(
        robot.name,
        frames,
        links=robot.links,
        dynamics=dynamics,
        joint_parameters={label: dict(values) for label, values in robot.joint_parameters.items()},
        base=robot.base,
        floating=robot.floating,
        limits=robot.limits,
        values=robot.values,
        mimics=robot.mimics,  # the joint variables are kept: so are their couplings
    )
    return Conversion(converted, MappingProxyType(changes), MappingProxyType(meaning), tuple(branched), tuple(general), tuple(ends))


def to_khalil_kleinfinger(robot: Robot, tolerance: float | None = None) -> Robot:
    """``robot`` with Khalil-Kleinfinger frames: z on the joint axes, x on the common normals.

    The models are those of ``robot`` (the frames of its links moved as
    :func:`khalil_kleinfinger_conversion` reports), written with fewer
    terms.  A robot whose frames are all Khalil-Kleinfinger frames already
    is returned as it is.

    Parameters
    ----------
    robot : Robot
    tolerance : float, optional
        Snapping tolerance of the geometry: see
        :func:`khalil_kleinfinger_conversion` (default 1e-5, which takes a
        URDF's ``1.5708`` for pi/2).

    Returns
    -------
    Robot

    Raises
    ------
    DescriptionError, KaneRobotError
        See :func:`khalil_kleinfinger_conversion`.
    """
    if all(f.is_kk for f in robot.frames):
        return robot
    return khalil_kleinfinger_conversion(robot, tolerance).robot


#: Prefixes of the symbols named after their frame (SYMORO's ``XX3``, a URDF's ``PX<label>``, ``q_<label>``).
_LABELLED = DYNAMIC_NAMES + JOINT_NAMES + ("PX", "PY", "PZ")


def numbered(robot: Robot) -> Robot:
    """``robot`` with its frames labelled 1..N in their order, as a .par needs them.

    The symbols named after a frame follow it (``XXshoulder`` becomes
    ``XX1``, ``PZelbow`` ``PZ3``), and so do ``values`` and ``limits``; a
    URDF's joint variable ``q_<label>`` becomes SYMORO's ``th<n>``
    (revolute) or ``r<n>`` (prismatic).  A robot numbered already is
    returned as it is.

    Parameters
    ----------
    robot : Robot

    Returns
    -------
    Robot

    Examples
    --------
    >>> from kanerobot.robot.urdf import urdf_from_text
    >>> arm = numbered(urdf_from_text('''<robot name="p"><link name="b"/><link name="a"><inertial><mass value="2"/>
    ...   <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
    ...   <joint name="hinge" type="continuous"><parent link="b"/><child link="a"/><origin xyz="0 0 1"/></joint></robot>'''))
    >>> arm.labels, arm.frame("1").q, arm.dynamics["1"]["M"], arm.values["PZ1"]
    (('1',), th1, M1, 1.0)
    """
    labels = robot.labels
    number = {old: str(n) for n, old in enumerate(labels, start=1)}
    if all(old == new for old, new in number.items()):
        return robot
    number[BASE] = BASE
    names = {}
    for f in robot.frames:
        for prefix in _LABELLED:
            names[prefix + f.label] = prefix + number[f.label]
        if f.is_joint:
            names[str(f.q)] = ("th" if f.sigma == joints.REVOLUTE else "r") + number[f.label]
    symbols = set().union(*(sympy.sympify(v).free_symbols for table in (robot.dynamics, robot.joint_parameters)
                            for values in table.values() for v in values.values()))  # fmt: skip
    for f in robot.frames:
        symbols |= f.transform().free_symbols
    mapping = {s: sympy.Symbol(names[s.name]) for s in symbols if s.name in names}

    def table(rows):
        return {number[label]: {k: sympy.sympify(v).xreplace(mapping) for k, v in row.items()} for label, row in rows.items()}

    frames = []
    for f in robot.frames:
        p = f.placement
        if isinstance(p, KKPlacement):
            p = KKPlacement(*(sympy.sympify(getattr(p, k)).xreplace(mapping) for k in KKPlacement.KEYS))
        else:
            p = GeneralPlacement(p.R0.xreplace(mapping), p.P.xreplace(mapping), p.axis, sympy.sympify(p.q).xreplace(mapping))
        frames.append(Frame(number[f.label], number[f.antecedent], f.sigma, f.mu, p))
    return Robot.create(
        robot.name,
        frames,
        links=[number[label] for label in robot.links],
        dynamics=table(robot.dynamics),
        joint_parameters=table(robot.joint_parameters),
        base=robot.base,
        loops=[(number[cut], number[closing]) for cut, closing in robot.loops],
        floating=robot.floating,
        values={names.get(k, k): v for k, v in robot.values.items()},
        limits={number[label]: item for label, item in robot.limits.items()},
    )
