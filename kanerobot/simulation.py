"""Simulation of the direct dynamic model with ``scipy.integrate.solve_ivp``.

:func:`simulate` integrates ``xdot = (qdot, qdd)`` with ``qdd`` from the
model's direct dynamics (generated code, compiled to C when a compiler is
found) and torques from a controller ``tau = controller(t, q, qd)``, and
returns a :class:`SimulationResult`: the motion, the torques, the energies
and monitors of the structure.

The state ``x0 = (q, qd)`` follows the numeric model's functions; its
:class:`~kanerobot.state_space.StateSpace` (``fn.state_space``) says it, with
the maps below, and is all the simulation knows of the structure:

=================  =====================================  ===========================  ==================
structure          ``q``                                  ``qd``                       ``tau``
=================  =====================================  ===========================  ==================
fixed base         the n joints                           the n joint rates            n
closed loops       every joint (a closed configuration)   the active joints' rates     active joints
wheeled base       every joint (posture, wheels, body)    the independent speeds       independent speeds
flexible joints    ``z = (q, q_r)``, n + nf               ``zd``                       n (motor torques
                                                                                        on flexible joints)
floating base      base x y z, quaternion x y z w,        base v, w (frame 0),         n joints
                   n joints (7 + n)                       joint rates (6 + n)
=================  =====================================  ===========================  ==================

How each is integrated:

- closed loops: ``qdot = G(q) qd_a`` for every joint, ``qdd_a`` from the
  projected model.  Where the integrated configuration drifts off the
  loops (residual above 1e-10), the passive joints are brought back by the
  loop solver (Newton from where they are) before the model is evaluated;
  ``result.q`` holds those closed configurations and
  ``monitors["closure_residual"]`` the residual of the integrated state,
  the drift itself;
- floating base: ``qdot`` from
  :func:`~kanerobot.dynamics.floating.configuration_derivative` (the
  quaternion's derivative is orthogonal to it, so its norm stays 1 to the
  integrator's accuracy); the quaternion is normalised wherever it is used
  and in ``result.q``, and ``monitors["quaternion_norm_error"]`` says how far
  the integrated one went;
- flexible joints: stiff springs make a stiff system: use ``method="Radau"``
  or ``"BDF"`` (or ``"LSODA"``);
- wheeled bases: ``qdot = G(q) qd_a`` as for loops; the rolling
  constraints ``W qd = 0`` hold by construction, and
  ``monitors["constraint_residual"]`` (``max |W(q) G qd_a|``) shows it;

Coulomb friction.  The generated models carry ``FS sign(qd)``, which is
discontinuous where a joint stops: an integrator's step size collapses
there and the run stalls.  :func:`simulate` therefore evaluates the model
with its ``FS`` symbols bound to 0 and applies a law of its own from the
``FS`` values, as torques on the rates friction acts on (every joint of a
fixed or floating base, every joint of a loop or a wheeled base through
``G^T``, the rigid joints and motors of flexible joints); ``friction=``
chooses it:

- ``"regularised"`` (default): ``FS tanh(r / v_s)``, smooth, with the
  velocity scale ``v_s = friction_velocity`` (default
  :data:`DEFAULT_FRICTION_VELOCITY`, 1e-3 rad/s or m/s).  Above a few
  ``v_s`` it is Coulomb's law; a joint held by a torque ``|tau_hold| < FS``
  does not stick but creeps at ``|r| = v_s atanh(|tau_hold| / FS)``.
  Near rest the law is stiff (time constant ``~ m v_s / FS``): unless a
  ``method`` is given, such runs use ``"LSODA"``
  (:data:`REGULARISED_METHOD`), which switches to BDF there;
- ``"stick-slip"``: exact Coulomb friction, integrated phase by phase
  between events.  A joint at rest sticks (``r = 0``, its acceleration 0,
  the others' from the model constrained by it) while the torque that
  holds it stays below ``FS``; an event ends the phase when that torque
  reaches ``FS`` (the joint slips the way it pushes) or when the rate of a
  slipping joint, which feels ``FS sign(r)``, crosses zero (it sticks, or
  turns back if ``FS`` cannot hold it).  ``result.friction_events`` lists
  the switches.  Joints that hold each other (a loop, wheels) share the
  least-squares holding torques;
- ``"model"``: the model's own ``FS sign(qd)``, as generated (the run may
  stall where a joint stops).

Joint limits.  The position limits of ``robot.limits`` (a URDF's
``<limit lower upper>``) are watched by events: ``limits="stop"`` (default)
ends the run at the first one reached, ``limits="impact"`` applies an
impact law there (``restitution``; a joint that no longer rebounds rests
against its stop while it pushes on it), ``limits="ignore"`` lets the
joints pass them; ``result.limit_events`` says what happened.

Sampled (digital) control.  A controller that runs at a fixed rate (its
``period``, :class:`~kanerobot.mpc.MPC`'s ``dt``, or ``control_period=``) is
called once per tick ``t0 + k T``, with the state integrated to the tick
(after the projection of loops, the normalised quaternion), and its torque
is held until the next tick: a zero-order hold, integrated exactly.  The run
is cut at the ticks (one ``solve_ivp`` each, so no step crosses one and the
controller is never evaluated between them), the events, joint stops and
stick-slip phases going on across them; ``result.tau`` is the held torque.

Along the run the work ``W = int qd . (tau - friction) dt`` is integrated
with the state, so that ``energy_drift = E - E(0) - W`` is the integration
error of the energy for any input (without torques and friction it is
``E - E(0)``); ``friction_work`` is the part friction dissipated
(``int r . f dt``, viscous and Coulomb).

Examples
--------
A one-link arm on a stiff flexible joint (``flexarm1``, hanging along x0),
released from 0.5 rad with the spring at rest, integrated by Radau:

>>> import numpy as np, kanerobot as kr
>>> from kanerobot.simulation import simulate
>>> robot = kr.load(kr.frames_path("flexarm1"))
>>> values = {"ZZ1": 0.5, "MX1": 1.0, "MY1": 0.0, "G1": 9.81, "IA1": 0.1, "FV1": 0.0, "FS1": 0.0, "K1": 1e3}
>>> result = simulate(kr.derive(robot), values, [0.5, 0.5, 0.0, 0.0], (0.0, 1.0), method="Radau", backend="numpy")
>>> result.q.shape[1], result.relative_energy_drift < 1e-5
(2, True)
"""

import contextlib
import os
import sys
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Protocol, cast

import numpy as np
from numpy.typing import ArrayLike

from kanerobot.control import Controller, Trajectory
from kanerobot.dynamics.closed_loop import PROJECTION_TOL  # noqa: F401  (kept here: where it was documented)
from kanerobot.dynamics.dynamic_model import solve_dynamics
from kanerobot.dynamics.model import DerivedModel, NumericModel
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import Robot
from kanerobot.state_space import StateSpace

#: What :func:`simulate` and :func:`cross_validate` take for a model (type hints).
_ModelLike = Robot | DerivedModel | NumericModel

__all__ = [
    "DEFAULT_FRICTION_VELOCITY",
    "DEFAULT_SOLVER_OPTIONS",
    "FRICTION_LAWS",
    "LIMIT_LAWS",
    "LIMIT_REST_SPEED",
    "REGULARISED_METHOD",
    "CrossValidation",
    "Event",
    "SimulationResult",
    "cross_validate",
    "event",
    "joint_limit",
    "joint_limits",
    "numeric_model",
    "plant",
    "plot_simulation",
    "right_hand_side",
    "simulate",
    "stop_message",
]

#: Options given to ``solve_ivp`` unless the call says otherwise (tighter than
#: scipy's own 1e-3 / 1e-6, which let the energy drift visibly).
DEFAULT_SOLVER_OPTIONS = {"method": "DOP853", "rtol": 1e-8, "atol": 1e-10}
#: The default method under regularised Coulomb friction (stiff near rest).
REGULARISED_METHOD = "LSODA"
#: How :func:`simulate` applies Coulomb friction (see its ``friction``).
FRICTION_LAWS = ("regularised", "stick-slip", "model")
#: The velocity scale ``v_s`` of the regularised law ``FS tanh(qd / v_s)`` (rad/s or m/s).
DEFAULT_FRICTION_VELOCITY = 1e-3
#: What :func:`simulate` does where a joint reaches a limit of ``robot.limits`` (see its ``limits``).
LIMIT_LAWS = ("stop", "impact", "ignore")
#: Under ``limits="impact"``, a joint that rebounds from its stop slower than this (rad/s or m/s) rests against it.
LIMIT_REST_SPEED = 1e-4
_COULOMB_FREE: weakref.WeakKeyDictionary[NumericModel, NumericModel] = weakref.WeakKeyDictionary()  # numeric model -> the same with FS = 0
_HAIR = 1e-12  # relative: how far inside its limit a joint goes on after an impact


# ------------------------------------------------------------------ events
class Event:
    """A condition that stops a simulation or is recorded when it is met.

    ``function(t, q, qd)`` changes sign when the event happens (scipy's
    event convention, with the state split as the model's functions take
    it).

    Parameters
    ----------
    function : callable
        ``value = function(t, q, qd)``, a float.
    terminal : bool, optional
        Stop the simulation at the first occurrence.
    direction : {0, 1, -1}, optional
        Count only crossings from negative to positive (1), positive to
        negative (-1), or both (0).
    name : str, optional
        Key of ``result.events``; by default the function's name.

    Examples
    --------
    >>> fall = Event(lambda t, q, qd: q[0] - 1.0, terminal=True, name="fall")
    >>> fall.name, fall.terminal, fall(0.0, [1.5], [0.0])
    ('fall', True, 0.5)
    """

    def __init__(self, function, terminal=False, direction=0, name=None):
        if not callable(function):
            raise KaneRobotError(f"an event needs a function value(t, q, qd), got {function!r}")
        if direction not in (0, 1, -1):
            raise KaneRobotError(f"event direction must be 0, 1 or -1, got {direction!r}")
        self.function = function
        self.terminal = bool(terminal)
        self.direction = direction
        self.name = name or getattr(function, "__name__", "event")

    def __call__(self, t, q, qd):
        return float(self.function(t, np.asarray(q), np.asarray(qd)))

    def bind(self, plant):
        """The ``function(t, q, qd)`` for the model of ``plant`` (labels resolved)."""
        return self.__call__

    def __repr__(self):
        return f"Event({self.name!r}, terminal={self.terminal}, direction={self.direction})"


class _SolverEvent(Protocol):
    """An event as ``solve_ivp`` takes it: ``value = event(t, y)``, with ``terminal`` and ``direction`` read off it."""

    terminal: bool
    direction: float

    def __call__(self, t: float, y: np.ndarray, /) -> float: ...


def _solver_event(function: Callable[[float, np.ndarray], float], terminal: bool, direction: float) -> _SolverEvent:
    """``function(t, y)`` with the ``terminal`` and ``direction`` attributes scipy reads (set on the function itself)."""
    event = cast(_SolverEvent, function)
    event.terminal, event.direction = terminal, direction
    return event


def event(function=None, *, terminal=False, direction=0, name=None):
    """Make an :class:`Event` of ``function(t, q, qd)``; usable as a decorator.

    Examples
    --------
    >>> @event(terminal=True)
    ... def fall(t, q, qd):
    ...     return 1.0 - abs(q[0])
    >>> fall
    Event('fall', terminal=True, direction=0)
    """
    if function is None:
        return lambda f: Event(f, terminal=terminal, direction=direction, name=name)
    return Event(function, terminal=terminal, direction=direction, name=name)


class _JointLimit(Event):
    def __init__(self, joint, lower, upper, terminal, name):
        if lower is None and upper is None:
            raise KaneRobotError(f"joint_limit({joint!r}) needs a lower or an upper limit")
        if lower is not None and upper is not None and not lower < upper:
            raise KaneRobotError(f"joint_limit({joint!r}): lower limit {lower} is not below upper limit {upper}")
        self.joint, self.lower, self.upper = joint, lower, upper
        super().__init__(self._value, terminal=terminal, direction=-1, name=name or f"limit {joint}")
        self._column = joint if isinstance(joint, (int, np.integer)) else None

    def _value(self, t, q, qd):
        if self._column is None:
            raise KaneRobotError(f"joint limit on {self.joint!r}: give the joint's position in q (an int), or use it through simulate()")
        x = q[self._column]
        margins = [x - self.lower if self.lower is not None else np.inf, self.upper - x if self.upper is not None else np.inf]
        return min(margins)

    def bind(self, plant):
        if not isinstance(self.joint, (int, np.integer)):
            self._column = plant.column(self.joint)
        elif not 0 <= self.joint < plant.nq:
            raise KaneRobotError(f"joint limit on q[{self.joint}]: q has {plant.nq} entries ({plant.layout_q})")
        return self.__call__


def joint_limit(joint, lower=None, upper=None, *, terminal=True, name=None):
    """An :class:`Event` when joint ``joint`` reaches ``lower`` or ``upper``.

    Parameters
    ----------
    joint : str or int
        A joint label (or a motor coordinate ``qr<label>`` of a flexible
        joint), or a position in ``q``.
    lower, upper : float, optional
        The limits (one may be left out).
    terminal : bool, optional
        Stop there (default), or only record.
    name : str, optional
        Default ``"limit <joint>"``.

    Returns
    -------
    Event
        Its value is the distance to the nearest limit, positive inside.

    Examples
    --------
    >>> limit = joint_limit(0, -1.0, 2.0)
    >>> limit(0.0, [1.5], [0.0]), limit.terminal
    (0.5, True)
    """
    return _JointLimit(joint, lower, upper, terminal, name)


def joint_limits(robot, terminal=True):
    """:func:`joint_limit` events of the position limits a robot's source gives (``robot.limits``).

    Parameters
    ----------
    robot : Robot
        A robot with ``limits`` (a URDF's ``<limit lower upper>``:
        :mod:`kanerobot.robot.urdf`); joints without position limits (a
        continuous joint) get no event.
    terminal : bool, optional
        Stop at the first limit reached (default), or only record them.

    Returns
    -------
    list of Event
        One per limited joint, in the order of ``q``, named ``"limit <label>"``;
        pass them as ``events=`` to :func:`simulate`.

    Examples
    --------
    >>> from kanerobot.robot.urdf import urdf_from_text
    >>> arm = urdf_from_text('''<robot name="p"><link name="b"/><link name="a"/>
    ...   <joint name="hinge" type="revolute"><parent link="b"/><child link="a"/>
    ...   <limit lower="-0.5" upper="1" effort="3" velocity="2"/></joint></robot>''')
    >>> [(e.name, e.terminal) for e in joint_limits(arm)], arm.limits["hinge"].upper
    ([('limit hinge', True)], 1.0)
    """
    events = []
    for label in robot.joint_labels:
        limits = robot.limits.get(label)
        if limits is not None and (limits.lower is not None or limits.upper is not None):
            events.append(joint_limit(label, limits.lower, limits.upper, terminal=terminal))
    return events


# ------------------------------------------------------------------ models
def numeric_model(model, values=None, backend="auto"):
    """The numeric model to simulate: ``model.numeric(values, backend)``.

    Parameters
    ----------
    model : Robot, derived model or numeric model
        A :class:`~kanerobot.Robot` (derived by Newton-Euler), what
        :func:`kanerobot.derive` returns, or what its ``numeric`` returns
        (then ``values`` must be None).
    values : mapping, optional
    backend : {"auto", "c", "numpy"}

    Examples
    --------
    >>> import kanerobot as kr
    >>> fn = numeric_model(kr.load(kr.frames_path("planar2")), dict.fromkeys(["L1", "M2", "MX2", "ZZ1", "ZZ2", "IA1", "IA2", "FV1", "FV2", "FS1", "FS2"], 1.0) | {"MY2": 0.0}, "numpy")
    >>> type(fn).__name__, numeric_model(fn) is fn
    ('NumericDynamics', True)
    """
    from kanerobot.robot.description import Robot

    if isinstance(model, Robot):
        from kanerobot.dynamics.model import derive

        model = derive(model)
    if hasattr(model, "numeric"):
        if values is None:
            raise KaneRobotError(
                f"values are needed to simulate {model.robot.name}: a dict of the model's parameters "
                f"({', '.join(model.parameters[:6])}{', ...' if len(model.parameters) > 6 else ''})"
            )
        return model.numeric(values, backend=backend)
    if not hasattr(model, "direct_dynamics"):
        raise KaneRobotError(f"cannot simulate {model!r}: give a Robot, a model of kr.derive or its numeric(values)")
    if values is not None:
        raise KaneRobotError("the model is already numeric (its parameters are bound): pass values=None")
    return model


class _FastCall:
    """One state through a compiled model, with buffers bound once.

    Fill ``inputs[group][:]`` and call; the result is ``out`` (overwritten
    by the next call).  Uses the documented attributes of
    :class:`~kanerobot.codegen.compiled.CompiledFunction` (library, name,
    args, sizes, constant, shape) and its ``<name>_batch`` C entry point
    with N = 1, without the per-call checks of ``batch``.
    """

    def __init__(self, function, parameters):
        import ctypes

        handle = ctypes.CDLL(str(function.library))
        entry = getattr(handle, f"{function.name}_batch")
        entry.argtypes = [ctypes.c_long] + [ctypes.c_void_p] * (len(function.args) + 1)
        entry.restype = None
        self._handle, self._entry = handle, entry
        self.inputs, pointers = {}, []
        for name, size in zip(function.args, function.sizes):
            if name in function.constant:
                buffer = np.ascontiguousarray(parameters, dtype=float).copy()
                if buffer.shape != (size,):
                    raise KaneRobotError(f"{function.name}: {size} parameters expected, got {buffer.shape}")
            else:
                buffer = np.zeros(size)
            self.inputs[name] = buffer
            pointers.append(buffer.ctypes.data)
        self.out = np.zeros(function.shape)
        self._arguments = (1, *pointers, self.out.ctypes.data)

    def __call__(self):
        self._entry(*self._arguments)
        return self.out


def _fast(model, fn, names):
    """``{name: _FastCall}`` of the compiled models ``names``, or None (numpy backend, no program)."""
    import sympy

    if getattr(fn, "backend", None) != "c":
        return None
    try:
        if not all(model.has_program(name) for name in names):
            return None
        parameters = np.array([fn.values[sympy.Symbol(name)] for name in model.parameters], dtype=float)
        return {name: _FastCall(model.compiled(name), parameters) for name in names}
    except Exception:  # any trouble: the checked numeric functions do the work
        return None


# ------------------------------------------------------------------ plants
#: What a plant reads of its state space: sizes, names and layouts, then its maps (bound methods).
_PLANT_READS = (
    "name", "kind", "nq", "nv", "ntau", "coordinates", "layout", "layout_q", "tau_layout", "joints", "controlled",
    "controlled_rates", "link_columns", "prepare", "qdot", "split", "column", "sample", "monitors", "actuated_rates",
    "rate_map", "rate_bias", "force_map",
)  # fmt: skip


class _Plant:
    """A numeric model seen as ``xdot = f(x, tau)``, read off its :class:`~kanerobot.state_space.StateSpace`.

    The sizes, names, layouts and maps (``prepare``, ``qdot``, ``rate_map``,
    ``force_map``, ``monitors`` ...) are the state space's, named in
    :data:`_PLANT_READS` and set on the plant once; the plant adds the
    direct dynamics (the compiled program on bound buffers where there is
    one), the Coulomb law and the power.
    """

    # what __init__ copies from the state space (_PLANT_READS), declared for the type checker
    name: str
    kind: str
    nq: int
    nv: int
    ntau: int
    coordinates: tuple[str, ...]
    layout: str
    layout_q: str
    tau_layout: str
    joints: tuple[str, ...]
    controlled: tuple[int, ...]
    controlled_rates: tuple[int, ...]
    link_columns: tuple[int, ...] | None
    prepare: Callable[[np.ndarray], np.ndarray]
    qdot: Callable[[np.ndarray, np.ndarray], np.ndarray]
    split: Callable[..., tuple[np.ndarray, np.ndarray]]
    column: Callable[[str], int]
    sample: Callable[[np.random.Generator], tuple[np.ndarray, np.ndarray]]
    monitors: Callable[[np.ndarray, np.ndarray, np.ndarray], dict[str, np.ndarray]]
    actuated_rates: Callable[[np.ndarray], np.ndarray]
    rate_map: Callable[[np.ndarray], np.ndarray]
    rate_bias: Callable[[np.ndarray, np.ndarray], np.ndarray]
    force_map: Callable[[np.ndarray], np.ndarray]

    def __init__(self, fn):
        from kanerobot.dynamics import energy

        self.fn = fn
        self.space = StateSpace.of(fn, "cannot simulate")
        for name in _PLANT_READS:
            setattr(self, name, getattr(self.space, name))
        self.energy = energy.energy_structure(fn)
        self.FV, self.FS = self.energy.FV, self.energy.FS
        self.coulomb = None  # a _Coulomb when simulate applies the Coulomb law (not the model's)
        self.direct_friction = self.space.direct_friction
        self.fast, self._inputs = None, self.space.program_inputs
        if self._inputs is not None:
            # the direct dynamics' program; a fixed base's kane and lagrange engines solve A qdd = tau - H
            solved = not fn.model.has_program("direct_dynamics") and self.space.joint_state
            self.fast = _fast(fn.model, fn, ["mass_matrix", "h"] if solved else ["direct_dynamics"])
            self.check_fast()

    # the dynamics, one state
    def _fill(self, call, q, qd, tau):
        state = {"q": q, "qd": qd, "tau": tau}
        for group, source, part in self._inputs:
            if group in call.inputs:
                call.inputs[group][:] = state[source][part]
        return call()

    def acceleration(self, q, qd, tau):
        if self.fast is None:
            return self.fn.direct_dynamics(q, qd, tau)
        if "direct_dynamics" in self.fast:
            return self._fill(self.fast["direct_dynamics"], q, qd, tau)
        A = self._fill(self.fast["mass_matrix"], q, qd, tau)
        return solve_dynamics(A, tau - self._fill(self.fast["h"], q, qd, tau), self.fn.model.robot.name)

    def friction_rates(self, q, qd, qdot):
        return self.space.joint_rates(q, qd, qdot)

    def motion(self, q, qd, qdot, tau, stuck=None, signs=None):
        """``(qdd, f)``: the accelerations and the Coulomb force ``f`` on the friction rates.

        Without :attr:`coulomb` the model's own law acts (``f`` is its
        ``FS sign(r)``).  With it, the model has ``FS = 0`` and ``f`` is
        applied through the torques: the regularised law when ``signs`` is
        None, else ``FS signs`` on the slipping rates and, on the ``stuck``
        ones, the holding force that keeps them at rest (``rdot = 0``).
        """
        r = self.friction_rates(q, qd, qdot)
        if self.coulomb is None:
            return np.array(self.acceleration(q, qd, tau), dtype=float), self.FS * np.sign(r)
        f = self.coulomb.regularised(r) if signs is None else self.FS * signs
        if not stuck:
            torques = f if self.direct_friction else self.force_map(q) @ f
            return np.array(self.acceleration(q, qd, tau - torques), dtype=float), f
        tau0 = tau - self.force_map(q) @ f
        a0 = np.array(self.acceleration(q, qd, tau0), dtype=float)
        stuck = list(stuck)
        # R_S qdd + c_S = 0 fixes the holding forces, which act against the rates (qdd = a0 - K f)
        K, RS = self.responses(q, qd, tau0, stuck, a0)
        # least squares: stuck rates that hold each other (a wheel and the body it carries) leave the
        # holding forces undetermined; the motion is not, and the smallest forces are taken
        holding = np.linalg.lstsq(RS @ K, RS @ a0 + self.rate_bias(q, qd)[stuck], rcond=None)[0]
        f = f.copy()
        f[stuck] = holding
        return a0 - K @ holding, f

    def responses(self, q, qd, tau, rates, a0=None):
        """``(K, R)``: the change of ``qdd`` per unit force on each of the joint ``rates`` (nv, m), and their
        rows of ``R(q)``; ``a0`` the accelerations at ``tau`` when known."""
        P = self.force_map(q)
        a0 = np.array(self.acceleration(q, qd, tau), dtype=float) if a0 is None else a0
        K = np.column_stack([np.array(self.acceleration(q, qd, tau + P[:, j]), dtype=float) - a0 for j in rates])  # qdd is affine in tau
        return K, self.rate_map(q)[list(rates)]

    def hold(self, q, qd, tau, qdd, rates):
        """``(qdd, forces)``: the accelerations with the joint ``rates`` held at rest by forces on them (joint stops)."""
        K, R = self.responses(q, qd, tau, rates)
        forces = np.linalg.solve(R @ K, -(R @ qdd + self.rate_bias(q, qd)[list(rates)]))
        return qdd + K @ forces, forces

    def power(self, q, qd, qdot, tau, f=None):
        """``(power of tau less friction, power of friction)``, with the Coulomb force ``f`` on the rates."""
        rates = self.friction_rates(q, qd, qdot)
        if f is None:
            f = self.FS * np.sign(rates)
        dissipated = float(rates @ (self.FV * rates + f))
        return float(self.actuated_rates(qd) @ tau) - dissipated, dissipated

    # outputs
    def outputs(self, q_raw):
        return np.array([self.prepare(q) for q in q_raw]) if len(q_raw) else q_raw

    def check_fast(self):
        """Keep the fast path only if it agrees with the checked numeric model."""
        if self.fast is None:
            return
        rng = np.random.default_rng(0)
        q, qd = self.sample(rng)
        tau = rng.uniform(-1, 1, self.ntau)
        fast = np.array(self.acceleration(q, qd, tau), dtype=float)
        slow = np.asarray(self.fn.direct_dynamics(q, qd, tau), dtype=float)
        if not np.allclose(fast, slow, rtol=1e-9, atol=1e-9 * (1 + np.abs(slow).max())):
            self.fast = None


def plant(fn, friction="model", friction_velocity=None):
    """The integrable view of a numeric model (used by :func:`simulate`).

    ``friction`` is the Coulomb law (:data:`FRICTION_LAWS`): ``"model"``
    keeps the model's ``FS sign(qd)``; ``"regularised"`` and
    ``"stick-slip"`` evaluate the model with its ``FS`` symbols bound to 0
    and apply that law from the ``FS`` values (:attr:`coulomb`).
    """
    law = _friction_law(friction)
    p = _Plant(fn)
    if law == "model" or not np.any(p.FS):
        return p
    FS = p.FS
    p = _Plant(_without_coulomb(fn, p.energy))
    p.FS = FS
    p.coulomb = _Coulomb(p, law, friction_velocity)
    return p


# ---------------------------------------------------------------- friction
def _friction_law(friction):
    law = {"regularized": "regularised", "stick_slip": "stick-slip"}.get(friction, friction)
    if law not in FRICTION_LAWS:
        raise KaneRobotError(f"friction must be one of {', '.join(map(repr, FRICTION_LAWS))}, got {friction!r}")
    return law


def _without_coulomb(fn, structure):
    """``fn`` bound again with the symbols of every Coulomb coefficient ``FS`` set to 0.

    The generated models carry ``FS sign(qd)``; the simulation applies its
    own law from the values instead.  A ``FS`` written as a number in the
    robot's description cannot be unbound: an error says what to write.
    """
    try:
        return _COULOMB_FREE[fn]
    except (KeyError, TypeError):
        pass
    symbols = set().union(*(e.free_symbols for e in structure.FS_expressions))
    values = dict(getattr(fn, "values_by_name", None) or {str(k): v for k, v in fn.values.items()})
    zero = {symbol: 0 for symbol in symbols}
    for label, expr in zip(structure.friction_labels, structure.FS_expressions):
        if expr.xreplace(zero) != 0:
            written = f"{float(expr):g}" if expr.is_number else str(expr)
            raise KaneRobotError(
                f"{structure.name}: the Coulomb friction of joint {label} is FS = {written} in the robot's description; "
                f"simulate applies Coulomb friction itself from the values of FS symbols: write a symbol "
                f"(FS{label}) and give its value, or pass friction='model' to keep the model's FS sign(qd)"
            )
    values.update({str(symbol): 0.0 for symbol in symbols if str(symbol) in values})
    # the values were accepted when fn was bound (checked, or deliberately not):
    # zeroing FS cannot make them less physical, so they are not checked again
    free = fn.model.numeric(values, backend=fn.backend, physical=False)
    with contextlib.suppress(TypeError):  # a numeric model is immutable: one re-binding serves every run of it
        _COULOMB_FREE[fn] = free
    return free


class _Coulomb:
    """The Coulomb law a plant applies: ``FS tanh(r / v_s)`` or exact stick-slip."""

    def __init__(self, p, law, given):
        try:
            velocity = DEFAULT_FRICTION_VELOCITY if given is None else float(given)
        except (TypeError, ValueError):
            velocity = np.nan
        if law == "regularised" and not (np.isfinite(velocity) and velocity > 0):
            raise KaneRobotError(f"friction_velocity must be a positive speed (rad/s or m/s), got {given!r}")
        self.law, self.velocity, self.FS = law, velocity, p.FS
        self.active = np.flatnonzero(p.FS)  # the rates that can stick
        if np.any(p.FS < 0):
            j = int(np.argmax(p.FS < 0))
            raise KaneRobotError(f"{p.name}: FS of joint {p.energy.friction_labels[j]} is {p.FS[j]:g}; a Coulomb coefficient is >= 0")

    def regularised(self, r):
        return self.FS * np.tanh(r / self.velocity)


# ------------------------------------------------------------------ result
class SimulationResult:
    """What :func:`simulate` returns: the motion, torques, energies and monitors.

    Attributes
    ----------
    t : numpy.ndarray, shape (N,)
        Output times (``t_eval``, or the solver's steps).
    q : numpy.ndarray, shape (N, nq)
        Configurations (closed for loops, unit quaternion for a floating base).
    qd, qdd : numpy.ndarray, shape (N, nv)
        Speeds and their time derivatives (the direct dynamics at the outputs).
    tau : numpy.ndarray, shape (N, ntau)
        The controller's torques at the outputs (zeros without one); under
        a control period, the torque held at each output.
    kinetic, potential, energy : numpy.ndarray, shape (N,)
        ``T``, ``U`` (gravity and springs) and ``E = T + U``
        (:mod:`kanerobot.dynamics.energy`).
    work : numpy.ndarray, shape (N,)
        ``int qd . (tau - friction) dt`` from the start, plus the kinetic
        energy that impacts at joint limits took (``limits="impact"``).
    friction_work : numpy.ndarray, shape (N,)
        ``int r . f dt``: the energy friction dissipated (viscous and
        Coulomb, >= 0), included in ``work``.
    friction : numpy.ndarray, shape (N, nr)
        The friction torques ``f`` on the rates ``r`` friction acts on
        (``FV r`` plus the Coulomb law; the holding torque of a stuck joint).
    friction_labels : list of str
        The joints of those rates (a motor ``r<label>`` of flexible joints).
    friction_law, friction_velocity
        The Coulomb law used (``"regularised"``, ``"stick-slip"`` or
        ``"model"``) and ``v_s`` of the regularised one (else None).
    friction_events : list of dict
        Stick-slip switches: ``{"t", "joint", "event"}`` with event
        ``"stick"``, ``"slip"`` (from rest) or ``"reverse"`` (a slipping
        joint that stopped and turns back); the joints at rest at the start
        are listed at ``t0``.
    segments : int
        The ``solve_ivp`` calls (one per stick-slip phase, joint-stop
        phase and tick of a sampled controller).
    energy_change : numpy.ndarray, shape (N,)
        ``E - E(0)``.
    energy_drift : numpy.ndarray, shape (N,)
        ``E - E(0) - work``: the integration error (0 exactly for the true
        motion; without torques and friction it is ``energy_change``).
    relative_energy_drift : float
        ``max |energy_drift|`` over the energy that moves in the run:
        ``max(max T, max U - min U, max |work|)`` (1 if all are 0).
    monitors : dict
        By structure: ``closure_residual`` (N,) for loops;
        ``constraint_residual`` (N,) for wheels; ``base_pose``
        (N, 4, 4), ``momentum`` (N, 6, world frame, about its origin) and
        ``quaternion_norm_error`` (N,) for a floating base; ``deflection``
        (N, nf) ``q_f - q_r`` for flexible joints.
    events : dict
        ``{name: {"t": (k,), "q": (k, nq), "qd": (k, nv)}}`` for each event.
    terminated_by : str or None
        The terminal event that stopped the run (``"limit <joint>"`` for a
        joint limit under ``limits="stop"``).
    limits, restitution
        The law at the joint limits (``"stop"``, ``"impact"`` or
        ``"ignore"``) and ``e`` of ``"impact"`` (else None).
    limit_events : list of dict
        What happened at the joint limits: ``{"t", "joint", "side",
        "limit", "event"}``, event ``"stop"`` (with the ``"rate"`` it
        arrived at), ``"impact"`` (``"rate"`` and ``"rebound"``), ``"rest"``
        (held against its stop) or ``"release"``.
    coordinates : list of str
        Names of the columns of ``q``.
    layout : str
        The state layout, as error messages give it.
    status, message, success, nfev, njev, nlu
        From ``solve_ivp`` (evaluations summed over the phases);
        ``solution`` is its whole result, of the last phase (``sol`` with
        ``dense_output=True``).
    kind, method, seconds
        The structure, the solver, the wall time of the integration.
    numeric : numeric model
        The model simulated (``model.numeric(values)``).

    :meth:`plot` writes the figures (matplotlib), :meth:`animate` an
    animation, :meth:`save` the arrays (NPZ or CSV), :meth:`summary` the numbers.
    """

    # the fields simulate() passes, declared for the type checker (the class sets them from its keywords)
    name: str
    kind: str
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray
    energy: np.ndarray
    work: np.ndarray
    friction_work: np.ndarray
    energy_change: np.ndarray
    energy_drift: np.ndarray
    relative_energy_drift: float
    friction: np.ndarray
    friction_labels: list[str]
    friction_law: str
    friction_velocity: float | None
    friction_events: list[dict[str, Any]]
    segments: int
    monitors: dict[str, np.ndarray]
    events: dict[str, dict[str, np.ndarray]]
    terminated_by: str | None
    limits: str
    restitution: float | None
    limit_events: list[dict[str, Any]]
    coordinates: list[str]
    layout: str
    status: int
    message: str
    success: bool
    nfev: int
    njev: int
    nlu: int
    solution: Any  # scipy's OdeResult
    method: str
    seconds: float
    numeric: NumericModel

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)

    def __repr__(self):
        return (
            f"<SimulationResult {self.name} ({self.kind}): {len(self.t)} samples, t {self.t[0]:g}..{self.t[-1]:g} s, "
            f"{self.method}, {self.nfev} evaluations, relative energy drift {self.relative_energy_drift:.2e}>"
        )

    def plot(self, folder, prefix="simulation", controller=None):
        """Write the run's figures as PNG files in ``folder`` (see :func:`plot_simulation`); ``controller``: its gains are written beside."""
        return plot_simulation(self, folder, prefix, controller)

    def animate(self, path, fps=20, frames=None, **options):
        """Write an animation of the run: ``.gif``, ``.html`` or ``.mp4`` (see :func:`kanerobot.visual.animate.animate`)."""
        from kanerobot.visual.animate import animate

        return animate(self, path, fps, frames, **options)

    def summary(self):
        """Numbers of the run: ``dict`` of floats and strings.

        Examples
        --------
        >>> import kanerobot as kr
        >>> values = {"ZZ1": 0.5, "MX1": 1.0, "MY1": 0.0, "G1": 9.81, "IA1": 0.1, "FV1": 0.0, "FS1": 0.0, "K1": 1e3}
        >>> r = simulate(kr.load(kr.frames_path("flexarm1")), values, [0.1, 0.1, 0, 0], (0, 0.1), method="Radau", backend="numpy")
        >>> sorted(r.summary())[:4]
        ['final_time', 'friction_events', 'friction_law', 'friction_work']
        """
        out = {
            "robot": self.name,
            "kind": self.kind,
            "method": self.method,
            "final_time": float(self.t[-1]),
            "samples": len(self.t),
            "nfev": int(self.nfev),
            "seconds": float(self.seconds),
            "max_abs_energy_drift": float(np.max(np.abs(self.energy_drift))) if len(self.t) else 0.0,
            "friction_work": float(self.friction_work[-1]) if len(self.t) else 0.0,
            "friction_law": self.friction_law,
            "friction_events": len(self.friction_events),
            "relative_energy_drift": float(self.relative_energy_drift),
            "max_abs_tau": float(np.max(np.abs(self.tau))) if self.tau.size else 0.0,
            "terminated_by": self.terminated_by or "",
            "limits": self.limits,
            "limit_events": len(self.limit_events),
        }
        for name, value in self.monitors.items():
            if name in ("closure_residual", "constraint_residual", "quaternion_norm_error"):
                out[f"max_{name}"] = float(np.max(value)) if len(value) else 0.0
            if name == "momentum" and len(value):
                out["max_momentum_change"] = float(np.max(np.abs(value - value[0])))
        return out

    def arrays(self):
        """The columns of the run as ``{name: 1-D array}`` (for CSV and NPZ files)."""
        columns = {"t": self.t}
        for prefix, array in (("q", self.q), ("qd", self.qd), ("qdd", self.qdd), ("tau", self.tau)):
            # joint labels where the entries are the coordinates, positions otherwise
            names = self.coordinates if len(self.coordinates) == array.shape[1] else range(array.shape[1])
            for k, name in enumerate(names):
                columns[f"{prefix}_{name}"] = array[:, k]
        for name in ("kinetic", "potential", "energy", "work", "friction_work", "energy_drift"):
            columns[name] = getattr(self, name)
        for name, value in self.monitors.items():
            value = np.asarray(value)
            if value.ndim == 1:
                columns[name] = value
            elif value.ndim == 2:
                for k in range(value.shape[1]):
                    columns[f"{name}_{k}"] = value[:, k]
        return columns

    def save(self, path):
        """Write the run to ``path``: ``.npz`` (every array, monitors whole) or ``.csv`` (one column per entry).

        Returns
        -------
        pathlib.Path
        """
        from kanerobot.robot.io import atomic_write

        path = Path(path)
        if path.suffix == ".npz":
            # Any: numpy's savez also takes the keyword allow_pickle, which mypy matches a **dict of arrays against
            data: dict[str, Any] = {"t": self.t, "q": self.q, "qd": self.qd, "qdd": self.qdd, "tau": self.tau}
            for name in ("kinetic", "potential", "energy", "work", "friction_work", "energy_drift", "friction"):
                data[name] = getattr(self, name)
            data.update({f"monitor_{k}": np.asarray(v) for k, v in self.monitors.items()})
            data["coordinates"] = np.array(self.coordinates)
            atomic_write(path, lambda handle: np.savez(handle, **data))
        elif path.suffix == ".csv":
            columns = self.arrays()
            table = np.column_stack(list(columns.values())) if len(self.t) else np.zeros((0, len(columns)))
            atomic_write(path, lambda handle: np.savetxt(handle, table, delimiter=",", header=",".join(columns), comments="", fmt="%.17g"))
        else:
            raise KaneRobotError(f"cannot save a simulation as {path.name!r}: use a .npz or .csv file")
        return path


# ---------------------------------------------------------------- simulate
class _Progress:
    def __init__(self, enabled, name, t0, t1, stream=None):
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.name, self.t0, self.t1 = name, t0, t1
        self.start = time.monotonic()
        self.last = -np.inf
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.base = 0  # the evaluations of the phases before this one

    def update(self, t, nfev):
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last < (0.2 if self.tty else 2.0):
            return
        self.last = now
        share = 100.0 * (t - self.t0) / (self.t1 - self.t0) if self.t1 != self.t0 else 100.0
        text = f"simulate {self.name}: t = {t:.4g} / {self.t1:g} s ({share:3.0f} %), {nfev} evaluations, {now - self.start:.1f} s"
        self.stream.write(("\r" + text) if self.tty else text + "\n")
        self.stream.flush()

    def done(self, result):
        if not self.enabled:
            return
        text = (
            f"simulate {self.name}: done, t = {result.t[-1]:.4g} s, {result.nfev} evaluations, "
            f"{result.seconds:.2f} s, relative energy drift {result.relative_energy_drift:.2e}"
        )
        self.stream.write(("\r" + text + "\n") if self.tty else text + "\n")
        self.stream.flush()


def _torque_function(controller, plant):
    """``tau(t, q, qd)`` with its shape checked, from a controller or a constant."""
    n = plant.ntau
    zeros = np.zeros(n)
    if controller is None:
        return lambda t, q, qd: zeros
    if not callable(controller):
        constant = np.asarray(controller, dtype=float)
        if constant.size != n:
            raise KaneRobotError(
                f"constant torques for {plant.name} must have {n} values ({plant.tau_layout}); got shape {constant.shape}"
            )
        constant = constant.reshape(n)
        return lambda t, q, qd: constant

    def torque(t, q, qd):
        tau = np.asarray(controller(t, q, qd), dtype=float)
        if tau.shape != (n,):
            if tau.size == n and tau.ndim <= 2:
                tau = tau.reshape(n)
            else:
                raise KaneRobotError(
                    f"the controller returned torques of shape {tau.shape} at t = {t:g}; {plant.name} needs "
                    f"{n} torques ({plant.tau_layout}), as controller(t, q, qd) with q of {plant.nq} and qd of {plant.nv} values"
                )
        if not np.all(np.isfinite(tau)):
            raise KaneRobotError(f"the controller returned torques that are not finite at t = {t:g}: {tau.tolist()}")
        return tau

    return torque


def checked_control_period(control_period, controller):
    """The period of a sampled controller (None: continuous): ``control_period``, else ``controller.period``."""
    given = control_period is not None
    value = control_period if given else getattr(controller, "period", None) if callable(controller) else None
    if value is None:
        return None
    number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if not (number and np.isfinite(value) and value > 0):
        what = "control_period" if given else "the controller's period"
        hint = "" if given else " (or give control_period)"
        raise KaneRobotError(f"{what} must be a positive, finite time in seconds, got {value!r}{hint}")
    return float(value)


class _Hold:
    """Zero-order hold of a sampled controller: ``torque`` evaluated once per tick ``t0 + k T`` and held.

    Called as the torque function ``tau(t, q, qd)`` of the phases, it returns
    the held value whatever its arguments; :meth:`tick` samples the controller.
    """

    def __init__(self, p, torque, period, t0, t1):
        self.p, self.torque, self.period, self.t0, self.t1 = p, torque, period, t0, t1
        self.k = -1  # the last tick sampled
        self.value: np.ndarray | None = None

    def __call__(self, t, q, qd):
        return self.value

    @property
    def end(self):
        """The end of the current tick's segment: the next tick, or ``t1`` (a tick a hair before it is ``t1``)."""
        after = self.t0 + (self.k + 1) * self.period  # by multiplication: no drift over many ticks
        return self.t1 if after >= self.t1 - 1e-9 * self.period else after

    def due(self, t):
        """Whether ``t`` is the next tick (a segment ended there, or an event switched the phase there)."""
        return self.k < 0 or (self.end < self.t1 and t >= self.end - 1e-12 * max(1.0, abs(t)))

    def tick(self, t, y):
        """Sample the controller at ``(t, y)``: the state as the right-hand side sees it (``prepare``)."""
        p = self.p
        self.k += 1
        self.value = self.torque(t, p.prepare(y[: p.nq]), y[p.nq : p.nq + p.nv])
        return self.value


def _rhs(p, torque, work, progress=None, mode=None, dissipation=False, held=()):
    """``f(t, y)`` of a plant: ``y = (q, qd)``, then the work when ``work`` and the
    friction's work when ``dissipation``; ``mode`` the stick-slip mode ``(stuck, signs)``;
    ``held`` the joint rates resting against a stop (:class:`_Stops`)."""
    nq, nv = p.nq, p.nv
    size = nq + nv + (1 if work else 0) + (1 if dissipation else 0)
    stuck, signs = mode if mode is not None else (None, None)
    calls = [0]

    def rhs(t, y):
        y = np.asarray(y, dtype=float)
        q_raw, qd = y[:nq], y[nq : nq + nv]
        q = p.prepare(q_raw)
        tau = torque(t, q, qd)
        qdot = p.qdot(q, qd)
        out = np.empty(size)
        out[:nq] = qdot
        if p.coulomb is None:
            out[nq : nq + nv] = p.acceleration(q, qd, tau)
            f = None
        else:
            out[nq : nq + nv], f = p.motion(q, qd, qdot, tau, stuck, signs)
        if held:  # the stops' forces do no work: their rates are 0
            out[nq : nq + nv] = p.hold(q, qd, tau, out[nq : nq + nv], held)[0]
        if work:
            out[nq + nv], dissipated = p.power(q, qd, qdot, tau, f)
            if dissipation:
                out[nq + nv + 1] = dissipated
        if progress is not None:
            calls[0] += 1
            progress.update(t, progress.base + calls[0])
        return out

    return rhs


def right_hand_side(model, values=None, controller=None, *, work=False, backend="auto", friction="regularised", friction_velocity=None):
    """The function ``xdot = f(t, x)`` that :func:`simulate` integrates.

    For ``scipy.integrate.solve_ivp`` or any other integrator: ``x = (q,
    qd)`` (module table), ``xdot = (qdot, qdd)``; with ``work=True`` one
    more entry, the power ``qd . (tau - friction)`` (``x`` then ends with
    the work).  The compiled direct dynamics is called on bound buffers,
    without the checks of the numeric model's functions (the state's length
    is not checked either).

    Parameters
    ----------
    model, values, backend
        As :func:`simulate`.
    controller : callable or array_like, optional
        ``tau(t, q, qd)`` or constant torques; default none.
    work : bool, optional
    friction : {"regularised", "model"}, optional
        The Coulomb law, as :func:`simulate` (``"stick-slip"`` switches
        between several functions: only :func:`simulate` runs it).
    friction_velocity : float, optional
        ``v_s`` of the regularised law (default
        :data:`DEFAULT_FRICTION_VELOCITY`).

    Returns
    -------
    callable

    Examples
    --------
    >>> import kanerobot as kr
    >>> values = {"ZZ1": 0.5, "MX1": 1.0, "MY1": 0.0, "G1": 9.81, "IA1": 0.1, "FV1": 0.0, "FS1": 0.0, "K1": 100.0}
    >>> f = right_hand_side(kr.derive(kr.load(kr.frames_path("flexarm1"))), values, backend="numpy")
    >>> f(0.0, [0.0, 0.1, 1.0, 2.0]).round(6).tolist()      # K1 * 0.1 / ZZ1, -K1 * 0.1 / IA1
    [1.0, 2.0, 20.0, -100.0]
    """
    if _friction_law(friction) == "stick-slip":
        raise KaneRobotError(
            "right_hand_side: friction='stick-slip' switches between stuck and slipping joints at events, it is not one "
            "function f(t, x); use simulate(), or friction='regularised' (or 'model') here"
        )
    p = plant(numeric_model(model, values, backend), friction, friction_velocity)
    return _rhs(p, _torque_function(controller, p), work)


def _time_span(t_span):
    """``(t0, t1)`` floats of a forward, non-empty, finite ``t_span``."""
    try:
        t0, t1 = (float(t) for t in t_span)
    except (TypeError, ValueError):
        raise KaneRobotError(f"t_span must be (start, end) times, got {t_span!r}") from None
    if not (np.isfinite(t0) and np.isfinite(t1)):
        raise KaneRobotError(f"t_span must be two finite times (start, end), got {t_span!r}")
    if t1 == t0:
        raise KaneRobotError(f"t_span must be (start, end) with end > start: {t_span!r} is empty (start = end = {t0:g})")
    if t1 < t0:
        raise KaneRobotError(f"t_span must be (start, end) with end > start: {t_span!r} runs backwards (end {t1:g} < start {t0:g})")
    return t0, t1


def _output_times(t_eval, t0, t1):
    """``t_eval`` as an increasing array inside ``[t0, t1]`` (None stays None)."""
    if t_eval is None:
        return None
    try:
        times = np.asarray(t_eval, dtype=float)
    except (TypeError, ValueError):
        raise KaneRobotError(f"t_eval must be output times (numbers), got {t_eval!r}") from None
    if times.ndim != 1 or times.size == 0:
        raise KaneRobotError(
            f"t_eval must be a non-empty list of output times in t_span [{t0:g}, {t1:g}], got {t_eval!r} "
            f"(shape {times.shape}); leave it out to get the solver's steps"
        )
    bad = ~np.isfinite(times) | (times < t0) | (times > t1)
    if bad.any():
        k = int(np.argmax(bad))
        raise KaneRobotError(f"t_eval[{k}] = {times[k]:g} is outside t_span [{t0:g}, {t1:g}]: output times must lie in it")
    steps = np.diff(times)
    if np.any(steps <= 0):
        k = int(np.argmax(steps <= 0)) + 1
        raise KaneRobotError(f"t_eval must increase strictly: t_eval[{k}] = {times[k]:g} follows t_eval[{k - 1}] = {times[k - 1]:g}")
    return times


def _start_state(x0):
    """``x0`` as a 1-D finite array (its length is checked against the model's layout later)."""
    try:
        x = np.asarray(x0, dtype=float)
    except (TypeError, ValueError):
        raise KaneRobotError(f"x0 must be numbers (q then qd), got {x0!r}") from None
    if x.ndim != 1:
        raise KaneRobotError(f"x0 must be one flat array (q then qd), got shape {x.shape}")
    bad = ~np.isfinite(x)
    if bad.any():
        where = np.flatnonzero(bad)
        raise KaneRobotError(f"x0 has values that are not finite at {where.tolist()}: {x[where].tolist()}; give finite q and qd")
    return x


def simulate(
    model: _ModelLike,
    values: Mapping[str, float] | None,
    x0: ArrayLike,
    t_span: tuple[float, float],
    controller: Callable[[float, np.ndarray, np.ndarray], ArrayLike] | ArrayLike | None = None,
    *,
    t_eval: ArrayLike | None = None,
    events: Event | Callable[..., float] | Sequence[Event | Callable[..., float]] | None = None,
    progress: bool = False,
    backend: str = "auto",
    friction: str = "regularised",
    friction_velocity: float | None = None,
    limits: str = "stop",
    restitution: float = 0.0,
    control_period: float | None = None,
    **solver_options: Any,
) -> SimulationResult:
    """Integrate the direct dynamic model with ``scipy.integrate.solve_ivp``.

    Parameters
    ----------
    model : Robot, derived model or numeric model
        What :func:`kanerobot.derive` returns (with ``values``), its
        ``numeric(values)`` (with ``values=None``), or a Robot (derived by
        Newton-Euler).  Fixed-base serial and tree robots, closed loops,
        wheeled bases, flexible joints and floating bases (see the module's
        table).
    values : mapping or None
        ``{parameter name: float}``, as ``model.numeric`` takes them.
    x0 : array_like, shape (nq + nv,)
        ``q`` then ``qd`` (module table).
    t_span : (float, float)
        Start and end times, end after start.
    controller : callable or array_like, optional
        ``tau = controller(t, q, qd)`` returning ``ntau`` torques (see
        :mod:`kanerobot.control`), or constant torques; default none (a
        passive robot).
    t_eval : array_like, optional
        Output times, increasing, inside ``t_span``; default the solver's
        steps.
    events : Event, callable or list of them, optional
        :class:`Event` s (:func:`event`, :func:`joint_limit`); a plain
        callable ``value(t, q, qd)`` is recorded, not terminal.
    progress : bool, optional
        Show the progress on standard error.
    backend : {"auto", "c", "numpy"}, optional
        For ``model.numeric`` when the model is not numeric yet.
    friction : {"regularised", "stick-slip", "model"}, optional
        How the Coulomb friction ``FS`` of the joints acts (module notes).
        ``"regularised"`` (default): ``FS tanh(r / v_s)`` on each joint rate
        ``r``, smooth, so any solver integrates it; a joint held by less
        than ``FS`` creeps at ``|r| = v_s atanh(|tau_hold| / FS)`` instead of
        sticking.  ``"stick-slip"``: exact Coulomb friction, the run cut at
        events: a joint at rest sticks (``r = 0``) while the torque that
        holds it is below ``FS`` and slips when it reaches ``FS``; a slipping
        joint feels ``FS sign(r)`` until its rate crosses zero.  ``"model"``:
        the model's own ``FS sign(r)``, discontinuous: where a joint stops
        the step size collapses (the run may not finish).  Viscous friction
        ``FV r`` is the model's in every case.  Coulomb friction acts on
        the joints whose ``FS`` the model has (module notes).
    friction_velocity : float, optional
        The velocity scale ``v_s`` of ``"regularised"`` (rad/s or m/s;
        default :data:`DEFAULT_FRICTION_VELOCITY`, 1e-3).  Smaller is closer
        to exact Coulomb friction and stiffer to integrate.
    limits : {"stop", "impact", "ignore"}, optional
        What happens where a joint reaches a position limit of the robot's
        ``robot.limits`` (a URDF's ``<limit lower upper>``; robots without
        them have none).  ``"stop"`` (default): the run ends there, as a
        terminal event (``result.terminated_by`` is ``"limit <joint>"``,
        ``result.message`` names the joint, the limit and the time).
        ``"impact"``: an impact on the joint's stop, ``r+ = -e r-`` for its
        rate (``e = restitution``), the other joints' rates changed through
        the inertia (the least change of kinetic energy); a joint that
        rebounds slower than :data:`LIMIT_REST_SPEED` rests against its stop
        while it pushes on it.  ``"ignore"``: the limits are not looked at.
        ``result.limit_events`` lists what happened (``{"t", "joint",
        "side", "limit", "event"}``, event ``"stop"``, ``"impact"`` (with
        ``"rate"`` and ``"rebound"``), ``"rest"`` or ``"release"``).  A start
        beyond a limit is refused unless ``"ignore"``.
    restitution : float, optional
        ``e`` in [0, 1] of ``"impact"``: 0 (default) stops the joint dead at
        its stop, 1 rebounds without loss.  The kinetic energy an impact
        takes, ``(1 - e^2)`` of the joint's share, is counted in ``work``.
    control_period : float, optional
        ``T`` > 0 seconds: sample the controller (module notes).  It is
        called once at each tick ``t0``, ``t0 + T``, ... before ``t1`` (not
        at ``t1``), with the state integrated so far, and its torque held
        until the next tick; the integration restarts at each tick
        (``result.segments`` counts the pieces).  ``result.tau`` is the
        torque that acted: at a tick, the one computed there; at ``t1``,
        the last tick's.  Default: the controller's ``period`` attribute
        (:class:`kanerobot.control.Controller`; an
        :class:`~kanerobot.mpc.MPC` sets its ``dt``), else None: a
        continuous controller, evaluated wherever the solver evaluates the
        dynamics.
    **solver_options
        Given to ``solve_ivp``: ``method`` (``"DOP853"`` by default,
        ``"LSODA"`` under regularised Coulomb friction, which is stiff near
        rest; ``"Radau"``, ``"BDF"`` or ``"LSODA"`` for stiff flexible joints),
        ``rtol`` (1e-8), ``atol`` (1e-10), ``max_step``, ``first_step``,
        ``dense_output``, ``jac`` ...

    Returns
    -------
    SimulationResult

    Raises
    ------
    KaneRobotError
        Before any work: a ``t_span`` that is not two finite times, empty or
        running backwards; a ``t_eval`` that is empty, not increasing or
        outside ``t_span``; an ``x0`` that is not finite or, once the model
        is known, of the wrong length (naming the layout), a ``q`` that does
        not close the loops, a zero quaternion; an unknown ``friction``; a
        ``control_period`` (or controller ``period``) that is not a
        positive finite time, or with ``dense_output``.
        During the run: a controller returning the wrong number of torques
        or non-finite ones, and the integrator failing (its message and the
        time reached).

    Examples
    --------
    >>> import kanerobot as kr
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> values = dict.fromkeys(kr.derive(robot).parameters, 0.0)
    >>> values.update(L1=1.0, M2=1.0, MX2=0.5, ZZ1=1 / 3, ZZ2=1 / 3)
    >>> result = simulate(kr.derive(robot), values, [0, 0, 1, 0], (0, 1), t_eval=[0, 0.5, 1], backend="numpy")
    >>> result.q.shape, result.relative_energy_drift < 1e-8
    ((3, 2), True)
    >>> simulate(kr.derive(robot), values, [0, 0, 1], (0, 1), backend="numpy")
    Traceback (most recent call last):
      ...
    kanerobot.errors.KaneRobotError: x0 for planar2 must have 4 values: q (2: joints 1, 2) then qd (2: their rates); got shape (3,)
    >>> simulate(kr.derive(robot), values, [0, 0, 1, 0], (1, 0), backend="numpy")
    Traceback (most recent call last):
      ...
    kanerobot.errors.KaneRobotError: t_span must be (start, end) with end > start: (1, 0) runs backwards (end 0 < start 1)
    """
    from kanerobot.dynamics import energy

    # the inputs that need no model first: nothing is derived or compiled for a wrong call
    t0, t1 = _time_span(t_span)
    t_eval = _output_times(t_eval, t0, t1)
    x0 = _start_state(x0)
    law = _friction_law(friction)
    limits, restitution = _limit_law(limits, restitution)
    if limits == "impact" and law == "stick-slip":
        raise KaneRobotError("limits='impact' with friction='stick-slip' is not supported (an impact would upset the stuck joints); "
                             "use friction='regularised', or limits='stop'")  # fmt: skip
    if "args" in solver_options:
        raise KaneRobotError("args is not supported: the controller takes (t, q, qd); bind extra arguments in it")
    options: dict[str, Any] = dict(DEFAULT_SOLVER_OPTIONS)
    options.update(solver_options)
    if law == "stick-slip" and options.get("dense_output"):
        raise KaneRobotError("dense_output is not available with friction='stick-slip' (one solution per stick-slip phase)")
    period = checked_control_period(control_period, controller)
    if period is not None and options.get("dense_output"):
        raise KaneRobotError("dense_output is not available with a control period (one solution per tick); give t_eval")
    fn = numeric_model(model, values, backend)
    p = plant(fn, law, friction_velocity)
    if "method" not in solver_options and p.coulomb is not None and law == "regularised":
        # FS tanh(r / v_s) is stiff near rest (time constant ~ m v_s / FS): LSODA switches to BDF there
        options["method"] = REGULARISED_METHOD
    q0, qd0 = p.split(x0)
    torque = _torque_function(controller, p)
    nq, nv = p.nq, p.nv
    bar = _Progress(progress, p.name, t0, t1)
    scipy_events, event_list = _events(events, p)
    hold = None if period is None else _Hold(p, torque, period, t0, t1)
    if hold is not None:
        torque = hold  # the phases, the stops and stick-slip see the held torque
    stops = _Stops(p, torque, limits, restitution) if limits != "ignore" else None
    y0 = np.concatenate([q0, qd0, [0.0, 0.0]])
    start = time.monotonic()
    run = _integrate(p, torque, (t0, t1), y0, t_eval, options, scipy_events, bar if progress else None, stops, hold)
    seconds = time.monotonic() - start
    y = run.y
    q_raw, qd, work, friction_work = y[:, :nq], y[:, nq : nq + nv], y[:, nq + nv], y[:, nq + nv + 1]
    q = p.outputs(q_raw)
    t = run.t
    if hold is None:
        tau = np.array([torque(ti, qi, qdi) for ti, qi, qdi in zip(t, q, qd)]).reshape(len(t), p.ntau)
    else:  # what acted: no call of the controller between its ticks
        tau = np.array(run.taus, dtype=float).reshape(len(t), p.ntau)
    qdd, friction_torques = _output_motion(p, run.modes, q, qd, tau)
    if len(t):
        kinetic = np.atleast_1d(energy.kinetic_energy(fn, q, qd))
        potential = np.atleast_1d(energy.potential_energy(fn, q))
    else:
        kinetic = potential = np.zeros(0)
    total = kinetic + potential
    change = total - total[0] if len(t) else total
    drift = change - work
    scale = max(float(np.max(kinetic, initial=0.0)), float(np.ptp(potential)) if len(t) else 0.0, float(np.max(np.abs(work), initial=0.0)))
    relative = float(np.max(np.abs(drift), initial=0.0)) / (scale if scale > 0 else 1.0)
    recorded, terminated_by = {}, None
    for k, (name, ev) in enumerate(event_list):
        ty = np.asarray(run.t_events[k], dtype=float)
        yy = np.asarray(run.y_events[k], dtype=float).reshape(len(ty), len(y0))
        recorded[name] = {"t": ty, "q": p.outputs(yy[:, :nq]), "qd": yy[:, nq : nq + nv]}
        if ev.terminal and run.status == 1 and len(ty):
            terminated_by = name
    solution = run.solution
    message = solution.message
    if run.stopped is not None:
        terminated_by, message = f"limit {run.stopped['joint']}", stop_message(run.stopped)
    result = SimulationResult(
        name=p.name, kind=p.kind, t=t, q=q, qd=qd, qdd=qdd, tau=tau, kinetic=kinetic, potential=potential,
        energy=total, work=work, friction_work=friction_work, energy_change=change, energy_drift=drift,
        relative_energy_drift=relative, friction=friction_torques, friction_labels=list(p.energy.friction_labels),
        friction_law=law, friction_velocity=p.coulomb.velocity if p.coulomb is not None and law == "regularised" else None,
        friction_events=run.switches, segments=run.segments,
        monitors=p.monitors(q_raw, q, qd), events=recorded, terminated_by=terminated_by,
        limits=limits, restitution=restitution if limits == "impact" else None, limit_events=stops.records if stops else [],
        coordinates=list(p.coordinates), layout=p.layout, status=run.status, message=message,
        success=run.status >= 0, nfev=run.nfev, njev=run.njev, nlu=run.nlu,
        solution=solution, method=options["method"] if isinstance(options["method"], str) else options["method"].__name__,
        seconds=seconds, numeric=fn,
    )  # fmt: skip
    bar.done(result)
    return result


def _output_motion(p, phases, q, qd, tau):
    """``(qdd, friction)`` at the outputs, each in the phase (stick-slip mode, joints held by their stops) it belongs to."""
    qdd, friction = np.zeros((len(q), p.nv)), np.zeros((len(q), len(p.FS)))
    for i, (mode, held) in enumerate(phases):
        qdot = p.qdot(q[i], qd[i])
        stuck, signs = mode if mode is not None else (None, None)
        qdd[i], f = p.motion(q[i], qd[i], qdot, tau[i], stuck, signs)
        if held:
            qdd[i] = p.hold(q[i], qd[i], tau[i], qdd[i], held)[0]
        friction[i] = p.FV * p.friction_rates(q[i], qd[i], qdot) + f
    return qdd, friction


class _Run:
    """The outputs of one or several ``solve_ivp`` calls (one per stick-slip phase), joined."""

    def __init__(self, user_events, size):
        self.ts, self.ys, self.modes = [], [], []
        self.t_events: list[list[float]] = [[] for _ in range(user_events)]
        self.y_events: list[list[np.ndarray]] = [[] for _ in range(user_events)]
        self.size = size
        self.nfev = self.njev = self.nlu = self.segments = 0
        self.switches = []
        self.status, self.solution = 0, None
        self.stopped = None  # the record of the joint limit that ended the run (limits="stop")
        self.taus: list[np.ndarray] = []  # under a control period: the torque held at each output

    def add(self, solution, mode, first, dense, held_torque=None):
        t = solution.t
        y = np.asarray(solution.y).T if len(t) else np.zeros((0, self.size))  # a phase between two outputs has none (scipy's y: [])
        if not first and not dense and len(t):
            t, y = t[1:], y[1:]  # the previous phase ended at this point
        self.ts.append(t)
        self.ys.append(y)
        self.modes += [mode] * len(t)
        if held_torque is not None:
            self.taus += [held_torque] * len(t)
        for k in range(len(self.t_events)):
            self.t_events[k] += list(solution.t_events[k])
            self.y_events[k] += list(np.asarray(solution.y_events[k]).reshape(-1, self.size))
        self.nfev += int(solution.nfev)
        self.njev += int(solution.njev)
        self.nlu += int(solution.nlu)
        self.segments += 1
        self.status, self.solution = solution.status, solution

    def retorque(self, t, value):
        """A tick at ``t``: an output there (the end of the segment before) gets the torque held from it on."""
        last = next((ts[-1] for ts in reversed(self.ts) if len(ts)), None)
        if last is not None and last == t:
            self.taus[-1] = value

    @property
    def t(self):
        return np.concatenate(self.ts) if self.ts else np.zeros(0)

    @property
    def y(self):
        return np.concatenate(self.ys).reshape(-1, self.size) if self.ys else np.zeros((0, self.size))


def _integrate(p, torque, t_span, y0, t_eval, options, user_events, progress, stops=None, hold=None):
    """``solve_ivp`` from ``y0`` over ``t_span``: once, or phase after phase for stick-slip, joint stops
    and the ticks of a sampled controller (``hold``, a :class:`_Hold`, is then ``torque``)."""
    t0, t1 = t_span
    run = _Run(len(user_events), len(y0))
    stick = _StickSlip(p, torque, options) if p.coulomb is not None and p.coulomb.law == "stick-slip" else None
    mode, y, start, first = None, y0, t0, True
    if hold is not None:  # the first tick, on the state given: stick-slip and the stops settle under its torque
        hold.tick(t0, y0)
    if stick is not None:
        mode, y = stick.start(t0, y0)
        run.switches = stick.switches
    if stops:
        y = stops.start(t0, y)
    while True:
        if hold is not None and not first and hold.due(start):
            mode, y = _tick(run, hold, stick, stops, start, y, mode)
        end = t1 if hold is None else hold.end
        held = stops.held_rates() if stops else ()
        rhs = _rhs(p, torque, True, progress, mode, dissipation=True, held=held)
        limit_events = stops.events() if stops else []
        friction_events = stick.events(mode) if stick is not None else []
        times = None if t_eval is None else t_eval[((t_eval >= start) if first else (t_eval > start)) & (t_eval <= end)]
        events = user_events + limit_events + friction_events
        if progress is not None:
            progress.base = run.nfev
        solution, y_end = _solve(p, rhs, (start, end), y, times, end < t1, events, options)
        run.add(solution, (mode, held), first, times is not None, None if hold is None else hold.value)
        nu, nl = len(user_events), len(limit_events)
        if any(user_events[k].terminal and len(solution.t_events[k]) for k in range(nu)):
            return run
        if solution.status == 0:
            if end >= t1:
                return run
            start, y, first = end, np.array(y_end, dtype=float), False  # a tick
            continue
        k = next(i for i in range(nl + len(friction_events)) if len(solution.t_events[nu + i]))
        start, y = float(solution.t_events[nu + k][0]), np.array(solution.y_events[nu + k][0], dtype=float)
        if k < nl:
            y = stops.switch(start, y, k)
            if y is None:
                run.stopped = stops.records[-1]
                return run
        elif start < t1:
            assert stick is not None  # k >= nl: a friction event, which only a stick-slip run has
            mode, y = stick.switch(start, y, mode, k - nl)
        if start >= t1:  # the switch is the end
            return run
        first = False


def _solve(p, rhs, span, y, times, tick, events, options):
    """One ``solve_ivp`` over ``span``: ``(solution, state at its end or None)``; ``tick``: the end is a
    tick, whose state is needed even when it is not an output (asked for, then left out of the outputs)."""
    from scipy.integrate import solve_ivp

    start, end = span
    extra = tick and times is not None and (not len(times) or times[-1] < end)
    solution = solve_ivp(rhs, span, y, t_eval=np.append(times, end) if extra else times, events=events or None, **options)
    if solution.status == -1:
        reached = solution.t[-1] if len(solution.t) else start
        raise KaneRobotError(f"the integration of {p.name} failed at t = {reached:g}: {solution.message}")
    y_end = solution.y[:, -1] if solution.status == 0 and len(solution.t) else None
    if extra and solution.status == 0:
        solution.t, solution.y = solution.t[:-1], solution.y[:, :-1]
    return solution, y_end


def _tick(run, hold, stick, stops, t, y, mode):
    """A sampled controller's tick at ``(t, y)``: its new torque held; the stuck joints (stick-slip) and
    those resting on a stop settle under it.  Returns ``(mode, y)``."""
    run.retorque(t, hold.tick(t, y))
    if stick is not None:  # a stuck joint may no longer be held, under the new torque
        mode, y = stick.retick(t, y, mode)
    if stops:
        y = stops.retick(t, y)
    return mode, y


class _StickSlip:
    """Exact Coulomb friction: which rates are stuck, the signs of the slipping ones, the events between.

    A mode is ``(stuck, signs)``: the stuck friction rates (held at ``r = 0``
    by the force that :meth:`_Plant.motion` solves for) and ``FS signs`` on
    the others.  Events: a slipping rate crosses zero; the holding force of
    a stuck one reaches ``FS``.  At each, :meth:`switch` settles the new mode.
    """

    #: Switches after which the run is refused as chattering.
    MAX_SWITCHES = 20_000

    def __init__(self, p, torque, options):
        self.p, self.torque = p, torque
        self.FS, self.active = p.FS, p.coulomb.active
        self.rest = float(np.max(options.get("atol", DEFAULT_SOLVER_OPTIONS["atol"])))  # a rate this small is at rest at t0
        self.switches = []
        self._cache: tuple[tuple | None, Any, Any] = (None, None, None)  # key, y, forces (None: empty)

    def _parts(self, t, y):
        p = self.p
        q, qd = p.prepare(y[: p.nq]), y[p.nq : p.nq + p.nv]
        return q, qd, p.qdot(q, qd), self.torque(t, q, qd)

    def _rates(self, t, y):
        q, qd, qdot, _ = self._parts(t, y)
        return self.p.friction_rates(q, qd, qdot)

    def _holding(self, t, y, mode):
        """The friction force on the rates in ``mode`` (the holding forces on the stuck ones)."""
        key = (t, mode[0], mode[1].tobytes())
        if self._cache[0] == key and np.array_equal(self._cache[1], y):
            return self._cache[2]
        q, qd, qdot, tau = self._parts(t, y)
        f = self.p.motion(q, qd, qdot, tau, list(mode[0]), mode[1])[1]
        self._cache = (key, np.array(y), f)
        return f

    def _stop(self, y, stuck):
        """``y`` with the ``stuck`` rates set to 0 (the least change of the speeds)."""
        if not stuck:
            return y
        p = self.p
        y = np.array(y, dtype=float)
        q, qd = p.prepare(y[: p.nq]), y[p.nq : p.nq + p.nv]
        R = p.rate_map(q)[list(stuck)]
        y[p.nq : p.nq + p.nv] = qd - np.linalg.pinv(R) @ (R @ qd)
        return y

    def start(self, t, y):
        r = self._rates(t, y)
        signs = np.zeros(len(self.FS))
        signs[self.active] = np.sign(r[self.active])
        stuck = [int(j) for j in self.active if abs(r[j]) <= self.rest]
        signs[stuck] = 0.0
        return self._settle(t, y, stuck, signs, None)

    def retick(self, t, y, mode):
        """A sampled controller's new torque at ``t``: the stuck rates it no longer holds slip."""
        self._cache = (None, None, None)  # the holding forces were those of the torque before
        return self._settle(t, y, list(mode[0]), mode[1].copy(), mode[0])

    def switch(self, t, y, mode, k):
        stuck, signs = list(mode[0]), mode[1].copy()
        j = self._event_rates[k]
        if len(self.switches) > self.MAX_SWITCHES:
            raise KaneRobotError(
                f"{self.p.name}: {len(self.switches)} stick-slip switches by t = {t:g} (joints chattering between "
                f"sticking and slipping); use friction='regularised'"
            )
        if j in stuck:  # its holding force reached FS
            return self._settle(t, y, stuck, signs, mode[0], release=j)
        stuck.append(j)  # its rate crossed zero: it sticks if FS can hold it
        signs[j] = 0.0
        return self._settle(t, y, stuck, signs, mode[0])

    def _settle(self, t, y, stuck, signs, before, release=None):
        """The consistent mode at ``(t, y)``: the stuck rates whose holding force exceeds ``FS``
        (and ``release``) slip the way that force pushes them.  ``before`` (None at the start):
        the rates stuck until now; the changes go to :attr:`switches`."""
        y = self._stop(y, stuck)
        released = []
        while stuck:
            f = self._holding(t, y, (tuple(stuck), signs))
            ratio = np.abs(f[stuck]) / self.FS[stuck]
            k = stuck.index(release) if release is not None else int(np.argmax(ratio))
            if release is None and ratio[k] <= 1.0:
                break
            release = None
            j = stuck.pop(k)
            signs[j] = np.sign(f[j])
            released.append(j)
        labels = self.p.energy.friction_labels
        for j in stuck:
            if before is None or j not in before:
                self.switches.append({"t": t, "joint": labels[j], "event": "stick"})
        for j in released:
            # from rest (stuck before, or at the start) it slips; a slipping joint that stopped turns back
            kind = "slip" if before is None or j in before else "reverse"
            self.switches.append({"t": t, "joint": labels[j], "event": kind})
        return (tuple(stuck), signs), y

    def events(self, mode):
        stuck, signs = mode
        out, self._event_rates = [], []
        for j in self.active:
            j = int(j)
            if j in stuck:
                def event(t, y, j=j):
                    return self.FS[j] - abs(self._holding(t, y, mode)[j])

                direction = -1
            else:
                def event(t, y, j=j):
                    return self._rates(t, y)[j]

                direction = -signs[j]
            out.append(_solver_event(event, terminal=True, direction=direction))
            self._event_rates.append(j)
        return out


class _Stop(NamedTuple):
    """One limit of ``robot.limits``: the joint, its column of ``q``, its joint rate (None: no rate of its own)."""

    label: str
    column: int
    rate: int | None
    side: str  # "lower" or "upper"
    value: float

    @property
    def sign(self):
        """+1 at an upper limit, -1 at a lower one: ``sign * r > 0`` moves the joint into its stop."""
        return 1.0 if self.side == "upper" else -1.0


def stop_message(record: Mapping[str, Any], option: str = "limits={!r}") -> str:
    """What ended a run at a joint limit (a ``"stop"`` of ``result.limit_events``), and how to go on.

    ``option`` spells the choice of a law (``"--limits {}"`` on the command line).

    Examples
    --------
    >>> stop_message({"t": 0.5, "joint": "2", "side": "upper", "limit": 1.2, "rate": 3.0, "event": "stop"}, "--limits {}")
    "joint '2' reached its upper limit 1.2 at t = 0.5 s (rate 3): the run stops there; --limits impact goes on with an impact law, --limits ignore passes the limit"
    """
    impact, ignore = option.format("impact"), option.format("ignore")
    return (f"joint {record['joint']!r} reached its {record['side']} limit {record['limit']:g} at t = {record['t']:.6g} s "
            f"(rate {record['rate']:.4g}): the run stops there; {impact} goes on with an impact law, {ignore} passes the limit")  # fmt: skip


def _limit_law(limits, restitution):
    if limits not in LIMIT_LAWS:
        raise KaneRobotError(f"limits must be one of {', '.join(map(repr, LIMIT_LAWS))}, got {limits!r}")
    try:
        e = float(restitution)
    except (TypeError, ValueError):
        e = np.nan
    if not 0.0 <= e <= 1.0:
        raise KaneRobotError(f"restitution must be a number in [0, 1], got {restitution!r} (0: the joint stops dead at its stop, 1: it rebounds)")
    return limits, e


class _Stops:
    """The limits of ``robot.limits`` along a run: events where a joint reaches one, then the law.

    ``"stop"`` ends the run there.  ``"impact"`` applies an impulsive force on
    the joint's rate ``r`` at its stop, with the rates of the joints resting
    against their stops held: ``r+ = -e r-`` (``e`` the restitution), the
    least change of the kinetic energy (``qd+ = qd- + K lambda``, ``K`` the
    response of ``qdd`` to a force on the rate).  A joint that rebounds slower
    than :data:`LIMIT_REST_SPEED` rests against its stop: held at ``r = 0``
    by the force its stop exerts, until that force would have to pull
    (an event releases it).
    """

    #: Impacts after which the run is refused as chattering.
    MAX_IMPACTS = 10_000

    def __init__(self, p, torque, law, restitution):
        self.p, self.torque, self.law, self.e = p, torque, law, restitution
        self.stops = []
        limits = p.fn.model.robot.limits
        for label in p.fn.model.robot.joint_labels:
            item = limits.get(label)
            for side in ("lower", "upper"):
                value = None if item is None else getattr(item, side)
                if value is not None:
                    rate = p.joints.index(label) if label in p.joints else None
                    self.stops.append(_Stop(label, p.column(label), rate, side, float(value)))
        if law == "impact":
            for stop in self.stops:
                if stop.rate is None:
                    raise KaneRobotError(f"limits='impact': joint {stop.label!r} of {p.name} has no joint rate of its own for the "
                                         "impact law; use limits='stop'")  # fmt: skip
        self.held = []  # indices of stops the joint rests against
        self.records = []
        self._cache: tuple[tuple | None, Any, Any] = (None, None, None)  # key, y, forces (None: empty)

    def __bool__(self):
        return bool(self.stops)

    # the state
    def _split(self, y):
        p = self.p
        return p.prepare(y[: p.nq]), y[p.nq : p.nq + p.nv]

    def margin(self, k, y):
        """How far joint stop ``k`` is, positive inside."""
        stop = self.stops[k]
        return stop.sign * (stop.value - self._split(y)[0][stop.column])

    def _rates(self, y, ks):
        q, qd = self._split(y)
        return self.p.rate_map(q)[[self.stops[k].rate for k in ks]] @ qd

    def held_rates(self):
        return tuple(self.stops[k].rate for k in self.held)

    def _forces(self, t, y):
        """The forces of the stops the joints rest against (``sign * force <= 0`` while they push)."""
        key = (t, tuple(self.held))
        if self._cache[0] == key and np.array_equal(self._cache[1], y):
            return self._cache[2]
        p = self.p
        q, qd = self._split(y)
        tau = self.torque(t, q, qd)
        qdd = p.motion(q, qd, p.qdot(q, qd), tau)[0]
        forces = p.hold(q, qd, tau, qdd, self.held_rates())[1]
        self._cache = (key, np.array(y), forces)
        return forces

    # events
    def events(self):
        """The phase's terminal events: each free stop reached, each resting joint released."""
        out = []
        for k in range(len(self.stops)):
            if k in self.held:
                def event(t, y, k=k):
                    return -self.stops[k].sign * self._forces(t, y)[self.held.index(k)]
            else:
                def event(t, y, k=k):
                    return self.margin(k, y)

            out.append(_solver_event(event, terminal=True, direction=-1))
        return out

    def _record(self, t, k, event, **more):
        stop = self.stops[k]
        self.records.append({"t": float(t), "joint": stop.label, "side": stop.side, "limit": stop.value, "event": event, **more})

    def start(self, t, y):
        """Refuse a start beyond a limit; under "impact", joints at a stop arrive there."""
        for k, stop in enumerate(self.stops):
            margin = self.margin(k, y)
            if margin < -1e-9 * (1.0 + abs(stop.value)):
                q = stop.value + stop.sign * -margin
                raise KaneRobotError(f"x0 puts joint {stop.label!r} at {q:g}, beyond its {stop.side} limit {stop.value:g} "
                                     f"(robot.limits of {self.p.name}): start inside the limits, or simulate with limits='ignore' (--limits ignore on the command line)")  # fmt: skip
        if self.law == "impact":
            for k, stop in enumerate(self.stops):
                if self.margin(k, y) <= 1e-9 * (1.0 + abs(stop.value)) and stop.sign * self._rates(y, [k])[0] >= 0:
                    y = self._arrive(t, y, k)
        return y

    def switch(self, t, y, k):
        """After event ``k`` of :meth:`events` at ``(t, y)``: the state to go on from, or None to stop."""
        stop = self.stops[k]
        if self.law == "stop":
            self._record(t, k, "stop", rate=float(self._rates(y, [k])[0]))
            return None
        if k in self.held:
            self.held.remove(k)
            self._record(t, k, "release")
            return y
        if len(self.records) > self.MAX_IMPACTS:
            raise KaneRobotError(f"{self.p.name}: {len(self.records)} impacts at joint limits by t = {t:g} (joint {stop.label!r} "
                                 "chattering on its stop); use a lower restitution or limits='stop'")  # fmt: skip
        return self._arrive(t, y, k)

    def _impulse(self, t, y, k, e):
        """``y`` after the impact of stop ``k`` with restitution ``e`` (the resting joints held); the work gets the change of kinetic energy."""
        from kanerobot.dynamics.energy import kinetic_energy

        p, ks = self.p, self.held + [k]
        q, qd = self._split(y)
        K, R = p.responses(q, qd, self.torque(t, q, qd), [self.stops[j].rate for j in ks])
        target = np.zeros(len(ks))
        target[-1] = -e * (R[-1] @ qd)
        after = qd + K @ np.linalg.solve(R @ K, target - R @ qd)
        y = np.array(y, dtype=float)
        y[p.nq : p.nq + p.nv] = after
        y[p.nq + p.nv] += float(kinetic_energy(p.fn, q, after) - kinetic_energy(p.fn, q, qd))
        return y

    def _arrive(self, t, y, k):
        """Joint stop ``k`` reached: the impact; a joint rebounding slower than LIMIT_REST_SPEED rests while its stop pushes."""
        stop = self.stops[k]
        y = np.array(y, dtype=float)
        # a hair inside: the next phase's event starts positive, so its root is the next arrival, not this one
        y[stop.column] = stop.value - stop.sign * _HAIR * (1.0 + abs(stop.value))
        rate = float(self._rates(y, [k])[0])
        if stop.sign * rate > 0:
            y = self._impulse(t, y, k, self.e)
            self._record(t, k, "impact", rate=rate, rebound=float(self._rates(y, [k])[0]))
        if abs(self._rates(y, [k])[0]) >= LIMIT_REST_SPEED:
            return y
        y = self._impulse(t, y, k, 0.0)
        self.held.append(k)
        self._let_go(t, y, k)
        if k in self.held:
            self._record(t, k, "rest")
        return y

    def _let_go(self, t, y, arriving=None):
        """A stop that would have to pull lets its joint go (``arriving``: the joint that just came, not recorded)."""
        while self.held:
            forces = -np.array([self.stops[j].sign for j in self.held]) * self._forces(t, y)
            if forces.min() >= 0:
                break
            j = self.held.pop(int(np.argmin(forces)))
            if j != arriving:
                self._record(t, j, "release")

    def retick(self, t, y):
        """A sampled controller's new torque at ``t``: the joints resting on a stop it now pulls from go."""
        self._cache = (None, None, None)  # the stops' forces were those of the torque before
        self._let_go(t, y)
        return y


def _events(events, p):
    """scipy events ``f(t, y)`` and the :class:`Event` s they come from."""
    if events is None:
        return [], []
    if callable(events) or isinstance(events, Event):
        events = [events]
    out, kept = [], []
    nq, nv = p.nq, p.nv
    for ev in events:
        if not isinstance(ev, Event):
            if not callable(ev):
                raise KaneRobotError(f"an event must be an Event or a function value(t, q, qd), got {ev!r}")
            ev = Event(ev, terminal=getattr(ev, "terminal", False), direction=getattr(ev, "direction", 0))
        function = ev.bind(p)

        def scipy_event(t, y, function=function):
            return function(t, p.prepare(y[:nq]), y[nq : nq + nv])

        out.append(_solver_event(scipy_event, terminal=ev.terminal, direction=ev.direction))
        kept.append(ev)
    names = [ev.name for ev in kept]
    names = [f"{name} ({k})" if names.count(name) > 1 else name for k, name in enumerate(names)]
    return out, list(zip(names, kept))


# ------------------------------------------------------ figures, cross-validation
def plot_simulation(result, folder, prefix="simulation", controller=None):
    """Write the figures of a :class:`SimulationResult` as PNG files in ``folder``; the paths written.

    ``<prefix>_motion.png`` (q and qd), ``<prefix>_torques.png`` and
    ``<prefix>_energy.png`` (energies and drift), a panel per chain of the
    robot and unit, the values (and the gains of ``controller``, when
    given) beside: see
    :func:`kanerobot.visual.figures.plot_simulation` (a KaneRobotError
    says how to install matplotlib when it is missing).
    """
    from kanerobot.visual.figures import plot_simulation as plot

    return plot(result, folder, prefix, controller)


class CrossValidation:
    """What :func:`cross_validate` returns: numbers, arrays and figures.

    Attributes
    ----------
    simulation : SimulationResult
        The run of the plant under the controller.
    t : numpy.ndarray, shape (N,)
    coordinates : list of str
        The controlled coordinates.
    desired, actual : numpy.ndarray, shape (N, n)
        ``q_d(t)`` and the plant's controlled coordinates.
    tracking_error, velocity_error : numpy.ndarray, shape (N, n)
        ``q_d - p`` and ``qd_d - v`` (for a flexible plant under a rigid
        controller, ``p`` and ``v`` are the link side, whatever the
        controller sees).
    tau : numpy.ndarray, shape (N, n)
        The controller's torques.
    disagreement : dict
        Where the models differ along the run, each an (N,) array
        evaluated at the plant's states seen in the controller's
        coordinates: ``mass_matrix`` ``max |A_ctrl - A_plant|``, ``h``
        ``max |H_ctrl - H_plant|``, ``gravity`` ``max |Q_ctrl - Q_plant|``
        (when both models have the same coordinates), and ``torque``
        ``max |ID_ctrl(q, qd, qdd) - tau|``: the error of the controller's
        inverse model on the plant's actual motion (also with a flexible
        plant, on the link side).  Absent entries are not comparable; the
        reason is in :attr:`notes`.
    notes : list of str
    figures : list of pathlib.Path
        PNG files written (``plot=...``).
    controller_model : numeric model
        The model the controller was built on (its robot names
        :attr:`coordinates`).
    """

    # the fields cross_validate() passes, declared for the type checker (the class sets them from its keywords)
    simulation: SimulationResult
    t: np.ndarray
    coordinates: list[str]
    desired: np.ndarray
    actual: np.ndarray
    tracking_error: np.ndarray
    velocity_error: np.ndarray
    tau: np.ndarray
    disagreement: dict[str, np.ndarray]
    relative_disagreement: dict[str, np.ndarray]
    notes: list[str]
    figures: list[Path]
    controller_name: str
    controller_robot: str
    plant_robot: str
    controller_kind: str
    plant_kind: str
    controller: Callable[..., Any]  # a Controller, or a function tau(t, q, qd)
    controller_model: NumericModel

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)

    def summary(self):
        """The numbers: ``dict`` of floats (and lists per coordinate).

        Keys: ``max_tracking_error``, ``rms_tracking_error``,
        ``final_tracking_error``, ``max_tracking_error_per_coordinate``,
        ``max_velocity_error``, ``max_abs_tau``, ``rms_tau``,
        ``relative_energy_drift``, ``max_<disagreement>`` (and its value
        relative to the plant's, ``relative_<name>``).
        """
        e = np.abs(self.tracking_error)
        out = {
            "max_tracking_error": float(e.max(initial=0.0)),
            "rms_tracking_error": float(np.sqrt(np.mean(self.tracking_error**2))) if e.size else 0.0,
            "final_tracking_error": float(e[-1].max(initial=0.0)) if len(e) else 0.0,
            "max_tracking_error_per_coordinate": e.max(axis=0).tolist() if len(e) else [],
            "max_velocity_error": float(np.abs(self.velocity_error).max(initial=0.0)),
            "max_abs_tau": float(np.abs(self.tau).max(initial=0.0)),
            "rms_tau": float(np.sqrt(np.mean(self.tau**2))) if self.tau.size else 0.0,
            "relative_energy_drift": float(self.simulation.relative_energy_drift),
        }
        for name, value in self.disagreement.items():
            out[f"max_{name}_disagreement"] = float(np.max(value, initial=0.0))
        for name, value in self.relative_disagreement.items():
            out[f"relative_{name}_disagreement"] = float(np.max(value, initial=0.0))
        return out

    def __repr__(self):
        s = self.summary()
        return (
            f"<CrossValidation {self.controller_name} on {self.controller_robot} vs plant {self.plant_robot}: "
            f"max tracking error {s['max_tracking_error']:.3g}, max |tau| {s['max_abs_tau']:.3g}>"
        )

    def report(self):
        """The summary as text, one number a line."""
        lines = [f"cross-validation: {self.controller_name} built on {self.controller_robot} ({self.controller_kind}), "
                 f"plant {self.plant_robot} ({self.plant_kind})"]
        for key, value in self.summary().items():
            if isinstance(value, list):
                value = "[" + ", ".join(f"{v:.3g}" for v in value) + "]"
            elif isinstance(value, float):
                value = f"{value:.6g}"
            lines.append(f"  {key:40s} {value}")
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)

    def plot(self, folder, prefix="cross_validation"):
        """Write the figures in ``folder``: tracking, torques, energy, disagreement (PNG).

        Returns
        -------
        list of pathlib.Path

        Raises
        ------
        KaneRobotError
            When matplotlib is not installed.
        """
        from kanerobot.visual.figures import plot_cross_validation

        paths = plot_cross_validation(self, folder, prefix)
        self.figures = list(getattr(self, "figures", [])) + paths
        return paths


def _as_numeric(model, values, backend, what):
    if isinstance(model, tuple) and len(model) == 2 and values is None:
        model, values = model
    try:
        return numeric_model(model, values, backend)
    except KaneRobotError as exc:
        raise KaneRobotError(f"{what}: {exc}") from None


def _observer(plant_view, controller_view, observe):
    """What the controller sees of the plant, and where the models are compared.

    Returns ``(function, seen, compared)``: a function ``(q, qd) -> (q_c,
    qd_c)`` (or None), and the columns ``(q columns, qd columns)`` of the
    plant's state the controller reads and those its model describes (the
    link side of a flexible plant under a rigid controller)."""
    if callable(observe):
        return observe, None, None
    plant, ctrl = plant_view.space, controller_view.space
    if plant.link_columns is not None and ctrl.link_columns is None:
        # a rigid controller on a plant with more coordinates than joints: the links are what it models,
        # the inputs' own coordinates (the motors) what it reads by default
        link = list(plant.link_columns)
        if controller_view.nq != len(link):
            raise KaneRobotError(f"the controller's model has {controller_view.nq} coordinates, the {plant.kind} plant {len(link)} joints")
        if observe in (None, "motor"):
            columns = list(plant.controlled)
        elif observe == "link":
            columns = link
        else:
            raise KaneRobotError(f"observe must be 'motor', 'link' or a function (q, qd) -> (q, qd); got {observe!r}")
        return None, (columns, columns), (link, link)
    if observe is not None:
        raise KaneRobotError(
            f"observe={observe!r} applies to a flexible plant under a rigid controller; otherwise give a function (q, qd) -> (q, qd)"
        )
    if (plant_view.nq, plant_view.nv) != (controller_view.nq, controller_view.nv):
        raise KaneRobotError(
            f"the controller's model ({controller_view.kind}, q of {controller_view.nq}, qd of {controller_view.nv}) and the "
            f"plant ({plant_view.kind}, q of {plant_view.nq}, qd of {plant_view.nv}) have different states: give "
            f"observe=function(q, qd) -> (q, qd) mapping the plant's state to the controller's"
        )
    whole = (list(range(plant_view.nq)), list(range(plant_view.nv)))
    return None, whole, whole


def cross_validate(
    controller_model: _ModelLike | tuple[_ModelLike, Mapping[str, float]],
    plant_model: _ModelLike | tuple[_ModelLike, Mapping[str, float]],
    controller: str | Controller | Callable[..., Any] = "computed_torque",
    trajectory: Trajectory | Callable[..., ArrayLike] | ArrayLike | None = None,
    *,
    controller_values: Mapping[str, float] | None = None,
    plant_values: Mapping[str, float] | None = None,
    t_span: tuple[float, float] | None = None,
    x0: ArrayLike | None = None,
    samples: int = 201,
    t_eval: ArrayLike | None = None,
    gains: Mapping[str, ArrayLike] | None = None,
    observe: str | Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None,
    plot: str | os.PathLike | None = None,
    prefix: str = "cross_validation",
    backend: str = "auto",
    progress: bool = False,
    control_period: float | None = None,
    **solver_options: Any,
) -> CrossValidation:
    """Run a controller built on one model against the plant of another.

    The controller is built on ``controller_model`` (the model the control
    engineer has: simplified, identified, by another engine) and drives a
    simulation of ``plant_model`` (the more faithful one).  The result tells
    whether it works: tracking error, torques, energy, and where the two
    models disagree along the run, as numbers and (``plot=folder``) PNG
    figures.

    Parameters
    ----------
    controller_model, plant_model : Robot, derived model, numeric model or (model, values)
        Models as :func:`simulate` takes them; values given here, as a pair,
        or in ``controller_values`` / ``plant_values``.
    controller : str, Controller or callable, optional
        ``"computed_torque"`` (default) or ``"pd_gravity"``, built on the
        controller's model with ``gains`` (``{"kp": ..., "kd": ...}``); a
        :class:`kanerobot.control.Controller` already built, or any
        ``tau = controller(t, q, qd)`` (three arguments); or a factory
        ``f(numeric controller model, trajectory) -> controller`` (two).
    trajectory : Trajectory, callable or array_like
        The desired motion of the controlled coordinates
        (:func:`kanerobot.control.controlled_coordinates`), or a set point.
        Not needed with a ready Controller.
    controller_values, plant_values : mapping, optional
        ``{parameter name: float}`` of each model, when not given as a pair.
    t_span : (float, float), optional
        Default: the trajectory's ``t_span``.
    x0 : array_like, optional
        The plant's initial state; default: on the trajectory at the start
        (the base at rest at the origin with zero momentum for a floating
        base, the springs deflected by gravity for flexible joints, the
        loops solved from the controlled joints).
    samples : int, optional
        Number of output times (``t_eval`` overrides).
    t_eval : array_like, optional
        Output times; default ``samples`` times evenly spread over ``t_span``.
    gains : mapping, optional
        ``{"kp": ..., "kd": ...}`` of a controller given by name.
    observe : {"motor", "link"} or callable, optional
        What a rigid controller sees of a flexible plant: the motor
        positions and rates (default: the encoders of a real arm, and the
        colocated feedback that keeps the loop stable) or the link side; or
        a function ``(q, qd) -> (q_c, qd_c)`` for models with different
        states.  The tracking error and the torque disagreement are always
        those of the link side.
    plot : str or path-like, optional
        A folder: write the figures there (needs matplotlib).  What they
        need is checked before the run; a failure while writing them after
        the run is a ``UserWarning`` and a note, and the result is returned
        (``result.plot(folder)`` writes them again).
    prefix : str, optional
        The start of the figures' file names (``<prefix>_tracking.png`` ...).
    backend : {"auto", "c", "numpy"}
    progress : bool
    control_period : float, optional
        Sample the controller every ``control_period`` seconds and hold its
        torque in between (:func:`simulate`); default the controller's
        ``period`` (an :class:`~kanerobot.mpc.MPC`'s ``dt``), else continuous.
    **solver_options
        Given to :func:`simulate` (``friction``, ``friction_velocity``,
        ``method``, ``rtol``, ``atol``, ...).

    Returns
    -------
    CrossValidation

    Examples
    --------
    Computed torque built on the Newton-Euler model drives the Kane model of
    a planar arm whose second link is 10 % heavier than the controller
    believes:

    >>> import kanerobot as kr
    >>> from kanerobot.control import quintic
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> values = {"L1": 1.0, "M2": 1.0, "MX2": 0.5, "MY2": 0.0, "ZZ1": 0.4, "ZZ2": 0.35, "IA1": 0.01, "IA2": 0.01,
    ...           "FV1": 0.0, "FV2": 0.0, "FS1": 0.0, "FS2": 0.0}
    >>> heavier = dict(values, M2=1.1, MX2=0.55, ZZ2=0.385)
    >>> cv = cross_validate((kr.derive(robot), values), (kr.derive(robot, "kane"), heavier), "computed_torque",
    ...                     quintic([0, 0], [1, -1], 1.0), backend="numpy", samples=11)
    >>> s = cv.summary()
    >>> 1e-6 < s["max_tracking_error"] < 0.05, round(s["max_mass_matrix_disagreement"], 3)
    (True, 0.235)
    """
    from kanerobot import control

    if plot is not None:
        from kanerobot.visual.figures import require_matplotlib

        require_matplotlib("cross_validate(plot=...)")
    fc = _as_numeric(controller_model, controller_values, backend, "the controller's model")
    fp = _as_numeric(plant_model, plant_values, backend, "the plant's model")
    ctrl, name = cross_controller(controller, fc, trajectory, gains)
    trajectory = getattr(ctrl, "trajectory", None) or (control.as_trajectory(trajectory, control.ControlView(fc).n, "the trajectory") if trajectory is not None else None)
    if trajectory is None:
        raise KaneRobotError("cross_validate needs the trajectory the controller tracks (to measure the tracking error)")
    cview, pview = control.ControlView(fc), control.ControlView(fp)
    if plot is not None:
        from kanerobot.visual.figures import cross_validation_panels

        cross_validation_panels(fc, cview.labels, fp)  # what the figures need, before the run: an error now costs seconds
    function, columns, compared = _observer(pview, cview, observe)
    t0, t1 = _cross_time_span(t_span, trajectory)
    if x0 is None:
        try:
            x0 = _initial_state(pview, cview, trajectory, t0, columns)
        except KaneRobotError as exc:
            raise KaneRobotError(f"cannot start the plant on the trajectory at t = {t0:g} ({exc}): give x0") from None
    if t_eval is None:
        t_eval = np.linspace(t0, t1, int(samples))

    plant_controller = _plant_controller(ctrl, function, columns)
    period = checked_control_period(control_period, ctrl)  # the observer's wrapper hides the controller's own
    sim = simulate(fp, None, x0, (t0, t1), plant_controller, t_eval=t_eval, progress=progress, control_period=period, **solver_options)
    qc, qdc, qddc = _controller_seen(sim, function, compared)
    desired, desired_rate, _ = trajectory.sample(sim.t)
    actual, actual_rate = cview.positions(qc), cview.rates(qdc)
    disagreement, relative, notes = _disagreement(fc, fp, cview, pview, qc, qdc, qddc, sim)
    result = CrossValidation(
        simulation=sim, t=sim.t, coordinates=list(cview.labels), desired=desired, actual=actual,
        tracking_error=desired - actual, velocity_error=desired_rate - actual_rate, tau=sim.tau,
        disagreement=disagreement, relative_disagreement=relative, notes=notes, figures=[],
        controller_name=name, controller_robot=_robot_name(fc), plant_robot=_robot_name(fp),
        controller_kind=cview.kind, plant_kind=pview.kind, controller=ctrl, controller_model=fc,
    )  # fmt: skip
    if plot is not None:
        _plot_after_the_run(result, Path(plot), prefix)
    return result


def _plot_after_the_run(result, folder, prefix):
    """``result.plot(folder, prefix)``; a failure (a full disk, a figure matplotlib refuses) is a warning and a
    note, not an exception: the simulation is done and the result is returned, to be plotted again."""
    import warnings

    try:
        result.plot(folder, prefix)
    except Exception as exc:  # whatever the figures' failure, it must not lose the run (Ctrl-C still stops)
        message = (f"the figures were not written ({exc}); the result is returned: write them with "
                   f"result.plot(folder) once the cause is fixed")  # fmt: skip
        result.notes.append(message)
        warnings.warn(f"cross_validate: {message}", UserWarning, stacklevel=3)


def cross_controller(controller, fc, trajectory, gains):
    """The controller of :func:`cross_validate` built on ``fc`` (a name, a Controller, a function or a factory), and its name."""
    from kanerobot import control

    gains = dict(gains or {})
    unknown = set(gains) - {"kp", "kd"}
    if unknown:
        raise KaneRobotError(f"gains takes kp and kd, got {', '.join(sorted(unknown))}")
    if isinstance(controller, str):
        factories = {"computed_torque": control.ComputedTorque, "pd_gravity": control.PDGravity, "pd": control.PDGravity}
        if controller not in factories:
            raise KaneRobotError(f"unknown controller {controller!r}: use 'computed_torque', 'pd_gravity', a Controller or a factory")
        if trajectory is None:
            raise KaneRobotError(f"controller {controller!r} needs a trajectory (or a set point) to track")
        name = controller
        ctrl = factories[controller](fc, trajectory, **gains)
    elif isinstance(controller, control.Controller):
        ctrl, name = controller, type(controller).__name__
        if gains:
            raise KaneRobotError("gains apply to a controller given by name; this Controller has its own")
    elif callable(controller) and _takes_state(controller):
        ctrl, name = controller, getattr(controller, "__name__", type(controller).__name__)
    elif callable(controller):
        ctrl = controller(fc, trajectory)
        name = getattr(controller, "__name__", type(controller).__name__)
        if not callable(ctrl):
            raise KaneRobotError(f"the controller factory {name} returned {ctrl!r}, not a controller(t, q, qd)")
    else:
        raise KaneRobotError(f"controller must be a name, a Controller or a factory, got {controller!r}")
    return ctrl, name


def _cross_time_span(t_span, trajectory):
    """(t0, t1): ``t_span``, else the trajectory's natural duration."""
    if t_span is None:
        if trajectory.t_span is None:
            raise KaneRobotError("give t_span: the trajectory has no natural duration")
        t_span = trajectory.t_span
    return float(t_span[0]), float(t_span[1])


def _plant_controller(ctrl, function, columns):
    """The controller as the plant calls it: the plant's state seen through the observer ``function``, else ``columns``."""
    if function is not None:
        def plant_controller(t, q, qd):
            q_c, qd_c = function(q, qd)
            return ctrl(t, q_c, qd_c)
    else:
        qcols, vcols = columns

        def plant_controller(t, q, qd):
            return ctrl(t, q[qcols], qd[vcols])

    return plant_controller


def _controller_seen(sim, function, compared):
    """The positions, rates and accelerations (None through an observer) of the controller's coordinates along ``sim``."""
    if function is not None:
        seen = [function(q, qd) for q, qd in zip(sim.q, sim.qd)]
        qc = np.array([s[0] for s in seen]).reshape(len(sim.t), -1)
        qdc = np.array([s[1] for s in seen]).reshape(len(sim.t), -1)
        return qc, qdc, None
    mq, mv = compared
    return sim.q[:, mq], sim.qd[:, mv], sim.qdd[:, mv]



def _takes_state(function):
    """Whether ``function`` is a controller ``(t, q, qd)`` rather than a factory ``(model, trajectory)``."""
    import inspect

    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    return len(positional) == 3


def _robot_name(fn):
    robot = getattr(fn, "robot", None) or fn.model.robot
    method = getattr(getattr(fn, "model", None), "method", None)
    return f"{robot.name} ({method})" if method else robot.name


def _initial_state(pview, cview, trajectory, t0, columns):
    """The plant on the trajectory at ``t0`` (see :func:`cross_validate`): its controlled
    coordinates there; free rates at zero momentum (a floating base at rest at the origin),
    or at rest where springs hold them."""
    q_d, qd_d, _ = trajectory(t0)
    plant = pview.space
    q = pview.full_configuration(q_d)
    if plant.link_columns is None:
        return np.concatenate([q, plant.free_rates_at_rest(q, qd_d)])
    qd = np.zeros(plant.nv)
    qd[list(plant.controlled_rates)] = qd_d
    if cview.space.link_columns is None:
        # a rigid controller's trajectory is the links': they move with it, the springs deflected by gravity there
        qd[list(plant.link_columns)] = qd_d
        k = pview.stiffness()
        g = pview.gravity(q)  # link rows at q_d
        spring = k > 0
        q[np.asarray(plant.controlled)[spring]] = q_d[spring] + g[spring] / k[spring]
    return np.concatenate([q, qd])


def _disagreement(fc, fp, cview, pview, qc, qdc, qddc, sim):
    """Model differences along the run (see :class:`CrossValidation`)."""
    out, relative, notes = {}, {}, []
    N = len(sim.t)
    comparable = cview.kind == pview.kind and (cview.nq, cview.nv) == (pview.nq, pview.nv)
    if comparable and N:
        pairs = (
            ("mass_matrix", lambda f: np.asarray(f.mass_matrix(sim.q), dtype=float).reshape(N, -1)),
            ("h", lambda f: np.asarray(f.h(sim.q, sim.qd), dtype=float).reshape(N, -1)),
            ("gravity", lambda f: np.asarray(f.gravity(sim.q), dtype=float).reshape(N, -1)),
        )
        for name, evaluate in pairs:
            a, b = evaluate(fc), evaluate(fp)
            out[name] = np.abs(a - b).max(axis=1)
            scale = np.abs(b).max(axis=1)
            relative[name] = out[name] / np.where(scale > 0, scale, 1.0)
    elif N:
        notes.append(
            f"the controller's model ({cview.kind}) and the plant ({pview.kind}) have different coordinates: "
            f"their inertia matrices and bias forces are not compared"
        )
    if qddc is not None and N and not cview.space.not_rigid:
        try:
            # the rows of the driven rates: the free ones' (a floating base's) are not the controller's torques
            predicted = np.asarray(fc.inverse_dynamics(qc, qdc, qddc), dtype=float).reshape(N, -1)[:, cview.rate_columns]
            out["torque"] = np.abs(predicted - sim.tau).max(axis=1)
            scale = np.abs(sim.tau).max(axis=1)
            relative["torque"] = out["torque"] / np.where(scale > 0, scale, 1.0)
            if cview.space.free_rates:
                notes.append("torque: the joint rows of the controller's inverse model on the plant's motion (base free)")
        except KaneRobotError as exc:
            notes.append(f"torque disagreement not computed: {exc}")
    elif qddc is None:
        notes.append("with observe=function the plant's accelerations are not mapped: no torque disagreement")
    return out, relative, notes
