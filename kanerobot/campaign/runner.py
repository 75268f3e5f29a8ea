"""One run of a campaign, wherever it executes: the plant drawn, simulated, measured.

A :class:`Campaign` holds what every run shares: the robot (as the
arguments of :meth:`kanerobot.Robot.create`, which pickle, so that a worker
process rebuilds it), the engine, the nominal values the controller is
built on, the controller, the time span and the solver's options.  In this
process and in forked workers, the parent's derived and compiled model is
used as it is.  A spawned or dask worker builds the model once per process
(:func:`built`, kept by the campaign's key): the programs are derived there
once, and the compiled libraries load from the compiled-model cache that
the parent filled (:mod:`kanerobot.codegen.compiled`: the C source, hence
the library's name, is the same in every process).  Each run then only
binds its drawn values (``model.numeric(values)``, no derivation, no
compilation) and integrates.

:func:`run` returns the row of the table: the run's index, ``status``
(``"ok"`` or ``"failed"``, with the exception's message in ``error``: a run
that raises is recorded, not lost), the metrics (:data:`METRICS`), the
values drawn and ``wall_time``.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import threading
import time
from typing import Any

import numpy as np

from kanerobot.errors import KaneRobotError

__all__ = ["CONTROLLERS", "METRICS", "Campaign", "built", "robot_arguments", "run", "worker_record"]

#: Controllers given by name, built on the nominal model (see :func:`kanerobot.cross_validate`).
CONTROLLERS = ("computed_torque", "pd_gravity", "pd")
#: The metrics of a run, in the table's order (float unless said).
METRICS = (
    "rms_tracking_error",  # sqrt(mean((q_d - q)^2)) over the samples and controlled coordinates (NaN without a reference)
    "max_tracking_error",  # max |q_d - q|
    "peak_torque",  # max |tau|
    "energy",  # int |tau . v| dt (trapezoid over the samples; v the rates the torques drive)
    "work",  # int tau . v dt, integrated with the state (work + friction work of kr.simulate)
    "within_limits",  # bool: no position limit reached, |qd| and |tau| within the velocity and effort limits
    "fell",  # bool: a terminal event (events=) stopped the run
    "terminated_by",  # str: that event's name, "" otherwise
    "final_time",
    "nfev",  # int
    "relative_energy_drift",
)
_BUILT: dict[str, tuple[Any, Any]] = {}  # campaign key -> (model, nominal numeric model)
_BUILT_LOCK = threading.Lock()
_STATS: dict[str, Any] = {"models_built": 0, "compiled_here": [], "runs": 0}


def robot_arguments(robot):
    """The keyword arguments of :meth:`kanerobot.Robot.create` that rebuild ``robot`` (plain, picklable containers)."""
    out = {}
    for item in dataclasses.fields(robot):
        value = getattr(robot, item.name)
        if item.name in ("dynamics", "joint_parameters"):
            value = {label: dict(table) for label, table in value.items()}
        elif item.name in ("values", "limits"):
            value = dict(value)
        out[item.name] = value
    return out


@dataclasses.dataclass
class Campaign:
    """What every run of a campaign shares (pickled once to each spawned or dask worker; forked ones inherit it).

    ``model`` is the parent's derived model: used as it is in-process, left
    behind when the campaign is pickled (a worker rebuilds it from
    ``robot`` and ``method``).
    """

    key: str
    robot: dict
    method: str
    values: dict
    controller: object
    t_span: tuple
    t_eval: np.ndarray
    x0: np.ndarray | None
    events: list
    limits: dict
    backend: str
    physical: bool
    options: dict
    compile_names: list
    model: object = None

    def __getstate__(self):
        state = dict(self.__dict__)
        state["model"] = None  # rebuilt from its source where it lands
        return state


def built(campaign):
    """``(model, nominal numeric model)`` of ``campaign`` in this process, built once and kept."""
    with _BUILT_LOCK:
        if campaign.key in _BUILT:
            return _BUILT[campaign.key]
        model = campaign.model
        if model is None:
            from kanerobot.dynamics.model import DynamicModel, derive
            from kanerobot.robot.description import Robot

            model = derive(Robot.create(**campaign.robot), campaign.method)
            _STATS["models_built"] += 1
            if campaign.compile_names:
                # from the cache the parent filled: a library built here is counted (the tests want none)
                target = model if isinstance(model, DynamicModel) else model.tree  # a structure runs its tree's programs
                assert isinstance(target, DynamicModel)  # compile_names: _warm compiled the same model in the parent
                compiled = target.compile(campaign.compile_names, jobs=1)
                _STATS["compiled_here"] += [name for name, f in compiled.items() if f.build_seconds > 0]
        nominal = model.numeric(campaign.values, backend=campaign.backend, physical=campaign.physical)
        _BUILT[campaign.key] = (model, nominal)
        return _BUILT[campaign.key]


def worker_record():
    """This process's identity and what it built: ``{"worker", "models_built", "compiled_here"}``."""
    return {"worker": f"{socket.gethostname()}:{os.getpid()}", "models_built": _STATS["models_built"], "compiled_here": list(_STATS["compiled_here"])}


def start_state(campaign, draw, model):
    """The run's initial state: drawn x0, drawn q0 at rest, the campaign's x0, else the model's rest at q = 0."""
    space = model.state_space
    if draw.x0 is not None:
        return draw.x0
    if draw.q0 is not None:
        if len(draw.q0) != space.nq:
            raise KaneRobotError(f"the q0 drawn has {len(draw.q0)} values; {campaign.robot['name']} has q of {space.nq}")
        return np.concatenate([draw.q0, np.zeros(space.nv)])
    if campaign.x0 is not None:
        return campaign.x0
    if not space.origin_is_state:
        raise KaneRobotError(f"{campaign.robot['name']} ({space.kind}): q = 0 need not be a state of it: give x0, or draw q0 or x0")
    return np.concatenate([np.asarray(space.origin, dtype=float), np.zeros(space.nv)])


def reference(campaign, nominal, x0, target):
    """The trajectory a named controller or a factory tracks: a quintic from the start to the target over the run."""
    from kanerobot.control import ControlView, quintic

    view = ControlView(nominal)
    start = view.positions(x0[: view.nq])
    end = start if target is None else target
    if len(end) != view.n:
        raise KaneRobotError(f"the target drawn has {len(end)} values; the controller drives {view.n} coordinates ({', '.join(view.labels)})")
    t0, t1 = campaign.t_span
    return quintic(start, end, t1 - t0, t0)


def _simulate(campaign, nominal, plant, x0, target):
    """``(simulation, tracking error or None)`` of one run."""
    from kanerobot.simulation import cross_validate, simulate

    events = list(campaign.events) + _limit_events(campaign)
    # the limits are watched (within_limits), not enforced, unless the campaign's options say otherwise
    common = dict(t_eval=campaign.t_eval, events=events, **{"limits": "ignore", **campaign.options})
    controller = campaign.controller
    ready = controller is not None and not isinstance(controller, str) and _takes_state(controller)
    if ready and target is not None:
        raise KaneRobotError("a target is drawn but the controller is ready-made (tau(t, q, qd)): give a controller name or a factory")
    if controller is None or (ready and getattr(controller, "trajectory", None) is None):
        return simulate(plant, None, x0, campaign.t_span, controller, **common), None
    trajectory = None if ready else reference(campaign, nominal, x0, target)
    cv = cross_validate(nominal, plant, controller, trajectory, t_span=campaign.t_span, x0=x0, **common)
    return cv.simulation, cv.tracking_error


def _takes_state(function):
    import inspect

    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return len([p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]) == 3


def _limit_events(campaign):
    from kanerobot.simulation import joint_limit

    return [joint_limit(label, lower, upper, terminal=False) for label, (lower, upper) in campaign.limits.items()
            if lower is not None or upper is not None]  # fmt: skip


def metrics(campaign, sim, error, plant):
    from kanerobot.control import ControlView

    view = ControlView(plant)
    rates = view.rates(sim.qd)
    power = np.sum(sim.tau * rates, axis=1) if sim.tau.size else np.zeros(len(sim.t))
    magnitude = np.abs(power)
    energy = float(np.sum(0.5 * (magnitude[1:] + magnitude[:-1]) * np.diff(sim.t)))  # trapezoid (numpy < 2 has no np.trapezoid)
    reached = [name for name, record in sim.events.items() if name.startswith("limit ") and len(record["t"])]
    within = not reached and _inside(campaign, sim, view)
    limit_names = {f"limit {label}" for label in campaign.limits}
    stopped = sim.terminated_by if sim.terminated_by and sim.terminated_by not in limit_names else ""
    return {
        "rms_tracking_error": float(np.sqrt(np.mean(error**2))) if error is not None and error.size else float("nan"),
        "max_tracking_error": float(np.max(np.abs(error))) if error is not None and error.size else float("nan"),
        "peak_torque": float(np.max(np.abs(sim.tau))) if sim.tau.size else 0.0,
        "energy": energy,
        "work": float(sim.work[-1] + sim.friction_work[-1]) if len(sim.t) else 0.0,
        "within_limits": bool(within),
        "fell": bool(stopped),
        "terminated_by": stopped,
        "final_time": float(sim.t[-1]) if len(sim.t) else float("nan"),
        "nfev": int(sim.nfev),
        "relative_energy_drift": float(sim.relative_energy_drift),
    }


def _inside(campaign, sim, view):
    """Start inside the position limits, rates within the velocity limits and torques within the effort limits (where given)."""
    coordinates = list(sim.coordinates)
    labels = list(view.labels)
    for label, (lower, upper) in campaign.limits.items():
        if label in coordinates and len(sim.q):
            x = sim.q[0, coordinates.index(label)]
            if (lower is not None and x < lower) or (upper is not None and x > upper):
                return False
    for label, (velocity, effort) in _rate_limits(campaign).items():
        if label in labels:
            k = labels.index(label)
            if velocity is not None and np.max(np.abs(view.rates(sim.qd)[:, k]), initial=0.0) > velocity:
                return False
            if effort is not None and sim.tau.size and np.max(np.abs(sim.tau[:, k])) > effort:
                return False
    return True


def _rate_limits(campaign):
    limits = campaign.robot.get("limits", {})
    return {label: (item.velocity, item.effort) for label, item in limits.items() if item.velocity is not None or item.effort is not None}


def run(campaign, i, draw):
    """The table row of run ``i`` with ``draw`` (a :class:`~kanerobot.campaign.distributions.Draw`).

    Any exception of the run (values that are not physical, an integrator
    that fails, a controller that raises) makes a ``"failed"`` row with its
    message; the process's :func:`worker_record` rides along under
    ``"_worker"`` (taken off the table by the caller).
    """
    start = time.perf_counter()
    row = {"run": int(i), "status": "ok", "error": ""}
    try:
        model, nominal = built(campaign)
        values = dict(campaign.values)
        values.update(draw.parameters)
        plant = model.numeric(values, backend=campaign.backend, physical=campaign.physical)
        x0 = start_state(campaign, draw, model)
        sim, error = _simulate(campaign, nominal, plant, np.asarray(x0, dtype=float), draw.target)
        if not sim.success:
            raise KaneRobotError(f"the integrator failed at t = {sim.t[-1]:g}: {sim.message}")
        row.update(metrics(campaign, sim, error, plant))
    except Exception as exc:  # recorded in the table: one bad plant does not stop a campaign
        row.update(status="failed", error=f"{type(exc).__name__}: {exc}")
    row.update(draw.columns())
    row["wall_time"] = time.perf_counter() - start
    _STATS["runs"] += 1
    row["_worker"] = worker_record()
    return row
