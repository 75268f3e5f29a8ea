"""Reading and writing the files of kanerobot: robot files, data, generated code.

The primitives every reader and writer shares (:mod:`~kanerobot.robot.par`,
:mod:`~kanerobot.robot.frames_toml`, :mod:`~kanerobot.robot.io`, the CLI,
code generation, recorded data): text read with a clear
:class:`~kanerobot.errors.RobotFileError`, and writes that go to a temporary
file in the same folder renamed over the target only once complete, so an
error never leaves a half-written file behind.  This module imports no
reader or writer, so all of them can import it.
"""

import os
import tempfile
from pathlib import Path

from kanerobot.errors import RobotFileError

__all__ = ["atomic_write", "atomic_write_text", "read_text"]


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
