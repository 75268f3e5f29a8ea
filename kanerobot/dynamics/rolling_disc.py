"""Rolling discs: a rigid disc on any link of a tree, rolling without slipping on a plane.

A disc of radius ``r`` is the link of a revolute joint whose axis is its
axle and whose frame origin is its centre ``C``; it rolls on the plane of
unit normal ``n`` (frame 0, pointing out of the ground towards the disc) at
height ``h`` (the points ``p`` with ``n . p = h``: a slope is a tilted
``n``).  The disc may tilt: with ``a`` its axle in frame 0, its contact
point is the point of its rim nearest to the plane::

    P = C - r u,      u = (n - (n . a) a) / |n - (n . a) a|

(a torus wheel, its tyre of radius ``rt`` around the circle of radius
``r``: ``P = C - r u - rt n``, the lowest point of the tyre's tube there)

and rolling without slipping makes the velocity of the disc's material
point at P zero: three rows per disc of ``J(q) qd = 0``, along::

    t = a x n        (non-slipping: the rolling direction),
    l = n x t        (non-sliding: across the disc),
    n                (the contact: d/dt (n . P - h) = n . v_P, since P slides
                      along the rim tangent a x u, which lies in the plane).

The third row is the time derivative of the holonomic contact condition
``n . P(q) - h = 0`` (:attr:`RollingDisc.contact`): a configuration must
satisfy it (:meth:`RollingDisc.solve_contact` solves it for chosen
coordinates, a bicycle's rear-frame pitch); a row that vanishes
identically (a disc whose chain starts at its contact point: it touches by
construction) is dropped.  The rows are written unnormalised (``t`` and
``l`` have length ``|a x n|``): the same constraint wherever the disc is
not flat on the plane.

:class:`RollingDisc` is a :class:`~kanerobot.dynamics.constrained.VelocityConstraint`:
:class:`~kanerobot.dynamics.constrained.ConstrainedModel` composes it with
the tree's models of any engine (:func:`rolling_disc_model`).  The planar
chassis of :mod:`kanerobot.dynamics.wheeled` (upright wheels on a planar
posture) is the special case of vertical discs on a level plane, kept
there with its own, shorter rows.

Examples
--------
A disc on a planar chassis (x, y, heading, then the wheel's spin about a
horizontal axle at height 0.3): two rows, the normal one vanishing.

>>> import kanerobot as kr
>>> from kanerobot.robot.description import GeneralPlacement
>>> I = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
>>> frames = [kr.Frame("x", "0", 1, 1, GeneralPlacement(R0=I, P=[0, 0, 0], axis=[1, 0, 0], q="x")),
...           kr.Frame("y", "x", 1, 1, GeneralPlacement(R0=I, P=[0, 0, 0], axis=[0, 1, 0], q="y")),
...           kr.Frame("th", "y", 0, 1, GeneralPlacement(R0=I, P=[0, 0, 0], axis=[0, 0, 1], q="th")),
...           kr.Frame("w", "th", 0, 1, GeneralPlacement(R0=I, P=[0, 0, "r"], axis=[0, 1, 0], q="w"))]
>>> c = RollingDisc(kr.Robot.create("unicycle", frames), {"w": "r"}, independent=["th", "w"])
>>> c.J.shape, c.rows, c.dependent
((2, 4), (('w', 'rolling'), ('w', 'lateral')), ('x', 'y'))
"""

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np
import sympy

from kanerobot.dynamics.constrained import (
    ConstrainedModel,
    NumericConstraint,
    VelocityConstraint,
    batched_function,
    coordinate_rates,
    time_derivative,
)
from kanerobot.errors import KaneRobotError
from kanerobot.robot.joints import Prismatic, Revolute
from kanerobot.rolling import GroundGeometry

__all__ = ["ROWS", "RollingDisc", "rolling_disc_model"]

#: The rows of each disc, in order: non-slipping (along a x n), non-sliding (along n x (a x n)), contact (along n).
ROWS = ("rolling", "lateral", "contact")


def _radii(value):
    """``(radius, tyre)`` of a disc (tyre 0) or a torus wheel given as ``(radius, tyre)``."""
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise KaneRobotError(f"a torus wheel is (radius, tyre radius), got {value!r}")
        return sympy.sympify(value[0]), sympy.sympify(value[1])
    return sympy.sympify(value), sympy.S.Zero


def _vector(values, what):
    out = sympy.Matrix([sympy.sympify(v) for v in values])
    if out.shape != (3, 1):
        raise KaneRobotError(f"{what} needs 3 values, got {len(values)}")
    return out


@dataclasses.dataclass(frozen=True)
class _Disc:
    joint: str
    radius: sympy.Expr
    #: Its contact point in frame 0, and the three row directions (t, l, n).
    point: sympy.Matrix
    directions: tuple


class RollingDisc(VelocityConstraint):
    """Discs rolling without slipping on a plane, as a :class:`~kanerobot.dynamics.constrained.VelocityConstraint`.

    Parameters
    ----------
    robot : Robot
        A tree on a fixed base (frame 0 is the ground's frame).
    discs : mapping or sequence of (str, radius)
        The discs: the label of each disc's revolute joint (its axis the
        axle, its origin the centre) and its radius (number or expression),
        or ``(radius, tyre)`` for a torus wheel: the radius of the circle
        of its tyre's centres and the tyre's (tube's) radius.
    normal : sequence of 3, optional
        The plane's unit normal in frame 0, towards the discs (default
        ``(0, 0, 1)``); expressions allowed (a slope's angle).
    height : number or expression, optional
        ``n . p`` of the plane's points (default 0).
    independent : sequence of str, optional
        Joints whose speeds are independent; default: the dependent speeds
        are the first joints from the root whose columns of J are
        independent.

    Attributes
    ----------
    rows : tuple of (str, str)
        (disc joint, row kind of :data:`ROWS`) of each row of J kept.
    contact : dict str -> sympy.Expr
        ``n . P(q) - h`` of each disc whose contact row is kept: the
        holonomic conditions a configuration must satisfy (0).

    Raises
    ------
    KaneRobotError
        For a floating robot, a disc joint that is not revolute, a joint of
        several speeds between a disc and the ground, a normal
        that is not a unit vector, independent speeds that do not
        determine the others.
    """

    kind = "rolling discs"
    adjective = "rolling-disc"

    def __init__(self, robot, discs, normal=(0, 0, 1), height=0, independent=None):
        if robot.floating or robot.loops or robot.wheeled:
            raise KaneRobotError(f"rolling discs on {robot.name}: the tree must have a fixed base, no loop and no wheeled posture")
        self.robot = self.tree = robot
        self.normal = _vector(normal, "the plane's normal")
        self.height = sympy.sympify(height)
        norm = (self.normal.T * self.normal)[0]
        if not _vanishes([norm - 1], np.random.default_rng(0)):
            raise KaneRobotError(f"rolling discs on {robot.name}: the plane's normal {list(self.normal)} is not a unit vector")
        geometry = GroundGeometry(robot)
        items = discs.items() if isinstance(discs, Mapping) else discs
        self.discs = tuple(self._disc(geometry, str(label), *_radii(radius)) for label, radius in items)
        self.rows, rows, self.contact = self._rows(geometry)
        self.J = sympy.Matrix(rows) if rows else sympy.zeros(0, len(robot.qd))
        self.independent = self._independent(independent)
        self._contact_functions: dict[tuple, tuple] = {}

    def bias(self, v):
        """``Jdot(q, qd) v`` as ``sum_m d(J v)/dq_m dq_m/dt``: a derivative of each row times ``v``, not of every entry of J."""
        return time_derivative(self.tree, self.J * sympy.Matrix(v))

    def numeric(self, values):
        """:class:`~kanerobot.dynamics.constrained.NumericConstraint` with the parameters bound to ``values``.

        ``Jdot v`` is differentiated in its common subexpressions (forward
        mode along the straight-line program of ``J v``), not expanded: the
        expanded derivative of a tilted disc's rows is some 10^5 operations.
        """
        tree = self.tree
        q, qd = list(tree.q), list(tree.qd)
        v = [sympy.Symbol(f"kr_v{k}") for k in range(len(qd))]
        bound = {sympy.Symbol(str(k)): sympy.Float(x) for k, x in values.items()}
        J = batched_function(list(self.J), [q], bound)
        rates = {x: r for x, r in zip(tree.q, coordinate_rates(tree)) if r != 0}
        steps, rows = _rate_program([e.xreplace(bound) for e in self.J * sympy.Matrix(v)], rates)
        rate = _program_function(steps, rows, [q, v, qd])
        return NumericConstraint(lambda qs: J(qs).reshape(qs.shape[0], self.J.rows, len(qd)), rate)

    @property
    def symbols(self):
        """The parameter symbols of J (its derivative has no other)."""
        state = set(self.tree.joint_symbols) | set(self.tree.qd)
        return {x for e in self.J for x in sympy.sympify(e).free_symbols if x not in state}

    def _disc(self, geometry, label, radius, tyre):
        frame = self.robot.frame(label)
        if not isinstance(frame.joint, Revolute):
            raise KaneRobotError(f"rolling disc {label!r} of {self.robot.name}: its joint must be revolute (its axle)")
        for k in self.robot.root_path(label):
            joint = self.robot.frame(k).joint
            if self.robot.frame(k).is_joint and not isinstance(joint, Revolute | Prismatic):
                raise KaneRobotError(
                    f"rolling disc {label!r} of {self.robot.name}: joint {k!r} on its way to the ground is {joint.name}; "
                    f"the discs' rows take revolute and prismatic joints"
                )
        n, a, C = self.normal, geometry.axis(label), geometry.origin(label)
        across = n - (n.T * a)[0] * a  # in the disc's plane, towards the ground's normal: |across| = |a x n|
        point = C - radius * across / sympy.sqrt((across.T * across)[0]) - tyre * n
        t = a.cross(n)
        return _Disc(label, radius, point, (t, n.cross(t), n))

    def _rows(self, geometry):
        """The rows of J kept (a row vanishing identically is dropped) and the holonomic contact conditions."""
        columns = {label: k for k, label in enumerate(self.robot.joint_labels)}
        rng = np.random.default_rng(0)
        kept, rows, contact = [], [], {}
        for disc in self.discs:
            parts = geometry.contact_columns(disc.joint, disc.point)
            for kind, d in zip(ROWS, disc.directions):
                row = [0] * len(columns)
                for label, column in parts.items():
                    row[columns[label]] = (d.T * column)[0]
                if _vanishes(row, rng):
                    continue
                kept.append((disc.joint, kind))
                rows.append(row)
                if kind == "contact":
                    contact[disc.joint] = (self.normal.T * disc.point)[0] - self.height
        return tuple(kept), rows, contact

    def _independent(self, independent):
        labels = self.robot.joint_labels
        J0 = _generic(self.J, self.robot)
        rank = np.linalg.matrix_rank(J0) if J0.size else 0
        if independent is None:
            dependent: list[str] = []
            for k, label in enumerate(labels):
                cols = [labels.index(d) for d in dependent] + [k]
                if len(dependent) < rank and np.linalg.matrix_rank(J0[:, cols]) == len(cols):
                    dependent.append(label)
            return tuple(label for label in labels if label not in dependent)
        independent = tuple(str(label) for label in independent)
        unknown = [label for label in independent if label not in labels]
        if unknown:
            raise KaneRobotError(f"rolling discs on {self.robot.name}: independent speeds {', '.join(unknown)} are not joints")
        columns = [k for k, label in enumerate(labels) if label not in independent]
        if len(columns) != rank or np.linalg.matrix_rank(J0[:, columns]) < rank:
            raise KaneRobotError(
                f"rolling discs on {self.robot.name}: with independent speeds {', '.join(independent)}, the others are "
                f"not determined ({len(labels)} joints, {rank} independent constraints): choose {len(labels) - rank} others"
            )
        return tuple(label for label in labels if label in independent)

    def contact_function(self, values):
        """``f(qs) -> (N, discs)``: the contact conditions :attr:`contact` at a batch of configurations, parameters bound."""
        return batched_function(list(self.contact.values()), [list(self.robot.q)], values)

    def solve_contact(self, values, q, coordinates, tol=1e-14, iterations=50):
        """Configurations touching the plane: ``q`` with ``coordinates`` solved from :attr:`contact` (Newton).

        Parameters
        ----------
        values : dict
            The parameter values (by name or symbol).
        q : array_like, shape (n,) or (N, n)
            Every joint variable; those of ``coordinates`` are the initial guess.
        coordinates : sequence of str
            As many joints as contact conditions (a bicycle's pitch).

        Returns
        -------
        numpy.ndarray, shape (n,) or (N, n)

        Raises
        ------
        KaneRobotError
            When the iteration does not converge (no contact near the guess).
        """
        labels = list(self.robot.joint_labels)
        columns = [labels.index(str(c)) for c in coordinates]
        k = len(columns)
        if k != len(self.contact):
            raise KaneRobotError(f"{len(self.contact)} contact conditions need as many coordinates, got {list(coordinates)}")
        bound = {sympy.Symbol(str(name)): float(v) for name, v in values.items()}
        key = (tuple(columns), tuple(sorted((str(name), v) for name, v in bound.items())))
        if key not in self._contact_functions:
            exprs = list(self.contact.values())
            gradient = [e.diff(self.robot.q[c]) for e in exprs for c in columns]
            q_symbols = [list(self.robot.q)]
            self._contact_functions[key] = (batched_function(exprs, q_symbols, bound), batched_function(gradient, q_symbols, bound))
        f, df = self._contact_functions[key]
        x = np.array(q, dtype=float)
        single = x.ndim == 1
        x = np.atleast_2d(x)
        for _ in range(iterations):
            step = np.linalg.solve(df(x).reshape(-1, k, k), f(x)[..., None])[..., 0]
            x[:, columns] -= step
            if np.abs(step).max(initial=0.0) <= tol * max(1.0, np.abs(x[:, columns]).max(initial=0.0)):
                return x[0] if single else x
        raise KaneRobotError(
            f"{self.robot.name}: no contact found near q = {np.round(np.asarray(q), 6).tolist()} (residual {np.abs(f(x)).max():.3g})"
        )


def _rate_program(exprs, rates):
    """``(steps, outputs)``: the time derivative of ``exprs`` as a straight-line program.

    ``exprs`` are split into common subexpressions ``x_i = e_i``; each step's
    rate ``dx_i = sum_m de_i/dq_m rates[q_m] + sum_j de_i/dx_j dx_j`` follows
    it (forward mode), so the derivative costs a few times ``exprs``' own
    operations.  ``rates``: ``{q_m: dq_m/dt}``.
    """
    names = sympy.numbered_symbols("kr_x")
    replacements, reduced = sympy.cse(exprs, symbols=names)
    steps: list[tuple[sympy.Symbol, sympy.Expr]] = []
    dots: dict[sympy.Symbol, sympy.Symbol] = {}

    def rate(e):
        out = sympy.S.Zero
        for x in e.free_symbols:
            if x in rates:
                out += e.diff(x) * rates[x]
            elif x in dots:
                out += e.diff(x) * dots[x]
        return out

    for x, e in replacements:
        steps.append((x, e))
        dots[x] = sympy.Symbol(f"d{x.name}")
        steps.append((dots[x], rate(e)))
    return steps, [rate(e) for e in reduced]


def _program_function(steps, outputs, groups):
    """``f(*arrays) -> (N, len(outputs))`` running ``steps`` then ``outputs`` with numpy (as :func:`batched_function`)."""
    symbols = [s for group in groups for s in group]
    compiled = sympy.lambdify(symbols, outputs, modules="numpy", cse=lambda exprs: (steps, exprs))

    def function(*arrays):
        batch = arrays[0].shape[0]
        columns = [array[:, m] for array in arrays for m in range(array.shape[1])]
        out = compiled(*columns)
        return np.stack([np.broadcast_to(np.asarray(x, dtype=float), (batch,)) for x in out], axis=-1) if out else np.zeros((batch, 0))

    return function


def _generic(M, robot, seed=0):
    """M at a random configuration and random parameter values (positive: lengths and radii), numeric."""
    if not M.rows:
        return np.zeros((0, M.cols))
    rng = np.random.default_rng(seed)
    symbols = sorted(set().union(*(sympy.sympify(e).free_symbols for e in M)), key=str)
    values = {s: rng.uniform(0.2, 0.7) for s in symbols}
    values.update({q: rng.uniform(-0.5, 0.5) for q in robot.q if q in values})
    return np.array(M.xreplace({k: sympy.Float(v) for k, v in values.items()}).evalf(), dtype=float)


def _vanishes(exprs, rng, trials=3):
    """Whether every expression is zero at random points (parameters in (0.2, 0.7), as lengths and radii)."""
    exprs = [sympy.sympify(e) for e in exprs]
    symbols = sorted(set().union(*(e.free_symbols for e in exprs)), key=str)
    f = sympy.lambdify(symbols, exprs, modules="numpy")
    points = (rng.uniform(0.2, 0.7, len(symbols)) for _ in range(trials))
    return all(np.abs(np.asarray(f(*x), dtype=complex)).max(initial=0.0) <= 1e-10 for x in points)


def rolling_disc_model(robot: "object", discs: Mapping | Sequence, method: str = "newton-euler", normal=(0, 0, 1), height=0,
                       independent=None) -> ConstrainedModel:
    """The models of ``robot`` whose ``discs`` roll on a plane, by ``method``: the tree's projected on the independent speeds.

    Arguments as :class:`RollingDisc`; returns a
    :class:`~kanerobot.dynamics.constrained.ConstrainedModel` (``model.constraint``
    the :class:`RollingDisc`).
    """
    return ConstrainedModel(robot, method, RollingDisc(robot, discs, normal, height, independent))


class RobotDiscs(RollingDisc):
    """The rolling discs a robot declares (:attr:`~kanerobot.robot.description.Robot.discs`), as a :class:`RollingDisc`.

    ``RobotDiscs(robot)`` is ``RollingDisc(robot, discs, normal, height,
    independent)`` with the robot's :attr:`~kanerobot.robot.description.Robot.discs`
    (a torus wheel's tyre radius with its radius),
    :attr:`~kanerobot.robot.description.Robot.ground` and
    :attr:`~kanerobot.robot.description.Robot.independent` (none: chosen
    as :class:`RollingDisc` does): how :func:`kanerobot.derive` composes a
    robot with discs (:data:`kanerobot.dynamics.model.STRUCTURES`).

    Raises
    ------
    KaneRobotError
        As :class:`RollingDisc`; and for mimic or flexible joints beside the
        discs (not composed yet).

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.robot.description import GeneralPlacement
    >>> I = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    >>> frames = [kr.Frame("x", "0", 1, 1, GeneralPlacement(R0=I, P=[0, 0, 0], axis=[1, 0, 0], q="x")),
    ...           kr.Frame("w", "x", 0, 1, GeneralPlacement(R0=I, P=[0, 0, "r"], axis=[0, 1, 0], q="w"))]
    >>> c = RobotDiscs(kr.Robot.create("rolling", frames, discs=[("w", "r")]))
    >>> c.rows, c.independent
    ((('w', 'rolling'),), ('w',))
    """

    def __init__(self, robot):
        other = [what for what, applies in (("mimic joints", robot.mimics), ("flexible joints", robot.flexible_joints)) if applies]
        if other:
            raise KaneRobotError(f"{robot.name}: rolling discs with {other[0]} are not supported yet")
        discs = {d.joint: (d.radius, d.tyre) if d.tyre != 0 else d.radius for d in robot.discs}
        super().__init__(robot, discs, normal=list(robot.ground.normal), height=robot.ground.height,
                         independent=robot.independent or None)  # fmt: skip
