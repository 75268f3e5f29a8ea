"""Floating robots: the free flyer as link 0's root joint (OpenSYMORO section IV-D, eqs 30-41).

A floating robot (humanoid, satellite, eel) is a tree on a base link 0 that
hangs from the world by a free-flyer joint: its six speeds join the n joint
rates.  The dynamic model (OpenSYMORO eq. 30) is::

    [ F_0 ]   [ A11    A12 ] [ 0Vdot_0 ]   [ H1 ]
    [     ] = [            ] [         ] + [    ]                           (30)
    [ GAM ]   [ A12^T  A22 ] [ qdd     ]   [ H2 ]

with ``F_0`` the wrench applied to the base (zero for a free-floating
robot), ``A11`` the 6x6 spatial inertia of composite link 0 (the whole
robot, about O_0, in frame 0), ``A22`` the n x n inertia matrix of the arm
with the base held, ``A12`` their coupling.  Here the base acceleration is
the derivative of the base speeds of the state below (it differs from the
paper's classical ``0Vdot_0`` by ``[0w_0 x 0v_0; 0]``, a velocity term that
goes to H), so that ``A`` and ``H`` are pinocchio's.

**State** (pinocchio's free flyer, :mod:`kanerobot.robot.joints`).  ``q =
(x, y, z, qx, qy, qz, qw, q_1 .. q_n)``: the position of O_0 in the world
frame, the unit quaternion of 0's orientation ``wR_0`` (x y z w, scalar
last), then the joints; ``qd = (v, w, qd_1 .. qd_n)``: the velocity of O_0
and the angular velocity of link 0, both in frame 0, then the joint rates;
``qdd`` is the time derivative of ``qd`` (so ``dv/dt = 0R_w d2x/dt2 - w x
v``, not the classical acceleration ``VP`` of SYMORO).  Gravity ``G``
(``robot.base.G``) is given in the world frame and rotated into frame 0
through the quaternion.

**Program inputs.**  The programs read the base state through symbols of
fixed names: the quaternion :data:`QUATERNION` ``QX0 QY0 QZ0 QW0`` (unit),
the base speeds :data:`BASE_VELOCITY` ``VX0 VY0 VZ0 WX0 WY0 WZ0`` and their
derivatives :data:`BASE_ACCELERATION` ``DVX0 .. DWZ0``, besides the joint
variables, ``QP``, ``QDP``, ``GAM`` and the parameters; ``W0, WP0, V0,
VP0`` of ``robot.base`` are not used (the base motion is the state).

**No algorithm of its own.**  Every recursion serves the free flyer as it
serves a fixed root (:mod:`~kanerobot.dynamics.root` gives link 0's motion;
the free flyer's motion subspace is the identity, so its generalized forces
are the whole wrench at O_0).  The names below are those functions:
:func:`inverse_dynamics`, :func:`nonlinear_effects` (``h``) and
:func:`gravity_forces` (``gravity``) are Newton-Euler's
(:mod:`~kanerobot.dynamics.newton_euler`); :func:`mass_matrix` the
composite links (:mod:`~kanerobot.dynamics.composite`);
:func:`direct_dynamics` and :func:`base_acceleration` (the free-floating
inverse dynamic model, OpenSYMORO eqs 31-39: joint accelerations known,
``F_0 = 0``) the articulated-body passes of
:mod:`~kanerobot.dynamics.direct`, the 6x6 base system solved in the
program by :func:`ldl_solve`.  Lagrange (the Boltzmann-Hamel rows of
:mod:`~kanerobot.dynamics.lagrange`), Kane's nested sums
(:mod:`~kanerobot.dynamics.kane`) and the Coriolis matrix (the root's
Hamel terms, :mod:`~kanerobot.dynamics.coriolis`) serve it too.
:func:`integrate` and :func:`configuration_derivative` update the base
pose ``wT_0`` (the ``Z`` of OpenSYMORO eqs 40-41) with the quaternion, free
of the singularities of Euler angles; :func:`base_pose` gives ``wT_0`` back
(all from :mod:`kanerobot.robot.joints`).  Errors: :func:`check_masses` (a
base or robot without mass).

What this module adds is the model of such a robot:
:class:`FloatingBaseModel` (a :class:`~kanerobot.dynamics.model.DynamicModel`
whose ``(nq, nv)`` include the root's ``(7, 6)``, with the
``base_acceleration`` model) and :class:`FloatingBaseDynamics`, its numeric
functions on free-flyer states.  With Kane and Lagrange the base
acceleration and the direct dynamics are solved numerically from ``A`` and
``H``; the three engines agree to rounding (``tests/test_floating.py``).
"""

import numpy as np
import sympy
from numpy.typing import ArrayLike

from kanerobot.dynamics import composite, derivatives, direct, newton_euler
from kanerobot.dynamics.dynamic_model import (
    MATRIX_MODELS,
    METHODS,
    ONE_STATE_GROUPS,
    STRUCTURE_MODELS,
    DynamicModel,
    NumericDynamics,
    as_states,
    bound_numeric,
    finite_values,
    matrix_grid,
    solve_dynamics,
)
from kanerobot.dynamics.dynamic_model import MODELS as BASE_MODELS
from kanerobot.dynamics.free_flyer import (
    BASE_ACCELERATION,
    BASE_FORCE_NAMES,
    BASE_VELOCITY,
    QUATERNION,
    check_floating,
    check_masses,
)
from kanerobot.errors import KaneRobotError, SingularityError
from kanerobot.robot.description import BASE
from kanerobot.robot.joints import (
    base_pose,
    configuration_derivative,
    integrate,
    normalised_quaternion,
    quaternion_to_rotation,
    rotation_to_quaternion,
)
from kanerobot.state_space import StateSpace

__all__ = [
    "BASE_ACCELERATION",
    "BASE_FORCE_NAMES",
    "BASE_VELOCITY",
    "QUATERNION",
    "FloatingBaseDynamics",
    "FloatingBaseModel",
    "base_acceleration",
    "base_pose",
    "check_masses",
    "configuration_derivative",
    "direct_dynamics",
    "gravity",
    "gravity_forces",
    "h",
    "integrate",
    "inverse_dynamics",
    "ldl_solve",
    "mass_matrix",
    "nonlinear_effects",
    "quaternion_to_rotation",
    "rotation_to_quaternion",
]


# ---------------------------------------------------- generalized forces
#: ``[F_0; GAM] = A qdd + H`` (pinocchio's ``rnea``): Khalil's Newton-Euler,
#: whose root joint is the free flyer (outputs ``GAMFX0 .. GAMCZ0`` first).
inverse_dynamics = newton_euler.inverse_dynamics
#: ``H(q, qd)`` (pinocchio's ``nle``): Newton-Euler at zero acceleration.
nonlinear_effects = newton_euler.coriolis_gravity
#: ``Q(q)``: Newton-Euler at rest, the base wrench that holds the robot first (``QFX0 .. QCZ0``).
gravity_forces = newton_euler.gravity_torques
#: The same, by the names every engine module uses (:data:`kanerobot.dynamics.model.MODELS`).
h, gravity = nonlinear_effects, gravity_forces


# ------------------------------------------- base acceleration, direct dynamics
#: Free-floating inverse dynamics (OpenSYMORO eqs 31-39, ``F_0 = 0``): the
#: articulated-body passes of :mod:`~kanerobot.dynamics.direct` with every
#: joint's acceleration known (outputs ``DVX0 .. DWZ0``, then ``GAM<label>``).
base_acceleration = direct.base_acceleration
#: Base and joint accelerations for given joint torques: the articulated-body
#: passes with the free flyer's 6x6 system solved in the program.
direct_dynamics = direct.direct_dynamics
#: ``K x = y`` by ``K = L D L^T`` in the program (:func:`kanerobot.dynamics.direct.ldl_solve`).
ldl_solve = direct.ldl_solve


# ------------------------------------------------------------ mass matrix
#: The (6+n)x(6+n) inertia matrix ``A(q)`` of eq. 30, in the speeds of the
#: state: composite links, whose root joint is the free flyer (the base block
#: is composite link 0's spatial inertia, ``A11 .. A66``; zeros left out).
mass_matrix = composite.mass_matrix


# ------------------------------------------------------------------ models
#: Models a :class:`FloatingBaseModel` offers, with what they compute: every
#: model of a fixed base, on the free flyer's state, and the free-floating
#: inverse dynamics.
MODELS = {**BASE_MODELS, "base_acceleration": STRUCTURE_MODELS["base_acceleration"]}


class FloatingBaseModel(DynamicModel):
    """The dynamic models of a floating robot, derived on first use.

    The floating-base counterpart of
    :class:`~kanerobot.dynamics.model.DynamicModel` (Newton-Euler engine):
    :meth:`program` gives each model as a program (see :data:`MODELS`),
    :meth:`numeric` binds the parameters to numbers.

    Parameters
    ----------
    robot : Robot
        Floating (``is_floating = 1``) serial or tree robot; link 0 is the base.
    method : {"newton-euler", "kane"}, optional
        The engine.  ``"kane"``: the inverse dynamics, ``A``, ``H``, ``Q`` and
        ``C`` by Kane's equations summed over the tree
        (:class:`~kanerobot.dynamics.kane.KaneSystem`, the base's six speeds
        first; KanesMethod gives them too, ``source="kanes_method"``), and the base acceleration and
        direct dynamics solved numerically from ``A`` and ``H`` (see
        :meth:`has_program`); :attr:`kanes_method`, :attr:`bodies`,
        :attr:`loads`, :attr:`frames` give the mechanics objects.

    Raises
    ------
    KaneRobotError
        When the robot is not floating, has loops, flexible joints, or a
        base (link 0) or total mass that is a number <= 0; for an unknown
        ``method``.

    Examples
    --------
    >>> import kanerobot as kr
    >>> model = FloatingBaseModel(kr.load(kr.frames_path("satellite")))
    >>> model.nq, model.nv
    (10, 9)
    >>> model.parameters[8:14]  # the wrench FX3 .. CZ3 on link 3 is a state, given as wrench=
    ['MZ0', 'M0', 'D1', 'RL1', 'XX1', 'XY1']
    >>> from kanerobot.dynamics.parameters import random_parameters
    >>> fn = model.numeric(random_parameters(model.robot, np.random.default_rng(0)), backend="numpy")
    >>> q = [0, 0, 0, 0, 0, 0, 1, 0.1, 0.2, 0.3]
    >>> fn.mass_matrix(q).shape, fn.direct_dynamics(q, np.zeros(9), np.zeros(3)).shape
    ((9, 9), (9,))

    By Kane's method, the direct dynamics solved from A and H:

    >>> kane = FloatingBaseModel(model.robot, method="kane")
    >>> kane.has_program("direct_dynamics"), kane.kanes_method.mass_matrix.shape
    (False, (9, 9))
    """

    models = {**MODELS, **derivatives.DERIVATIVE_MODELS}
    parameter_programs = ("inverse_dynamics", "base_acceleration")
    c_prefix = "kr_floating_"

    def __init__(self, robot, method="newton-euler"):
        check_floating(robot, "the floating-base dynamic model")
        if method not in METHODS:
            raise KaneRobotError(
                f"{robot.name} has a floating base: method={method!r} does not model it; available are "
                f"{', '.join(METHODS)}"
            )
        super().__init__(robot, method)
        if method != "newton-euler":
            # Kane and Lagrange have no base_acceleration program to take parameters from.
            self.parameter_programs = ("inverse_dynamics",)

    def _state_groups(self):
        """[(key, symbols)] in argument order: joints, quaternion, rates, base
        speeds, accelerations, base accelerations, torques, then wrenches."""
        return [
            ("q", self.q),
            ("quaternion", list(QUATERNION)),
            ("qd", self.qd),
            ("base_velocity", list(BASE_VELOCITY)),
            ("qdd", self.qdd),
            ("base_acceleration", list(BASE_ACCELERATION)),
            ("tau", self.tau),
        ] + [(("wrench", label), symbols) for label, symbols in self.wrench.items()]

    def _output_grid(self, name):
        """The (nv, nv) layout of a matrix's outputs for the C backend (see
        :func:`~kanerobot.dynamics.model.matrix_grid`; a derivative model's
        as a fixed base's)."""
        if name in derivatives.DERIVATIVE_MODELS:
            return super()._output_grid(name)
        if name not in MATRIX_MODELS:
            return None
        return matrix_grid(self.program(name), self.nv, name, MATRIX_MODELS[name])

    def numeric(self, values, backend="auto", physical=True, check=True, bind=False):
        """Numeric functions with the parameters bound to ``values`` ({name: float}).

        As :meth:`kanerobot.dynamics.model.DynamicModel.numeric`: ``values``
        must give every name of :attr:`parameters` (other symbols of the
        robot are accepted and ignored); ``backend`` is ``"numpy"``, ``"c"``
        or ``"auto"`` (C when a compiler is found); ``physical`` checks that
        the values are those of real bodies, ``check`` that states are finite.

        Raises
        ------
        ParameterError
            Missing values, or names that are not symbols of the robot.
        KaneRobotError
            When the values give the base (link 0) or the whole robot a mass <= 0.
        """
        if bind:  # the numbers folded into the code: DynamicModel.numeric's bind
            return bound_numeric(self, values, self._rebuilt, backend=backend, physical=physical, check=check)
        return FloatingBaseDynamics(self, values, backend=backend, physical=physical, check=check)

    @property
    def state_space(self):
        """The :class:`~kanerobot.state_space.StateSpace`: pinocchio's free-flyer ``q`` (7 + n), ``qd`` (6 + n), n joint torques."""
        robot = self.robot
        labels = tuple(robot.joint_labels)
        n, every = len(labels), slice(None)
        base = ("x", "y", "z", "qx", "qy", "qz", "qw")
        origin = np.zeros(7 + n)
        origin[6] = 1.0
        return StateSpace(
            kind="floating base", adjective="floating-base", name=robot.name, coordinates=base + labels,
            q_names=base + tuple(map(str, self.q)), qd_names=("vx", "vy", "vz", "wx", "wy", "wz") + tuple(map(str, self.qd)),
            torques=tuple(map(str, self.tau)), layout_q=f"base x y z, quaternion x y z w, joints {', '.join(labels)}",
            layout_qd=f"base v x y z and w x y z in frame 0, joint rates {', '.join(labels)}",
            tau_layout=f"joints {', '.join(labels)}", actuation=np.eye(6 + n)[6:], controlled=tuple(range(7, 7 + n)),
            controlled_labels=labels, origin=origin, tree=robot, joints=labels, joint_columns=tuple(range(7, 7 + n)),
            program_inputs=(("q", "q", slice(7, None)), ("quaternion", "q", slice(3, 7)), ("qd", "qd", slice(6, None)),
                            ("base_velocity", "qd", slice(0, 6)), ("tau", "tau", every)),
        )  # fmt: skip


#: Where the one-state calls read each state group of a floating base: (argument, first entry, normalised).
ONE_STATE_SLICES = {
    "q": ("q", 7, False),
    "quaternion": ("q", 3, True),
    "qd": ("qd", 6, False),
    "base_velocity": ("qd", 0, False),
    "qdd": ("qdd", 6, False),
    "base_acceleration": ("qdd", 0, False),
    "tau": ("tau", 0, False),
}


class FloatingBaseDynamics(NumericDynamics):
    """Numeric floating-base dynamics of one robot with bound parameters.

    State convention (pinocchio's free flyer): ``q`` has 7 + n values (base
    position in the world frame, base quaternion x y z w, joints), ``qd``
    and ``qdd`` 6 + n (base linear and angular velocity in frame 0, joint
    rates; ``qdd`` their time derivatives).  Every function takes one state
    (1-D arrays) or a batch (2-D, ``(N, size)``) and answers in kind.  The
    quaternion is normalised before use.

    Attributes
    ----------
    backend : {"c", "numpy"}
    requested_backend : {"auto", "c", "numpy"}
    fallback_reason : str or None
    """

    def __init__(self, model, values, backend="auto", physical=True, check=True):
        # The base's mass first: its message says what a floating base needs.
        check_masses(model.robot, finite_values(model.robot, values))
        super().__init__(model, values, backend=backend, physical=physical, check=check)

    # ------------------------------------------------------------ states
    def _configuration(self, q):
        joints = " ".join(s.name if isinstance(s, sympy.Symbol) else str(s) for s in self.model.q)
        q, single = as_states(q, self.nq, "q", f"base position x y z, quaternion x y z w, joints {joints}", self.check)
        return q, single

    def _velocity(self, qd, what="qd"):
        joints = " ".join(str(s) for s in self.model.qd)
        return as_states(qd, self.nv, what, f"base v x y z and w x y z in frame 0, joints {joints}", self.check)

    def _joints(self, x, what):
        return as_states(x, self.n, what, f"one per joint {', '.join(self.model.robot.joint_labels)}", self.check)

    def _base_states(self, q, qd=None, qdd=None):
        states = {"q": q[:, 7:], "quaternion": normalised_quaternion(q[:, 3:7])}
        if qd is not None:
            states["qd"], states["base_velocity"] = qd[:, 6:], qd[:, :6]
        if qdd is not None:
            states["qdd"], states["base_acceleration"] = qdd[:, 6:], qdd[:, :6]
        return states

    # -------------------------------------------------------- evaluation
    def _solved_base_acceleration(self, states, qdd):
        """``[vdot_b; GAM]`` with the base free (``F_0 = 0``), from ``A`` and ``H``
        (Kane): ``A11 vdot_b = -(A12 qdd + H1)``, ``GAM = A21 vdot_b + A22 qdd + H2``."""
        A, H = self._mass_and_bias(states)
        qdd = np.broadcast_to(qdd, (len(H), self.n))
        rhs = -(np.einsum("nij,nj->ni", A[:, :6, 6:], qdd) + H[:, :6])
        base = solve_dynamics(A[:, :6, :6], rhs, self.model.robot.name, "composite inertia")
        torques = np.einsum("nij,nj->ni", A[:, 6:, :6], base) + np.einsum("nij,nj->ni", A[:, 6:, 6:], qdd) + H[:, 6:]
        return np.concatenate([base, torques], axis=1)

    def _one_state_layout(self, name):
        """As for a fixed base, each group a slice of ``q``, ``qd``, ``qdd`` or
        ``tau`` (the quaternion normalised), and a non-finite direct dynamics
        (or its derivatives) left to the general path, which raises
        :class:`SingularityError`."""
        given = ONE_STATE_GROUPS[name]
        sizes = {"q": self.nq, "qd": self.nv, "qdd": self.nv, "tau": self.n}
        layout = []
        for key, symbols in self.model._state_groups():
            argument, start, normalise = ONE_STATE_SLICES.get(key, (None, 0, False))
            layout.append((given.index(argument), start, normalise) if argument in given else np.zeros(len(symbols)))
        return layout, [sizes[key] for key in given], name in ("direct_dynamics", "direct_dynamics_derivatives")

    # --------------------------------------------------------- the models
    def base_acceleration(self, q, qd, qdd, wrench=None):
        """Free-floating inverse dynamics: the base moves freely (``F_0 = 0``).

        Parameters
        ----------
        q : array_like, shape (7+n,) or (N, 7+n)
        qd : array_like, shape (6+n,) or (N, 6+n)
        qdd : array_like, shape (n,) or (N, n)
            The joint accelerations only.
        wrench : dict, optional
            As in :meth:`inverse_dynamics`.

        Returns
        -------
        acceleration : numpy.ndarray, shape (6,) or (N, 6)
            The derivative of the base speeds (``qdd[:6]`` of the state).
        torques : numpy.ndarray, shape (n,) or (N, n)
            The joint torques that give ``qdd``.

        Raises
        ------
        SingularityError
            When the composite inertia of the robot is singular at ``q``.
        """
        (q, single), (qd, _), (qdd, _) = self._configuration(q), self._velocity(qd), self._joints(qdd, "qdd (joints)")
        states = self._base_states(q, qd)
        states["qdd"] = qdd
        states.update(self._wrench_states(wrench, max(len(q), len(qd), len(qdd))))
        if self.model.has_program("base_acceleration"):
            out = self._evaluate("base_acceleration", states)
        else:
            out = self._solved_base_acceleration(states, qdd)
        if not np.all(np.isfinite(out)):
            raise SingularityError(
                f"robot {self.model.robot.name}: the composite inertia of the whole robot is singular (check the masses and inertias)"
            )
        return self._result(out[:, :6], single), self._result(out[:, 6:], single)

    def momentum(self, q, qd):
        """Linear and angular momentum of the whole robot in the world frame.

        ``A(q)[:6] qd`` is the momentum in frame 0 about O_0 ``[L; K]``;
        in the world frame, ``[wR_0 L; wR_0 K + wx_0 x wR_0 L]`` (angular
        momentum about the world origin).  Without gravity, external wrenches
        and joint friction, both are constant along a motion.

        Returns
        -------
        numpy.ndarray, shape (6,) or (N, 6)
        """
        (q, single), (qd, _) = self._configuration(q), self._velocity(qd)
        A = self._evaluate("mass_matrix", self._base_states(q))
        local = np.einsum("nij,nj->ni", A[:, :6, :], qd)
        R = quaternion_to_rotation(q[:, 3:7])
        L = np.einsum("nij,nj->ni", R, local[:, :3])
        K = np.einsum("nij,nj->ni", R, local[:, 3:]) + np.cross(q[:, :3], L)
        return self._result(np.concatenate([L, K], axis=1), single)

    @property
    def state_space(self):
        """The model's :class:`~kanerobot.state_space.StateSpace` with the free flyer's maps (built once)."""
        if "_state_space" not in self.__dict__:
            self._state_space = self.model.state_space.bind(
                self, values={str(k): v for k, v in self.values.items()}, qdot_map=configuration_derivative,
                integrate_map=integrate, prepare_map=self._prepared, start_check=self._starting_quaternion,
                monitor_map=self._monitors, base_pose=lambda q: (quaternion_to_rotation(q[:, 3:7]), q[:, :3]),
            )  # fmt: skip
        return self._state_space

    @staticmethod
    def _prepared(q):
        """``q`` with its quaternion normalised (a copy): where a simulation evaluates the model."""
        out = q.copy()
        out[3:7] /= np.linalg.norm(q[3:7])
        return out

    @staticmethod
    def _starting_quaternion(q, what):
        """A starting configuration with its quaternion normalised; a zero quaternion is refused."""
        norm = np.linalg.norm(q[3:7])
        if not norm > 1e-12:
            raise KaneRobotError(f"{what}: the base quaternion q[3:7] (x y z w) is zero; give a unit quaternion such as [0, 0, 0, 1]")
        q[3:7] /= norm
        return q

    def _monitors(self, q_raw, q, qd):
        """The base pose, the momentum and how far the integrated quaternion's norm went from 1."""
        if not len(q):
            return {}
        return {
            "base_pose": base_pose(q),
            "momentum": np.atleast_2d(self.momentum(q, qd)),
            "quaternion_norm_error": np.abs(np.linalg.norm(q_raw[:, 3:7], axis=1) - 1.0),
        }

    # ------------------------------------------------------ the kinematics
    def pose(self, frame: str, q) -> np.ndarray:
        """Homogeneous transform wT_frame of ``frame`` in the world frame, shape (4, 4) or (N, 4, 4).

        ``wT_frame = wT_0 0T_frame``: the base pose of the configuration's
        first seven entries (:func:`base_pose`) times the generated program
        of the joints' part (see :meth:`NumericDynamics.pose
        <kanerobot.dynamics.dynamic_model.NumericDynamics.pose>`); pinocchio's
        frame placement ``data.oMf``.  ``q`` has 7 + n values, or shape (N, 7 + n).
        """
        q, single = self._configuration(q)
        T = base_pose(q) @ super().pose(frame, q[:, 7:])
        return T[0] if single else T

    def jacobian(self, frame: str, q, projection: str | None = None) -> np.ndarray:
        """Jacobian of the origin of ``frame``: (6, 6 + n) or (N, 6, 6 + n), ``[V; w] = J qd``.

        With ``p = 0P_frame`` the frame's origin in frame 0, the base speeds
        ``(v, w)`` of ``qd`` (in frame 0) move it by ``v + w x p`` and turn it
        by ``w``; the joints by the fixed-base Jacobian ``0J`` of the joints'
        part (the generated program of :meth:`NumericDynamics.jacobian
        <kanerobot.dynamics.dynamic_model.NumericDynamics.jacobian>`).  In
        the axes of frame r, ``rR_0 = wR_r^T wR_0``::

            J = [ rR_0   -rR_0 [p]x   rR_0 0J_lin ]
                [ 0       rR_0        rR_0 0J_ang ]

        ``projection="world"`` (or None, the default) projects into the world axes:
        pinocchio's ``LOCAL_WORLD_ALIGNED`` frame Jacobian; a frame label
        (``"0"``, the base link, or any other) into that frame's axes.
        """
        q, single = self._configuration(q)
        joints = q[:, 7:]
        R_w0 = quaternion_to_rotation(q[:, 3:7])
        if projection is None or str(projection) == "world":
            R = R_w0
        else:
            R = np.swapaxes(super().pose(projection, joints)[:, :3, :3], 1, 2)  # rR_0 = (0R_r)^T
        p = super().pose(frame, joints)[:, :3, 3]
        J0 = super().jacobian(frame, joints, BASE)
        J = np.zeros((q.shape[0], 6, 6 + self.n))
        J[:, :3, :3] = J[:, 3:, 3:6] = R
        J[:, :3, 3:6] = -R @ _cross_matrices(p)
        J[:, :3, 6:] = R @ J0[:, :3]
        J[:, 3:, 6:] = R @ J0[:, 3:]
        return J[0] if single else J

    # ----------------------------------------------------------- balance
    def center_of_mass(self, q: ArrayLike) -> np.ndarray:
        """Centre of mass of the whole robot in the world frame, ``p_0 + wR_0 0c``: shape (3,) or (N, 3).

        ``0c`` in frame 0 is the program of
        :func:`~kanerobot.dynamics.centroidal.center_of_mass` on the joints;
        pinocchio's ``centerOfMass``.  ``q`` has 7 + n values, or shape (N, 7 + n).
        """
        q, single = self._configuration(q)
        c = q[:, :3] + np.einsum("nij,nj->ni", quaternion_to_rotation(q[:, 3:7]), super().center_of_mass(q[:, 7:]))
        return c[0] if single else c

    def center_of_mass_jacobian(self, q: ArrayLike) -> np.ndarray:
        """Jacobian of the centre of mass in the world axes, ``wR_0 0J_G``: (3, 6 + n) or (N, 3, 6 + n).

        ``cdot = J_G qd`` with pinocchio's speeds (``v, w`` of link 0 in frame
        0, then the joints): pinocchio's ``jacobianCenterOfMass``.
        """
        q, single = self._configuration(q)
        J = quaternion_to_rotation(q[:, 3:7]) @ super().center_of_mass_jacobian(q[:, 7:])
        return J[0] if single else J

    def centroidal_momentum_matrix(self, q: ArrayLike) -> np.ndarray:
        """Centroidal momentum matrix in the world axes, ``diag(wR_0, wR_0) 0A_G``: (6, 6 + n) or (N, 6, 6 + n).

        ``h_G = A_G qd``, the momentum about the centre of mass does not
        depend on where the base is, only on how it is turned: pinocchio's
        ``computeCentroidalMap``.
        """
        q, single = self._configuration(q)
        R = quaternion_to_rotation(q[:, 3:7])
        A = super().centroidal_momentum_matrix(q[:, 7:])
        A = np.concatenate([R @ A[:, :3], R @ A[:, 3:]], axis=1)
        return A[0] if single else A

    def _speeds(self, qd):
        return self._velocity(qd)

    def configuration_derivative(self, q, qd):
        """``dq/dt`` (see :func:`configuration_derivative`), with the state lengths checked."""
        (q, single), (qd, _) = self._configuration(q), self._velocity(qd)
        return self._result(configuration_derivative(q, qd), single)

    def integrate(self, q, qd, dt):
        """The configuration after ``dt`` at constant ``qd`` (see :func:`integrate`)."""
        (q, single), (qd, _) = self._configuration(q), self._velocity(qd)
        return self._result(integrate(q, qd, dt), single)

    # ----------------------------------------------------- the derivatives

def _cross_matrices(p):
    """``[p]x`` of each row of ``p`` (N, 3): (N, 3, 3), ``[p]x b = p x b``."""
    S = np.zeros(p.shape[:-1] + (3, 3))
    S[..., 0, 1], S[..., 0, 2], S[..., 1, 2] = -p[..., 2], p[..., 1], -p[..., 0]
    S[..., 1, 0], S[..., 2, 0], S[..., 2, 1] = p[..., 2], -p[..., 1], p[..., 0]
    return S
