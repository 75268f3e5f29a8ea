"""Dynamics of closed-loop robots: the tree model projected on the active joints.

SYMORO+ section 5.2.  A closed-loop robot is described as its equivalent
tree (each loop cut at one passive joint k, the cut joint, whose frame is
closed by a fixed frame k+B) plus the loop-closure equations.  Any engine
gives the dynamic model of the tree, ``Gamma_tr = A_tr qdd + H_tr``, for all
the tree's joints as if they were free.  The loops tie them together: the
kinematic constraint equations (:func:`kanerobot.kinematics.loop_velocity_constraints`)
``J(q) qd = 0`` give every joint rate from the active ones,

    qd  = G qd_a,               G = dq / dq_a  (identity rows for the active joints)
    qdd = G qdd_a + g,          J (G qdd_a + g) + Jdot qd = 0  =>  J_o g_o = -Jdot qd

(``_o`` the non-active columns: passive and cut joints).  The passive and
cut joints carry no motor, so by the principle of virtual work, for every
admissible displacement ``dq = G dq_a``, ``Gamma_a . dq_a = Gamma_tr . dq``:

    Gamma_a = G^T Gamma_tr(q, G qd_a, G qdd_a + g)
            = Gamma_tr,a + W^T Gamma_tr,p + W_c^T Gamma_tr,c

which is SYMORO+'s ``Gamma_m = Gamma_a + W^T Gamma_p`` (the cut joints'
tree torques vanish: nothing is carried beyond them).  Split like the tree
model:

    A_a = G^T A_tr G                    (dof x dof)
    H_a = G^T (A_tr g + H_tr(q, qd))     (g at qdd_a = 0)
    Q_a = G^T Q_tr
    C_a = G^T (A_tr Gdot + C_tr G)       (Christoffel form of A_a)

``C_a`` is the Christoffel matrix of ``A_a`` seen as a function of the
active joints (the first-kind Christoffel symbols of a pulled-back metric);
it is also the seed's getAC rule ``C_a = 1/2 d H_vel,a / d qd_a``, and
``Adot_a - 2 C_a`` is skew-symmetric.

In Kane's method the loop closure enters as velocity constraints: the
passive and cut speeds are dependent, ``u_o = X u_a`` (``G = [I; X]``), the
partial velocities for the independent speeds become ``v~_r = v_r +
sum_s v_s X_sr``, and the generalized forces ``F~_r = F_r + sum_s F_s X_sr``
(Kane and Levinson, nonholonomic systems) are again ``G^T F``.  The Kane
engine's tree programs with this projection are Kane's equations of the
constrained system; ``tests/test_closed_loop.py`` checks them against
sympy's own ``KanesMethod`` with ``u_dependent`` and ``velocity_constraints``.

Configurations: a closed-loop robot's model takes the whole joint vector q
(every joint of the tree, in ``robot.joint_labels`` order) because the active
joints alone do not fix the passive ones (assembly modes);
:meth:`ClosedLoopDynamics.configuration` solves the loops for given active
joints.  Speeds and accelerations are those of the active joints.
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
    speeds,
)
from kanerobot.errors import KaneRobotError
from kanerobot.kinematics import loop_velocity_constraints

__all__ = ["ClosedLoopDynamics", "ClosedLoopModel", "LoopClosure", "closed_loop_program", "equivalent_tree"]

#: Largest loop-closure residual accepted for a configuration q.
CLOSURE_TOL = 1e-8
#: Closure residual above which a simulated configuration is brought back onto the loops.
PROJECTION_TOL = 1e-10


class LoopClosure(VelocityConstraint):
    """The kinematic constraint equations of the loops on every speed of the tree (SYMORO+ eq. 11-13).

    :func:`kanerobot.kinematics.loop_velocity_constraints`'s, one column per
    speed: a ball joint's three angular speeds (in its frame), a planar
    joint's ``VX VY WZ``.  ``J`` (6B x nv) stacks the 6 rows of every loop;
    ``Wa``, ``Wp``, ``Wac``, ``Wpc``, ``Wc`` are its blocks of eq. 12 (rows
    :attr:`rows` or :attr:`cut_rows`, the columns of the active, passive and
    cut joints' speeds).  The rows of each cut joint (where its columns do
    not vanish) form the second block; of the others, the identically zero
    ones are dropped.  The independent speeds are the active joints'.

    Examples
    --------
    >>> import kanerobot as kr
    >>> c = LoopClosure(kr.load(kr.frames_path("fourbar")))
    >>> c.J.shape, c.rows, c.cut_rows, c.Wp.shape, c.independent, c.dependent
    ((6, 4), (0, 1), (5,), (2, 2), ('1',), ('2', '3', '4'))
    """

    kind = "closed loop"
    adjective = "closed-loop"

    def __init__(self, robot):
        self.robot, self.tree = robot, equivalent_tree(robot)
        equations = loop_velocity_constraints(robot)  # eq. 11-13, one column per speed
        self.J, self.active, self.passive, self.cut = equations.J, equations.active, equations.passive, equations.cut
        self.rows, self.zero_rows, self.cut_rows = equations.rows, equations.zero_rows, equations.cut_rows
        self.Wa, self.Wp, self.Wc, self.Wac, self.Wpc = equations.Wa, equations.Wp, equations.Wc, equations.Wac, equations.Wpc
        self.independent = self.active

    @property
    def loaded(self):
        """The passive joints: nothing is carried beyond a cut joint."""
        return self.passive

    def speed_map(self, target, rates=True, accelerations=True):
        """The passive and cut joints' rates and accelerations (:func:`loop_kinematics`)."""
        return _loop_speed_map(self, target, rates, accelerations)


def equivalent_tree(robot):
    """The robot with its loops opened at the cut joints (SYMORO+ section 2.1).

    The cut joints stay joints of the tree, free and massless beyond (no
    link is attached to a cut frame), and the closing frames stay fixed
    frames of their links.

    Examples
    --------
    >>> import kanerobot as kr
    >>> sr400 = kr.load(kr.frames_path("sr400"))
    >>> tree = equivalent_tree(sr400)
    >>> tree.loops, tree.joint_labels == sr400.joint_labels, tree.links == sr400.links
    ((), True, True)
    """
    if not robot.loops:
        raise KaneRobotError(f"robot {robot.name} has no loops")
    return dataclasses.replace(robot, loops=())


class ClosedLoopModel(ConstrainedModel):
    """Dynamic models of a closed-loop robot by one engine (see the module notes).

    Made by :func:`kanerobot.derive` for a robot with loops.

    Attributes
    ----------
    robot : Robot
        The closed-loop robot.
    method : str
        The engine of the tree model.
    tree : DynamicModel
        The models of :func:`equivalent_tree` (programs over every joint).
    constraints : LoopClosure
        ``J``, ``Wa``, ``Wp``, ... of the loop closure, one column per speed.

    Examples
    --------
    >>> import kanerobot as kr
    >>> model = kr.derive(kr.load(kr.frames_path("fourbar")))
    >>> model.robot.active_joints, model.constraints.J.shape
    (('1',), (6, 4))
    """

    def __init__(self, robot, method):
        super().__init__(robot, method, LoopClosure(robot))
        self.constraints = self.constraint

    @property
    def dynamics(self):
        return ClosedLoopDynamics

    @property
    def Jdot(self):
        """``dJ/dt`` of the loop constraint (:attr:`LoopClosure.Jdot`)."""
        return self.constraint.Jdot

    @property
    def parameters(self):
        """Names of the tree models' parameters and of the geometric symbols
        of the loop closure, in the robot's order (:meth:`~kanerobot.robot.description.Robot.parameter_order`)."""
        names = set(self.tree.parameters)
        joint = {str(s) for s in self.robot.joint_symbols} | {str(s) for s in self.robot.qd}
        for expr in list(self.constraints.J) + list(self.Jdot):
            names |= {str(s) for s in expr.free_symbols if str(s) not in joint}
        names |= {str(s) for s in self._closure_expressions().free_symbols if str(s) not in joint}
        return self.robot.parameter_order(names)

    def _closure_expressions(self):
        from kanerobot.geometry import loop_constraints

        if not hasattr(self, "_closure"):
            self._closure = sympy.Matrix(loop_constraints(self.robot))
        return self._closure

    @property
    def state_space(self):
        """The constrained :class:`~kanerobot.state_space.StateSpace`, ``q`` a closed configuration, ``qd`` the active joints."""
        robot = self.robot
        active = ", ".join(robot.active_joints)
        return dataclasses.replace(
            super().state_space, kind="closed loop", adjective="closed-loop", q_note=" (a closed configuration)", joint_state=True,
            layout_q=f"every joint {', '.join(robot.joint_labels)}, closing the loops", layout_qd=f"the active joints {active}",
            tau_layout=f"active joints {active}",
        )  # fmt: skip

    def _rebuilt(self, robot):
        """The model of this kind (method, options) of another robot (``numeric(..., bind=True)``'s)."""
        return type(self)(robot, self.method)


def closed_loop_program(model, name):
    """The closed-loop model ``name`` as one program (SYMORO+ 5.2, eq. 13).

    The program computes, from the active joints' rates:

    - ``W = -Wp^-1 Wa`` (``WPI = Wp^-1`` by adjugate over ``DETWP``);
    - the passive rates ``QP_p = W QP_a`` and, when needed, the cut joints'
      rates from the cut rows ``Wac QP_a + Wpc QP_p + Wc QP_c = 0``;
    - the passive accelerations ``QDP_p = W QDP_a - WPI (Jdot qd)``;
    - the tree model (its program spliced in, tree outputs named
      ``GT<label>``, ``QT<label>``, ``AT<i><j>``);
    - the projection on the active joints: ``GAM_a = GT_a + W^T GT_p``
      (``h``: the same at ``QDP_a = 0``), ``Q_a = QT_a + W^T QT_p``,
      ``A_a = G^T A_tr G`` with ``G = [I; W]``.

    Inputs: every joint variable (a closed configuration), the active
    joints' ``QP``, ``QDP``, and the parameters.

    Parameters
    ----------
    model : ClosedLoopModel
    name : {"inverse_dynamics", "h", "gravity", "mass_matrix"}

    Returns
    -------
    Program

    Raises
    ------
    KaneRobotError
        For the models without a program, and when ``Wp`` (or ``Wc``) is
        not square after removing the identically zero rows (then only the
        numeric model, which solves by least squares, applies).
    """
    return constrained_program(model, name)


def dependent_symbols(robot, constraints):
    """The rates and accelerations of the passive and cut joints: not inputs of
    a closed-loop program (it computes them from the active ones)."""
    return {x for s in speeds(robot, list(constraints.passive) + list(constraints.cut)) for x in (s.qd, s.qdd)}


def loop_kinematics(model, target, rates=True, accelerations=True):
    """``model.constraints.speed_map(target, rates, accelerations)``: assign in ``target`` what a closed-loop program computes from the active joints.

    - ``W = -Wp^-1 Wa`` (``WPI = Wp^-1`` by adjugate over ``DETWP``, defined
      wherever Wp is invertible, no pivoting);
    - with ``rates``: the passive rates ``QP_p = W QP_a``, the cut joints'
      rates from the cut rows ``Wac QP_a + Wpc QP_p + Wc QP_c = 0``, and the
      passive accelerations ``QDP_p = W QDP_a - WPI (Jdot qd)`` (``QDP_a = 0``
      unless ``accelerations``); a cut joint's acceleration is 0 (nothing
      is carried beyond it).

    Parameters
    ----------
    model : ClosedLoopModel
    target : Program
    rates, accelerations : bool, optional

    Returns
    -------
    W : sympy.Matrix
        (passive, active), of assigned symbols ``W<passive>_<active>``.
    mapping : dict
        ``{QP or QDP symbol of a passive or cut joint: its value in target}``,
        for splicing the tree's program (:func:`~kanerobot.dynamics.constrained._splice`).

    Raises
    ------
    KaneRobotError
        When ``Wp`` (or ``Wc``) is not square after removing the
        identically zero rows (then only the numeric model, which solves by
        least squares, applies).
    """
    return model.constraints.speed_map(target, rates, accelerations)


def _loop_speed_map(c, target, rates, accelerations):
    """:func:`loop_kinematics` of the :class:`LoopClosure` ``c``."""
    robot = c.robot
    if c.Wp.rows != c.Wp.cols:
        raise KaneRobotError(
            f"{robot.name}: Wp is {c.Wp.rows} x {c.Wp.cols} after removing the identically zero rows, not "
            f"square: no symbolic W; use model.numeric(values) (least squares at each configuration)"
        )
    active, passive, cut = speeds(robot, c.active), speeds(robot, c.passive), speeds(robot, c.cut)
    Wp = target.assign_matrix("WP{i}{j}", target.replace_sin_cos(c.Wp))
    Wa = target.assign_matrix("WA{i}{j}", target.replace_sin_cos(c.Wa))
    det = target.assign("DETWP", Wp.det(method="berkowitz"))
    WPI = target.assign_matrix("WPI{i}{j}", Wp.adjugate(method="berkowitz") / det)
    W = target.assign_matrix(lambda i, j: label_name("W", passive[i - 1].suffix, active[j - 1].suffix), -WPI * Wa)
    mapping: dict[sympy.Symbol, sympy.Expr] = {}
    if not rates:
        return W, mapping
    qd_a = sympy.Matrix([a.qd for a in active])
    for r, p in enumerate(passive):
        mapping[p.qd] = target.assign(str(p.qd), (W[r, :] * qd_a)[0])
    if cut:
        if c.Wc.rows != c.Wc.cols:
            raise KaneRobotError(f"{robot.name}: Wc is {c.Wc.rows} x {c.Wc.cols}, not square: no symbolic cut-joint rates")
        qd_p = sympy.Matrix([mapping[p.qd] for p in passive])
        rhs = -(target.replace_sin_cos(c.Wac) * qd_a + target.replace_sin_cos(c.Wpc) * qd_p)
        Wc = target.replace_sin_cos(c.Wc)
        qd_c = Wc.adjugate(method="berkowitz") * rhs / Wc.det(method="berkowitz")
        for r, k in enumerate(cut):
            mapping[k.qd] = target.assign(str(k.qd), qd_c[r])
    every = speeds(robot)
    qd = sympy.Matrix([mapping.get(x.qd, x.qd) for x in every])
    Jdot = target.replace_sin_cos(c.Jdot.extract(list(c.rows), list(range(len(every)))))
    JDQ = target.assign_matrix("JDQ{i}", Jdot * qd)
    qdd_a = sympy.Matrix([a.qdd if accelerations else 0 for a in active])
    qdd_p = W * qdd_a - WPI * JDQ
    for r, p in enumerate(passive):
        mapping[p.qdd] = target.assign(str(p.qdd), qdd_p[r])
    for k in cut:
        mapping[k.qdd] = sympy.S.Zero
    return W, mapping


class ClosedLoopDynamics(ConstrainedDynamics):
    """Numeric dynamics of a closed-loop robot with bound parameters.

    The projection on the active joints is
    :class:`~kanerobot.dynamics.constrained.ConstrainedDynamics`'s with
    ``J`` the kinematic loop constraints; this class adds solving the loops
    and checks every configuration it is given.  Every function takes one
    state or a batch: ``q`` of shape (nj,) or (N, nj), every joint of the
    tree in ``robot.joint_labels`` order, a configuration that closes the
    loops (see :meth:`configuration`); ``qd``, ``qdd``, ``tau`` of the
    active joints, (dof,) or (N, dof).

    Raises
    ------
    KaneRobotError
        When ``q`` does not close the loops (residual above
        :data:`CLOSURE_TOL`).
    SingularityError
        At a configuration where the passive rates are not determined by
        the active ones.

    Examples
    --------
    >>> import numpy as np, kanerobot as kr
    >>> from kanerobot.dynamics.parameters import random_parameters
    >>> robot = kr.load(kr.frames_path("fourbar"))
    >>> model = kr.derive(robot)
    >>> fn = model.numeric(random_parameters(robot, np.random.default_rng(0)), backend="numpy")
    >>> q = fn.configuration([1.0], guess=[-1.0, 1.0, -1.0])
    >>> q.round(6).tolist()
    [1.0, -1.0, 1.0, -1.0]
    >>> fn.mass_matrix(q).shape, fn.inverse_dynamics(q, [0.5], [1.0]).shape
    ((1, 1), (1,))
    """

    def __init__(self, model, values, backend="auto", physical=True, check=True):
        super().__init__(model, values, backend=backend, physical=physical, check=check)
        q, state = list(self.robot.q), {str(x) for x in list(self.robot.q) + list(self.robot.qd)}
        geometric = {s: x for s, x in self.bound.items() if str(s) not in state}
        self._closure = batched_function(list(model._closure_expressions()), [q], geometric)
        self._values = {str(s): x for s, x in geometric.items()}
        self._solver = None
        self.nj = self.nc

    def _check(self, qs):
        residual = np.abs(self._closure(qs)).max(axis=1)
        if np.any(~(residual <= CLOSURE_TOL)):
            k = int(np.argmax(~(residual <= CLOSURE_TOL)))
            raise KaneRobotError(
                f"q = {np.round(qs[k], 6).tolist()} does not close the loops of {self.robot.name} "
                f"(residual {residual[k]:.3g} > {CLOSURE_TOL:g}): give every joint of a closed "
                f"configuration, e.g. from configuration(q_active)"
            )

    def _state_hooks(self):
        """The constrained maps, and the loops closed: where a run drifts off them, at the start, along a run."""
        return super()._state_hooks() | {
            "prepare_map": self._closed, "start_check": self._check_closed, "configuration_map": self.configuration,
            "monitor_map": lambda q_raw, q, qd: {"closure_residual": np.atleast_1d(self.closure_residual(q_raw)) if len(q_raw) else np.zeros(0)},
        }  # fmt: skip

    def _closed(self, q):
        """``q``, or where it drifted off the loops (residual above :data:`PROJECTION_TOL`) the passive joints brought back by Newton from there."""
        if self.closure_residual(q) <= PROJECTION_TOL:
            return q
        from kanerobot.geometry import coordinate_starts

        start = coordinate_starts(self.robot)  # the coordinates of one-coordinate joints (the solver's)
        guess = {label: q[start[label]] for label in self.dependent if self.robot.frame(label).joint.nq == 1}
        closed = self.configuration([q[start[label]] for label in self.model.independent], guess=guess)
        for label in self.dependent:  # a ball cut's quaternion on the integrated one's side (q and -q turn alike, but
            s, n = start[label], self.robot.frame(label).joint.nq  # its rates, taken at the closed one, must move the integrated one)
            if n == 4 and np.dot(closed[s:s + n], q[s:s + n]) < 0:
                closed[s:s + n] = -closed[s:s + n]
        return closed

    def _check_closed(self, q, what):
        residual = self.closure_residual(q)
        if not residual <= CLOSURE_TOL:
            raise KaneRobotError(
                f"{what}: its q does not close the loops (residual {residual:.3g} > {CLOSURE_TOL:g}); "
                f"give every joint of a closed configuration, e.g. fn.configuration(q_active)"
            )
        return q

    def configuration(self, q_active, guess=None, tol=1e-10):
        """All joint values that close the loops for the active joints ``q_active``.

        See :func:`kanerobot.geometry.solve_loops` (``guess``: the passive
        joints of the loops, the assembly mode to follow).

        Returns
        -------
        numpy.ndarray, shape (nc,)
            Every coordinate of ``robot.q``: a ball joint that cuts a loop
            (an MJCF ``<connect>``'s) turned to close it.

        Raises
        ------
        KaneRobotError
            For a robot with another joint of several coordinates (a ball
            joint not cutting a loop, a planar joint): the solver takes one
            value per joint.
        """
        if self._solver is None:
            from kanerobot.geometry import loop_solver

            self._solver = loop_solver(self.robot, self._values)
        return self._solver(q_active, guess=guess, tol=tol)

    def closure_residual(self, q):
        """Largest absolute residual of the loop-closure equations at ``q``: a
        float for one configuration (nj,), (N,) for a batch."""
        qs, single = self._states(q, self.nc, "q")
        out = np.abs(self._closure(qs)).max(axis=1)
        return float(out[0]) if single else out
