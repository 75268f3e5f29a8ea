"""Batched RK4 simulation of the RX-90 on JAX against the C backend's batched calls (issue 29).

For batch sizes B = 1, 10, 100, 1000, 10000 plants (random physically
consistent parameters each, random initial states), the same fixed-step RK4
(dt = 1 ms, STEPS steps) runs:

- on JAX: :func:`kanerobot.batched.batch_integrator`, one ``lax.scan`` over
  the steps, ``vmap`` over the plants, jitted (compile time printed apart,
  best of 3 runs after it);
- with the C backend: a numpy RK4 whose four stages each call the compiled
  direct dynamics on the whole batch (``fn.direct_dynamics(q, qd, tau)``
  with (B, 6) arrays: one C loop per stage), the parameters of the first
  plant for all (the C functions bind one parameter vector).

Printed: plant-steps per second (B x STEPS / wall time) of each, and the
largest difference of the final states where both ran the same plants
(B = 1: the same parameters).  On the CPU by default; JAX uses an
accelerator when it has one (``JAX_PLATFORMS=cuda``): the device is printed.

Run:  python benchmarks/jax_batch.py [--steps 50] [--sizes 1,10,100,1000,10000]
"""

import argparse
import importlib.util
import sys
import time

import needs  # noqa: F401 -- first: one line and exit status 2 when kanerobot is not installed
import numpy as np

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters

DT = 1e-3


def best_of(repeats, function):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def c_rk4(fc, x0, steps):
    """RK4 of the passive plants ``x0`` (B, 12) on the C backend's batched direct dynamics."""
    n = fc.n
    tau = np.zeros((len(x0), n))

    def rate(x):
        return np.hstack([x[:, n:], fc.direct_dynamics(x[:, :n], x[:, n:], tau)])

    x = x0.copy()
    for _ in range(steps):
        k1 = rate(x)
        k2 = rate(x + DT / 2 * k1)
        k3 = rate(x + DT / 2 * k2)
        k4 = rate(x + DT * k3)
        x = x + DT / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return x


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--sizes", default="1,10,100,1000,10000")
    args = parser.parse_args(argv)
    if importlib.util.find_spec("jax") is None:
        print("jax_batch.py: missing requirement: JAX is not installed: pip install -e '.[jax]' to get it", file=sys.stderr)
        return 2
    import jax

    from kanerobot.batched import batch_integrator

    robot = kr.load(kr.frames_path("rx90"))
    model = kr.derive(robot)
    rng = np.random.default_rng(0)
    sizes = [int(s) for s in args.sizes.split(",")]
    draws = [random_parameters(robot, rng, friction=False, wrench=False) for _ in range(max(sizes))]
    P_all = np.array([[draw[name] for name in model.parameters] for draw in draws])
    x_all = np.hstack([rng.uniform(-1, 1, (max(sizes), 6)), rng.uniform(-0.5, 0.5, (max(sizes), 6))])
    fj = model.numeric(draws[0], backend="jax")
    fc = model.numeric(draws[0], backend="c")
    fc.direct_dynamics(np.zeros(6), np.zeros(6), np.zeros(6))  # compiled outside the timing
    run = batch_integrator(fj, None, DT, args.steps, args.steps)
    print(f"RX-90, passive, RK4 dt = {DT:g} s, {args.steps} steps; JAX {jax.__version__} on {jax.devices()[0]}, C backend {fc.backend}")
    print(f"{'B':>6} {'JAX compile s':>14} {'JAX plant-steps/s':>18} {'C plant-steps/s':>16} {'JAX/C':>7} {'|x_JAX - x_C| (B=1)':>20}")
    for B in sizes:
        x0, P = x_all[:B], P_all[:B]
        start = time.perf_counter()
        jax.block_until_ready(run(x0, P))
        compile_s = time.perf_counter() - start
        t_jax, states = best_of(3, lambda x0=x0, P=P: jax.block_until_ready(run(x0, P)))
        t_c, final = best_of(1 if B >= 1000 else 3, lambda x0=x0: c_rk4(fc, x0, args.steps))
        rate_jax, rate_c = B * args.steps / t_jax, B * args.steps / t_c
        diff = f"{np.max(np.abs(np.asarray(states)[0, -1] - final[0])):.1e}" if B == 1 else ""
        print(f"{B:>6} {compile_s:>14.1f} {rate_jax:>18.3g} {rate_c:>16.3g} {rate_jax / rate_c:>7.2f} {diff:>20}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
