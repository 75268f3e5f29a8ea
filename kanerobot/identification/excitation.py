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

from collections.abc import Mapping

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
from kanerobot.robot.description import Robot

__all__ = ["ExcitationResult", "FourierTrajectory", "fourier_excitation"]


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


class ExcitationResult:
    """What :func:`fourier_excitation` returns.

    Attributes
    ----------
    trajectory : FourierTrajectory
    condition_number : float
        Of the base observation matrix over the samples of one period.
    initial_condition_number : float
        The same for the random start.
    times : numpy.ndarray
        The samples the condition number is computed on.
    success : bool
        Whether every limit holds at the samples.
    base : BaseParameterSet
        The base parameters conditioned.
    message : str
        The optimiser's.
    """

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def __repr__(self):
        return f"<ExcitationResult condition number {self.condition_number:.4g} (start {self.initial_condition_number:.4g})>"


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


def fourier_excitation(
    model: Robot | DynamicModel | IdentificationModel | Regressors,
    values: Mapping[str, float] | None = None,
    *,
    harmonics: int = 4,
    frequency: float = 0.2,
    samples: int | None = None,
    q_limits: ArrayLike | None = (-np.pi, np.pi),
    qd_max: ArrayLike | None = 2.0,
    qdd_max: ArrayLike | None = 10.0,
    q0: ArrayLike | None = None,
    seed: int = 0,
    maxiter: int = 100,
    friction: bool = True,
    rotor: bool = True,
    base: BaseParameterSet | None = None,
    backend: str = "auto",
) -> ExcitationResult:
    """A Fourier excitation trajectory with a small condition number.

    Minimises ``log cond(W_b)`` of the base observation matrix stacked over
    ``samples`` times of one period (``scipy.optimize.minimize``, SLSQP)
    under ``q_limits[0] <= q(t_k) <= q_limits[1]``, ``|qd(t_k)| <= qd_max``
    and ``|qdd(t_k)| <= qdd_max`` at the samples.

    Parameters
    ----------
    model : Robot, DynamicModel, IdentificationModel or Regressors
    values : mapping
        Geometric and gravity values (as :func:`~.identify.identify`).
    harmonics : int, optional
        ``L``, harmonics per joint.
    frequency : float, optional
        Base frequency (Hz).
    samples : int, optional
        Times per period (default ``max(60, 3 nb / n)``).
    q_limits : (lower, upper) or array_like (n, 2), optional
        Joint limits, the same for all or per joint; None for none.
    qd_max, qdd_max : float or array_like (n,), optional
        Rate and acceleration bounds; None for none.
    q0 : array_like (n,), optional
        Fixed offsets; default the middle of the limits (0 without).
    seed : int, optional
        Of the random start.
    maxiter : int, optional
    friction, rotor : bool, optional
        Columns for ``FV, FS`` and ``IA`` (as :func:`~.identify.identify`).
    base : BaseParameterSet, optional
        The base parameters whose observation matrix is conditioned (default:
        :func:`~.base_parameters.base_parameter_set`, numeric method, with the
        geometry and gravity of ``values``).
    backend : {"auto", "c", "numpy"}, optional

    Returns
    -------
    ExcitationResult

    Examples
    --------
    >>> import kanerobot as kr
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> out = fourier_excitation(robot, {"L1": 0.5, "G3": -9.81}, harmonics=2, maxiter=20, backend="numpy")
    >>> out.condition_number < out.initial_condition_number, out.success
    (True, True)
    """
    from scipy.optimize import minimize

    regs = as_regressors(model, values, friction, rotor, backend)
    n, L = regs.n, int(harmonics)
    if L < 1:
        raise KaneRobotError(f"harmonics must be at least 1, got {harmonics}")
    base = base if base is not None else regs.base_parameter_set()
    columns = regs.base_columns(base).columns
    samples = int(samples or max(60, 3 * len(columns) // max(n, 1)))
    times = np.arange(samples) / (samples * frequency)
    qlim = _limits(q_limits, n, "q_limits", symmetric=False)
    vlim = _limits(qd_max, n, "qd_max", symmetric=True)
    alim = _limits(qdd_max, n, "qdd_max", symmetric=True)
    if q0 is None:
        q0 = np.zeros(n) if qlim is None else 0.5 * (qlim[0] + qlim[1])
    q0 = np.asarray(q0, dtype=float)
    w = 2 * np.pi * frequency
    wl = w * np.arange(1, L + 1)
    angle = np.outer(times, wl)
    S, C = np.sin(angle), np.cos(angle)
    # linear maps from x = (a (n, L), b (n, L)) flattened to q - q0, qd, qdd at the samples, joint by joint
    Pq = np.hstack([S / wl, -C / wl])
    Pv = np.hstack([C, S])
    Pa = np.hstack([-S * wl, C * wl])

    def motion(x):
        ab = x.reshape(n, 2 * L)
        return q0 + Pq @ ab.T, Pv @ ab.T, Pa @ ab.T

    def cond(x):
        q, qd, qdd = motion(x)
        W = regs.regressor(q, qd, qdd)[:, :, columns].reshape(-1, len(columns))
        s = np.linalg.svd(W, compute_uv=False)
        return float(np.log(s[0] / max(s[-1], 1e-300)))

    constraints = []
    for P, limits in ((Pq, qlim), (Pv, vlim), (Pa, alim)):
        if limits is None:
            continue
        lower, upper = limits
        offset = q0 if P is Pq else np.zeros(n)
        blocks = [np.kron(np.eye(n)[j], P) for j in range(n)]  # (samples, n 2L) per joint
        M = np.vstack(blocks)
        lo = np.concatenate([np.full(samples, lower[j] - offset[j]) for j in range(n)])
        hi = np.concatenate([np.full(samples, upper[j] - offset[j]) for j in range(n)])
        constraints.append({"type": "ineq", "fun": lambda x, M=M, hi=hi: hi - M @ x, "jac": lambda x, M=M: -M})
        constraints.append({"type": "ineq", "fun": lambda x, M=M, lo=lo: M @ x - lo, "jac": lambda x, M=M: M})

    def feasible(x):
        return all(np.all(c["fun"](x) >= -1e-9) for c in constraints)

    rng = np.random.default_rng(seed)
    x0 = 0.5 * rng.normal(size=n * 2 * L)
    for _ in range(60):  # shrink the random start into the limits
        if feasible(x0):
            break
        x0 *= 0.7
    # one BLAS thread: the SVDs are small, and idle BLAS threads spinning on a busy machine made it 10 times slower
    with threadpool_limits(limits=1, user_api="blas"):
        initial = cond(x0)
        solution = minimize(cond, x0, method="SLSQP", constraints=constraints, options={"maxiter": int(maxiter), "ftol": 1e-6})
    x = solution.x if np.isfinite(solution.fun) and solution.fun <= initial and feasible(solution.x) else x0
    ab = x.reshape(n, 2 * L)
    trajectory = FourierTrajectory(q0, ab[:, :L], ab[:, L:], frequency)
    return ExcitationResult(
        trajectory=trajectory, condition_number=float(np.exp(cond(x))), initial_condition_number=float(np.exp(initial)),
        times=times, success=bool(feasible(x)), message=str(solution.message), base=base,
    )  # fmt: skip
