"""Loading and saving robot files, whatever their format.

:func:`load` picks the reader by the file's extension; :func:`save` the
writer.  Writing goes to a temporary file in the same folder that is renamed
over the target only once complete, so an error never leaves a half-written
file behind.
"""

import os
import tempfile
from pathlib import Path

from kanerobot.errors import RobotFileError


def _codec(path):
    """(reader, writer) for the file's extension; modules are imported lazily."""
    suffix = Path(path).suffix.lower()
    if suffix == ".par":
        from kanerobot.robot import par

        return par.read_par, par.write_par
    if suffix == ".toml":
        from kanerobot.robot import frames_toml

        return frames_toml.read_frames, frames_toml.write_frames
    raise RobotFileError(path, None, f"unknown file type {suffix or '(none)'!r}: use .par (SYMORO table) or .toml (frame tree)")


def load(path):
    """Read a robot from a ``.par`` (SYMORO) or ``.toml`` (frame tree) file.

    ``path`` is a file; the robots shipped with kanerobot are
    ``load(frames_path("rx90"))`` (a missing file named like one of them
    says so).  Raises :class:`~kanerobot.errors.RobotFileError` naming the
    file and line for anything wrong in it.

    Examples
    --------
    >>> load("rx90")
    Traceback (most recent call last):
      ...
    kanerobot.errors.RobotFileError: rx90: no such file; did you mean kr.load(kr.frames_path('rx90')), the robot rx90 shipped with kanerobot?
    """
    path = Path(path)
    if path.is_dir():
        raise RobotFileError(path, None, "is a folder, not a robot file (.par or .toml)")
    if not path.is_file():
        raise RobotFileError(path, None, "no such file" + _library_hint(path))
    reader, _ = _codec(path)
    return reader(path)


def _library_hint(path):
    """Advice for a missing file that names a robot shipped in ``frames/``:
    ``kr.load("rx90")`` means ``kr.load(kr.frames_path("rx90"))``."""
    from kanerobot.errors import KaneRobotError
    from kanerobot.library import robot_names

    if len(path.parts) != 1 or path.suffix.lower() not in ("", ".par", ".toml"):
        return ""
    try:
        shipped = robot_names()
    except KaneRobotError:
        return ""
    name = path.stem if path.suffix else path.name
    if name not in shipped:
        return ""
    return f"; did you mean kr.load(kr.frames_path({name!r})), the robot {name} shipped with kanerobot?"


def save(robot, path):
    """Write ``robot`` to ``path`` in the format its extension names."""
    path = Path(path)
    _, writer = _codec(path)
    atomic_write_text(path, writer(robot, path))


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


def atomic_write(path, write):
    """Call ``write(handle)`` on a binary file that becomes ``path`` only once
    complete (a temporary file in the same folder, then a rename): an error
    or an interruption leaves nothing half-written."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise RobotFileError(path, None, f"folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    # mkstemp creates the file 0600; give it the permissions open() would.
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
