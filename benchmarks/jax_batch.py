"""Batched RK4 simulation on JAX against the C backend's batched calls: the RX-90 and a 38-DOF humanoid (issue 29).

Two robots: the RX-90 (6 joints, fixed base) and Talos, example-robot-data's
``talos_reduced.urdf`` on a free-flying base (32 joints, mimic joints read as
joints of their own, nv = 38; skipped with a line when example-robot-data is
not installed).  For batch sizes B = 1, 10, 100, 1000, 10^4, 10^5 plants
(random physically consistent parameters, ``--draws`` distinct sets repeated
over the batch; random initial states), the same passive fixed-step RK4
(dt = 1 ms, ``--steps`` steps) runs:

- on JAX: :func:`kanerobot.batched.batch_integrator`, one ``lax.scan`` over
  the steps, ``vmap`` over the plants, jitted (the build, i.e. tracing and
  XLA's compilation, timed apart on the first call of each batch size; the
  runs after it timed);
- with the C backend: a numpy RK4 whose four stages each call the compiled
  direct dynamics on the whole batch (``fn.direct_dynamics(q, qd, tau)``
  with (B, n) arrays: one C loop per stage), the configuration's rate
  ``fn.configuration_derivative`` and the quaternion normalised after each
  step as on JAX; the parameters of the first plant for all (the C
  functions bind one parameter vector); its build (C compilation) timed
  apart.

The humanoid's accelerations on JAX are solved from its programs A and H
(``dynamics="solve"``, :func:`kanerobot.dynamics.jax_model.solved_direct_dynamics`):
XLA compiles its 14,800-operation recursive direct-dynamics program in
several minutes and over 10 GB, A and H in under a minute.  ``--dynamics
program`` asks for the program anyway.  The C backend runs the program.

Printed: the device JAX used, each build time, plant-steps per second
(B x steps / wall time) of each and their ratio, measured in the same run,
and the largest difference of the final states at B = 1 (the same
parameters).  A size above ``--max-batch``, or whose projected wall time
(its build and its runs scaled from the size before) is over ``--budget``
seconds, or whose projected extra memory (its arrays, or the growth per
plant of the peak resident memory seen from the size before) is over half of
what is available, is skipped with a line saying
why.  Above ``--chunk`` plants (default 10^4) JAX runs the batch in chunks
of that size one after the other (the memory of a 10^5 humanoid batch at
once is more than a workstation has), each compiled once; the C side runs
the whole batch.  On the CPU by default; JAX uses an accelerator when it has one
(``JAX_PLATFORMS=cuda``).

Run:  python benchmarks/jax_batch.py [--robots rx90,talos] [--steps 20] [--sizes 1,10,100,1000,10000,100000]
      [--max-batch 100000] [--budget 600] [--chunk 10000] [--draws 1000] [--dynamics solve]
"""

import argparse
import importlib.util
import resource
import sys
import time

import needs  # noqa: F401 -- first: one line and exit status 2 when kanerobot is not installed
import numpy as np
import urdf_vs_pinocchio

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters

DT = 1e-3
TALOS = "talos_data/robots/talos_reduced.urdf"


def best_of(repeats, function):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def quaternion_columns(fn):
    """The columns of ``q`` holding a unit quaternion (the last four of a free flyer's or ball joint's)."""
    return [slice(qs.stop - 4, qs.stop) for joint, qs, _ in fn.model.layout if joint.nq > joint.nv]


def c_rk4(fc, x0, steps):
    """RK4 of the passive plants ``x0`` (B, nq + nv) on the C backend's batched calls, quaternions normalised each step."""
    nq, quaternions = fc.nq, quaternion_columns(fc)
    tau = np.zeros((len(x0), fc.n))

    def rate(x):
        q, qd = x[:, :nq], x[:, nq:]
        return np.hstack([fc.configuration_derivative(q, qd), fc.direct_dynamics(q, qd, tau)])

    x = x0.copy()
    for _ in range(steps):
        k1 = rate(x)
        k2 = rate(x + DT / 2 * k1)
        k3 = rate(x + DT / 2 * k2)
        k4 = rate(x + DT * k3)
        x = x + DT / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        for part in quaternions:
            x[:, part] /= np.linalg.norm(x[:, part], axis=1, keepdims=True)
    return x


def robots(names, dynamics):
    """``[(label, robot, dynamics on JAX)]`` of the names asked for; a line for each one that cannot run."""
    chosen = []
    for name in names:
        if name == "rx90":
            chosen.append(("RX-90", kr.load(kr.frames_path("rx90")), "program"))
        elif name == "talos":
            folder = urdf_vs_pinocchio.corpus_folder()
            if folder is None or not (folder / TALOS).is_file():
                print(f"talos: no {TALOS} (example-robot-data is not installed: pip install -e '.[bench]'): its rows are skipped")
                continue
            talos = kr.load(folder / TALOS, floating=True, mimic="independent")
            if len(talos.joint_labels) < 30:  # the issue asks for a 30+ DOF humanoid: say so if the file changed
                print(f"talos: {len(talos.joint_labels)} joints in {TALOS}, fewer than the 30 asked for")
            chosen.append(("Talos", talos, dynamics))
        else:
            print(f"unknown robot {name!r} (rx90, talos): skipped")
    return chosen


def available_bytes():
    """MemAvailable of /proc/meminfo (None where there is none)."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return 1024 * int(line.split()[1])
    except OSError:
        return None
    return None


def peak_rss():
    """This process's peak resident memory in bytes (ru_maxrss is in kB on Linux)."""
    return 1024 * resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def skip_reason(B, last, options):
    """Why size ``B`` is skipped (None: it runs), from the measures of the size before (``last``)."""
    if B > options.max_batch:
        return f"above --max-batch {options.max_batch}"
    if last is None:
        return None
    reasons = []
    scale = B / last["B"]
    projected = last["build"] + scale * last["seconds"]  # a build per batch size, its time about the same
    if projected > options.budget:
        reasons.append(
            f"projected {projected:.0f} s (from B = {last['B']}: build {last['build']:.0f} s, runs {last['seconds']:.1f} s) over --budget {options.budget:g} s"
        )
    # what the size adds: its arrays at least (x0, P, the states), or the growth per plant seen from the size before;
    # JAX runs at most --chunk plants at once, so only the inputs of the whole batch grow past it
    running = min(B, options.chunk)
    grown = max(0, running - last["B"]) * max(last["per_plant"], last["arrays"] / last["B"]) + max(0, B - running) * last["arrays"] / last["B"] / 3
    available = available_bytes()
    if available is not None and grown > available / 2:
        reasons.append(
            f"projected {grown / 2**30:.1f} GiB more (from B = {last['B']}) over half of the {available / 2**30:.1f} GiB available"
        )
    return "; ".join(reasons) or None


def table(label, robot, dynamics, options, jax):
    """The rows of one robot."""
    from kanerobot.batched import batch_integrator

    model = kr.derive(robot)
    rng = np.random.default_rng(0)
    draws = [random_parameters(robot, rng, friction=False, wrench=False) for _ in range(options.draws)]
    P_draws = np.array([[draw[name] for name in model.parameters] for draw in draws])
    fj = model.numeric(draws[0], backend="jax")
    start = time.perf_counter()
    fc = model.numeric(draws[0], backend="c")
    fc.direct_dynamics(fc.neutral_configuration(), np.zeros(fc.nv), np.zeros(fc.n))  # compiled outside the timing
    c_build = time.perf_counter() - start
    largest = max(options.sizes)
    q_all = np.array([fc.random_configuration(rng) for _ in range(min(largest, options.draws))])
    x_draws = np.hstack([q_all, rng.uniform(-0.5, 0.5, (len(q_all), fc.nv))])
    run = batch_integrator(fj, None, DT, options.steps, options.steps, dynamics)
    what = "its direct-dynamics program" if dynamics == "program" else "solved from its programs A and H"
    print(f"\n{label}: {len(robot.joint_labels)} joints, nq {fc.nq}, nv {fc.nv}{', floating base' if robot.floating else ''}; "
          f"JAX accelerations {what}; C backend {fc.backend} (build {c_build:.1f} s, the program)")  # fmt: skip
    print(f"{'B':>7} {'JAX build s':>12} {'JAX plant-steps/s':>18} {'C plant-steps/s':>16} {'JAX/C':>7} {'|x_JAX - x_C| (B=1)':>20}")
    last = None
    for B in options.sizes:
        reason = skip_reason(B, last, options)
        if reason:
            print(f"{B:>7} skipped: {reason}")
            continue
        x0, P = np.resize(x_draws, (B, x_draws.shape[1])), np.resize(P_draws, (B, P_draws.shape[1]))
        chunk = min(B, options.chunk)  # above --chunk plants, JAX runs chunks of that size one after the other (memory)
        start = time.perf_counter()
        states = jax.block_until_ready(run(x0[:chunk], P[:chunk]))
        build = time.perf_counter() - start
        cheap = B * options.steps <= 10**4

        def batch(x0=x0, P=P, chunk=chunk):
            """Every chunk run; the first one's states returned (those of plant 0 for the B = 1 comparison)."""
            out = [jax.block_until_ready(run(x0[k : k + chunk], P[k : k + chunk])) for k in range(0, len(x0), chunk)]
            return out[0]

        t_jax, states = best_of(3 if cheap else 1, batch)
        t_c, final = best_of(3 if cheap else 1, lambda x0=x0: c_rk4(fc, x0, options.steps))
        rate_jax, rate_c = B * options.steps / t_jax, B * options.steps / t_c
        diff = f"{np.max(np.abs(np.asarray(states)[0, -1] - final[0])):.1e}" if B == 1 else ""
        chunks = f"  ({B // chunk} chunks of {chunk})" if chunk < B else ""
        print(f"{B:>7} {build:>12.1f} {rate_jax:>18.3g} {rate_c:>16.3g} {rate_jax / rate_c:>7.2f} {diff:>20}{chunks}", flush=True)
        memory = peak_rss()
        per_plant = 0.0 if last is None else max(0.0, memory - last["memory"]) / (B - last["B"])
        arrays = 8 * chunk * (P.shape[1] + 3 * x0.shape[1])
        last = {"B": min(B, options.chunk), "build": build, "seconds": (t_jax + t_c) * min(B, options.chunk) / B, "memory": memory,
                "per_plant": per_plant, "arrays": arrays}  # per chunk: what the next size repeats  # fmt: skip


def arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", default="rx90,talos", help="comma-separated: rx90, talos")
    parser.add_argument("--steps", type=int, default=20, help="RK4 steps of each run (dt = 1 ms)")
    parser.add_argument("--sizes", default="1,10,100,1000,10000,100000")
    parser.add_argument("--max-batch", type=int, default=100000, help="skip the sizes above it")
    parser.add_argument("--budget", type=float, default=600.0, help="skip a size whose projected wall time is over it (s)")
    parser.add_argument("--chunk", type=int, default=10000, help="the largest batch JAX runs at once; a larger one runs in chunks")
    parser.add_argument("--draws", type=int, default=1000, help="distinct parameter sets and states, repeated over a batch")
    parser.add_argument("--dynamics", choices=("solve", "program"), default="solve", help="the humanoid's accelerations on JAX")
    options = parser.parse_args(argv)
    options.sizes = [int(s) for s in options.sizes.split(",")]
    return options


def main(argv=None):
    options = arguments(argv)
    if importlib.util.find_spec("jax") is None:
        print("jax_batch.py: missing requirement: JAX is not installed: pip install -e '.[jax]' to get it", file=sys.stderr)
        return 2
    from kanerobot.codegen.jax import load_jax

    jax = load_jax()
    print(f"Passive plants, RK4 dt = {DT:g} s, {options.steps} steps; JAX {jax.__version__} on {jax.devices()[0]} "
          f"({jax.default_backend()}); {options.draws} distinct parameter sets and states repeated over a batch")  # fmt: skip
    for label, robot, dynamics in robots(options.robots.split(","), options.dynamics):
        table(label, robot, dynamics, options, jax)
    return 0


if __name__ == "__main__":
    sys.exit(main())
