"""Where a campaign's runs execute: in this process, in local processes, on a dask cluster.

Each scheduler takes the :class:`~kanerobot.campaign.runner.Campaign` and an
iterator of ``(i, draw)`` and yields the rows of
:func:`~kanerobot.campaign.runner.run` as runs complete (in any order).
Draws are taken from the iterator only as runs are handed out (a few per
worker ahead), so that an interrupted campaign has drawn little it did not
run.  The same function computes every row in every scheduler, on the same
model rebuilt from the same source: the numbers do not depend on where they
were computed (``wall_time`` aside).

- :class:`InProcess`: one run after the other, here (for debugging: a
  breakpoint or a traceback shows the run);
- :class:`Processes`: a pool of local processes (one per core by
  default).  Where the system forks (Linux) and this process runs one
  Python thread, the workers are forked: they start with the parent's
  model, compiled libraries loaded, in a few milliseconds (the compiled
  model travels to them as memory).  Otherwise (macOS, Windows, a parent
  with threads, such as one holding a dask client, or one that started
  JAX's runtime: a campaign on ``"jax"``) they are spawned: the
  campaign is pickled once per worker (cloudpickle, so lambdas and closures
  pass), each rebuilds the model once and loads its libraries from the
  cache; a script must then call the campaign under ``if __name__ ==
  "__main__":``, since spawned processes import it.  A worker that dies (a crash in compiled code,
  the OOM killer) breaks the pool: a new one is started and the runs that
  were in flight are handed out again; a run in flight at
  :data:`CRASHES` such deaths is recorded as ``"lost"`` (a restart runs it
  again);
- :class:`Dask`: a ``dask.distributed`` cluster, given by its scheduler's
  address or a ``Client``.  A scheduler that does not answer at the
  address within :data:`CONNECT_TIMEOUT` (5 s) stops the campaign with one
  error before any run.  Its scheduler hands out again the tasks of a
  worker that dies (up to ``distributed.scheduler.allowed-failures``); a
  task that still fails becomes a ``"lost"`` row.  The workers need kanerobot
  installed (and a C compiler, or the compiled-model cache on a shared
  ``$KANEROBOT_CACHE``).
"""

from __future__ import annotations

import os
import uuid
from collections import deque
from typing import Any

from kanerobot.campaign import runner
from kanerobot.campaign.dependencies import require

__all__ = ["CONNECT_TIMEOUT", "CRASHES", "Dask", "InProcess", "Processes", "failed_row", "scheduler_of"]

#: Deaths of the process pool a run may be in flight at before it is recorded as failed.
CRASHES = 2
#: Seconds a campaign waits for a dask scheduler given by its address to answer (dask's own default is 30 s):
#: a wrong address or a scheduler not started is said quickly (``Dask(address, timeout=...)``, ``--connect-timeout``).
CONNECT_TIMEOUT = 5.0
_HERE: dict[str, runner.Campaign] = {}  # in a worker process: campaign key -> Campaign (unpickled once)


def failed_row(i, draw, message, status="failed"):
    """The row of run ``i`` that could not run: ``"failed"`` (its draw raised) or ``"lost"`` (its workers died, the cluster
    gave up on it: a restart runs it again)."""
    row = {"run": int(i), "status": status, "error": message}
    if draw is not None:
        row.update(draw.columns())
    row["wall_time"] = float("nan")
    return row


class InProcess:
    """Every run in this process, one after the other."""

    name = "in-process"

    def rows(self, campaign, items):
        for i, draw in items:
            yield runner.run(campaign, i, draw)


def _jax_running():
    """Whether this process started JAX's runtime (its threads make a fork deadlock-prone; JAX warns at fork)."""
    import sys

    bridge = sys.modules.get("jax._src.xla_bridge")
    try:
        return bool(bridge is not None and bridge.backends_are_initialized())
    except Exception:  # a JAX without it (a private module): assume it runs once imported
        return True


def _initialise(payload):
    """A spawned pool worker's start: the campaign, unpickled once."""
    import cloudpickle

    _HERE["campaign"] = cloudpickle.loads(payload)


def _inherit(campaign):
    """A forked pool worker's start: the parent's campaign, model included (not pickled: fork copies it)."""
    _HERE["campaign"] = campaign


def _run_here(i, draw):
    return runner.run(_HERE["campaign"], i, draw)


def _run_on_dask(key, payload, i, draw):
    """A dask task: the campaign unpickled once per worker process (``key``: one call of campaign), then run ``i``."""
    campaign = _HERE.get(key)
    if campaign is None:
        import cloudpickle

        campaign = _HERE.setdefault(key, cloudpickle.loads(payload))
    return runner.run(campaign, i, draw)


class Processes:
    """A pool of ``workers`` local processes (default: one per core), forked or spawned (module notes)."""

    name = "processes"

    def __init__(self, workers=None, start_method=None):
        import multiprocessing
        import threading

        from kanerobot.errors import KaneRobotError

        self.workers = int(workers or os.cpu_count() or 1)
        if self.workers < 1:
            raise KaneRobotError(f"Processes(workers={workers!r}): give a number of processes >= 1, or None for one per core")
        if start_method is None:
            # fork copies every thread's locks but only the calling thread: safe with one Python thread only
            # (JAX's runtime threads are not Python's: a process that ran JAX, a campaign on scheduler="jax", spawns)
            forks = "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1 and not _jax_running()
            start_method = "fork" if forks else "spawn"
        self.start_method = start_method

    def rows(self, campaign, items):
        import multiprocessing
        from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
        from concurrent.futures.process import BrokenProcessPool

        start: dict[str, Any]  # the pool's initializer and its arguments
        if self.start_method == "fork":
            start = dict(initializer=_inherit, initargs=(campaign,))
        else:
            cloudpickle = require("cloudpickle", "a campaign on local processes")
            start = dict(initializer=_initialise, initargs=(cloudpickle.dumps(campaign),))
        context = multiprocessing.get_context(self.start_method)
        items = iter(items)
        redo: deque[tuple] = deque()  # (i, draw) of runs to submit again after a crash
        crashes: dict[int, int] = {}  # run -> the crashes it was in flight at
        limit = 2 * self.workers  # a run ahead per worker: no worker waits for the parent
        while True:
            pool = ProcessPoolExecutor(self.workers, mp_context=context, **start)
            pending: dict[Future, tuple] = {}  # future -> its (i, draw)
            broken = []
            try:
                while True:
                    while len(pending) < limit:
                        item = redo.popleft() if redo else next(items, None)
                        if item is None:
                            break
                        pending[pool.submit(_run_here, *item)] = item
                    if not pending:
                        return
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        item = pending.pop(future)
                        try:
                            row = future.result()
                        except BrokenProcessPool:
                            broken.append(item)
                            continue
                        yield row
                    if broken:
                        break
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
            # a worker died: every run in flight is lost with the pool; hand them out again
            for item in broken + list(pending.values()):
                crashes[item[0]] = crashes.get(item[0], 0) + 1
                if crashes[item[0]] >= CRASHES:
                    yield failed_row(item[0], item[1], f"the worker process died {CRASHES} times while this run was in flight", "lost")
                else:
                    redo.append(item)


class Dask:
    """A dask.distributed cluster: ``scheduler`` is its address (a client is opened and closed here) or a ``Client``.

    ``timeout``: seconds to wait for the scheduler at an address to answer
    (default :data:`CONNECT_TIMEOUT`), after which the campaign stops with
    one :class:`~kanerobot.errors.KaneRobotError` before any run.
    """

    name = "dask"

    def __init__(self, scheduler, timeout=None):
        self.scheduler = scheduler
        self.timeout = timeout

    def _client(self, distributed):
        """A client of the scheduler at the address, or one error saying that nothing answered there."""
        from kanerobot.errors import KaneRobotError

        timeout = CONNECT_TIMEOUT if self.timeout is None else self.timeout
        try:
            return distributed.Client(self.scheduler, timeout=timeout)
        except ValueError:  # a port that is not a number (dask's own parsing)
            raise KaneRobotError(f"{self.scheduler!r} is not a dask scheduler's address: give tcp://HOST:PORT (or HOST:PORT)") from None
        except OSError:  # dask retries a refused connection until the timeout, then says it timed out
            raise KaneRobotError(
                f"no dask scheduler answered at {self.scheduler} within {timeout:g} s: start one there (dask scheduler --port PORT) "
                f"or give its address; wait longer with --connect-timeout SECONDS (Python: Dask(address, timeout=SECONDS))"
            ) from None

    def rows(self, campaign, items):
        distributed = require("distributed", "a campaign on a dask cluster")
        cloudpickle = require("cloudpickle", "a campaign on a dask cluster")
        own = isinstance(self.scheduler, str)
        client = self._client(distributed) if own else self.scheduler
        payload = cloudpickle.dumps(campaign)
        tag = uuid.uuid4().hex[:12]
        pending: dict[Any, tuple] = {}  # dask future -> its (i, draw)
        items = iter(items)
        limit = 2 * max(1, sum(client.nthreads().values()))
        finished = distributed.as_completed()
        try:
            while True:
                while len(pending) < limit:
                    item = next(items, None)
                    if item is None:
                        break
                    future = client.submit(_run_on_dask, tag, payload, *item, pure=False, key=f"kanerobot-run-{tag}-{item[0]}")
                    pending[future] = item
                    finished.add(future)
                if not pending:
                    return
                future = next(finished)
                item = pending.pop(future)
                try:
                    row = future.result()
                except Exception as exc:  # a task the cluster gave up on (KilledWorker ...): a failed row
                    row = failed_row(item[0], item[1], f"{type(exc).__name__}: {exc}", "lost")
                yield row
        finally:
            for future in pending:
                future.cancel()
            if own:
                client.close()


def scheduler_of(scheduler):
    """The scheduler object of ``campaign(scheduler=...)``."""
    from kanerobot.errors import KaneRobotError

    if isinstance(scheduler, str):
        if scheduler == "in-process":
            return InProcess()
        if scheduler == "processes":
            return Processes()
        if scheduler == "jax":
            from kanerobot.campaign.batched import Jax

            return Jax()
        if "://" in scheduler or ":" in scheduler:
            return Dask(scheduler)
        raise KaneRobotError(
            f"unknown scheduler {scheduler!r}: give 'in-process', 'processes', 'jax', a dask scheduler's address (tcp://host:8786) or a dask Client"
        )
    from kanerobot.campaign.batched import Jax

    if isinstance(scheduler, (InProcess, Processes, Dask, Jax)):
        return scheduler  # Processes(workers=8), Processes(start_method="spawn"), Jax(dt=1e-4) ...
    if hasattr(scheduler, "submit") and hasattr(scheduler, "nthreads"):
        return Dask(scheduler)
    raise KaneRobotError(f"unknown scheduler {scheduler!r}: give 'in-process', 'processes', 'jax', a dask scheduler's address or a dask Client")
