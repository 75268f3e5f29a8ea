"""Saved simulations for the viewer's playback: the files ``SimulationResult.save`` writes.

An ``.npz`` holds ``t`` (N,), ``q`` (N, nq) and ``coordinates`` (the names
of the columns of ``q``); a ``.csv`` has a header row ``t,q_<name>,...,
qd_<name>,...`` (one column per entry, see
:meth:`kanerobot.simulation.SimulationResult.arrays`).  Both become a
:class:`Recording`, whose :meth:`Recording.columns` picks the coordinates the
viewer moves, by name.

Examples
--------
>>> import numpy as np
>>> rec = Recording(np.array([0.0, 0.5, 1.0]), np.array([[0.0, 1.0], [0.1, 1.1], [0.2, 1.2]]), ("1", "2"), "run")
>>> rec.columns(["2", "1"])[1].tolist()
[1.1, 0.1]
>>> rec.row_at(0.7)
1
"""

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kanerobot.errors import KaneRobotError, RobotFileError

__all__ = ["Recording", "read_recording"]


@dataclass(frozen=True)
class Recording:
    """A run to play: sample times and configurations.

    Attributes
    ----------
    t : numpy.ndarray, shape (N,)
        Sample times, non-decreasing.
    q : numpy.ndarray, shape (N, nq)
        The configuration at each time.
    coordinates : tuple of str
        Names of the columns of ``q`` (joint labels, base ``x .. qw``).
    source : str
        Where it came from, for messages.
    """

    t: np.ndarray
    q: np.ndarray
    coordinates: tuple
    source: str

    def columns(self, names, aliases=None):
        """The columns of ``q`` named ``names``, in that order.

        Parameters
        ----------
        names : sequence of str
        aliases : dict str -> str, optional
            Another name of a column, used when the first is absent (a
            flexible joint's run names its link side ``th1``, not ``1``).

        Returns
        -------
        numpy.ndarray, shape (N, len(names))

        Raises
        ------
        KaneRobotError
            When the run lacks some of them: names those and what the run has.
        """
        index = {name: k for k, name in enumerate(self.coordinates)}
        aliases = aliases or {}
        names = [aliases[name] if name not in index and aliases.get(name) in index else name for name in names]
        missing = [name for name in names if name not in index]
        if missing:
            raise KaneRobotError(
                f"{self.source}: no column for coordinate(s) {', '.join(missing)} of the robot shown; the run has "
                f"{', '.join(self.coordinates) or 'none'} (was it saved from a simulation of this robot?)"
            )
        return self.q[:, [index[name] for name in names]]

    def row_at(self, time):
        """The sample nearest to ``time`` (the earlier of two equally near).

        The viewer shows recorded configurations only; it does not blend two
        samples, which could break a loop's closure or a quaternion's norm.
        Nearest, not last before: a slider's 0.3 must find the sample
        ``linspace(0, 0.5, 11)[6] = 0.30000000000000004``.
        """
        k = int(np.searchsorted(self.t, time))
        if k == 0 or (k < len(self.t) and self.t[k] - time < time - self.t[k - 1]):
            return min(k, len(self.t) - 1)
        return k - 1


def read_recording(path):
    """Read a saved simulation (``.npz`` or ``.csv``).

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    Recording

    Raises
    ------
    RobotFileError
        ``path: what is wrong and how to fix it`` for a missing file, another
        suffix, missing ``t`` or ``q`` entries, shapes that do not agree,
        non-finite or decreasing times.
    """
    path = Path(path)
    if path.suffix not in (".npz", ".csv"):
        raise RobotFileError(path, None, "a saved simulation is a .npz or .csv file (SimulationResult.save, kanerobot simulate -o)")
    if not path.is_file():
        raise RobotFileError(path, None, "no such file")
    t, q, coordinates = (_read_npz if path.suffix == ".npz" else _read_csv)(path)
    if q.ndim != 2 or t.ndim != 1 or q.shape[0] != t.shape[0]:
        raise RobotFileError(path, None, f"t has shape {t.shape} and q {q.shape}: expected t (N,) and q (N, nq) with the same N")
    if len(t) == 0:
        raise RobotFileError(path, None, "the run has no sample")
    if len(coordinates) != q.shape[1]:
        raise RobotFileError(path, None, f"{len(coordinates)} coordinate names for {q.shape[1]} columns of q")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(q))):
        raise RobotFileError(path, None, "t or q holds NaN or infinite values: play a run that succeeded")
    if np.any(np.diff(t) < 0):
        raise RobotFileError(path, None, f"times decrease at sample {int(np.argmax(np.diff(t) < 0)) + 1}: t must be sorted")
    return Recording(t, q, tuple(coordinates), str(path))


def _read_npz(path):
    try:
        with np.load(path, allow_pickle=False) as data:
            missing = [key for key in ("t", "q") if key not in data.files]
            if missing:
                raise RobotFileError(path, None, f"no {' and '.join(missing)} array: expected the file SimulationResult.save writes")
            t, q = np.asarray(data["t"], dtype=float), np.asarray(data["q"], dtype=float)
            names = [str(name) for name in data["coordinates"]] if "coordinates" in data.files else [str(k) for k in range(q.shape[-1])]
    except (OSError, ValueError) as exc:  # not a zip, or an object array (refused without pickle)
        raise RobotFileError(path, None, f"cannot read as NumPy .npz: {exc}") from None
    return t, q, names


def _read_csv(path):
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        raise RobotFileError(path, None, "empty file: expected a header row t,q_<joint>,... and one row per sample")
    header = [name.strip() for name in rows[0]]
    q_columns = [k for k, name in enumerate(header) if name.startswith("q_")]
    if "t" not in header or not q_columns:
        raise RobotFileError(path, 1, f"the header has no t or no q_<joint> column (it has {', '.join(header[:8])}...)")
    samples = []
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise RobotFileError(path, line, f"{len(row)} values for {len(header)} columns")
        try:
            samples.append([float(x) for x in row])
        except ValueError:
            raise RobotFileError(path, line, "a value is not a number") from None
    table = np.array(samples, dtype=float).reshape(len(samples), len(header))
    return table[:, header.index("t")], table[:, q_columns], [header[k][2:] for k in q_columns]
