"""``kr.campaign``: Monte-Carlo runs of a controller on plants drawn from the parameters' uncertainty.

See :func:`campaign`.
"""

import hashlib
import json
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from kanerobot.campaign import runner, schedulers
from kanerobot.campaign.dependencies import require
from kanerobot.campaign.distributions import Sampler
from kanerobot.control import Controller
from kanerobot.dynamics.model import DerivedModel, NumericModel
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import Robot
from kanerobot.simulation import Event

#: What :func:`campaign` takes for a model (type hints), as :func:`kanerobot.simulate` with a robot file besides.
_ModelLike = Robot | DerivedModel | NumericModel

__all__ = ["campaign"]

#: The models compiled before runs go to workers, so that the workers load them from the cache.
_COMPILED = ("direct_dynamics", "mass_matrix", "h", "gravity", "inverse_dynamics")
#: Seconds between two writes to the store (and rows, whichever comes first).
FLUSH_SECONDS = 5.0
FLUSH_ROWS = 50


def campaign(
    model: _ModelLike | str | os.PathLike,
    values: Mapping[str, float] | None = None,
    controller: str | Controller | Callable[..., Any] | None = None,
    *,
    runs: int,
    sample: Mapping[str, Any] | Callable[[np.random.Generator], Mapping[str, Any]],
    t_span: tuple[float, float],
    x0: ArrayLike | None = None,
    seed: int = 0,
    scheduler: str | Any = "processes",
    store: str | os.PathLike | None = None,
    samples: int = 201,
    events: Sequence[Event] | None = None,
    limits: Mapping[str, tuple[float | None, float | None]] | None = None,
    backend: str = "auto",
    physical: bool = True,
    **solver_options: Any,
) -> Any:
    """Simulate ``runs`` plants drawn from a parameter distribution under one controller.

    Run ``i`` draws its plant's parameters (and, when asked, its initial
    state and reference) from ``numpy.random.default_rng([seed, i])``
    (:mod:`kanerobot.campaign.distributions`), simulates it under
    ``controller`` built on the nominal model (``values``: the model the
    control engineer has), as :func:`kanerobot.cross_validate` does, and
    measures it.  Results do not depend on the scheduler, nor on which runs
    were done before: a campaign stopped and restarted with the same
    ``store`` runs only the runs missing there, and gives the same table.

    Parameters
    ----------
    model : Robot, derived model, numeric model, or robot file
        What :func:`kanerobot.simulate` takes, or a robot file (or a library
        name, ``"rx90"``).  A derived model comes from :func:`kanerobot.derive`
        (workers rebuild it from its robot and engine).
    values : mapping
        The nominal parameter values, ``{name: float}``: the controller's
        model, and the plants' values where ``sample`` draws nothing
        (default: the robot's own, as a URDF has them).
    controller : str, Controller, callable or None
        ``"computed_torque"``, ``"pd_gravity"`` (``"pd"``): built on the
        nominal model, tracking a quintic from the start to the ``target``
        drawn (holding the start without one); a factory ``f(numeric model,
        trajectory) -> controller`` called the same way; a ready
        ``tau(t, q, qd)`` (a :class:`kanerobot.control.Controller` brings its
        trajectory for the tracking error); None: the robot is passive.
    runs : int
        Number of runs (indices ``0 .. runs - 1``).
    sample : dict or callable
        ``{name: (low, high) | Normal | MultivariateNormal | identification result}``
        or ``sample(rng) -> {name: value}``; names are model parameters or
        ``"q0"``, ``"x0"``, ``"target"``
        (:mod:`kanerobot.campaign.distributions`).
    t_span : (float, float)
        Start and end of every run.
    x0 : array_like, optional
        The initial state of every run where ``sample`` draws none; default
        rest at ``q = 0``.
    seed : int
        The campaign's seed.
    scheduler : str, dask Client or scheduler object
        ``"in-process"`` (debugging), ``"processes"`` (default: one process
        per core, forked where the system can, else spawned), a dask
        scheduler's address (``"tcp://host:8786"``) or a
        ``distributed.Client`` (a ``LocalCluster``'s, a real cluster's); or
        one of :mod:`kanerobot.campaign.schedulers`' objects
        (``Processes(workers=8)``).  ``"jax"`` (or ``Jax(dt=...)``,
        :mod:`kanerobot.campaign.batched`) integrates every run at once by
        fixed-step RK4 on JAX (default step :data:`~kanerobot.campaign.batched.DEFAULT_STEP`,
        1 ms, whose error is below the default tolerances; the step taken
        in ``frame.attrs["scheduler"]``): the same table within both
        integrators' accuracy, ``nfev`` 4 per step, ``relative_energy_drift``
        NaN, ``wall_time`` the batch's share; for serial and tree robots
        on a fixed base under ``"computed_torque"``, ``"pd_gravity"`` or
        no controller; events, watched joint limits, regularised Coulomb
        friction, Python controllers and solver options are refused in
        one line (use ``"processes"``).
    store : str or path-like, optional
        A folder: rows are written there as runs complete (Parquet, small
        files renamed into place: :mod:`kanerobot.campaign.store`), and the
        runs already there are not run again.
    samples : int
        Output times of each run (evenly spread over ``t_span``): the
        metrics are taken on them.
    events : list of Event, optional
        More events (:func:`kanerobot.simulation.event`); a terminal one
        that stops a run makes it ``fell``.
    limits : mapping, optional
        ``{joint label: (lower, upper)}`` position limits (default the
        robot's, ``robot.limits``); reaching one clears ``within_limits``.
    backend : {"auto", "c", "numpy"}
    physical : bool
        Check that every plant's values are those of real bodies (a plant
        that is not fails its run); False for identified base parameters
        (set by a :class:`~kanerobot.campaign.distributions.MultivariateNormal`
        built from an identification).
    **solver_options
        Given to :func:`kanerobot.simulate` (``rtol``, ``method``,
        ``friction``, ``control_period`` ...); a sampled controller (its
        ``period``: an :class:`~kanerobot.mpc.MPC`) is called once per tick
        in every run without being told.

    Returns
    -------
    pandas.DataFrame
        (annotated ``Any``: pandas is imported on use, not by ``import kanerobot``)
        One row per run, sorted by ``run``: ``status`` (``"ok"``,
        ``"failed"``: the run raised, or ``"lost"``: its workers died and
        the scheduler gave up; a restart runs it again), ``error``, the metrics
        (:data:`kanerobot.campaign.runner.METRICS`: tracking error RMS and
        maximum, peak torque, energy, work, within limits, fell ...), the
        values drawn (``param.<name>``, ``q0.<k>``, ``x0.<k>``,
        ``target.<k>``) and ``wall_time`` (seconds of the run).
        ``frame.attrs`` holds ``executed`` (the runs run by this call),
        ``from_store`` (how many were in the store already), ``scheduler``
        (``"processes (2 forked)"`` ...) and ``workers`` (per worker
        process: runs, models built there, libraries compiled there).

    Raises
    ------
    KaneRobotError
        Before any run: pandas (or pyarrow with a store, distributed with a
        cluster) missing, an unknown parameter name in ``sample``, a
        uniform range with ``low > high``, a covariance that is not positive
        definite, a store that is a file or holds another campaign, an
        unknown controller or scheduler, a bad ``t_span`` or ``runs``, what
        ``scheduler="jax"`` cannot do.

    Examples
    --------
    Computed torque on planar arms whose second link is 10 % lighter or
    heavier than the controller believes (in this process, no store):

    >>> import kanerobot as kr
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> values = {"L1": 1.0, "M2": 1.0, "MX2": 0.5, "MY2": 0.0, "ZZ1": 0.4, "ZZ2": 0.35, "IA1": 0.01, "IA2": 0.01,
    ...           "FV1": 0.0, "FV2": 0.0, "FS1": 0.0, "FS2": 0.0}
    >>> table = campaign(robot, values, "computed_torque", runs=3, sample={"M2": (0.9, 1.1), "target": (-1.0, 1.0)},
    ...                  t_span=(0.0, 0.5), samples=11, scheduler="in-process", backend="numpy")
    >>> list(table["status"]), bool((table["max_tracking_error"] < 0.05).all())
    (['ok', 'ok', 'ok'], True)
    """
    require("pandas", "kr.campaign")
    model, values = _model_and_values(model, values)
    robot = model.robot
    space = model.state_space
    sampler = Sampler(sample, model.parameters, {"q0": space.nq, "x0": space.nq + space.nv, "target": space.ntau})
    runs = _count(runs)
    t0, t1 = _span(t_span)
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 2:
        raise KaneRobotError(f"samples must be a whole number >= 2 (output times of each run), got {samples!r}")
    drawn = set() if sampler.entries is None else {name for name, _ in sampler.entries}  # None: a sample function
    if x0 is None and not space.origin_is_state and not sampler.callable and not drawn & {"q0", "x0"}:
        raise KaneRobotError(f"{robot.name} ({space.kind}): q = 0 need not be a state of it: give x0, or draw q0 or x0")
    if x0 is not None:
        x0 = np.asarray(x0, dtype=float).reshape(-1)
        if len(x0) != space.nq + space.nv:
            raise KaneRobotError(f"x0 for {robot.name} must have {space.nq + space.nv} values: q ({space.nq}) then qd ({space.nv}); got {len(x0)}")
    controller = _controller(controller)
    if solver_options.get("control_period") is not None:  # refused before any run, not once per run
        from kanerobot.simulation import checked_control_period

        checked_control_period(solver_options["control_period"], None)
    nominal = model.numeric(values, backend=backend, physical=physical)  # checks the values before any run
    plan = runner.Campaign(
        key="", robot=runner.robot_arguments(robot), method=model.method, values=dict(values), controller=controller,
        t_span=(t0, t1), t_eval=np.linspace(t0, t1, int(samples)), x0=x0,
        events=list(events or []), limits=_limits(robot, limits), backend=getattr(nominal, "backend", backend), physical=physical,
        options=dict(solver_options), compile_names=[], model=model,
    )  # fmt: skip
    description = _description(plan, sampler, seed)
    # the model a worker builds is kept under this key: robot, engine, nominal values, backend
    plan.key = hashlib.sha256(repr((plan.robot, plan.method, sorted(plan.values.items()), plan.backend, physical)).encode()).hexdigest()[:16]
    chosen = schedulers.scheduler_of(scheduler)
    if hasattr(chosen, "check"):
        chosen.check(plan)  # what the scheduler cannot do, before a store is made or a run drawn
    disk = None
    if store is not None:
        from kanerobot.campaign.store import Store

        disk = Store(store, description)
    done = disk.done() if disk is not None else set()
    todo = [i for i in range(runs) if i not in done]
    if todo and not isinstance(chosen, schedulers.InProcess):
        plan.compile_names = _warm(plan, model, nominal)
    rows, workers = _execute(plan, chosen, sampler, seed, todo, disk, robot.name)
    where = getattr(chosen, "description", chosen.name) + (f" ({chosen.workers} {chosen.start_method}ed)" if isinstance(chosen, schedulers.Processes) else "")
    return _table(rows, disk, runs, todo, len(done & set(range(runs))), workers, where)


def _model_and_values(model, values) -> tuple[DerivedModel, dict[str, float]]:
    """``(derived model, values)`` from what :func:`campaign` takes."""
    from kanerobot.dynamics.model import derive
    from kanerobot.library import frames_path, robot_names
    from kanerobot.robot.io import load

    if isinstance(model, (str, os.PathLike)):
        path = Path(model)
        if not path.exists() and str(model) in robot_names():
            path = frames_path(str(model))
        model = load(path)
    if isinstance(model, Robot):
        model = derive(model)
    elif hasattr(model, "direct_dynamics") and hasattr(model, "model") and not hasattr(model, "numeric"):
        if values is not None:
            raise KaneRobotError("the model is already numeric (its parameters are bound): pass values=None")
        values = {str(k): float(v) for k, v in model.values.items()}
        model = model.model
    if not hasattr(model, "numeric") or not hasattr(model, "robot"):
        raise KaneRobotError(f"cannot run a campaign on {model!r}: give a Robot, a robot file, a model of kr.derive or its numeric(values)")
    if type(derive(model.robot, model.method)) is not type(model):
        raise KaneRobotError(
            f"the campaign's workers rebuild the model as kr.derive(robot, {model.method!r}), which is not this "
            f"{type(model).__name__}: give the robot, or a model of kr.derive"
        )
    if values is None:
        if not model.robot.values:
            raise KaneRobotError(f"values are needed for a campaign on {model.robot.name}: the nominal parameters ({', '.join(model.parameters[:6])}, ...)")
        values = dict(model.robot.values)
    return model, {str(k): float(v) for k, v in dict(values).items()}


def _count(runs):
    if isinstance(runs, bool) or not isinstance(runs, (int, np.integer)) or runs < 0:
        raise KaneRobotError(f"runs must be a whole number >= 0, got {runs!r}")
    return int(runs)


def _span(t_span):
    try:
        t0, t1 = (float(t) for t in t_span)
    except (TypeError, ValueError):
        raise KaneRobotError(f"t_span must be (start, end) times, got {t_span!r}") from None
    if not (np.isfinite(t0) and np.isfinite(t1) and t1 > t0):
        raise KaneRobotError(f"t_span must be two finite times (start, end) with end > start, got {t_span!r}")
    return t0, t1


def _controller(controller):
    if isinstance(controller, str):
        name = controller.replace("-", "_")
        if name not in runner.CONTROLLERS:
            raise KaneRobotError(f"unknown controller {controller!r}: use {', '.join(runner.CONTROLLERS)}, a Controller, a factory or None")
        return name
    if controller is not None and not callable(controller):
        raise KaneRobotError(f"controller must be a name, a Controller, a function or None, got {controller!r}")
    return controller


def _limits(robot, limits):
    if limits is None:
        return {label: (item.lower, item.upper) for label, item in robot.limits.items() if item.lower is not None or item.upper is not None}
    out = {}
    for label, pair in dict(limits).items():
        if str(label) not in robot.joint_labels:
            raise KaneRobotError(f"limits: {label!r} is not a joint of {robot.name} (joints {', '.join(robot.joint_labels)})")
        try:
            lower, upper = pair
        except (TypeError, ValueError):
            raise KaneRobotError(f"limits[{label!r}] must be a pair (lower, upper), None for no bound; got {pair!r}") from None
        out[str(label)] = (lower, upper)
    return out


def _description(plan, sampler, seed):
    """What the store records of the campaign (a restart must match it)."""
    controller = plan.controller if isinstance(plan.controller, str) or plan.controller is None else getattr(
        plan.controller, "__qualname__", type(plan.controller).__name__)  # fmt: skip
    values = hashlib.sha256(json.dumps(sorted(plan.values.items())).encode()).hexdigest()[:16]
    # what changes the runs' numbers beyond the names above: limits, events, solver options (repr, hashed)
    settings = repr((sorted(plan.limits.items()), [getattr(e, "name", repr(e)) for e in plan.events], sorted(plan.options.items()), plan.physical))
    return {
        "robot": plan.robot["name"], "method": plan.method, "seed": int(seed), "t_span": list(plan.t_span), "samples": len(plan.t_eval),
        "sample": sampler.describe(), "controller": controller, "nominal values": values,
        "x0": None if plan.x0 is None else plan.x0.tolist(), "backend": plan.backend,
        "settings": hashlib.sha256(settings.encode()).hexdigest()[:16],
    }  # fmt: skip


def _warm(plan, model, nominal):
    """Compile in this process what the workers load from the cache; the names compiled."""
    if getattr(nominal, "backend", None) != "c":
        return []
    # a structure on a tree (wheels, loops, discs) evaluates its tree's compiled programs: those are warmed
    target = model if hasattr(model, "compile") else getattr(model, "tree", None)
    if target is None or not hasattr(target, "compile"):
        return []
    names = [name for name in _COMPILED if name in target.models and target.has_program(name)]
    target.compile(names)
    return names


def _execute(plan, chosen, sampler, seed, todo, disk, name):
    """Run ``todo`` on ``chosen``: ``(rows, per-worker records)``; rows are written to ``disk`` as they come."""
    failed_draws: deque[dict[str, Any]] = deque()  # the rows of runs whose draw failed

    def items():
        for i in todo:
            try:
                draw = sampler(seed, i)
            except KaneRobotError:
                raise
            except Exception as exc:  # a sample function that raises: that run fails, the others go on
                failed_draws.append(schedulers.failed_row(i, None, f"sample: {type(exc).__name__}: {exc}"))
                continue
            yield i, draw

    rows, buffer = [], []
    workers: dict[str, dict[str, Any]] = {}  # worker -> what it ran and built
    bar = _Bar(name, len(todo))
    last = time.monotonic()

    def take(row):
        record = row.pop("_worker", None)
        if record is not None:
            entry = workers.setdefault(record["worker"], {"runs": 0})
            entry["runs"] += 1
            entry.update(models_built=record["models_built"], compiled_here=record["compiled_here"])
        rows.append(row)
        buffer.append(row)
        bar.update(row["status"] != "ok")

    try:
        for row in chosen.rows(plan, items()):
            take(row)
            while failed_draws:
                take(failed_draws.popleft())
            if disk is not None and (len(buffer) >= FLUSH_ROWS or time.monotonic() - last > FLUSH_SECONDS):
                disk.write(_frame(buffer))
                buffer, last = [], time.monotonic()
        while failed_draws:
            take(failed_draws.popleft())
    finally:
        if disk is not None and buffer:
            disk.write(_frame(buffer))  # what is done is kept, also when interrupted
        bar.close()
    return rows, workers


def _frame(rows):
    """Rows as a DataFrame of fixed columns and types (every store file alike)."""
    import pandas as pd

    frame = pd.DataFrame(rows)
    metrics = [name for name in runner.METRICS]
    drawn = sorted({key for row in rows for key in row if "." in key}, key=_drawn_order)
    columns = ["run", "status", "error", *metrics, *drawn, "wall_time"]
    frame = frame.reindex(columns=columns)
    frame["run"] = frame["run"].astype("int64")
    for name in ("status", "error", "terminated_by"):
        frame[name] = frame[name].astype(object).where(frame[name].notna(), "").astype(str)
    for name in ("within_limits", "fell"):
        frame[name] = frame[name].astype("boolean")
    frame["nfev"] = frame["nfev"].astype("Int64")
    for name in [*metrics, *drawn, "wall_time"]:
        if name not in ("within_limits", "fell", "terminated_by", "nfev"):
            frame[name] = frame[name].astype("float64")
    return frame


def _drawn_order(key):
    kind, _, name = key.partition(".")
    order = {"param": 0, "q0": 1, "x0": 2, "target": 3}.get(kind, 4)
    return (order, int(name) if name.isdigit() else 0, name)


def _table(rows, disk, runs, todo, from_store, workers, scheduler):
    import pandas as pd

    if disk is not None:
        frame = disk.read()
        if not frame.empty:
            frame = frame[frame["run"] < runs]
    else:
        frame = _frame(rows) if rows else pd.DataFrame(columns=["run", "status", "error"])
    frame = frame.sort_values("run").reset_index(drop=True) if len(frame) else frame
    frame.attrs["executed"] = sorted(int(row["run"]) for row in rows)
    frame.attrs["from_store"] = from_store
    frame.attrs["workers"] = workers
    frame.attrs["scheduler"] = scheduler
    return frame


class _Bar:
    """Runs done, failed and per second on standard error (a line rewritten on a terminal, a line every 10 s otherwise)."""

    def __init__(self, name, total, stream=None):
        from kanerobot.progress import DELAY, enabled

        self.stream = stream or sys.stderr
        self.on = enabled() and total > 0
        self.name, self.total, self.done, self.failed = name, total, 0, 0
        self.start = self.last = time.monotonic()
        self.delay, self.said = DELAY, False
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def text(self):
        seconds = time.monotonic() - self.start
        rate = self.done / seconds if seconds > 0 else 0.0
        return f"kanerobot: campaign {self.name}: {self.done}/{self.total} runs, {self.failed} failed, {rate:.2f} runs/s, {seconds:.0f} s"

    def update(self, failed):
        self.done += 1
        self.failed += bool(failed)
        if not self.on:
            return
        now = time.monotonic()
        if now - self.start < self.delay or now - self.last < (0.2 if self.tty else 10.0):
            return
        self.last, self.said = now, True
        self.stream.write(("\r" + self.text()) if self.tty else self.text() + "\n")
        self.stream.flush()

    def close(self):
        # no run came back (a scheduler that did not answer): the error says it, not a line of zeros before it
        if self.on and self.done and (self.said or time.monotonic() - self.start >= self.delay):
            self.stream.write(("\r" + self.text() + "\n") if self.tty else self.text() + "\n")
            self.stream.flush()
