"""Recordings as they come: jittered time stamps, stale rows, motor currents, ROS joint names.

A real recording is rarely what :func:`~kanerobot.identification.identify.identify`
needs (uniform steps, torques, one column per joint of the robot in its
order).  :class:`Recording` reads it as it is and :meth:`Recording.prepare`
turns it into that, saying in :attr:`Recording.log` what was done and why:

1. rows that repeat the previous row exactly (a controller re-sending stale
   readings with a new time stamp) are dropped;
2. jittered time stamps are replaced by a uniform grid: positions through a
   cubic spline, the other channels by linear interpolation;
3. positions are low-passed (zero-phase Butterworth) and differentiated by
   fourth-order central differences (:func:`~.filtering.derivatives`);
4. long recordings may be thinned (``decimation``).

What cannot be fixed (a value that is not a number, time going back, a gap
between samples longer than ``max_gap``) raises one
:class:`~kanerobot.errors.DataError` naming the file and the line (CSV) or
the sample (NPZ, arrays) and what to do.

Files
-----
- CSV: a header line of column names, then one sample per line, comma
  separated: ``t``, ``q_<joint>`` for each joint, optionally
  ``qd_<joint>``, ``qdd_<joint>``, ``tau_<joint>``, ``current_<joint>``.
  The channel is the part of a column name before its first ``_``, the
  joint the rest, matched exactly (``q_joint_0.0`` is joint ``joint_0.0``);
  other columns are ignored.
- NPZ: arrays ``t``, ``q`` and optionally ``qd``, ``qdd``, ``tau``,
  ``current`` (N, n), ``joints`` (n names).

Examples
--------
>>> import numpy as np
>>> t = np.cumsum(np.r_[0.0, np.random.default_rng(0).uniform(0.010, 0.033, 399)])
>>> q = np.column_stack([np.sin(t), np.cos(t)])
>>> q[3::4] = q[2::4]                                    # every fourth row a stale reading
>>> raw = Recording(t, q, current=2 * q, joints=("l-hip.y", "joint_0.0"))
>>> ready = raw.prepare(cutoff=2.0)
>>> print(ready.report())
recording: 324 samples over 8.82727 s, uniform steps of 27.329 ms
  joints: l-hip.y, joint_0.0
  channels: q, qd, qdd, current
  - dropped 100 of 400 rows that repeat the previous row (stale readings)
  - time steps 10.01-65.5 ms (median 27.33 ms): resampled to a uniform 27.329 ms grid by cubic spline (q) and linear interpolation (current)
  - q low-passed by a zero-phase 4th-order Butterworth at 2 Hz (filtfilt) before differentiation
  - qd and qdd by central differences of q (fourth order, five-point stencils)
>>> exact = np.column_stack([np.cos(ready.t), -np.sin(ready.t)])
>>> bool(np.abs(ready.qd - exact)[40:-40].max() < 1e-3)        # away from the filter's ends
True
>>> data = ready.to_recorded(gains={"l-hip.y": 0.5, "joint_0.0": 0.5})
>>> data.tau.shape
(324, 2)
"""

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from kanerobot.errors import DataError, KaneRobotError
from kanerobot.identification import filtering
from kanerobot.identification.data import RecordedData, read_lines, read_npz

__all__ = ["CHANNELS", "MIN_SAMPLES", "Recording"]

#: Channels of a recording besides ``t``, in the order of the files.
CHANNELS = ("q", "qd", "qdd", "tau", "current")
#: Fewest samples a recording may have (a cubic spline, filters and differences need a few).
MIN_SAMPLES = 10
#: Largest relative deviation of a step from the period for samples to be kept as recorded.
UNIFORM_TOLERANCE = 1e-3
#: Default largest gap between kept samples, in median steps.
GAP_STEPS = 10
#: Default position cut-off, as a fraction of the Nyquist frequency of the prepared grid.
CUTOFF_FRACTION = 0.2


@dataclass(eq=False)
class Recording:
    """A recording as it comes: times, positions, and what else was measured.

    Parameters
    ----------
    t : array_like, shape (N,)
        Time stamps (s), non-decreasing; a repeated time stamp is allowed
        only on a row that repeats the previous one.
    q : array_like, shape (N, n)
        Joint positions.
    qd, qdd, tau, current : array_like, shape (N, n), optional
        Measured rates, accelerations, joint torques, motor currents.
    joints : tuple of str, optional
        Names of the n joints (``"1" .. "n"`` by default).
    source : str, optional
        Where the samples come from (a file name), for messages.
    log : list of str, optional
        What was done to the samples so far, one sentence each.
    lines : array_like of int, optional
        The line of each sample in ``source`` (a CSV file), for messages;
        by default samples are named by their index.

    Raises
    ------
    DataError
        When shapes disagree, a value is not finite, time goes back, or a
        time stamp repeats with other values; naming the line or sample.

    Examples
    --------
    >>> rec = Recording([0.0, 0.01, 0.02], [[0.0], [0.1], [0.2]], joints=("panda_joint1",))
    Traceback (most recent call last):
    ...
    kanerobot.errors.DataError: recording: 3 samples: a recording needs at least 10; record longer
    >>> rec = Recording(np.arange(12) * 0.01, np.arange(12.0)[:, None], joints=("panda_joint1",))
    >>> rec.n, len(rec), rec.channels
    (1, 12, ('q',))
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray | None = None
    qdd: np.ndarray | None = None
    tau: np.ndarray | None = None
    current: np.ndarray | None = None
    # The constructor takes array-likes and None for joints (the default labels): __post_init__ makes them
    # arrays and a tuple of labels, which the type checker sees the fields hold.
    if TYPE_CHECKING:
        joints: tuple[str, ...] = ()

        def __init__(self, t: ArrayLike, q: ArrayLike, qd: ArrayLike | None = None, qdd: ArrayLike | None = None,
                     tau: ArrayLike | None = None, current: ArrayLike | None = None, joints: Sequence[str] | None = None,
                     source: str = "recording", log: Sequence[str] = (), lines: ArrayLike | None = None,
                     prepared: bool = False) -> None: ...
    else:
        joints: tuple[str, ...] | None = None
    source: str = "recording"
    log: list[str] = field(default_factory=list)
    lines: np.ndarray | None = field(default=None, repr=False)
    #: Made by :meth:`prepare` (identify takes it as it is, not prepared twice).
    prepared: bool = False

    def __post_init__(self) -> None:
        self.source = str(self.source)
        self.t = _numbers(self.t, "t", self.source).reshape(-1)
        N = len(self.t)
        if self.lines is not None:
            self.lines = np.asarray(self.lines, dtype=int).reshape(-1)
            if len(self.lines) != N:
                raise KaneRobotError(f"{len(self.lines)} line numbers for {N} samples")
        if self.q is None:
            raise DataError(self.source, None, "no joint positions q: give q_<joint> columns")
        for name in CHANNELS:
            value = getattr(self, name)
            if value is None:
                continue
            value = _numbers(value, name, self.source)
            if value.ndim == 1:
                value = value[:, None]
            if value.ndim != 2 or value.shape[0] != N:
                raise DataError(self.source, None, f"{name} must have one row per time sample, shape ({N}, n); got shape {np.shape(value)}")
            setattr(self, name, value)
        n = self.q.shape[1]
        for name in CHANNELS[1:]:
            value = getattr(self, name)
            if value is not None and value.shape[1] != n:
                raise DataError(self.source, None, f"{name} has {value.shape[1]} joint columns but q has {n}: give one column per joint")
        self.joints = tuple(str(j) for j in self.joints) if self.joints is not None else tuple(str(k + 1) for k in range(n))
        if len(self.joints) != n:
            raise DataError(self.source, None, f"{len(self.joints)} joint names ({', '.join(self.joints)}) for {n} joint columns")
        if len(set(self.joints)) != n:
            twice = sorted({j for j in self.joints if self.joints.count(j) > 1})
            raise DataError(self.source, None, f"joint name(s) {', '.join(twice)} given twice: name each joint once")
        self.log = list(self.log)
        if N < MIN_SAMPLES:
            raise DataError(self.source, None, f"{N} samples: a recording needs at least {MIN_SAMPLES}; record longer")
        self._check_values()

    # ------------------------------------------------------------ checks
    def _at(self, k):
        """``(line, words)`` naming sample ``k``: its line in a CSV file, else its index."""
        if self.lines is not None:
            return int(self.lines[k]), f"t = {self.t[k]:.6g}"
        return None, f"sample {k} (t = {self.t[k]:.6g})"

    def _error(self, k, message):
        line, words = self._at(k)
        return DataError(self.source, line, f"{words}: {message}")

    def _check_values(self):
        """Finite values, time never going back, a repeated time stamp only on a repeated row."""
        if not np.all(np.isfinite(self.t)):
            k = int(np.nonzero(~np.isfinite(self.t))[0][0])
            line, _ = self._at(k)
            where = "" if line else f"sample {k}: "
            raise DataError(self.source, line, f"{where}time t is {self.t[k]}: remove the sample or fill in its time")
        for name in self.channels:
            value = getattr(self, name)
            bad = ~np.isfinite(value)
            if bad.any():
                k, j = (int(i) for i in np.argwhere(bad)[0])
                raise self._error(k, f"{name}_{self.joints[j]} is {value[k, j]}: remove the sample or fill in the value")
        steps = np.diff(self.t)
        back = np.nonzero(steps < 0)[0]
        if len(back):
            k = int(back[0]) + 1
            raise self._error(k, f"time goes back from {self.t[k - 1]:.6g} s on the sample before: sort the samples by time")
        repeated = np.nonzero((steps == 0) & ~self._repeats()[1:])[0]
        if len(repeated):
            k = int(repeated[0]) + 1
            raise self._error(k, "the time stamp of the sample before, with other values: drop one of the two samples")

    def _repeats(self):
        """Boolean (N,): the row equals the previous row in every channel (never the first)."""
        values = np.hstack([getattr(self, name) for name in self.channels])
        same = np.zeros(len(self.t), dtype=bool)
        same[1:] = np.all(values[1:] == values[:-1], axis=1)
        return same

    # ------------------------------------------------------------ reading
    @classmethod
    def read(cls, source: "str | Path | Mapping", joints: "Sequence[str] | object | None" = None, *,
             names: Mapping[str, str] | None = None) -> "Recording":  # fmt: skip
        """Read a recording from a CSV file, an NPZ file or a mapping of arrays.

        Parameters
        ----------
        source : str, pathlib.Path or mapping
            A ``.csv`` or ``.npz`` path (see the module notes), or a mapping
            with ``t``, ``q`` and optionally ``qd``, ``qdd``, ``tau``,
            ``current``, ``joints``.
        joints : sequence of str or Robot, optional
            The robot's joint names in the robot's order: the recording's
            columns are matched to them by name and put in that order.  A
            :class:`~kanerobot.robot.description.Robot` gives its
            ``joint_labels``; one read from a URDF file
            (:func:`~kanerobot.robot.urdf.parse_urdf`'s result, with
            ``joint_names``) also accepts the URDF names.
        names : mapping, optional
            ``{name in the recording: joint name}``, for recordings that
            name joints otherwise than the robot.

        Returns
        -------
        Recording

        Raises
        ------
        DataError
            One, naming the file and line (or sample): a missing ``t`` or
            ``q_<joint>`` column, a column for a joint that is not one of
            the robot's, a line with another number of values than columns,
            a value that is not a number, time going back, too few samples.

        Examples
        --------
        >>> t = np.arange(20) * 0.01
        >>> rec = Recording.read({"t": t, "q": np.column_stack([t, 2 * t]), "joints": ["b", "a"]}, joints=["a", "b"])
        >>> rec.joints, rec.q[1].tolist()
        (('a', 'b'), [0.02, 0.01])
        """
        robot_joints, aliases = _joint_names(joints)
        aliases.update({str(k): str(v) for k, v in (names or {}).items()})
        if isinstance(source, Mapping):
            return _from_arrays(dict(source), "recording", robot_joints, aliases)
        path = Path(source)
        if not path.is_file():
            raise DataError(path, None, "no such file")
        if path.suffix.lower() == ".npz":
            return _from_arrays(read_npz(path), str(path), robot_joints, aliases)
        if path.suffix.lower() == ".csv":
            return _from_csv(path, robot_joints, aliases)
        raise DataError(path, None, "unknown format: give a .csv or .npz file")

    def write(self, path: "str | Path") -> Path:
        """Write to ``path``: ``.csv`` (``t`` then ``<channel>_<joint>`` columns) or ``.npz``.

        The file appears only once complete (a temporary file, then a
        rename); :meth:`read` gives the same samples back, to the bit.

        Returns
        -------
        pathlib.Path

        Examples
        --------
        >>> import tempfile, os
        >>> rec = Recording(np.arange(12) * 0.01, np.sin(np.arange(12.0))[:, None], joints=("l-hip.y",))
        >>> path = rec.write(os.path.join(tempfile.mkdtemp(), "run.csv"))
        >>> back = Recording.read(path)
        >>> back.joints, bool(np.array_equal(back.q, rec.q))
        (('l-hip.y',), True)
        """
        from kanerobot.robot.files import atomic_write

        path = Path(path)
        if path.suffix.lower() == ".npz":
            payload: dict[str, Any] = {"t": self.t, "joints": np.array(self.joints, dtype=str)}
            payload.update({name: getattr(self, name) for name in self.channels})
            atomic_write(path, lambda handle: np.savez(handle, **payload))
        elif path.suffix.lower() == ".csv":
            if any("," in j or j != j.strip() for j in self.joints):
                raise DataError(path, None, f"joint names {self.joints} cannot be CSV column names (a comma or spaces at an end): write .npz")
            names = ["t"] + [f"{name}_{j}" for name in self.channels for j in self.joints]
            table = np.hstack([self.t[:, None]] + [getattr(self, name) for name in self.channels])
            atomic_write(path, lambda handle: np.savetxt(handle, table, delimiter=",", header=",".join(names), comments="", fmt="%.17g"))
        else:
            raise DataError(path, None, "cannot write a recording there: use a .csv or .npz file")
        return path

    # ------------------------------------------------------------ what it holds
    @property
    def n(self) -> int:
        """Number of joints."""
        return self.q.shape[1]

    def __len__(self) -> int:
        return len(self.t)

    @property
    def channels(self) -> tuple[str, ...]:
        """The channels present, among ``q, qd, qdd, tau, current``."""
        return tuple(name for name in CHANNELS if getattr(self, name) is not None)

    @property
    def period(self) -> float:
        """The median time step (s): the sampling period, once :meth:`prepare` made the steps uniform."""
        return round(float(np.median(np.diff(self.t))), 12)

    @property
    def uniform(self) -> bool:
        """Whether every step is within 0.1 % of the median step (what identification needs)."""
        steps = np.diff(self.t)
        return bool(np.all(np.abs(steps - np.median(steps)) <= UNIFORM_TOLERANCE * np.median(steps)))

    def report(self) -> str:
        """A short summary: samples, duration, steps, channels, joints, and the log.

        Examples
        --------
        >>> print(Recording(np.arange(11) * 0.01, np.zeros((11, 1)), joints=("j",), source="run.csv").report())
        run.csv: 11 samples over 0.1 s, uniform steps of 10 ms
          joints: j
          channels: q
        """
        steps = np.diff(self.t)
        if self.uniform:
            timing = f"uniform steps of {1e3 * self.period:.6g} ms"
        else:
            timing = f"steps {1e3 * steps.min():.6g}-{1e3 * steps.max():.6g} ms (median {1e3 * self.period:.6g} ms), not uniform"
        rows = [f"{self.source}: {len(self)} samples over {self.t[-1] - self.t[0]:.6g} s, {timing}",
                f"  joints: {', '.join(self.joints)}", f"  channels: {', '.join(self.channels)}"]  # fmt: skip
        rows += [f"  - {sentence}" for sentence in self.log]
        return "\n".join(rows)

    def __str__(self) -> str:
        return self.report()

    # ------------------------------------------------------------ preparing
    def prepare(self, *, period: float | None = None, cutoff: float | bool | None = None, decimation: int = 1,
                max_gap: float | None = None, stale: str = "drop", at: str = "grid") -> "Recording":  # fmt: skip
        """A new recording on a uniform grid, with rates and accelerations.

        Parameters
        ----------
        period : float, optional
            Sampling period of the grid (s).  Default: the median step
            after dropping stale rows, rounded to 1 us; when every step is
            within 0.1 % of it, the samples are kept as recorded.  The
            spline samples without anti-aliasing: to thin a recording, use
            ``decimation`` rather than a period longer than its steps.
        cutoff : float or False, optional
            Cut-off (Hz) of the zero-phase 4th-order Butterworth low-pass
            of ``q`` (``scipy.signal.sosfiltfilt``) before central
            differences.  Default: a fifth of the Nyquist frequency of the
            prepared (decimated) grid, 10 Hz for 10 ms steps: above the
            band of a robot's excitation motion (a few Hz), where the
            fourth-order central differences are exact within 1e-5 (at a
            fifth of the cut-off; 0.5 % at the cut-off), and low enough that filtfilt's end
            effects last a few tens of samples.  ``False``: no low-pass.
        decimation : int, optional
            Keep one sample in ``decimation`` after the low-pass, to thin a
            long recording; the torques and currents go through
            :func:`~.filtering.decimate`'s anti-aliasing filter first.
            This is not the parallel decimation of
            :func:`~kanerobot.identification.identify.identify`
            (``identify(decimation=...)``), which filters the torques and
            the observation matrix alike.
        max_gap : float, optional
            Largest step between kept samples (s); default 10 times their
            median step.  A longer gap cannot be bridged: an error names it.
        stale : {"drop", "keep"}, optional
            ``"drop"``: drop each row whose every channel equals the
            previous row's (stale readings re-sent with a new time stamp;
            the first of each run is kept).  ``"keep"``: keep them (a robot
            at rest with q only repeats its rows too); rows that also
            repeat the time stamp are dropped either way.
        at : {"grid", "samples"}, optional
            Where the prepared recording's samples are.  ``"grid"``: on the
            uniform grid (every channel resampled).  ``"samples"``: at the
            time stamps of the rows kept (stale ones dropped): ``q``, ``qd``
            and ``qdd`` are computed on the grid as above, then interpolated
            back to those times by cubic splines, and the torques and
            currents stay as measured, never interpolated; the steps are
            then not uniform.  A torque steps with its Coulomb friction at
            each velocity reversal, which no interpolation across a gap
            puts where ``sign(qd)`` changes: ``"samples"`` avoids that bias
            (:func:`~kanerobot.identification.identify.identify` uses it
            for the dynamic model without decimation).  No ``decimation``
            with it.

        Returns
        -------
        Recording
            Uniform ``t``, ``q`` (low-passed), ``qd``, ``qdd`` (measured ones
            kept, resampled), ``tau`` and ``current`` when recorded; its
            :attr:`log` extended with what was done.

        Raises
        ------
        DataError
            For a gap longer than ``max_gap`` (naming both samples), too
            few samples left, a period or cut-off that does not fit.

        Notes
        -----
        The first and last ``~3 / cutoff`` seconds carry the low-pass's end
        effects; :func:`~kanerobot.identification.identify.identify` trims
        ends (``trim``).  Torques are interpolated linearly: their Coulomb
        friction steps at each velocity reversal, which no interpolation
        across a gap places where the grid's ``sign(qd)`` does, so a
        recording with long gaps biases the Coulomb friction estimate
        (a few % with gaps of 66 ms); recording at a steady period avoids it.

        Examples
        --------
        >>> t = np.arange(200) * 0.01
        >>> rec = Recording(t, np.sin(t)[:, None]).prepare(cutoff=False)
        >>> rec.log[0]
        'time steps uniform (10 ms within 0.1 %): samples kept as recorded'
        >>> bool(abs(rec.qd[100, 0] - np.cos(1.0)) < 0.01**2 / 6)     # central differences: error below dt^2/6 max|q'''|
        True
        """
        if stale not in ("drop", "keep"):
            raise KaneRobotError(f"stale={stale!r}: use 'drop' or 'keep'")
        if at not in ("grid", "samples"):
            raise KaneRobotError(f"at={at!r}: use 'grid' (a uniform grid) or 'samples' (the recorded time stamps)")
        if at == "samples" and decimation != 1:
            raise KaneRobotError("at='samples' keeps the recorded time stamps: decimation needs at='grid'")
        k = filtering.decimation_factor(decimation)
        log = list(self.log)
        kept = self._kept_rows(stale, log)
        t = self.t[kept]
        values = {name: getattr(self, name)[kept] for name in self.channels}
        self._check_gaps(t, kept, max_gap)
        measured_t, measured = t, values
        t, values, dt = self._uniform(t, values, period, log)
        fc = self._cutoff(cutoff, dt, k, log)
        values = _differentiate(values, dt, fc, log)
        if (at == "samples" and len(t) != len(measured_t)) or (at == "samples" and np.any(t != measured_t)):
            t, values = _at_samples(t, values, measured_t, measured, log)
        if k > 1:
            t, values = self._decimate(t, values, dt, k, log)
        return Recording(t, **values, joints=self.joints, source=self.source, log=log, prepared=True)

    def _kept_rows(self, stale, log):
        """Indices of the rows :meth:`prepare` keeps (step 1), saying in ``log`` what it dropped."""
        same = self._repeats()
        twins = same & np.r_[False, np.diff(self.t) == 0]
        drop = same if stale == "drop" else twins
        if same.any() and stale == "drop":
            log.append(f"dropped {int(same.sum())} of {len(self)} rows that repeat the previous row (stale readings)")
        elif twins.any():
            log.append(f"dropped {int(twins.sum())} of {len(self)} rows that repeat the previous row and its time stamp")
        if stale == "keep" and same.sum() > twins.sum():
            log.append(f"kept {int(same.sum() - twins.sum())} rows that repeat the previous row (stale='keep')")
        kept = np.nonzero(~drop)[0]
        if len(kept) < MIN_SAMPLES:
            raise DataError(self.source, None, f"{len(kept)} samples left after dropping repeated rows: a recording needs at least {MIN_SAMPLES}")
        return kept

    def _check_gaps(self, t, kept, max_gap):
        """An error naming the first step between kept rows ``kept`` (times ``t``) longer than ``max_gap``."""
        steps = np.diff(t)
        gap = GAP_STEPS * float(np.median(steps)) if max_gap is None else float(max_gap)
        long = np.nonzero(steps > gap)[0]
        if not len(long):
            return
        i = int(long[0])
        a, b = kept[i], kept[i + 1]
        first_line, first = self._at(a)
        second_line, second = self._at(b)
        hint = f" ({b - a - 1} repeated rows dropped between them: stale='keep' if the robot was at rest)" if b - a > 1 else ""
        bound = f"max_gap = {gap:.6g} s" + (f" ({GAP_STEPS} times the median step)" if max_gap is None else "")
        what = f"lines {first_line} and {second_line} ({first}, {second})" if first_line else f"{first} and {second}"
        raise DataError(self.source, second_line, f"gap of {steps[i]:.6g} s between {what}, longer than {bound}{hint}: "
                                                  f"split the recording there or give prepare(max_gap=...)")  # fmt: skip

    def _uniform(self, t, values, period, log):
        """Step 2: ``(t, values, dt)`` on a uniform grid, the samples as they are when already uniform."""
        steps = np.diff(t)
        median = float(np.median(steps))
        if period is None:
            dt = round(median, 6) if median >= 1e-4 else float(f"{median:.6g}")
        else:
            dt = float(period)
            if not 0 < dt < t[-1] - t[0]:
                raise KaneRobotError(f"period {period} s must be positive and shorter than the recording ({t[-1] - t[0]:.6g} s)")
        nominal = median if period is None else dt  # the unrounded median: 1/3 ms rounded to 333 us is 1e-3 off
        if np.abs(steps - nominal).max() <= UNIFORM_TOLERANCE * nominal:
            log.append(f"time steps uniform ({1e3 * dt:.6g} ms within {100 * UNIFORM_TOLERANCE:g} %): samples kept as recorded")
            return t, values, filtering.period(t[0], t[-1], len(t))
        from scipy.interpolate import CubicSpline

        grid = t[0] + dt * np.arange(int(np.floor((t[-1] - t[0]) / dt * (1 + 1e-12))) + 1)
        grid = grid[grid <= t[-1] + 1e-9 * dt]
        if len(grid) < MIN_SAMPLES:
            raise DataError(self.source, None, f"{len(grid)} samples on a {dt:g} s grid: a recording needs at least {MIN_SAMPLES}; give a shorter period")
        resampled = {"q": CubicSpline(t, values["q"], axis=0)(grid)}
        others = [name for name in values if name != "q"]
        for name in others:
            resampled[name] = np.column_stack([np.interp(grid, t, column) for column in values[name].T])
        how = "cubic spline (q)" + (f" and linear interpolation ({', '.join(others)})" if others else "")
        ms = f"{1e3 * steps.min():.4g}-{1e3 * steps.max():.4g} ms (median {1e3 * median:.4g} ms)"
        log.append(f"time steps {ms}: resampled to a uniform {1e3 * dt:.6g} ms grid by {how}")
        return grid, resampled, filtering.period(grid[0], grid[-1], len(grid))

    def _cutoff(self, cutoff, dt, k, log):
        """Step 3's cut-off (Hz, None for no low-pass), checked against the Nyquist frequency of the decimated grid."""
        nyquist = 0.5 / (dt * k)
        if cutoff is None:
            fc = CUTOFF_FRACTION * nyquist
            log.append(f"q low-passed by a zero-phase 4th-order Butterworth at {fc:.6g} Hz (filtfilt; default: a fifth of the "
                       f"{nyquist:.6g} Hz Nyquist frequency of the {'decimated ' if k > 1 else ''}grid) before differentiation")  # fmt: skip
            return fc
        if cutoff is False:
            return None
        if cutoff is True:
            raise KaneRobotError("cutoff=True: give a cut-off frequency (Hz), None for the default or False for no low-pass")
        fc = float(cutoff)
        if not 0 < fc < nyquist:
            grid = f"the grid decimated by {k}" if k > 1 else f"the {1e3 * dt:.6g} ms grid"
            raise KaneRobotError(f"cut-off {cutoff:g} Hz must lie between 0 and the Nyquist frequency of {grid}, {nyquist:.6g} Hz")
        log.append(f"q low-passed by a zero-phase 4th-order Butterworth at {fc:.6g} Hz (filtfilt) before differentiation")
        return fc

    def _decimate(self, t, values, dt, k, log):
        """Step 4: one sample in ``k``; torques and currents through :func:`~.filtering.decimate`'s anti-aliasing filter."""
        if len(t) < 10 * k:
            raise DataError(self.source, None, f"{len(t)} samples are too few to decimate by {k}: decimate less")
        torques = [name for name in ("tau", "current") if name in values]
        values = {name: filtering.decimate(value, k) if name in torques else value[::k] for name, value in values.items()}
        words = f"; {' and '.join(torques)} through an 8th-order anti-aliasing low-pass first" if torques else ""
        log.append(f"decimated by {k} (one sample in {k} kept after the low-pass{words}): period {1e3 * dt * k:.6g} ms")
        return t[::k], values

    def for_robot(self, robot) -> "Recording":
        """This recording with its joints in ``robot``'s order (matched by name; the default names
        ``1 .. n`` of unnamed columns by position).

        Raises
        ------
        DataError
            Naming the joints that are not the robot's and the robot's joints.
        """
        labels = tuple(str(label) for label in getattr(robot, "joint_labels", robot))
        if self.joints == labels:
            return self
        if set(self.joints) == set(labels):
            order = [self.joints.index(label) for label in labels]
            values = {name: getattr(self, name)[:, order] for name in self.channels}
            return dataclasses.replace(self, **values, joints=labels)
        if self.joints == tuple(str(k + 1) for k in range(self.n)) and self.n == len(labels):
            return dataclasses.replace(self, joints=labels)  # unnamed columns: the robot's order
        other = [joint for joint in self.joints if joint not in labels]
        raise DataError(self.source, None, f"joint(s) {', '.join(other) or '(none)'} of the recording are not the robot's "
                                           f"({', '.join(labels)}): name the columns by the robot's joints")  # fmt: skip

    # ------------------------------------------------------------ torques
    def torque(self, gains: "Sequence[float] | Mapping[str, float] | None" = None) -> np.ndarray:
        """Joint torques: ``tau`` as recorded, or ``current * gains``.

        Parameters
        ----------
        gains : sequence of float or mapping, optional
            Torque per unit of current of each joint (motor torque constant
            times gear ratio), in the order of :attr:`joints` or as
            ``{joint: gain}``.  When given, the currents are used even if
            torques were recorded too.

        Returns
        -------
        numpy.ndarray, shape (N, n)

        Raises
        ------
        DataError
            When the recording has neither torques nor currents, currents
            but no gains, or gains for other joints.

        Examples
        --------
        >>> rec = Recording(np.arange(10) * 0.01, np.zeros((10, 2)), current=np.ones((10, 2)), joints=("a", "b"))
        >>> rec.torque({"a": 2.0, "b": 3.0})[0].tolist()
        [2.0, 3.0]
        """
        if gains is None:
            if self.tau is not None:
                return self.tau
            if self.current is not None:
                raise DataError(self.source, None, f"motor currents but no torques: give the gains (torque per unit of current) of joints "
                                                   f"{', '.join(self.joints)}, e.g. torque(gains={{{self.joints[0]!r}: ...}})")  # fmt: skip
            raise DataError(self.source, None, f"no torques or currents: record tau_<joint> or current_<joint> for joints {', '.join(self.joints)}")
        if self.current is None:
            raise DataError(self.source, None, "gains given but no motor currents: record current_<joint> columns, or give no gains to use tau")
        if isinstance(gains, Mapping):
            gains = {str(k): v for k, v in gains.items()}
            unknown = [name for name in gains if name not in self.joints]
            if unknown:
                raise DataError(self.source, None, f"gains for {', '.join(unknown)}, not joints of the recording ({', '.join(self.joints)})")
            missing = [j for j in self.joints if j not in gains]
            if missing:
                raise DataError(self.source, None, f"no gain for joint(s) {', '.join(missing)}: give one for each of {', '.join(self.joints)}")
            gains = [gains[j] for j in self.joints]
        per_joint = np.asarray(gains, dtype=float).reshape(-1)
        if len(per_joint) != self.n:
            raise DataError(self.source, None, f"{len(per_joint)} gains for {self.n} joints ({', '.join(self.joints)}): give one per joint")
        if not np.all(np.isfinite(per_joint)):
            raise DataError(self.source, None, f"gains {per_joint.tolist()} are not all finite numbers")
        return self.current * per_joint

    def to_recorded(self, gains: "Sequence[float] | Mapping[str, float] | None" = None) -> RecordedData:
        """The :class:`~kanerobot.identification.data.RecordedData` that
        :func:`~kanerobot.identification.identify.identify` reads.

        Parameters
        ----------
        gains : optional
            As for :meth:`torque`.

        Raises
        ------
        DataError
            When the steps are not uniform (call :meth:`prepare` first) or
            :meth:`torque` finds none.

        Examples
        --------
        >>> t = np.arange(50) * 0.01
        >>> rec = Recording(t, np.sin(t)[:, None], tau=np.cos(t)[:, None]).prepare()
        >>> rec.to_recorded().qd.shape
        (50, 1)
        """
        if not self.uniform and (self.qd is None or self.qdd is None):
            steps = np.diff(self.t)
            raise DataError(self.source, None, f"time steps {1e3 * steps.min():.6g}-{1e3 * steps.max():.6g} ms are not uniform: "
                                               f"call prepare() first")  # fmt: skip
        if self.qd is None or self.qdd is None:
            filtering.check_uniform(self.t, UNIFORM_TOLERANCE, self.source)
        return RecordedData(self.t, self.q, self.torque(gains), self.qd, self.qdd, joints=self.joints, source=self.source)


def _differentiate(values, dt, fc, log):
    """Step 3 of :meth:`Recording.prepare`: ``q`` low-passed at ``fc`` (None: not), ``qd``, ``qdd`` by central differences unless measured."""
    measured = [name for name in ("qd", "qdd") if name in values]
    accuracy = 2 if fc is None else 4  # a five-point stencil would amplify the noise of positions not low-passed
    q, qd, qdd = filtering.derivatives(values["q"], dt, fc, accuracy=accuracy)
    if "qd" in values:
        qd = values["qd"]
        if "qdd" not in values:
            qdd = np.gradient(qd if fc is None else filtering.lowpass(qd, dt, fc), dt, axis=0, edge_order=2)
    if "qdd" in values:
        qdd = values["qdd"]
    if measured:
        log.append(f"measured {' and '.join(measured)} kept" + ("; qdd by central differences of qd" if measured == ["qd"] else ""))
    if "qd" not in values:
        how = "fourth order, five-point stencils" if accuracy == 4 else "second order"
        log.append(f"{'qd' if 'qdd' in values else 'qd and qdd'} by central differences of q ({how})")
    return {**values, "q": q, "qd": qd, "qdd": qdd}


def _numbers(value, name, source):
    """``value`` as a float array, or one DataError naming the channel."""
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise DataError(source, None, f"{name} holds values that are not numbers: give numbers (seconds, radians, metres, N m, A)") from None


def _at_samples(grid, values, t, measured, log):
    """``prepare(at="samples")``: ``q``, ``qd``, ``qdd`` from the grid back at the
    kept time stamps ``t`` (cubic splines); torques and currents as ``measured``."""
    from scipy.interpolate import CubicSpline

    out = {name: CubicSpline(grid, values[name], axis=0)(t) for name in ("q", "qd", "qdd")}
    for name in ("tau", "current"):
        if name in measured:
            out[name] = measured[name]
    measured_torques = [name for name in ("tau", "current") if name in measured]
    words = f"; {' and '.join(measured_torques)} as measured there, not interpolated" if measured_torques else ""
    log.append(f"q, qd and qdd interpolated back to the {len(t)} recorded time stamps kept (cubic splines){words}")
    return t, out


# ---------------------------------------------------------------- joint names
def _robot_joint_names(robot):
    """The robot's joint names in its order, and ``{other name: joint name}`` it also accepts.

    A :class:`~kanerobot.robot.description.Robot` gives its
    ``joint_labels``; a robot read from a URDF file
    (:class:`~kanerobot.robot.urdf.UrdfRobot`: ``.robot`` and
    ``joint_names``, ``{label: URDF name}``) also accepts the URDF names
    (sanitised labels such as ``l_hip_y`` for ``l-hip.y``).
    """
    inner = getattr(robot, "robot", robot)
    labels = tuple(str(label) for label in inner.joint_labels)
    aliases = {}
    for label, name in (getattr(robot, "joint_names", None) or {}).items():
        if str(label) in labels and str(name) != str(label):
            aliases[str(name)] = str(label)
    return labels, aliases


def _joint_names(joints):
    """``(names in order or None, aliases)`` from ``joints`` as :meth:`Recording.read` takes it."""
    if joints is None:
        return None, {}
    if hasattr(joints, "joint_labels") or hasattr(getattr(joints, "robot", None), "joint_labels"):
        return _robot_joint_names(joints)
    if isinstance(joints, str):
        raise KaneRobotError(f"joints={joints!r}: give a sequence of joint names or a Robot")
    return tuple(str(j) for j in joints), {}


def _order(found, robot_joints, aliases, source, line, column_of):
    """Indices of ``found`` (the recording's joint names) in the order of ``robot_joints``, and the names to use.

    ``column_of(name)`` words the column (CSV) or array entry that holds joint ``name``.
    """
    named = [aliases.get(name, name) for name in found]
    if robot_joints is None:
        return list(range(len(found))), tuple(named)
    for name, target in zip(found, named):
        if target not in robot_joints:
            via = f" (given as {target!r} by names)" if target != name else ""
            raise DataError(source, line, f"unknown joint name {name!r}{via} in {column_of(name)}: the robot's joints are "
                                          f"{', '.join(robot_joints)}; rename the column or map it with names={{{name!r}: ...}}")  # fmt: skip
    twice = sorted({t for t in named if named.count(t) > 1})
    if twice:
        raise DataError(source, line, f"joint {twice[0]} has two columns ({', '.join(column_of(f) for f, t in zip(found, named) if t == twice[0])}): keep one")
    missing = [j for j in robot_joints if j not in named]
    if missing:
        raise DataError(source, line, f"no q column for joint(s) {', '.join(missing)} of the robot: record q_<joint> for each of {', '.join(robot_joints)}")
    return [named.index(j) for j in robot_joints], tuple(robot_joints)


def _from_csv(path, robot_joints, aliases):
    lines = read_lines(path, "t, q_<joint>, ...")
    header = [name.strip() for name in lines[0].lstrip("#").split(",")]
    columns = _csv_header(path, header)
    found = list(columns["q"])
    order, joints = _order(found, robot_joints, aliases, path, 1, lambda name: f"column q_{name}")
    found = [found[i] for i in order]
    used = [header.index("t")] + [columns[channel][j] for channel in CHANNELS if channel in columns for j in found]
    rows, numbers = [], []
    for number, line in enumerate(lines[1:], start=2):
        if line.strip():
            rows.append(_csv_values(path, number, line.split(","), header, used))
            numbers.append(number)
    if len(rows) < MIN_SAMPLES:
        raise DataError(path, None, f"{len(rows)} sample lines: a recording needs at least {MIN_SAMPLES}; record longer")
    table = np.array(rows)
    n = len(found)
    present = [channel for channel in CHANNELS if channel in columns]
    blocks: dict[str, Any] = {channel: table[:, 1 + i * n : 1 + (i + 1) * n] for i, channel in enumerate(present)}
    log = [f"read {len(rows)} samples of {', '.join(blocks)} for joints {', '.join(joints)} from {path.name}"]
    return Recording(table[:, 0], **blocks, joints=joints, source=str(path), log=log, lines=numbers)


def _csv_header(path, header):
    """``{channel: {joint: column}}`` of a CSV header: ``t`` and ``q`` there, every channel for the same joints."""
    if "t" not in header:
        raise DataError(path, 1, f"no column 't' in the header ({', '.join(header)}): name the time column t")
    columns: dict[str, dict[str, int]] = {}  # channel -> joint -> column
    for k, name in enumerate(header):
        channel, _, joint = name.partition("_")
        if channel in CHANNELS and joint:
            if joint in columns.setdefault(channel, {}):
                raise DataError(path, 1, f"column {name} appears twice in the header: keep one")
            columns[channel][joint] = k
    if "q" not in columns:
        raise DataError(path, 1, f"no q_<joint> column in the header ({', '.join(header)}): give q_<joint> for each joint")
    for channel, by_joint in columns.items():
        if set(by_joint) != set(columns["q"]):
            raise DataError(path, 1, f"{channel}_<joint> columns for joints {', '.join(by_joint)} but q_<joint> for {', '.join(columns['q'])}: "
                                     f"give {channel} for every joint or for none")  # fmt: skip
    return columns


def _csv_values(path, number, cells, header, used):
    """The finite numbers of columns ``used`` of CSV line ``number``; an error names the line and the column."""
    if len(cells) != len(header):
        raise DataError(path, number, f"{len(cells)} values for {len(header)} columns: give one value per column of the header")
    row = []
    for k in used:
        try:
            value = float(cells[k])
        except ValueError:
            raise DataError(path, number, f"{cells[k].strip()!r} in column {header[k]} is not a number") from None
        if not np.isfinite(value):
            raise DataError(path, number, f"column {header[k]} is {cells[k].strip()}: remove the line or fill in the value")
        row.append(value)
    return row


def _from_arrays(arrays, source, robot_joints, aliases):
    if "t" not in arrays or "q" not in arrays:
        missing = " and ".join(k for k in ("t", "q") if k not in arrays)
        raise DataError(source, None, f"no array {missing} (arrays: {', '.join(sorted(arrays)) or 'none'}): give t and q (and tau or current)")
    q = _numbers(arrays["q"], "q", source)
    q = q[:, None] if q.ndim == 1 else q
    n = q.shape[1] if q.ndim == 2 else 0
    names = arrays.get("joints")
    if names is not None:
        names = [str(j) for j in np.asarray(names).reshape(-1)]
        if len(names) != n:
            raise DataError(source, None, f"{len(names)} joint names ({', '.join(names)}) for {n} columns of q: give one name per column")
    elif robot_joints is not None:
        if n != len(robot_joints):
            raise DataError(source, None, f"q has {n} columns but the robot has {len(robot_joints)} joints ({', '.join(robot_joints)}); "
                                          f"save the joint names with the samples (array joints)")  # fmt: skip
        names = list(robot_joints)
    else:
        names = [str(k + 1) for k in range(n)]
    order, joints = _order(names, robot_joints, aliases, source, None, lambda name: f"joints (q column {names.index(name)})")
    blocks = {}
    for channel in CHANNELS:
        if arrays.get(channel) is None:
            continue
        value = _numbers(arrays[channel], channel, source)
        value = value[:, None] if value.ndim == 1 else value
        if value.ndim != 2 or value.shape[1] != n:
            raise DataError(source, None, f"{channel} has shape {value.shape} but q has {n} columns: give one column per joint")
        blocks[channel] = value[:, order]
    samples = len(np.asarray(arrays["t"]).reshape(-1))
    log = [f"read {samples} samples of {', '.join(blocks)} for joints {', '.join(joints)} from {Path(source).name}"]
    return Recording(arrays["t"], **blocks, joints=joints, source=source, log=log)
