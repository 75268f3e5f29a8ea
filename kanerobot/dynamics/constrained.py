"""A tree under velocity constraints: closed loops and rolling wheels alike.

Both are the tree model of an engine with linear velocity constraints

    J(q) qd = 0                     (loop closure, SYMORO+ eq. 11; rolling, OpenSYMORO eq. 42)

and a choice of independent speeds ``qd_a`` (the active joints of a loop,
the wheel rates of a mobile base); the others, ``qd_d``, follow:

    qd  = G qd_a,          G = [I; X] (rows placed by joint),  J_d X = -J_a
    qdd = G qdd_a + g,     J_d g_d = -Jdot qd
    Gdot:                  J_d Gdot_d = -Jdot G

``J_d`` may have more rows than columns (a planar loop, two coaxial wheels):
it is solved by its pseudo-inverse from a singular value decomposition, so no
pivot can vanish, and a configuration where its smallest singular value does
is reported as singular.  The dynamics follow from the principle of virtual
work (Kane's nonholonomic partial velocities give the same projection):

    Gamma_a = G^T Gamma_tr(q, G qd_a, G qdd_a + g)
    A_a = G^T A_tr G,    H_a = G^T (A_tr g + H_tr),    Q_a = G^T Q_tr
    C_a = G^T (A_tr Gdot + C_tr G)       (Adot_a - 2 C_a skew-symmetric)

A structure of this kind is a :class:`VelocityConstraint`: J (one column per
speed of the tree: a ball joint's three), its derivative, the independent
speeds, a symbolic solution for the programs and numeric functions, its
names.  :class:`ConstrainedModel` (the programs of :func:`constrained_program`)
and :class:`ConstrainedDynamics` compose any of them with the tree's models
of any engine; :mod:`kanerobot.dynamics.closed_loop` (:class:`~kanerobot.dynamics.closed_loop.LoopClosure`)
and :mod:`kanerobot.dynamics.wheeled` (:class:`~kanerobot.dynamics.wheeled.Rolling`)
say what J is and add what is their own (solving the loops, the contact
geometry, the energies).  A new one (a mimic joint, a rolling contact) is a
subclass and one line of :data:`kanerobot.dynamics.model.STRUCTURES`
(:func:`constrained`).
"""

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import sympy
from numpy.typing import ArrayLike

from kanerobot.dynamics.dynamic_model import (
    DynamicModel,
    NumericProtocol,
    ProgramCache,
    as_states,
    bound_numeric,
    bound_values,
    solve_dynamics,
)
from kanerobot.dynamics.root import root_joint_model
from kanerobot.errors import KaneRobotError, ParameterError, SingularityError
from kanerobot.kinematics import speed_columns
from kanerobot.robot.description import BASE, Robot
from kanerobot.state_space import StateSpace

__all__ = [
    "PROGRAMS",
    "SINGULAR_TOL",
    "ConstrainedDynamics",
    "ConstrainedModel",
    "NumericConstraint",
    "Speed",
    "VelocityConstraint",
    "batched_function",
    "configuration",
    "constrained",
    "constrained_program",
    "coordinate_rates",
    "project_outputs",
    "speed_columns",
    "speed_labels",
    "speeds",
    "time_derivative",
    "velocity",
    "velocity_columns",
]

#: Relative threshold on the smallest singular value of J_d (and on J G).
SINGULAR_TOL = 1e-9


def batched_function(exprs, groups, values):
    """``f(*arrays) -> (N, len(exprs))``: ``exprs`` compiled with numpy.

    Parameters
    ----------
    exprs : sequence of sympy.Expr
    groups : sequence of sequences of sympy.Symbol
        The arguments: ``f`` takes one (N, len(group)) array per group.
    values : dict sympy.Symbol -> float
        Every other symbol of ``exprs``.

    Raises
    ------
    ParameterError
        Naming the symbols with no value.

    Examples
    --------
    >>> a, b, L = sympy.symbols("a b L")
    >>> f = batched_function([L * a, a * b], [[a], [b]], {L: 2.0})
    >>> f(np.array([[1.0], [2.0]]), np.array([[3.0], [4.0]])).tolist()
    [[2.0, 3.0], [4.0, 8.0]]
    """
    values = {k: sympy.Float(v) for k, v in values.items()}
    exprs = [sympy.sympify(e).xreplace(values) for e in exprs]
    dummies = [[sympy.Dummy(f"x{k}_{m}") for m in range(len(group))] for k, group in enumerate(groups)]
    mapping = {s: d for group, dg in zip(groups, dummies) for s, d in zip(group, dg) if isinstance(s, sympy.Symbol)}
    exprs = [e.xreplace(mapping) for e in exprs]
    left = set().union(*(e.free_symbols for e in exprs)) - set(mapping.values()) if exprs else set()
    if left:
        raise ParameterError(f"no value for {', '.join(sorted(map(str, left)))}")
    compiled = sympy.lambdify([d for dg in dummies for d in dg], exprs, modules="numpy", cse=True)

    def function(*arrays):
        batch = arrays[0].shape[0]
        columns = [array[:, m] for array in arrays for m in range(array.shape[1])]
        out = compiled(*columns)
        if not out:
            return np.zeros((batch, 0))
        return np.stack([np.broadcast_to(np.asarray(v, dtype=float), (batch,)) for v in out], axis=-1)

    return function


def label_name(prefix, *labels):
    """``W31`` for single-character labels, ``W3_1`` otherwise."""
    if all(len(label) == 1 for label in labels):
        return prefix + "".join(labels)
    return prefix + "_".join(labels)


class Speed(NamedTuple):
    """One speed of a joint of a tree: its joint, its symbols, the suffix of its outputs."""

    label: str
    qd: sympy.Expr
    qdd: sympy.Expr
    tau: sympy.Expr
    #: ``GAM<suffix>``, ``Q<suffix>``: the stem for a joint of one speed, ``CX2``... for a ball joint.
    suffix: str


def speed_labels(robot):
    """The labels whose speeds make up the tree's velocity: the base ``"0"`` first on a floating
    tree (the free flyer's six speeds), then every joint.

    Examples
    --------
    >>> import kanerobot as kr
    >>> speed_labels(kr.load(kr.frames_path("satellite"))), speed_labels(kr.load(kr.frames_path("planar2")))
    (('0', '1', '2', '3'), ('1', '2'))
    """
    return ((BASE,) if robot.floating else ()) + tuple(robot.joint_labels)


def speeds(robot, labels=None):
    """The speeds of ``labels`` (:func:`speed_labels` by default), label by label, ``nv`` each.

    A floating robot's base ``"0"`` has the free flyer's six, ``VX0 .. WZ0``
    (:data:`~kanerobot.dynamics.free_flyer.BASE_VELOCITY`), whose
    generalized forces are the programs' ``GAMFX0 .. GAMCZ0``.

    Examples
    --------
    >>> import kanerobot as kr
    >>> [s.suffix for s in speeds(kr.load(kr.frames_path("fourbar")), ["1", "3"])]
    ['1', '3']
    >>> [(str(s.qd), s.suffix) for s in speeds(kr.load(kr.frames_path("satellite")))][4:8]
    [('WY0', 'CY0'), ('WZ0', 'CZ0'), ('QP1', '1'), ('QP2', '2')]
    """
    out = []
    for label in speed_labels(robot) if labels is None else labels:
        if label == BASE and robot.floating:
            root = root_joint_model(robot)
            names = zip(root.speed_names(BASE), root.acceleration_names(BASE), root.force_names(BASE))
            out += [Speed(BASE, sympy.Symbol(v), sympy.Symbol(a), sympy.Symbol(f"GAM{x}"), x) for v, a, x in names]
            continue
        frame, stem = robot.frame(label), robot.stems[label]
        suffixes = frame.joint.force_names(stem)
        taus = (robot.joint_parameters[label]["GAM"],) if frame.joint.nv == 1 else [sympy.Symbol(f"GAM{x}") for x in suffixes]
        rates = zip(robot.joint_speeds[label], robot.joint_accelerations[label], taus, suffixes)
        out += [Speed(label, sympy.sympify(qd), sympy.sympify(qdd), tau, x) for qd, qdd, tau, x in rates]
    return out


def splice(target, program, mapping):
    """Copy ``program``'s assignments into ``target`` (renamed where taken,
    ``mapping`` updated); return its outputs in ``target``'s symbols
    (:meth:`~kanerobot.symbolic.Program.splice`)."""
    return target.splice(program, mapping)


def project_outputs(target, name, outputs, keys, independent, dependent, X):
    """Set the outputs of a constrained program from the tree's: ``G^T`` applied.

    ``keys`` are the output suffixes of every speed of the tree
    (:attr:`Speed.suffix`), ``independent`` and ``dependent`` those of the
    independent and dependent speeds.  ``G`` has identity rows for the
    ``independent`` speeds and the rows of ``X`` (program symbols, dependent
    x independent) for the ``dependent`` ones.  The tree's outputs
    ``outputs`` (by name) are named ``AT``, ``GT`` or ``QT`` in ``target``;
    then ``A_a = G^T A_tr G`` (outputs ``A<i><j>``, i <= j) for the inertia
    matrix, else ``Gamma_a = GT_a + X^T GT_d`` (``GAM`` or ``Q`` outputs of the
    independent speeds).
    """
    from kanerobot.symbolic.printing import matrix_entry_names

    n, m = len(keys), len(independent)
    if name == "mass_matrix":
        tree_names = matrix_entry_names("A", (n, n))
        AT = sympy.zeros(n, n)
        for i in range(n):
            for j in range(i, n):
                key = tree_names[i][j] if tree_names[i][j] in outputs else tree_names[j][i]
                AT[i, j] = AT[j, i] = target.assign(label_name("AT", keys[i], keys[j]), outputs.get(key, 0))
        G = sympy.zeros(n, m)
        for col, a in enumerate(independent):
            G[keys.index(a), col] = 1
        for row, d in enumerate(dependent):
            G[keys.index(d), :] = X[row, :]
        A = G.T * AT * G
        names = matrix_entry_names("A", (m, m))
        for j in range(m):
            for i in range(j + 1):
                target.set_output(names[i][j], A[i, j])
        return
    prefix = "Q" if name == "gravity" else "GAM"
    T = {key: target.assign(label_name(prefix[0] + "T", key), outputs.get(f"{prefix}{key}", 0)) for key in keys}
    for col, a in enumerate(independent):
        target.set_output(f"{prefix}{a}", T[a] + sympy.Add(*(X[row, col] * T[d] for row, d in enumerate(dependent))))


def velocity(robot):
    """The tree's speeds, the columns of a :class:`VelocityConstraint`'s J: on a floating tree the free
    flyer's ``VX0 .. WZ0`` (the velocity of O_0 and the angular velocity, in frame 0), then ``robot.qd``.

    Examples
    --------
    >>> import kanerobot as kr
    >>> velocity(kr.load(kr.frames_path("satellite"))).T
    Matrix([[VX0, VY0, VZ0, WX0, WY0, WZ0, QP1, QP2, QP3]])
    """
    return sympy.Matrix([s.qd for s in speeds(robot)])


def velocity_columns(robot, labels):
    """Indices in :func:`velocity` of the speeds of ``labels`` (the base ``"0"``: its six).

    Examples
    --------
    >>> import kanerobot as kr
    >>> velocity_columns(kr.load(kr.frames_path("satellite")), ["2", "0"])
    [7, 0, 1, 2, 3, 4, 5]
    """
    offset = 6 if robot.floating else 0
    return [c for label in labels for c in (range(6) if label == BASE and robot.floating else
                                            [offset + k for k in speed_columns(robot, [label])])]  # fmt: skip


def configuration(robot):
    """The tree's configuration symbols, what J may depend on: on a floating tree the free flyer's
    ``X0 Y0 Z0 QX0 QY0 QZ0 QW0`` (position of O_0 in the world, unit quaternion of wR_0), then ``robot.q``.

    Examples
    --------
    >>> import kanerobot as kr
    >>> configuration(kr.load(kr.frames_path("satellite")))[:8]
    [X0, Y0, Z0, QX0, QY0, QZ0, QW0, th1]
    """
    base = [sympy.Symbol(name) for name in root_joint_model(robot).configuration_names(BASE)] if robot.floating else []
    return base + list(robot.q)


def coordinate_rates(robot):
    """``dq/dt`` of every coordinate of :func:`configuration` in the speeds, symbolic: each joint
    model's :meth:`~kanerobot.robot.joints.JointModel.configuration_rate` (``QP`` for one speed,
    a ball joint's quaternion rate, a planar joint's body speeds turned by theta; a floating base's
    ``wR_0 v`` and quaternion rate, the free flyer's)."""
    base = []
    if robot.floating:
        root, coordinates = root_joint_model(robot), configuration(robot)[:7]
        base = list(root.configuration_rate(coordinates, [s.qd for s in speeds(robot, [BASE])]))
    return base + [rate for label in robot.joint_labels
                   for rate in robot.frame(label).joint.configuration_rate(list(robot.frame(label).coordinates), robot.joint_speeds[label])]


def time_derivative(robot, M):
    """``dM/dt = sum_m dM/dq_m dq_m/dt`` of a matrix of the coordinates of :func:`configuration` (:func:`coordinate_rates`)."""
    out = sympy.zeros(*M.shape)
    for qm, rate in zip(configuration(robot), coordinate_rates(robot)):
        if rate != 0:
            out += M.diff(qm) * rate
    return out


class NumericConstraint(NamedTuple):
    """A constraint's numeric functions on a batch of states (:meth:`VelocityConstraint.numeric`)."""

    #: ``J(qs)``, (N, rows, nv).
    J: Callable
    #: ``Jdot(q, qd) v`` at ``(qs, v, qd)``, (N, rows).
    rate: Callable


#: The largest dependent block a symbolic program solves (:meth:`VelocityConstraint.speed_map`).
SYMBOLIC_BLOCK = 6


class VelocityConstraint:
    """Linear constraints on a tree's speeds, ``J(q) qd = 0``, with its independent speeds: what a structure adds to a tree.

    A closed loop's closure (:class:`~kanerobot.dynamics.closed_loop.LoopClosure`),
    the rolling of wheels (:class:`~kanerobot.dynamics.wheeled.Rolling`),
    mimic joints (:class:`~kanerobot.dynamics.mimic.Mimic`: ``qd_m - k
    qd_l = 0``), and any new one: a subclass gives :attr:`robot`,
    :attr:`tree`, :attr:`independent`, :attr:`J` and the names;
    :class:`ConstrainedModel` composes it with the tree's models of any
    engine (the programs of :data:`PROGRAMS` and :class:`ConstrainedDynamics`).

    **On a floating tree** (``tree.floating``: the free flyer is the root
    joint) nothing else changes: J's columns are the tree's
    :func:`velocity`, the free flyer's six speeds ``VX0 .. WZ0`` (the
    velocity of O_0 and the angular velocity of link 0, in frame 0,
    pinocchio's convention) first, then ``tree.qd``; J may depend on every
    coordinate of :func:`configuration` (``X0 .. QW0`` and the joints), and
    its derivative along the motion (:attr:`Jdot`) takes the free flyer's
    rates (``wR_0 v`` and the quaternion's).  The base is the label ``"0"``
    (:data:`~kanerobot.robot.description.BASE`) in :attr:`independent` (its
    six speeds independent, as for mimic joints: the robot still flies) or
    in :attr:`dependent` (its six fixed by J: a rolling contact of the base
    itself); the six go together (a choice among them would need a label
    per base speed, which :func:`speeds` does not offer yet: a wheel-legged
    robot's contacts leave the base independent, the legs dependent).  So
    a rolling contact on a floating tree only writes J (the
    contact point's velocity: ``[I, -[p]x] [v; w] + J_joints qd``, all in
    frame 0, expressed with the base quaternion) and its independent
    labels; the programs splice the floating tree's, the numeric functions
    take the floating state (``q`` with the base's seven coordinates
    first; ``qd_a`` with its six speeds first where independent; ``tau``
    the independent joints' only, the base being unactuated), and the
    configuration is integrated by the free flyer's rates.

    Attributes
    ----------
    robot : Robot
        The constrained robot.
    tree : Robot
        The tree whose models are projected (every joint free; the free flyer of a floating robot kept).
    independent : tuple of str
        Labels whose speeds are independent (``qd_a``): joints, and ``"0"`` for a floating base's six; the others' follow.
    J : sympy.Matrix, shape (rows, nv)
        The constraint, one column per speed of the tree (:func:`velocity`: ``tree.qd``, after ``VX0 .. WZ0`` when floating).
    kind, adjective : str
        The structure's name in the state space and messages.
    """

    kind = "constrained"
    adjective = "constrained"
    # set by the subclass's __init__ (see Attributes)
    robot: Robot
    tree: Robot
    independent: tuple[str, ...]
    J: sympy.Matrix

    @property
    def dependent(self):
        """Labels whose speeds follow from the independent ones, in the order of :func:`speed_labels`."""
        return tuple(label for label in speed_labels(self.tree) if label not in self.independent)

    @property
    def loaded(self):
        """Dependent joints whose generalized forces the independent ones take over (the rows of
        :meth:`speed_map`'s X): every dependent joint by default; a loop's cut joints carry none."""
        return self.dependent

    @property
    def Jdot(self):
        """``dJ/dt`` along the motion (in the coordinates and the speeds of the tree), built once."""
        if "_Jdot" not in self.__dict__:
            self.__dict__["_Jdot"] = time_derivative(self.tree, self.J)
        return self.__dict__["_Jdot"]

    def bias(self, v):
        """``Jdot(q, qd) v`` for a vector of symbols ``v``, (rows, 1): J's derivative times ``v``."""
        return self.Jdot * sympy.Matrix(v)

    @property
    def symbols(self):
        """The parameter symbols of J and of its derivative (the configuration and the speeds left out)."""
        state = set(configuration(self.tree)) | set(velocity(self.tree))
        return {x for e in list(self.J) + list(self.Jdot) for x in sympy.sympify(e).free_symbols if x not in state}

    @property
    def program_inputs(self):
        """Inputs a constrained program takes besides the tree's (after them)."""
        return []

    def speed_map(self, target, rates=True, accelerations=True):
        """Assign in the program ``target`` the dependent speeds from the independent ones.

        Default: every row of J, its dependent block square and solved by
        adjugate over determinant (``X = -J_d^-1 J_a``, ``GX<d>_<a>``); with
        ``rates`` the dependent rates ``X QP_a`` and accelerations
        ``X QDP_a - J_d^-1 Jdot qd`` (``QDP_a = 0`` unless ``accelerations``).

        Returns
        -------
        X : sympy.Matrix
            (dependent speeds, independent speeds) of program symbols.
        mapping : dict
            ``{QP or QDP of a dependent speed: its value in target}``.
        """
        tree = self.tree
        ind, dep = speeds(tree, self.independent), speeds(tree, self.dependent)
        rows = list(range(self.J.rows))
        Jd, Ja = self.J.extract(rows, velocity_columns(tree, self.dependent)), self.J.extract(rows, velocity_columns(tree, self.independent))
        if Jd.rows != Jd.cols:
            raise KaneRobotError(
                f"{self.robot.name}: the dependent block of the {self.adjective} constraint is {Jd.rows} x {Jd.cols}, "
                f"not square: no symbolic solution; use model.numeric(values)"
            )
        if Jd.rows > SYMBOLIC_BLOCK:  # adjugate over determinant: terms grow factorially, a 12 x 12 block never ends
            raise KaneRobotError(
                f"{self.robot.name}: the {self.adjective} constraint has {Jd.rows} dependent speeds; its symbolic solution "
                f"(adjugate over determinant of a {Jd.rows} x {Jd.rows} block) is out of reach above {SYMBOLIC_BLOCK}: use "
                f"model.numeric(values), which solves it at each state"
            )
        JD = target.assign_matrix("JD{i}{j}", target.replace_sin_cos(Jd))
        JI = target.assign_matrix("JI{i}{j}", target.replace_sin_cos(Ja))
        JDI = target.assign_matrix("JDI{i}{j}", JD.adjugate(method="berkowitz") / target.assign("DETJD", JD.det(method="berkowitz")))
        X = target.assign_matrix(lambda i, j: label_name("GX", dep[i - 1].suffix, ind[j - 1].suffix), -JDI * JI)
        mapping: dict[sympy.Symbol, sympy.Expr] = {}
        if not rates:
            return X, mapping
        qd_a = sympy.Matrix([a.qd for a in ind])
        for r, d in enumerate(dep):
            mapping[d.qd] = target.assign(str(d.qd), (X[r, :] * qd_a)[0])
        qd = sympy.Matrix([mapping.get(x.qd, x.qd) for x in speeds(tree)])
        JDQ = target.assign_matrix("JDQ{i}", target.replace_sin_cos(self.Jdot) * qd)
        qdd = X * sympy.Matrix([a.qdd if accelerations else 0 for a in ind]) - JDI * JDQ
        for r, d in enumerate(dep):
            mapping[d.qdd] = target.assign(str(d.qdd), qdd[r])
        return X, mapping

    def numeric(self, values):
        """:class:`NumericConstraint` with the parameters bound to ``values`` ({sympy.Symbol: float})."""
        q, qd = configuration(self.tree), list(velocity(self.tree))
        v = [sympy.Symbol(f"kr_v{k}") for k in range(len(qd))]
        J = batched_function(list(self.J), [q], values)
        rate = batched_function(list(self.bias(v)), [q, v, qd], values)
        return NumericConstraint(lambda qs: J(qs).reshape(qs.shape[0], self.J.rows, len(qd)), rate)


def constrained_program(model, name):
    """The program of model ``name`` of a tree under a :class:`VelocityConstraint` (``Gamma_a = G^T Gamma``).

    The constraint's :meth:`~VelocityConstraint.speed_map` (the dependent
    rates and accelerations), the tree's program spliced in, and the
    projection :func:`project_outputs`: ``GAM_a = GT_a + X^T GT_d`` (``h``:
    the same at ``QDP_a = 0``), ``Q_a = QT_a + X^T QT_d``, ``A_a = G^T A_tr G``.

    Parameters
    ----------
    model : ConstrainedModel
    name : {"inverse_dynamics", "h", "gravity", "mass_matrix"}

    Returns
    -------
    Program
    """
    from kanerobot.dynamics.dynamic_model import PROTOCOL
    from kanerobot.symbolic.printing import matrix_entry_names
    from kanerobot.symbolic.program import Program

    constraint = model.constraint
    if name not in PROGRAMS:
        numeric = name in PROTOCOL and model.dynamics.provides(name)  # the numeric model may solve it
        raise KaneRobotError(
            f"no {constraint.adjective} program for {name!r} ({', '.join(PROGRAMS)} have one)"
            + (f": use model.numeric(values).{name} for {model.robot.name}" if numeric else "")
        )
    tree = constraint.tree
    ind, dep = speeds(tree, constraint.independent), speeds(tree, constraint.dependent)
    rates = name in ("inverse_dynamics", "h")
    program = model.tree.program("inverse_dynamics" if rates else name)
    dependent = {x for d in dep for x in (d.qd, d.qdd)}
    inputs = [x for x in program.inputs if x not in dependent] + list(constraint.program_inputs)
    m = len(ind)
    reserved = {f"GAM{a.suffix}" for a in ind} | {f"Q{a.suffix}" for a in ind}
    reserved |= {x for row in matrix_entry_names("A", (m, m)) for x in row}
    target = Program(inputs=inputs, reserved=reserved, trig=True)
    X, mapping = constraint.speed_map(target, rates=rates, accelerations=name == "inverse_dynamics")
    if name == "h":
        for a in ind:
            mapping[a.qdd] = sympy.S.Zero
    outputs = splice(target, program, mapping)
    loaded = [d.suffix for d in speeds(tree, constraint.loaded)]
    project_outputs(target, name, outputs, [x.suffix for x in speeds(tree)], [a.suffix for a in ind], loaded, X)
    target.prune()
    return target


#: Models with a symbolic program of the projection (closed loops and wheels
#: alike); the Coriolis matrix and the direct model are numeric only
#: (:class:`ConstrainedDynamics`).
PROGRAMS = ("inverse_dynamics", "h", "gravity", "mass_matrix")


class ConstrainedModel(ProgramCache):
    """The models of a tree under a :class:`VelocityConstraint`, by one engine.

    The tree's models (any engine) projected on the constraint's independent
    speeds: programs by :func:`constrained_program`, numeric functions by
    :attr:`dynamics` (:class:`ConstrainedDynamics`).  A structure with more
    (solving a loop's configuration, a wheeled base's energies) subclasses
    it; a new constraint alone needs none.

    Examples
    --------
    A planar two-link arm whose second joint mimics the first (``qd2 = qd1``):

    >>> import kanerobot as kr
    >>> from kanerobot.dynamics.parameters import random_parameters
    >>> class Mimic(VelocityConstraint):
    ...     def __init__(self, robot):
    ...         self.robot = self.tree = robot
    ...         self.independent = ("1",)
    ...         self.J = sympy.Matrix([[-1, 1]])
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> model = ConstrainedModel(arm, "newton-euler", Mimic(arm))
    >>> model.dof, list(model.program("mass_matrix").outputs)
    (1, ['A11'])
    >>> values = random_parameters(arm, np.random.default_rng(0))
    >>> fn = model.numeric(values, backend="numpy")
    >>> A = kr.derive(arm).numeric(values, backend="numpy").mass_matrix([0.3, 0.3])
    >>> bool(np.isclose(fn.mass_matrix([0.3, 0.3])[0, 0], A.sum()))
    True

    Attributes
    ----------
    robot : Robot
    method : str
    constraint : VelocityConstraint
    tree : DynamicModel
        The models of the constraint's tree (every joint free).
    independent : tuple of str
        Labels of the independent speeds ``qd_a``.
    q, qd, qdd, tau : list of sympy.Expr
        The program state: every coordinate (:func:`configuration`: a
        floating base's ``X0 .. QW0`` first); ``QP``, ``QDP`` of the
        independent speeds (``VX0 .. WZ0``, ``DVX0 .. DWZ0`` first where a
        floating base is independent), ``GAM`` of the independent joints
        (a floating base is not actuated).
    wrench : dict
        The tree's external wrench symbols by link.
    """

    #: Models with a program (the others are numeric only).
    programs = PROGRAMS

    def __init__(self, robot, method, constraint):
        self.robot = robot
        self.method = method
        self.constraint = constraint
        self.tree = DynamicModel(constraint.tree, method)
        self.independent = tuple(constraint.independent)
        self.q = configuration(robot)
        rates = speeds(robot, self.independent)
        self.qd = [s.qd for s in rates]
        self.qdd = [s.qdd for s in rates]
        self.tau = [s.tau for s in rates if s.label != BASE]
        self.wrench = self.tree.wrench
        self._programs = {}

    @property
    def dynamics(self):
        """The class of :meth:`numeric`'s functions."""
        return ConstrainedDynamics

    def _derive(self, name):
        return constrained_program(self, name)

    @property
    def parameters(self):
        """Names of the tree models' parameters and of the constraint's symbols, in the robot's order."""
        return self.robot.parameter_order(set(self.tree.parameters) | {str(s) for s in self.constraint.symbols})

    def numeric(self, values, backend="auto", physical=True, check=True, bind=False):
        """Numeric functions with the parameters bound to ``values`` ({name: float}): a :attr:`dynamics`.

        ``backend``, ``physical``, ``check`` and ``bind`` as for
        :meth:`kanerobot.dynamics.model.DynamicModel.numeric`.
        """
        if bind:  # the numbers folded into the code: DynamicModel.numeric's bind
            return bound_numeric(self, values, self._rebuilt, backend=backend, physical=physical, check=check)
        return self.dynamics(self, values, backend=backend, physical=physical, check=check)

    def _rebuilt(self, robot):
        """The model of this kind (method, options) of another robot (``numeric(..., bind=True)``'s)."""
        return type(self)(robot, self.method, type(self.constraint)(robot))

    @property
    def dof(self):
        """Number of independent speeds."""
        return len(self.qd)

    @property
    def n(self):
        """The length of a configuration q: every coordinate (a floating base's seven first)."""
        return len(self.q)

    @property
    def floating(self):
        """Whether the tree is floating (the free flyer its root joint, its six speeds first in J)."""
        return bool(self.constraint.tree.floating)

    def has_program(self, name):
        return name in self.programs

    def op_count(self, name):
        """Operations of the program ``name``: ``{"add", "mul", "fn"}``."""
        return dict(self.program(name).op_count())

    @property
    def state_symbols(self):
        """q, then QP, QDP, GAM of the independent speeds, then the wrenches' symbols."""
        out = []
        for group in [self.q, self.qd, self.qdd, self.tau] + list(self.wrench.values()):
            out += [s for s in group if isinstance(s, sympy.Symbol) and s not in out]
        return out

    @property
    def robot_symbol_names(self):
        return self.tree.robot_symbol_names

    @property
    def state_space(self):
        """The :class:`~kanerobot.state_space.StateSpace`: every joint in ``q``, the independent speeds in ``qd`` and ``tau``.

        ``qdot = G(q) qd``; friction acts on every joint's rate ``G qd``.
        Subclasses name their structure (:meth:`dataclasses.replace` of this one).
        """
        robot, tree = self.robot, self.tree.state_space
        labels = tuple(robot.joint_labels)
        joints = tuple(label for label in self.independent if label != BASE)
        columns = {label: range(q.start, q.start + joint.nv) for label, (joint, q, _) in zip(labels, self.tree.layout[1:])}
        controlled = tuple(k for label in joints for k in columns[label])  # a joint's first nv coordinates, as the tree's
        base = len(self.qd) - len(self.tau)  # a floating base's six speeds where independent (not actuated), else 0
        speeds = f"the independent speeds {', '.join(self.independent)}"
        floating = ("base x y z, quaternion x y z w, ", "base v x y z and w x y z in frame 0, ") if self.floating else ("", "")
        return StateSpace(
            kind=self.constraint.kind, adjective=self.constraint.adjective, name=robot.name, coordinates=tree.coordinates,
            q_names=tree.q_names, qd_names=tree.qd_names[:base] + tuple(map(str, self.qd[base:])), torques=tuple(map(str, self.tau)),
            layout_q=f"{floating[0]}every joint {', '.join(labels)}", layout_qd=speeds if not base else f"{floating[1]}{speeds}",
            tau_layout=f"the independent joints {', '.join(joints)}" if base else speeds, actuation=np.eye(len(self.qd))[base:],
            controlled=controlled, controlled_labels=tuple(tree.coordinates[k] for k in controlled),
            origin=tree.origin, origin_is_state=False, tree=self.tree.robot, joints=tree.joints, joint_columns=tree.joint_columns,
        )  # fmt: skip


def constrained(constraint):
    """``build(robot, method)``: the :class:`ConstrainedModel` of a robot under ``constraint(robot)``.

    A new :class:`VelocityConstraint` class enters
    :data:`kanerobot.dynamics.model.STRUCTURES` through this, with no model
    class of its own.

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.dynamics.closed_loop import LoopClosure
    >>> model = constrained(LoopClosure)(kr.load(kr.frames_path("fourbar")), "newton-euler")
    >>> type(model).__name__, model.dof
    ('ConstrainedModel', 1)
    """

    def build(robot, method):
        return ConstrainedModel(robot, method, constraint(robot))

    return build


class ConstrainedDynamics(NumericProtocol):
    """Numeric dynamics of a tree under ``J(q) qd = 0``, with bound parameters.

    Every function takes one state or a batch: ``q`` of shape (n,) or
    (N, n), every joint variable in ``robot.joint_labels`` order (after the
    base's ``x y z qx qy qz qw`` on a floating tree, the quaternion
    normalised on the way in); ``qd_a``, ``qdd_a`` of the independent
    speeds, (m,) or (N, m); ``tau_a`` of the independent joints (a floating
    base's six speeds are not actuated).

    J and ``Jdot v`` are the constraint's (:meth:`VelocityConstraint.numeric`);
    subclasses may check a configuration in :meth:`_check`.

    Attributes
    ----------
    model : ConstrainedModel
    tree : NumericDynamics
        The tree model with the same values.
    values_by_name : dict
        The parameter values, by name.
    n, m : int
        Joints, independent speeds.
    """

    def __init__(self, model, values, backend="auto", physical=True, check=True):
        self.model = model
        self.robot = model.robot
        self.check = check
        bound = bound_values(model.robot, model.parameters, model.robot_symbol_names, values, physical=physical)
        self.bound = bound
        self.values_by_name = {str(k): v for k, v in bound.items()}
        tree_names = set(model.tree.parameters)
        # The tree's values were checked above with the loop's geometry.
        self.tree = model.tree.numeric({k: v for k, v in self.values_by_name.items() if k in tree_names}, backend=backend,
                                       physical=False, check=check)
        # the tree's poses may read lengths no dynamic model needs (a closing frame, an end frame): every value given
        self.tree._given = {str(k): float(v) for k, v in values.items()}
        #: Coordinates of a configuration, speeds of the tree (the columns of J), independent speeds.
        self.nc, self.n, self.m = len(model.q), len(velocity(self.robot)), len(model.qd)
        tree = model.constraint.tree
        state = {str(x) for x in configuration(tree) + list(velocity(tree))}
        self._constraint = model.constraint.numeric({x: v for x, v in bound.items() if str(x) not in state})
        self.ind = velocity_columns(self.robot, model.independent)
        self.dep = [c for c in range(self.n) if c not in self.ind]
        self.dependent = tuple(label for label in speed_labels(self.robot) if label not in model.independent)
        #: The independent speeds the torques drive (all but a floating base's), and the tree's joint speeds (friction's rates).
        self._driven = [k for k, s in enumerate(speeds(self.robot, model.independent)) if s.label != BASE]
        self._joint_speeds = list(range(6 if model.floating else 0, self.n))

    @property
    def backend(self):
        return self.tree.backend

    @property
    def nq(self):
        """Length of a configuration: every joint variable."""
        return self.nc

    @property
    def nv(self):
        """Length of a speed: the independent speeds."""
        return self.m

    # ------------------------------------------------------ the constraint
    def _constraint_matrix(self, qs):
        """``J(q)`` on a batch, (N, rows, n)."""
        return self._constraint.J(qs)

    def _constraint_rate(self, qs, v, qd):
        """``Jdot(q, qd) v`` on a batch, (N, rows)."""
        return self._constraint.rate(qs, v, qd)

    def _check(self, qs):
        """Raise for configurations the model does not accept (default: none)."""

    # ----------------------------------------------------------- kinematics
    def _states(self, x, size, what):
        base = "the base's x y z qx qy qz qw, " if self.model.floating else ""
        detail = {
            "q": base + "every joint " + ", ".join(self.robot.joint_labels),
            "qd": "every joint rate",
            "tau_a": "the independent joints " + ", ".join(label for label in self.model.independent if label != BASE),
        }.get(what, "the independent speeds " + ", ".join(self.model.independent))
        states, single = as_states(x, size, what, detail, self.check)
        if what == "q" and self.model.floating:  # the free flyer's quaternion normalised, as the tree's functions do
            states = self.tree._normalised(states)
        return states, single

    def _G(self, qs):
        """G (N, n, m) and the pseudo-inverse of the dependent block (N, d, rows)."""
        self._check(qs)
        J = self._constraint_matrix(qs)
        Jd, Ji = J[:, :, self.dep], J[:, :, self.ind]
        U, s, Vt = np.linalg.svd(Jd, full_matrices=False)
        scale = np.maximum(np.abs(J).max(axis=(1, 2)) if J.size else np.ones(qs.shape[0]), 1.0)
        if s.shape[1] and len(self.dep) > s.shape[1]:
            bad = np.ones(qs.shape[0], bool)
        else:
            bad = s[:, -1] <= SINGULAR_TOL * scale if s.shape[1] else np.zeros(qs.shape[0], bool)
        if np.any(bad):
            k = int(np.argmax(bad))
            raise SingularityError(
                f"{self.robot.name} at q = {np.round(qs[k], 6).tolist()}: the speeds of "
                f"{', '.join(self.dependent)} are not determined by those of {', '.join(self.model.independent)} "
                f"here (a singular configuration)"
            )
        pinv = np.einsum("nji,nj,nkj->nik", Vt, 1.0 / s, U) if s.shape[1] else np.zeros((qs.shape[0], 0, J.shape[1]))
        G = np.zeros((qs.shape[0], self.n, self.m))
        G[:, self.ind, :] = np.eye(self.m)
        G[:, self.dep, :] = -pinv @ Ji
        residual = np.abs(J @ G).max(axis=(1, 2)) if J.shape[1] else np.zeros(qs.shape[0])
        if np.any(residual > SINGULAR_TOL * scale * max(1.0, np.abs(G).max())):
            k = int(np.argmax(residual))
            raise SingularityError(
                f"{self.robot.name} at q = {np.round(qs[k], 6).tolist()}: the constraints have a higher rank "
                f"here (J G = {residual[k]:.3g}): fewer motions are possible than at a generic configuration"
            )
        return G, pinv

    def pose(self, frame, q):
        """Homogeneous transform 0T_frame of a frame of the tree, (4, 4) or (N, 4, 4).

        ``q`` is the configuration every function here takes: every joint
        variable in ``robot.joint_labels`` order (a wheeled base's posture
        ``x, y, th`` and wheels included; a closed loop's q must close the
        loops: ``configuration(q_active)`` gives one from the active joints).
        Every frame of the robot has one: a closing frame, the chassis of a
        wheeled base (frame 0 is then the ground).  The generated program of
        the tree (:attr:`tree`, :meth:`NumericDynamics.pose
        <kanerobot.dynamics.dynamic_model.NumericDynamics.pose>`) runs it.
        """
        qs, single = self._states(q, self.nc, "q")
        self._check(qs)
        T = self.tree.pose(frame, qs)
        return T[0] if single else T

    def jacobian(self, frame, q, projection=None):
        """Jacobian of the origin of ``frame`` in the independent speeds: ``[V; w] = J qd_a``, (6, m) or (N, 6, m).

        ``J = J_tree(q) G(q)``: the tree's Jacobian (one column per joint,
        ``tree.jacobian(frame, q, projection)``, that of
        :func:`kanerobot.kinematics.jacobian`) times ``G = dq/dq_a``, so that
        it maps the speeds of this model and of its simulations (a closed
        loop's active joints, a wheeled base's independent speeds) to the
        twist of the frame, linear rows first, projected into frame
        ``projection``'s axes (frame 0 by default).

        Raises
        ------
        SingularityError
            Where the independent speeds do not determine the others.
        """
        qs, single = self._states(q, self.nc, "q")
        G, _ = self._G(qs)
        J = self.tree.jacobian(frame, qs, projection) @ G
        return J[0] if single else J

    @property
    def state_space(self):
        """The model's :class:`~kanerobot.state_space.StateSpace` with ``qdot = G(q) qd`` (built once)."""
        if "_state_space" not in self.__dict__:
            values = {str(k): v for k, v in self.tree.values.items()} | self.values_by_name
            self._state_space = self.model.state_space.bind(self, values=values, **self._state_hooks())
        return self._state_space

    def _state_hooks(self):
        """The numeric maps of :attr:`state_space` (subclasses add theirs); on a floating tree the free
        flyer's: ``dq/dt`` its configuration rates, the quaternion normalised, the base's pose and momentum."""
        rows = self._joint_speeds
        hooks = {
            "qdot_map": self.configuration_derivative, "rate_values": self._joint_rates, "rate_matrix": lambda q: self.G(q)[..., rows, :],
            "rate_bias_map": lambda q, qd: self.accelerations(q, qd, np.zeros(self.m))[..., rows],
        }  # fmt: skip
        if self.model.floating:
            hooks |= {"prepare_map": self.tree._prepared, "start_check": self.tree._starting_configuration,
                      "base_pose": self.tree._root_pose, "monitor_map": self._monitors}  # fmt: skip
        return hooks

    def _tree_speeds(self, q, qd_a):
        """Every speed of the tree ``G qd_a``; a batch of configurations takes one speed or as many."""
        if np.ndim(q) == 2:
            return np.atleast_2d(self.velocities(q, np.broadcast_to(qd_a, (len(q), self.m))))
        return self.velocities(q, qd_a)

    def _joint_rates(self, q, qd_a):
        """Every joint's rate (the rows of ``G qd_a`` after a floating base's speeds): where friction acts."""
        return self._tree_speeds(q, qd_a)[..., self._joint_speeds]

    def _monitors(self, q_raw, q, qd_a):
        """The floating tree's monitors (quaternion norm, base pose, momentum) at the tree's speeds ``G qd_a``."""
        return self.tree._monitors(q_raw, q, self._tree_speeds(q, qd_a)) if len(q) else {}

    def G(self, q):
        """``dq/dq_a``, shape (n, m) or (N, n, m): ``qd = G qd_a``."""
        qs, single = self._states(q, self.nc, "q")
        G, _ = self._G(qs)
        return G[0] if single else G

    def velocities(self, q, qd_a):
        """Every joint rate ``qd = G(q) qd_a``, shape (n,) or (N, n)."""
        qs, qa, single = self._prepare(q, qd_a)
        G, _ = self._G(qs)
        out = (G @ qa[..., None])[..., 0]
        return out[0] if single else out

    def _bias(self, qs, qd, pinv, qdd_a=None, G=None):
        """``qdd`` at the independent accelerations ``qdd_a`` (0 if None): ``G qdd_a + g``, (N, n)."""
        rate = self._constraint_rate(qs, qd, qd)
        out = np.zeros_like(qd) if qdd_a is None else (G @ qdd_a[..., None])[..., 0]
        out[:, self.dep] += -(pinv @ rate[..., None])[..., 0]
        return out

    def accelerations(self, q, qd_a, qdd_a):
        """Every joint acceleration ``G qdd_a + g``, shape (n,) or (N, n)."""
        qs, qa, single = self._prepare(q, qd_a)
        qdda = np.broadcast_to(self._states(qdd_a, self.m, "qdd_a")[0], qa.shape)
        G, pinv = self._G(qs)
        qd = (G @ qa[..., None])[..., 0]
        out = self._bias(qs, qd, pinv, qdda, G)
        return out[0] if single else out

    def Gdot(self, q, qd_a):
        """Time derivative of G along ``qd_a``: ``J_d Gdot_d = -Jdot G``, shape (n, m) or (N, n, m)."""
        qs, qa, single = self._prepare(q, qd_a)
        G, pinv = self._G(qs)
        qd = (G @ qa[..., None])[..., 0]
        out = np.zeros_like(G)
        for c in range(self.m):
            rate = self._constraint_rate(qs, np.ascontiguousarray(G[:, :, c]), qd)
            out[:, self.dep, c] = -(pinv @ rate[..., None])[..., 0]
        return out[0] if single else out

    # -------------------------------------------------------------- balance
    def center_of_mass(self, q: ArrayLike) -> np.ndarray:
        """Centre of mass of the tree's moving links, in frame 0: shape (3,) or (N, 3).

        The tree's (:meth:`NumericDynamics.center_of_mass
        <kanerobot.dynamics.dynamic_model.NumericDynamics.center_of_mass>`):
        the constraints do not move a body; ``q`` must satisfy them (a closed
        configuration of the loops).
        """
        qs, single = self._states(q, self.nc, "q")
        self._check(qs)
        c = self.tree.center_of_mass(qs)
        return c[0] if single else c

    def center_of_mass_jacobian(self, q: ArrayLike) -> np.ndarray:
        """``J_G G``: the tree's Jacobian of the centre of mass on the independent speeds, (3, m) or (N, 3, m)."""
        return self._on_independent_speeds(self.tree.center_of_mass_jacobian, q)

    def centroidal_momentum_matrix(self, q: ArrayLike) -> np.ndarray:
        """``A_G G``: the centroidal momentum matrix of the independent speeds, (6, m) or (N, 6, m).

        The tree's ``A_G`` (every joint free,
        :func:`~kanerobot.dynamics.centroidal.centroidal_momentum_matrix`)
        times the constraints' speed map ``qd = G(q) qd_a``: rolling wheels
        and loop closures add no body, only a relation between the rates, so
        ``h_G = A_G qd = (A_G G) qd_a``.  For a wheeled base the ground is
        frame 0 (the posture's x, y, theta are joints of the tree); the
        contact forces change ``h_G``, which is what balancing on wheels controls.
        """
        return self._on_independent_speeds(self.tree.centroidal_momentum_matrix, q)

    def _on_independent_speeds(self, matrix, q):
        qs, single = self._states(q, self.nc, "q")
        G, _ = self._G(qs)
        out = matrix(qs) @ G
        return out[0] if single else out

    def _speeds(self, qd_a):
        return self._states(qd_a, self.m, "qd_a")

    # ------------------------------------------------------------- dynamics
    def _prepare(self, q, qd_a):
        """``q`` and ``qd_a`` as (N, n) and (N, m) arrays of one batch, and whether both were single."""
        qs, single = self._states(q, self.nc, "q")
        qa, single_a = self._states(qd_a, self.m, "qd_a")
        batch = max(qs.shape[0], qa.shape[0])
        qs = np.ascontiguousarray(np.broadcast_to(qs, (batch, self.nc)))
        qa = np.ascontiguousarray(np.broadcast_to(qa, (batch, self.m)))
        return qs, qa, single and single_a

    def _tree_mass_matrix(self, qs):
        return np.asarray(self.tree.mass_matrix(qs)).reshape(qs.shape[0], self.n, self.n)

    def total_mass(self) -> float:
        """Mass of the tree's moving links (:meth:`NumericDynamics.total_mass
        <kanerobot.dynamics.dynamic_model.NumericDynamics.total_mass>`)."""
        return self.tree.total_mass()

    def configuration_derivative(self, q, qd):
        """``dq/dt`` at the independent speeds ``qd``: every joint's rate ``G(q) qd`` (:meth:`velocities`),
        through the joint models where a configuration is not its speeds' integral (a floating base's
        ``wR_0 v`` and quaternion rate, a ball joint's quaternion rate)."""
        if not self.tree._curved:
            return self.velocities(q, qd)
        return self.tree.configuration_derivative(q, self.velocities(q, qd))

    def inverse_dynamics(self, q, qd, qdd, wrench=None, out=None):
        """Generalized forces of the independent speeds, ``G^T Gamma(q, G qd_a, G qdd_a + g)``,
        shape (m,) or (N, m); ``qd``, ``qdd`` the independent speeds ``qd_a`` and their
        derivatives.  ``wrench``, ``out``: as for the tree (:meth:`NumericDynamics.inverse_dynamics`)."""
        qs, qa, single = self._prepare(q, qd)
        qdda = np.broadcast_to(self._states(qdd, self.m, "qdd_a")[0], qa.shape)
        G, pinv = self._G(qs)
        qd = (G @ qa[..., None])[..., 0]
        qdd = self._bias(qs, qd, pinv, qdda, G)
        gamma = np.atleast_2d(self.tree.inverse_dynamics(qs, qd, qdd, wrench=wrench))
        result = (np.swapaxes(G, 1, 2) @ gamma[..., None])[..., 0]
        return self._output(result[0] if single else result, out)

    def mass_matrix(self, q, out=None):
        """``A_a = G^T A G``, shape (m, m) or (N, m, m); ``out`` as for :meth:`inverse_dynamics`."""
        qs, single = self._states(q, self.nc, "q")
        G, _ = self._G(qs)
        result = np.swapaxes(G, 1, 2) @ self._tree_mass_matrix(qs) @ G
        return self._output(result[0] if single else result, out)

    def h(self, q, qd, wrench=None, out=None):
        """``H_a = G^T (A g + H)``: the generalized forces at ``qdd_a = 0``, shape (m,) or (N, m)."""
        qs, qa, single = self._prepare(q, qd)
        result = self.inverse_dynamics(qs, qa, np.zeros_like(qa), wrench=wrench)
        return self._output(result[0] if single else result, out)

    def gravity(self, q, out=None):
        """``Q_a = G^T Q``, shape (m,) or (N, m); ``out`` as for :meth:`inverse_dynamics`."""
        qs, single = self._states(q, self.nc, "q")
        G, _ = self._G(qs)
        Q = np.atleast_2d(self.tree.gravity(qs))
        result = (np.swapaxes(G, 1, 2) @ Q[..., None])[..., 0]
        return self._output(result[0] if single else result, out)

    def coriolis_matrix(self, q, qd, out=None):
        """``C_a = G^T (A Gdot + C G)``, shape (m, m) or (N, m, m): ``Adot_a - 2 C_a`` is skew-symmetric."""
        qs, qa, single = self._prepare(q, qd)
        G, _ = self._G(qs)
        Gdot = np.asarray(self.Gdot(qs, qa)).reshape(G.shape)
        qd = (G @ qa[..., None])[..., 0]
        C = np.asarray(self.tree.coriolis_matrix(qs, qd)).reshape(qs.shape[0], self.n, self.n)
        result = np.swapaxes(G, 1, 2) @ (self._tree_mass_matrix(qs) @ Gdot + C @ G)
        return self._output(result[0] if single else result, out)

    def direct_dynamics(self, q, qd, tau, wrench=None, out=None):
        """Independent accelerations ``A_a^-1 (B tau_a - H_a)``, shape (m,) or (N, m): ``tau_a`` the independent
        joints' (``B`` puts 0 on a floating base's six); ``out`` as for :meth:`inverse_dynamics`."""
        qs, qa, single = self._prepare(q, qd)
        driven = self._states(tau, len(self._driven), "tau_a")[0]
        tau = np.zeros(qa.shape)
        tau[:, self._driven] = driven  # a floating base's six: no torque
        G, pinv = self._G(qs)
        qd = (G @ qa[..., None])[..., 0]
        g = self._bias(qs, qd, pinv)
        gamma = np.atleast_2d(self.tree.inverse_dynamics(qs, qd, g, wrench=wrench))
        Gt = np.swapaxes(G, 1, 2)
        A = Gt @ self._tree_mass_matrix(qs) @ G
        result = solve_dynamics(A, tau - (Gt @ gamma[..., None])[..., 0], self.robot.name)
        return self._output(result[0] if single else result, out)

    def kinetic_energy(self, q, qd_a):
        """``1/2 qd_a^T A_a qd_a`` (rotor inertias IA included), a float or (N,)."""
        qs, qa, single = self._prepare(q, qd_a)
        A = np.asarray(self.mass_matrix(qs)).reshape(qs.shape[0], self.m, self.m)
        out = 0.5 * np.einsum("ni,nij,nj->n", qa, A, qa)
        return float(out[0]) if single else out
