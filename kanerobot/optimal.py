"""Trajectory optimisation by direct collocation, solved with IPOPT through CasADi.

:func:`collocate` transcribes a point-to-point motion of a robot into a
nonlinear programme and solves it with IPOPT (``casadi.nlpsol``; the casadi
wheel bundles it, ``pip install 'kanerobot[casadi]'``).  The dynamics are the
model's own program as a CasADi graph (:meth:`NumericDynamics.casadi
<kanerobot.dynamics.dynamic_model.NumericDynamics.casadi>`): a fixed-base
serial or tree robot's direct dynamics, or, for a wheeled base or closed
loops (:class:`~kanerobot.dynamics.constrained.ConstrainedDynamics`), the
projected programs ``mass_matrix`` and ``h`` solved in the graph
(``A_a qdd_a = B u - H_a``) with ``dq/dt = G(q) qd_a`` from the constraint's
symbolic speed map.

The state is ``x = (q, qd)`` (configuration, speeds), the controls ``u``
the motors' torques, ``tau = B u`` the generalized forces (``B`` the
identity unless an actuation is given: Krang's wheel motors react on the
pitch, :func:`kanerobot.control.actuation_matrix`).  On ``N`` intervals of
length ``h = T / N``, with ``f = (dq/dt, qdd)``:

- ``"trapezoidal"``: ``x_{k+1} - x_k = h/2 (f_k + f_{k+1})``, ``u`` linear
  per interval; cost ``sum h/2 (L_k + L_{k+1})``;
- ``"hermite-simpson"`` (separated form): a midpoint state and control per
  interval, ``x_m = (x_k + x_{k+1})/2 + h/8 (f_k - f_{k+1})`` and
  ``x_{k+1} - x_k = h/6 (f_k + 4 f_m + f_{k+1})``, ``u`` quadratic; Simpson's
  rule for the cost.

The dynamics must be smooth for IPOPT: a model's Coulomb friction
``FS sign(qd)`` is not (give ``FS = 0``, or keep the viscous ``FV``).

Objectives: ``"torque"``, ``integral of u^T R u dt``; ``"time"``, ``T``
(plus ``regularization`` times the torque integral).  The final time is
fixed (``duration`` a number) or free between bounds (a pair).  Both ends
are at rest (``qd = 0``; with ``rest_acceleration`` also ``qdd = 0``);
joint position, velocity and torque limits come from ``robot.limits``
(a URDF's ``<limit>``), overridden label by label by ``limits``.

The solution is an :class:`OptimalResult`: a
:class:`~kanerobot.control.Trajectory` that interpolates as the scheme does
(per interval a cubic Hermite of ``q`` with slopes ``qd`` and of ``qd`` with
slopes ``qdd``: quadratic for the trapezoidal rule, the Hermite-Simpson
cubic), the torques ``u(t)`` (linear, quadratic), the solver's status,
iterations and time, and the collocation error: the local errors
``eta_k = integral over interval k of |dx/dt - f(x, u)|`` of the
interpolated solution (Betts 2010, section 4.7; Kelly 2017, section 5),
accumulated along the motion as the errors of a neutral system would be (a
position's local errors add up; a speed's local error moves the positions
after it by that error times the time left), the largest over the
coordinates and times.  It is the scale of the open-loop drift the
transcription causes; an unstable motion (a balancing robot) amplifies it.
:meth:`OptimalResult.track` re-simulates the torques with :func:`kanerobot.simulate`.

References
----------
J. T. Betts, *Practical Methods for Optimal Control and Estimation Using
Nonlinear Programming*, 2nd ed., SIAM, 2010.  M. Kelly, "An Introduction
to Trajectory Optimization: How to Do Your Own Direct Collocation", SIAM
Review 59(4), 2017.

Examples
--------
>>> import numpy as np, kanerobot as kr
>>> from kanerobot.optimal import collocate
>>> from kanerobot.dynamics.parameters import random_parameters
>>> robot = kr.load(kr.frames_path("planar2"))
>>> fn = kr.derive(robot).numeric(random_parameters(robot, np.random.default_rng(0), friction=False), backend="numpy")
>>> result = collocate(fn, [0, 0], [1.0, -0.5], duration=1.0, intervals=10)
>>> result.success, result.trajectory.position(1.0).round(6).tolist()
(True, [1.0, -0.5])
>>> bool(result.collocation_error < 1e-3)
True
"""

import dataclasses
import functools
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import sympy
from numpy.typing import ArrayLike

from kanerobot.control import Trajectory
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import JointLimits

__all__ = ["DYNAMICS", "OBJECTIVES", "SCHEMES", "OptimalResult", "Tracking", "collocate", "dynamics_function", "frame_position"]

#: The transcriptions of :func:`collocate`.
SCHEMES = ("trapezoidal", "hermite-simpson")
#: The objectives of :func:`collocate`.
OBJECTIVES = ("torque", "time")
#: Fewest intervals :func:`collocate` accepts.
MIN_INTERVALS = 2


# ------------------------------------------------------------------ the system
#: How :func:`collocate` imposes the dynamics at a collocation point.
DYNAMICS = ("implicit", "explicit")


@dataclasses.dataclass
class _System:
    """A numeric model's dynamics in CasADi, ``tau = B u``: ``rates(q, qd) -> dq/dt``,
    ``residual(q, qd, qdd, u) -> A(q) qdd + H(q, qd) - B u`` (the inverse dynamics: implicit
    collocation), ``direct(q, qd, u) -> qdd`` (explicit; built on first use)."""

    fn: Any
    rates: Any  # casadi.Function
    residual: Any  # casadi.Function
    make_direct: Callable[[], Any]
    nq: int
    nv: int
    B: np.ndarray
    q_labels: tuple
    speed_labels: tuple
    motor_labels: tuple
    controlled: tuple  # the q column of each speed

    @functools.cached_property
    def direct(self):
        return self.make_direct()

    @functools.cached_property
    def function(self):
        """``f(q, qd, u) -> (qdot, qdd)``."""
        casadi = _casadi()
        q, qd, u = casadi.SX.sym("q", self.nq), casadi.SX.sym("qd", self.nv), casadi.SX.sym("u", self.B.shape[1])
        return casadi.Function("dynamics", [q, qd, u], [self.rates(q, qd), self.direct(q, qd, u)], ["q", "qd", "u"], ["qdot", "qdd"])

    def evaluate(self, q, qd, u):
        """``(dq/dt, qdd)`` of a batch by the numeric model's own functions, (N, nq), (N, nv)."""
        tau = np.asarray(u) @ self.B.T
        return np.atleast_2d(self.fn.configuration_derivative(q, qd)), np.atleast_2d(self.fn.direct_dynamics(q, qd, tau))


def _casadi():
    from kanerobot.codegen.casadi import require_casadi

    return require_casadi()


def dynamics_function(fn, actuation=None):
    """``f(q, qd, u) -> (qdot, qdd)`` of a numeric model as a ``casadi.Function``, ``tau = B u``.

    Parameters
    ----------
    fn : numeric model
        ``model.numeric(values)`` of a fixed-base serial or tree robot (its
        ``fn.casadi("direct_dynamics")``), or of a wheeled base or closed
        loops (:class:`~kanerobot.dynamics.constrained.ConstrainedDynamics`:
        its ``mass_matrix`` and ``h`` programs solved in the graph).
    actuation : array_like (nv, k), or (B, labels), optional
        ``tau = B u``; the pair :func:`kanerobot.control.actuation_matrix`
        returns names the motors.  Default: the identity (a motor per speed).

    Returns
    -------
    casadi.Function
        Inputs ``q`` (nq), ``qd`` (nv), ``u`` (k); outputs ``qdot`` (nq),
        ``qdd`` (nv).

    Raises
    ------
    KaneRobotError
        For a model that is not one of these (a floating base: a quaternion
        is not collocated here), an actuation of the wrong shape, or when
        CasADi is missing.

    Examples
    --------
    >>> import numpy as np, kanerobot as kr
    >>> from kanerobot.dynamics.parameters import random_parameters
    >>> robot = kr.load(kr.frames_path("diffdrive"))
    >>> fn = kr.derive(robot).numeric(random_parameters(robot, np.random.default_rng(0), friction=False), backend="numpy")
    >>> f = dynamics_function(fn)
    >>> q, qd, u = np.full(fn.nq, 0.1), np.array([0.2, -0.1]), np.array([0.3, 0.1])
    >>> qdot, qdd = (x.full().ravel() for x in f(q, qd, u))
    >>> bool(np.allclose(qdd, fn.direct_dynamics(q, qd, u)) and np.allclose(qdot, fn.configuration_derivative(q, qd)))
    True
    """
    return _system(fn, actuation).function


def _system(fn, actuation=None, functions=None):
    from kanerobot.dynamics.constrained import ConstrainedDynamics
    from kanerobot.dynamics.dynamic_model import NumericDynamics

    casadi = _casadi()
    if isinstance(fn, ConstrainedDynamics):
        rates, inverse, direct = _constrained(fn, casadi)
        speed_labels = tuple(label for label in fn.model.independent)
    elif isinstance(fn, NumericDynamics) and type(fn.model).__name__ == "DynamicModel":
        if fn.nq != fn.nv or fn.model.root.nv:
            raise KaneRobotError(
                f"collocate: {fn.model.robot.name} has a configuration that is not its speeds' integral (a floating base or a ball "
                f"joint's quaternion): only fixed-base robots with one coordinate per speed, wheeled bases and closed loops are collocated"
            )
        if functions is None:
            rates, inverse, direct = (lambda q, qd: qd), fn.casadi("inverse_dynamics"), (lambda: fn.casadi("direct_dynamics"))
        else:  # another library's dynamics of the same robot, in the same transcription
            rates, inverse, direct = (lambda q, qd: qd), functions[0], (lambda: functions[1])
        speed_labels = tuple(fn.state_space.controlled_labels)
    else:
        raise KaneRobotError(
            f"collocate needs a numeric model, model.numeric(values), of a fixed-base robot, a wheeled base or closed loops; got {type(fn).__name__}"
        )
    nq, nv = fn.nq, fn.nv
    B, motors = _actuation(actuation, nv, speed_labels)
    q, qd, qdd, u = casadi.SX.sym("q", nq), casadi.SX.sym("qd", nv), casadi.SX.sym("qdd", nv), casadi.SX.sym("u", B.shape[1])
    tau = casadi.mtimes(casadi.DM(B), u)
    rate_function = casadi.Function("rates", [q, qd], [rates(q, qd)], ["q", "qd"], ["qdot"])
    residual = casadi.Function("residual", [q, qd, qdd, u], [inverse(q, qd, qdd) - tau], ["q", "qd", "qdd", "u"], ["residual"])

    def make_direct():
        return casadi.Function("direct", [q, qd, u], [direct()(q, qd, tau)], ["q", "qd", "u"], ["qdd"])

    q_labels = tuple(fn.state_space.coordinates)
    return _System(fn, rate_function, residual, make_direct, nq, nv, B, q_labels, speed_labels, motors, tuple(fn.state_space.controlled))


def _actuation(actuation, nv, speed_labels):
    """``(B, motor labels)``: the identity with the speeds' labels by default."""
    if actuation is None:
        return np.eye(nv), tuple(speed_labels)
    labels = None
    if isinstance(actuation, tuple) and len(actuation) == 2:
        actuation, labels = actuation
    B = np.asarray(actuation, dtype=float)
    if B.ndim != 2 or B.shape[0] != nv or not 0 < B.shape[1] <= nv:
        raise KaneRobotError(f"collocate: the actuation must be a ({nv}, k) matrix, tau = B u, with 0 < k <= {nv}; got shape {B.shape}")
    labels = tuple(str(x) for x in labels) if labels is not None else tuple(f"u{k}" for k in range(B.shape[1]))
    return B, labels


def _constrained(fn, casadi):
    """``(qdot(q, qd_a), tau_a(q, qd_a, qdd_a), make direct)`` of a :class:`ConstrainedDynamics` in CasADi:
    ``dq/dt = G(q) qd_a`` from the constraint's symbolic speed map, the projected programs ``mass_matrix``
    and ``h`` (``A_a qdd_a + H_a``), and a maker of ``qdd_a = A_a^-1 (tau_a - H_a)`` solved in the graph."""
    from kanerobot.codegen.casadi import casadi_program
    from kanerobot.dynamics.constrained import coordinate_rates
    from kanerobot.mpc import projected_function
    from kanerobot.symbolic import Program

    model = fn.model
    if model.floating:
        raise KaneRobotError(
            f"collocate: {fn.model.robot.name} is a floating tree under constraints: its quaternion is not collocated here"
        )
    parameters = [sympy.Symbol(name) for name in model.parameters]
    p = casadi.DM([fn.values_by_name[name] for name in model.parameters])
    state = [("q", list(model.q)), ("qd", list(model.qd)), ("p", parameters)]
    built = fn.model.__dict__.setdefault("_optimal_casadi", {})
    if "rates" not in built:
        constraint = model.constraint
        target = Program(inputs=list(model.q) + list(model.qd) + list(constraint.program_inputs), trig=True)
        _, mapping = constraint.speed_map(target, rates=True, accelerations=False)
        for coordinate, rate in zip(model.q, coordinate_rates(constraint.tree)):
            target.set_output(f"D{coordinate}", sympy.sympify(rate).xreplace(mapping))
        target.prune()
        built["rates"] = casadi_program(target, "rates", state, constant=("p",)).function
        built["A"], built["H"] = projected_function(model, "mass_matrix"), projected_function(model, "h")
    rates, A, H = built["rates"], built["A"], built["H"]

    def direct():
        q, qd, tau = casadi.SX.sym("q", fn.nq), casadi.SX.sym("qd", fn.nv), casadi.SX.sym("tau", fn.nv)
        return casadi.Function("direct", [q, qd, tau], [casadi.solve(A(q, p), tau - H(q, qd, p))])

    return (lambda q, qd: rates(q, qd, p)), (lambda q, qd, qdd: casadi.mtimes(A(q, p), qdd) + H(q, qd, p)), direct


def frame_position(fn, frame):
    """The position of ``frame``'s origin in frame 0 as a ``casadi.Function`` of ``q``.

    The frame's pose program (:meth:`NumericDynamics.pose
    <kanerobot.dynamics.dynamic_model.NumericDynamics.pose>`) as a CasADi
    graph, for path and final constraints; ``q`` as the model's functions take
    it (a wheeled base's: every joint, its posture included).

    Examples
    --------
    >>> import numpy as np, kanerobot as kr
    >>> from kanerobot.dynamics.parameters import random_parameters
    >>> robot = kr.load(kr.frames_path("rx90"))
    >>> fn = kr.derive(robot).numeric(random_parameters(robot, np.random.default_rng(0)), backend="numpy")
    >>> f = frame_position(fn, "6")
    >>> q = np.full(6, 0.3)
    >>> bool(np.allclose(f(q).full().ravel(), fn.pose("6", q)[:3, 3]))
    True
    """
    casadi = _casadi()
    tree = getattr(fn, "tree", fn)  # a constrained model's poses are its tree's
    if getattr(tree.model, "root", None) is not None and tree.model.root.nq:
        raise KaneRobotError(f"frame_position: {fn.model.robot.name} is floating; its poses are not collocated here")
    key = ("pose", str(frame))
    programs, parameters = tree._program_values(key)
    pose = programs.casadi_function(key).function
    q = casadi.SX.sym("q", fn.nq)
    out = pose(q, casadi.DM(parameters))
    return casadi.Function(f"position_{frame}", [q], [out[[3, 7, 11]]], ["q"], ["position"])


# -------------------------------------------------------------------- limits
def _limits(system, limits):
    """Bounds ``(q_lo, q_hi, qd_hi, u_hi)`` (inf where none) of the robot's limits overridden by ``limits``."""
    robot = system.fn.model.robot
    merged: dict[str, JointLimits] = dict(robot.limits)
    for label, item in dict(limits or {}).items():
        label = str(label)
        if isinstance(item, Mapping):
            unknown = set(item) - set(JointLimits._fields)
            if unknown:
                raise KaneRobotError(
                    f"collocate: limits of {label!r}: unknown key(s) {', '.join(sorted(unknown))}; use {', '.join(JointLimits._fields)}"
                )
            item = JointLimits(**item)
        if not isinstance(item, JointLimits):
            raise KaneRobotError(f"collocate: limits of {label!r} must be a JointLimits or a mapping, got {item!r}")
        if label not in system.q_labels and label not in system.motor_labels:
            raise KaneRobotError(f"collocate: limits given for {label!r}, which is no joint of {robot.name} ({', '.join(system.q_labels)})")
        merged[label] = item
    q_lo, q_hi = np.full(system.nq, -np.inf), np.full(system.nq, np.inf)
    qd_hi, u_hi = np.full(system.nv, np.inf), np.full(len(system.motor_labels), np.inf)
    for label, item in merged.items():
        lower, upper = (-np.inf if item.lower is None else item.lower), (np.inf if item.upper is None else item.upper)
        if not lower < upper:
            raise KaneRobotError(f"collocate: the limits of joint {label!r} are inconsistent: lower {lower:g} is not below upper {upper:g}")
        for what in ("velocity", "effort"):
            value = getattr(item, what)
            if value is not None and not value > 0:
                raise KaneRobotError(f"collocate: the {what} limit of joint {label!r} must be positive, got {value:g}")
        if label in system.q_labels:
            k = system.q_labels.index(label)
            q_lo[k], q_hi[k] = lower, upper
        if item.velocity is not None and label in system.speed_labels:
            qd_hi[system.speed_labels.index(label)] = item.velocity
        if item.effort is not None and label in system.motor_labels:
            u_hi[system.motor_labels.index(label)] = item.effort
    return q_lo, q_hi, qd_hi, u_hi


# -------------------------------------------------------------------- result
class Tracking(NamedTuple):
    """What :meth:`OptimalResult.track` returns: the simulation and its largest position error."""

    simulation: Any
    max_error: float
    error: np.ndarray  # (samples,), the largest |q_sim - q_d| at each sample time


@dataclasses.dataclass
class OptimalResult:
    """The solution of :func:`collocate`.

    Attributes
    ----------
    scheme : str
    t : ndarray (N + 1,)
        The knots' times.
    q, qd, qdd : ndarray (N + 1, nq), (N + 1, nv), (N + 1, nv)
        The state at the knots and the dynamics' accelerations there.
    u : ndarray (N + 1, k)
        The motors' torques at the knots.
    midpoints : dict or None
        Hermite-Simpson's midpoint ``t``, ``q``, ``qd``, ``qdd``, ``u`` (N rows).
    B : ndarray (nv, k)
        ``tau = B u``.
    trajectory : Trajectory
        The collocated motion of the controlled coordinates (``q`` on a fixed base; a wheeled
        base's wheels and body joints, not its posture), the speeds and accelerations (see the
        module's notes), held at its ends outside ``[0, T]``.
    duration : float
    objective : float
    status : str
        IPOPT's return status (``"Solve_Succeeded"`` ...).
    success : bool
    iterations : int
    solve_time : float
        Seconds IPOPT ran (CasADi's ``t_wall_total``).
    interval_errors : ndarray (N, nq + nv)
        Per interval and state component, ``integral |dx/dt - f(x, u)| dt`` of the interpolants.
    collocation_error : float
        The interval errors accumulated along the motion (see the module's notes), the
        largest over the coordinates ``q``: the scale of what the transcription puts between
        the collocated positions and the true motion.
    local_error : float
        The positions' interval errors summed, the largest over the coordinates: the
        transcription's own error, without its propagation through the speeds.
    """

    scheme: str
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    u: np.ndarray
    midpoints: dict | None
    B: np.ndarray
    trajectory: Trajectory
    duration: float
    objective: float
    status: str
    success: bool
    iterations: int
    solve_time: float
    interval_errors: np.ndarray
    collocation_error: float
    local_error: float = 0.0
    system: Any = dataclasses.field(repr=False, default=None)
    splines: Any = dataclasses.field(repr=False, default=None)

    def configuration(self, t: float) -> np.ndarray:
        """The whole configuration ``q(t)`` (nq,), a wheeled base's posture included (:attr:`trajectory`
        holds the controlled coordinates, those the controllers take); the end values outside ``[0, T]``."""
        return np.asarray(self.splines[0](min(max(float(t), self.t[0]), self.t[-1])), dtype=float)

    def torque(self, t: float) -> np.ndarray:
        """The motors' torques ``u(t)``, (k,): linear per interval (trapezoidal), quadratic (Hermite-Simpson);
        the end values outside ``[0, T]``."""
        t = min(max(float(t), self.t[0]), self.t[-1])
        k = int(np.clip(np.searchsorted(self.t, t, side="right") - 1, 0, len(self.t) - 2))
        h = self.t[k + 1] - self.t[k]
        s = (t - self.t[k]) / h
        u0, u1 = self.u[k], self.u[k + 1]
        if self.midpoints is None:
            return (1 - s) * u0 + s * u1
        um = self.midpoints["u"][k]
        return 2 * (s - 0.5) * (s - 1) * u0 - 4 * s * (s - 1) * um + 2 * s * (s - 0.5) * u1

    def generalized_torque(self, t: float) -> np.ndarray:
        """``tau(t) = B u(t)``, (nv,): what the model's functions and :func:`kanerobot.simulate` take."""
        return self.B @ self.torque(t)

    def controller(self, kp: float = 0.0, kd: float = 0.0) -> Callable[[float, np.ndarray, np.ndarray], np.ndarray]:
        """``tau = B (u(t) + B^+ (kp (q_d - q) + kd (qd_d - qd)))``: the optimal torques, open loop
        (``kp = kd = 0``) or with a light PD on the collocated trajectory (in the speeds' coordinates,
        through the motors: an unactuated joint is corrected only through what the motors reach)."""
        B, columns = self.B, list(self.system.controlled)
        project = np.linalg.pinv(B)
        trajectory = self.trajectory

        def control(t, q, qd):
            tau = self.generalized_torque(t)
            if kp or kd:
                q_d, qd_d, _ = trajectory(t)
                tau = tau + B @ (project @ (kp * (q_d - np.asarray(q)[columns]) + kd * (qd_d - qd)))
            return tau

        return control

    def track(self, fn=None, kp: float = 0.0, kd: float = 0.0, samples: int = 201, controller=None, **solver_options: Any) -> Tracking:
        """Re-simulate the optimal torques with :func:`kanerobot.simulate` and compare with the trajectory.

        Parameters
        ----------
        fn : numeric model, optional
            The plant (default: the model collocated); build it with
            ``backend="c"`` for the C backend.
        kp, kd : float, optional
            A light PD on the trajectory (:meth:`controller`); 0: open loop.
        samples : int, optional
            Times where the positions are compared.
        controller : callable, optional
            ``tau = controller(t, q, qd)`` instead of :meth:`controller`'s (a
            balancing feedback around the optimal torques).
        **solver_options
            For ``solve_ivp`` (default ``rtol=1e-10, atol=1e-12``).

        Returns
        -------
        Tracking
            The simulation, and the largest ``|q_sim - q(t)|`` over the
            coordinates (all of ``q``: a wheeled base's posture too) at each sample and overall.
        """
        from kanerobot.simulation import simulate

        fn = self.system.fn if fn is None else fn
        times = np.linspace(self.t[0], self.t[-1], samples)
        x0 = np.concatenate([self.q[0], self.qd[0]])
        options = {"rtol": 1e-10, "atol": 1e-12} | solver_options
        control = self.controller(kp, kd) if controller is None else controller
        run = simulate(fn, None, x0, (self.t[0], self.t[-1]), control, t_eval=times, **options)
        reference = np.array([self.configuration(t) for t in run.t])
        error = np.abs(run.q - reference).max(axis=1)
        return Tracking(run, float(error.max()), error)


# ------------------------------------------------------------ the transcription
def collocate(
    fn: Any,
    q0: ArrayLike,
    q1: ArrayLike,
    *,
    duration: float | tuple[float, float] = 1.0,
    intervals: int = 20,
    scheme: str = "hermite-simpson",
    objective: str = "torque",
    weights: ArrayLike | None = None,
    regularization: float = 0.0,
    limits: Mapping[str, Any] | None = None,
    actuation: Any = None,
    path: Sequence[Callable[..., Any]] = (),
    final: Sequence[Callable[..., Any]] = (),
    rest_acceleration: bool = False,
    guess: "Trajectory | OptimalResult | None" = None,
    dynamics: str = "implicit",
    functions: tuple[Any, Any] | None = None,
    options: Mapping[str, Any] | None = None,
    verbose: bool = False,
) -> OptimalResult:
    """A point-to-point motion at rest at both ends, optimal for ``objective``, by direct collocation.

    Parameters
    ----------
    fn : numeric model
        ``model.numeric(values)`` (any backend) of a fixed-base robot, a
        wheeled base or closed loops (:func:`dynamics_function`).
    q0, q1 : array_like (nq,)
        Start and end configurations; a NaN in ``q1`` leaves that
        coordinate free at the end (for a ``final`` constraint to place it).
    duration : float or (float, float), optional
        The final time ``T``: fixed, or free between two bounds (required
        for ``objective="time"``).
    intervals : int, optional
        ``N``, at least 2.
    scheme : {"hermite-simpson", "trapezoidal"}, optional
    objective : {"torque", "time"}, optional
        ``integral of u^T R u dt``, or ``T + regularization * integral u^T R u dt``.
    weights : array_like (k,) or (k, k), optional
        ``R``; default the identity.
    regularization : float, optional
        Weight of the torque integral added to the minimum time.
    limits : mapping label -> JointLimits or dict, optional
        Per joint (position, velocity) and motor (effort), over
        ``robot.limits``; a bound that is None is not imposed.
    actuation : array_like (nv, k) or (B, labels), optional
        ``tau = B u`` (:func:`kanerobot.control.actuation_matrix` returns the pair).
    path : sequence of callables, optional
        ``g(q, qd, u)`` of CasADi symbols, a column that must stay ``<= 0`` at
        every knot (and midpoint).
    final : sequence of callables, optional
        ``c(q, qd)`` of CasADi symbols, a column that must be 0 at the end.
    rest_acceleration : bool, optional
        Also ``qdd = 0`` at both ends (a balancing robot that stays put).
    guess : Trajectory or OptimalResult, optional
        Initial guess: a trajectory of ``q`` (or of the controlled
        coordinates), or a solution (its duration, motion and torques: warm
        start); default the linear interpolation at a constant speed (a
        coordinate free at the end stays where it starts).  The torques start
        as those that hold each configuration still.
    dynamics : {"implicit", "explicit"}, optional
        How the dynamics hold at a collocation point: ``"implicit"`` (default),
        the accelerations are variables and the inverse dynamics ``A qdd + H
        = B u`` a constraint (the recursive inverse dynamics, or the
        projected ``A_a``, ``H_a``: no matrix inverted in the graph, cheap
        derivatives); ``"explicit"``, ``qdd`` the direct dynamics.
    functions : (casadi.Function, casadi.Function), optional
        A fixed-base robot's inverse dynamics ``tau(q, qd, qdd)`` and direct
        dynamics ``qdd(q, qd, tau)`` in place of the model's: the same
        transcription on another library's dynamics of the same robot
        (``pinocchio.casadi``'s ``rnea`` and ``aba``, for a comparison).
    options : mapping, optional
        IPOPT's options (``{"max_iter": 500, "tol": 1e-8}``), over the defaults.
    verbose : bool, optional
        Print IPOPT's iterations.

    Returns
    -------
    OptimalResult

    Raises
    ------
    KaneRobotError
        In one line: an unknown scheme or objective, fewer than 2 intervals,
        a bad duration, configurations of the wrong length or outside the
        limits, inconsistent limits, a model that cannot be collocated.

    Examples
    --------
    >>> import numpy as np, kanerobot as kr
    >>> from kanerobot.dynamics.parameters import random_parameters
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> fn = kr.derive(robot).numeric(random_parameters(robot, np.random.default_rng(1), friction=False), backend="numpy")
    >>> fast = collocate(fn, [0, 0], [0.5, 0.5], duration=(0.1, 5.0), objective="time", intervals=15,
    ...                  limits={"1": {"effort": 20.0}, "2": {"effort": 10.0}}, regularization=1e-4)
    >>> fast.success, bool(np.abs(fast.u).max() <= 20.0 + 1e-6), bool(fast.duration < 5.0)
    (True, True, True)
    """
    casadi = _casadi()
    if scheme not in SCHEMES:
        raise KaneRobotError(f"collocate: unknown scheme {scheme!r}: choose among {', '.join(SCHEMES)}")
    if dynamics not in DYNAMICS:
        raise KaneRobotError(f"collocate: unknown dynamics {dynamics!r}: choose among {', '.join(DYNAMICS)}")
    if objective not in OBJECTIVES:
        raise KaneRobotError(f"collocate: unknown objective {objective!r}: choose among {', '.join(OBJECTIVES)}")
    if isinstance(intervals, bool) or not isinstance(intervals, (int, np.integer)) or intervals < MIN_INTERVALS:
        raise KaneRobotError(f"collocate: intervals must be an integer of at least {MIN_INTERVALS}, got {intervals!r}")
    T_lo, T_hi = _duration(duration, objective)
    system = _system(fn, actuation, functions)
    start = _configuration(q0, system.nq, "q0", nan=False)
    end = _configuration(q1, system.nq, "q1", nan=True)
    q_lo, q_hi, qd_hi, u_hi = _limits(system, limits)
    for name, q in (("q0", start), ("q1", end)):
        outside = np.flatnonzero((q < q_lo - 1e-12) | (q > q_hi + 1e-12))
        if outside.size:
            k = int(outside[0])
            raise KaneRobotError(
                f"collocate: {name} puts joint {system.q_labels[k]!r} at {q[k]:g}, outside its limits [{q_lo[k]:g}, {q_hi[k]:g}]"
            )
    nlp = _Transcription(system, int(intervals), scheme, dynamics, casadi)
    R = _weights(weights, len(system.motor_labels))
    nlp.build(objective, R, float(regularization), T_lo, T_hi, path, final, rest_acceleration)
    nlp.bounds(start, end, q_lo, q_hi, qd_hi, u_hi, T_lo, T_hi, rest_acceleration)
    x0 = nlp.guess(start, end, guess, 0.5 * (T_lo + T_hi) if np.isfinite(T_hi) else T_lo)
    return nlp.solve(x0, options, verbose)


def _duration(duration, objective):
    if np.ndim(duration) == 0:
        T = float(duration)  # type: ignore[arg-type]
        if not T > 0:
            raise KaneRobotError(f"collocate: the duration must be positive, got {T:g}")
        if objective == "time":
            raise KaneRobotError("collocate: objective 'time' needs a free final time: give duration=(shortest, longest)")
        return T, T
    lo, hi = (float(x) for x in duration)  # type: ignore[union-attr]
    if not 0 < lo < hi:
        raise KaneRobotError(f"collocate: a free duration needs 0 < shortest < longest, got ({lo:g}, {hi:g})")
    return lo, hi


def _configuration(q, n, name, nan):
    q = np.atleast_1d(np.asarray(q, dtype=float))
    if q.shape != (n,):
        raise KaneRobotError(f"collocate: {name} must have {n} values (the configuration), got shape {q.shape}")
    if np.any(np.isinf(q)) or (not nan and np.any(np.isnan(q))):
        raise KaneRobotError(f"collocate: {name} must be finite{' (NaN: free at the end)' if nan else ''}, got {q.tolist()}")
    return q


def _weights(weights, k):
    if weights is None:
        return np.eye(k)
    R = np.asarray(weights, dtype=float)
    R = np.diag(R) if R.ndim == 1 else R
    if R.shape != (k, k) or not np.allclose(R, R.T) or np.linalg.eigvalsh(R).min() < 0:
        raise KaneRobotError(f"collocate: weights must be {k} non-negative values or a symmetric positive semi-definite ({k}, {k}) matrix")
    return R


class _Transcription:
    """The NLP of :func:`collocate`: variables, constraints, bounds, guess, solution."""

    def __init__(self, system, N, scheme, dynamics, casadi):
        self.system, self.N, self.scheme, self.implicit, self.casadi = system, N, scheme, dynamics == "implicit", casadi
        nq, nv, k = system.nq, system.nv, len(system.motor_labels)
        self.sizes = {"Q": (nq, N + 1), "V": (nv, N + 1), "U": (k, N + 1)}
        if self.implicit:  # the accelerations are variables, the inverse dynamics a constraint
            self.sizes["A"] = (nv, N + 1)
        if scheme == "hermite-simpson":
            self.sizes |= {"Qm": (nq, N), "Vm": (nv, N), "Um": (k, N)} | ({"Am": (nv, N)} if self.implicit else {})
        self.sizes["T"] = (1, 1)
        self.offsets, offset = {}, 0
        for name, (rows, cols) in self.sizes.items():
            self.offsets[name] = offset
            offset += rows * cols
        self.x = casadi.MX.sym("x", offset)
        self.var = {name: self._view(self.x, name) for name in self.sizes}

    def _view(self, x, name):
        rows, cols = self.sizes[name]
        start = self.offsets[name]
        return self.casadi.reshape(x[start : start + rows * cols], rows, cols)

    def _array(self, x, name):
        rows, cols = self.sizes[name]
        start = self.offsets[name]
        return np.asarray(x[start : start + rows * cols]).reshape(cols, rows)  # column-major: one row a knot

    def _index(self, name, rows=slice(None), cols=slice(None)):
        shape = self.sizes[name]
        grid = np.arange(shape[0] * shape[1]).reshape(shape[1], shape[0]).T + self.offsets[name]
        return grid[rows, cols].T.ravel()  # knot after knot (column-major, as the variables)

    def build(self, objective, R, regularization, T_lo, T_hi, path, final, rest_acceleration):
        casadi, N, v = self.casadi, self.N, self.var
        h = v["T"] / N
        Q, V, U = v["Q"], v["V"], v["U"]
        g: list[Any] = []
        Qd, A = self._dynamics(Q, V, U, v.get("A"), N + 1, g)
        u = casadi.SX.sym("u", R.shape[0])
        L = casadi.Function("L", [u], [casadi.bilin(casadi.DM(R), u, u)]).map(N + 1)
        LK = L(U)
        if self.scheme == "trapezoidal":
            g += [casadi.vec(Q[:, 1:] - Q[:, :-1] - h / 2 * (Qd[:, :-1] + Qd[:, 1:])),
                  casadi.vec(V[:, 1:] - V[:, :-1] - h / 2 * (A[:, :-1] + A[:, 1:]))]  # fmt: skip
            cost = h / 2 * casadi.sum2(LK[:, :-1] + LK[:, 1:])
        else:
            Qm, Vm, Um = v["Qm"], v["Vm"], v["Um"]
            Qdm, Am = self._dynamics(Qm, Vm, Um, v.get("Am"), N, g)
            g += [casadi.vec(Qm - (Q[:, :-1] + Q[:, 1:]) / 2 - h / 8 * (Qd[:, :-1] - Qd[:, 1:])),
                  casadi.vec(Vm - (V[:, :-1] + V[:, 1:]) / 2 - h / 8 * (A[:, :-1] - A[:, 1:])),
                  casadi.vec(Q[:, 1:] - Q[:, :-1] - h / 6 * (Qd[:, :-1] + 4 * Qdm + Qd[:, 1:])),
                  casadi.vec(V[:, 1:] - V[:, :-1] - h / 6 * (A[:, :-1] + 4 * Am + A[:, 1:]))]  # fmt: skip
            Lm = casadi.Function("Lm", [u], [casadi.bilin(casadi.DM(R), u, u)]).map(N)
            cost = h / 6 * casadi.sum2(LK[:, :-1] + 4 * Lm(Um) + LK[:, 1:])
        self.n_equal = sum(int(x.numel()) for x in g)
        ends = [A[:, 0], A[:, -1]] if rest_acceleration else []
        g += ends
        self.n_equal += sum(int(x.numel()) for x in ends)
        for c in final:
            value = casadi.vec(c(Q[:, -1], V[:, -1]))
            g.append(value)
            self.n_equal += int(value.numel())
        self.n_path = 0
        for p in path:
            points = [(Q, V, U)] + ([(v["Qm"], v["Vm"], v["Um"])] if self.scheme == "hermite-simpson" else [])
            for Qp, Vp, Up in points:
                for j in range(int(Qp.shape[1])):
                    value = casadi.vec(p(Qp[:, j], Vp[:, j], Up[:, j]))
                    g.append(value)
                    self.n_path += int(value.numel())
        self.g = casadi.vertcat(*g)
        torque = cost
        self.f = v["T"] + regularization * torque if objective == "time" else torque

    def _dynamics(self, Q, V, U, A, count, g):
        """``(dq/dt, qdd)`` at ``count`` points: ``qdd`` the variables ``A`` whose inverse dynamics must
        be ``B u`` (implicit: a constraint appended to ``g``), or the direct dynamics (explicit)."""
        system = self.system
        Qd = system.rates.map(count)(Q, V)
        if not self.implicit:
            return Qd, system.direct.map(count)(Q, V, U)
        g.append(self.casadi.vec(system.residual.map(count)(Q, V, A, U)))
        return Qd, A

    def bounds(self, q0, q1, q_lo, q_hi, qd_hi, u_hi, T_lo, T_hi, rest_acceleration):
        n = int(self.x.numel())
        lbx, ubx = np.full(n, -np.inf), np.full(n, np.inf)
        for name, lo, hi in (("Q", q_lo, q_hi), ("V", -qd_hi, qd_hi), ("U", -u_hi, u_hi),
                             ("Qm", q_lo, q_hi), ("Vm", -qd_hi, qd_hi), ("Um", -u_hi, u_hi)):  # fmt: skip
            if name in self.sizes:
                cols = self.sizes[name][1]
                lbx[self._index(name)] = np.tile(lo, cols)
                ubx[self._index(name)] = np.tile(hi, cols)
        for index, value in ((self._index("Q", cols=0), q0), (self._index("V", cols=0), 0.0), (self._index("V", cols=-1), 0.0)):
            lbx[index] = ubx[index] = value
        fixed = np.isfinite(q1)
        end = self._index("Q", cols=-1)
        lbx[end[fixed]] = ubx[end[fixed]] = q1[fixed]
        lbx[self._index("T")], ubx[self._index("T")] = T_lo, T_hi
        self.lbx, self.ubx = lbx, ubx
        self.lbg = np.concatenate([np.zeros(self.n_equal), np.full(self.n_path, -np.inf)])
        self.ubg = np.zeros(self.n_equal + self.n_path)

    def guess(self, q0, q1, guess, T):
        """The starting point: ``guess`` (an :class:`OptimalResult`, a :class:`Trajectory` of ``q`` or of
        the controlled coordinates) or the linear interpolation at a constant speed; the torques those
        that hold each configuration still (``B u = Q(q)`` in the least squares), or the result's."""
        system, N = self.system, self.N
        if isinstance(guess, OptimalResult):
            T = guess.duration
        x0 = np.zeros(int(self.x.numel()))
        end = np.where(np.isfinite(q1), q1, q0)
        times = np.linspace(0.0, T, N + 1)
        columns = list(system.controlled)
        hold = np.linalg.pinv(system.B)

        def states(t):
            q = q0 + (t / T)[:, None] * (end - q0)
            qd = np.broadcast_to(((end - q0) / T)[columns], (len(t), system.nv)).copy()
            if isinstance(guess, OptimalResult):
                q = np.array([guess.configuration(time * guess.duration / T) for time in t])
                qd, u = guess.trajectory.sample(t)[1], np.array([guess.torque(time) for time in t])
                return q, qd, u
            if guess is not None:
                position, qd, _ = guess.sample(t)
                if position.shape[1] == system.nq:
                    q = position
                else:
                    q[:, columns] = position
            return q, qd, np.atleast_2d(system.fn.gravity(q)) @ hold.T

        for (Qn, Vn, Un), t in ((("Q", "V", "U"), times), (("Qm", "Vm", "Um"), (times[:-1] + times[1:]) / 2)):
            if Qn in self.sizes:
                for name, value in zip((Qn, Vn, Un), states(t)):
                    x0[self._index(name)] = np.asarray(value).ravel()
        x0[self._index("T")] = T
        return np.clip(x0, self.lbx, self.ubx)

    def solve(self, x0, options, verbose):
        casadi = self.casadi
        ipopt = {"print_level": 5 if verbose else 0, "sb": "yes", "max_iter": 1000, "tol": 1e-8}
        ipopt |= dict(options or {})
        solver = casadi.nlpsol("collocation", "ipopt", {"x": self.x, "f": self.f, "g": self.g},
                               {"ipopt": ipopt, "print_time": bool(verbose)})  # fmt: skip
        start = time.perf_counter()
        solution = solver(x0=x0, lbx=self.lbx, ubx=self.ubx, lbg=self.lbg, ubg=self.ubg)
        elapsed = time.perf_counter() - start
        stats = solver.stats()
        x = np.asarray(solution["x"]).ravel()
        return self._result(x, float(solution["f"]), stats, elapsed)

    def _result(self, x, objective, stats, elapsed):
        system, N = self.system, self.N
        T = float(x[self._index("T")][0])
        t = np.linspace(0.0, T, N + 1)
        q, qd, u = self._array(x, "Q"), self._array(x, "V"), self._array(x, "U")
        qdot, qdd = system.evaluate(q, qd, u)  # the numeric model's functions
        midpoints = None
        if self.scheme == "hermite-simpson":
            qm, qdm, um = self._array(x, "Qm"), self._array(x, "Vm"), self._array(x, "Um")
            qddm = system.evaluate(qm, qdm, um)[1]
            midpoints = {"t": (t[:-1] + t[1:]) / 2, "q": qm, "qd": qdm, "qdd": qddm, "u": um}
        splines = _splines(t, q, qdot, qd, qdd)
        trajectory = _hermite_trajectory(splines, system.controlled)
        status = str(stats.get("return_status", "unknown"))
        result = OptimalResult(
            scheme=self.scheme, t=t, q=q, qd=qd, qdd=qdd, u=u, midpoints=midpoints, B=system.B, trajectory=trajectory,
            duration=T, objective=objective, status=status, success=bool(stats.get("success", False)),
            iterations=int(stats.get("iter_count", -1)), solve_time=float(stats.get("t_wall_total", elapsed)),
            interval_errors=np.zeros((N, system.nq + system.nv)), collocation_error=0.0, system=system,
        )  # fmt: skip
        result.splines = splines
        result.interval_errors = _interval_errors(result, splines)
        result.collocation_error = _propagated(result.interval_errors, t, system)
        result.local_error = float(result.interval_errors[:, : system.nq].sum(axis=0).max())
        return result


def _splines(t, q, qdot, qd, qdd):
    """The cubic Hermite splines of ``q`` (slopes ``dq/dt``) and of ``qd`` (slopes ``qdd``)."""
    from scipy.interpolate import CubicHermiteSpline

    return CubicHermiteSpline(t, q, qdot, axis=0), CubicHermiteSpline(t, qd, qdd, axis=0)


def _hermite_trajectory(splines, controlled):
    """The collocated motion of the controlled coordinates: per interval a cubic Hermite of ``q``
    with slopes ``dq/dt`` (the dynamics' ``qdot``: ``qd`` on a fixed base, ``G(q) qd`` on a wheeled
    one) and of ``qd`` with slopes ``qdd``; the acceleration is the derivative of the latter."""
    spline, velocity = splines
    acceleration = velocity.derivative()
    t0, t1 = spline.x[0], spline.x[-1]
    columns = list(controlled)

    def position(time):
        return spline(time)[..., columns]

    def held(f, k):
        def evaluate(time):
            if time < t0 or time > t1:
                return np.asarray(f(min(max(time, t0), t1)), dtype=float) if k == 0 else np.zeros(f(t0).shape)
            return np.asarray(f(time), dtype=float)

        return evaluate

    return Trajectory(held(position, 0), held(velocity, 1), held(acceleration, 2), t_span=(t0, t1))


def _propagated(errors, t, system):
    """The largest position error the local ``errors`` (N, nq + nv) make along the motion: at knot
    k + 1, the positions' local errors up to k, plus each speed's error of interval j <= k times
    ``t_{k+1} - t_{j+1}`` (on the coordinate that speed drives)."""
    nq = system.nq
    position = np.cumsum(errors[:, :nq], axis=0)
    speed = errors[:, nq:]
    ends = t[1:]
    drift = np.array([(speed[: k + 1] * (ends[k] - ends[: k + 1])[:, None]).sum(axis=0) for k in range(len(ends))])
    position[:, list(system.controlled)] += drift
    return float(position.max())


def _interval_errors(result, splines, points=9):
    """``integral over each interval of |dx/dt - f(x, u)|``, (N, nq + nv), by Simpson's rule on ``points``
    points of the interpolants (``splines``: the position's and the velocity's, and the torques)."""
    system = result.system
    position, velocity = splines
    rate, acceleration = position.derivative(), velocity.derivative()
    errors = np.zeros((len(result.t) - 1, system.nq + system.nv))
    s = np.linspace(0.0, 1.0, points)
    simpson = np.ones(points)
    simpson[1:-1:2], simpson[2:-1:2] = 4.0, 2.0
    simpson /= 3 * (points - 1)
    for k in range(len(result.t) - 1):
        h = result.t[k + 1] - result.t[k]
        times = result.t[k] + s * h
        u = np.array([result.torque(time) for time in times])
        qdot, acc = system.evaluate(position(times), velocity(times), u)
        residual = np.abs(np.concatenate([rate(times) - qdot, acceleration(times) - acc], axis=1))
        errors[k] = h * simpson @ residual
    return errors
