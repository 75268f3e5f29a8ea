"""Wheeled mobile robots: rolling constraints, and the tree model projected on the independent speeds.

OpenSYMORO section IV-E (eqs 42-43); Campion and Chung, *Wheeled robots*.
A wheeled robot (``wheeled = true``) is a tree of frames whose first three
joints are the planar posture of its chassis, ``xi = [x y theta]``
(:attr:`Robot.posture <kanerobot.robot.description.Robot.posture>`), and
whose :class:`~kanerobot.robot.description.Wheel` s are revolute joints
about their axles, the joint variable being the wheel's rotation.

Each wheel rolls without slipping or sliding: two rows per wheel of
``W(q) qd = 0`` (:func:`wheel_constraints`, shape (2 * wheels, n), frame 0;
:func:`check_wheels` checks the geometry).  The joint rates split into
``r = rank W`` dependent ones and ``m = n - r`` independent ones ``qd_a``
(:func:`mobility`; :attr:`WheeledModel.independent`,
:attr:`WheeledModel.dependent`), with ``qd = G(q) qd_a``.  The models are
the tree model of any engine (:func:`tree_robot`) projected on the
independent speeds (eq. 43)::

    A_a = G^T A G,    H_a = G^T (A g + H),    Q_a = G^T Q

:class:`WheeledDynamics` solves ``G`` numerically and raises
:class:`~kanerobot.errors.SingularityError` where the dependent block loses rank;
:func:`nonholonomic_kanes_method` gives sympy's own ``KanesMethod`` of the
constrained system, the independent path the tests compare with.

**State.**  ``q``: every joint variable, in ``robot.joint_labels`` order
(posture, wheels, steering and body joints: the configuration, which the
independent speeds alone do not determine); ``qd_a``, ``qdd_a``, ``tau_a``:
the independent speeds (:attr:`WheeledModel.independent`), their
derivatives and generalized forces.  A simulation state is ``x = (q,
qd_a)``, ``xdot = (G qd_a, qdd_a)`` (:meth:`WheeledDynamics.rhs`): the
constraints hold by construction along any motion.

The derivation (the wheels' description, the non-slipping and non-sliding
constraints, how the dependent speeds are chosen, how ``G`` is solved
numerically and symbolically, the projected dynamics of eq. 43 and Kane's
nonholonomic equations) is in ``docs/theory/wheeled.md``.

Examples
--------
>>> import numpy as np, kanerobot as kr
>>> from kanerobot.dynamics.parameters import random_parameters
>>> robot = kr.load(kr.frames_path("diffdrive"))
>>> model = WheeledModel(robot, "newton-euler")
>>> model.independent, model.dependent
(('wr', 'wl'), ('x', 'y', 'th', 'cs', 'cw'))
>>> fn = model.numeric(random_parameters(robot, np.random.default_rng(0), friction=False), backend="numpy")
>>> q = np.zeros(7)
>>> fn.velocities(q, [1.0, 1.0])[:3].round(6).tolist() == [round(fn.values_by_name["R"], 6), 0.0, 0.0]
True
>>> fn.mass_matrix(q).shape, fn.direct_dynamics(q, [1.0, 0.5], [0.0, 0.0]).shape
((2, 2), (2,))
"""

import dataclasses
from functools import lru_cache

import numpy as np
import sympy

from kanerobot.dynamics.constrained import (
    ConstrainedDynamics,
    ConstrainedModel,
    batched_function,
    label_name,
    project_outputs,
    splice,
)
from kanerobot.dynamics.dynamic_model import METHODS, bound_numeric
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import BASE, Robot
from kanerobot.robot.joints import PRISMATIC, REVOLUTE

__all__ = [
    "NonholonomicKane",
    "WheelConstraints",
    "WheeledDynamics",
    "WheeledModel",
    "adjugate_solver",
    "check_wheels",
    "mobility",
    "nonholonomic_kanes_method",
    "tree_robot",
    "wheel_constraints",
    "wheeled_program",
]

#: Models with a symbolic program (:meth:`WheeledModel.program`); the Coriolis
#: matrix and the direct model are numeric (:class:`WheeledDynamics`).
PROGRAMS = ("inverse_dynamics", "h", "gravity", "mass_matrix")
#: Row kinds of W, per wheel: non-slipping (along t = a x n), non-sliding (along the axle a).
ROW_KINDS = ("rolling", "lateral")


# ---------------------------------------------------------------- the tree
def tree_robot(robot):
    """The robot with its wheels free: the tree whose dynamics the engines give.

    The same frames, links (but the base 0: with a posture it is the
    ground), dynamic and joint parameters and base, without the wheeled
    flag, the wheels and the posture.

    Examples
    --------
    >>> import kanerobot as kr
    >>> tree = tree_robot(kr.load(kr.frames_path("diffdrive")))
    >>> tree.wheeled, tree.joint_labels, tree.links
    (False, ('x', 'y', 'th', 'wr', 'wl', 'cs', 'cw'), ('th', 'wr', 'wl', 'cs', 'cw'))
    """
    links = [label for label in robot.links if label != BASE]
    return Robot.create(
        robot.name,
        robot.frames,
        links=links,
        dynamics={label: dict(robot.dynamics[label]) for label in links},
        joint_parameters={label: dict(values) for label, values in robot.joint_parameters.items()},
        base=robot.base,
        loops=robot.loops,
    )


# ------------------------------------------------------------- constraints
def _check_robot(robot, what):
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
    flexible = [label for label in robot.joint_labels if robot.joint_parameters[label]["eta"] == 1]
    if flexible:
        raise KaneRobotError(f"{what} of {robot.name}: flexible joints ({', '.join(flexible)}) on a wheeled base are not handled")
    moving = [key for key in ("W0", "WP0", "V0", "VP0") if any(sympy.sympify(v) != 0 for v in getattr(robot.base, key))]
    if moving:
        raise KaneRobotError(
            f"{what} of {robot.name}: the base (the ground) moves ({', '.join(moving)} not zero); wheels roll on a fixed ground"
        )


def _ground(robot):
    """``(n, h)``: the upward vertical of the world in frame 0 and the height of O_0."""
    Z = sympy.Matrix(robot.base.Z)
    return sympy.Matrix(Z[2, :3]).T, Z[2, 3]


class _Geometry:
    """Frame origins and joint axes in frame 0, shared by the constraints and the checks."""

    def __init__(self, robot):
        from kanerobot.geometry import transform

        self.robot = robot
        self.cache = {}
        self.n, self.h = _ground(robot)
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
            if frame.sigma == REVOLUTE:
                out[k] = self.axis(k).cross(point - self.origin(k))
            elif frame.sigma == PRISMATIC:
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
    _check_robot(robot, "the wheels")
    geo = _Geometry(robot)
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

    robot: Robot
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
    geo = _Geometry(robot)
    labels = robot.joint_labels
    n = geo.n
    rows, W = [], []
    for wheel in robot.wheels:
        j = wheel.joint
        a, p = geo.axis(j), geo.origin(j)
        contact = p - wheel.radius * n
        t = a.cross(n)
        columns = geo.contact_columns(j, contact)
        for kind, direction in zip(ROW_KINDS, (t, a)):
            row = [sympy.S.Zero] * len(labels)
            for k, v in columns.items():
                row[labels.index(k)] = _tidy(direction.dot(v))
            rows.append((j, kind))
            W.append(row)
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
    square = []
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
    dependent = []
    for label in _preference(robot):
        if len(dependent) == rank:
            break
        trial = robot.joint_labels.index(label)
        cols = [labels.index(d) for d in dependent] + [trial]
        if _numeric_rank(W0[:, cols]) == len(cols):
            dependent.append(label)
    dependent = tuple(label for label in labels if label in dependent)
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


# ------------------------------------------------------------------ numeric
class WheeledModel(ConstrainedModel):
    """Dynamic models of a wheeled robot by one engine: the tree model projected
    on the independent speeds (see docs/theory/wheeled.md).

    Parameters
    ----------
    robot : Robot
        Wheeled, with its posture and wheels.
    method : {"newton-euler", "kane", "lagrange"}
        The engine of the tree model.
    independent : sequence of str, optional
        Independent speeds to use instead of the default choice.

    Attributes
    ----------
    robot : Robot
    method : str
    tree : DynamicModel
        The models of :func:`tree_robot` (programs over every joint).
    constraints : WheelConstraints
    independent, dependent : tuple of str
        Joint labels of the independent speeds ``qd_a`` and of the others.
    q, qd, qdd, tau : list of sympy.Expr
        The program state: every joint variable; ``QP``, ``QDP``, ``GAM`` of
        the independent speeds.

    Examples
    --------
    >>> import kanerobot as kr
    >>> model = WheeledModel(kr.load(kr.frames_path("krang_wheeled")), "newton-euler")
    >>> len(model.q), model.independent[:4], model.dof
    (22, ('wr', 'wl', '1', '2'), 19)
    """

    programs = PROGRAMS

    def __init__(self, robot, method="newton-euler", independent=None):
        if method not in METHODS:
            raise KaneRobotError(f"unknown method {method!r}: available are {', '.join(METHODS)}")
        _check_robot(robot, "the wheeled dynamic model")
        self.constraints = wheel_constraints(robot, None if independent is None else tuple(independent))
        super().__init__(robot, method, tree_robot(robot), self.constraints.independent)
        self.dependent = self.constraints.dependent

    def _build(self, name):
        return wheeled_program(self, name)

    @property
    def parameters(self):
        """Names of the tree models' parameters, the symbols of W and those of
        the potential energy (geometry, masses, first moments, gravity), in the
        robot's order (:meth:`~kanerobot.robot.description.Robot.parameter_order`)."""
        names = set(self.tree.parameters) | {str(s) for s in self.constraints.geometric_symbols}
        names |= set(self._potential_symbols())
        return self.robot.parameter_order(names)

    def _potential_symbols(self):
        robot = self.tree.robot
        names = set(robot.geometric_parameters)
        for label in robot.links:
            for key in ("M", "MX", "MY", "MZ"):
                names |= {str(s) for s in sympy.sympify(robot.dynamics[label][key]).free_symbols}
        for g in robot.base.G:
            names |= {str(s) for s in sympy.sympify(g).free_symbols}
        return names

    @property
    def robot_symbol_names(self):
        return set(self.tree.robot_symbol_names) | {str(s) for s in self.constraints.geometric_symbols}

    def numeric(self, values, backend="auto", physical=True, check=True, bind=False):
        """Numeric functions with the parameters bound to ``values`` ({name: float}).

        ``backend`` is that of the tree model (``"auto"``, ``"c"`` or ``"numpy"``),
        ``physical`` and ``check`` as for
        :meth:`kanerobot.dynamics.model.DynamicModel.numeric`.

        Returns
        -------
        WheeledDynamics
        """
        if bind:  # the numbers folded into the code: DynamicModel.numeric's bind
            return bound_numeric(self, values, self._rebuilt, backend=backend, physical=physical, check=check)
        return WheeledDynamics(self, values, backend=backend, physical=physical, check=check)

    @property
    def state_space(self):
        """The constrained :class:`~kanerobot.state_space.StateSpace` of a wheeled base."""
        return dataclasses.replace(super().state_space, kind="wheeled base", adjective="wheeled")

    def _rebuilt(self, robot):
        """The model of this kind (method, options) of another robot (``numeric(..., bind=True)``'s)."""
        return type(self)(robot, self.method, independent=self.constraints.independent)

    # ------------------------------------------------------------ Kane
    @property
    def nonholonomic_kane(self):
        """The :class:`NonholonomicKane` of a Kane model: sympy's ``KanesMethod``
        with ``u_dependent`` and ``velocity_constraints`` on the Kane engine's
        frames, bodies and loads (:func:`nonholonomic_kanes_method`, build
        ``"system"``), built on first use (seconds; about 17 s for Krang)."""
        if self.method != "kane":
            raise KaneRobotError(f"this model was derived by {self.method}: use method='kane'")
        if not hasattr(self, "_nonholonomic"):
            self._nonholonomic = nonholonomic_kanes_method(
                self.robot, build="system", independent=self.independent, system=self.tree.kane_system
            )
        return self._nonholonomic

    @property
    def kanes_method(self):
        """sympy's ``KanesMethod`` of the constrained system (method ``"kane"``)."""
        return self.nonholonomic_kane.kanes_method

    @property
    def bodies(self):
        return self.nonholonomic_kane.bodies

    @property
    def loads(self):
        return self.nonholonomic_kane.loads

    @property
    def frames(self):
        return self.nonholonomic_kane.frames


class WheeledDynamics(ConstrainedDynamics):
    """Numeric dynamics of a wheeled robot with bound parameters.

    The projection on the independent speeds is
    :class:`~kanerobot.dynamics.constrained.ConstrainedDynamics`'s with
    ``J = W`` the rolling constraints; this class adds W, the constraint
    residual and the energies.  Every function takes one state or a batch:
    ``q`` of shape (n,) or (N, n), every joint variable in
    ``robot.joint_labels`` order; ``qd_a``, ``qdd_a``, ``tau_a`` of the
    independent speeds, (m,) or (N, m) (:attr:`WheeledModel.independent`);
    ``qd`` (every joint rate) (n,) or (N, n).

    Raises
    ------
    SingularityError
        Where the independent speeds do not determine the others.
    """

    def __init__(self, model, values, backend="auto", physical=True, check=True):
        super().__init__(model, values, backend=backend, physical=physical, check=check)
        c = model.constraints
        self.constraints = c
        q = list(self.robot.q)
        qd = list(self.robot.qd)
        self._W = batched_function(list(c.W), [q], self.bound)
        self._Wv_dot = batched_function(list(c.Wv_dot), [q, list(c.velocity), qd], self.bound)
        self._potential = self._potential_function(self.bound)

    def _constraint_matrix(self, qs):
        return self._W(qs).reshape(qs.shape[0], -1, self.n)

    def _constraint_rate(self, qs, v, qd):
        return self._Wv_dot(qs, v, qd)

    def _potential_function(self, bound):
        """V(q) = -G . sum_j (M_j 0P_j + 0R_j MS_j), the frames composed numerically."""
        robot = self.model.tree.robot
        q = list(robot.q)
        transforms = {}
        for frame in robot.frames:
            transforms[frame.label] = batched_function(list(sympy.Matrix(frame.transform())[:3, :]), [q], bound)
        # Gravity and the positions are both in frame 0: Z does not enter.
        G = np.array([float(sympy.sympify(g).xreplace(bound)) for g in robot.base.G])
        links = {}
        for label in robot.links:
            d = robot.dynamics[label]
            M = float(sympy.sympify(d["M"]).xreplace(bound))
            MS = np.array([float(sympy.sympify(d[k]).xreplace(bound)) for k in ("MX", "MY", "MZ")])
            links[label] = (M, MS)

        def V(qs):
            batch = qs.shape[0]
            T = {BASE: np.broadcast_to(np.eye(4), (batch, 4, 4))}
            out = np.zeros(batch)
            for frame in robot.frames:
                local = np.zeros((batch, 4, 4))
                local[:, :3, :] = transforms[frame.label](qs).reshape(batch, 3, 4)
                local[:, 3, 3] = 1.0
                T[frame.label] = T[frame.antecedent] @ local
                if frame.label in links:
                    M, MS = links[frame.label]
                    R, P = T[frame.label][:, :3, :3], T[frame.label][:, :3, 3]
                    out -= (M * P + R @ MS) @ G
            return out

        return V

    def W(self, q):
        """``W(q)``, shape (rows, n) or (N, rows, n)."""
        qs, single = self._states(q, self.n, "q")
        out = self._constraint_matrix(qs)
        return out[0] if single else out

    def _state_hooks(self):
        """The constrained maps, and the rolling constraints' residual along a run."""
        return super()._state_hooks() | {"monitor_map": self._rolling_residual}

    def _rolling_residual(self, q_raw, q, qd):
        if not len(q):
            return {"constraint_residual": np.zeros(0)}
        return {"constraint_residual": np.atleast_1d(self.constraint_residual(q, np.atleast_2d(self.velocities(q, qd))))}

    def constraint_residual(self, q, qd):
        """``max |W(q) qd|``: a float, or (N,) for a batch."""
        qs, single = self._states(q, self.n, "q")
        v, _ = self._states(qd, self.n, "qd")
        W = self._constraint_matrix(qs)
        out = np.abs((W @ np.broadcast_to(v, qs.shape)[..., None])[..., 0]).max(axis=1)
        return float(out[0]) if single else out

    def potential_energy(self, q):
        """``V(q) = -G . sum_j (M_j 0P_j + 0R_j MS_j)``, a float or (N,)."""
        qs, single = self._states(q, self.n, "q")
        out = self._potential(qs)
        return float(out[0]) if single else out

    def energy(self, q, qd_a):
        """Total energy, kinetic plus potential: a float or (N,).  Conserved along
        a motion without input, friction or external wrench."""
        qs, qa, single = self._prepare(q, qd_a)
        out = np.atleast_1d(self.kinetic_energy(qs, qa)) + np.atleast_1d(self.potential_energy(qs))
        return float(out[0]) if single else out


# ----------------------------------------------------------------- programs
def wheeled_program(model, name):
    """The wheeled model ``name`` as one program (eq. 43, ``Gamma_a = G^T Gamma``).

    The program computes, from q and the independent speeds:

    - on the rows :attr:`WheelConstraints.square_rows` of W, the square
      dependent block ``WD`` and ``WI``; ``DETWD`` its determinant
      (simplified once: ``Rc*b*d`` for ``diffdrive``), ``WDI = adj(WD) /
      DETWD`` and ``G_d = -WDI WI`` (``GW<dependent>_<independent>``);
    - the dependent rates ``QP_d = G_d QP_a``, ``JDQ = Wdot qd`` and the
      dependent accelerations ``QDP_d = G_d QDP_a - WDI JDQ``;
    - the tree model (its program spliced in);
    - the projection ``GAM_a = GT_a + G_d^T GT_d`` (``h``: the same at
      ``QDP_a = 0``), ``Q_a = QT_a + G_d^T QT_d``, ``A_a = G^T A_tr G``.

    Parameters
    ----------
    model : WheeledModel
    name : {"inverse_dynamics", "h", "gravity", "mass_matrix"}

    Returns
    -------
    Program
    """
    from kanerobot.symbolic.printing import matrix_entry_names
    from kanerobot.symbolic.program import Program

    if name not in PROGRAMS:
        raise KaneRobotError(
            f"no wheeled program for {name!r} ({', '.join(PROGRAMS)} have one): use model.numeric(values).{name} "
            f"for {model.robot.name}"
        )
    robot, c = model.robot, model.constraints
    labels = robot.joint_labels
    jp = robot.joint_parameters
    ind, dep = list(c.independent), list(c.dependent)
    QP = {label: sympy.sympify(jp[label]["QP"]) for label in labels}
    QDP = {label: sympy.sympify(jp[label]["QDP"]) for label in labels}
    dependent_symbols = {QP[label] for label in dep} | {QDP[label] for label in dep}
    rates = name in ("inverse_dynamics", "h")
    tree = model.tree.program("inverse_dynamics" if rates else name)
    inputs = [x for x in tree.inputs if x not in dependent_symbols]
    m = len(ind)
    out_names = {f"GAM{robot.stems[a]}" for a in ind} | {f"Q{robot.stems[a]}" for a in ind}
    out_names |= {x for row in matrix_entry_names("A", (m, m)) for x in row}
    target = Program(inputs=inputs + sorted(c.geometric_symbols, key=str), reserved=out_names, trig=True)
    rows = list(c.square_rows)
    Gd = sympy.zeros(len(dep), m)
    WDI = sympy.zeros(len(dep), len(dep))
    if dep:
        W = c.W.extract(rows, list(range(len(labels))))
        WD = target.assign_matrix("WD{i}{j}", target.replace_sin_cos(W.extract(list(range(len(rows))), c.columns(dep))))
        WI = target.assign_matrix("WI{i}{j}", target.replace_sin_cos(W.extract(list(range(len(rows))), c.columns(ind))))
        det = c.W.extract(rows, c.columns(dep)).det(method="berkowitz")
        det = sympy.factor(sympy.trigsimp(det)) if sympy.count_ops(det) < 2000 else det
        DET = target.assign("DETWD", target.replace_sin_cos(det))
        WDI = target.assign_matrix("WDI{i}{j}", WD.adjugate(method="berkowitz") / DET)
        Gd = target.assign_matrix(lambda i, j: label_name("GW", robot.stems[dep[i - 1]], robot.stems[ind[j - 1]]), -WDI * WI)
    mapping = {}
    if rates:
        qd_a = sympy.Matrix([QP[a] for a in ind])
        for r, d in enumerate(dep):
            mapping[QP[d]] = target.assign(str(QP[d]), (Gd[r, :] * qd_a)[0])
        qd = sympy.Matrix([mapping.get(QP[label], QP[label]) for label in labels])
        if dep:
            V = dict(zip(c.velocity, qd))
            JDQ = target.assign_matrix(
                "JDQ{i}", target.replace_sin_cos(c.Wv_dot.extract(rows, [0]).xreplace(V).xreplace(mapping))
            )
            qdd_a = sympy.Matrix([QDP[a] if name == "inverse_dynamics" else 0 for a in ind])
            qdd_d = Gd * qdd_a - WDI * JDQ
            for r, d in enumerate(dep):
                mapping[QDP[d]] = target.assign(str(QDP[d]), qdd_d[r])
        if name == "h":
            for a in ind:
                mapping[QDP[a]] = sympy.S.Zero
    outputs = splice(target, tree, mapping)
    project_outputs(target, name, outputs, labels, ind, dep, Gd, robot.stems)
    target.prune()
    return target


# ------------------------------------------------------- sympy's KanesMethod
@dataclasses.dataclass
class NonholonomicKane:
    """What :func:`nonholonomic_kanes_method` builds.

    Attributes
    ----------
    kanes_method : KanesMethod
        With ``u_dependent`` and ``velocity_constraints``, after
        ``kanes_equations(bodies, loads)``: ``mass_matrix`` (n x n, every
        ``u'``: the ``n - r`` dynamic equations over the ``r`` derivatives of
        the constraints) and ``forcing``.
    q : list
        ``dynamicsymbols`` of every joint variable, joint order.
    u, u_dependent : list
        The independent and the dependent speeds.
    independent, dependent : tuple of str
        Their joint labels.
    constraints : list of sympy.Expr
        The velocity constraints given to KanesMethod.
    bodies, loads, frames : list, list, dict
    substitutions : dict
        ``{q(t): q, q'(t): QP, u(t): QP, u'(t): QDP}`` in the robot's symbols
        (and, for the ``"system"`` build, the real twins to the robot's and
        the kinematic program's symbols).
    system : KaneSystem or None
        The ``"system"`` build's :class:`~kanerobot.dynamics.kane.KaneSystem`,
        whose :attr:`kinematics` program defines the intermediate symbols.
    """

    kanes_method: object
    q: list
    u: list
    u_dependent: list
    independent: tuple
    dependent: tuple
    constraints: list
    bodies: list
    loads: list
    frames: dict
    substitutions: dict
    system: object = None


def adjugate_solver(A, b):
    """``A^-1 b`` as ``adj(A) b / det(A)``, the determinant simplified once.

    The constraint solver given to KanesMethod: defined wherever ``A`` is
    invertible, where LU divides by pivots that can vanish at regular
    configurations (``cos(theta)`` for a differential drive).
    """
    det = A.det(method="berkowitz")
    if sympy.count_ops(det) < 2000:
        det = sympy.factor(sympy.trigsimp(det))
    return A.adjugate(method="berkowitz") * b / det


def nonholonomic_kanes_method(robot, build="naive", independent=None, constraint_solver=adjugate_solver, system=None):
    """sympy's ``KanesMethod`` of a wheeled robot, with dependent speeds and velocity constraints.

    Parameters
    ----------
    robot : Robot
        Wheeled, with its posture and wheels.
    build : {"naive", "system"}
        ``"naive"``: the bodies and loads of
        :func:`kanerobot.dynamics.kane.naive_kanes_method` (frames oriented
        link by link, sympy derives every velocity), and the velocity
        constraints derived by sympy too: the velocity of each wheel's
        contact point (``v2pt_theory`` from its centre) dotted with ``t``
        and ``a`` (an independent path from :func:`wheel_constraints`;
        small robots).  ``"system"``: the bodies and loads of
        :class:`~kanerobot.dynamics.kane.KaneSystem` (body-frame kinematics
        in intermediate symbols) with the rows of ``W`` in ``q(t)``.
    independent : sequence of str, optional
        As :func:`wheel_constraints`.
    constraint_solver : callable, optional
        KanesMethod's ``constraint_solver``; the default
        :func:`adjugate_solver` stays defined where LU would not.
    system : KaneSystem, optional
        For the ``"system"`` build: the :class:`~kanerobot.dynamics.kane.KaneSystem`
        of :func:`tree_robot` to reuse (made here otherwise).

    Returns
    -------
    NonholonomicKane
        Rotor inertias ``IA`` are not part of it.

    Examples
    --------
    >>> import kanerobot as kr
    >>> nk = nonholonomic_kanes_method(kr.load(kr.frames_path("diffdrive")))
    >>> nk.kanes_method.mass_matrix.shape, [str(u) for u in nk.u]
    ((7, 7), ['uwr(t)', 'uwl(t)'])
    """
    from sympy.physics.mechanics import KanesMethod, dynamicsymbols

    from kanerobot.dynamics.kane import KaneSystem, naive_kanes_method

    c = wheel_constraints(robot, None if independent is None else tuple(independent))
    tree = tree_robot(robot)
    labels = list(robot.joint_labels)
    t = dynamicsymbols._t
    rows = list(c.square_rows)
    if build == "naive":
        nk = naive_kanes_method(tree)
        N, frames, q, u, bodies, loads = nk.N, nk.frames, nk.q, nk.u, nk.bodies, nk.loads
        to_time = dict(zip(tree.q, q))
        from sympy.physics.mechanics import Point

        n0, _ = _ground(robot)
        up = n0[0] * N.x + n0[1] * N.y + n0[2] * N.z
        equations = []
        origins = _naive_origins(tree, N, frames, q)
        for wheel in robot.wheels:
            j = wheel.joint
            B, O = frames[j], origins[j]
            a = B.x * robot.frame(j).axis[0] + B.y * robot.frame(j).axis[1] + B.z * robot.frame(j).axis[2]
            contact = Point(f"C{j}")
            contact.set_pos(O, -wheel.radius.xreplace(to_time) * up)
            v = contact.v2pt_theory(O, N, B)
            equations += [v.dot(a.cross(up)), v.dot(a)]
        substitutions = nk.substitutions(tree)
        system = None
    elif build == "system":
        if system is None:
            system = KaneSystem(tree)
        elif system.robot != tree:
            raise KaneRobotError(f"the KaneSystem given is not that of the tree of {robot.name}")
        N, frames, q, u, bodies, loads = system.N, system.frames, system.q, system.u, system.bodies, system.loads
        to_time = dict(zip(tree.q, q))
        equations = []
        qd_t = [qk.diff(t) for qk in q]
        for r in range(c.W.rows):
            row = c.W.row(r).xreplace(to_time)
            equations.append(system.real(sum((row[k] * qd_t[k] for k in range(len(q))), sympy.S.Zero)))
        substitutions = {}
        for qt, ut, qs, qd, qdd in zip(q, u, tree.q, tree.qd, tree.qdd):
            substitutions.update({ut.diff(t): qdd, qt.diff(t): qd, qt: qs, ut: qd})
        substitutions.update({twin: sympy.Symbol(name) for name, twin in system.real_symbols.items()})
    else:
        raise KaneRobotError(f"unknown build {build!r}: 'naive' or 'system'")
    ind = [u[labels.index(label)] for label in c.independent]
    dep = [u[labels.index(label)] for label in c.dependent]
    kd = [qk.diff(t) - uk for qk, uk in zip(q, u)]
    constraints = [equations[r] for r in rows]
    km = KanesMethod(
        N, q, ind, kd_eqs=kd, u_dependent=dep, velocity_constraints=constraints, constraint_solver=constraint_solver
    )
    km.kanes_equations(bodies, loads)
    return NonholonomicKane(
        kanes_method=km,
        q=list(q),
        u=ind,
        u_dependent=dep,
        independent=c.independent,
        dependent=c.dependent,
        constraints=constraints,
        bodies=bodies,
        loads=loads,
        frames=frames,
        substitutions=substitutions,
        system=system,
    )


def _naive_origins(robot, N, frames, q):
    """The origin points of the naive build's frames (found from its bodies' points)."""
    from sympy.physics.mechanics import Point

    to_time = dict(zip(robot.q, q))
    origins = {BASE: Point("O0")}
    origins[BASE].set_vel(N, 0)
    for frame in robot.frames:
        j, i = frame.label, frame.antecedent
        T = sympy.Matrix(frame.transform()).xreplace(to_time)
        B = frames[i]
        P = origins[i].locatenew(f"O{j}", T[0, 3] * B.x + T[1, 3] * B.y + T[2, 3] * B.z)
        if frame.sigma == PRISMATIC:
            P.set_vel(frames[i], P.pos_from(origins[i]).dt(frames[i]))
            P.v1pt_theory(origins[i], N, frames[i])
        else:
            P.v2pt_theory(origins[i], N, frames[i])
        origins[j] = P
    return origins
