"""``kanerobot campaign``: the command line of :func:`kanerobot.campaign.campaign`.

``kanerobot campaign ROBOT --runs N --sample NAME=LOW:HIGH ... --t-span T0:T1
--store DIR [--scheduler in-process|processes|jax|ADDRESS]`` runs the campaign,
keeps its table in ``DIR`` (a restart runs only the missing runs) and prints
a summary: runs, failures (with the first messages), and each metric's
mean and worst value.

Exit status: 0 when at least one run ran; 2 when every run failed, with
the count and the first failure on one line (:func:`all_failed`), as for
any other mistake in what was asked.  A dask scheduler's address that does
not answer within ``--connect-timeout`` seconds (default
:data:`kanerobot.campaign.schedulers.CONNECT_TIMEOUT`, 5 s) stops the
campaign before any run, with one line.
"""

from __future__ import annotations

import math
import sys

from kanerobot.errors import KaneRobotError

__all__ = ["add_arguments", "all_failed", "run", "sample_option", "time_span_option"]


def sample_option(text):
    """``NAME=LOW:HIGH`` -> ``(name, (low, high))``.

    Examples
    --------
    >>> sample_option("M2=0.9:1.1")
    ('M2', (0.9, 1.1))
    >>> sample_option("M2=0.9")
    Traceback (most recent call last):
      ...
    kanerobot.errors.KaneRobotError: --sample M2=0.9: give NAME=LOW:HIGH (a uniform draw), e.g. M2=0.9:1.1 or target=-1:1
    """
    name, _, bounds = text.partition("=")
    parts = bounds.split(":")
    try:
        if not name or len(parts) != 2:
            raise ValueError
        low, high = float(parts[0]), float(parts[1])
    except ValueError:
        raise KaneRobotError(f"--sample {text}: give NAME=LOW:HIGH (a uniform draw), e.g. M2=0.9:1.1 or target=-1:1") from None
    if not (math.isfinite(low) and math.isfinite(high)):
        raise KaneRobotError(f"--sample {text}: the bounds must be finite numbers")
    return name.strip(), (low, high)


def time_span_option(text):
    """``T0:T1`` or a duration ``T`` (from 0) -> ``(t0, t1)``.

    Examples
    --------
    >>> time_span_option("0.5"), time_span_option("1:2")
    ((0.0, 0.5), (1.0, 2.0))
    """
    parts = text.split(":")
    try:
        span = (0.0, float(parts[0])) if len(parts) == 1 else (float(parts[0]), float(parts[1]))
        if len(parts) > 2:
            raise ValueError
    except ValueError:
        raise KaneRobotError(f"--t-span {text}: give START:END or a duration in seconds, e.g. 0:2 or 2") from None
    if not (math.isfinite(span[0]) and math.isfinite(span[1]) and span[1] > span[0]):
        raise KaneRobotError(f"--t-span {text}: the end must be a finite time after the start")
    return span


def _seconds(text):
    """``--connect-timeout``: a positive number of seconds."""
    import argparse

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"takes a positive number of seconds, got {text!r}")
    return value


def add_arguments(p):
    """The options of ``kanerobot campaign`` on the subparser ``p``."""
    from kanerobot.command_options import add_loading  # the options of every command that loads a robot

    p.add_argument("robot", metavar="ROBOT", help="robot file (.par, .toml or .urdf) or library name")
    p.add_argument("--runs", type=int, required=True, help="number of runs")
    p.add_argument("--sample", metavar="NAME=LOW:HIGH", action="append", default=[],
                   help="draw a parameter (or q0, target: every coordinate) uniformly in [LOW, HIGH]; repeat for several")  # fmt: skip
    p.add_argument("--t-span", metavar="T0:T1", default="0:1", help="time span of every run (default 0:1; a number is a duration from 0)")
    p.add_argument("--store", metavar="DIR", help="folder of the table (Parquet): written as runs complete; a restart runs only the missing runs")
    p.add_argument("--scheduler", default="processes", help="in-process, processes (default: one per core), jax (every run at once by RK4) or a dask scheduler address")
    p.add_argument("--connect-timeout", type=_seconds, default=None, metavar="SECONDS",
                   help="how long a dask scheduler at an address has to answer (default 5 s: a wrong address fails fast)")  # fmt: skip
    p.add_argument("--controller", choices=["none", "pd", "computed-torque"], default="computed-torque",
                   help="built on the nominal values, tracking a quintic to the target drawn (default computed-torque)")  # fmt: skip
    p.add_argument("--values", metavar="FILE", help="nominal parameter values, a TOML file of NAME = number lines "
                   "(default: the file's own, as a URDF has them, else random physical ones drawn with --values-seed)")  # fmt: skip
    p.add_argument("--values-seed", type=int, default=0, help="seed of the random nominal values when --values is not given")
    p.add_argument("--seed", type=int, default=0, help="seed of the campaign: run i draws from (seed, i)")
    p.add_argument("--samples", type=int, default=201, help="output samples of each run, where the metrics are taken (default 201)")
    p.add_argument("--method", choices=["newton-euler", "lagrange", "kane"], default="newton-euler", help="engine of the model")
    add_loading(p)


def run(args, values):
    """Run the campaign of the parsed ``args`` with nominal ``values`` (None: the robot's own or random ones); print the summary."""
    import numpy as np

    from kanerobot.campaign.driver import campaign
    from kanerobot.campaign.schedulers import Dask, scheduler_of
    from kanerobot.command_options import announced_own_values, gravity_values, load_robot
    from kanerobot.dynamics.model import derive
    from kanerobot.dynamics.parameters import random_parameters

    sample = dict(sample_option(text) for text in args.sample)
    if not sample:
        raise KaneRobotError("give at least one --sample NAME=LOW:HIGH: what varies from run to run")
    span = time_span_option(args.t_span)
    if args.runs < 0:
        raise KaneRobotError(f"--runs takes a number >= 0, got {args.runs}")
    if args.samples < 2:
        raise KaneRobotError(f"--samples takes a number >= 2, got {args.samples}")
    robot = load_robot(args)
    if values is None:
        values = announced_own_values(robot, args)
    if values is None:
        values = random_parameters(robot, np.random.default_rng(args.values_seed), friction=False, wrench=False)
        print(f"kanerobot: random physically consistent nominal values (--values-seed {args.values_seed}); give yours with --values FILE",
              file=sys.stderr)  # fmt: skip
    values = {**values, **gravity_values(robot, args)}
    controller = None if args.controller == "none" else args.controller
    scheduler = scheduler_of(args.scheduler)
    if isinstance(scheduler, Dask):
        scheduler.timeout = args.connect_timeout
    table = campaign(derive(robot, args.method), values, controller, runs=args.runs, sample=sample, t_span=span, seed=args.seed,
                     scheduler=scheduler, store=args.store, samples=args.samples, physical=not args.unphysical)  # fmt: skip
    print(summary(table))
    if args.store:
        print(f"kanerobot: table in {args.store} ({table.attrs['from_store']} runs were there, {len(table.attrs['executed'])} run now)",
              file=sys.stderr)  # fmt: skip
    failure = all_failed(table)
    if failure:
        raise KaneRobotError(failure)


def all_failed(table):
    """The error of a campaign none of whose runs ran (None when one did, or there were none): the count and the first message.

    The rule of ``kanerobot campaign``'s exit status: 0 when at least one
    run ran (the failures are counted in the summary: a Monte-Carlo study
    may expect some), 2 when every run failed, as for any other mistake in
    what was asked (a range of negative masses, a duration the solver
    cannot cover).
    """
    failed = table[table["status"] != "ok"] if len(table) else table
    if not len(table) or len(failed) < len(table):
        return None
    first = failed.iloc[0]
    message = " ".join(str(first["error"]).split())  # one line, whatever the run raised
    return f"every run of the campaign failed ({len(failed)} of {len(table)}); run {first['run']}: {message}"


def summary(table):
    """Text: runs, failures with the first messages, then each numeric metric's mean and worst (max) value over the runs that ran."""
    from kanerobot.campaign.runner import METRICS

    ok = table[table["status"] == "ok"] if len(table) else table
    lines = [f"runs {len(table)}, ok {len(ok)}, failed {len(table) - len(ok)}"]
    if len(table) > len(ok):
        for _, row in table[table["status"] != "ok"].head(3).iterrows():
            lines.append(f"  run {row['run']} failed: {row['error']}")
    if len(ok):
        lines.append(f"{'metric':24s} {'mean':>12s} {'max':>12s}")
        for name in METRICS:
            column = ok[name]
            if column.dtype.kind in "fi" or str(column.dtype) in ("Int64", "boolean"):
                values = column.astype("float64")
                lines.append(f"{name:24s} {values.mean():12.6g} {values.max():12.6g}")
    return "\n".join(lines)
