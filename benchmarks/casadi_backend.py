"""The CasADi backend's inverse dynamics against the C backend's, RX-90 and Krang.

For each robot, the inverse dynamic model (random physically consistent
parameters, bound) is evaluated at random states by:

- ``C``: the compiled C function (``model.compiled``), a batch of N states in
  one call (``CompiledFunction.batch``), and one state through
  ``fn.inverse_dynamics`` (the CPython extension's path);
- ``CasADi``: the ``casadi.Function`` of one state (``fn.casadi``, parameters
  folded in) run by CasADi's virtual machine through its numeric buffers
  (``Function.buffer``: no conversion, the bare evaluation), and the batch
  of ``model.numeric(values, backend="casadi")`` (the program's function
  mapped over N states).

Times are per state, the best of ``--repeats`` calls; the ratio is CasADi's
time over C's.  The largest difference between the two backends' torques,
relative to the largest torque, is printed too (the tests require 1e-12).

Run:  python benchmarks/casadi_backend.py [--states N] [--repeats R]
"""

import argparse
import sys
import time

import needs  # first: one line and exit status 2 when kanerobot is not installed
import numpy as np

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters

ROBOTS = ("rx90", "krang")


def best(function, repeats):
    """The shortest of ``repeats`` calls of ``function``, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(name, N, repeats, rng):
    """``{what: seconds per state}`` and the largest relative difference, for robot ``name``."""
    robot = kr.load(kr.frames_path(name))
    model = kr.derive(robot)
    values = random_parameters(robot, rng)
    fc, fa = model.numeric(values, backend="c"), model.numeric(values, backend="casadi")
    q = np.array([fc.random_configuration(rng) for _ in range(N)])
    qd, qdd = rng.uniform(-2, 2, (N, model.nv)), rng.uniform(-3, 3, (N, model.nv))
    compiled = model.compiled("inverse_dynamics")
    zeros = {key: np.zeros((N, len(symbols))) for key, symbols in model._state_groups()}
    arrays = [{"q": q, "qd": qd, "qdd": qdd}.get(key, zeros[key]) if isinstance(key, str) else zeros[key] for key, _ in model._state_groups()]
    arrays.append(fc.parameter_values)
    f = fa.casadi("inverse_dynamics")
    buffer, evaluate = f.buffer()
    state = [np.ascontiguousarray(x[0]) for x in (q, qd, qdd)]
    out = np.empty(model.nv)
    for k, x in enumerate(state):
        buffer.set_arg(k, x.data)
    buffer.set_res(0, out.data)
    evaluate()
    error = np.abs(out - fc.inverse_dynamics(*state)).max() / max(1.0, np.abs(out).max())
    batch_c, batch_casadi = fc.inverse_dynamics(q, qd, qdd), fa.inverse_dynamics(q, qd, qdd)
    error = max(error, np.abs(batch_casadi - batch_c).max() / max(1.0, np.abs(batch_c).max()))

    def loop(call, count=200):
        def run():
            for _ in range(count):
                call()

        return best(run, repeats) / count

    times = {
        "C, one state (fn.inverse_dynamics)": loop(lambda: fc.inverse_dynamics(*state)),
        "CasADi, one state (Function, buffers)": loop(evaluate),
        f"C, batch of {N}": best(lambda: compiled.batch(N, arrays), repeats) / N,
        f"CasADi, batch of {N} (numeric)": best(lambda: fa.inverse_dynamics(q, qd, qdd), repeats) / N,
    }
    return times, error, len(model.program("inverse_dynamics").assignments())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=1000, help="states of a batch (default 1000)")
    parser.add_argument("--repeats", type=int, default=7, help="calls of which the best is kept (default 7)")
    args = parser.parse_args(argv)
    if not needs.installed("casadi"):
        print("casadi_backend.py: missing requirement: casadi is not installed: pip install -e '.[casadi]'", file=sys.stderr)
        return needs.MISSING
    rng = np.random.default_rng(29)
    print(f"Inverse dynamics, microseconds per state (best of {args.repeats})")
    for name in ROBOTS:
        times, error, lines = measure(name, args.states, args.repeats, rng)
        print(f"\n{name} ({lines} assignments), largest difference CasADi - C: {error:.1e} of the largest torque")
        for what, seconds in times.items():
            print(f"  {what:44s} {seconds * 1e6:9.3f}")
        one = times["CasADi, one state (Function, buffers)"] / times["C, one state (fn.inverse_dynamics)"]
        many = times[f"CasADi, batch of {args.states} (numeric)"] / times[f"C, batch of {args.states}"]
        print(f"  ratio CasADi / C: {one:.1f} for one state (VM against C through Python), {many:.1f} in a batch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
