"""Messages on standard error for library work that takes more than a second.

Deriving a model of a large robot or compiling its C can take from seconds
to a minute, and it happens on first use, inside an innocent-looking call
(``fn.mass_matrix(q)``).  :func:`slow_step` wraps such work: if it is still
running after :data:`DELAY` seconds, one line says what it is, and a second
line says when it is done (or failed) and how long it took::

    kanerobot: compiling kr_coriolis_matrix (3,312 lines of C) ...
    kanerobot: compiling kr_coriolis_matrix (3,312 lines of C): done in 3.1 s

Work that ends within the delay prints nothing, so quick calls, scripts and
tests stay quiet.  Set the environment variable ``KANEROBOT_PROGRESS=0`` to
silence the messages altogether (the test suite does).

Loops of unknown length (an optimisation's iterations) report through a
:class:`Ticker`: a line now and then, once the loop has run :data:`DELAY`
seconds, then one every :data:`INTERVAL` seconds at most.

The first line comes from a timer thread, so that it appears while the work
is still going on; steps run in parallel (``model.compile(jobs=...)``) each
print their own pair of lines.

Examples
--------
>>> with slow_step("deriving nothing"):
...     pass
"""

import os
import sys
import threading
import time
from contextlib import contextmanager

__all__ = ["DELAY", "INTERVAL", "Ticker", "enabled", "slow_step"]

#: Seconds a step runs before its first line is printed.
DELAY = 1.0
#: Seconds at least between two lines of a :class:`Ticker`.
INTERVAL = 2.0
_OFF = {"0", "off", "no", "false"}
_PRINT = threading.Lock()


def enabled():
    """Whether messages are printed: ``$KANEROBOT_PROGRESS`` is not 0, off, no or false."""
    return os.environ.get("KANEROBOT_PROGRESS", "1").strip().lower() not in _OFF


def _say(line):
    with _PRINT:
        print(f"kanerobot: {line}", file=sys.stderr, flush=True)


@contextmanager
def slow_step(message):
    """Context manager: announce ``message`` on standard error if the work lasts over :data:`DELAY` s.

    Parameters
    ----------
    message : str
        What is being done, as a user reads it ("deriving the inertia
        matrix of krang (newton-euler)").
    """
    if not enabled():
        yield
        return
    state = {"said": False}
    lock = threading.Lock()

    def announce():
        with lock:
            if not state["said"]:
                state["said"] = True
                _say(f"{message} ...")

    start = time.perf_counter()
    timer = threading.Timer(DELAY, announce)
    timer.daemon = True
    timer.start()
    outcome = "failed after"
    try:
        yield
        outcome = "done in"
    finally:
        timer.cancel()
        seconds = time.perf_counter() - start
        if seconds >= DELAY:
            announce()  # the timer may not have run yet (a busy machine, or DELAY = 0)
        with lock:
            if state["said"]:
                _say(f"{message}: {outcome} {seconds:.1f} s")


class Ticker:
    """Lines on standard error that show a loop moving: ``kanerobot: <text>``.

    :meth:`update` prints its text once the loop has run :data:`DELAY`
    seconds, then at most one line every :data:`INTERVAL` seconds;
    :meth:`close` prints a last line when any was printed.  A text may be a
    function, called only when its line is printed.

    Parameters
    ----------
    show : bool, optional
        None (default): as :func:`slow_step` (after the delay, unless
        ``$KANEROBOT_PROGRESS`` silences it); True: from the first update;
        False: never.

    Examples
    --------
    >>> ticker = Ticker(show=False)
    >>> ticker.update(lambda: "iteration 1"); ticker.close("done")
    """

    def __init__(self, show: bool | None = None) -> None:
        self.on = enabled() if show is None else bool(show)
        self.delay = DELAY if show is None else 0.0
        self.start, self.last, self.said = time.perf_counter(), -float("inf"), False

    def update(self, text) -> None:
        """Print ``text`` (a str, or a function returning one) if the delay and the interval have passed."""
        if not self.on:
            return
        now = time.perf_counter()
        if now - self.start < self.delay or now - self.last < INTERVAL:
            return
        self.last, self.said = now, True
        _say(text() if callable(text) else text)

    def close(self, text) -> None:
        """The last line, with the time taken, when the loop printed any."""
        if self.said:
            _say(f"{text() if callable(text) else text} ({time.perf_counter() - self.start:.1f} s)")
