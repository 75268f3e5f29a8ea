"""The library of robot description files shipped in ``frames/``."""

import os
from pathlib import Path

from kanerobot.errors import RobotFileError

_SUFFIXES = (".par", ".toml", ".urdf")


def frames_folder():
    """The folder of shipped robot files.

    In a source checkout it is ``frames/`` at the top of the repository; an
    installed package carries a copy as ``kanerobot/frames``.
    """
    here = Path(__file__).resolve().parent
    for folder in (here.parent / "frames", here / "frames"):
        if folder.is_dir() and any(folder.glob("*.par")):
            return folder
    raise RobotFileError("frames/", None, "the robot library is not installed with this copy of kanerobot")


def robot_names() -> list[str]:
    """Names of the shipped robots (file names without extension), sorted."""
    return sorted(p.stem for p in frames_folder().iterdir() if p.suffix in _SUFFIXES)


def frames_path(name: str) -> Path:
    """Path of a shipped robot file: ``frames_path('rx90')`` or ``frames_path('rx90.par')``.

    >>> frames_path("rx90").name
    'rx90.par'
    """
    folder = frames_folder()
    candidate = folder / name
    if candidate.suffix in _SUFFIXES and candidate.is_file():
        return candidate
    for suffix in _SUFFIXES:
        if (folder / (name + suffix)).is_file():
            return folder / (name + suffix)
    raise RobotFileError(name, None, f"no robot {name!r} in the library; shipped: {', '.join(robot_names())}")


def resolve(name_or_path):
    """A robot file path from a path or a library name (as the command line takes).

    A name with a suffix or a folder (``arm.urdf``, ``robots/arm``) is a
    file: one that does not exist is "no such file", not a robot missing
    from the library (a shipped file named with its suffix, ``rx90.par``,
    is the library's).

    >>> resolve("rx90").name
    'rx90.par'
    >>> resolve("nosuch.urdf")
    Traceback (most recent call last):
      ...
    kanerobot.errors.RobotFileError: nosuch.urdf: no such file
    """
    path = Path(name_or_path)
    if path.is_file():
        return path
    a_path = any(sep in str(name_or_path) for sep in ("/", os.sep)) or (path.suffix and not (path.suffix in _SUFFIXES and path.name in map(_file_name, robot_names())))
    if a_path and path.is_dir():
        return path  # the loader says it is no robot file
    if a_path:
        raise RobotFileError(path, None, "no such file")
    return frames_path(str(name_or_path))


def _file_name(name):
    """The file name of the shipped robot ``name``."""
    return frames_path(name).name
