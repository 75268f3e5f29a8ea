"""Mimic joints: a joint whose variable follows another's, held as a constraint.

A mimic joint (:class:`~kanerobot.robot.description.MimicJoint`, a URDF
``<mimic joint multiplier offset>``: a gripper's second finger, a hand's
coupled phalanx) is the holonomic constraint

    q_m = k q_l + o                     (k the multiplier, o the offset)

on two joints of one speed of the tree, or ``q_m = sum_i k_i q_i + o`` on
several (a linear coupling: an MJCF fixed-tendon equality, the further
terms in ``MimicJoint.more``).  Its velocity form is the linear
constraint ``qd_m - sum_i k_i qd_i = 0`` (:class:`Mimic`, a
:class:`~kanerobot.dynamics.constrained.VelocityConstraint`), composed with
the tree's models of any engine by
:class:`~kanerobot.dynamics.constrained.ConstrainedModel`: the leaders and
the other joints are the independent speeds ``qd_a``, and

    qd = G qd_a,   qdd = G qdd_a         (G constant: the k_i in the mimic's row, Gdot = 0)
    A_a = G^T A G,   H_a = G^T H(q, G qd_a),   Gamma_a = G^T Gamma_tree

so the mimic joint's generalized force is folded onto its leaders' (``k_i``
times it): the leader's motor drives both, as the gear or tendon of the
mechanism does.  These are pinocchio's models with ``JointModelMimic``
(``buildModelFromUrdf(path, mimic=True)``).

Configurations: as for closed loops (:class:`~kanerobot.dynamics.closed_loop.ClosedLoopModel`),
the models take the whole joint vector ``q`` (every joint of the tree, the
mimic joints included, in ``robot.joint_labels`` order), which must satisfy
the couplings (:data:`TOL`); :meth:`MimicDynamics.configuration` makes one
from the independent joints.  Speeds, accelerations and torques are those of
the independent joints (the state space says so: ``layout_qd``).

On a floating base (a humanoid with mimic grippers) the tree keeps its free
flyer: ``q`` starts with the base's ``x y z qx qy qz qw``, the speeds with
its six ``v, w`` (in frame 0, pinocchio's convention), which are independent
(the base ``"0"`` first in :attr:`Mimic.independent`); the torques are the
independent joints' (the base is not actuated), and the models are the
floating tree's projected by the same constant G (identity on the base).
"""

import dataclasses

import numpy as np
import sympy

from kanerobot.dynamics.constrained import ConstrainedDynamics, ConstrainedModel, VelocityConstraint, speeds, velocity, velocity_columns
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import BASE

__all__ = ["TOL", "Mimic", "MimicDynamics", "MimicModel", "mimic_tree"]

#: Largest residual ``|q_m - k q_l - o|`` of a configuration accepted.
TOL = 1e-8


def mimic_tree(robot):
    """The robot with its mimic joints free: the tree whose models are projected.

    Examples
    --------
    >>> import kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> coupled = kr.Robot.create("coupled", arm.frames, mimics=[("2", "1", -1, 0)])
    >>> coupled.dof, mimic_tree(coupled).dof, mimic_tree(coupled).frames == arm.frames
    (1, 2, True)
    """
    return dataclasses.replace(robot, mimics=())


class Mimic(VelocityConstraint):
    """``qd_m - sum_i k_i qd_i = 0`` for every mimic joint m of leaders i: one row each, one column per speed of the tree.

    The independent speeds are every joint but the mimic ones, in joint
    order, after a floating base's six (``"0"``, the columns ``VX0 .. WZ0``
    of J, which hold zeros).

    Raises
    ------
    KaneRobotError
        For a robot whose structure adds its own constraints or coordinates
        (closed loops, wheels, flexible joints): the mimic constraint
        composes with a tree, on a fixed or a floating base.

    Examples
    --------
    >>> import kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> c = Mimic(kr.Robot.create("coupled", arm.frames, mimics=[("2", "1", -2, 0)]))
    >>> c.J, c.independent, c.dependent
    (Matrix([[2, 1]]), ('1',), ('2',))
    """

    kind = "mimic joints"
    adjective = "mimic-joint"

    def __init__(self, robot):
        other = [what for what, applies in (("closed loops", robot.loops), ("wheels", robot.wheeled),
                                             ("flexible joints", robot.flexible_joints)) if applies]  # fmt: skip
        if other:
            raise KaneRobotError(
                f"{robot.name}: mimic joints ({', '.join(robot.mimic_joints)}) with {other[0]} are not supported yet: "
                f"load the robot with mimic='independent' (--mimic independent) to read each as a joint of its own"
            )
        self.robot, self.tree = robot, mimic_tree(robot)
        mimic = set(robot.mimic_joints)
        base = (BASE,) if robot.floating else ()
        self.independent = base + tuple(label for label in robot.joint_labels if label not in mimic)
        self.mimics = {item.joint: item for item in robot.mimics}
        J = sympy.zeros(len(robot.mimics), len(velocity(self.tree)))
        for row, label in enumerate(robot.mimic_joints):
            item = self.mimics[label]
            (m,) = velocity_columns(self.tree, [label])
            J[row, m] = 1
            for leader, k in item.terms:
                (column,) = velocity_columns(self.tree, [leader])
                J[row, column] -= k
        self.J = J

    @property
    def Jdot(self):
        """0: the multipliers are constant."""
        return sympy.zeros(*self.J.shape)

    @property
    def program_inputs(self):
        """The symbols of the multipliers (numbers from a URDF: none)."""
        return sorted({s for item in self.robot.mimics for _, k in item.terms for s in sympy.sympify(k).free_symbols}, key=str)

    def speed_map(self, target, rates=True, accelerations=True):
        """The mimic joints' rates and accelerations, ``sum k_i QP_i`` and ``sum k_i QDP_i``: no solve (G is constant)."""
        ind, dep = speeds(self.tree, self.independent), speeds(self.tree, self.dependent)
        column = {s.label: k for k, s in enumerate(ind)}  # a leader's (a joint of one speed)
        X = sympy.zeros(len(dep), len(ind))
        mapping: dict[sympy.Symbol, sympy.Expr] = {}
        for row, d in enumerate(dep):
            item = self.mimics[d.label]
            for leader, k in item.terms:
                X[row, column[leader]] = k
            if rates:
                rate = sum((k * ind[column[leader]].qd for leader, k in item.terms), sympy.S.Zero)
                mapping[d.qd] = target.assign(str(d.qd), rate)
                acceleration = sum((k * ind[column[leader]].qdd for leader, k in item.terms), sympy.S.Zero)
                mapping[d.qdd] = target.assign(str(d.qdd), acceleration) if accelerations else sympy.S.Zero
        return X, mapping


class MimicModel(ConstrainedModel):
    """Dynamic models of a robot with mimic joints by one engine (see the module notes).

    Made by :func:`kanerobot.derive` for a robot with :attr:`~kanerobot.robot.description.Robot.mimics`.

    Examples
    --------
    >>> import numpy as np, kanerobot as kr
    >>> from kanerobot.dynamics.parameters import random_parameters
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> robot = kr.Robot.create("coupled", arm.frames, mimics=[("2", "1", -1, 0.5)])
    >>> model = kr.derive(robot)
    >>> model.dof, model.independent, model.state_space.layout_qd
    (1, ('1',), 'the independent joints 1 (mimic joints 2 follow them)')
    >>> fn = model.numeric(random_parameters(robot, np.random.default_rng(0)), backend="numpy")
    >>> q = fn.configuration([0.2])
    >>> q.tolist(), fn.mass_matrix(q).shape
    ([0.2, 0.3], (1, 1))
    """

    def __init__(self, robot, method):
        super().__init__(robot, method, Mimic(robot))

    @property
    def dynamics(self):
        return MimicDynamics

    @property
    def parameters(self):
        """The tree models' parameters, and the symbols of the multipliers and of the offsets (which place the mimic joints)."""
        offsets = {str(s) for item in self.robot.mimics for s in sympy.sympify(item.offset).free_symbols}
        return self.robot.parameter_order(set(super().parameters) | offsets)

    @property
    def state_space(self):
        """The constrained :class:`~kanerobot.state_space.StateSpace`: ``q`` every joint, the mimic joints following their leaders; ``qd`` the independent joints."""
        robot, labels = self.robot, ", ".join(label for label in self.independent if label != BASE)
        mimic = ", ".join(robot.mimic_joints)
        base = ("base x y z, quaternion x y z w, ", "base v x y z and w x y z in frame 0, ") if self.floating else ("", "")
        return dataclasses.replace(
            super().state_space, q_note=f" (mimic joints {mimic} at multiplier * leader + offset)", joint_state=not self.floating,
            layout_q=f"{base[0]}every joint {', '.join(robot.joint_labels)}, the mimic joints {mimic} at multiplier * leader + offset",
            layout_qd=f"{base[1]}the independent joints {labels} (mimic joints {mimic} follow them)", tau_layout=f"independent joints {labels}",
        )  # fmt: skip

    def _rebuilt(self, robot):
        return type(self)(robot, self.method)


class MimicDynamics(ConstrainedDynamics):
    """Numeric dynamics of a robot with mimic joints, with bound parameters.

    :class:`~kanerobot.dynamics.constrained.ConstrainedDynamics`'s projection
    with ``J`` the mimic constraint; every configuration ``q`` (every joint,
    (nj,) or (N, nj)) must satisfy the couplings within :data:`TOL`
    (:meth:`configuration` gives one); ``qd``, ``qdd``, ``tau`` are the
    independent joints'.

    Raises
    ------
    KaneRobotError
        When ``q`` does not satisfy a coupling.
    """

    def __init__(self, model, values, backend="auto", physical=True, check=True):
        super().__init__(model, values, backend=backend, physical=physical, check=check)
        columns, start = {}, 0  # the coordinates of each joint in q (a ball joint's four), after a floating base's seven
        if model.floating:
            columns[BASE], start = list(range(7)), 7
        for label in self.robot.joint_labels:
            nq = self.robot.frame(label).joint.nq
            columns[label], start = list(range(start, start + nq)), start + nq
        mimics, self._columns = self.robot.mimics, columns
        self._mimic = [columns[item.joint][0] for item in mimics]
        self._free = [c for label in model.independent for c in columns[label]]
        self._K = np.zeros((len(mimics), self.nc))  # the coupling q_m = K q + o, K's columns the leaders' coordinates
        for row, item in enumerate(mimics):
            for leader, k in item.terms:
                self._K[row, columns[leader][0]] = self._number(k, "multiplier")
        self._o = np.array([self._number(item.offset, "offset") for item in mimics])

    def _number(self, expr, what):
        value = sympy.sympify(expr).xreplace({s: sympy.Float(v) for s, v in self.bound.items()})
        if value.free_symbols:
            missing = ", ".join(sorted(map(str, value.free_symbols)))
            raise KaneRobotError(f"{self.robot.name}: the {what} of a mimic joint needs a value for {missing}")
        return float(value)

    def coupling_residual(self, q):
        """Largest ``|q_m - sum k_i q_i - o|`` over the mimic joints: a float for one configuration (nj,), (N,) for a batch."""
        qs, single = self._states(q, self.nc, "q")
        out = np.abs(qs[:, self._mimic] - self._followed(qs)).max(axis=1)
        return float(out[0]) if single else out

    def _check(self, qs):
        followed = self._followed(qs)
        residual = np.abs(qs[:, self._mimic] - followed)
        bad = ~(residual <= TOL)
        if np.any(bad):
            n, j = np.argwhere(bad)[0]
            item = self.robot.mimics[j]
            formula = " + ".join(f"{self._K[j, self._columns[leader][0]]:g} * {leader}" for leader in item.leaders)
            raise KaneRobotError(
                f"q = {np.round(qs[n], 6).tolist()}: mimic joint {item.joint} is {qs[n, self._mimic[j]]:.6g}, not "
                f"{formula} + {self._o[j]:g} = {followed[n, j]:.6g} "
                f"(residual {residual[n, j]:.3g} > {TOL:g}): give every joint, e.g. fn.configuration(q_independent)"
            )

    def configuration(self, q_independent):
        """Every joint's value from the independent joints' coordinates (the mimic joints at ``k q_l + o``): (nj,) or (N, nj).

        On a floating base, ``q_independent`` starts with the base's seven
        (``x y z qx qy qz qw``), and so does the result (the quaternion normalised).
        """
        qa, single = self._states(q_independent, len(self._free), "q_independent")
        qs = np.zeros((qa.shape[0], self.nc))
        qs[:, self._free] = qa
        qs[:, self._mimic] = self._followed(qs)
        if self.model.floating:
            qs = self.tree._normalised(qs)
        return qs[0] if single else qs

    def _followed(self, qs):
        """The mimic joints' values ``K q + o`` that the leaders in ``qs`` (..., nj) give: (..., number of mimics)."""
        return qs @ self._K.T + self._o

    def _state_hooks(self):
        """The constrained maps, the couplings checked at the start and kept exact along a run."""
        configuration = self._controlled_configuration if self.model.floating else self.configuration
        return super()._state_hooks() | {
            "prepare_map": self._coupled, "start_check": self._check_start, "configuration_map": configuration,
        }  # fmt: skip

    def _controlled_configuration(self, p):
        """A configuration whose independent joints are ``p``, a floating base at the origin (the state space's map)."""
        space = self.model.state_space
        q = np.array(space.origin, dtype=float)
        q[list(space.controlled)] = p
        return self._coupled(q)

    def _coupled(self, q):
        """``q`` with the mimic joints set from their leaders (integration drift removed), a floating base's quaternion normalised."""
        q = np.array(q, dtype=float)
        q[..., self._mimic] = self._followed(q)
        return self.tree._prepared(q) if self.model.floating and q.ndim == 1 else q

    def _check_start(self, q, what):
        if self.model.floating:
            q = self.tree._starting_configuration(q, what)
        residual = self.coupling_residual(q)
        if not residual <= TOL:
            raise KaneRobotError(
                f"{what}: its q does not satisfy the mimic joints' couplings (residual {residual:.3g} > {TOL:g}); "
                f"give every joint, e.g. fn.configuration(q_independent)"
            )
        return q
