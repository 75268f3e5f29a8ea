"""Least squares from triangular factors: one solver for recordings in memory and in chunks.

:func:`~kanerobot.identification.identify.identify` solves
``min |W K_b - y|`` per joint group (``g`` groups of equations, ``nb``
base parameters).  Everything it needs -- the estimate, the residual
variance, the covariance, the condition number and the per-joint weights of
weighted least squares -- is a function of the triangular factor ``R_j`` of
each group's augmented matrix ``[W_j | y_j] = Q_j R_j``, an ``(nb + 1)``
square matrix whatever the number of rows:

- ``|W_j x - y_j| = |R_j [x; -1]|`` for every ``x`` (``Q_j`` keeps norms);
- the rows weighted by ``w_j`` have the factor ``w_j R_j``, so the factor of
  the whole weighted system is the R of the stacked ``w_j R_j``;
- with ``R = [[R_A, c], [0, rho]]``: ``x = R_A^-1 c``, the residual norm
  is ``|rho|`` and ``C = sigma^2 (W^T W)^-1 = sigma^2 (R_A^T R_A)^-1``.

A tall-skinny QR builds ``R_j`` from rows that arrive in blocks: the R of
the R so far stacked over the next block (:class:`Factors`), so that a
recording of any length needs memory for one block.  The in-memory path
adds all its rows as one block: both paths share :func:`solve` and
:func:`joint_weights`.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> W, y = rng.normal(size=(1000, 2, 3)), rng.normal(size=(1000, 2))
>>> whole, blocks = Factors(2, 3), Factors(2, 3)
>>> whole.add(W, y)
>>> for k in range(0, 1000, 64):
...     blocks.add(W[k : k + 64], y[k : k + 64])
>>> x = solve(whole.stacked(), whole.rows)[0]
>>> bool(np.allclose(solve(blocks.stacked(), blocks.rows)[0], x, rtol=1e-12, atol=0))
True
>>> A, b = W.transpose(1, 0, 2).reshape(-1, 3), y.T.reshape(-1)
>>> bool(np.allclose(x, np.linalg.lstsq(A, b, rcond=None)[0], rtol=1e-12, atol=0))
True
"""

import numpy as np

from kanerobot.errors import KaneRobotError

__all__ = ["Factors", "joint_weights", "solve"]


def _r(M):
    """The R of ``M = Q R`` (``min(rows, columns)`` rows)."""
    return np.linalg.qr(M, mode="r")


class Factors:
    """Per-group triangular factors of ``[W_j | y_j]``, built block by block (tall-skinny QR).

    Parameters
    ----------
    groups : int
        Groups of equations (one per joint, or one for the energy model).
    nb : int
        Unknowns (base parameters).

    Attributes
    ----------
    R : list of numpy.ndarray
        Per group, the R factor so far, shape ``(min(rows_j, nb + 1), nb + 1)``.
    counts : numpy.ndarray of int, shape (groups,)
        Rows added per group.
    """

    #: The samples dropped at each end (:func:`~.chunked.chunked_factors` sets it, for the result).
    trim: int

    def __init__(self, groups, nb):
        self.nb = nb
        self.R = [np.zeros((0, nb + 1)) for _ in range(groups)]
        self.counts = np.zeros(groups, dtype=int)

    @property
    def rows(self):
        """Equations added in all, every group."""
        return int(self.counts.sum())

    def add(self, W, y):
        """Add equations ``W[k, j] @ K_b = y[k, j]``: ``W`` (m, groups, nb), ``y`` (m, groups)."""
        if len(y) == 0:
            return
        for j, R in enumerate(self.R):
            # the factor so far over the new rows, filled in place column-major (LAPACK's order)
            block = np.empty((len(R) + len(y), self.nb + 1), order="F")
            block[: len(R)] = R
            block[len(R) :, : self.nb] = W[:, j, :]
            block[len(R) :, self.nb] = y[:, j]
            self.R[j] = np.linalg.qr(block, mode="r")  # type: ignore[call-overload]  # numpy's stub says QRResult for every mode; "r" returns R
            self.counts[j] += len(y)

    def stacked(self, weights=None):
        """The R factor of every group's equations together, each group's scaled by ``weights[j]``.

        Returns
        -------
        numpy.ndarray, shape (min(rows, nb + 1), nb + 1)
        """
        weights = np.ones(len(self.R)) if weights is None else weights
        return _r(np.concatenate([w * R for w, R in zip(weights, self.R)]))

    def norms(self, x, scales=None):
        """``(|y - W x|, |y|)`` over every group, unweighted; with ``scales``, group j's
        equations are ``s_j W_j x = y_j`` (the joints of identified drive gain, ``s_j = 1 / g_j``)."""
        scales = np.ones(len(self.R)) if scales is None else scales
        residual = sum(float(np.sum((R @ np.append(s * x, -1.0)) ** 2)) for R, s in zip(self.R, scales))
        observed = sum(float(np.sum(R[:, -1] ** 2)) for R in self.R)
        return np.sqrt(residual), np.sqrt(observed)


def square_factor(R, nb):
    """``R`` padded with zero rows to ``(nb + 1, nb + 1)`` (fewer rows than unknowns)."""
    return np.concatenate([R, np.zeros((nb + 1 - len(R), nb + 1))]) if len(R) < nb + 1 else R


def joint_weights(factors):
    """Weights of weighted least squares: each group's inverse residual standard deviation, largest 1.

    Per group the ordinary least-squares fit of its own equations (the
    minimum-norm one when they do not determine every unknown), its residual
    ``|y_j - W_j x_j|`` over ``rows_j - rank(W_j)`` degrees of freedom (Gautier
    1997); the rank as ``numpy.linalg.matrix_rank`` counts it on ``W_j`` itself
    (singular values above ``s_max max(rows_j, nb) eps``, those of ``R_A``).

    Parameters
    ----------
    factors : Factors

    Returns
    -------
    numpy.ndarray, shape (groups,)
    """
    nb = factors.nb
    weights = np.ones(len(factors.R))
    for j, (R, rows) in enumerate(zip(factors.R, factors.counts)):
        R = square_factor(R, nb)
        RA, c, rho = R[:nb, :nb], R[:nb, nb], R[nb, nb]
        s = np.linalg.svd(RA, compute_uv=False)
        limit = s.max() * max(rows, nb) * np.finfo(float).eps
        rank = int(np.sum(s > limit)) if s.max() > 0 else 0
        x, *_ = np.linalg.lstsq(RA, c, rcond=max(rows, nb) * np.finfo(float).eps)
        # what R_A x misses of c is residual too when W_j does not determine every unknown
        residual2 = rho**2 + float(np.sum((c - RA @ x) ** 2))
        sigma_j = np.sqrt(residual2 / max(rows - rank, 1))
        weights[j] = 1.0 / sigma_j if sigma_j > 0 else 1.0
    return weights / weights.max()


def solve(R, rows):
    """``(x, C, sigma^2, cond)`` of ``min |W x - y|`` from the R factor of ``[W | y]``.

    Parameters
    ----------
    R : numpy.ndarray, shape (nb + 1, nb + 1)
        Upper triangular (:meth:`Factors.stacked`).
    rows : int
        Equations behind it (for ``sigma^2 = |y - W x|^2 / (rows - nb)``).

    Returns
    -------
    x : numpy.ndarray, shape (nb,)
    C : numpy.ndarray, shape (nb, nb)
        ``sigma^2 (W^T W)^-1``.
    sigma2 : float
    cond : float
        2-norm condition number of ``W`` (that of ``R_A``).

    Raises
    ------
    KaneRobotError
        When ``W`` is rank deficient: the motion does not excite every
        base parameter.
    """
    nb = R.shape[1] - 1
    R = square_factor(R, nb)
    RA, c, rho = R[:nb, :nb], R[:nb, nb], R[nb, nb]
    U, s, Vt = np.linalg.svd(RA)
    if s[-1] <= s[0] * 1e-13:
        raise KaneRobotError(
            f"the observation matrix is rank deficient (condition number {s[0] / max(s[-1], 1e-300):.3g}): "
            "the motion does not excite every base parameter; use a richer trajectory (kr.fourier_excitation)"
        )
    x = Vt.T @ ((U.T @ c) / s)
    sigma2 = float((rho**2 + np.sum((c - RA @ x) ** 2)) / (rows - nb))
    C = sigma2 * (Vt.T / s**2) @ Vt
    return x, C, sigma2, float(s[0] / s[-1])
