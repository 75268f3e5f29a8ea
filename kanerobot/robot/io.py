"""Loading and saving robot files, whatever their format.

:func:`load` picks the reader by the file's extension; :func:`save` the
writer.  Writing goes to a temporary file in the same folder that is renamed
over the target only once complete, so an error never leaves a half-written
file behind.
"""

import os
from pathlib import Path

from kanerobot.errors import RobotFileError
from kanerobot.robot import frames_toml, par, urdf, urdf_writer
from kanerobot.robot.description import Robot
from kanerobot.robot.files import atomic_write, atomic_write_text, read_text

__all__ = ["atomic_write", "atomic_write_text", "load", "read_text", "save"]


def _codec(path):
    """(reader, writer) for the file's extension."""
    suffix = Path(path).suffix.lower()
    if suffix == ".par":
        return par.read_par, par.write_par
    if suffix == ".toml":
        return frames_toml.read_frames, frames_toml.write_frames
    if suffix == ".urdf":
        return urdf.read_urdf, urdf_writer.write_urdf
    raise RobotFileError(
        path, None, f"unknown file type {suffix or '(none)'!r}: use .par (SYMORO table) or .toml (frame tree), or read a .urdf file"
    )


def load(path: str | os.PathLike, **options: bool | str) -> Robot:
    """Read a robot from a ``.par`` (SYMORO), ``.toml`` (frame tree) or ``.urdf`` file.

    ``path`` is a file; the robots shipped with kanerobot are
    ``load(frames_path("rx90"))`` (a missing file named like one of them
    says so).  Raises :class:`~kanerobot.errors.RobotFileError` naming the
    file and line for anything wrong in it.

    ``options`` go to the URDF reader (:func:`kanerobot.robot.urdf.read_urdf`):
    ``floating=True`` (a free flyer under the root link), ``bind=True``
    (the file's numbers in the description rather than in ``robot.values``),
    ``mimic="independent"``, ``physical=False``.  ``.par`` and ``.toml``
    files take none.

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
    if options and reader is not urdf.read_urdf:
        names = ", ".join(sorted(options))
        raise RobotFileError(path, None, f"load options ({names}) are for .urdf files: a {path.suffix} file takes none")
    unknown = sorted(set(options) - set(urdf.OPTIONS))
    if unknown:
        raise RobotFileError(path, None, f"unknown load option {unknown[0]!r}: a .urdf file takes {', '.join(urdf.OPTIONS)}")
    return reader(path, **options)


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


def save(robot: Robot, path: str | os.PathLike) -> None:
    """Write ``robot`` to ``path`` in the format its extension names.

    A ``.urdf`` file is written by :func:`kanerobot.robot.urdf_writer.write_urdf`
    with the robot's values (every parameter symbol needs one in
    ``robot.values``); call it directly for ``values=`` or ``limits=``.
    """
    path = Path(path)
    _, writer = _codec(path)
    atomic_write_text(path, writer(robot, path))
