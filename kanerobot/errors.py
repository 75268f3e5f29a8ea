"""Exceptions raised by kanerobot.

Every error a user can cause by what they write (a robot file, a parameter
value, a frame label) is a :class:`KaneRobotError`; the command line prints
its message on one line and exits with status 2, without a traceback.
"""

import os


class KaneRobotError(Exception):
    """Base class of all errors caused by user input."""


class ExpressionError(KaneRobotError):
    """A parameter expression uses something outside the allowed grammar.

    ``column`` is the 1-based column of the offending token in the text, or
    ``None`` when unknown.
    """

    def __init__(self, message: str, column: int | None = None) -> None:
        super().__init__(message)
        self.column = column


class DescriptionError(KaneRobotError):
    """A robot description is inconsistent.

    ``key`` names the parameter at fault (``'ant'``, ``'sigma'``, ``'axis'`` ...)
    and ``label`` the frame, link or joint it belongs to, so that a file
    reader can point at the line that defines it.
    """

    def __init__(self, message: str, key: str | None = None, label: str | None = None) -> None:
        super().__init__(message)
        self.key = key
        self.label = label


class FileError(KaneRobotError):
    """A file cannot be read or written, or what it holds is wrong.

    The message reads ``path:line: what is wrong and what to do`` (the line
    when one is at fault); ``path``, ``line`` and ``reason`` keep the parts.
    """

    def __init__(self, path: str | os.PathLike, line: int | None, message: str) -> None:
        where = f"{path}:{line}" if line else f"{path}"
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.line = line
        self.reason = message


class RobotFileError(FileError):
    """A robot file cannot be read or written."""


class DataError(FileError):
    """A recording (identification data) cannot be read or is inconsistent."""


class ParameterError(KaneRobotError):
    """A numeric evaluation is missing values or was given unknown ones."""


class SingularityError(KaneRobotError):
    """A matrix to invert is singular at the requested configuration."""


class KaneRobotWarning(UserWarning):
    """Something in what the user gave is accepted but worth knowing (a link not quite a rigid body's).

    The command line prints it on one line, ``kanerobot: warning: ...``.
    """
