"""Identification from recordings too long for memory: chunk by chunk, then a tall-skinny QR.

:func:`~kanerobot.identification.identify.identify` reads here a recording
given as a folder of files, a list of files, a Parquet file, or any
recording with ``chunk_size=`` (module :mod:`.data` for the columns: ``t``,
``q_<joint>``, ``tau_<joint>``, optional ``qd_<joint>``, ``qdd_<joint>``):

- files: ``.csv`` (read a block of lines at a time), ``.npz`` (each array
  streamed from its archive member, C order; a Fortran-ordered array is
  read whole), ``.parquet`` (record batches; needs pyarrow).  A folder's
  recordings are taken in the order of their names and must continue one
  another: the same columns, time increasing at the period of the first
  file across the files too;
- the samples are cut into chunks of ``chunk_size``; each chunk is
  processed with ``H`` more samples on each side (the overlap), so that the
  low-pass of the positions (:func:`~.filtering.lowpass_reach`), the
  central differences (2 samples) and the parallel decimation's low-pass
  see what they see on the whole recording; the overlap is then dropped.
  At the recording's ends the chunk holds the same ends as the whole
  recording (same odd extension, same one-sided differences), so the rows
  equal those of the in-memory path to rounding;
- each chunk's rows go into per-joint triangular factors
  (:class:`~.tsqr.Factors`), from which :func:`~.tsqr.solve` gives the
  estimate, the residual variance, the covariance and the condition number,
  and :func:`~.tsqr.joint_weights` the weights of ``method="wls"``: no
  second pass.

Memory is that of one chunk and its overlap (the regressor of
``chunk_size + 2 H`` samples), whatever the recording's length.  Mistakes
in a file raise one :class:`~kanerobot.errors.DataError` naming the file and
the line (CSV) or sample: a missing column, columns that differ from the
first file's, a value that is not a number or not finite, time that does not
increase or a period that changes, including between two files.

Examples
--------
>>> import numpy as np, tempfile, os, kanerobot as kr
>>> from kanerobot.identification.data import RecordedData, save_data
>>> t = np.arange(0.0, 3.0, 0.01)
>>> q = np.column_stack([np.sin(2 * t), np.cos(3 * t)])
>>> folder = tempfile.mkdtemp()
>>> for k in range(3):   # three files of 100 samples
...     part = slice(100 * k, 100 * (k + 1))
...     _ = save_data(RecordedData(t[part], q[part], np.cos(q[part])), os.path.join(folder, f"run{k}.npz"))
>>> [path.name for path in recording_files(folder)]
['run0.npz', 'run1.npz', 'run2.npz']
>>> stream = SampleStream(folder, kr.load(kr.frames_path("planar2")), rows=64)
>>> sum(len(block["t"]) for block in stream.blocks()), stream.dt
(300, 0.01)
"""

import math
import os
import zipfile
from pathlib import Path

import numpy as np

from kanerobot.errors import DataError, KaneRobotError
from kanerobot.identification import filtering
from kanerobot.identification.data import RecordedData, as_recorded, csv_columns, csv_row
from kanerobot.identification.tsqr import Factors
from kanerobot.progress import slow_step

__all__ = ["CHUNK_SIZE", "SUFFIXES", "SampleStream", "chunked_factors", "is_chunked", "motion", "recording_files", "trimmed_rows"]

#: Samples per chunk by default: the regressor of a 6-joint robot with 13
#: parameters a link is then about 75 MB.
CHUNK_SIZE = 20_000
#: File types of a chunked recording.
SUFFIXES = (".csv", ".npz", ".parquet")
#: Column groups after ``t``, in the order of a chunk's table.
FIELDS = ("q", "tau", "qd", "qdd")
#: Largest relative deviation of a sampling step from the period (as :func:`~.filtering.check_uniform`).
TOLERANCE = 1e-3


def is_chunked(data, chunk_size=None):
    """Whether :func:`~.identify.identify` reads ``data`` chunk by chunk: a folder,
    a list of files, a Parquet file, or any recording with ``chunk_size``."""
    if chunk_size is not None:
        return True
    if isinstance(data, (list, tuple)):
        return True
    if isinstance(data, (str, os.PathLike)):
        path = Path(data)
        return path.is_dir() or path.suffix == ".parquet"
    return False


def recording_files(data):
    """The files of a chunked recording, in order.

    Parameters
    ----------
    data : str, pathlib.Path or list of them
        A folder (its ``.csv``, ``.npz`` and ``.parquet`` files sorted by
        name), a file, or a list of files and folders.

    Returns
    -------
    list of pathlib.Path

    Raises
    ------
    DataError
        For a path that does not exist, a file of another type, a folder
        without recordings, an empty list.
    """
    items = list(data) if isinstance(data, (list, tuple)) else [data]
    if not items:
        raise DataError("recording", None, "an empty list of files: give the recording's files or their folder")
    files = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in SUFFIXES)
            if not found:
                raise DataError(path, None, f"no recording in this folder: put the recording's {', '.join(SUFFIXES)} files there")
            files += found
        elif not path.is_file():
            raise DataError(path, None, "no such file or folder")
        elif path.suffix not in SUFFIXES:
            raise DataError(path, None, f"unknown format: give {', '.join(SUFFIXES)} files or a folder of them")
        else:
            files.append(path)
    return files


# ------------------------------------------------------------------ readers
class _Reader:
    """One source of samples: ``joints`` (labels), ``fields`` (those of :data:`FIELDS`
    present), ``columns`` (the table's column of ``t`` then each field's joints),
    :meth:`blocks` and :meth:`ends`; ``where(number)`` turns a sample's number into
    ``(line, prefix)``."""

    path = "recording"
    line_numbers = False

    def _times(self):
        """``(times, numbers)`` of every sample, or of the first and last at least, and the count."""
        raise NotImplementedError

    def ends(self):
        """``(first t, last t, samples)``, read before the samples (the period needs them), checked finite."""
        (t, numbers), count = self._times()
        if count == 0:
            raise DataError(self.path, None, "no sample: a recording's file holds at least one sample")
        for k in (0, -1):
            if not np.isfinite(t[k]):
                line, prefix = self.where(int(numbers[k]))
                raise DataError(self.path, line, prefix + f"t is not finite ({t[k]}): remove or fill the sample")
        return float(t[0]), float(t[-1]), count

    def _set_header(self, header):
        prefixes = csv_columns(self.path, header)
        self.header = header
        self.joints = [label for label, _ in prefixes["q"]]
        self.fields = [name for name in FIELDS if name in prefixes]
        self.columns = [header.index("t")]
        for name in self.fields:
            index = dict(prefixes[name])
            self.columns += [index[label] for label in self.joints]

    def where(self, number):
        return (number, "") if self.line_numbers else (None, f"sample {number}: ")

    def column_name(self, k):
        """The name of the table's column ``k`` (``t``, ``q_<joint>`` ...)."""
        if k == 0:
            return "t"
        field, joint = divmod(k - 1, len(self.joints))
        return f"{self.fields[field]}_{self.joints[joint]}"


class _Csv(_Reader):
    line_numbers = True

    def __init__(self, path):
        self.path = path
        try:
            with open(path, encoding="utf-8") as handle:
                first = handle.readline()
        except UnicodeDecodeError as exc:
            raise DataError(path, None, f"not a text file (byte {exc.start} is not UTF-8)") from None
        except OSError as exc:
            raise DataError(path, None, f"cannot read: {exc.strerror}") from None
        if not first.strip():
            raise DataError(path, None, "empty file: the first line must name the columns (t, q_1, ..., tau_1, ...)")
        self._set_header([name.strip() for name in first.lstrip("#").split(",")])

    def _table(self, lines, numbers):
        try:  # numpy's parser first; on a bad line, the line by line parser names it
            table = np.loadtxt(lines, delimiter=",", comments=None, ndmin=2, dtype=float)
            if table.shape[1] != len(self.header):
                raise ValueError
        except ValueError:
            table = np.array([csv_row(self.path, number, line, len(self.header)) for number, line in zip(numbers, lines)])
        return table[:, self.columns], np.asarray(numbers)

    def _times(self):
        ends, count = [], 0
        with open(self.path, encoding="utf-8") as handle:
            handle.readline()
            for number, line in enumerate(handle, start=2):
                if line.strip():
                    count += 1
                    if count == 1:
                        ends.append((number, line))
                    last = (number, line)
        if count:
            ends.append(last)
        t = [csv_row(self.path, number, line, len(self.header))[self.columns[0]] for number, line in ends]
        return (t, [number for number, _ in ends]), count

    def blocks(self, rows):
        lines, numbers = [], []
        try:
            with open(self.path, encoding="utf-8") as handle:
                handle.readline()
                for number, line in enumerate(handle, start=2):
                    if line.strip():
                        lines.append(line)
                        numbers.append(number)
                    if len(lines) == rows:
                        yield self._table(lines, numbers)
                        lines, numbers = [], []
        except UnicodeDecodeError as exc:
            raise DataError(self.path, None, f"not a text file (byte {exc.start} is not UTF-8)") from None
        if lines:
            yield self._table(lines, numbers)


class _Npz(_Reader):
    def __init__(self, path):
        self.path = path
        self.arrays = {}
        with self._open() as archive:
            members = {Path(name).stem: name for name in archive.namelist() if name.endswith(".npy")}
            missing = [k for k in ("t", "q", "tau") if k not in members]
            if missing:
                raise DataError(path, None, f"no array {', '.join(missing)} (arrays: {', '.join(sorted(members)) or 'none'}): save t, q and tau")
            for name in ("t",) + FIELDS:
                if name in members:
                    with archive.open(members[name]) as member:
                        self.arrays[name] = (members[name], *self._header(member, name))
            labels = members.get("joints", members.get("coordinates"))
            joints = None
            if labels is not None:
                with archive.open(labels) as member:
                    joints = np.lib.format.read_array(member, allow_pickle=False)
        N = self.arrays["t"][1][0]
        n = self._width("q", N)
        for name in FIELDS[1:]:
            if name in self.arrays and self._width(name, N) != n:
                raise DataError(path, None, f"{name} has {self._width(name, N)} joint columns but q has {n}: give one column per joint")
        if joints is None or np.ndim(joints) != 1 or len(joints) != n:
            self.joints = [str(k + 1) for k in range(n)]
        else:
            self.joints = [str(j) for j in joints]
        self.fields = [name for name in FIELDS if name in self.arrays]
        self.samples = N
        self.columns = list(range(1 + len(self.fields) * len(self.joints)))

    def _times(self):
        with self._open() as archive, archive.open(self.arrays["t"][0]) as member:
            self._header(member, "t")
            t = np.frombuffer(member.read(), dtype=self.arrays["t"][3]).astype(float)
        return (t, np.arange(len(t))), len(t)

    def _open(self):
        try:
            return zipfile.ZipFile(self.path)
        except (OSError, zipfile.BadZipFile) as exc:
            raise DataError(self.path, None, f"not a readable NPZ archive ({exc})") from None

    def _header(self, member, name):
        """``(shape, fortran_order, dtype)`` of an archive member, its data next."""
        version = np.lib.format.read_magic(member)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read(member)
        if dtype.kind not in "fiu" or len(shape) not in (1, 2):
            raise DataError(self.path, None, f"array {name} holds {dtype} of shape {shape}: save numbers, one row per sample")
        return shape, fortran, dtype

    def _width(self, name, N):
        shape = self.arrays[name][1]
        if shape[0] != N:
            raise DataError(self.path, None, f"{name} must have one row per time sample, shape ({N}, n); got shape {shape}")
        return shape[1] if len(shape) == 2 else 1

    def blocks(self, rows):
        with self._open() as archive:
            streams = []
            for name in ("t",) + tuple(self.fields):
                member_name, shape, fortran, dtype = self.arrays[name]
                member = archive.open(member_name)
                self._header(member, name)
                width = shape[1] if len(shape) == 2 else 1
                whole = None
                if fortran and width > 1:  # a sample's values are not together: read the array whole
                    whole = np.frombuffer(member.read(), dtype=dtype).reshape(shape, order="F")
                streams.append((member, width, dtype, whole))
            try:
                for start in range(0, self.samples, rows):
                    m = min(rows, self.samples - start)
                    parts = []
                    for member, width, dtype, whole in streams:
                        if whole is not None:
                            parts.append(whole[start : start + m].astype(float))
                        else:
                            data = member.read(m * width * dtype.itemsize)
                            if len(data) != m * width * dtype.itemsize:  # a file cut short (still being written?)
                                raise DataError(self.path, None, f"sample {start + len(data) // (width * dtype.itemsize)}: the file ends "
                                                f"before its {self.samples} samples: write it whole")  # fmt: skip
                            parts.append(np.frombuffer(data, dtype=dtype).reshape(m, width).astype(float))
                    yield np.concatenate(parts, axis=1), np.arange(start, start + m)
            finally:
                for member, *_ in streams:
                    member.close()


class _Parquet(_Reader):
    def __init__(self, path):
        self.path = path
        try:
            import pyarrow.parquet as parquet
        except ImportError:
            raise DataError(path, None, "reading Parquet files needs pyarrow: pip install pyarrow") from None
        self._parquet = parquet
        with self._open() as handle:  # opened for each pass and closed: a folder of parts holds no file open
            self._set_header(list(handle.schema_arrow.names))

    def _open(self):
        try:
            return self._parquet.ParquetFile(self.path)
        except Exception as exc:  # pyarrow raises its own ArrowInvalid, OSError ...: all say the file is unreadable
            raise DataError(self.path, None, f"not a readable Parquet file ({exc})") from None

    def _times(self):
        with self._open() as handle:
            column = handle.read(columns=[self.header[self.columns[0]]]).column(0)
        t = column.to_numpy(zero_copy_only=False).astype(float)
        return (t, np.arange(len(t))), len(t)

    def blocks(self, rows):
        names = [self.header[k] for k in self.columns]
        start = 0
        with self._open() as handle:
            for batch in handle.iter_batches(batch_size=rows, columns=names):
                try:
                    table = np.column_stack([batch.column(k).to_numpy(zero_copy_only=False).astype(float) for k in range(len(names))])
                except (TypeError, ValueError) as exc:
                    raise DataError(self.path, None, f"a column is not numeric ({exc}): save numbers") from None
                yield table, np.arange(start, start + len(table))
                start += len(table)


class _Arrays(_Reader):
    """A recording in memory, :class:`~.data.RecordedData` (``chunk_size`` given)."""

    def __init__(self, data):
        self.data = data
        self.path = data.source
        self.joints = list(data.joints)
        self.fields = [name for name in FIELDS if getattr(data, name) is not None]
        self.columns = list(range(1 + len(self.fields) * len(self.joints)))

    def _times(self):
        return (self.data.t, np.arange(len(self.data.t))), len(self.data.t)

    def blocks(self, rows):
        for start in range(0, len(self.data.t), rows):
            part = slice(start, start + rows)
            table = np.column_stack([self.data.t[part]] + [getattr(self.data, name)[part] for name in self.fields])
            yield table, np.arange(start, start + len(table))


_READERS = {".csv": _Csv, ".npz": _Npz, ".parquet": _Parquet}


def _reader(item):
    return _READERS[item.suffix](item) if isinstance(item, Path) else _Arrays(item)


class SampleStream:
    """The samples of a recording in blocks, checked, in the robot's joint order.

    Parameters
    ----------
    data : str, pathlib.Path, list, RecordedData or mapping
        Files (:func:`recording_files`) or a recording in memory.
    robot : Robot
        Its joints order the columns (as :meth:`~.data.RecordedData.check_robot`).
    rows : int
        Samples per block at most (a block never spans two files).

    Attributes
    ----------
    dt : float
        The sampling period, :func:`~.filtering.period` of the first and
        last times (as :func:`~.filtering.check_uniform` gives it in memory),
        read before the samples.  Each step is checked against the median
        step of the first block (in memory: of the whole recording).
    fields : list of str
        ``q``, ``tau`` and those of ``qd``, ``qdd`` the recording has.
    source : str
        The files or the recording, for messages.
    samples : int
        Samples in all.

    Raises
    ------
    DataError
        At construction for a file whose columns do not match the robot or
        the first file's; while reading, for a value that is not a number or
        not finite, or time that does not increase at a constant period.
    """

    def __init__(self, data, robot, rows):
        if isinstance(data, (str, os.PathLike, list, tuple)):
            items = recording_files(data)
            self.source = str(items[0]) if len(items) == 1 else f"{len(items)} files ({items[0]} ... {items[-1].name})"
        else:
            items = [as_recorded(data)]
            self.source = items[0].source
        self.rows = int(rows)
        self.readers = [_reader(item) for item in items]
        first = self.readers[0]
        for reader in self.readers[1:]:
            if set(reader.joints) != set(first.joints) or reader.fields != first.fields:
                raise DataError(
                    reader.path, 1 if reader.line_numbers else None,
                    f"columns {', '.join(_names(reader))} differ from those of {first.path} ({', '.join(_names(first))}): "
                    "every file of a recording has the same columns",
                )  # fmt: skip
        # the robot's check and joint order, on the first file's labels
        n = len(first.joints)
        labels = RecordedData([0.0, 1.0], np.zeros((2, n)), np.zeros((2, n)), joints=first.joints, source=str(first.path)).check_robot(robot).joints
        self.fields = first.fields
        self._order = []
        for reader in self.readers:
            position = {label: k for k, label in enumerate(reader.joints)}
            order = [position[label] for label in labels] if set(labels) == set(reader.joints) else list(range(n))
            self._order.append([0] + [1 + f * n + j for f in range(len(self.fields)) for j in order])
        # the period from the ends: a first pass over the times only (a scan of the lines for CSV)
        ends = [reader.ends() for reader in self.readers]
        self.samples = sum(count for _, _, count in ends)
        if self.samples < 2:
            raise DataError(self.source, None, f"{self.samples} sample(s): a recording needs at least 2")
        self.dt = filtering.period(ends[0][0], ends[-1][1], self.samples)
        self._step = None

    def blocks(self):
        """Blocks ``{"t": (m,), "q": (m, n), "tau": (m, n), ...}`` in time order, checked."""
        n = len(self.readers[0].joints)
        previous = None  # (reader, last t) of the block before
        for reader, order in zip(self.readers, self._order):
            for table, numbers in reader.blocks(self.rows):
                self._check(reader, table, numbers, previous)
                previous = (reader, table[-1, 0])
                table = table[:, order]
                block = {"t": table[:, 0]}
                for f, name in enumerate(self.fields):
                    block[name] = table[:, 1 + f * n : 1 + (f + 1) * n]
                yield block

    def _check(self, reader, table, numbers, previous):
        def fail(row, message):
            line, prefix = reader.where(int(numbers[row]))
            raise DataError(reader.path, line, prefix + message)

        finite = np.isfinite(table)
        if not finite.all():
            row, column = np.argwhere(~finite)[0]
            fail(row, f"{reader.column_name(column)} is not finite ({table[row, column]}): remove or fill the sample")
        t = table[:, 0] if previous is None else np.concatenate([[previous[1]], table[:, 0]])
        steps = np.diff(t)
        if self._step is None and len(steps):
            # steps are checked against the median step of the first block, as check_uniform does in
            # memory: a gap further on does not move it (it moves the mean period), and is named where it is
            self._step = float(np.median(steps))
        step = self._step or 0.0
        bad = np.nonzero((steps <= 0) | (np.abs(steps - step) > TOLERANCE * step))[0]
        if not len(bad):
            return
        k = int(bad[0])
        row = k + 1 if previous is None else k
        across = previous is not None and k == 0 and previous[0] is not reader
        if steps[k] <= 0:
            if across:
                fail(row, f"time does not increase from {previous[0].path} (last t = {t[0]:g}) to this file (t = {t[1]:g}): "
                          "the files must follow one another in time, in the order of their names")  # fmt: skip
            fail(row, f"time does not increase: t = {t[k]:g} on the sample before, {t[k + 1]:g} here; sort the samples and drop repeats")
        if across:
            fail(row, f"a step of {steps[k]:.6g} s from the end of {previous[0].path} (t = {t[0]:g}) to this file (t = {t[1]:g}), "
                      f"the period being {step:.6g} s: the files must continue one another without a gap")  # fmt: skip
        fail(row, f"sampling is not uniform here (step {steps[k]:.6g} s, period {step:.6g} s): resample the recording at a constant period")


def _names(reader):
    return [reader.column_name(k) for k in range(1 + len(reader.fields) * len(reader.joints))]


# ------------------------------------------------------------------ rows
def motion(q, qd, qdd, dt, cutoff):
    """Positions, rates and accelerations as :func:`~.identify.identify` uses them.

    Measured ``qd`` (and ``qdd``, else central differences of ``qd``) when
    the recording has them and no ``cutoff`` is given; otherwise
    :func:`~.filtering.derivatives` of ``q``: fourth-order central
    differences after the ``cutoff`` low-pass, second-order ones without.

    Returns
    -------
    q, qd, qdd : numpy.ndarray, shape (N, n)
    """
    if qd is not None and cutoff is None:
        return q, qd, (qdd if qdd is not None else np.gradient(qd, dt, axis=0, edge_order=2))
    # fourth-order differences of low-passed positions; second-order ones (which damp the highest
    # frequencies) of raw ones, whose noise a five-point stencil would amplify
    return filtering.derivatives(q, dt, cutoff, accuracy=2 if cutoff is None else 4)


def trimmed_rows(samples, rows, first, trim):
    """``last``: equations ``first .. last - 1`` of ``rows`` remain after trimming.

    Raises
    ------
    KaneRobotError
        When none remains.
    """
    last = rows - trim
    if last - first < 1:
        raise KaneRobotError(f"{samples} samples leave no equation after trimming {first} and {trim} samples: record longer")
    return last


def _reach(dt, cutoff, factor, has_rates):
    """``(H, Hd)``: samples of overlap on each side of a chunk, and of it the decimation's part."""
    differences = 1 if has_rates else 2  # central differences: one for qdd from qd, two for qd and qdd from q
    motion_reach = differences + (filtering.lowpass_reach(dt, cutoff) if cutoff is not None else 0)
    if factor == 1:
        return motion_reach, 0
    decimation = filtering.lowpass_reach(1.0, filtering.DECIMATION_CUTOFF / factor, order=filtering.DECIMATION_ORDER)
    decimation = factor * math.ceil(decimation / factor)  # chunks then start on kept samples
    return motion_reach + decimation, decimation


def chunked_factors(regs, columns, data, *, chunk_size=None, cutoff=None, decimation=1, trim=None):
    """The per-joint triangular factors of the dynamic model's equations, chunk by chunk.

    The same equations as :func:`~.identify.identify` builds in memory for
    ``form="dynamic"`` (rates, regressor ``D[..., columns]``, parallel
    decimation, ``trim`` equations dropped at each end), added to
    :class:`~.tsqr.Factors` a chunk at a time (module notes).

    Parameters
    ----------
    regs : Regressors
    columns : list of int
        The base columns of the regressor.
    data : str, pathlib.Path, list, RecordedData or mapping
        See :class:`SampleStream`.
    chunk_size : int, optional
        Samples per chunk, default :data:`CHUNK_SIZE` (rounded up to a
        multiple of ``decimation``).
    cutoff, decimation, trim
        As for :func:`~.identify.identify`.

    Returns
    -------
    factors : Factors
    samples : int
        Samples read.
    """
    factor = filtering.decimation_factor(decimation)
    size = CHUNK_SIZE if chunk_size is None else chunk_size
    if isinstance(size, bool) or int(size) != size or size < 1:
        raise KaneRobotError(f"chunk size must be a positive whole number of samples, got {chunk_size}")
    size = factor * math.ceil(int(size) / factor)
    stream = SampleStream(data, regs.robot, rows=size)
    factors = Factors(regs.n, len(columns))
    trim = filtering.default_trim(stream.dt, cutoff, factor) if trim is None else int(trim)
    factors.trim = trim  # the ends dropped, for the result
    first = trim
    # the ends are known before the samples: the last equations kept too
    last = trimmed_rows(stream.samples, -(-stream.samples // factor), first, trim)
    buffer = _Buffer()
    reach: tuple[int, int] | None = None  # (motion, decimation) reach, known at the first block
    core = 0  # the next chunk's first sample

    def process(start, stop, total):
        assert reach is not None  # set before the first block is processed
        H, Hd = reach
        a, b = max(0, start - H), min(total, stop + H)
        q, qd, qdd = motion(buffer.take("q", a, b), buffer.take("qd", a, b), buffer.take("qdd", a, b), stream.dt, cutoff)
        wa, wb = max(0, start - Hd), min(total, stop + Hd)
        W = regs.regressor(q[wa - a : wb - a], qd[wa - a : wb - a], qdd[wa - a : wb - a])[:, :, columns]
        y = buffer.take("tau", wa, wb)
        W, y = filtering.decimate(W, factor), filtering.decimate(y, factor)
        low, high = max(start // factor, first), min(-(-stop // factor), last)
        if high > low:
            factors.add(W[low - wa // factor : high - wa // factor], y[low - wa // factor : high - wa // factor])

    def chunk(start, stop, total):
        with slow_step(f"chunk of samples {start:,} to {stop:,} of {stream.samples:,}"):
            process(start, stop, total)

    with slow_step(f"identification of {regs.robot.name} from {stream.source} ({stream.samples:,} samples), chunks of {size:,}"):
        for block in stream.blocks():
            buffer.append(block)
            if reach is None:  # the first block is checked: the period is that of increasing times
                reach = _reach(stream.dt, cutoff, factor, "qd" in stream.fields and cutoff is None)
            while buffer.end >= core + size + reach[0]:  # the chunk and its overlap after it are there
                chunk(core, core + size, buffer.end)
                core += size
                buffer.drop(core - reach[0])
        samples = buffer.end
        if samples != stream.samples:
            raise DataError(stream.source, None, f"{samples:,} samples read after {stream.samples:,} counted: a file changed while it was read")
        while core < samples:
            chunk(core, min(core + size, samples), samples)
            core += size
    return factors, samples


class _Buffer:
    """The samples read and not yet dropped, ``start`` to ``end`` (sample indices of the recording)."""

    def __init__(self):
        self.start = self.end = 0
        self.arrays = {}

    def append(self, block):
        for name, value in block.items():
            self.arrays[name] = np.concatenate([self.arrays[name], value]) if name in self.arrays else value
        self.end += len(block["t"])

    def take(self, name, a, b):
        value = self.arrays.get(name)
        return None if value is None else value[a - self.start : b - self.start]

    def drop(self, before):
        if before > self.start:
            for name in self.arrays:
                self.arrays[name] = self.arrays[name][before - self.start :].copy()
            self.start = before
