"""Exciting trajectories for identification: finite Fourier series (Swevers et al. 1997).

Each joint follows a periodic motion of base pulsation ``w = 2 pi f``:

    q_i(t)   = q0_i + sum_{l=1}^{L} a_il / (w l) sin(w l t) - b_il / (w l) cos(w l t)
    qd_i(t)  = sum_l a_il cos(w l t) + b_il sin(w l t)
    qdd_i(t) = sum_l w l (b_il cos(w l t) - a_il sin(w l t))

periodic (so that measurements can be averaged over periods) and with
analytic rates and accelerations.  :func:`fourier_excitation` chooses the
coefficients that minimise the condition number of the base observation
matrix ``W_b`` stacked over the samples of one period, subject to joint
position, rate and acceleration limits; as the motion is linear in the
coefficients, the limits at the samples are linear constraints (SLSQP).

Examples
--------
>>> import numpy as np
>>> tr = FourierTrajectory([0.0], [[1.0]], [[0.0]], frequency=0.5)
>>> q, qd, qdd = tr(0.5)
>>> np.round([q[0], qd[0], qdd[0]], 6).tolist()        # sin(pi t) / pi, cos(pi t), -pi sin(pi t)
[0.31831, 0.0, -3.141593]
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping

import numpy as np
from numpy.typing import ArrayLike
from threadpoolctl import threadpool_limits

from kanerobot.control import Trajectory
from kanerobot.dynamics.model import DynamicModel
from kanerobot.errors import KaneRobotError
from kanerobot.identification.base_parameters import BaseParameterSet
from kanerobot.identification.identify import as_regressors
from kanerobot.identification.numeric_regressor import Regressors
from kanerobot.identification.regressor import IdentificationModel
from kanerobot.progress import Ticker
from kanerobot.robot.description import Robot

__all__ = ["DEFAULT_Q_LIMITS", "WARN_CONDITION", "ExcitationResult", "FourierTrajectory", "PoorExcitationWarning", "fourier_excitation", "robot_q_limits"]


class FourierTrajectory(Trajectory):
    """A finite Fourier series per joint (module notes).

    Parameters
    ----------
    q0 : array_like, shape (n,)
        Offsets.
    a, b : array_like, shape (n, L)
        Coefficients of the rates (rad/s or m/s).
    frequency : float
        Base frequency ``f`` (Hz); the period is ``1 / f``.

    Attributes
    ----------
    period : float
    harmonics : int
        ``L``.

    A :class:`kanerobot.control.Trajectory`: ``computed_torque(fn, tr)``
    tracks it in :func:`kanerobot.simulate`.
    """

    def __init__(self, q0, a, b, frequency):
        self.q0 = np.atleast_1d(np.asarray(q0, dtype=float))
        self.a = np.atleast_2d(np.asarray(a, dtype=float))
        self.b = np.atleast_2d(np.asarray(b, dtype=float))
        n = len(self.q0)
        if self.a.shape != self.b.shape or self.a.shape[0] != n:
            raise KaneRobotError(f"Fourier coefficients a and b must both have shape ({n}, L) for {n} offsets; got {self.a.shape} and {self.b.shape}")
        if not frequency > 0:
            raise KaneRobotError(f"Fourier base frequency must be positive, got {frequency}")
        self.frequency = float(frequency)
        self.period = 1.0 / self.frequency
        self.harmonics = self.a.shape[1]
        super().__init__(self.position, self.velocity, self.acceleration, t_span=(0.0, self.period))

    def _phase(self, t):
        w = 2 * np.pi * self.frequency
        wl = w * np.arange(1, self.harmonics + 1)
        angle = np.multiply.outer(np.asarray(t, dtype=float), wl)  # (..., L)
        return wl, np.sin(angle), np.cos(angle)

    def position(self, t):
        """``q(t)``, shape (n,) or (N, n) for an array of times."""
        wl, s, c = self._phase(t)
        return self.q0 + s @ (self.a / wl).T - c @ (self.b / wl).T

    def velocity(self, t):
        """``qd(t)``."""
        _, s, c = self._phase(t)
        return c @ self.a.T + s @ self.b.T

    def acceleration(self, t):
        """``qdd(t)``."""
        wl, s, c = self._phase(t)
        return c @ (self.b * wl).T - s @ (self.a * wl).T

    def __call__(self, t):
        return self.position(t), self.velocity(t), self.acceleration(t)

    def sample(self, times):
        """``(q, qd, qdd)`` at ``times``, each (N, n)."""
        times = np.asarray(times, dtype=float)
        return self.position(times), self.velocity(times), self.acceleration(times)

    def coefficients(self):
        """``{"q0", "a", "b", "frequency"}`` (arrays as lists), to save and rebuild with ``FourierTrajectory(**c)``."""
        return {"q0": self.q0.tolist(), "a": self.a.tolist(), "b": self.b.tolist(), "frequency": self.frequency}

    def __repr__(self):
        return f"<FourierTrajectory {len(self.q0)} joints, {self.harmonics} harmonics, {self.frequency:g} Hz>"


#: Above this condition number :func:`fourier_excitation` warns (:class:`PoorExcitationWarning`): the least
#: excited combination of base parameters then moves the torques 1e4 times less than the most excited one,
#: and a percent of measurement noise hides it.
WARN_CONDITION = 1e4
#: Below this ratio of the smallest to the largest singular value a direction is numerically unidentifiable.
NULL_RATIO = 1e-12
#: Forward-difference step of the regressor in q and qd (rad or m, rad/s or m/s); it is exact in qdd (linear).
_STEP = 1e-7
#: States per regressor batch of the gradient (a few joints' shifted samples at once).
_BATCH = 1000
#: A bound is touched when the trajectory comes within this share of the bound's size (or range) of it
#: (SLSQP holds its active constraints to about 1e-4).
_TOUCH = 1e-3


class PoorExcitationWarning(UserWarning):
    """The trajectory of :func:`fourier_excitation` is poorly conditioned; its ``diagnosis`` says why."""


class ExcitationResult:
    """What :func:`fourier_excitation` returns.

    Attributes
    ----------
    trajectory : FourierTrajectory
    condition_number : float
        ``s_max / s_min`` of the base observation matrix ``W_b``, shape
        ``(samples * n, nb)``, over the samples of one period
        (``numpy.linalg.cond`` of it).
    initial_condition_number : float
        The same for the random start.
    singular_values : numpy.ndarray, shape (nb,)
        Of ``W_b``, largest first.
    weakest : list of (str, float)
        The least excited direction of the base parameters (the right
        singular vector of ``s_min``): ``(name, component)``, largest
        components first, down to a tenth of the largest.
    binding : dict
        ``{"q": [...], "qd": [...], "qdd": [...]}``: the joints whose
        position limits, rate or acceleration bounds the trajectory
        touches at the samples; the optimum presses against them.
    iterations : int
        SLSQP's iterations.
    budget_used : bool
        Whether it stopped at ``maxiter``.
    diagnosis : str
        What limits the condition number, in words.
    times : numpy.ndarray
        The samples the condition number is computed on.
    success : bool
        Whether every limit holds at the samples.
    base : BaseParameterSet
        The base parameters conditioned.
    message : str
        The optimiser's.
    """

    trajectory: FourierTrajectory
    condition_number: float
    initial_condition_number: float
    singular_values: np.ndarray
    weakest: list[tuple[str, float]]
    binding: dict[str, list[str]]
    iterations: int
    budget_used: bool
    diagnosis: str
    times: np.ndarray
    success: bool
    base: BaseParameterSet
    message: str

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def __repr__(self):
        return f"<ExcitationResult condition number {self.condition_number:.4g} (start {self.initial_condition_number:.4g})>"


#: The position limits of :func:`fourier_excitation` for a joint whose robot gives none (rad or m).
DEFAULT_Q_LIMITS = (-np.pi, np.pi)


def robot_q_limits(robot):
    """``(n, 2)`` position limits of ``robot``'s joints: its own (``robot.limits``), :data:`DEFAULT_Q_LIMITS` where it has none.

    >>> import kanerobot as kr
    >>> robot = kr.load(kr.frames_path("arm7.urdf"))
    >>> robot_q_limits(robot)[0].tolist() == [robot.limits[robot.joint_labels[0]].lower, robot.limits[robot.joint_labels[0]].upper]
    True
    """
    out = np.tile(np.asarray(DEFAULT_Q_LIMITS, dtype=float), (len(robot.joint_labels), 1))
    for k, label in enumerate(robot.joint_labels):
        given = robot.limits.get(label)
        for side, bound in ((0, getattr(given, "lower", None)), (1, getattr(given, "upper", None))):
            if bound is not None:
                out[k, side] = bound
    return out


def _limits(value, n, what, symmetric):
    if value is None:
        return None
    array = np.asarray(value, dtype=float)
    if symmetric:
        array = np.broadcast_to(np.abs(array), (n,)).copy()
        return -array, array
    if array.shape == (2,):
        array = np.broadcast_to(array[:, None], (2, n))
    elif array.shape == (n, 2):
        array = array.T
    if array.shape != (2, n) or np.any(array[0] >= array[1]):
        raise KaneRobotError(f"{what} must be (lower, upper) or one (lower, upper) per joint with lower < upper; got {value!r}")
    return array[0].copy(), array[1].copy()


class _Conditioning:
    """``log cond(W_b)`` of the Fourier coefficients ``x = (a_j, b_j)`` joint by joint, and its gradient.

    The gradient is analytic in the singular vectors,
    ``d log(s_1 / s_m) = u_1' dW v_1 / s_1 - u_m' dW v_m / s_m``, with ``dW``
    from the regressor's derivatives in each joint's ``q``, ``qd`` and
    ``qdd`` at the samples (3 n batches of regressors, one SVD), where
    SLSQP's own finite differences cost ``2 n L + 1`` regressors and SVDs.
    """

    def __init__(self, regs, columns, q0, times, frequency, harmonics):
        self.regs, self.columns, self.q0, self.times = regs, list(columns), q0, times
        self.n = regs.n
        wl = 2 * np.pi * frequency * np.arange(1, harmonics + 1)
        angle = np.outer(times, wl)
        S, C = np.sin(angle), np.cos(angle)
        # linear maps from one joint's (a, b) to its q - q0, qd, qdd at the samples
        self.P = (np.hstack([S / wl, -C / wl]), np.hstack([C, S]), np.hstack([-S * wl, C * wl]))
        # FS sign(qd) is flat in qd: a step across qd = 0 would turn its 0 derivative into 1 / step
        self.smooth = np.array([kind != "FS" for _, kind in regs.owners], dtype=float)
        self.last: tuple[np.ndarray | None, float | None] = (None, None)  # the last x and its value

    def motion(self, x):
        """``(q, qd, qdd)`` at the samples, each (samples, n)."""
        ab = np.asarray(x, dtype=float).reshape(self.n, -1)
        Pq, Pv, Pa = self.P
        return self.q0 + Pq @ ab.T, Pv @ ab.T, Pa @ ab.T

    def matrix(self, q, qd, qdd):
        """``W_b`` as (samples, n, nb)."""
        return self.regs.regressor(q, qd, qdd)[:, :, self.columns]

    def singular_values(self, x):
        W = self.matrix(*self.motion(x))
        return np.linalg.svd(W.reshape(-1, W.shape[2]), compute_uv=False)

    def value(self, x):
        """``log cond(W_b)``, the smallest singular value floored at :data:`NULL_RATIO` times the largest."""
        if self.last[0] is not None and np.array_equal(self.last[0], x):
            return self.last[1]
        s = self.singular_values(x)
        value = float(np.log(s[0] / max(s[-1], NULL_RATIO * s[0])))
        self.last = (np.array(x, dtype=float), value)
        return value

    def gradient(self, x):
        """The gradient of :meth:`value`, shape (n 2L,)."""
        q, qd, qdd = self.motion(x)
        D = self.regs.regressor(q, qd, qdd)  # every column: the weights below pick the base ones, without a copy of D's
        samples, n, p = D.shape
        U, s, Vt = np.linalg.svd(D[:, :, self.columns].reshape(-1, len(self.columns)), full_matrices=False)
        if s[-1] <= NULL_RATIO * s[0]:  # a null direction: the floor is flat, and so is the value
            return np.zeros_like(x)
        # the weight of each entry of dW in d log(s_1 / s_m) = u_1' dW v_1 / s_1 - u_m' dW v_m / s_m, for q, qd, qdd
        G = np.zeros((samples * n, p))
        G[:, self.columns] = np.outer(U[:, 0], Vt[0]) / s[0] - np.outer(U[:, -1], Vt[-1]) / s[-1]
        weights = np.stack([G, G * self.smooth, G]).reshape(3, samples, n, p)
        at_x = np.einsum("sip,ksip->ks", D, weights)
        steps = np.array([_STEP, _STEP, 1.0])
        slopes = np.empty((3, samples, n))  # d value / d(q_j, qd_j, qdd_j) at each sample
        group = max(1, _BATCH // (3 * samples))  # joints per regressor batch
        for first in range(0, n, group):
            joints = range(first, min(first + group, n))
            states = [np.tile(m, (3 * len(joints), 1)).reshape(len(joints), 3, samples, n) for m in (q, qd, qdd)]
            for g, j in enumerate(joints):
                for k in range(3):
                    states[k][g, k, :, j] += steps[k]
            batch = self.regs.regressor(*(m.reshape(-1, n) for m in states)).reshape(len(joints), 3, samples, n, p)
            slopes[:, :, first : first + len(joints)] = ((np.einsum("gksip,ksip->gks", batch, weights) - at_x) / steps[:, None]).transpose(1, 2, 0)
        gradient = sum(P.T @ slope for P, slope in zip(self.P, slopes))  # (2L, n)
        return gradient.T.ravel()


def _constraints(P, q0, qlim, vlim, alim):
    """SLSQP's linear inequality constraints of the limits at the samples, as ``(name, M, lower, upper)``
    with ``lower <= M x <= upper`` (rows joint by joint)."""
    samples, n = P[0].shape[0], len(q0)
    out = []
    for name, Pk, limits in zip(("q", "qd", "qdd"), P, (qlim, vlim, alim)):
        if limits is None:
            continue
        offset = q0 if name == "q" else np.zeros(n)
        M = np.vstack([np.kron(np.eye(n)[j], Pk) for j in range(n)])  # (samples, n 2L) per joint
        lo = np.repeat(limits[0] - offset, samples)
        hi = np.repeat(limits[1] - offset, samples)
        out.append((name, M, lo, hi))
    return out


def _problem(regs, base, harmonics, frequency, samples, q_limits, qd_max, qdd_max, q0):
    """``(_Conditioning, limits)`` of :func:`fourier_excitation`'s arguments (limits: :func:`_constraints`)."""
    n = regs.n
    columns = regs.base_columns(base).columns
    samples = int(samples or max(60, 3 * len(columns) // max(n, 1)))
    times = np.arange(samples) / (samples * frequency)
    qlim = _limits(q_limits, n, "q_limits", symmetric=False)
    vlim = _limits(qd_max, n, "qd_max", symmetric=True)
    alim = _limits(qdd_max, n, "qdd_max", symmetric=True)
    if q0 is None:
        q0 = np.zeros(n) if qlim is None else 0.5 * (qlim[0] + qlim[1])
    problem = _Conditioning(regs, columns, np.asarray(q0, dtype=float), times, frequency, harmonics)
    return problem, _constraints(problem.P, problem.q0, qlim, vlim, alim)


def _slsqp(limits):
    """SLSQP's constraint dictionaries (``fun(x) >= 0``) of :func:`_constraints`' limits."""
    out = []
    for _, M, lo, hi in limits:
        out.append({"type": "ineq", "fun": lambda x, M=M, hi=hi: hi - M @ x, "jac": lambda x, M=M: -M})
        out.append({"type": "ineq", "fun": lambda x, M=M, lo=lo: M @ x - lo, "jac": lambda x, M=M: M})
    return out


def _touched(constraints, x, labels, samples):
    """``{"q": [joint labels], ...}`` of the bounds that the motion ``x`` touches at the samples."""
    touched: dict[str, list[str]] = {"q": [], "qd": [], "qdd": []}
    for name, M, lo, hi in constraints:
        value = (M @ x).reshape(-1, samples)
        lo, hi = lo.reshape(-1, samples)[:, 0], hi.reshape(-1, samples)[:, 0]
        close = _TOUCH * (hi - lo)
        near = (value.min(axis=1) <= lo + close) | (value.max(axis=1) >= hi - close)
        touched[name] = [labels[j] for j in np.flatnonzero(near)]
    return touched


def _weakest(names, v):
    """The base parameters of the direction ``v``: ``(name, component)``, largest first, down to a tenth."""
    v = v * np.sign(v[np.argmax(np.abs(v))])
    order = np.argsort(-np.abs(v))
    return [(names[k], float(v[k])) for k in order if abs(v[k]) >= 0.1 * abs(v[order[0]])]


def _diagnosis(condition, initial, s, weakest, binding, iterations, budget_used, maxiter, kept_start):
    """What limits the condition number, in words."""
    parts = [f"condition number {condition:.3g} (start {initial:.3g}) after {iterations} iterations"]
    direction = " ".join(f"{c:+.2f} {name}" for name, c in weakest[:6]) + (" ..." if len(weakest) > 6 else "")
    if s[-1] <= NULL_RATIO * s[0]:
        parts.append(f"numerically unidentifiable direction {direction} (smallest singular value {s[-1]:.3g}, largest {s[0]:.3g}): "
                     "no motion excites it; group or drop these parameters (a base parameter set of the robot)")  # fmt: skip
    elif condition > WARN_CONDITION:
        parts.append(f"poorly excited direction {direction} (singular value {s[-1]:.3g} of largest {s[0]:.3g}): measurement "
                     "noise will hide it; excite it more (bounds, harmonics) or leave these parameters out")  # fmt: skip
    else:
        parts.append(f"least excited direction {direction} (singular value {s[-1]:.3g} of largest {s[0]:.3g})")
    bounds = {"q": "q_limits", "qd": "qd_max", "qdd": "qdd_max"}
    touched = [f"{bounds[k]} of joints {', '.join(v)}" for k, v in binding.items() if v]
    if touched:
        parts.append(f"the optimum presses on {'; '.join(touched)}: wider bounds (or more harmonics, a lower frequency) excite more")
    if budget_used:
        parts.append(f"the iteration budget ran out (maxiter={maxiter}): more iterations may lower it")
    if kept_start:
        parts.append("the optimiser found no better motion within the bounds: the random start is returned (another seed, wider bounds)")
    return "; ".join(parts)


class _Report:
    """SLSQP's callback after each iteration: ``progress(iteration, condition number)``, or lines on standard error."""

    def __init__(self, progress, what, problem, maxiter):
        self.call = progress if callable(progress) else None
        self.lines = None if self.call else Ticker(show=progress)
        self.what, self.problem, self.maxiter, self.iteration = what, problem, int(maxiter), 0

    def condition(self, x):
        return float(np.exp(self.problem.value(x)))  # the value at x is cached: SLSQP evaluated it last

    def __call__(self, x):
        self.iteration += 1
        if self.call is not None:
            self.call(self.iteration, self.condition(x))
        else:
            assert self.lines is not None  # no call: a Ticker
            self.lines.update(lambda: f"{self.what}: iteration {self.iteration}/{self.maxiter}, condition number {self.condition(x):.4g}")

    def close(self, text):
        if self.lines is not None:
            self.lines.close(f"{self.what}: {text}")


def _start(constraints, size, seed):
    """A random start shrunk into the limits."""
    rng = np.random.default_rng(seed)
    x0 = 0.5 * rng.normal(size=size)
    for _ in range(60):
        if all(np.all(M @ x0 >= lo - 1e-9) and np.all(M @ x0 <= hi + 1e-9) for _, M, lo, hi in constraints):
            break
        x0 *= 0.7
    return x0


def fourier_excitation(
    model: Robot | DynamicModel | IdentificationModel | Regressors,
    values: Mapping[str, float] | None = None,
    *,
    harmonics: int = 4,
    frequency: float = 0.2,
    samples: int | None = None,
    q_limits: ArrayLike | str | None = "robot",
    qd_max: ArrayLike | None = 2.0,
    qdd_max: ArrayLike | None = 10.0,
    q0: ArrayLike | None = None,
    seed: int = 0,
    maxiter: int = 100,
    friction: bool = True,
    rotor: bool = True,
    base: BaseParameterSet | None = None,
    backend: str = "auto",
    progress: bool | Callable[[int, float], None] | None = None,
) -> ExcitationResult:
    """A Fourier excitation trajectory that lowers the condition number of the observation matrix.

    Minimises ``log cond(W_b)`` of the base observation matrix stacked over
    ``samples`` times of one period (``scipy.optimize.minimize``, SLSQP,
    with the gradient from the singular vectors) under
    ``q_limits[0] <= q(t_k) <= q_limits[1]``, ``|qd(t_k)| <= qd_max`` and
    ``|qdd(t_k)| <= qdd_max`` at the samples.  The condition number reached
    depends on the robot, the bounds and ``maxiter``: tens for a 2-joint arm,
    hundreds for a 6-joint arm with the default bounds, more for a tree of
    17 joints; the result says what limits it (:attr:`ExcitationResult.diagnosis`:
    the least excited base parameters, the bounds the optimum presses on,
    an exhausted iteration budget), and above :data:`WARN_CONDITION` a
    :class:`PoorExcitationWarning` says it too.

    Parameters
    ----------
    model : Robot, DynamicModel, IdentificationModel or Regressors
    values : mapping, optional
        Geometric and gravity values (as :func:`~.identify.identify`;
        default the robot's own, ``robot.values``).
    harmonics : int, optional
        ``L``, harmonics per joint.
    frequency : float, optional
        Base frequency (Hz).
    samples : int, optional
        Times per period (default ``max(60, 3 nb / n)``).
    q_limits : "robot", (lower, upper) or array_like (n, 2), optional
        Joint limits, the same for all or per joint; None for none.  The
        default, ``"robot"``, takes each joint's position limits from
        ``robot.limits`` (a URDF's ``<limit lower upper>``), and
        :data:`DEFAULT_Q_LIMITS` for a joint without: a trajectory the
        robot's own stops (and :func:`kanerobot.simulate`) allow.
    qd_max, qdd_max : float or array_like (n,), optional
        Rate and acceleration bounds; None for none.
    q0 : array_like (n,), optional
        Fixed offsets; default the middle of the limits (0 without).
    seed : int, optional
        Of the random start.
    maxiter : int, optional
        SLSQP's iterations at most.
    friction, rotor : bool, optional
        Columns for ``FV, FS`` and ``IA`` (as :func:`~.identify.identify`).
    base : BaseParameterSet, optional
        The base parameters whose observation matrix is conditioned (default:
        :func:`~.base_parameters.base_parameter_set`, numeric method, with the
        geometry and gravity of ``values``).
    backend : {"auto", "c", "numpy"}, optional
    progress : bool or callable, optional
        None (default): a line on standard error every few seconds once the
        work has lasted :data:`kanerobot.progress.DELAY` s (iteration,
        condition number; ``KANEROBOT_PROGRESS=0`` silences it); True: from
        the start; False: none; a callable: ``progress(iteration,
        condition_number)`` after each iteration, instead of the lines.

    Returns
    -------
    ExcitationResult

    Warns
    -----
    PoorExcitationWarning
        When the condition number reached exceeds :data:`WARN_CONDITION`,
        with the diagnosis.

    Examples
    --------
    >>> import kanerobot as kr
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> out = fourier_excitation(robot, {"L1": 0.5, "G3": -9.81}, harmonics=2, maxiter=20, backend="numpy")
    >>> out.condition_number < out.initial_condition_number, out.success
    (True, True)
    >>> out.diagnosis.startswith("condition number")
    True
    """
    from scipy.optimize import minimize

    regs = as_regressors(model, values, friction, rotor, backend)
    n, L = regs.n, int(harmonics)
    if L < 1:
        raise KaneRobotError(f"harmonics must be at least 1, got {harmonics}")
    base = base if base is not None else regs.base_parameter_set()
    if isinstance(q_limits, str) and q_limits == "robot":
        q_limits = robot_q_limits(regs.robot)
    problem, limits = _problem(regs, base, L, frequency, samples, q_limits, qd_max, qdd_max, q0)
    constraints = _slsqp(limits)

    def feasible(x):
        return all(np.all(c["fun"](x) >= -1e-9) for c in constraints)

    x0 = _start(limits, n * 2 * L, seed)
    report = _Report(progress, f"fourier_excitation {regs.robot.name}", problem, maxiter)
    # one BLAS thread: the SVDs are small, and idle BLAS threads spinning on a busy machine made it 10 times slower
    with threadpool_limits(limits=1, user_api="blas"):
        start = problem.singular_values(x0)
        initial = problem.value(x0)
        solution = minimize(problem.value, x0, jac=problem.gradient, method="SLSQP", constraints=constraints, callback=report,
                            options={"maxiter": int(maxiter), "ftol": 1e-6})  # fmt: skip
        improved = np.isfinite(solution.fun) and solution.fun <= initial and feasible(solution.x)
        x = solution.x if improved else x0
        W = problem.matrix(*problem.motion(x))
        _, s, Vt = np.linalg.svd(W.reshape(-1, W.shape[2]), full_matrices=False)
    condition = float(s[0] / s[-1]) if s[-1] > 0 else np.inf
    report.close(f"done, condition number {condition:.4g} after {solution.nit} iterations")
    ab = x.reshape(n, 2 * L)
    start = float(start[0] / start[-1]) if start[-1] > 0 else np.inf
    weakest = _weakest(list(base.names), Vt[-1])
    binding = _touched(limits, x, list(regs.robot.joint_labels), len(problem.times))
    iterations, budget_used = int(solution.nit), int(solution.status) == 9
    diagnosis = _diagnosis(condition, start, s, weakest, binding, iterations, budget_used, maxiter, not improved)
    if condition > WARN_CONDITION:
        warnings.warn(f"fourier_excitation on {regs.robot.name}: {diagnosis}", PoorExcitationWarning, stacklevel=2)
    return ExcitationResult(
        trajectory=FourierTrajectory(problem.q0, ab[:, :L], ab[:, L:], frequency), condition_number=condition,
        initial_condition_number=start, singular_values=s, weakest=weakest, binding=binding,
        iterations=iterations, budget_used=budget_used, diagnosis=diagnosis, times=problem.times, success=bool(feasible(x)),
        message=str(solution.message), base=base,
    )  # fmt: skip
