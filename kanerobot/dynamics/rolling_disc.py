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
the tree's models of any engine (:func:`rolling_disc_model`).  On a floating tree (a wheel-legged robot) the plane
is the world's, the rows take the free flyer's six speeds too (the contact
point moved by the base's twist) and rows that the others imply on the
plane are dropped (:class:`RollingDisc`).  :class:`RollingDiscModel`'s
numeric functions keep a simulation on the plane by projection (the
contact heights solved for one coordinate per disc at each evaluation).
The planar
chassis of :mod:`kanerobot.dynamics.wheeled` (upright wheels on a planar
posture) is the special case of upright discs on a level plane: its rows
are :func:`~kanerobot.rolling.disc_rows` at the contact point right below
each centre, along ``t`` and the axle (``l = a`` there), with no contact
row (it vanishes), so that its programs are those it always had.

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
    ConstrainedDynamics,
    ConstrainedModel,
    NumericConstraint,
    VelocityConstraint,
    batched_function,
    configuration,
    coordinate_rates,
    speed_labels,
    time_derivative,
    velocity,
    velocity_columns,
)
from kanerobot.errors import KaneRobotError
from kanerobot.robot.joints import Prismatic, Revolute
from kanerobot.robot.joints.quaternion import rotation_matrix
from kanerobot.rolling import GroundGeometry, disc_contact, disc_rows

__all__ = ["ROWS", "RobotDiscs", "RollingDisc", "RollingDiscDynamics", "RollingDiscModel", "robot_discs_model", "rolling_disc_model"]

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
    tyre: sympy.Expr
    #: Its contact point in frame 0, and the three row directions (t, l, n).
    point: sympy.Matrix
    directions: tuple


class RollingDisc(VelocityConstraint):
    """Discs rolling without slipping on a plane, as a :class:`~kanerobot.dynamics.constrained.VelocityConstraint`.

    **On a floating tree** (``robot.floating``: a wheel-legged robot) the
    plane is the world's and frame 0 is the base link: the rows are
    written in frame 0 with the plane's normal turned into it, ``n_0 =
    wR_0^T n`` (the base quaternion), and the base's six speeds (the free
    flyer's, pinocchio's: ``v`` of O_0 and ``w``, in frame 0) move the
    contact point by ``v + w x P_0``: columns ``d_0^T`` and ``(P_0 x d_0)^T``
    of each row direction ``d_0``.  The contact condition reads
    ``n . p_0 + n_0 . P_0 - h`` (``p_0 = (X0, Y0, Z0)``).

    **Redundant rows.** Rows that the others imply where the discs touch
    the plane (two coaxial discs' lateral rows: a level axle on flat
    ground) are dropped: the rank is taken at a generic configuration
    brought onto the plane (random joints, then Newton on every coordinate,
    least squares), and a row is kept when it raises the rank of the rows
    kept before it.  The dropped rows are :attr:`redundant`.  By default
    this is done on a floating tree only: a fixed-base tree keeps every row
    (as before; its numeric models solve the dependent block by its
    pseudo-inverse), unless ``independent_rows=True``.

    Parameters
    ----------
    robot : Robot
        A tree on a fixed base (frame 0 is the ground's frame) or on a
        floating base (the plane is in the world).
    discs : mapping or sequence of (str, radius)
        The discs: the label of each disc's revolute joint (its axis the
        axle, its origin the centre) and its radius (number or expression),
        or ``(radius, tyre)`` for a torus wheel: the radius of the circle
        of its tyre's centres and the tyre's (tube's) radius.
    normal : sequence of 3, optional
        The plane's unit normal in frame 0 (the world on a floating tree),
        towards the discs (default ``(0, 0, 1)``); expressions allowed (a slope's angle).
    height : number or expression, optional
        ``n . p`` of the plane's points (default 0).
    independent : sequence of str, optional
        Labels whose speeds are independent (``"0"``: a floating base's
        six); default: the dependent speeds are the first labels from the
        root (the base first) whose columns of J are independent.
    coordinates : sequence of str, optional
        The coordinates a simulation solves from :attr:`contact` to keep
        the discs on the plane (one per contact condition, joint labels or
        a base coordinate such as ``"Z0"``); default: for each disc, the
        nearest dependent joint towards the root that moves its contact
        point along the normal.
    independent_rows : bool, optional
        Drop the redundant rows (default: on a floating tree only).

    Attributes
    ----------
    rows : tuple of (str, str)
        (disc joint, row kind of :data:`ROWS`) of each row of J kept.
    redundant : tuple of (str, str)
        The rows dropped as implied by the others on the plane.
    contact : dict str -> sympy.Expr
        ``n . P(q) - h`` of each disc whose contact row is kept: the
        holonomic conditions a configuration must satisfy (0).

    Raises
    ------
    KaneRobotError
        For a tree with loops or a wheeled posture, a disc joint that is
        not revolute, a joint of several speeds between a disc and the
        base, a normal that is not a unit vector, independent speeds that
        do not determine the others.
    """

    kind = "rolling discs"
    adjective = "rolling-disc"

    def __init__(self, robot, discs, normal=(0, 0, 1), height=0, independent=None, coordinates=None, independent_rows=None):
        if robot.loops or robot.wheeled:
            raise KaneRobotError(f"rolling discs on {robot.name}: the tree must have no loop and no wheeled posture")
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
        self.J = sympy.Matrix(rows) if rows else sympy.zeros(0, len(velocity(robot)))
        self.rows, self.redundant = self.rows, ()
        if robot.floating if independent_rows is None else independent_rows:
            self.rows, self.redundant = self._independent_rows()
        self.independent = self._independent(independent)
        self.coordinates = self._coordinates(coordinates)
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
        q, qd = configuration(tree), list(velocity(tree))
        v = [sympy.Symbol(f"kr_v{k}") for k in range(len(qd))]
        bound = {sympy.Symbol(str(k)): sympy.Float(x) for k, x in values.items()}
        J = batched_function(list(self.J), [q], bound)
        rates = {x: r for x, r in zip(q, coordinate_rates(tree)) if r != 0}
        steps, rows = _rate_program([e.xreplace(bound) for e in self.J * sympy.Matrix(v)], rates)
        rate = _program_function(steps, rows, [q, v, qd])
        return NumericConstraint(lambda qs: J(qs).reshape(qs.shape[0], self.J.rows, len(qd)), rate)

    @property
    def symbols(self):
        """The parameter symbols of J (its derivative has no other)."""
        state = set(configuration(self.tree)) | set(velocity(self.tree))
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
        point, directions = disc_contact(geometry, label, radius, tyre, self._normal_in_base())
        return _Disc(label, radius, tyre, point, directions)

    def _normal_in_base(self):
        """The plane's normal in frame 0: ``wR_0^T n`` on a floating tree (the base quaternion), ``n`` on a fixed one."""
        if not self.robot.floating:
            return self.normal
        return rotation_matrix(configuration(self.robot)[3:7]).T * self.normal

    def _rows(self, geometry):
        """The rows of J (a row vanishing identically is dropped) and the holonomic contact conditions."""
        floating = self.robot.floating
        columns = {label: velocity_columns(self.robot, [label])[0] for label in self.robot.joint_labels}
        size = len(velocity(self.robot))
        origin = sympy.Matrix(configuration(self.robot)[:3]) if floating else sympy.zeros(3, 1)
        candidates = [(disc, kind, row) for disc in self.discs
                      for kind, row in zip(ROWS, disc_rows(geometry, disc.joint, disc.point, disc.directions, columns, size, floating))]  # fmt: skip
        kept, rows, contact = [], [], {}
        vanishing = _vanishing_rows([row for _, _, row in candidates], np.random.default_rng(0))
        for (disc, kind, row), zero in zip(candidates, vanishing):
            if zero:
                continue
            kept.append((disc.joint, kind))
            rows.append(row)
            if kind == "contact":
                contact[disc.joint] = (self.normal.T * origin)[0] + (disc.directions[2].T * disc.point)[0] - self.height
        return tuple(kept), rows, contact

    def _generic_configuration(self, values, seed=0):
        """A random configuration brought onto the plane (Newton on every coordinate, least squares), or None."""
        rng = np.random.default_rng(seed)
        symbols = configuration(self.tree)
        x = rng.uniform(-0.5, 0.5, len(symbols))
        if self.robot.floating:
            x[3:7] = rng.normal(size=4)
            x[3:7] /= np.linalg.norm(x[3:7])
        if not self.contact:
            return x
        f = batched_function([e.xreplace(values) for e in self.contact.values()], [symbols], {})
        step = 1e-7 * np.eye(len(symbols))
        for _ in range(60):
            r = f(x[None])[0]
            if np.abs(r).max() < 1e-13:
                return x
            df = (f(x + step) - f(x - step)).T / 2e-7  # central differences: Newton's fixed point is f = 0 all the same
            x = x - np.linalg.lstsq(df, r, rcond=None)[0]
            if self.robot.floating:
                x[3:7] /= np.linalg.norm(x[3:7])
        return None

    def _independent_rows(self):
        """``(rows kept, rows dropped)``: J's rows greedily, each kept when it raises the rank on the plane."""
        if not self.J.rows:
            return self.rows, ()
        rng = np.random.default_rng(0)
        state = set(configuration(self.tree)) | set(velocity(self.tree))
        free = sorted({x for e in list(self.J) + list(self.contact.values()) for x in sympy.sympify(e).free_symbols} - state, key=str)
        values = {s: sympy.Float(rng.uniform(0.2, 0.7)) for s in free}  # lengths and radii
        x = self._generic_configuration(values)
        if x is None:  # no touching configuration found near the draw: keep every row
            return self.rows, ()
        J0 = batched_function(list(self.J.xreplace(values)), [configuration(self.tree)], {})(x[None]).reshape(self.J.shape)
        scale = max(1.0, np.abs(J0).max())
        keep: list[int] = []
        for k in range(self.J.rows):
            if np.linalg.matrix_rank(J0[keep + [k]], tol=1e-9 * scale) == len(keep) + 1:
                keep.append(k)
        self._J0 = J0[keep]  # the independent speeds are chosen on the plane too
        if len(keep) == self.J.rows:
            return self.rows, ()
        self.J = self.J.extract(keep, list(range(self.J.cols)))
        dropped = tuple(self.rows[k] for k in range(len(self.rows)) if k not in keep)
        for label, kind in dropped:
            if kind == "contact":
                self.contact.pop(label)
        return tuple(self.rows[k] for k in keep), dropped

    def _independent(self, independent):
        labels = speed_labels(self.robot)
        J0 = getattr(self, "_J0", None)
        if J0 is None:
            J0 = _generic(self.J, self.robot)
        rank = np.linalg.matrix_rank(J0) if J0.size else 0
        nv = J0.shape[1]

        def full(chosen):
            cols = velocity_columns(self.robot, chosen)
            return np.linalg.matrix_rank(J0[:, cols]) == len(cols) if cols else True

        if independent is None:
            dependent: list[str] = []
            for label in labels:
                if len(velocity_columns(self.robot, dependent + [label])) <= rank and full(dependent + [label]):
                    dependent.append(label)
            if len(velocity_columns(self.robot, dependent)) < rank:  # a floating base's six go together: it may not fit
                raise KaneRobotError(
                    f"rolling discs on {self.robot.name}: the speeds are not determined by any choice of whole joints "
                    f"({rank} independent rows, the base's six speeds together): give independent= explicitly; a base "
                    f"link on two coaxial discs is declared with them (robot.with_discs, kr.load(..., floating=True, "
                    f"discs=...)), which gives it x, y, heading and pitch joints"
                )
            return tuple(label for label in labels if label not in dependent)
        independent = tuple(str(label) for label in independent)
        unknown = [label for label in independent if label not in labels]
        if unknown:
            raise KaneRobotError(f"rolling discs on {self.robot.name}: independent speeds {', '.join(unknown)} are not joints")
        columns = velocity_columns(self.robot, [label for label in labels if label not in independent])
        if len(columns) != rank or np.linalg.matrix_rank(J0[:, columns]) < rank:
            raise KaneRobotError(
                f"rolling discs on {self.robot.name}: with independent speeds {', '.join(independent)}, the others "
                f"({len(columns)} speeds) are not determined by the {rank} independent rows of the constraint "
                f"({nv} speeds): choose {nv - rank} independent speeds whose complement's columns of J are independent"
            )
        return tuple(label for label in labels if label in independent)

    def _coordinates(self, coordinates):
        """The coordinates solved from the contact conditions (``coordinates``, or one dependent joint per disc)."""
        names = [str(s) for s in configuration(self.robot)]
        if coordinates is not None:
            given = tuple(str(c) for c in coordinates)
            bad = [c for c in given if c not in names and c not in self.robot.joint_labels]
            if bad or len(given) != len(self.contact):
                raise KaneRobotError(
                    f"rolling discs on {self.robot.name}: coordinates {list(given)}: give {len(self.contact)} (one per contact "
                    f"condition), joint labels or base coordinates ({', '.join(names[:7]) if self.robot.floating else 'none'})"
                )
            return given
        out: list[str] = []
        for label, condition in self.contact.items():
            for k in reversed(self.robot.root_path(label)):
                frame = self.robot.frame(k)
                if (k != label and k in self.dependent and k not in out and frame.joint.nq == 1
                        and not _vanishes([condition.diff(frame.coordinates[0])], np.random.default_rng(0))):  # fmt: skip
                    out.append(k)
                    break
        return tuple(out) if len(out) == len(self.contact) else ()

    def _coordinate_index(self, name):
        """Index in :func:`configuration` of a joint label's coordinate or of a base coordinate's name."""
        names = [str(s) for s in configuration(self.robot)]
        if name in self.robot.joint_labels:
            return names.index(str(self.robot.frame(name).coordinates[0]))
        return names.index(name)

    def contact_function(self, values):
        """``f(qs) -> (N, discs)``: the contact conditions :attr:`contact` at a batch of configurations, parameters bound."""
        return batched_function(list(self.contact.values()), [configuration(self.robot)], values)

    def solve_contact(self, values, q, coordinates, tol=1e-14, iterations=50):
        """Configurations touching the plane: ``q`` with ``coordinates`` solved from :attr:`contact` (Newton).

        Parameters
        ----------
        values : dict
            The parameter values (by name or symbol).
        q : array_like, shape (n,) or (N, n)
            Every coordinate (:func:`~kanerobot.dynamics.constrained.configuration`:
            a floating base's seven first); those of ``coordinates`` are the initial guess.
        coordinates : sequence of str
            As many as contact conditions: joint labels (a bicycle's pitch,
            a leg's knee) or base coordinates (``"Z0"``).

        Returns
        -------
        numpy.ndarray, shape (n,) or (N, n)

        Raises
        ------
        KaneRobotError
            When the iteration does not converge (no contact near the guess).
        """
        columns = [self._coordinate_index(str(c)) for c in coordinates]
        k = len(columns)
        if k != len(self.contact):
            raise KaneRobotError(f"{len(self.contact)} contact conditions need as many coordinates, got {list(coordinates)}")
        bound = {sympy.Symbol(str(name)): float(v) for name, v in values.items()}
        key = (tuple(columns), tuple(sorted((str(name), v) for name, v in bound.items())))
        symbols = configuration(self.robot)
        if key not in self._contact_functions:
            exprs = list(self.contact.values())
            gradient = [e.diff(symbols[c]) for e in exprs for c in columns]
            self._contact_functions[key] = (batched_function(exprs, [symbols], bound), batched_function(gradient, [symbols], bound))
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


def _vanishing_rows(rows, rng, trials=3):
    """Whether each row (a list of expressions) is zero at random points: one compiled function for all."""
    if not rows:
        return []
    flat = [sympy.sympify(e) for row in rows for e in row]
    symbols = sorted(set().union(*(e.free_symbols for e in flat)), key=str)
    f = sympy.lambdify(symbols, flat, modules="numpy", cse=True)
    size = len(rows[0])
    largest = np.zeros(len(rows))
    for _ in range(trials):
        out = np.abs(np.array([complex(x) for x in f(*rng.uniform(0.2, 0.7, len(symbols)))])).reshape(len(rows), size)
        largest = np.maximum(largest, out.max(axis=1, initial=0.0))
    return list(largest <= 1e-10)


def _vanishes(exprs, rng, trials=3):
    """Whether every expression is zero at random points (parameters in (0.2, 0.7), as lengths and radii)."""
    exprs = [sympy.sympify(e) for e in exprs]
    symbols = sorted(set().union(*(e.free_symbols for e in exprs)), key=str)
    f = sympy.lambdify(symbols, exprs, modules="numpy")
    points = (rng.uniform(0.2, 0.7, len(symbols)) for _ in range(trials))
    return all(np.abs(np.asarray(f(*x), dtype=complex)).max(initial=0.0) <= 1e-10 for x in points)


#: Largest contact height a simulation leaves before it solves the contact again (:meth:`RollingDiscDynamics.on_plane`).
PROJECTION_TOL = 1e-13


class RollingDiscModel(ConstrainedModel):
    """The models of a tree whose discs roll on a plane (:class:`RollingDisc`): a
    :class:`~kanerobot.dynamics.constrained.ConstrainedModel` whose numeric
    functions (:class:`RollingDiscDynamics`) keep a simulation on the plane."""

    @property
    def dynamics(self):
        return RollingDiscDynamics

    def _rebuilt(self, robot):
        c = self.constraint
        if isinstance(c, RobotDiscs):  # the robot's own discs, with its values bound
            return type(self)(robot, self.method, RobotDiscs(robot))
        discs = [(d.joint, (d.radius, d.tyre)) for d in c.discs]
        return type(self)(robot, self.method, RollingDisc(robot, discs, list(c.normal), c.height, c.independent, c.coordinates or None))


class RollingDiscDynamics(ConstrainedDynamics):
    """Numeric dynamics of rolling discs: a simulation projects its configuration on the plane.

    The rolling rows hold exactly along a run (the speeds are ``G(q) qd_a``,
    J's null space); the contact heights, the holonomic part, are kept by
    **projection**, as closed loops are (:mod:`kanerobot.dynamics.closed_loop`):
    the model is evaluated at the integrated configuration whose
    :attr:`RollingDisc.coordinates` are solved from the contact conditions
    (Newton, :meth:`on_plane`) where its heights exceed
    :data:`PROJECTION_TOL`.  The integrated state itself drifts (the
    solver's error); a run's monitor ``contact_height`` records that drift
    (the largest ``|n . P - h|`` of the integrated configuration).
    """

    def _state_hooks(self):
        hooks = super()._state_hooks()
        if not self.model.constraint.coordinates:  # nothing to solve: the heights drift with the integration
            return hooks
        monitors = hooks.get("monitor_map")

        def monitor(q_raw, q, qd):
            out = dict(monitors(q_raw, q, qd)) if monitors is not None else {}
            out["contact_height"] = np.atleast_1d(self.contact_height(q_raw)) if len(q_raw) else np.zeros(0)
            return out

        return hooks | {"prepare_map": self.on_plane, "monitor_map": monitor}

    def contact_height(self, q):
        """Largest ``|n . P(q) - h|`` over the discs: a float for one configuration, (N,) for a batch."""
        qs, single = self._states(q, self.nc, "q")
        if "_contact" not in self.__dict__:
            self._contact = self.model.constraint.contact_function({sympy.Symbol(k): v for k, v in self.values_by_name.items()})
        out = np.abs(self._contact(qs)).max(axis=1, initial=0.0)
        return float(out[0]) if single else out

    def on_plane(self, q):
        """One configuration (nq,) with a floating base's quaternion normalised and, where the discs left
        the plane by more than :data:`PROJECTION_TOL`, the constraint's coordinates solved from the contact."""
        q = self.tree._prepared(q) if self.model.floating else np.array(q, dtype=float)
        c = self.model.constraint
        if not c.coordinates or self.contact_height(q) <= PROJECTION_TOL:
            return q
        return c.solve_contact(self.values_by_name, q, c.coordinates)


def rolling_disc_model(robot: "object", discs: Mapping | Sequence, method: str = "newton-euler", normal=(0, 0, 1), height=0,
                       independent=None, coordinates=None) -> RollingDiscModel:
    """The models of ``robot`` whose ``discs`` roll on a plane, by ``method``: the tree's projected on the independent speeds.

    Arguments as :class:`RollingDisc`; returns a :class:`RollingDiscModel`
    (a :class:`~kanerobot.dynamics.constrained.ConstrainedModel`,
    ``model.constraint`` the :class:`RollingDisc`).
    """
    return RollingDiscModel(robot, method, RollingDisc(robot, discs, normal, height, independent, coordinates))


class RobotDiscs(RollingDisc):
    """The rolling discs a robot declares (:attr:`~kanerobot.robot.description.Robot.discs`), as a :class:`RollingDisc`.

    ``RobotDiscs(robot)`` is ``RollingDisc(robot, discs, normal, height,
    independent, independent_rows=True)`` (redundant rows dropped on any
    tree, so that the dependent block is square and the symbolic programs
    exist: two coaxial discs' second lateral row) with the robot's :attr:`~kanerobot.robot.description.Robot.discs`
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
                         independent=robot.independent or None, independent_rows=True)  # fmt: skip


def robot_discs_model(robot, method):
    """:class:`RollingDiscModel` of a robot under its own discs (:class:`RobotDiscs`): :func:`kanerobot.derive`'s for a robot with discs."""
    return RollingDiscModel(robot, method, RobotDiscs(robot))
