"""RX-90: minimum-torque and minimum-time point-to-point motions by direct collocation.

The RX-90 (``frames/rx90.par``) with random but physically consistent
parameters (seed 29; Coulomb friction set to 0, since ``FS sign(qd)`` is not
smooth and IPOPT needs smooth dynamics: the viscous friction and rotor
inertias stay) moves at rest from one configuration to another:

(a) in 1.5 s with the least ``integral of tau^T tau dt`` (Hermite-Simpson,
    20 intervals), under velocity limits of 2.5 rad/s and torque limits of
    40, 60, 40, 15, 15, 10 N m;
(b) in the least time under the same limits (a small torque integral added,
    1e-3 of it, so that the joints that do not limit the time have one best
    torque), warm-started from (a).

Each solution's torques are re-simulated by ``kr.simulate`` on the C
backend (numpy without a compiler): open loop, and with a light PD on the
collocated trajectory; the largest position error over the motion is
printed next to the collocation error the result estimates (the local
errors of the interpolated solution summed over the intervals).

Run from the repository:
    python examples/optimal/rx90_min_torque.py [--fast] [OUTPUT_FOLDER]     # default ./rx90_optimal

``--fast`` uses 12 intervals.  Figures (PNG) go to the output folder when
matplotlib is installed.
"""

import shutil
import sys
from pathlib import Path

import numpy as np

import kanerobot as kr
from kanerobot.codegen import compiled
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.optimal import collocate

Q0 = [0.0, -0.5, 1.2, 0.0, 0.5, 0.0]
Q1 = [1.2, 0.3, 0.4, 0.8, -0.6, 1.0]
EFFORT = [40.0, 60.0, 40.0, 15.0, 15.0, 10.0]
VELOCITY = 2.5


def rx90(seed=29):
    """The RX-90's model, its values (no Coulomb friction) and the plant on the C backend (numpy without a compiler)."""
    robot = kr.load(kr.frames_path("rx90"))
    values = random_parameters(robot, np.random.default_rng(seed))
    values.update({name: 0.0 for name in values if name.startswith("FS")})
    model = kr.derive(robot)
    backend = "c" if any(shutil.which(name) for name in compiled.COMPILERS) else "numpy"
    return robot, model.numeric(values, backend="numpy"), model.numeric(values, backend=backend)


def limits(robot):
    return {label: {"velocity": VELOCITY, "effort": effort} for label, effort in zip(robot.joint_labels, EFFORT)}


def report(name, result, plant):
    print(f"  {name}: {result.status} in {result.iterations} iterations, {result.solve_time:.2f} s of IPOPT; "
          f"T = {result.duration:.4f} s, objective {result.objective:.4f}")  # fmt: skip
    print(f"    peak |tau| {np.abs(result.u).max(axis=0).round(2).tolist()} N m (limits {EFFORT})")
    print(f"    peak |qd|  {np.abs(result.qd).max(axis=0).round(3).tolist()} rad/s (limit {VELOCITY})")
    open_loop = result.track(plant)
    pd = result.track(plant, kp=100.0, kd=20.0)
    print(f"    collocation error (estimate) {result.collocation_error:.2e} rad (local {result.local_error:.2e}); re-simulated ({getattr(plant, 'backend', '?')}): "
          f"open loop {open_loop.max_error:.2e} rad, with a light PD (kp 100, kd 20) {pd.max_error:.2e} rad")  # fmt: skip
    return {"result": result, "open_loop": open_loop.max_error, "pd": pd.max_error, "tracking": open_loop}


def figure(folder, runs):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(3, 2, figsize=(11, 8), sharex="col", constrained_layout=True)
    for column, (name, run) in enumerate(runs.items()):
        result = run["result"]
        times = np.linspace(0, result.duration, 301)
        q, qd, _ = result.trajectory.sample(times)
        u = np.array([result.torque(t) for t in times])
        simulated = run["tracking"].simulation
        for k in range(6):
            axes[0, column].plot(times, q[:, k], lw=1.2, label=f"q{k + 1}")
            axes[0, column].plot(simulated.t, simulated.q[:, k], "k:", lw=0.8)
            axes[1, column].plot(times, qd[:, k], lw=1.2)
            axes[2, column].plot(times, u[:, k], lw=1.2)
        axes[1, column].axhline(VELOCITY, color="grey", ls="--", lw=0.8)
        axes[1, column].axhline(-VELOCITY, color="grey", ls="--", lw=0.8)
        axes[0, column].set_title(f"{name}: T = {result.duration:.3f} s")
        axes[2, column].set_xlabel("t [s]")
    axes[0, 0].legend(fontsize="small", ncol=2)
    axes[0, 0].set_ylabel("q [rad] (dotted: re-simulated)")
    axes[1, 0].set_ylabel("qd [rad/s]")
    axes[2, 0].set_ylabel("tau [N m]")
    path = folder / "rx90_optimal.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(output="rx90_optimal", fast=False):
    robot, fn, plant = rx90()
    N = 12 if fast else 20
    print(f"RX-90 from {Q0} to {Q1} at rest, {N} Hermite-Simpson intervals")
    runs = {}
    torque = collocate(fn, Q0, Q1, duration=1.5, intervals=N, limits=limits(robot))
    runs["minimum torque"] = report("(a) minimum torque, T = 1.5 s", torque, plant)
    fastest = collocate(fn, Q0, Q1, duration=(0.2, 1.5), objective="time", regularization=1e-3, intervals=N,
                        limits=limits(robot), guess=torque)  # fmt: skip
    runs["minimum time"] = report("(b) minimum time", fastest, plant)
    if output is not None:
        try:
            print(f"  figure {figure(Path(output), runs)}")
        except ImportError:
            print("  matplotlib is not installed: no figure")
    return runs


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--fast"]
    main(arguments[0] if arguments else "rx90_optimal", fast="--fast" in sys.argv[1:])
