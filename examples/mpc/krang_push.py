"""Krang on its wheels pushed at the torso: nonlinear MPC against the LQR, under torque limits.

(a) One plant (the model itself).  Krang (``frames/krang_wheeled.toml``, 19
    independent speeds, the body of ``examples/krang/krang_control.py``:
    random consistent bodies, seed 17, 5 kg wheels of radius 0.25 m) balances
    upright; a 30 N horizontal push at the torso (frame 3's origin, forward)
    acts from t = 0.5 s to 0.7 s.  kr.simulate takes no external wrench and
    this robot's model has no wrench inputs, so the push enters as the
    generalized forces it makes on the independent speeds, ``J_3(q)^T F``
    (``fn.jacobian("3", q)``'s linear rows), added to the controller's
    torques over the interval.  The motors are limited (wheels 3 N m, each
    body joint 15 N m beyond what it needs to hold the posture): the LQR
    (``control.lqr_balance``, the same weights) is run as designed (its
    wheels ask for 8.5 N m: it recovers, beyond the limits) and saturated at
    them (it falls); the MPC (``kanerobot.mpc``,
    N = 10 steps of 50 ms, real-time iteration, terminal LQR cost) plans
    within them.  Printed: the largest and final pitch error, the peak motor
    torques (the controller's, the push taken off), whether it stays upright
    (|pitch error| < 0.5 rad to the end), and the MPC's time per tick.

(b) A campaign (``kr.campaign``): plants drawn from ``kr.identify``'s
    covariance of Krang's base parameters (identified on its tree from a
    synthetic recording with 2 % torque noise: :func:`identified`), the
    same push as an impulse (6 N s at the torso at t = 0: the start's speeds
    ``A^-1 J_3^T (F dt)``, so that the torques the campaign records are the
    motors' alone); the MPC and the LQR as designed and saturated: the share
    that stays upright, the peak torques and how many runs kept within the
    limits.

Run from the repository:
    python examples/mpc/krang_push.py [--runs N]      # default 4 runs per controller; --runs 200 for the full one

The MPC is sampled (its ``period``, ``dt``): kr.simulate calls it once per
tick and integrates the held input tick by tick.  Times on the 2-core
development machine: (a) about 15 s (the MPC's run 7 s: 60 ticks of about
80 ms, one solve each); the identification 6 s; the campaign, on kr.campaign's
process pool (two workers sharing the two cores), 1.5-3.5 s a run for the
LQR and 10 s for the MPC: 200 runs of the MPC take about 20 minutes (the
whole example with 4 runs: 70 s).
"""

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

import kanerobot as kr
from kanerobot import control
from kanerobot.mpc import balance_mpc

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "krang"))
from krang_control import body_values, wheeled_values

PUSH = np.array([30.0, 0.0, 0.0])  # N, along x of the ground frame (forward at heading 0)
PUSH_START, PUSH_DURATION = 0.5, 0.2
T_END = 3.0
FALL = 0.5  # rad of pitch error: fallen
WHEEL_LIMIT, BODY_MARGIN = 3.0, 15.0  # N m: |u_wheel| <= 3, |u_joint - u_eq| <= 15


class Saturated:
    """A controller's motor torques clipped to the limits: what real motors give."""

    def __init__(self, lqr, lower, upper):
        self.lqr, self.lower, self.upper = lqr, lower, upper
        self.trajectory = lqr.trajectory

    def __call__(self, t, q, qd):
        return self.lqr.actuation @ np.clip(self.lqr.motor_torques(t, q, qd), self.lower, self.upper)


class Pushed:
    """The controller's torques plus the push's generalized forces ``J_3^T F`` during the push.

    It has the controller's ``period``: kr.simulate samples the MPC (and so
    the push, whose interval falls on its ticks) once per tick and holds the
    sum; ``pushes`` keeps what each call added, to take it off ``result.tau``.
    """

    def __init__(self, controller, fn):
        self.controller, self.fn = controller, fn
        self.period = getattr(controller, "period", None)
        self.pushes = {}

    def push(self, t, q):
        if PUSH_START <= t < PUSH_START + PUSH_DURATION:
            return self.fn.jacobian("3", q)[:3].T @ PUSH
        return np.zeros(self.fn.m)

    def __call__(self, t, q, qd):
        self.pushes[t] = push = self.push(t, q)
        return self.controller(t, q, qd) + push

    def applied(self, result):
        """The push in ``result.tau`` at each output: held since the last tick under a period, else its own."""
        if self.period is None:
            return np.array([self.push(t, q) for t, q in zip(result.t, result.q)])
        ticks = np.array(sorted(self.pushes))
        last = np.searchsorted(ticks, result.t + 1e-12, side="right") - 1
        return np.array([self.pushes[ticks[k]] for k in last])


def krang():
    _, body = body_values()
    robot = kr.load(kr.frames_path("krang_wheeled"))
    values = wheeled_values(body)
    fn = kr.derive(robot).numeric(values)
    lqr = control.lqr_balance(fn, q0=np.zeros(robot.nj))
    wheels = np.isin(lqr.motors, ["wr", "wl"])
    lower, upper = np.where(wheels, -WHEEL_LIMIT, lqr.u_eq - BODY_MARGIN), np.where(wheels, WHEEL_LIMIT, lqr.u_eq + BODY_MARGIN)
    return robot, values, fn, lqr, lower, upper


def fall_event(lqr):
    return kr.simulation.event(lambda t, q, qd: abs(lqr.pitch_error(q)) - FALL, terminal=True, name="fall")


def single_runs(fn, lqr, lower, upper):
    print("(a) a 30 N push at the torso for 0.2 s, one plant: the model itself")
    mpc = balance_mpc(lqr, horizon=10, dt=0.05, limits=(lower, upper))
    x0 = np.concatenate([lqr.q_eq, np.zeros(fn.m)])
    times = np.linspace(0.0, T_END, int(T_END * 50) + 1)
    rows = {}
    for name, controller in (("LQR as designed", lqr), ("LQR saturated", Saturated(lqr, lower, upper)), ("MPC", mpc)):
        pushed = Pushed(controller, fn)
        start = time.perf_counter()
        result = kr.simulate(fn, None, x0, (0.0, T_END), pushed, t_eval=times, events=fall_event(lqr), max_step=0.05, rtol=1e-6, atol=1e-8)
        seconds = time.perf_counter() - start
        applied = result.tau - pushed.applied(result)
        u = np.linalg.lstsq(lqr.actuation, applied.T, rcond=None)[0].T  # the motors' torques (exact: B has full column rank)
        error = lqr.pitch_error(result.q)
        upright = result.terminated_by != "fall"
        over = np.maximum(u - upper, lower - u).max()
        rows[name] = dict(max_pitch=np.abs(error).max(), final_pitch=error[-1], wheels=np.abs(u[:, :2]).max(), body=np.abs(u[:, 2:] - lqr.u_eq[2:]).max(),
                          over=over, upright=upright, seconds=seconds)  # fmt: skip
        print(f"  {name:16s} max |pitch error| {np.abs(error).max():.4f} rad, final {error[-1]:+.2e} rad, "
              f"{'upright' if upright else f'fell at t = {result.t[-1]:.2f} s'}; peak |u| wheels {np.abs(u[:, :2]).max():.2f} N m, "
              f"body joints {np.abs(u[:, 2:] - lqr.u_eq[2:]).max():.2f} N m beyond holding; beyond the limits by {max(over, 0.0):.2f} N m "
              f"({seconds:.1f} s)")
    ticks = mpc.stats
    print(f"  MPC: {ticks['ticks']} ticks of the last run, {ticks['seconds'] / max(ticks['ticks'], 1) * 1e3:.0f} ms a tick "
          f"(horizon {mpc.N} x {mpc.dt:g} s), {ticks['qp_failures']} QP failures")
    return rows, mpc


def identified(robot, values, seconds=6.0, noise=0.02, seed=0):
    """``kr.identify``'s base parameters of Krang's tree and their covariance, as a campaign distribution.

    ``kr.identify`` takes fixed-base trees, not the wheeled model; the wheeled
    model is the tree (``tree_robot``: posture x, y, theta, the wheels and the
    body, every joint free) projected on its independent speeds, a projection
    that is kinematic, so the tree's base parameters determine the wheeled
    dynamics.  The recording is synthetic: every joint of the tree along a sum
    of three sines (0.2-1 Hz), the torques of its inverse dynamics with noise
    (``noise`` of each joint's torque spread, normal), 6 s at 200 Hz.
    """
    from kanerobot.campaign import MultivariateNormal
    from kanerobot.dynamics.wheeled import tree_robot

    tree = kr.derive(tree_robot(robot))
    known = {name: value for name, value in values.items() if name in set(tree.parameters)}
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, seconds, int(seconds * 200) + 1)[:, None]
    a, w, phase = rng.uniform(0.2, 0.6, (3, tree.n)), 2 * np.pi * rng.uniform(0.2, 1.0, (3, tree.n)), rng.uniform(0, 2 * np.pi, (3, tree.n))
    q = sum(a[k] * np.sin(w[k] * t + phase[k]) for k in range(3))
    qd = sum(a[k] * w[k] * np.cos(w[k] * t + phase[k]) for k in range(3))
    qdd = sum(-a[k] * w[k] ** 2 * np.sin(w[k] * t + phase[k]) for k in range(3))
    tau = tree.numeric(known).inverse_dynamics(q, qd, qdd)
    tau = tau + noise * tau.std(axis=0) * rng.standard_normal(tau.shape)
    result = kr.identify(tree, {"t": t[:, 0], "q": q, "qd": qd, "qdd": qdd, "tau": tau}, known, friction=False)
    return MultivariateNormal.from_identification(result), result


def pushed_start(fn, lqr):
    """The state right after a 6 N s impulse at the torso: ``qd_a = A_a^-1 J_3^T (F dt)``."""
    impulse = fn.jacobian("3", lqr.q_eq)[:3].T @ (PUSH * PUSH_DURATION)
    return np.concatenate([lqr.q_eq, np.linalg.solve(fn.mass_matrix(lqr.q_eq), impulse)])


def campaigns(robot, values, fn, lqr, mpc, lower, upper, runs):
    start = time.perf_counter()
    plants, _ = identified(robot, values)
    spread = np.sqrt(np.diag(plants.covariance)) / np.maximum(np.abs(plants.mean), 1e-9)
    print(f"\n(b) campaign: {runs} plants from kr.identify's covariance of Krang's {len(plants.names)} base parameters "
          f"(relative standard deviation {np.median(spread):.1e} median, {spread.max():.1e} largest; "
          f"{time.perf_counter() - start:.0f} s), a 6 N s impulse at the torso")
    limited = dataclasses.replace(robot, limits={label: kr.robot.description.JointLimits(effort=float(max(-lo, hi)))
                                                 for label, lo, hi in zip(lqr.motors, lower, upper)})  # fmt: skip
    x0 = pushed_start(fn, lqr)
    out = {}
    for name, controller in (("LQR as designed", lqr), ("LQR saturated", Saturated(lqr, lower, upper)), ("MPC", mpc)):
        start = time.perf_counter()
        table = kr.campaign(kr.derive(limited), values, controller, runs=runs, sample={"identified": plants}, t_span=(0.0, T_END),
                            x0=x0, samples=61, events=[fall_event(lqr)], physical=False, max_step=0.05, rtol=1e-6, atol=1e-8)  # fmt: skip
        seconds = time.perf_counter() - start
        ok = table[table["status"] == "ok"]
        upright = float((~ok["fell"]).mean()) if len(ok) else float("nan")
        out[name] = dict(upright=upright, failed=int((table["status"] != "ok").sum()), peak=float(ok["peak_torque"].max()),
                         within=int(ok["within_limits"].sum()), seconds=seconds)  # fmt: skip
        print(f"  {name:16s} upright {upright:.0%} of {len(ok)} runs ({out[name]['failed']} failed); peak |tau| "
              f"{ok['peak_torque'].median():.1f} N m median, {ok['peak_torque'].max():.1f} max (the spine's and torso's holding "
              f"torques, about 100 N m, are the largest); the motors within their limits in {out[name]['within']} runs; "
              f"{seconds:.0f} s, {ok['wall_time'].mean():.1f} s a run")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=4, help="runs per controller in the campaign (200 for the full one)")
    args = parser.parse_args(argv)
    robot, values, fn, lqr, lower, upper = krang()
    rows, mpc = single_runs(fn, lqr, lower, upper)
    table = campaigns(robot, values, fn, lqr, mpc, lower, upper, args.runs) if args.runs > 0 else {}
    return {"single": rows, "campaign": table}


if __name__ == "__main__":
    main()
