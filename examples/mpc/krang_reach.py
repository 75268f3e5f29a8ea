"""Krang reaching while balancing, under nonlinear MPC with torque limits, cross-validated against a heavier plant.

The motion is the one ``examples/optimal/krang_reach.py`` collocates (the
right hand 0.2 m forward and 0.15 m up in 1.5 s on the unactuated pitch,
the torques within 40 N m on the wheels, 150 on the waist and torso, 60 on
the arms).  The MPC (:class:`kanerobot.mpc.MPC`: multiple shooting, one
real-time iteration per 50 ms tick, the LQR's cost to go at the end of its
horizon) tracks it with the same limits on the motors' torques, then holds
the end posture; ``kr.cross_validate`` runs it against

1. the plant it was built on (the same parameters), and
2. a plant 10 % heavier than it believes (every link's mass, first moments
   and inertia times 1.1),

and prints for each the largest tracking error, the hand's distance to the
target at the end, the pitch's excursion, the peak motor torques against
their limits, and the model disagreement ``kr.cross_validate`` measures.

Run from the repository (about 2 minutes: the collocation 30-60 s, each
MPC run 20-40 s on two cores):

    python examples/mpc/krang_reach.py [--fast]     # --fast: the collocation on 8 trapezoidal intervals
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import kanerobot as kr
from kanerobot import control
from kanerobot.mpc import MPC

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "krang"))
sys.path.insert(0, str(HERE.parents[0] / "optimal"))
import krang_reach as collocated  # noqa: E402
from krang_control import heavier  # noqa: E402

HOLD = 1.0  # s after the reach, holding the end posture
HORIZON, DT = 10, 0.05


def main(fast=False):
    start = time.perf_counter()
    print("(a) the reach, by direct collocation (examples/optimal/krang_reach.py)")
    reach = collocated.main(None, fast=fast)
    result = reach["result"]
    robot, fn, _ = collocated.krang()
    values = dict(fn.values_by_name)
    B, motors = control.actuation_matrix(fn)
    limits = np.array([collocated.effort(label) for label in motors])
    mpc = MPC(fn, result.trajectory, horizon=HORIZON, dt=DT, actuation=B, motors=motors, limits=limits, q_ref=result.q[0])
    T = result.duration + HOLD
    x0 = np.concatenate([result.q[0], np.zeros(fn.m)])
    hand = collocated.frame_position(fn, "10r")
    target = hand(result.q[-1]).full().ravel()
    pitch = robot.joint_labels.index("1")
    print(f"\n(b) MPC (horizon {HORIZON} x {DT} s, one real-time iteration a tick, motors' torques within "
          f"{limits[:2].tolist()} N m on the wheels and {limits[2:].max():g} elsewhere) tracking it, then holding {HOLD:g} s")
    rows = {}
    for name, plant_values in (("same plant", values), ("plant 10 % heavier", heavier(values))):
        run_start = time.perf_counter()
        check = kr.cross_validate(fn, (kr.derive(robot), plant_values), mpc, result.trajectory, t_span=(0.0, T), x0=x0,
                                  samples=int(T / DT) + 1, max_step=DT)  # fmt: skip
        sim, summary = check.simulation, check.summary()
        u = np.linalg.lstsq(B, sim.tau.T, rcond=None)[0].T  # the motors' torques that acted (B has full column rank)
        over = float(np.max(np.abs(u) - limits, initial=-np.inf))
        hand_error = float(np.abs(hand(sim.q[-1]).full().ravel() - target).max())
        rows[name] = dict(max_error=summary["max_tracking_error"], hand_error=hand_error, over=over,
                          pitch=float(np.abs(sim.q[:, pitch] - result.q[0, pitch]).max()), seconds=time.perf_counter() - run_start)  # fmt: skip
        print(f"  {name:19s} max |q - q*| {summary['max_tracking_error']:.2e} rad; hand {hand_error * 1000:.1f} mm from the "
              f"target at t = {T:g} s; pitch within {rows[name]['pitch']:.3f} rad of upright; peak |u| "
              f"{np.abs(u).max(axis=0)[:2].round(1).tolist()} N m on the wheels, the motors "
              f"{'within' if over <= 1e-9 else 'OVER'} their limits (largest excess {over:+.2e} N m); {rows[name]['seconds']:.0f} s")  # fmt: skip
        print(f"  {'':19s} the models disagree by up to {summary.get('relative_mass_matrix_disagreement', 0.0):.1%} on A and "
              f"{summary.get('relative_h_disagreement', 0.0):.1%} on H along the run")  # fmt: skip
    print(f"done in {time.perf_counter() - start:.0f} s")
    return {"reach": reach, "runs": rows}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fast", action="store_true", help="collocate on 8 trapezoidal intervals")
    main(fast=parser.parse_args().fast)
