"""Controllers as plain callables ``tau = controller(t, q, qd)``, and trajectories.

A controller is built on a numeric model (``fn = model.numeric(values)``,
the model the control engineer believes) and is then run against any plant
by :func:`kanerobot.simulate` (:mod:`kanerobot.simulation`) or :func:`kanerobot.cross_validate`.  It
receives the state as that model's functions take it and returns its
torques (see :mod:`kanerobot.simulation` for each structure's layout).

Controllers track the *controlled coordinates* ``p`` with rates ``v`` (one
per torque: those the model's :class:`~kanerobot.state_space.StateSpace`
says the torques drive), with the model's inertia ``M`` and bias forces
``b`` in them (``tau = M pdd + b``), the rates no torque drives eliminated
at zero force:

- fixed base: ``p = q``; ``M = A(q)``, ``b = H(q, qd)``, gravity ``Q(q)``;
- closed loops and wheeled bases: the independent joints ``q[ind]`` (the
  active joints of a loop, the wheels and body joints of a mobile base);
  the projected ``A_a``, ``H_a``, ``Q_a``;
- floating base: the joints ``q[7:]``, with the base free: ``M = A22 -
  A21 A11^-1 A12``, ``b = H2 - A21 A11^-1 H1`` (and the gravity likewise);
- flexible joints: the rigid joints and the motor positions ``q_r`` of the
  flexible ones (:func:`controlled_coordinates`); only the gravity ``Q`` at
  the desired positions is used (PD).

- :class:`ComputedTorque`: ``tau = A(q) (qdd_d + Kd (qd_d - v) + Kp (q_d - p)) + H(q, qd)``:
  with the exact model, the error obeys ``e'' + Kd e' + Kp e = 0``.
- :class:`PDGravity`: ``tau = Kp (q_d - p) + Kd (qd_d - v) + Q(q)`` (gravity
  compensation).  On flexible joints (Tomei's controller) the motors are
  driven to ``q_d + K^-1 Q(q_d)`` and the gravity term is ``Q(q_d)``.

Trajectories (:class:`Trajectory`) give ``q_d(t), qd_d(t), qdd_d(t)``:
:func:`quintic` (rest to rest, minimum jerk), :func:`waypoints` (rest at
each), :func:`sinusoid`, or :meth:`Trajectory.from_arrays` (splines through
samples) and :meth:`Trajectory.from_functions`.

- :func:`lqr_balance` (:class:`BalanceLQR`): a balancing LQR for a wheeled
  inverted pendulum (Krang on its wheels), linearised from the numeric
  model about its upright equilibrium (:func:`upright_equilibrium`,
  :func:`linearize`, :func:`actuation_matrix`).

Examples
--------
>>> import numpy as np, kanerobot as kr
>>> robot = kr.load(kr.frames_path("planar2"))
>>> values = dict.fromkeys(kr.derive(robot).parameters, 0.0)
>>> values.update(L1=1.0, M2=1.0, MX2=0.5, ZZ1=1 / 3, ZZ2=1 / 3)
>>> fn = kr.derive(robot).numeric(values, backend="numpy")
>>> controller = computed_torque(fn, quintic([0, 0], [1, -1], 2.0))
>>> result = kr.simulate(fn, None, [0, 0, 0, 0], (0, 2), controller, t_eval=[2.0], rtol=1e-10, atol=1e-12)
>>> bool(np.abs(result.q[-1] - [1, -1]).max() < 1e-6)
True
"""

import numpy as np

from kanerobot.errors import KaneRobotError
from kanerobot.state_space import StateSpace

__all__ = [
    "BalanceLQR",
    "ComputedTorque",
    "Controller",
    "PDGravity",
    "Trajectory",
    "actuation_matrix",
    "computed_torque",
    "controlled_coordinates",
    "linearize",
    "lqr_balance",
    "pd_gravity",
    "quintic",
    "sinusoid",
    "upright_equilibrium",
    "waypoints",
]


# -------------------------------------------------------------- trajectories
def _vector(x, what, n=None):
    array = np.atleast_1d(np.asarray(x, dtype=float))
    if array.ndim != 1 or (n is not None and array.shape[0] != n):
        expected = f"{n} values" if n is not None else "a vector"
        raise KaneRobotError(f"{what} must be {expected}, got shape {np.shape(x)}")
    return array


class Trajectory:
    """A desired motion ``t -> (q_d, qd_d, qdd_d)``.

    Parameters
    ----------
    position : callable
        ``q_d(t)``, an (n,) array.
    velocity, acceleration : callable, optional
        ``qd_d(t)``, ``qdd_d(t)``; by default central differences of
        ``position`` (of ``velocity`` for the acceleration) with ``step``.
    t_span : (float, float), optional
        Where the trajectory is defined (its natural duration); used as the
        default span of :func:`kanerobot.cross_validate`.
    step : float, optional
        Step of the finite differences.

    Attributes
    ----------
    n : int
        Number of coordinates.

    Examples
    --------
    >>> tr = Trajectory(lambda t: np.array([t**2, 1.0]), t_span=(0, 1))
    >>> q, qd, qdd = tr(0.5)
    >>> q.tolist(), qd.round(8).tolist(), qdd.round(4).tolist()
    ([0.25, 1.0], [1.0, 0.0], [2.0, 0.0])
    """

    def __init__(self, position, velocity=None, acceleration=None, *, t_span=None, step=1e-5):
        if not callable(position):
            raise KaneRobotError(f"a trajectory's position must be a function of t, got {position!r}")
        for name, f in (("velocity", velocity), ("acceleration", acceleration)):
            if f is not None and not callable(f):
                raise KaneRobotError(f"a trajectory's {name} must be a function of t or None, got {f!r}")
        self._position = position
        self._velocity = velocity
        self._acceleration = acceleration
        self.step = float(step)
        self.t_span = None if t_span is None else (float(t_span[0]), float(t_span[1]))
        t0 = self.t_span[0] if self.t_span else 0.0
        self.n = _vector(position(t0), "the trajectory's position").shape[0]

    @classmethod
    def from_functions(cls, position, velocity=None, acceleration=None, t_span=None):
        """The trajectory of these functions of t (see the class)."""
        return cls(position, velocity, acceleration, t_span=t_span)

    @classmethod
    def from_arrays(cls, t, q, qd=None, qdd=None):
        """A trajectory through samples.

        ``q`` alone: a C2 cubic spline (not-a-knot); with ``qd``: a cubic
        Hermite spline; with ``qd`` and ``qdd``: quintic Hermite pieces
        (C2, matching all three).  Outside ``[t[0], t[-1]]`` it holds the
        end samples (zero velocity and acceleration).

        Parameters
        ----------
        t : array_like, shape (N,)
            Increasing times.
        q, qd, qdd : array_like, shape (N, n) (or (N,) for one coordinate)

        Examples
        --------
        >>> t = np.linspace(0, 1, 11)
        >>> tr = Trajectory.from_arrays(t, np.sin(t)[:, None], np.cos(t)[:, None], -np.sin(t)[:, None])
        >>> q, qd, qdd = tr(0.55)
        >>> bool(abs(q[0] - np.sin(0.55)) < 1e-9 and abs(qdd[0] + np.sin(0.55)) < 1e-5)
        True
        """
        t = np.asarray(t, dtype=float)
        if t.ndim != 1 or len(t) < 2 or np.any(np.diff(t) <= 0):
            raise KaneRobotError("trajectory times must be an increasing 1-D array of at least 2 values")

        def samples(x, what):
            x = np.asarray(x, dtype=float)
            x = x[:, None] if x.ndim == 1 else x
            if x.ndim != 2 or x.shape[0] != len(t):
                raise KaneRobotError(f"trajectory {what} must have shape ({len(t)}, n), one row per time; got {np.shape(x)}")
            return x

        q = samples(q, "q")
        if qd is None:
            from scipy.interpolate import CubicSpline

            spline = CubicSpline(t, q, axis=0)
            parts = (spline, spline.derivative(1), spline.derivative(2))
        elif qdd is None:
            from scipy.interpolate import CubicHermiteSpline

            spline = CubicHermiteSpline(t, q, samples(qd, "qd"), axis=0)
            parts = (spline, spline.derivative(1), spline.derivative(2))
        else:
            parts = _quintic_hermite(t, q, samples(qd, "qd"), samples(qdd, "qdd"))
        t0, t1 = t[0], t[-1]
        zeros = np.zeros(q.shape[1])

        def clipped(k):
            def f(time):
                if time < t0 or time > t1:
                    return parts[0](min(max(time, t0), t1)) if k == 0 else zeros.copy()
                return np.asarray(parts[k](time), dtype=float)

            return f

        return cls(clipped(0), clipped(1), clipped(2), t_span=(t0, t1))

    def position(self, t):
        """``q_d(t)``, shape (n,)."""
        return _vector(self._position(t), "the trajectory's position", self.n)

    def velocity(self, t):
        """``qd_d(t)``, shape (n,)."""
        if self._velocity is not None:
            return _vector(self._velocity(t), "the trajectory's velocity", self.n)
        h = self.step
        return (self.position(t + h) - self.position(t - h)) / (2 * h)

    def acceleration(self, t):
        """``qdd_d(t)``, shape (n,)."""
        if self._acceleration is not None:
            return _vector(self._acceleration(t), "the trajectory's acceleration", self.n)
        h = self.step
        if self._velocity is not None:
            return (self.velocity(t + h) - self.velocity(t - h)) / (2 * h)
        h = max(h, 1e-4)
        return (self.position(t + h) - 2 * self.position(t) + self.position(t - h)) / (h * h)

    def __call__(self, t):
        """``(q_d, qd_d, qdd_d)`` at ``t``."""
        return self.position(t), self.velocity(t), self.acceleration(t)

    def sample(self, times):
        """``(q_d, qd_d, qdd_d)`` at each time, three arrays of shape (N, n)."""
        rows = [self(t) for t in np.atleast_1d(np.asarray(times, dtype=float))]
        if not rows:
            return tuple(np.zeros((0, self.n)) for _ in range(3))
        return tuple(np.array(part) for part in zip(*rows))

    def __repr__(self):
        return f"<Trajectory of {self.n} coordinates{'' if self.t_span is None else f', t {self.t_span[0]:g}..{self.t_span[1]:g}'}>"


def _quintic_hermite(t, q, qd, qdd):
    """Position, velocity and acceleration functions of quintic Hermite pieces."""

    def piece(time):
        k = int(np.clip(np.searchsorted(t, time, side="right") - 1, 0, len(t) - 2))
        h = t[k + 1] - t[k]
        s = (time - t[k]) / h
        coefficients = _quintic_coefficients(q[k], h * qd[k], h * h * qdd[k], q[k + 1], h * qd[k + 1], h * h * qdd[k + 1])
        return coefficients, s, h

    def make(order):
        def f(time):
            c, s, h = piece(time)
            return _polyval(c, s, order) / h**order

        return f

    return make(0), make(1), make(2)


def _quintic_coefficients(p0, v0, a0, p1, v1, a1):
    """Coefficients c0..c5 (rows) of the quintic on s in [0, 1] with these end values
    (v, a already scaled to the unit interval)."""
    p0, v0, a0, p1, v1, a1 = (np.asarray(x, dtype=float) for x in (p0, v0, a0, p1, v1, a1))
    c0, c1, c2 = p0, v0, a0 / 2
    d = p1 - c0 - c1 - c2
    e = v1 - c1 - 2 * c2
    f = a1 - 2 * c2
    c3 = 10 * d - 4 * e + f / 2
    c4 = -15 * d + 7 * e - f
    c5 = 6 * d - 3 * e + f / 2
    return np.array([c0, c1, c2, c3, c4, c5])


def _polyval(c, s, order):
    """The ``order``-th derivative in s of sum_k c_k s^k."""
    out = np.zeros_like(c[0])
    for k in range(order, 6):
        factor = 1.0
        for m in range(order):
            factor *= k - m
        out = out + factor * c[k] * s ** (k - order)
    return out


def quintic(q0, q1, duration, t0=0.0):
    """A rest-to-rest quintic (minimum-jerk) motion from ``q0`` to ``q1``.

    ``q_d = q0 + (q1 - q0) (10 s^3 - 15 s^4 + 6 s^5)``, ``s = (t - t0) /
    duration``: zero velocity and acceleration at both ends; it holds ``q0``
    before ``t0`` and ``q1`` after ``t0 + duration``.

    Parameters
    ----------
    q0, q1 : array_like, shape (n,)
    duration : float
        Positive.
    t0 : float, optional

    Returns
    -------
    Trajectory

    Examples
    --------
    >>> tr = quintic([0.0], [1.0], 2.0)
    >>> [round(float(x[0]), 6) for x in tr(1.0)]   # half way, at full speed 15/8 / 2
    [0.5, 0.9375, 0.0]
    """
    q0 = _vector(q0, "q0")
    q1 = _vector(q1, "q1", q0.shape[0])
    duration = float(duration)
    if not duration > 0:
        raise KaneRobotError(f"a quintic needs a positive duration, got {duration}")
    delta = q1 - q0

    def s_of(t):
        return min(max((t - t0) / duration, 0.0), 1.0)

    def position(t):
        s = s_of(t)
        return q0 + delta * (10 * s**3 - 15 * s**4 + 6 * s**5)

    def velocity(t):
        s = s_of(t)
        return delta * (30 * s**2 - 60 * s**3 + 30 * s**4) / duration

    def acceleration(t):
        s = s_of(t)
        return delta * (60 * s - 180 * s**2 + 120 * s**3) / duration**2

    return Trajectory(position, velocity, acceleration, t_span=(t0, t0 + duration))


def waypoints(times, positions):
    """Rest-to-rest quintics through ``positions`` at ``times``.

    The robot stops at each waypoint (zero velocity and acceleration): a
    smooth stop-and-go motion, C2 everywhere.

    Parameters
    ----------
    times : array_like, shape (K,)
        Increasing.
    positions : array_like, shape (K, n)

    Returns
    -------
    Trajectory

    Examples
    --------
    >>> tr = waypoints([0, 1, 3], [[0.0], [1.0], [-1.0]])
    >>> tr.position(1.0).tolist(), tr.position(2.0).tolist(), tr.velocity(1.0).tolist()
    ([1.0], [0.0], [0.0])
    """
    positions = np.asarray(positions, dtype=float)
    positions = positions[:, None] if positions.ndim == 1 else positions
    zeros = np.zeros_like(positions)
    return Trajectory.from_arrays(times, positions, zeros, zeros)


def sinusoid(q0, amplitude, frequency, phase=0.0, t_span=None):
    """``q_d = q0 + amplitude sin(2 pi frequency t + phase)``, per coordinate.

    Parameters
    ----------
    q0, amplitude, frequency, phase : array_like, shape (n,) or scalars
        Frequencies in Hz.
    t_span : (float, float), optional

    Returns
    -------
    Trajectory

    Examples
    --------
    >>> tr = sinusoid([0.0, 1.0], [0.5, 0.1], 1.0)
    >>> [x.round(6).tolist() for x in tr(0.25)]
    [[0.5, 1.1], [0.0, 0.0], [-19.739209, -3.947842]]
    """
    q0 = _vector(q0, "q0")
    n = q0.shape[0]
    a, f, phi = (np.broadcast_to(_vector(x, name), (n,)).copy() for x, name in ((amplitude, "amplitude"), (frequency, "frequency"), (phase, "phase")))
    w = 2 * np.pi * f
    return Trajectory(
        lambda t: q0 + a * np.sin(w * t + phi),
        lambda t: a * w * np.cos(w * t + phi),
        lambda t: -a * w * w * np.sin(w * t + phi),
        t_span=t_span,
    )


# --------------------------------------------------------------- the models
class ControlView:
    """A numeric model seen by a controller: the controlled coordinates, their
    inertia and bias forces (see the module's table), read off the model's
    :class:`~kanerobot.state_space.StateSpace`.

    The controlled coordinates are those the inputs drive (one per torque);
    the free rates (a floating base) are eliminated at zero force.  Shared
    with :mod:`kanerobot.simulation` (closed-loop runs) and the CLI
    (positions of a state); ``fn`` is any structure's numeric model.
    """

    def __init__(self, fn):
        self.fn = fn
        self.space = s = StateSpace.of(fn, "no controller on")
        self.kind = s.kind
        self.nq, self.nv, self.n = s.nq, s.nv, s.ntau
        self.columns = list(s.controlled)
        self.labels = list(s.controlled_labels)
        self.rate_columns = list(s.controlled_rates)

    def positions(self, q):
        return np.asarray(q, dtype=float)[..., self.columns]

    def rates(self, qd):
        return np.asarray(qd, dtype=float)[..., self.rate_columns]

    def inertia_bias(self, q, qd):
        """``(M, b)`` with ``tau = M a + b`` giving the controlled coordinates' acceleration ``a``."""
        if self.space.not_rigid:
            raise KaneRobotError(self.space.not_rigid)
        return self.space.reduced(self.fn.mass_matrix(q), (self.fn.h(q, qd),))

    def inertia(self, q):
        if self.space.control_inertia is not None:
            return self.space.control_inertia(q)
        return self.space.reduced(self.fn.mass_matrix(q))

    def gravity(self, q):
        if self.space.control_gravity is not None:
            return self.space.control_gravity(q)
        if not self.space.free_rates:
            return np.asarray(self.fn.gravity(q), dtype=float).reshape(self.n)
        return self.space.reduced(self.fn.mass_matrix(q), (self.fn.gravity(q),))[1]

    def stiffness(self):
        """Joint stiffnesses k of a flexible model (0 on rigid joints), (n,)."""
        if self.space.stiffness is None:
            return np.zeros(self.n)
        return self.space.stiffness()

    def full_configuration(self, p):
        """A configuration ``q`` of the model whose controlled coordinates are ``p`` (the
        others at rest: base at the origin, passive joints solved, motors at ``p``)."""
        return self.space.configuration(_vector(p, "position", self.n))


def controlled_coordinates(fn):
    """Names of the coordinates a controller built on ``fn`` tracks (module table).

    Examples
    --------
    >>> import kanerobot as kr
    >>> model = kr.derive(kr.load(kr.frames_path("planar2flex")))
    >>> values = dict(dict.fromkeys(model.parameters, 1.0), MY2=0.0)  # a body: ZZ2 >= MX2**2 / M2
    >>> controlled_coordinates(model.numeric(values, backend="numpy"))
    ['qr1', 'qr2']
    """
    return list(ControlView(fn).labels)


def _gain(value, n, what):
    K = np.asarray(value, dtype=float)
    if K.ndim == 0:
        return np.eye(n) * float(K)
    if K.shape == (n,):
        return np.diag(K)
    if K.shape == (n, n):
        return K
    raise KaneRobotError(f"{what} must be a number, {n} values or an {n}x{n} matrix; got shape {K.shape}")


def as_trajectory(target, n, what):
    """``target`` as a :class:`Trajectory` of ``n`` coordinates.

    ``target`` is a :class:`Trajectory`, a function of time (positions; the
    derivatives by :class:`Trajectory`) or a constant set point of ``n``
    values; ``what`` names it in the error raised when the sizes differ.
    """
    if isinstance(target, Trajectory):
        if target.n != n:
            raise KaneRobotError(f"{what} has {target.n} coordinates; the controller tracks {n}")
        return target
    if callable(target):
        trajectory = Trajectory(target)
        if trajectory.n != n:
            raise KaneRobotError(f"{what} gives {trajectory.n} coordinates; the controller tracks {n}")
        return trajectory
    setpoint = _vector(target, what, n)
    zeros = np.zeros(n)
    return Trajectory(lambda t: setpoint, lambda t: zeros, lambda t: zeros)


# --------------------------------------------------------------- controllers
class Controller:
    """Base of the controllers of this module: ``tau = controller(t, q, qd)``.

    Attributes
    ----------
    model : numeric model
        The model the controller is built on.
    trajectory : Trajectory
        What it tracks (``controlled_coordinates(model)``).
    coordinates : list of str
        Names of the controlled coordinates.
    period : float or None
        The period ``T`` of a sampled (digital) controller, None for a
        continuous one: :func:`kanerobot.simulate` then calls it once per tick
        ``t0 + k T``, at the state reached, and holds its torque until the
        next (zero-order hold; ``control_period=`` overrides it).
    """

    #: None: continuous, called at every evaluation of the dynamics; a time: sampled at that period.
    period: float | None = None

    def __init__(self, model, trajectory):
        self.model = model
        self.view = ControlView(model)
        self.trajectory = as_trajectory(trajectory, self.view.n, "the trajectory")
        self.coordinates = list(self.view.labels)

    def __call__(self, t, q, qd):
        raise NotImplementedError

    def error(self, t, q, qd):
        """``(q_d - p, qd_d - v)``: position and rate errors of the controlled coordinates."""
        q_d, qd_d, _ = self.trajectory(t)
        return q_d - self.view.positions(q), qd_d - self.view.rates(qd)


class ComputedTorque(Controller):
    """Computed torque on a model: ``tau = M (qdd_d + Kd e' + Kp e) + b``.

    ``M``, ``b`` are the model's inertia and bias forces in the controlled
    coordinates (module table): with the exact model the closed loop is
    ``e'' + Kd e' + Kp e = 0``.

    Parameters
    ----------
    model : numeric model
        Rigid: fixed base, closed loops, wheeled base, floating base.
    trajectory : Trajectory, callable or array_like
        The desired motion, or a set point.
    kp, kd : float, array_like (n,) or (n, n), optional
        Gains in acceleration units: default ``omega^2`` and ``2 zeta omega``
        with ``omega = 10`` rad/s, ``zeta = 1``.

    Examples
    --------
    >>> import kanerobot as kr
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> values = dict(dict.fromkeys(kr.derive(robot).parameters, 0.5), MY2=0.0)  # a body: ZZ2 >= MX2**2 / M2
    >>> fn = kr.derive(robot).numeric(values, backend="numpy")
    >>> ct = ComputedTorque(fn, [0.2, 0.1])
    >>> tau = ct(0.0, [0.2, 0.1], [0.0, 0.0])      # at rest on the set point: H(q, 0) = Q + friction = 0 here
    >>> tau.round(12).tolist()
    [0.0, 0.0]
    """

    def __init__(self, model, trajectory, kp=100.0, kd=20.0):
        super().__init__(model, trajectory)
        n = self.view.n
        self.kp, self.kd = _gain(kp, n, "kp"), _gain(kd, n, "kd")
        if self.view.space.not_rigid:
            raise KaneRobotError(self.view.space.not_rigid)

    def __call__(self, t, q, qd):
        q_d, qd_d, qdd_d = self.trajectory(t)
        e = q_d - self.view.positions(q)
        de = qd_d - self.view.rates(qd)
        M, b = self.view.inertia_bias(q, qd)
        return M @ (qdd_d + self.kd @ de + self.kp @ e) + b


class PDGravity(Controller):
    """PD with gravity compensation: ``tau = Kp e + Kd e' + Q``.

    ``Q`` is the model's gravity torque at the state (at the desired
    positions for flexible joints, whose motors are driven to ``q_d + K^-1
    Q(q_d)``: Tomei's controller).

    Parameters
    ----------
    model : numeric model
    trajectory : Trajectory, callable or array_like
        The desired motion, or a set point.
    kp, kd : float, array_like (n,) or (n, n), optional
        Gains in torque units; default ``omega^2 D`` and ``2 omega D`` with
        ``omega = 10`` rad/s and ``D`` the diagonal of the model's inertia at
        the trajectory's start.

    Examples
    --------
    >>> import kanerobot as kr
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> values = dict(dict.fromkeys(kr.derive(robot).parameters, 0.5), MY2=0.0)  # a body: ZZ2 >= MX2**2 / M2
    >>> fn = kr.derive(robot).numeric(values, backend="numpy")
    >>> pd = PDGravity(fn, [0.2, 0.1], kp=10.0, kd=1.0)
    >>> pd(0.0, [0.0, 0.0], [0.0, 0.0]).round(12).tolist()   # no gravity torque (G3 along the axes)
    [2.0, 1.0]
    """

    def __init__(self, model, trajectory, kp=None, kd=None):
        super().__init__(model, trajectory)
        n = self.view.n
        if kp is None or kd is None:
            t0 = self.trajectory.t_span[0] if self.trajectory.t_span else 0.0
            try:
                D = np.abs(np.diag(self.view.inertia(self.view.full_configuration(self.trajectory.position(t0)))))
            except KaneRobotError as exc:
                raise KaneRobotError(f"default PD gains need the inertia at the trajectory's start ({exc}): give kp and kd") from None
            D = np.where(D > 0, D, 1.0)
            kp = 100.0 * D if kp is None else kp
            kd = 20.0 * D if kd is None else kd
        self.kp, self.kd = _gain(kp, n, "kp"), _gain(kd, n, "kd")
        # Tomei's controller where the inputs drive motors behind springs
        self.flexible = self.view.space.stiffness is not None
        if self.flexible:
            k = self.view.stiffness()
            self._inverse_stiffness = np.where(k > 0, 1.0 / np.where(k > 0, k, 1.0), 0.0)

    def __call__(self, t, q, qd):
        q_d, qd_d, _ = self.trajectory(t)
        if self.flexible:
            g = self.view.gravity(self.view.full_configuration(q_d))
            target = q_d + self._inverse_stiffness * g
        else:
            g = self.view.gravity(q)
            target = q_d
        e = target - self.view.positions(q)
        de = qd_d - self.view.rates(qd)
        return self.kp @ e + self.kd @ de + g


def computed_torque(model, trajectory, kp=100.0, kd=20.0):
    """A :class:`ComputedTorque` controller on ``model`` tracking ``trajectory``.

    Examples
    --------
    >>> import kanerobot as kr
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> fn = kr.derive(robot).numeric(dict(dict.fromkeys(kr.derive(robot).parameters, 0.5), MY2=0.0), backend="numpy")
    >>> computed_torque(fn, quintic([0, 0], [1, 1], 1.0)).coordinates
    ['1', '2']
    """
    return ComputedTorque(model, trajectory, kp=kp, kd=kd)


def pd_gravity(model, trajectory, kp=None, kd=None):
    """A :class:`PDGravity` controller on ``model`` tracking ``trajectory``.

    Examples
    --------
    >>> import kanerobot as kr
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> fn = kr.derive(robot).numeric(dict(dict.fromkeys(kr.derive(robot).parameters, 0.5), MY2=0.0), backend="numpy")
    >>> pd_gravity(fn, [0.0, 0.0]).kp.diagonal().round(3).tolist()   # 100 diag(A(0))
    [212.5, 100.0]
    """
    return PDGravity(model, trajectory, kp=kp, kd=kd)


# ------------------------------------------------------------ balancing LQR
def _set_columns(q_eq, columns, p):
    """``q_eq`` (one or a batch) with the controlled coordinates set to ``p``."""
    p = np.asarray(p, dtype=float)
    q = np.array(np.broadcast_to(q_eq, p.shape[:-1] + (q_eq.shape[0],)), dtype=float)
    q[..., columns] = p
    return q


def _balance_view(fn, what):
    view = ControlView(fn)
    # linearising perturbs q freely: every q must be a configuration (nothing to close or normalise), rigid
    if view.space.prepare_map is not None or view.space.not_rigid:
        raise KaneRobotError(
            f"{what} needs a rigid model whose state is its coordinates and their rates (fixed base or wheeled "
            f"base); {view.kind} models are not supported"
        )
    return view


def _label_index(view, label, what):
    label = str(label)
    if label not in view.labels:
        raise KaneRobotError(f"{what} {label!r} is not a controlled coordinate: they are {', '.join(view.labels)}")
    return view.labels.index(label)


def actuation_matrix(fn, pitch="1", wheels=None):
    """Generalized forces of the controlled coordinates from the motors' torques.

    On a wheeled inverted pendulum (Krang on its wheels) the body's pitch is
    not actuated: each wheel motor acts between the body and its wheel, so
    that a torque ``u_w`` is the generalized force ``u_w`` on the wheel's
    angle and ``-u_w`` on the pitch (both measured about the axle, the
    wheel's from the heading frame; ``frames/krang_wheeled.toml``).  Every
    other controlled coordinate has its own motor.

    Parameters
    ----------
    fn : numeric model
        Fixed base or wheeled base.
    pitch : str or None, optional
        Label of the unactuated pitch joint; None: every coordinate is
        actuated (the identity).
    wheels : sequence of str, optional
        Labels of the wheel joints whose motors react on the pitch; default
        the robot's wheels that are controlled coordinates (a planar
        chassis's, whose angles are measured from the heading frame).  With
        none (a robot whose wheels hang on its body, as its URDF gives them:
        rolling discs, :func:`kanerobot.robot.axle_base.on_axle`; a fixed
        base) every motor drives its own joint alone, since in a tree a
        motor acts between a joint's two links, and the pitch has none.

    Returns
    -------
    B : numpy.ndarray, shape (m, k)
        ``tau = B u``: ``m`` generalized forces (``controlled_coordinates(fn)``)
        from ``k`` motor torques (the same coordinates without the pitch).
    motors : list of str
        The labels of the motors' coordinates, in the order of ``u``.

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.dynamics.parameters import random_parameters
    >>> robot = kr.load(kr.frames_path("krang_wheeled"))
    >>> fn = kr.derive(robot).numeric(random_parameters(robot, np.random.default_rng(0)), backend="numpy")
    >>> B, motors = actuation_matrix(fn)
    >>> B.shape, motors[:3], B[2, :3].tolist()   # the pitch's row: -(u_wr + u_wl)
    ((19, 18), ['wr', 'wl', '2'], [-1.0, -1.0, 0.0])
    """
    view = _balance_view(fn, "actuation_matrix")
    m = view.n
    if pitch is None:
        return np.eye(m), list(view.labels)
    k_pitch = _label_index(view, pitch, "the pitch joint")
    robot = fn.model.robot
    if wheels is None:
        wheels = [w.joint for w in getattr(robot, "wheels", ()) if w.joint in view.labels]
    wheels = [str(w) for w in wheels]
    rows = [k for k in range(m) if k != k_pitch]
    B = np.zeros((m, m - 1))
    for col, row in enumerate(rows):
        B[row, col] = 1.0
    for w in wheels:
        B[k_pitch, rows.index(_label_index(view, w, "the wheel joint"))] = -1.0
    return B, [view.labels[k] for k in rows]


def upright_equilibrium(fn, q0=None, pitch="1", samples=720, actuation=None, wheels=None):
    """The configuration where the motors can hold the robot still, the body upright.

    The motors (``tau = B u``, :func:`actuation_matrix`) hold any gravity
    torque but the one along the unactuated direction ``n`` (``n^T B = 0``;
    Krang: ``n`` = 1 on the pitch and on both wheels, since each wheel motor
    pushes as much on the pitch as on its wheel).  The equilibrium solves
    ``n^T Q(q) = 0`` (``Q = fn.gravity``) on the pitch alone, the other
    joints held at ``q0``: the roots are found on a grid of ``samples``
    pitches over a turn and refined by Brent's method; of those where
    ``n^T Q`` decreases (``Q = dV/dq``: a maximum of the potential energy,
    the unstable inverted pendulum) the one nearest to ``q0``'s pitch is
    returned.  On flat ground the wheels feel no gravity and this is
    ``Q_pitch = 0``: the centre of mass above the axle.  On a slope (gravity
    tilted in the ground's frame) the wheels' motors hold the robot from
    rolling down, and the whole robot's centre of mass is above the wheels'
    contact line: the body leans uphill.

    Parameters
    ----------
    fn : numeric model
        Fixed base or wheeled base, with gravity.
    q0 : array_like, optional
        Every joint variable (``fn``'s ``q``); default zeros.
    pitch : str, optional
        The pitch joint (Krang's ``'1'``, ``q_imu``).
    samples : int, optional
    actuation : array_like (m, k), optional
        ``B``; default :func:`actuation_matrix` on a wheeled base (wheels
        reacting on the pitch), on a fixed base the pitch alone unactuated.
    wheels : sequence of str, optional
        For :func:`actuation_matrix`.

    Returns
    -------
    numpy.ndarray
        ``q0`` with the pitch of the upright equilibrium, in ``(-pi, pi]``.

    Raises
    ------
    KaneRobotError
        When the unactuated gravity torque has no root (no gravity, or the
        centre of mass on the axle), or the motors leave more than one
        direction unactuated.
    """
    from scipy.optimize import brentq

    view = _balance_view(fn, "upright_equilibrium")
    k = _label_index(view, pitch, "the pitch joint")
    column = view.columns[k]
    q0 = np.zeros(view.nq) if q0 is None else _vector(q0, "q0", view.nq)
    n = _unactuated(fn, view, k, pitch, actuation, wheels)
    angles = np.linspace(-np.pi, np.pi, int(samples) + 1)
    batch = np.repeat(q0[None, :], len(angles), axis=0)
    batch[:, column] = angles

    def torque(angle):
        q = q0.copy()
        q[column] = angle
        return float(n @ np.asarray(fn.gravity(q), dtype=float).reshape(-1))

    Q = np.asarray(fn.gravity(batch), dtype=float).reshape(len(angles), -1) @ n
    scale = np.abs(Q).max()
    if not scale > 0:
        raise KaneRobotError(f"no gravity torque on the pitch {pitch!r}: there is no upright equilibrium to find")
    roots = []
    for a, b, qa, qb in zip(angles[:-1], angles[1:], Q[:-1], Q[1:]):
        if qa == 0.0:
            roots.append(a)
        elif qa * qb < 0:
            roots.append(brentq(torque, a, b, xtol=1e-14, rtol=1e-14))
    # Upright: the gravity torque Q = dV/dq decreases through the root (V has a maximum).
    upright = [r for r in roots if torque(r + 1e-6) - torque(r - 1e-6) < 0]
    if not upright:
        raise KaneRobotError(f"the gravity torque on the pitch {pitch!r} has no root where it decreases: no upright equilibrium")
    best = min(upright, key=lambda r: abs(np.angle(np.exp(1j * (r - q0[column])))))
    q = q0.copy()
    q[column] = float(np.angle(np.exp(1j * best)))
    return q


def _unactuated(fn, view, k, pitch, actuation, wheels):
    """``n``, the one direction of the generalized forces no motor gives (``n^T B = 0``, ``n_pitch = 1``)."""
    if actuation is None:
        if not getattr(fn.model.robot, "wheels", ()) and wheels is None:
            return np.eye(view.n)[k]  # a fixed base: the pitch alone has no motor
        actuation = actuation_matrix(fn, pitch, wheels)[0]
    B = np.asarray(actuation, dtype=float)
    if B.ndim != 2 or B.shape[0] != view.n:
        raise KaneRobotError(f"the actuation matrix must have {view.n} rows, got shape {B.shape}")
    _, sigma, Vt = np.linalg.svd(B.T)
    rank = int(np.sum(sigma > 1e-12 * max(1.0, sigma.max(initial=0.0))))
    if view.n - rank != 1 or abs(Vt[-1, k]) < 1e-12:
        raise KaneRobotError(f"the motors leave {view.n - rank} directions unactuated; upright_equilibrium needs exactly one, "
                             f"through the pitch {pitch!r}")  # fmt: skip
    return Vt[-1] / Vt[-1, k]


#: Central-difference weights ``w_k`` of ``f'(x) ~ sum_k w_k (f(x + k h) - f(x - k h)) / h``, by order of accuracy.
DIFFERENCE_WEIGHTS = {
    2: (1 / 2,),
    4: (2 / 3, -1 / 12),
    6: (3 / 4, -3 / 20, 1 / 60),
    8: (4 / 5, -1 / 5, 4 / 105, -1 / 280),
}


def linearize(fn, q_eq, u_eq=None, actuation=None, step=1e-6, analytic=None, qd_eq=None, solve=None, order=2):
    """``A, B`` of ``xdot = f(x, u)`` about the rest state ``(q_eq, 0)``, or a steady motion ``(q_eq, qd_eq)``.

    The state is ``x = (p, v)``: the controlled coordinates' positions ``p``
    (``controlled_coordinates(fn)``: every joint of a fixed base; the wheel
    angles and body joints of a wheeled base, not its posture x, y, theta,
    on which the dynamics does not depend; the joints of the independent
    speeds of a constrained tree) and their rates ``v``; ``pdot = v`` and
    ``vdot`` is the model's direct dynamics ``fn.direct_dynamics(q, v,
    actuation @ u)``, ``q`` being ``q_eq`` with ``p`` in place.

    A steady motion (``qd_eq`` not zero: a bicycle running straight at speed
    ``v``, its wheels spinning) is linearised the same way, about ``v =
    qd_eq``: it is one when ``vdot = 0`` there and the dynamics do not
    depend on the coordinates that move (a wheel's angle).  Holonomic
    constraints (a bicycle's front wheel touching the ground, which fixes
    its pitch) are kept by ``solve``, which maps every perturbed
    configuration back onto them (Peterson, Gede and Hubbard 2014 eliminate
    the dependent coordinates the same way, through their Jacobian): the
    Jacobian is then that of the minimal coordinates ``p``.

    The Jacobians are analytic where the model has derivative programs
    (``fn.direct_dynamics_derivatives``: serial and tree robots on a fixed
    base, :mod:`kanerobot.dynamics.derivatives`): ``dqdd/dq``, ``dqdd/dqd``
    and ``dqdd/dtau @ actuation`` at the equilibrium, one call.  Other
    structures (a wheeled base, whose direct dynamics is solved with its
    rolling constraints), and any linearisation with ``solve``, fall back to
    central differences of order ``order`` (steps ``k step * max(1, |x|)``,
    k = 1 .. order/2) in one batched call.

    Parameters
    ----------
    fn : numeric model
        Fixed base, wheeled base or a tree under velocity constraints.
    q_eq : array_like
        Every joint variable of the equilibrium (satisfying the constraints).
    u_eq : array_like, optional
        The motors' torques there (default zeros).
    actuation : array_like (m, k), optional
        ``tau = actuation @ u`` (default the identity).
    step : float, optional
        Relative step of the finite differences.
    analytic : bool, optional
        None (default): analytic derivatives where the model has them,
        else finite differences; False: finite differences; True: analytic
        or an error.
    qd_eq : array_like (m,), optional
        The rates ``v`` of the steady motion (default zeros: an equilibrium).
    solve : callable, optional
        ``solve(qs) -> qs``, (N, nq) to (N, nq): the configurations with
        the coordinates the holonomic constraints fix solved (the others kept).
    order : {2, 4, 6, 8}, optional
        Order of accuracy of the central differences (the error is
        ``O(step**order)``; 8 with ``step = 1e-2`` gives derivatives to about
        1e-13 of smooth dynamics, where order 2 gives 1e-9).

    Returns
    -------
    A : numpy.ndarray, shape (2m, 2m)
    B : numpy.ndarray, shape (2m, k)

    Raises
    ------
    KaneRobotError
        For a structure that is not a rigid fixed or wheeled base or a
        constrained tree, with ``analytic=True`` when the model has no
        derivative programs or a ``solve`` is given, and for an order
        without weights.
    """
    view = _balance_view(fn, "linearize")
    m = view.n
    q_eq = _vector(q_eq, "q_eq", view.nq)
    v_eq = np.zeros(m) if qd_eq is None else _vector(qd_eq, "qd_eq", m)
    Bact = np.eye(m) if actuation is None else np.asarray(actuation, dtype=float)
    if Bact.ndim != 2 or Bact.shape[0] != m:
        raise KaneRobotError(f"the actuation matrix must have {m} rows (the controlled coordinates), got shape {Bact.shape}")
    if order not in DIFFERENCE_WEIGHTS:
        raise KaneRobotError(f"linearize(order={order!r}): the central differences have orders {', '.join(map(str, DIFFERENCE_WEIGHTS))}")
    k = Bact.shape[1]
    u_eq = np.zeros(k) if u_eq is None else _vector(u_eq, "u_eq", k)
    has = fn.provides("direct_dynamics_derivatives") and solve is None
    if analytic and not has:
        raise KaneRobotError(
            f"linearize(analytic=True): {view.kind} models have no derivative programs (serial and tree robots on a "
            f"fixed base have, without holonomic constraints to solve); use analytic=None for finite differences"
        )
    if has and analytic is not False:
        qd = np.zeros(view.nv)
        qd[view.rate_columns] = v_eq
        dq, dqd, dtau = fn.direct_dynamics_derivatives(q_eq, qd, Bact @ u_eq)
        J = np.concatenate([dq[:, view.columns], dqd[:, view.rate_columns], dtau @ Bact], axis=1)
    else:
        z0 = np.concatenate([view.positions(q_eq), v_eq, u_eq])
        J = _difference_jacobian(fn, view, q_eq, z0, Bact, step, solve, order)
    A = np.zeros((2 * m, 2 * m))
    A[:m, m:] = np.eye(m)
    A[m:, :] = J[:, : 2 * m]
    B = np.zeros((2 * m, k))
    B[m:, :] = J[:, 2 * m :]
    return A, B


def _difference_jacobian(fn, view, q_eq, z0, Bact, step, solve=None, order=2):
    """``d(vdot)/d(p, v, u)`` at ``z0 = (p, v, u)`` by central differences of ``order``, (m, 2m + k)."""
    m = view.n
    size = z0.shape[0]
    weights = DIFFERENCE_WEIGHTS[order]
    h = step * np.maximum(1.0, np.abs(z0))
    steps = [sign * (j + 1) for j in range(len(weights)) for sign in (1, -1)]
    Z = np.repeat(z0[None, :], len(steps) * size, axis=0)
    for s, multiple in enumerate(steps):
        Z[s * size + np.arange(size), np.arange(size)] += multiple * h
    q = _set_columns(q_eq, view.columns, Z[:, :m])
    if solve is not None:
        q = np.asarray(solve(q), dtype=float).reshape(q.shape)
    qd = Z[:, m : 2 * m]
    tau = Z[:, 2 * m :] @ Bact.T
    acc = np.asarray(fn.direct_dynamics(q, qd, tau), dtype=float).reshape(len(steps) * size, m)
    out = np.zeros((size, m))
    for j, w in enumerate(weights):
        out += w * (acc[2 * j * size : (2 * j + 1) * size] - acc[(2 * j + 1) * size : (2 * j + 2) * size])
    return (out / h[:, None]).T


class BalanceLQR(Controller):
    """A linear-quadratic regulator about an equilibrium, linearised from the model.

    ``u = u_eq - K (x - x_eq)``, ``tau = actuation @ u``, with ``x = (p, v)``
    the controlled coordinates and their rates (:func:`linearize`) and ``K =
    R^-1 B^T S``, ``S`` the solution of the continuous algebraic Riccati
    equation (``scipy.linalg.solve_continuous_are``).  For Krang on its
    wheels every motor is in the one regulator: the two wheel torques and the
    16 body joints' torques together stabilise the pitch (unactuated; the
    wheel motors react on it) and hold the posture; there is no separate PD
    loop.  ``u_eq`` holds the arms against gravity at the equilibrium; the
    wheel angles are fed back too (the robot comes back to where its wheels
    started), the posture x, y, theta is not.

    Build it with :func:`lqr_balance`.

    Attributes
    ----------
    q_eq : numpy.ndarray
        Every joint variable of the equilibrium.
    u_eq, tau_eq : numpy.ndarray
        The motors' torques and the generalized forces there.
    A, B : numpy.ndarray
        The linearised model, ``(2m, 2m)`` and ``(2m, k)``.
    Q, R, S, K : numpy.ndarray
        Weights, Riccati solution and gain ``(k, 2m)``.
    actuation : numpy.ndarray, shape (m, k)
    motors : list of str
        Labels of the motors' coordinates, in the order of ``u``.
    states : list of str
        ``p`` then ``v`` labels (``"q1"`` ... ``"qd1"`` ...).
    pitch : str or None
    open_loop_poles, closed_loop_poles : numpy.ndarray
        Eigenvalues of ``A`` and ``A - B K``.
    """

    def __init__(self, model, q_eq, A, B, K, S, Q, R, u_eq, actuation, motors, pitch):
        view = ControlView(model)
        super().__init__(model, view.positions(q_eq))
        self.q_eq = np.asarray(q_eq, dtype=float)
        self.A, self.B, self.K, self.S, self.Q, self.R = A, B, K, S, Q, R
        self.u_eq = u_eq
        self.actuation = actuation
        self.tau_eq = actuation @ u_eq
        self.motors = motors
        self.pitch = pitch
        self.states = [f"q{c}" for c in self.coordinates] + [f"qd{c}" for c in self.coordinates]
        self.x_eq = np.concatenate([self.view.positions(self.q_eq), np.zeros(self.view.n)])
        self.open_loop_poles = np.linalg.eigvals(A)
        self.closed_loop_poles = np.linalg.eigvals(A - B @ K)

    def state(self, q, qd):
        """``x = (p, v)`` of a state ``(q, qd)``."""
        return np.concatenate([self.view.positions(q), self.view.rates(qd)])

    def motor_torques(self, t, q, qd):
        """``u = u_eq - K (x - x_eq)``, the motors' torques, shape (k,)."""
        return self.u_eq - self.K @ (self.state(q, qd) - self.x_eq)

    def __call__(self, t, q, qd):
        return self.actuation @ self.motor_torques(t, q, qd)

    def pitch_error(self, q):
        """``q_pitch - q_pitch_eq`` of a configuration or a batch (None without a pitch)."""
        if self.pitch is None:
            return None
        column = self.view.columns[self.coordinates.index(self.pitch)]
        return np.asarray(q, dtype=float)[..., column] - self.q_eq[column]

    def __repr__(self):
        unstable = int(np.sum(self.open_loop_poles.real > 1e-9))
        return (f"<BalanceLQR on {self.model.model.robot.name}: {len(self.states)} states, {len(self.motors)} motors, "
                f"{unstable} unstable open-loop poles, slowest closed-loop pole {self.closed_loop_poles.real.max():.3g}>")


def lqr_balance(fn, q_eq=None, Q=None, R=None, *, pitch="1", q0=None, actuation=None, wheels=None, step=1e-6):
    """A balancing LQR for a wheeled inverted pendulum (Krang on its wheels), from its model.

    1. The equilibrium: ``q_eq`` as given, else :func:`upright_equilibrium`
       from ``q0`` (the arms and the other joints held at ``q0``, the pitch
       solved where the motors hold the robot still: the centre of mass
       above the axle on flat ground, above the wheels' contacts on a slope).
    2. The motors' torques that hold it: ``actuation @ u_eq = Q_a(q_eq)``
       (least squares; raises if they cannot, i.e. ``q_eq`` is not an
       equilibrium of the unactuated pitch).
    3. The linearised model :func:`linearize` (the derivatives of the
       direct dynamics in the controlled coordinates, their rates and the
       motors' torques: analytic on a fixed base, central differences on a
       wheeled base).
    4. ``S`` from ``scipy.linalg.solve_continuous_are(A, B, Q, R)``, ``K =
       R^-1 B^T S``.

    Parameters
    ----------
    fn : numeric model
        ``kr.derive(kr.load(kr.frames_path("krang_wheeled"))).numeric(values)``
        (any wheeled or fixed-base model; the state is that of
        :func:`linearize`).
    q_eq : array_like, optional
        Every joint variable of the equilibrium.
    Q : array_like, optional
        State weights, ``(2m, 2m)`` or ``2m`` diagonal values; default
        1000 on the positions (rad, m), 10 on the rates.
    R : array_like, optional
        Torque weights, ``(k, k)``, ``k`` values or a number; default 0.1.
    pitch : str or None, optional
        The unactuated pitch joint (Krang's ``'1'``); None: every
        coordinate has a motor (and ``q_eq`` is needed).
    q0 : array_like, optional
        Where to look for the equilibrium (default zeros).
    actuation : array_like (m, k), optional
        Default :func:`actuation_matrix` (wheels reacting on the pitch).
    wheels : sequence of str, optional
        For :func:`actuation_matrix`.
    step : float, optional
        Relative step of the finite differences (where :func:`linearize` uses them).

    Returns
    -------
    BalanceLQR
        ``tau = controller(t, q, qd)``: the generalized forces of the
        independent speeds (wheels, pitch = -(wheel torques), body joints).
    """
    from scipy.linalg import solve_continuous_are

    view = _balance_view(fn, "lqr_balance")
    m = view.n
    if q_eq is None:
        if pitch is None:
            raise KaneRobotError("lqr_balance without a pitch joint needs q_eq")
        q_eq = upright_equilibrium(fn, q0, pitch, actuation=actuation, wheels=wheels)
    q_eq = _vector(q_eq, "q_eq", view.nq)
    if actuation is None:
        Bact, motors = actuation_matrix(fn, pitch, wheels)
    else:
        Bact = np.asarray(actuation, dtype=float)
        if Bact.ndim != 2 or Bact.shape[0] != m:
            raise KaneRobotError(f"the actuation matrix must have {m} rows, got shape {Bact.shape}")
        motors = [f"u{k}" for k in range(Bact.shape[1])]
    k = Bact.shape[1]
    gravity = np.asarray(fn.gravity(q_eq), dtype=float).reshape(m)
    u_eq = np.linalg.lstsq(Bact, gravity, rcond=None)[0]
    residual = np.abs(Bact @ u_eq - gravity).max()
    if residual > 1e-8 * max(1.0, np.abs(gravity).max()):
        raise KaneRobotError(
            f"q_eq is not an equilibrium the motors can hold: the gravity torques left over are {residual:.3g} "
            f"(on the unactuated pitch: give q_eq=None to solve for the upright pitch)"
        )
    A, B = linearize(fn, q_eq, u_eq, Bact, step)
    if Q is None:
        Q = np.diag(np.concatenate([np.full(m, 1000.0), np.full(m, 10.0)]))
    Q = np.asarray(Q, dtype=float)
    Q = np.diag(Q) if Q.ndim == 1 else Q
    if Q.shape != (2 * m, 2 * m):
        raise KaneRobotError(f"Q must be {2 * m} values or a {2 * m}x{2 * m} matrix, got shape {Q.shape}")
    R = _gain(0.1 if R is None else R, k, "R")
    S = solve_continuous_are(A, B, Q, R)
    K = np.linalg.solve(R, B.T @ S)
    return BalanceLQR(fn, q_eq, A, B, K, S, Q, R, u_eq, Bact, motors, pitch)
