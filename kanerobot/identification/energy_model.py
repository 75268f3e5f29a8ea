"""The energy identification model (SYMORO+ eqs. 47-54).

By the energy theorem, the work of the joint torques between two instants is
the change of the total energy plus what friction dissipated:

    int_{t1}^{t2} qd^T Gamma dt = H(t2) - H(t1) + int_{t1}^{t2} qd^T Gamma_f dt      (47)

with ``H = T + U = h(q, qd) K`` (48) linear in the inertial parameters (the
coefficients of eq. 52, with the rotor inertias ``1/2 IA_j qd_j^2``) and the
friction ``Gamma_f = FV qd + FS sign(qd)``, whose power ``FV_j qd_j^2 +
FS_j |qd_j|`` is linear in ``FV, FS``.  One scalar equation per interval::

    y_k = int qd^T Gamma dt,   w_k = Delta h + [int qd_j^2 dt (FV_j), int |qd_j| dt (FS_j)]

needs positions, rates and torques, no acceleration.  The integrals are
cumulative Simpson sums over the samples (``scipy.integrate.cumulative_simpson``).

Examples
--------
A free pendulum (``planar2``, gravity in the plane along -x0, joint 2 held at
0 by its torque) keeps its energy: each interval's work equals ``Delta h K``.

>>> import numpy as np, kanerobot as kr
>>> from kanerobot.identification.numeric_regressor import Regressors
>>> robot = kr.load(kr.frames_path("planar2"))
>>> reg = Regressors(robot, {"L1": 1.0, "G3": 0.0}, backend="numpy")
>>> t = np.linspace(0.0, 1.0, 201)
>>> q = np.column_stack([np.sin(t), 0 * t]); qd = np.column_stack([np.cos(t), 0 * t])
>>> tau = np.column_stack([-np.sin(t), 0 * t])          # ZZ1 = 1 alone: tau = qdd
>>> W, y = energy_model(reg, t, q, qd, tau, window=50)
>>> K = np.array([1.0 if name == "ZZ1" else 0.0 for name in reg.parameters])
>>> bool(np.allclose(W @ K, y, atol=1e-8))
True
"""

import numpy as np

from kanerobot.errors import KaneRobotError

__all__ = ["energy_model", "energy_regressor", "interval_bounds"]


def energy_regressor(regressors, q, qd):
    """``h(q, qd)`` of eq. (48): total energy ``H = h K``, shape (N, p).

    Parameters
    ----------
    regressors : Regressors
    q, qd : array_like, shape (N, n)

    Returns
    -------
    numpy.ndarray, shape (N, p)
        Columns in the order of ``regressors.parameters``; 0 for ``FV, FS``.
    """
    return regressors.energy(q, qd)


def interval_bounds(N, window):
    """Sample indices ``[0, window, 2 window, ...]`` bounding consecutive intervals (the last one ends at N - 1 or before).

    Examples
    --------
    >>> interval_bounds(11, 4).tolist()
    [0, 4, 8]
    """
    window = int(window)
    if window < 1:
        raise KaneRobotError(f"energy interval must hold at least one sampling step, got window = {window}")
    if N - 1 < window:
        raise KaneRobotError(f"{N} samples hold no interval of {window} steps: record longer or give a smaller window")
    return np.arange(0, N, window)


def energy_model(regressors, t, q, qd, tau, window=20, bounds=None, base=None):
    """Rows of the energy identification model (47) over consecutive intervals.

    Parameters
    ----------
    regressors : Regressors
        Gives ``h(q, qd)`` (:meth:`Regressors.energy`) and the parameter order.
    t : array_like, shape (N,)
        Increasing times (any spacing; Simpson's rule adapts).
    q, qd, tau : array_like, shape (N, n)
        Positions, rates and joint torques.
    window : int, optional
        Samples per interval (intervals ``[t_0, t_w], [t_w, t_2w], ...``).
    bounds : array_like of int, optional
        Increasing sample indices bounding the intervals (instead of ``window``).
    base : BaseParameterSet, optional
        Keep only its base columns (matched by name,
        :meth:`~.numeric_regressor.Regressors.base_columns`): ``W_b``, shape
        (m, nb), with ``W_b K_b = y``.

    Returns
    -------
    W : numpy.ndarray, shape (m, p)
        ``h(b) - h(a)`` for the inertial parameters, ``int qd_j^2`` for
        ``FV_j`` and ``int |qd_j|`` for ``FS_j``, columns in the order of
        ``regressors.parameters``.
    y : numpy.ndarray, shape (m,)
        ``int_a^b qd^T tau dt``: ``W K = y`` for the true parameters ``K``.
    """
    from scipy.integrate import cumulative_simpson

    t = np.asarray(t, dtype=float)
    q, qd, tau = (np.asarray(x, dtype=float) for x in (q, qd, tau))
    N = len(t)
    bounds = interval_bounds(N, window) if bounds is None else np.asarray(bounds, dtype=int)
    if len(bounds) < 2 or np.any(np.diff(bounds) <= 0) or bounds[0] < 0 or bounds[-1] > N - 1:
        raise KaneRobotError(f"interval bounds must be increasing sample indices within 0 .. {N - 1}, at least two")

    def integral(f):
        return cumulative_simpson(f, x=t, axis=0, initial=0.0)

    work = integral(np.sum(qd * tau, axis=1))
    h = regressors.energy(q, qd)
    cumulative = np.zeros_like(h)
    for k, (label, kind) in enumerate(regressors.owners):
        j = regressors.robot.joint_labels.index(label) if label in regressors.robot.joint_labels else None
        if kind in ("FV", "FS") and j is not None:
            cumulative[:, k] = integral(qd[:, j] ** 2 if kind == "FV" else np.abs(qd[:, j]))
    a, b = bounds[:-1], bounds[1:]
    W = h[b] - h[a] + cumulative[b] - cumulative[a]
    y = work[b] - work[a]
    if base is not None:
        W = W[:, regressors.base_columns(base).columns]
    return W, y
