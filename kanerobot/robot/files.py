"""Reading and writing the files of kanerobot: robot files, data, generated code.

The primitives every reader and writer shares (:mod:`~kanerobot.robot.par`,
:mod:`~kanerobot.robot.frames_toml`, :mod:`~kanerobot.robot.io`, the CLI,
code generation, recorded data): text read with a clear
:class:`~kanerobot.errors.RobotFileError`, and writes that go to a temporary
file in the same folder renamed over the target only once complete, so an
error never leaves a half-written file behind.  This module imports no
reader or writer, so all of them can import it.
"""

import errno
import math
import os
import re
import tempfile
from pathlib import Path
from typing import NoReturn

import sympy

from kanerobot.errors import RobotFileError
from kanerobot.robot.names import natural_key

__all__ = ["DEFAULT_GRAVITY", "atomic_write", "atomic_write_text", "checked_gravity", "folder_problem", "read_text"]


def toml_string(text):
    """``text`` as a TOML basic string: quoted, ``"`` and ``\\`` escaped, control characters as ``\\uXXXX``."""
    out = []
    for ch in str(text):
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_key(name):
    """``name`` as a TOML key: bare when it can be (ASCII letters, digits, ``_``, ``-``), else a quoted
    string (a joint named ``joint_0.0``).

    >>> toml_key("a1"), toml_key("joint_0.0")
    ('a1', '"joint_0.0"')
    """
    name = str(name)
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else toml_string(name)


def read_text(path):
    """The text of a robot file, with a clear error for unreadable bytes."""
    try:
        # utf-8-sig: a byte-order mark (Windows editors write one) is not text.
        return Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RobotFileError(path, None, f"not a text file (byte {exc.start} is not UTF-8)") from None
    except OSError as exc:
        raise RobotFileError(path, None, f"cannot read: {exc.strerror}") from None




def atomic_write_text(path, text):
    """Write ``text`` to ``path`` through a temporary file and a rename."""
    atomic_write(path, lambda handle: handle.write(text.encode("utf-8")))


def folder_problem(folder, created=False):
    """What keeps files from being written in ``folder``, or None when nothing does.

    A file is created there and deleted at once (the system's temporary
    file, never seen in the folder): :func:`os.access` says yes to root
    everywhere, ``/proc`` included, where nothing can be created.

    Parameters
    ----------
    folder : str or Path
    created : bool
        The folder is to be created with its parents (``--plot FOLDER``):
        its nearest existing parent is the one checked.

    Returns
    -------
    str or None
        ``"folder F does not exist: create it first"``, ``"F is a file, not a
        folder"`` or ``"folder F is not writable"`` (with the system's reason
        where it tells more than a missing file, e.g. ``(Permission
        denied)``): the part after ``path:`` of a one-line error.

    Examples
    --------
    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> folder_problem(folder) is None, os.listdir(folder)
    (True, [])
    >>> folder_problem(os.path.join(folder, "missing"))  # doctest: +ELLIPSIS
    'folder .../missing does not exist: create it first'
    """
    folder = Path(folder)
    while created and not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.exists():
        existing = folder.parent
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if existing.exists() and not existing.is_dir():  # afile/run.npz with afile a file
            return f"{existing} is a file, not a folder"
        return f"folder {folder} does not exist: create it first"
    if not folder.is_dir():
        return f"{folder} is a file, not a folder"
    try:
        tempfile.TemporaryFile(dir=folder).close()
    except OSError as exc:
        # /proc answers "no such file" for a folder that plainly exists: only the other reasons are told
        reason = f" ({exc.strerror})" if exc.errno != errno.ENOENT and exc.strerror else ""
        return f"folder {folder} is not writable{reason}"
    return None


def atomic_write(path, write):
    """Call ``write(handle)`` on a binary file that becomes ``path`` only once
    complete (a temporary file in the same folder, then a rename): an error
    or an interruption leaves nothing half-written.

    Raises
    ------
    RobotFileError
        One line naming ``path``, for every error of the system (a folder
        that is missing or not writable, a full disk, ``path`` a folder):
        what every writer of kanerobot reports.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise RobotFileError(path, None, folder_problem(folder) or f"cannot create a file in folder {folder}: {exc.strerror}") from None
    umask = os.umask(0)
    os.umask(umask)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates the file 0600: the permissions open() would give
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            reason = "is a folder: give a file name" if path.is_dir() else f"cannot write: {exc.strerror or exc}"
            raise RobotFileError(path, None, reason) from None
        raise


#: The gravity a robot file is loaded with by default (``gravity=`` of
#: :func:`kanerobot.load` and the URDF reader): pinocchio's, z up.
DEFAULT_GRAVITY = (0.0, 0.0, -9.81)


#: The gravity symbols of a robot whose gravity is given as numbers (``G = [G1, G2, G3]``).
GRAVITY_NAMES = ("G1", "G2", "G3")


def checked_gravity(gravity, path):
    """``gravity`` as a tuple of 3 floats, or one :class:`RobotFileError` naming ``path``.

    Parameters
    ----------
    gravity : sequence of 3 real numbers
        The gravity acceleration (m/s^2) in the base frame 0.
    path : str or Path
        The robot file the option is for (named in the error).

    Returns
    -------
    tuple of float

    Examples
    --------
    >>> checked_gravity([0, -9.81, 0], "arm.urdf")
    (0.0, -9.81, 0.0)
    >>> checked_gravity(9.81, "arm.urdf")
    Traceback (most recent call last):
      ...
    kanerobot.errors.RobotFileError: arm.urdf: gravity=9.81 must be 3 finite numbers (gx, gy, gz) in m/s^2, in frame 0: e.g. gravity=(0, 0, -9.81)
    """
    try:
        numbers = tuple(float(g) for g in gravity) if not isinstance(gravity, (str, bytes)) else None
    except (TypeError, ValueError):
        numbers = None
    if numbers is None or len(numbers) != 3 or not all(math.isfinite(g) for g in numbers):
        raise RobotFileError(
            path, None, f"gravity={gravity!r} must be 3 finite numbers (gx, gy, gz) in m/s^2, in frame 0: e.g. gravity=(0, 0, -9.81)"
        )
    return numbers


class NumbersWriter:
    """What the file writers that need numbers share (URDF, MJCF): the robot's values
    (``robot.values``, then ``values=``, which wins) bound as 17-digit sympy Floats, and one
    refusal, naming them, for the symbols the file needs (:meth:`needed`) that have none."""

    #: The format's name in messages.
    format = ""

    def __init__(self, robot, path, values):
        self.robot = robot
        self.path = path if path is not None else "<string>"
        self.values = {**dict(robot.values), **{str(name): value for name, value in dict(values or {}).items()}}
        self.substitution = {sympy.Symbol(name): sympy.Float(float(value), 17) for name, value in self.values.items()}

    def fail(self, message) -> NoReturn:
        raise RobotFileError(self.path, None, f"cannot write robot {self.robot.name} as {self.format}: {message}")

    def needed(self) -> set[str]:
        """Names of the symbols the file's numbers depend on."""
        raise NotImplementedError

    def check_values(self):
        """Refuse, in one line, a symbol the file needs without a value."""
        missing = sorted(self.needed() - set(self.values), key=natural_key)
        if missing:
            shown = ", ".join(missing[:12]) + (f" ... ({len(missing)} in all)" if len(missing) > 12 else "")
            self.fail(f"no value for {shown}: give {'them' if len(missing) > 1 else 'it'} in robot.values or values={{...}}")
