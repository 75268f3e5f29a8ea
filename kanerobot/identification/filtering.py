"""Filtering of recorded data and the filtered dynamic identification model.

Data preparation (Gautier's practice for the inverse dynamic model):

- :func:`lowpass`: zero-phase Butterworth low-pass (``scipy.signal.butter``
  and ``filtfilt``) of the joint positions, so that central differences
  (:func:`derivatives`) give rates and accelerations without amplified noise;
- :func:`decimate`: *parallel* decimation, the same zero-phase low-pass and
  down-sampling applied to the torques and to each column of the
  observation matrix, which removes the torque ripple above the motion's
  band without biasing the linear relation ``tau = W K``.

The filtered dynamic model (SYMORO+ eqs. 40-46) needs no acceleration.  With
``Gamma = d/dt(D1 K) + D2 K`` (41) and a second-order low-pass
``F(s) = a^2 / (s + a)^2`` (45) and its derivative filter
``F'(s) = a^2 s / (s + a)^2`` (46),

    F[Gamma] = F'[D1] K + F[D2] K                                       (44)

:func:`filtered_model` applies both filters, discretised by the bilinear
(Tustin) transform at the sampling period, from rest: ``D1 - D1(t0)`` goes
through ``F'`` so that its initial value does not enter (the Laplace
transform of ``d/dt x`` is ``s X - x(t0)``).  The identity then holds to the
discretisation error, ``O(dt^2)``.

Examples
--------
>>> import numpy as np
>>> t = np.arange(0.0, 2.0, 1e-3)
>>> x = np.sin(2 * np.pi * t)[:, None]
>>> y = second_order_filter(x - x[0], 1e-3, 50.0, derivative=True)    # F' = F applied to dx/dt
>>> z = second_order_filter(2 * np.pi * np.cos(2 * np.pi * t)[:, None], 1e-3, 50.0)
>>> bool(np.abs(y - z)[500:].max() < 1e-4)
True
"""

import math

import numpy as np

from kanerobot.errors import DataError, KaneRobotError

__all__ = ["check_uniform", "decimate", "decimation_factor", "derivatives", "filtered_model", "lowpass", "lowpass_reach", "period", "second_order_filter"]


def check_uniform(t, tolerance=1e-3, source="recording"):
    """The sampling period of ``t`` (:func:`period`), after checking that it is uniform.

    Parameters
    ----------
    t : array_like, shape (N,)
    tolerance : float, optional
        Largest relative deviation of a step from the median step.

    Returns
    -------
    float
        :func:`period` of the first and last times.

    Raises
    ------
    DataError
        Naming the first irregular sample: filters need uniform sampling
        (resample the recording first).

    Examples
    --------
    >>> check_uniform([0.0, 0.1, 0.2, 0.3])
    0.1
    """
    t = np.asarray(t, dtype=float)
    steps = np.diff(t)
    dt = float(np.median(steps))
    bad = np.nonzero(np.abs(steps - dt) > tolerance * dt)[0]
    if len(bad):
        k = int(bad[0]) + 1
        raise DataError(source, None, f"sampling is not uniform at sample {k} (step {steps[k - 1]:.6g} s, median {dt:.6g} s): "
                                      f"resample the recording at a constant period")  # fmt: skip
    return period(t[0], t[-1], len(t))


def period(first, last, samples):
    """The sampling period of ``samples`` uniform times from ``first`` to ``last``: ``(last - first) / (samples - 1)``.

    The mean step rather than the median one: the steps of times far from
    0 carry the rounding of the times (``ulp(t)``), and their median moves
    with the recording's length; the mean is exact to ``ulp(t) / samples``,
    and a recording read in chunks (:mod:`.chunked`) finds it from its ends
    before reading the rest.  Rounded to 15 decimals, as a period is written.

    Examples
    --------
    >>> t = 1e3 + np.arange(100_000) * 1e-3       # steps of 1e-3 to 1e-13 s: their median is off by 2e-14
    >>> period(t[0], t[-1], len(t)), float(np.median(np.diff(t)))
    (0.001, 0.0009999999999763531)
    """
    return round(float(last - first) / (samples - 1), 15)


def lowpass(x, dt, cutoff, order=4):
    """Zero-phase Butterworth low-pass of ``x`` along its first axis.

    Parameters
    ----------
    x : array_like, shape (N, ...)
    dt : float
        Sampling period (s).
    cutoff : float
        Cut-off frequency (Hz), below the Nyquist frequency ``1 / (2 dt)``.
    order : int, optional
        Of the Butterworth filter (applied forward and backward: twice).

    Returns
    -------
    numpy.ndarray, shape of ``x``

    Examples
    --------
    >>> t = np.arange(0.0, 1.0, 1e-3)
    >>> x = np.sin(2 * np.pi * t) + 0.1 * np.sin(2 * np.pi * 200 * t)
    >>> bool(np.abs(lowpass(x, 1e-3, 20.0) - np.sin(2 * np.pi * t))[50:-50].max() < 1e-2)   # away from the ends
    True
    """
    from scipy import signal

    x = np.asarray(x, dtype=float)
    sos, padlen = _design(dt, cutoff, order)
    return signal.sosfiltfilt(sos, x, axis=0, padlen=min(len(x) - 1, padlen))


def _design(dt, cutoff, order):
    """The second-order sections of :func:`lowpass` and its odd extension at each end (samples)."""
    from scipy import signal

    nyquist = 0.5 / dt
    if not 0 < cutoff < nyquist:
        raise KaneRobotError(f"cut-off frequency {cutoff:g} Hz must lie between 0 and the Nyquist frequency {nyquist:g} Hz")
    sos = signal.butter(order, cutoff, fs=1.0 / dt, output="sos")
    # odd extension over a few periods of the cut-off: small end effects
    return sos, max(3 * (2 * len(sos) + 1), int(3.0 / (cutoff * dt)))


def lowpass_reach(dt, cutoff, order=4, tolerance=1e-18):
    """Samples on each side of a sample that :func:`lowpass` reads, to ``tolerance``.

    The filter is recursive: its output depends on every input, but the
    weight of an input ``k`` samples away decays as ``r^k`` (``r`` the
    largest pole modulus).  Filtering a stretch that extends this many
    samples beyond a sample on each side (or to the recording's end, where
    the odd extension is the same) gives that sample as filtering the whole
    recording, to ``tolerance`` relative: what the chunked identification
    (:mod:`.chunked`) overlaps its chunks by.

    Parameters
    ----------
    dt, cutoff, order : float, float, int
        As for :func:`lowpass`.
    tolerance : float, optional

    Returns
    -------
    int
        At least the end extension of :func:`lowpass`.

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=4000)
    >>> k = lowpass_reach(1e-3, 20.0)
    >>> part = lowpass(x[1000 - k : 2000 + k], 1e-3, 20.0)[k:-k]
    >>> bool(np.abs(part - lowpass(x, 1e-3, 20.0)[1000:2000]).max() < 1e-14)
    True
    """
    sos, padlen = _design(dt, cutoff, order)
    r = max(float(np.abs(np.roots(section[3:])).max()) for section in sos)
    return max(padlen, int(np.ceil(np.log(tolerance) / np.log(r))))


def derivatives(q, dt, cutoff=None, order=4, accuracy=2):
    """Positions, rates and accelerations from sampled positions.

    ``q`` is low-passed (:func:`lowpass`, when ``cutoff`` is given), then
    differentiated by central differences: ``accuracy=2``, twice by
    ``numpy.gradient`` (second order: on ``sin(w t)`` the gains are
    ``sin(w h) / h`` per derivative, ``(w h)^2 / 6`` below ``w``);
    ``accuracy=4``, five-point stencils (fourth order)::

        qd_k  = (q_{k-2} - 8 q_{k-1} + 8 q_{k+1} - q_{k+2}) / (12 h)
        qdd_k = (-q_{k-2} + 16 q_{k-1} - 30 q_k + 16 q_{k+1} - q_{k+2}) / (12 h^2)

    whose gains ``(8 sin(w h) - sin(2 w h)) / (6 h)`` and
    ``(30 - 32 cos(w h) + 2 cos(2 w h)) / (12 h^2)`` are within
    ``(w h)^4 / 30`` and ``(w h)^4 / 90`` of ``w`` and ``w^2``: at 25 ms
    steps a 0.2 Hz motion's acceleration is off by 1e-8 rather than 3e-4,
    which a long recording's least squares would see (the two samples at
    each end take the second-order values).  Use them on low-passed
    positions: at the Nyquist frequency their ``qdd`` gain is ``16 / (3
    h^2)``, where ``numpy.gradient`` twice has 0, so they amplify the noise
    of raw positions.

    Parameters
    ----------
    q : array_like, shape (N, n)
    dt : float
    cutoff : float, optional
        Cut-off frequency (Hz) of the position filter; none by default.
    order : int, optional
        Of the Butterworth filter.
    accuracy : {2, 4}, optional
        Order of the central differences.

    Returns
    -------
    q, qd, qdd : numpy.ndarray, shape (N, n)

    Examples
    --------
    >>> t = np.arange(0.0, 1.0, 1e-3)
    >>> _, qd, qdd = derivatives(np.sin(t)[:, None], 1e-3)
    >>> bool(abs(qd[500, 0] - np.cos(0.5)) < 1e-6 and abs(qdd[500, 0] + np.sin(0.5)) < 1e-6)
    True
    """
    q = np.asarray(q, dtype=float)
    if cutoff is not None:
        q = lowpass(q, dt, cutoff, order)
    qd = np.gradient(q, dt, axis=0, edge_order=2)
    qdd = np.gradient(qd, dt, axis=0, edge_order=2)
    if accuracy == 4 and len(q) >= 5:
        qd[2:-2] = (q[:-4] - 8 * q[1:-3] + 8 * q[3:-1] - q[4:]) / (12 * dt)
        qdd[2:-2] = (-q[:-4] + 16 * q[1:-3] - 30 * q[2:-2] + 16 * q[3:-1] - q[4:]) / (12 * dt**2)
    elif accuracy not in (2, 4):
        raise ValueError(f"accuracy={accuracy!r}: central differences of order 2 or 4")
    return q, qd, qdd


def default_trim(dt, cutoff=None, decimation=1):
    """Equations dropped at each end of a recording by default (rows after decimation).

    2 (the ends of the central differences), 10 with decimation (its
    filter's ends), and with a ``cutoff`` low-pass of the positions the
    first and last ``3 / cutoff`` seconds (three periods of the cut-off,
    where ``filtfilt``'s end transients live).

    Examples
    --------
    >>> default_trim(0.01), default_trim(0.01, 5.0), default_trim(0.001, 20.0, 4)
    (2, 60, 38)
    """
    base = 10 if decimation > 1 else 2
    if cutoff is None or cutoff is False:
        return base
    return max(base, math.ceil(3.0 / (float(cutoff) * dt * max(decimation, 1))))


#: Cut-off of :func:`decimate`'s low-pass in cycles per sample, times the factor (half the new Nyquist frequency).
DECIMATION_CUTOFF = 0.25
#: Order of :func:`decimate`'s Butterworth low-pass.
DECIMATION_ORDER = 8


def decimate(x, factor, order=DECIMATION_ORDER):
    """Parallel decimation: anti-aliasing low-pass, then every ``factor``-th sample.

    A zero-phase Butterworth low-pass (:func:`lowpass`, ``order``, applied
    forward and backward) with its cut-off at half the new Nyquist
    frequency, flat in the pass band (unlike the Chebyshev filter of
    ``scipy.signal.decimate``, whose ripple changes low-frequency gains by
    about 1 %), then one sample in ``factor``.  Apply it to the torques and to
    the observation matrix alike.

    Parameters
    ----------
    x : array_like, shape (N, ...)
    factor : int
        1 returns ``x`` unchanged.
    order : int, optional

    Returns
    -------
    numpy.ndarray, shape (ceil(N / factor), ...)

    Examples
    --------
    >>> decimate(np.ones((200, 2)), 5).shape
    (40, 2)
    """
    x = np.asarray(x, dtype=float)
    factor = decimation_factor(factor)
    if factor == 1:
        return x
    if len(x) < 10 * factor:
        raise KaneRobotError(f"{len(x)} samples are too few to decimate by {factor}: record longer or decimate less")
    return lowpass(x, 1.0, DECIMATION_CUTOFF / factor, order=order)[::factor]


def decimation_factor(factor):
    """``factor`` as an int, after checking that it is a positive whole number.

    Raises
    ------
    KaneRobotError
    """
    if isinstance(factor, bool) or int(factor) != factor or factor < 1:
        raise KaneRobotError(f"decimation factor must be a positive integer, got {factor}")
    return int(factor)


def second_order_filter(x, dt, a, derivative=False):
    """``F(s) = a^2 / (s + a)^2`` (45), or ``F'(s) = a^2 s / (s + a)^2`` (46), from rest.

    Discretised by the bilinear transform at period ``dt`` and applied along
    the first axis with zero initial state (``scipy.signal.lfilter``).

    Parameters
    ----------
    x : array_like, shape (N, ...)
    dt : float
    a : float
        Bandwidth (rad/s).
    derivative : bool, optional
        ``F'`` instead of ``F``.

    Returns
    -------
    numpy.ndarray, shape of ``x``

    Examples
    --------
    >>> y = second_order_filter(np.ones(5000), 1e-3, 50.0)     # unit DC gain
    >>> round(float(y[-1]), 9)
    1.0
    """
    from scipy import signal

    if not a > 0:
        raise KaneRobotError(f"filter bandwidth a must be positive, got {a}")
    numerator = [a * a, 0.0] if derivative else [a * a]
    b, den = signal.bilinear(numerator, [1.0, 2 * a, a * a], fs=1.0 / dt)
    return signal.lfilter(b, den, np.asarray(x, dtype=float), axis=0)


def filtered_model(regressors, t, q, qd, a, tau=None, base=None):
    """The filtered dynamic identification model (44): ``F[Gamma] = W_f K``.

    Parameters
    ----------
    regressors : Regressors
        :class:`~kanerobot.identification.numeric_regressor.Regressors` of
        the robot (its :meth:`lagrangian` gives ``D1``, ``D2``).
    t : array_like, shape (N,)
        Uniform times.
    q, qd : array_like, shape (N, n)
        Positions and rates (no acceleration).
    a : float
        Bandwidth of ``F`` and ``F'`` (rad/s).
    tau : array_like, shape (N, n), optional
        Torques, filtered by ``F``.
    base : BaseParameterSet, optional
        Keep only its base columns (matched by name,
        :meth:`~kanerobot.identification.numeric_regressor.Regressors.base_columns`):
        shape (N, n, nb).

    Returns
    -------
    W_f : numpy.ndarray, shape (N, n, p)
        ``F'[D1 - D1(t0)] + F[D2]``, columns in the order of ``regressors.parameters``.
    tau_f : numpy.ndarray, shape (N, n) or None
        ``F[tau]``.

    Notes
    -----
    Both start from rest: the first ``~10 / a`` seconds carry the filters'
    transient and the discretisation differs most there; :func:`identify`
    drops them.
    """
    dt = check_uniform(t)
    D1, D2 = regressors.lagrangian(q, qd)
    W = second_order_filter(D1 - D1[:1], dt, a, derivative=True) + second_order_filter(D2, dt, a)
    if base is not None:
        W = W[:, :, regressors.base_columns(base).columns]
    return W, (None if tau is None else second_order_filter(tau, dt, a))
