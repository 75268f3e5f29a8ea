"""The optional packages of campaigns (the ``cluster`` extra), imported on use.

``import kanerobot`` does not import pandas, pyarrow, dask or distributed:
a campaign checks for what it needs and, when a package is missing, says
which and how to get it, rather than failing on an ``ImportError``.
"""

import importlib
import importlib.util

from kanerobot.errors import KaneRobotError

__all__ = ["EXTRA", "require"]

#: How to install the campaign's dependencies.
EXTRA = "pip install 'kanerobot[cluster]'"


def require(module, what):
    """Import ``module`` for ``what``; a :class:`~kanerobot.errors.KaneRobotError` naming the extra when it is missing.

    Examples
    --------
    >>> require("no_such_module_here", "a campaign")
    Traceback (most recent call last):
      ...
    kanerobot.errors.KaneRobotError: a campaign needs no_such_module_here, which is not installed: pip install 'kanerobot[cluster]'
    """
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise KaneRobotError(f"{what} needs {module}, which is not installed: {EXTRA}")
    return importlib.import_module(module)
