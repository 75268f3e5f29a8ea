"""An RX-90 reaching under torque limits: computed torque exceeds them, nonlinear MPC keeps within them.

The RX-90 (``frames/rx90.par``, random consistent bodies, seed 3, gravity
9.81 m/s^2 along -z0) moves every joint by 0.6 rad along a rest-to-rest
quintic in 0.8 s.  Computed torque (``control.ComputedTorque``, the default
gains) tracks it exactly on the exact model and asks for its peak torques;
the motors are then limited to 60 % of those (beyond what each joint needs
to hold the arm at the start and at the end, at least).  Printed for computed torque as
designed, computed torque saturated at the limits and the MPC
(``kanerobot.mpc.MPC`` tracking the quintic, N = 10 steps of 40 ms,
inputs along the reference from the model's inverse dynamics): the largest
and final tracking errors, the peak torque of each joint against its limit.

Run from the repository:
    python examples/mpc/rx90_reach.py          # a few seconds (the MPC's run 1 s: sampled, one solve per tick)
"""

import time

import numpy as np

import kanerobot as kr
from kanerobot import control
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.mpc import MPC

DURATION, T_END = 0.8, 2.0


class Saturated:
    """Computed torque clipped to the limits."""

    def __init__(self, controller, limit):
        self.controller, self.limit = controller, limit
        self.trajectory = controller.trajectory

    def __call__(self, t, q, qd):
        return np.clip(self.controller(t, q, qd), -self.limit, self.limit)


def arm():
    robot = kr.load(kr.frames_path("rx90"))
    values = random_parameters(robot, np.random.default_rng(3), friction=False, wrench=False)
    values["G3"] = 9.81  # the .par file's gravity G3 (along z0)
    return robot, kr.derive(robot).numeric(values)


def main():
    _robot, fn = arm()
    q0 = np.zeros(6)
    q1 = q0 + 0.6
    trajectory = control.quintic(q0, q1, DURATION)
    x0 = np.concatenate([q0, np.zeros(6)])
    times = np.linspace(0.0, T_END, 101)
    ct = control.ComputedTorque(fn, trajectory)
    reference = kr.simulate(fn, None, x0, (0.0, T_END), ct, t_eval=times, rtol=1e-8, atol=1e-10)
    peak = np.abs(reference.tau).max(axis=0)
    hold = np.maximum(np.abs(fn.gravity(q0)), np.abs(fn.gravity(q1)))  # what holding the start and the end needs
    limit = np.maximum(0.6 * peak, 1.2 * hold + 1e-3)
    print(f"RX-90, every joint 0 -> 0.6 rad in {DURATION:g} s; torque limits (60 % of computed torque's peaks) "
          f"{np.round(limit, 2).tolist()} N m")
    mpc = MPC(fn, trajectory, horizon=10, dt=0.04, Q=np.concatenate([np.full(6, 1e4), np.full(6, 10.0)]), R=1e-3, limits=limit)
    rows = {}
    for name, controller in (("computed torque", ct), ("computed torque saturated", Saturated(ct, limit)), ("MPC", mpc)):
        start = time.perf_counter()
        result = kr.simulate(fn, None, x0, (0.0, T_END), controller, t_eval=times, max_step=0.02, rtol=1e-6, atol=1e-8)
        error = trajectory.sample(result.t)[0] - result.q
        over = (np.abs(result.tau) - limit).max()
        rows[name] = dict(max_error=np.abs(error).max(), final_error=np.abs(error[-1]).max(), over=over)
        print(f"  {name:26s} tracking error max {np.abs(error).max():.4f} rad, final {np.abs(error[-1]).max():.1e} rad; "
              f"peak |tau| / limit {np.round(np.abs(result.tau).max(axis=0) / limit, 2).tolist()}; "
              f"{f'beyond the limits by {over:.2f} N m' if over > 1e-9 else 'within the limits'} ({time.perf_counter() - start:.1f} s)")
    print(f"  MPC: {mpc.stats['seconds'] / max(mpc.stats['ticks'], 1) * 1e3:.0f} ms a tick, {mpc.stats['qp_failures']} QP failures")
    return rows


if __name__ == "__main__":
    main()
