"""Acrobot swing-up by direct collocation: only the elbow is driven.

The acrobot (``acrobot.toml`` in this folder: two 1 kg, 1 m uniform rods in
the vertical plane, the shoulder unactuated) starts hanging at rest and
must end upright at rest (``th1 = pi``, ``th2 = 0``) in 4 s, with the
least ``integral of u^2 dt`` under an elbow torque limit of 15 N m, the
elbow within +-2.5 rad and both joints below 8 rad/s (without the last two
the optimum found whirls the elbow through more than a turn at 15 rad/s, a
motion the intervals resolve poorly: collocation error 0.3 rad).  The
actuation ``B = [0; 1]`` is the same device that leaves Krang's pitch
unactuated (``examples/optimal/krang_reach.py``): the collocation has one
control for two speeds, and the shoulder swings by the coupling alone.

Why the acrobot and not a cart-pole: it needs no prismatic joint or new
mechanism, only a two-line frames file, and its single torque on a chain of
revolute joints is the hard case (the cart-pole's actuated cart is a
simpler, nearly fully actuated problem at low speed); it is the classic
benchmark of underactuated swing-up (Spong 1995).

The solution's torque is re-simulated by ``kr.simulate`` (C backend, numpy
without a compiler), open loop and with a light PD on the elbow only
(there is no torque at the shoulder to correct it); the upright is unstable,
so the open-loop error grows from the collocation error towards the end.

Run from the repository:
    python examples/optimal/swing_up.py [--fast] [OUTPUT_FOLDER]     # default ./swing_up
"""

import shutil
import sys
from pathlib import Path

import numpy as np

import kanerobot as kr
from kanerobot.codegen import compiled
from kanerobot.optimal import collocate

HERE = Path(__file__).resolve().parent
DURATION = 4.0
EFFORT = 15.0
LIMITS = {"1": {"velocity": 8.0}, "2": {"effort": EFFORT, "velocity": 8.0, "lower": -2.5, "upper": 2.5}}


def acrobot():
    """The acrobot's numeric model (numpy, collocated) and the plant (C where a compiler is found)."""
    robot = kr.load(HERE / "acrobot.toml")
    m, L = 1.0, 1.0
    values = {"L1": L, "G3": -9.81}
    for k in ("1", "2"):  # uniform rods along -z of their frames: inertia about the joint m L^2 / 3
        values.update({f"M{k}": m, f"MX{k}": 0.0, f"MZ{k}": -m * L / 2, f"YY{k}": m * L**2 / 3,
                       f"IA{k}": 0.0, f"FV{k}": 0.0, f"FS{k}": 0.0})  # fmt: skip
    model = kr.derive(robot)
    values = {name: values[name] for name in model.parameters}
    backend = "c" if any(shutil.which(name) for name in compiled.COMPILERS) else "numpy"
    return robot, model.numeric(values, backend="numpy"), model.numeric(values, backend=backend)


def main(output="swing_up", fast=False):
    _, fn, plant = acrobot()
    N = 30 if fast else 50
    actuation = (np.array([[0.0], [1.0]]), ["2"])  # the elbow's motor only
    result = collocate(fn, [0.0, 0.0], [np.pi, 0.0], duration=DURATION, intervals=N, actuation=actuation, limits=LIMITS)
    print(f"Acrobot swing-up in {DURATION} s, {N} Hermite-Simpson intervals, elbow torque only (limit {EFFORT} N m, "
          f"elbow within +-2.5 rad, speeds below 8 rad/s)")  # fmt: skip
    print(f"  {result.status} in {result.iterations} iterations, {result.solve_time:.2f} s of IPOPT; "
          f"objective {result.objective:.2f} N^2 m^2 s, peak |u| {np.abs(result.u).max():.2f} N m")  # fmt: skip
    open_loop = result.track(plant)
    pd = result.track(plant, kp=20.0, kd=5.0)
    print(f"  collocation error (estimate) {result.collocation_error:.2e} rad (local {result.local_error:.2e}); re-simulated ({plant.backend}): "
          f"open loop {open_loop.max_error:.2e} rad, with a PD on the elbow {pd.max_error:.2e} rad; "
          f"open loop ends {np.abs(open_loop.simulation.q[-1] - [np.pi, 0]).max():.2e} rad from upright")  # fmt: skip
    figures = []
    if output is not None:
        try:
            figures.append(figure(Path(output), result, open_loop))
            print(f"  figure {figures[0]}")
        except ImportError:
            print("  matplotlib is not installed: no figure")
    return {"result": result, "open_loop": open_loop.max_error, "pd": pd.max_error, "figures": figures}


def figure(folder, result, open_loop):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    times = np.linspace(0, result.duration, 401)
    q, _, _ = result.trajectory.sample(times)
    u = np.array([result.torque(t)[0] for t in times])
    fig, (ax_q, ax_u) = plt.subplots(2, 1, figsize=(8, 6), sharex=True, constrained_layout=True)
    ax_q.plot(times, q[:, 0], label="shoulder (unactuated)")
    ax_q.plot(times, q[:, 1], label="elbow")
    ax_q.plot(open_loop.simulation.t, open_loop.simulation.q, "k:", lw=0.8)
    ax_q.axhline(np.pi, color="grey", lw=0.6, ls="--")
    ax_q.set_ylabel("q [rad] (dotted: re-simulated open loop)")
    ax_q.legend(fontsize="small")
    ax_u.plot(times, u)
    ax_u.axhline(EFFORT, color="grey", lw=0.6, ls="--")
    ax_u.axhline(-EFFORT, color="grey", lw=0.6, ls="--")
    ax_u.set_ylabel("elbow torque [N m]")
    ax_u.set_xlabel("t [s]")
    fig.suptitle("Acrobot swing-up, minimum torque by direct collocation", fontsize="medium")
    path = folder / "swing_up.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--fast"]
    main(arguments[0] if arguments else "swing_up", fast="--fast" in sys.argv[1:])
