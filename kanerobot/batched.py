"""Batched simulation on JAX: thousands of plants integrated at once by fixed-step RK4.

:func:`simulate_batch` integrates ``x = (q, qd)`` of one model under many
parameter vectors and initial states with the classical fourth-order
Runge-Kutta method at a fixed step: one ``jax.lax.scan`` over the steps,
``jax.vmap`` over the plants, the whole jitted once (on the CPU by default,
on an accelerator when JAX has one).  The dynamics are
:meth:`NumericDynamics.jax_function("direct_dynamics")
<kanerobot.dynamics.dynamic_model.NumericDynamics.jax_function>`, so each
plant runs the same program as ``model.numeric(values)`` with its own
values.

It is the batch counterpart of :func:`kanerobot.simulate` for what a fixed
step can do: serial and tree robots on a fixed or free-flying base, their
joints revolute, prismatic or spherical; no events, joint limits or
adaptive steps; Coulomb
friction is the model's own ``FS sign(qd)`` (``kr.simulate``'s
``friction="model"``).  Its error is RK4's, ``O(dt^4)``: choose ``dt``
well below the fastest time constant of the plants.

A configuration that is not a vector space (a free flyer's ``x y z`` and
quaternion, a ball joint's quaternion) is integrated as ``kr.simulate``
integrates it: RK4 on ``q`` with ``dq/dt`` the joint's configuration rate
(the free flyer's ``(wR_0 v, 1/2 Q (w, 0))``, a ball joint's
``1/2 Q (w, 0)``: :func:`kanerobot.robot.joints.free_flyer.configuration_derivative`
in JAX), then each quaternion normalised after every step, which keeps it
on the unit sphere without changing RK4's order (the projection moves it
by its norm error, itself ``O(dt^5)`` a step).  Initial quaternions are
normalised (a zero one is refused).

Needs JAX (``pip install 'kanerobot[jax]'``).
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from kanerobot.errors import KaneRobotError

__all__ = ["DYNAMICS", "BatchResult", "batch_integrator", "rk4_integrator", "simulate_batch"]

#: Where :func:`simulate_batch` takes the accelerations from (its ``dynamics`` option).
DYNAMICS = ("program", "solve")


class BatchResult(NamedTuple):
    """The states of a batch of plants at the recorded times.

    Attributes
    ----------
    t : numpy.ndarray, shape (samples,)
        ``0, every dt, 2 every dt, ...`` (the start included).
    x : numpy.ndarray, shape (samples, B, nq + nv)
        ``q`` then ``qd`` of every plant at each time (unit quaternions).
    """

    t: np.ndarray
    x: np.ndarray


def _parameter_vectors(model, values_batch, physical):
    """``(numeric functions of the first plant, (B, P) parameter vectors)``, each set of values checked by ``model.numeric``
    (an array's first row only, and that all its entries are finite)."""
    if isinstance(values_batch, np.ndarray):
        P = np.atleast_2d(np.asarray(values_batch, dtype=float))
        if P.ndim != 2 or P.shape[1] != len(model.parameters) or not np.all(np.isfinite(P)):
            raise KaneRobotError(
                f"values_batch as an array must be finite, shape (B, {len(model.parameters)}) (model.parameters in order); got {np.shape(values_batch)}"
            )
        fn = model.numeric(dict(zip(model.parameters, P[0])), backend="jax", physical=physical)
        return fn, P
    if isinstance(values_batch, Mapping):
        values_batch = [values_batch]
    values_batch = list(values_batch)
    if not values_batch:
        raise KaneRobotError("values_batch is empty: give one {name: value} per plant (or one for all)")
    fns = [model.numeric(values, backend="jax", physical=physical) for values in values_batch]
    return fns[0], np.stack([fn.parameter_vector for fn in fns])


def simulate_batch(
    model: Any,
    values_batch: Mapping[str, float] | Sequence[Mapping[str, float]],
    x0_batch: Any,
    controller: Callable[..., Any] | None = None,
    *,
    dt: float,
    steps: int,
    every: int = 1,
    physical: bool = True,
    dynamics: str = "program",
) -> BatchResult:
    """Integrate B plants at once with fixed-step RK4 on JAX.

    Parameters
    ----------
    model : DynamicModel
        What :func:`kanerobot.derive` returns for a serial or tree robot on
        a fixed or free-flying base (revolute, prismatic, spherical joints).
    values_batch : mapping, sequence of B mappings or array (B, len(model.parameters))
        ``{parameter name: float}`` of each plant (checked as
        ``model.numeric`` checks them), or one mapping for every plant; or
        the parameter vectors in the order of ``model.parameters`` (many
        plants without a check each: only the first row's values are
        checked as ``model.numeric`` does, the others for being finite).
    x0_batch : array_like, shape (B, nq + nv) or (nq + nv,)
        Initial ``q`` then ``qd`` of each plant (one row for all), in the
        protocol's layout (a floating base's ``x y z``, quaternion ``x y z w``
        and speeds ``v, w`` in frame 0 first).
    controller : callable, optional
        ``tau = controller(t, q, qd)``, a pure JAX function of one plant's
        state returning its ``n`` torques (it is ``vmap``-ed over the
        plants); default none (a passive robot).
    dt : float
        The step, > 0.
    steps : int
        The number of steps, >= 1.
    every : int, optional
        Record the states every ``every`` steps (default each).
    physical : bool, optional
        As ``model.numeric``'s.
    dynamics : {"program", "solve"}, optional
        The accelerations from the model's direct-dynamics program
        (:func:`~kanerobot.dynamics.jax_model.jax_function`, default) or
        solved from its programs A and H
        (:func:`~kanerobot.dynamics.jax_model.solved_direct_dynamics`: the
        same numbers to rounding, compiled by XLA in seconds where a
        humanoid's recursive program takes minutes and gigabytes).

    Returns
    -------
    BatchResult
        ``t`` (samples,) and ``x`` (samples, B, nq + nv).

    Raises
    ------
    KaneRobotError
        JAX not installed; an unknown ``dynamics``; a planar joint (its configuration rate is not
        written in JAX); a zero initial quaternion; shapes that do not
        match; a non-positive ``dt`` or ``steps``.

    Examples
    --------
    >>> import numpy as np, kanerobot as kr
    >>> from kanerobot.dynamics.parameters import random_parameters
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> draws = [random_parameters(robot, np.random.default_rng(k), friction=False) for k in range(4)]
    >>> result = simulate_batch(kr.derive(robot), draws, [0.5, -0.5, 0.0, 0.0], dt=1e-3, steps=100, every=50)
    >>> result.t.tolist(), result.x.shape
    ([0.0, 0.05, 0.1], (3, 4, 4))
    """
    if not (np.isfinite(dt) and dt > 0) or int(steps) < 1 or int(every) < 1 or int(steps) % int(every):
        raise KaneRobotError(f"dt = {dt} must be > 0, steps = {steps} >= 1 and a multiple of every = {every}")
    if dynamics not in DYNAMICS:
        raise KaneRobotError(f"unknown dynamics {dynamics!r}: give one of {', '.join(DYNAMICS)}")
    fn, P = _parameter_vectors(model, values_batch, physical)
    _check_joints(fn)
    nx = fn.nq + fn.nv
    x0 = np.atleast_2d(np.asarray(x0_batch, dtype=float))
    if x0.ndim != 2 or x0.shape[1] != nx or not np.all(np.isfinite(x0)):
        raise KaneRobotError(f"x0_batch must be finite, shape ({nx},) or (B, {nx}) (q then qd); got {np.shape(x0_batch)}")
    x0 = _unit_quaternions(fn, x0)
    B = max(len(x0), len(P))
    if {len(x0), len(P)} - {1, B}:
        raise KaneRobotError(f"{len(x0)} initial states for {len(P)} parameter sets: give as many (or one for all)")
    x0, P = np.broadcast_to(x0, (B, nx)), np.broadcast_to(P, (B, P.shape[1]))
    states = np.asarray(batch_integrator(fn, controller, dt, int(steps), int(every), dynamics)(x0, P))  # (B, samples, nx)
    t = dt * every * np.arange(int(steps) // int(every) + 1)
    return BatchResult(t, np.swapaxes(states, 0, 1))


def _check_joints(fn):
    """Refuse a joint whose configuration rate :func:`_configuration_rate` does not know (a planar joint)."""
    from kanerobot.robot.joints import FreeFlyer, Spherical

    for joint, qs, _ in fn._curved:
        if not isinstance(joint, FreeFlyer | Spherical):
            raise KaneRobotError(
                f"robot {fn.model.robot.name}: simulate_batch integrates revolute, prismatic and spherical joints and a "
                f"free-flying base; the {joint.name} joint of q[{qs.start}:{qs.stop}] is not one: use kr.simulate"
            )


def _unit_quaternions(fn, x0):
    """``x0`` (B, nq + nv) with its quaternions made unit; a zero one refused."""
    if not fn._quaternions:
        return x0
    for _, qs, _ in fn._quaternions:
        if not np.all(np.linalg.norm(x0[:, qs.stop - 4 : qs.stop], axis=1) > 1e-12):
            raise KaneRobotError(
                f"x0_batch: a quaternion x0[:, {qs.stop - 4}:{qs.stop}] (x y z w) is zero; give a unit quaternion such as [0, 0, 0, 1]"
            )
    return np.hstack([fn._normalised(x0[:, : fn.nq]), x0[:, fn.nq :]])


def _configuration_rate(fn, jnp):
    """``qdot(q, qd)`` in JAX, joint by joint as ``fn.configuration_derivative``: the speeds of a vector-space joint,
    ``1/2 Q (w, 0)`` of a quaternion (scalar last, ``w`` in the joint's frame), ``wR_0 v`` of a free flyer's position."""
    columns, rates = (np.array(indices, dtype=int) for indices in fn._flat_columns)

    def rotation(Q):
        x, y, z, w = Q / jnp.linalg.norm(Q)  # as the numpy rate: R of the normalised quaternion
        return jnp.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                          [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                          [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])  # fmt: skip

    def qdot(q, qd):
        out = jnp.zeros(fn.nq).at[columns].set(qd[rates])
        for joint, qs, vs in fn._curved:
            Q, omega = q[qs.stop - 4 : qs.stop], qd[vs.stop - 3 : vs.stop]
            u, w = Q[:3], Q[3]
            out = out.at[qs.stop - 4 : qs.stop].set(
                jnp.concatenate([0.5 * (w * omega + jnp.cross(u, omega)), -0.5 * jnp.dot(u, omega)[None]])
            )
            if joint.nq == 7:  # a free flyer: its position moves with v, given in frame 0
                out = out.at[qs.start : qs.start + 3].set(rotation(Q) @ qd[vs.start : vs.start + 3])
        return out

    return qdot


def batch_integrator(fn, controller, dt, steps, every, dynamics="program"):
    """The jitted ``run(x0, P) -> (B, steps // every + 1, nq + nv)`` of :func:`simulate_batch`, to call many times.

    ``fn`` numeric functions of the model (any backend; their
    :meth:`jax_function` runs), ``x0`` (B, nq + nv) (unit quaternions) and ``P`` (B, len(model.parameters));
    the rest as :func:`simulate_batch` (unchecked here).  Compiled on the
    first call for each batch size (XLA: seconds for an arm).
    """
    law = None if controller is None else (lambda t, q, qd, c: controller(t, q, qd))
    run = rk4_integrator(fn, law, dt, steps, every, dynamics=dynamics)

    def states(x0, P):
        return run(x0, P, np.zeros((len(x0), 0)))[0]

    return states


def rk4_integrator(fn, controller, dt, steps, every, t0=0.0, dynamics="program"):
    """The jitted ``run(x0, P, C) -> (states, work, tau)`` of a batch: fixed-step RK4 from ``t0``, each plant with its own data.

    ``controller(t, q, qd, c)`` (or None: no torque) is a JAX function of one
    plant's state and its row ``c`` of ``C`` (B, m) (its target, its gains
    ...).  ``states`` (B, samples, nq + nv), ``work`` (B, samples): the work
    of the torques ``int tau . qd dt``, integrated with the state by the same
    RK4 steps, and ``tau`` (B, samples, n): the torques at the recorded
    states; ``samples = steps // every + 1``, the start included.
    """
    from kanerobot.codegen.jax import jit, load_jax
    from kanerobot.dynamics.jax_model import solved_direct_dynamics

    jax = load_jax()
    jnp = jax.numpy
    _check_joints(fn)
    nq, n = fn.nq, fn.n
    direct = fn.jax_function("direct_dynamics") if dynamics == "program" else solved_direct_dynamics(fn)
    qdot = _configuration_rate(fn, jnp)
    quaternions = [slice(qs.stop - 4, qs.stop) for _, qs, _ in fn._quaternions]

    def torque(t, x, c):
        if controller is None:
            return jnp.zeros(n)
        return jnp.asarray(controller(t, x[:nq], x[nq:], c), dtype=jnp.float64)

    def rate(t, y, p, c):  # y = (q, qd, work)
        x = y[:-1]
        q, qd = x[:nq], x[nq:]
        tau = torque(t, x, c)
        # the torques' work: a floating base's six speeds take none (tau is the joints' n, after them in qd)
        return jnp.concatenate([qdot(q, qd), direct(q, qd, tau, p), (tau @ qd[fn.nv - n :])[None]])

    def unit(y):  # back on the unit sphere after each step (see the module's notes)
        for part in quaternions:
            y = y.at[part].set(y[part] / jnp.linalg.norm(y[part]))
        return y

    # RK4's four stages as a scan over (c_i, b_i): stage i evaluates at x + c_i dt k_(i-1). One copy of the
    # dynamics in the graph instead of four, so XLA compiles it about four times faster.
    stages = (jnp.array([0.0, 0.5, 0.5, 1.0]), jnp.array([1.0, 2.0, 2.0, 1.0]) / 6)

    def step(carry, _):
        t, y, p, c = carry

        def stage(state, coefficients):
            k, total = state
            a, b = coefficients
            k = rate(t + a * dt, y + (a * dt) * k, p, c)
            return (k, total + b * k), None

        (_, total), _ = jax.lax.scan(stage, (jnp.zeros_like(y), jnp.zeros_like(y)), stages)
        return (t + dt, unit(y + dt * total), p, c), None

    def record(carry, _):
        carry, _ = jax.lax.scan(step, carry, None, length=every)
        t, y, _, c = carry
        return carry, (y, torque(t, y[:-1], c))

    def plant(x, p, c):
        y = jnp.concatenate([x, jnp.zeros(1)])
        start = jnp.float64(t0)
        _, (ys, taus) = jax.lax.scan(record, (start, y, p, c), None, length=steps // every)
        ys = jnp.concatenate([y[None], ys])
        taus = jnp.concatenate([torque(start, x, c)[None], taus])
        return ys[:, :-1], ys[:, -1], taus

    return jit(jax.vmap(plant))
