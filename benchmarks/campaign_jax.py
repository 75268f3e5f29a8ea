"""An RX-90 campaign on scheduler="jax" against the same campaign on scheduler="processes".

Issue 29's acceptance: a campaign of 10^4 plants integrated at once by
fixed-step RK4 on JAX agrees with the same campaign on the processes
scheduler (scipy's adaptive DOP853, each run alone, one process per core)
within the integrators' accuracy: every metric to 1e-6 relative.  The
campaign is that of ``benchmarks/campaign_processes.py`` (computed torque
on the nominal values, the last links' inertias within 10 %, a target
within 0.5 rad), over ``--t-end`` seconds.

Printed: both wall times (the JAX side includes tracing and compiling the
batch, as a user pays it; the C programs are compiled before either
timing; the processes first: JAX's threads make a later fork unsafe), the step, the tolerances, and the largest relative difference of
every metric column over the runs both sides ran (``work``, which cancels
on a rest-to-rest motion, relative to the energy moved, ``int |tau . v|
dt``).  ``nfev`` and ``relative_energy_drift`` are the integrators' own
(RK4: 4 per step; the JAX side does not evaluate the energy) and are not
compared.  Where the processes side would take too long for every run,
``--processes-runs M`` runs only the first M (the same draws: run i draws
from its own generator) and its time for all the runs is extrapolated.

Run:  python benchmarks/campaign_jax.py [--runs 10000] [--processes-runs 1000] [--dt 1e-3] [--t-end 1.0]
"""

import argparse
import os
import sys
import time

import needs  # first: one line and exit status 2 when kanerobot is not installed
import numpy as np
from campaign_processes import settings  # beside this script, as needs

import kanerobot as kr
from kanerobot.errors import KaneRobotError
from kanerobot.simulation import DEFAULT_SOLVER_OPTIONS

#: The agreement the issue asks for.
TARGET = 1e-6
#: Columns that are the integrators' own, not the plant's.
OWN = ("nfev", "relative_energy_drift")


def differences(jax_table, reference):
    """``{metric: largest relative difference}`` over the runs ok on both sides (booleans and strings: 0 or 1 if any differs)."""
    from kanerobot.campaign import METRICS

    ok = (reference["status"] == "ok") & (jax_table["status"] == "ok")
    out = {}
    for name in METRICS:
        if name in OWN:
            continue
        a, b = jax_table.loc[ok, name], reference.loc[ok, name]
        if b.dtype.kind != "f":
            out[name] = float(list(a) != list(b))
            continue
        a, b = a.to_numpy(), b.to_numpy()
        scale = np.abs(b)
        if name == "work":
            scale = np.maximum(scale, reference.loc[ok, "energy"].to_numpy())
        out[name] = float(np.max(np.abs(a - b) / np.maximum(scale, 1e-300), initial=0.0))
    return out


def main(argv=None):
    from kanerobot.campaign import Jax
    from kanerobot.campaign.batched import DEFAULT_STEP

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000, help="plants of the JAX campaign (default 10^4)")
    parser.add_argument("--processes-runs", type=int, default=None, help="the first M of them on processes (default all)")
    parser.add_argument("--dt", type=float, default=DEFAULT_STEP, help=f"the largest RK4 step (default {DEFAULT_STEP:g} s)")
    parser.add_argument("--t-end", type=float, default=1.0, help="seconds of each run (default 1)")
    # tight by default: at the processes' own defaults the adaptive side's error is the larger (3e-7 relative on the
    # maximum tracking error, against 1e-8 for RK4 at 1 ms), and the comparison would measure it
    parser.add_argument("--rtol", type=float, default=1e-10, help=f"of the processes side (default 1e-10; kr.simulate's {DEFAULT_SOLVER_OPTIONS['rtol']:g})")
    parser.add_argument("--atol", type=float, default=1e-12, help=f"of the processes side (default 1e-12; kr.simulate's {DEFAULT_SOLVER_OPTIONS['atol']:g})")
    args = parser.parse_args(argv)
    try:
        from kanerobot.campaign.dependencies import require

        require("pandas", "the campaign benchmark")
        require("jax", "the JAX campaign benchmark")
    except KaneRobotError as exc:
        return needs.announce(__file__, [str(exc)])
    robot, values, common = settings(args.runs)
    common["t_span"] = (0.0, args.t_end)
    M = args.runs if args.processes_runs is None else min(args.processes_runs, args.runs)
    model = kr.derive(robot)
    kr.campaign(model, values, "computed_torque", **(common | {"runs": 1}), scheduler="in-process")  # compile outside the timing
    print(f"RX-90, computed torque over {args.t_end:g} s ({common['samples']} samples), {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}")  # fmt: skip
    start = time.perf_counter()
    local = kr.campaign(model, values, "computed_torque", scheduler="processes", rtol=args.rtol, atol=args.atol, **(common | {"runs": M}))
    local_time = time.perf_counter() - start
    estimate = "" if M == args.runs else f"; {args.runs} runs extrapolated: {local_time * args.runs / M:.0f} s"
    print(f"processes ({local.attrs['scheduler']}): {M} runs in {local_time:.2f} s ({M / local_time:.2f} runs/s; DOP853, "
          f"rtol = {args.rtol:g}, atol = {args.atol:g}){estimate}")  # fmt: skip
    chosen = Jax(dt=args.dt)
    start = time.perf_counter()
    batch = kr.campaign(model, values, "computed_torque", scheduler=chosen, **common)
    jax_time = time.perf_counter() - start
    import jax

    print(f"jax ({jax.default_backend()}): {args.runs} runs in {jax_time:.2f} s ({args.runs / jax_time:.1f} runs/s; RK4 at "
          f"dt = {chosen.step:g} s, {4 * round(args.t_end / chosen.step)} evaluations a run), {int((batch['status'] == 'ok').sum())} ok",
          flush=True)  # fmt: skip
    print(f"speed-up jax / processes per run: {(local_time / M) / (jax_time / args.runs):.1f}")
    worst = differences(batch.iloc[:M].reset_index(drop=True), local)
    for name, value in worst.items():
        print(f"  {name:22s} largest relative difference {value:.2e}")
    largest = max(worst.values())
    print(f"over the {M} runs of both: largest {largest:.2e} (target <= {TARGET:g}) -> {'met' if largest <= TARGET else 'NOT met'}")
    return 0 if largest <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
