"""Wheeled mobile robots: rolling constraints, and the tree model projected on the independent speeds.

OpenSYMORO section IV-E (eqs 42-43); Campion and Chung, *Wheeled robots*.
A wheeled robot (``wheeled = true``) is a tree of frames whose first three
joints are the planar posture of its chassis, ``xi = [x y theta]``
(:attr:`Robot.posture <kanerobot.robot.description.Robot.posture>`), and
whose :class:`~kanerobot.robot.description.Wheel` s are revolute joints
about their axles, the joint variable being the wheel's rotation.

Each wheel rolls without slipping or sliding: two rows per wheel of
``W(q) qd = 0`` (:func:`~kanerobot.rolling.wheel_constraints`, shape (2 * wheels, n), frame 0;
:func:`~kanerobot.rolling.check_wheels` checks the geometry).  The joint rates split into
``r = rank W`` dependent ones and ``m = n - r`` independent ones ``qd_a``
(:func:`~kanerobot.rolling.mobility`, ``Robot.dof``; :attr:`WheeledModel.independent`,
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

import numpy as np
import sympy

from kanerobot.dynamics.constrained import (
    ConstrainedDynamics,
    ConstrainedModel,
    VelocityConstraint,
    batched_function,
    constrained_program,
    label_name,
)
from kanerobot.dynamics.dynamic_model import METHODS
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import BASE, Robot
from kanerobot.robot.joints import Prismatic
from kanerobot.rolling import check_wheeled_robot, ground, wheel_constraints

__all__ = [
    "NonholonomicKane",
    "Rolling",
    "WheeledDynamics",
    "WheeledModel",
    "adjugate_solver",
    "nonholonomic_kanes_method",
    "tree_robot",
    "wheeled_program",
]


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


class Rolling(VelocityConstraint):
    """The rolling constraints of a wheeled robot's wheels as a :class:`~kanerobot.dynamics.constrained.VelocityConstraint`.

    ``J = W`` (:func:`~kanerobot.rolling.wheel_constraints`, frame 0) on the
    joints of :func:`tree_robot`, its independent speeds those of
    :attr:`constraints` (the default choice, or ``independent``); the
    symbolic solution on :attr:`~kanerobot.rolling.WheelConstraints.square_rows`
    (:func:`wheeled_program`).

    Examples
    --------
    >>> import kanerobot as kr
    >>> c = Rolling(kr.load(kr.frames_path("diffdrive")))
    >>> c.J.shape, c.independent, c.dependent
    ((6, 7), ('wr', 'wl'), ('x', 'y', 'th', 'cs', 'cw'))
    """

    kind = "wheeled base"
    adjective = "wheeled"

    def __init__(self, robot, independent=None):
        check_wheeled_robot(robot, "the wheeled dynamic model")
        self.robot, self.tree = robot, tree_robot(robot)
        self.constraints = wheel_constraints(robot, None if independent is None else tuple(independent))
        self.J = self.constraints.W
        self.independent = self.constraints.independent

    @property
    def dependent(self):
        return self.constraints.dependent

    def bias(self, v):
        c = self.constraints
        return c.Wv_dot.xreplace(dict(zip(c.velocity, v)))

    @property
    def symbols(self):
        return set(self.constraints.geometric_symbols)

    @property
    def program_inputs(self):
        return sorted(self.constraints.geometric_symbols, key=str)

    def speed_map(self, target, rates=True, accelerations=True):
        """The dependent speeds on the square rows of W (:func:`wheeled_program`)."""
        return _rolling_speed_map(self, target, rates, accelerations)


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
    constraints : kanerobot.rolling.WheelConstraints
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

    def __init__(self, robot, method="newton-euler", independent=None):
        if method not in METHODS:
            raise KaneRobotError(f"unknown method {method!r}: available are {', '.join(METHODS)}")
        super().__init__(robot, method, Rolling(robot, independent))
        self.constraints = self.constraint.constraints
        self.dependent = self.constraints.dependent

    @property
    def dynamics(self):
        return WheeledDynamics

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

    @property
    def state_space(self):
        """The constrained :class:`~kanerobot.state_space.StateSpace` of a wheeled base."""
        return super().state_space

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
        self.constraints = model.constraints
        self._potential = self._potential_function(self.bound)

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
        qs, single = self._states(q, self.nc, "q")
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
        qs, single = self._states(q, self.nc, "q")
        v, _ = self._states(qd, self.n, "qd")
        W = self._constraint_matrix(qs)
        out = np.abs((W @ np.broadcast_to(v, qs.shape)[..., None])[..., 0]).max(axis=1)
        return float(out[0]) if single else out

    def potential_energy(self, q):
        """``V(q) = -G . sum_j (M_j 0P_j + 0R_j MS_j)``, a float or (N,)."""
        qs, single = self._states(q, self.nc, "q")
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

    - on the rows :attr:`~kanerobot.rolling.WheelConstraints.square_rows` of W, the square
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
    return constrained_program(model, name)


def _rolling_speed_map(constraint, target, rates, accelerations):
    """:meth:`Rolling.speed_map`: ``G_d = -WDI WI`` on the square rows, the dependent rates and accelerations."""
    robot, c = constraint.robot, constraint.constraints
    labels = robot.joint_labels
    jp = robot.joint_parameters
    ind, dep = list(c.independent), list(c.dependent)
    QP = {label: sympy.sympify(jp[label]["QP"]) for label in labels}
    QDP = {label: sympy.sympify(jp[label]["QDP"]) for label in labels}
    m = len(ind)
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
            qdd_a = sympy.Matrix([QDP[a] if accelerations else 0 for a in ind])
            qdd_d = Gd * qdd_a - WDI * JDQ
            for r, d in enumerate(dep):
                mapping[QDP[d]] = target.assign(str(QDP[d]), qdd_d[r])
    return Gd, mapping


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
        and ``a`` (an independent path from :func:`~kanerobot.rolling.wheel_constraints`;
        small robots).  ``"system"``: the bodies and loads of
        :class:`~kanerobot.dynamics.kane.KaneSystem` (body-frame kinematics
        in intermediate symbols) with the rows of ``W`` in ``q(t)``.
    independent : sequence of str, optional
        As :func:`~kanerobot.rolling.wheel_constraints`.
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

        n0, _ = ground(robot)
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
        if isinstance(frame.joint, Prismatic):
            P.set_vel(frames[i], P.pos_from(origins[i]).dt(frames[i]))
            P.v1pt_theory(origins[i], N, frames[i])
        else:
            P.v2pt_theory(origins[i], N, frames[i])
        origins[j] = P
    return origins
