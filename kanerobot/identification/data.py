"""Recorded motion for identification: times, joint positions and torques.

A recording holds ``t`` (N,), ``q`` (N, n) and ``tau`` (N, n), and optionally
measured ``qd`` and ``qdd``.  Two file formats, read by :func:`load_data`
and written by :func:`save_data` (through a temporary file and a rename):

- CSV: a header line of column names, then one sample per line, comma
  separated: ``t``, ``q_<joint>`` for each joint, ``tau_<joint>``, and
  optionally ``qd_<joint>``, ``qdd_<joint>``; other columns are ignored (so
  the CSV of :meth:`kanerobot.simulation.SimulationResult.save` reads as is);
- NPZ: arrays ``t``, ``q``, ``tau`` (``qd``, ``qdd``, ``joints``
  optional; ``coordinates`` is read as ``joints``).

Mistakes in a file raise :class:`DataError` naming the file, the line (CSV)
and what to fix: a missing column, a value that is not a number, time that
does not increase, a joint count that does not match the robot.

Examples
--------
>>> import numpy as np, tempfile, os
>>> t = np.linspace(0.0, 1.0, 11)
>>> data = RecordedData(t, np.column_stack([t, t**2]), np.ones((11, 2)), joints=("1", "2"))
>>> path = os.path.join(tempfile.mkdtemp(), "run.csv")
>>> _ = save_data(data, path)
>>> load_data(path).q.shape
(11, 2)
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from kanerobot.errors import DataError, KaneRobotError

__all__ = ["DataError", "RecordedData", "as_recorded", "load_data", "save_data"]


@dataclass
class RecordedData:
    """Samples of a motion: times, joint positions, torques.

    Parameters
    ----------
    t : array_like, shape (N,)
        Strictly increasing times (s).
    q, tau : array_like, shape (N, n)
        Joint positions and joint torques (forces for prismatic joints).
    qd, qdd : array_like, shape (N, n), optional
        Measured rates and accelerations; by default :mod:`.filtering`
        derives them from ``q``.
    joints : tuple of str, optional
        Labels of the n joints (``"1" .. "n"`` by default).
    source : str, optional
        Where the samples come from (a file name), for messages.

    Raises
    ------
    DataError
        When shapes disagree, values are not finite or time does not
        increase.
    """

    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray | None
    qd: np.ndarray | None = None
    qdd: np.ndarray | None = None
    # The constructor takes None for joints (the default labels) and array-likes: __post_init__ makes them
    # arrays and a tuple of labels, which the type checker sees the fields hold.
    if TYPE_CHECKING:
        joints: tuple[str, ...] = ()

        def __init__(self, t: ArrayLike, q: ArrayLike, tau: ArrayLike, qd: ArrayLike | None = None,
                     qdd: ArrayLike | None = None, joints: Sequence[str] | None = None, source: str = "recording") -> None: ...
    else:
        joints: tuple = None
    source: str = field(default="recording")

    def __post_init__(self):
        where = self.source
        self.t = np.asarray(self.t, dtype=float).reshape(-1)
        N = len(self.t)
        for name in ("q", "tau", "qd", "qdd"):
            value = getattr(self, name)
            if value is None:
                continue
            value = np.asarray(value, dtype=float)
            if value.ndim == 1:
                value = value[:, None]
            if value.ndim != 2 or value.shape[0] != N:
                raise DataError(where, None, f"{name} must have one row per time sample, shape ({N}, n); got shape {np.shape(value)}")
            setattr(self, name, value)
        n = self.q.shape[1]
        for name in ("tau", "qd", "qdd"):
            value = getattr(self, name)
            if value is not None and value.shape[1] != n:
                raise DataError(where, None, f"{name} has {value.shape[1]} joint columns but q has {n}: give one column per joint")
        if N < 2:
            raise DataError(where, None, f"{N} sample(s): a recording needs at least 2")
        for name in ("t", "q", "tau", "qd", "qdd"):
            value = getattr(self, name)
            if value is not None and not np.all(np.isfinite(value)):
                row = int(np.nonzero(~np.all(np.isfinite(value.reshape(N, -1)), axis=1))[0][0])
                raise DataError(where, None, f"{name} is not finite at sample {row} (t = {self.t[row]:g}): remove or fill the sample")
        steps = np.diff(self.t)
        if np.any(steps <= 0):
            row = int(np.nonzero(steps <= 0)[0][0]) + 1
            raise DataError(where, None, f"time does not increase at sample {row}: t = {self.t[row - 1]:g} then {self.t[row]:g}; sort the samples and drop repeats")
        self.joints = tuple(str(j) for j in self.joints) if self.joints is not None else tuple(str(k + 1) for k in range(n))
        if len(self.joints) != n:
            raise DataError(where, None, f"{len(self.joints)} joint labels for {n} joint columns")

    @property
    def n(self):
        """Number of joints."""
        return self.q.shape[1]

    def __len__(self):
        return len(self.t)

    def check_robot(self, robot):
        """Check that the recording has one column per joint of ``robot``, in its order.

        Raises
        ------
        DataError
            Naming the robot's joints and the recording's.
        """
        labels = tuple(robot.joint_labels)
        if self.n != len(labels):
            raise DataError(
                self.source, None,
                f"{self.n} joint column(s) ({', '.join(self.joints)}) but robot {robot.name} has {len(labels)} joints "
                f"({', '.join(labels)}): record q_<joint> and tau_<joint> for each",
            )  # fmt: skip
        if set(self.joints) == set(labels) and self.joints != labels:
            order = [self.joints.index(label) for label in labels]
            for name in ("q", "tau", "qd", "qdd"):
                value = getattr(self, name)
                if value is not None:
                    setattr(self, name, value[:, order])
            self.joints = labels
        return self

    def save(self, path):
        """Write to ``path`` (.csv or .npz); see :func:`save_data`."""
        return save_data(self, path)


def as_recorded(data, robot=None) -> RecordedData:
    """A :class:`RecordedData` from a recording, a file path, a mapping of
    arrays or a :class:`~kanerobot.simulation.SimulationResult`; checked
    against ``robot``'s joints when given."""
    if isinstance(data, RecordedData):
        out = data
    elif isinstance(data, (str, Path)):
        out = load_data(data)
    elif isinstance(data, dict):
        missing = [k for k in ("t", "q", "tau") if k not in data]
        if missing:
            raise DataError("recording", None, f"no {', '.join(missing)} in the mapping: give t, q and tau arrays")
        out = RecordedData(data["t"], data["q"], data["tau"], data.get("qd"), data.get("qdd"), data.get("joints"))
    elif all(hasattr(data, k) for k in ("t", "q", "tau")):
        coordinates = getattr(data, "coordinates", None)
        q = np.asarray(data.q)
        joints = coordinates if coordinates is not None and len(coordinates) == q.shape[1] else None
        out = RecordedData(data.t, q, data.tau, joints=joints, source="simulation")
    else:
        raise KaneRobotError(f"cannot read a recording from {type(data).__name__}: give a .csv/.npz path, RecordedData or a mapping with t, q, tau")
    return out.check_robot(robot) if robot is not None else out


def load_data(path):
    """Read a recording from a CSV or NPZ file (see the module notes).

    Parameters
    ----------
    path : str or pathlib.Path

    Returns
    -------
    RecordedData

    Raises
    ------
    DataError
        For a missing file, a missing column, a cell that is not a number
        (with its line), a joint count that differs between q and tau, time
        that does not increase.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(path, None, "no such file")
    if path.suffix == ".npz":
        return _load_npz(path)
    if path.suffix == ".csv":
        return _load_csv(path)
    raise DataError(path, None, "unknown format: give a .csv or .npz file")


def read_npz(path):
    """The arrays of an NPZ file (no pickled objects), or a DataError naming it."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {k: archive[k] for k in archive.files}
    except (OSError, ValueError) as exc:
        raise DataError(path, None, f"not a readable NPZ archive ({exc})") from None


def _load_npz(path):
    arrays = read_npz(path)
    missing = [k for k in ("t", "q", "tau") if k not in arrays]
    if missing:
        raise DataError(path, None, f"no array {', '.join(missing)} (arrays: {', '.join(sorted(arrays)) or 'none'}): save t, q and tau")
    joints = arrays.get("joints", arrays.get("coordinates"))
    q = np.asarray(arrays["q"])
    if joints is not None and (np.ndim(joints) != 1 or len(joints) != (q.shape[1] if q.ndim == 2 else 1)):
        joints = None
    return RecordedData(arrays["t"], q, arrays["tau"], arrays.get("qd"), arrays.get("qdd"),
                        None if joints is None else tuple(str(j) for j in joints), source=str(path))  # fmt: skip


def _load_csv(path):
    """A recording from a CSV file: a header naming the columns, then one sample a line."""
    lines = read_lines(path)
    header = [name.strip() for name in lines[0].lstrip("#").split(",")]
    prefixes = csv_columns(path, header)
    joints = [label for label, _ in prefixes["q"]]
    table = _csv_table(path, lines, header)
    t = table[:, header.index("t")]
    _check_samples(path, lines, table, t)

    def block(prefix):
        if prefix not in prefixes:
            return None
        columns = dict(prefixes[prefix])
        return table[:, [columns[label] for label in joints]]

    return RecordedData(t, block("q"), block("tau"), block("qd"), block("qdd"), tuple(joints), source=str(path))


def read_lines(path, columns="t, q_1, ..., tau_1, ..."):
    """The lines of a UTF-8 text file, at least one (``columns``: what the first line names, for the message)."""
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()  # a byte-order mark is no part of the first name
    except UnicodeDecodeError as exc:
        raise DataError(path, None, f"not a text file (byte {exc.start} is not UTF-8)") from None
    except OSError as exc:
        raise DataError(path, None, f"cannot read: {exc.strerror}") from None
    if not lines:
        raise DataError(path, None, f"empty file: the first line must name the columns ({columns})")
    return lines


def csv_columns(path, header):
    """Map q, tau, qd, qdd to their (joint label, column) pairs; t, q and tau must be there, for the same joints.

    Shared by the CSV reader and the chunked readers of
    :mod:`~kanerobot.identification.chunked` (CSV and Parquet headers).

    Parameters
    ----------
    path : str or pathlib.Path
        For messages.
    header : list of str
        Column names.

    Returns
    -------
    dict
        ``{prefix: [(joint label, column index), ...]}`` for the prefixes present.

    Raises
    ------
    DataError
        For a missing ``t``, ``q_<joint>`` or ``tau_<joint>`` column, or
        ``tau``, ``qd``, ``qdd`` columns for other joints than ``q``'s.
    """
    if "t" not in header:
        raise DataError(path, 1, f"no column 't' in the header ({', '.join(header)}): name the time column t")
    prefixes: dict[str, list[tuple[str, int]]] = {}  # q, qd, qdd, tau -> (joint, column)
    for k, name in enumerate(header):
        for prefix in ("qdd_", "qd_", "q_", "tau_"):
            if name.startswith(prefix) and len(name) > len(prefix):
                prefixes.setdefault(prefix[:-1], []).append((name[len(prefix):], k))
                break
    for needed in ("q", "tau"):
        if needed not in prefixes:
            raise DataError(path, 1, f"no {needed}_<joint> column in the header ({', '.join(header)}): give q_1 .. q_n and tau_1 .. tau_n")
    joints = [label for label, _ in prefixes["q"]]
    for other in ("tau", "qd", "qdd"):
        if other not in prefixes:
            continue
        labels = [label for label, _ in prefixes[other]]
        lacking = [label for label in joints if label not in labels]
        if lacking or len(labels) != len(joints):
            raise DataError(path, 1, f"{other}_<joint> columns ({', '.join(labels)}) do not match the q_<joint> columns ({', '.join(joints)})")
    return prefixes


def _csv_table(path, lines, header):
    """The samples (non-blank lines after the header) as an array, one value per column, at least 2 rows."""
    rows = [csv_row(path, number, line, len(header)) for number, line in enumerate(lines[1:], start=2) if line.strip()]
    if len(rows) < 2:
        raise DataError(path, None, f"{len(rows)} sample line(s): a recording needs at least 2")
    return np.array(rows)


def csv_row(path, number, line, width):
    """The ``width`` numbers of CSV line ``number`` of ``path``.

    Raises
    ------
    DataError
        Naming the line: another number of values than columns, or a value
        that is not a number.
    """
    cells = line.split(",")
    if len(cells) != width:
        raise DataError(path, number, f"{len(cells)} values for {width} columns: one value per column of the header")
    try:
        return [float(cell) for cell in cells]
    except ValueError:
        bad = next(c for c in cells if not _is_float(c))
        raise DataError(path, number, f"{bad.strip()!r} is not a number") from None


def _check_samples(path, lines, table, t):
    """Every value finite and the time strictly increasing; an error names the line of the sample."""
    lines_of = [number for number, line in enumerate(lines[1:], start=2) if line.strip()]
    bad = np.nonzero(~np.isfinite(table).all(axis=1))[0]
    if len(bad):
        raise DataError(path, lines_of[bad[0]], "a value is not finite (nan or inf): remove or fill the sample")
    steps = np.diff(t)
    if np.any(steps <= 0):
        row = int(np.nonzero(steps <= 0)[0][0]) + 1
        raise DataError(path, lines_of[row], f"time does not increase: t = {t[row - 1]:g} on the line before, {t[row]:g} here; sort the samples and drop repeats")

def _is_float(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def save_data(data, path):
    """Write a recording to ``path``: ``.csv`` (header ``t, q_<joint>...,
    tau_<joint>...`` then ``qd_``, ``qdd_`` when present) or ``.npz``.

    The file appears only once complete (temporary file, then a rename).

    Returns
    -------
    pathlib.Path
    """
    from kanerobot.robot.io import atomic_write

    data = as_recorded(data)
    path = Path(path)
    arrays = {"q": data.q, "tau": data.tau, "qd": data.qd, "qdd": data.qdd}
    if path.suffix == ".npz":
        payload = {"t": data.t, "joints": np.array(data.joints)}
        payload.update({k: v for k, v in arrays.items() if v is not None})
        atomic_write(path, lambda handle: np.savez(handle, **payload))
    elif path.suffix == ".csv":
        names, columns = ["t"], [data.t[:, None]]
        for prefix, value in arrays.items():
            if value is not None:
                names += [f"{prefix}_{label}" for label in data.joints]
                columns.append(value)
        table = np.hstack(columns)
        atomic_write(path, lambda handle: np.savetxt(handle, table, delimiter=",", header=",".join(names), comments="", fmt="%.17g"))
    else:
        raise DataError(path, None, "cannot save a recording there: use a .csv or .npz file")
    return path
