"""The ``"jax"`` scheduler: every run of a campaign integrated at once by fixed-step RK4 on JAX.

:class:`Jax` is a scheduler like the others (``rows(campaign, items)``),
but instead of handing runs to workers it draws them all, stacks their
parameter vectors, initial states, targets and gains, and integrates the
whole batch with :func:`kanerobot.batched.rk4_integrator` (one
``lax.scan`` over the steps, ``vmap`` over the plants, on the CPU or on an
accelerator).  The controller is the campaign's named one written as a JAX
function of ``(t, q, qd)`` on the nominal model's JAX programs
(``computed_torque``: ``M (qdd_d + Kd e' + Kp e) + h``; ``pd_gravity``:
``Kp e + Kd e' + G``), tracking the same quintic from the start to the
target drawn, with the gains of :class:`kanerobot.control.ComputedTorque`
and :class:`~kanerobot.control.PDGravity` built for that run.  Each row is
then measured by the campaign's own metric code
(:func:`kanerobot.campaign.runner.metrics`) on the states sampled at the
campaign's output times, which the steps fall on exactly.

Differences from the other schedulers, by construction:

- the integrator is RK4 at a fixed step (``Jax(dt=...)``: the largest
  step; the step taken divides the output interval): the metrics agree
  with the adaptive integrator's to the accuracy of both;
- ``nfev`` is ``4 x steps``; ``relative_energy_drift`` is NaN (the energy
  of each plant is not evaluated);
- ``wall_time`` is the batch's time divided by its number of runs.

What it cannot do is refused before any run, in one line naming
``scheduler='processes'``: events, watched joint limits, regularised
Coulomb friction, floating bases and structures other than a serial or
tree robot on a fixed base, Python controllers, solver options.
"""

from __future__ import annotations

import math
import time
import types

import numpy as np

from kanerobot.campaign import runner
from kanerobot.errors import KaneRobotError

__all__ = ["DEFAULT_STEP", "Jax"]

#: The largest RK4 step by default (s): RK4's error at 1 ms on the campaigns' closed loops (gains of 10 rad/s, arms)
#: is below the processes scheduler's default tolerances (rtol 1e-8, atol 1e-10) (tests/test_campaign_jax.py).
DEFAULT_STEP = 1e-3
#: Options of the campaign the JAX scheduler uses: the gains of a named controller, and the model's own friction law.
_OPTIONS = ("gains", "friction")
_USE = "use scheduler='processes'"


class Jax:
    """Every run at once, integrated by fixed-step RK4 on JAX (module notes).

    Parameters
    ----------
    dt : float, optional
        The largest step (s), default :data:`DEFAULT_STEP`; the step taken
        is the output interval divided by a whole number (``step``).

    Attributes
    ----------
    step : float or None
        The step of the last campaign (None before).
    description : str
        ``"jax (RK4, dt = ... s)"``, the table's ``attrs["scheduler"]``.

    Examples
    --------
    >>> import kanerobot as kr
    >>> values = {"L1": 1.0, "M2": 1.0, "MX2": 0.5, "MY2": 0.0, "ZZ1": 0.4, "ZZ2": 0.35, "IA1": 0.01, "IA2": 0.01,
    ...           "FV1": 0.0, "FV2": 0.0, "FS1": 0.0, "FS2": 0.0}
    >>> chosen = Jax(dt=2e-3)
    >>> table = kr.campaign(kr.load(kr.frames_path("planar2")), values, "computed_torque", runs=3, sample={"M2": (0.9, 1.1)},
    ...                     t_span=(0.0, 0.5), samples=11, scheduler=chosen)
    >>> list(table["status"]), chosen.step, table.attrs["scheduler"], int(table["nfev"][0])
    (['ok', 'ok', 'ok'], 0.002, 'jax (RK4, dt = 0.002 s)', 1000)
    """

    name = "jax"

    def __init__(self, dt: float | None = None):
        self.dt = DEFAULT_STEP if dt is None else dt
        if isinstance(self.dt, bool) or not isinstance(self.dt, (int, float)) or not (math.isfinite(self.dt) and self.dt > 0):
            raise KaneRobotError(f"Jax(dt={dt!r}): the step must be a positive number of seconds")
        self.step: float | None = None
        self.description = "jax"

    def check(self, campaign):
        """Refuse, in one line before any run, what fixed-step RK4 on JAX does not do."""
        from kanerobot.dynamics.dynamic_model import NumericDynamics

        model, nominal = runner.built(campaign)
        name = campaign.robot["name"]
        if not isinstance(nominal, NumericDynamics) or nominal.nq != nominal.nv or getattr(model.robot, "floating", False):
            raise KaneRobotError(f"scheduler='jax' integrates serial and tree robots on a fixed base; {name} ({model.state_space.kind}) is not one: {_USE}")
        if campaign.events:
            raise KaneRobotError(f"scheduler='jax' has no events (events=): {_USE}")
        if campaign.limits:
            raise KaneRobotError(f"scheduler='jax' does not watch joint limits ({', '.join(campaign.limits)}): pass limits={{}} or {_USE}")
        controller = campaign.controller
        if controller is not None and controller not in runner.CONTROLLERS:
            raise KaneRobotError(f"scheduler='jax' runs the named controllers ({', '.join(runner.CONTROLLERS)}) or none, not a Python controller: {_USE}")
        other = sorted(set(campaign.options) - set(_OPTIONS))
        if other:
            raise KaneRobotError(f"scheduler='jax' integrates by fixed-step RK4 (Jax(dt=...)); {', '.join(other)} are not its options: {_USE}")
        _check_friction(campaign, model.parameters, [campaign.values])


    def rows(self, campaign, items):
        self.check(campaign)
        start = time.perf_counter()
        items = list(items)
        model, nominal = runner.built(campaign)
        t = np.asarray(campaign.t_eval, dtype=float)
        every = max(1, math.ceil((t[1] - t[0]) / self.dt * (1 - 1e-12)))  # steps per output interval
        self.step = float(t[1] - t[0]) / every
        self.description = f"jax (RK4, dt = {self.step:.3g} s)"
        ready, rows = [], {}
        names = (list(model.parameters), model.robot_symbol_names)  # properties computed from the programs: once
        for i, draw in items:
            try:
                ready.append((i, draw, *_prepare(campaign, model, nominal, draw, names)))
            except Exception as exc:  # as runner.run: a bad plant is a failed row
                rows[i] = _row(i, draw, {"status": "failed", "error": f"{type(exc).__name__}: {exc}"})
        _check_friction(campaign, names[0], [dict(zip(names[0], entry[3])) for entry in ready])
        if ready:
            law = _law(campaign, nominal)
            integrate = _integrator(nominal, law, self.step, every * (len(t) - 1), every, t[0])
            stack = [np.array([entry[k] for entry in ready]) for k in (2, 3, 4)]
            states, work, taus = (np.asarray(a) for a in integrate(*stack))
            for k, (i, draw, _, _, _, trajectory) in enumerate(ready):
                rows[i] = _measured(campaign, nominal, i, draw, trajectory, t, states[k], work[k], taus[k], 4 * every * (len(t) - 1))
        share = (time.perf_counter() - start) / max(1, len(items))
        for i, _ in items:
            rows[i]["wall_time"] = share
            rows[i]["_worker"] = runner.worker_record()
            yield rows[i]


def _check_friction(campaign, parameters, plants):
    """Refuse Coulomb friction (``FS`` not 0 in a plant) unless the campaign keeps the model's law (``friction='model'``)."""
    names = [name for name in parameters if name.startswith("FS")]
    if campaign.options.get("friction", "regularised") != "model" and any(values.get(name, 0.0) for values in plants for name in names):
        raise KaneRobotError(f"scheduler='jax' applies the model's Coulomb friction FS sign(qd): pass friction='model', or {_USE} (regularised)")


def _integrator(nominal, law, dt, steps, every, t0):
    from kanerobot.batched import rk4_integrator

    return rk4_integrator(nominal, law, dt, steps, every, t0)


def _prepare(campaign, model, nominal, draw, names):
    """``(x0, parameter vector, controller data, trajectory or None)`` of one run; raises as runner.run would."""
    from kanerobot.dynamics.dynamic_model import bound_values
    from kanerobot.simulation import cross_controller

    values = dict(campaign.values)
    values.update(draw.parameters)
    parameters, robot_names = names
    bound = bound_values(model.robot, parameters, robot_names, values, physical=campaign.physical)
    by_name = {str(symbol): value for symbol, value in bound.items()}
    p = np.array([by_name[name] for name in parameters], dtype=float)
    x0 = np.asarray(runner.start_state(campaign, draw, model), dtype=float)
    if campaign.controller is None:
        return x0, p, np.zeros(0), None
    trajectory = runner.reference(campaign, nominal, x0, draw.target)
    ctrl, _ = cross_controller(campaign.controller, nominal, trajectory, campaign.options.get("gains"))
    n = nominal.n
    end = x0[:n] if draw.target is None else np.asarray(draw.target, dtype=float)  # as runner.reference
    data = np.concatenate([x0[:n], end, ctrl.kp.ravel(), ctrl.kd.ravel()])
    return x0, p, data, trajectory


def _law(campaign, nominal):
    """The named controller as a JAX function ``tau(t, q, qd, c)``, ``c = (start, end, Kp, Kd)`` of the run."""
    from kanerobot.codegen.jax import load_jax

    if campaign.controller is None:
        return None
    jnp = load_jax().numpy
    n = nominal.n
    t0, t1 = campaign.t_span
    T = t1 - t0
    pn = jnp.asarray(nominal.parameter_vector)
    mass, bias, gravity = (nominal.jax_function(name) for name in ("mass_matrix", "h", "gravity"))
    computed = campaign.controller == "computed_torque"

    def law(t, q, qd, c):
        a, b = c[:n], c[n : 2 * n]
        kp, kd = c[2 * n : 2 * n + n * n].reshape(n, n), c[2 * n + n * n :].reshape(n, n)
        # kanerobot.control.quintic from a to b over the run, as a JAX function of t
        s = jnp.clip((t - t0) / T, 0.0, 1.0)
        delta = b - a
        q_d = a + delta * (10 * s**3 - 15 * s**4 + 6 * s**5)
        qd_d = delta * (30 * s**2 - 60 * s**3 + 30 * s**4) / T
        e, de = q_d - q, qd_d - qd
        if computed:
            qdd_d = delta * (60 * s - 180 * s**2 + 120 * s**3) / T**2
            return mass(q, pn) @ (qdd_d + kd @ de + kp @ e) + bias(q, qd, pn)
        return kp @ e + kd @ de + gravity(q, pn)

    return law


def _row(i, draw, fields):
    row = {"run": int(i), "status": "ok", "error": ""}
    row.update(fields)
    row.update(draw.columns())
    return row


def _measured(campaign, nominal, i, draw, trajectory, t, states, work, taus, nfev):
    """The row of one integrated plant, measured by the campaign's metric code on its samples."""
    n = nominal.nq
    bad = ~np.all(np.isfinite(states), axis=1)
    if bad.any():
        first = float(t[np.argmax(bad)])
        message = f"KaneRobotError: the RK4 solution is not finite at t = {first:g}: a smaller step (Jax(dt=...)) or {_USE}"
        return _row(i, draw, {"status": "failed", "error": message})
    q, qd = states[:, :n], states[:, n:]
    sim = types.SimpleNamespace(
        t=t, q=q, qd=qd, tau=taus, work=work, friction_work=np.zeros_like(work), events={}, terminated_by=None,
        nfev=nfev, relative_energy_drift=float("nan"), coordinates=list(nominal.model.state_space.coordinates),
    )  # fmt: skip
    error = None if trajectory is None else trajectory.sample(t)[0] - q
    return _row(i, draw, runner.metrics(campaign, sim, error, nominal))
