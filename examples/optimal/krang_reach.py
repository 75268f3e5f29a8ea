"""Krang on its wheels reaching with its right hand while balancing, by direct collocation.

Krang (``frames/krang_wheeled.toml``: 22 joints, 19 independent speeds, the
wheels rolling without slipping) with the body and wheels of
``examples/krang/krang_control.py`` (``body_values``, seed 17, and
``wheeled_values``) starts at rest in its upright equilibrium and must bring
its right hand (frame ``10r``) 0.2 m forward and 0.15 m up in 1.5 s, at rest
at the end with ``qdd = 0`` (a posture it can hold), with the least
``integral of u^T u dt``.  The pitch is not actuated: the wheel motors act
between the body and the wheels (``kanerobot.control.actuation_matrix``,
18 motors for 19 speeds), so the robot balances by rolling while the arm
moves.  Torque limits: 40 N m at each wheel, 150 N m at the waist and torso,
60 N m at each arm joint.  A path constraint keeps the pitch within
0.15 rad of upright (without it the least torque leans the body back by
0.5 rad, unloading the waist).  The waist, torso and left arm end where they
started; the right arm, the pitch, the wheels and the posture (x, y,
heading) are free at the end.

The collocation runs on the projected programs of the wheeled model (its
``mass_matrix`` and ``h`` as CasADi graphs, ``A_a qdd_a + H_a = B u`` at each
collocation point, ``dq/dt = G(q) qd_a`` from the rolling constraints'
speed map).  The solution is re-simulated by ``kr.simulate`` on the C
backend (numpy without a compiler): open loop the upright is unstable (the
error grows from the collocation error at the rate of the fastest unstable
pole), so the optimal torques are also run with the balancing LQR of
``kanerobot.control.lqr_balance`` acting on the error from the collocated
trajectory (``u = u*(t) - K (x - x*(t))``).

Run from the repository:
    python examples/optimal/krang_reach.py [--fast] [OUTPUT_FOLDER]     # default ./krang_reach

``--fast``: 8 trapezoidal intervals instead of 15 Hermite-Simpson ones.
"""

import shutil
import sys
import time
from pathlib import Path

import casadi
import numpy as np

import kanerobot as kr
from kanerobot import control
from kanerobot.codegen import compiled
from kanerobot.optimal import collocate, frame_position

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "krang"))
from krang_control import body_values, wheeled_values  # the example folder on the path above

REACH = np.array([0.2, 0.0, 0.15])
LEAN = 0.15
DURATION = 1.5
FREE = ("x", "y", "th", "wr", "wl", "1", "4r", "5r", "6r", "7r", "8r", "9r", "10r")


def effort(label):
    return 40.0 if label in ("wr", "wl") else 150.0 if label in ("2", "3") else 60.0


def krang():
    """Krang's numeric model (numpy, for the collocation) and the plant (C where a compiler is found)."""
    robot = kr.load(kr.frames_path("krang_wheeled"))
    _, body = body_values()
    model = kr.derive(robot)
    values = wheeled_values(body)
    backend = "c" if any(shutil.which(name) for name in compiled.COMPILERS) else "numpy"
    return robot, model.numeric(values, backend="numpy"), model.numeric(values, backend=backend)


def tracking_lqr(result, lqr):
    """``tau = B (u*(t) - K (x - x*(t)))``: the LQR of the upright on the error from the collocated motion."""

    def controller(t, q, qd):
        position, velocity, _ = result.trajectory(t)
        error = lqr.state(q, qd) - np.concatenate([position, velocity])
        return lqr.actuation @ (result.torque(t) - lqr.K @ error)

    return controller


def main(output="krang_reach", fast=False):
    start = time.perf_counter()
    robot, fn, plant = krang()
    labels = robot.joint_labels
    q0 = control.upright_equilibrium(fn, np.zeros(robot.nj))
    actuation = control.actuation_matrix(fn)
    hand = frame_position(fn, "10r")
    target = hand(q0).full().ravel() + REACH
    q1 = q0.copy()
    q1[[labels.index(label) for label in FREE]] = np.nan  # free at the end
    limits = {label: {"effort": effort(label)} for label in actuation[1]}
    scheme, N = ("trapezoidal", 8) if fast else ("hermite-simpson", 15)
    print(f"Krang on its wheels: right hand {REACH.tolist()} m away in {DURATION} s, balancing; {N} {scheme} intervals "
          f"({fn.nq} coordinates, {fn.nv} speeds, {actuation[0].shape[1]} motors; model {time.perf_counter() - start:.1f} s)")  # fmt: skip
    pitch = labels.index("1")

    def lean(q, qd, u):  # |pitch - upright| <= LEAN, as two smooth inequalities g <= 0
        return casadi.vertcat(q[pitch] - q0[pitch] - LEAN, q0[pitch] - q[pitch] - LEAN)

    result = collocate(fn, q0, q1, duration=DURATION, intervals=N, scheme=scheme, actuation=actuation, limits=limits,
                       path=[lean], final=[lambda q, qd: hand(q) - target], rest_acceleration=True)  # fmt: skip
    print(f"  {result.status} in {result.iterations} iterations, {result.solve_time:.1f} s of IPOPT; objective {result.objective:.2f}")
    print(f"  hand at the end: {np.abs(hand(result.q[-1]).full().ravel() - target).max():.1e} m from the target; pitch moved "
          f"{np.abs(result.q[:, pitch] - q0[pitch]).max():.3f} rad at most (path constraint {LEAN}); the axle rolled "
          f"{np.hypot(*(result.q[-1, :2] - q0[:2])):.3f} m")  # fmt: skip
    peak = np.abs(result.u).max(axis=0)
    print(f"  peak |u|: wheels {peak[:2].round(1).tolist()} N m (limit 40), waist and torso {peak[2:4].round(1).tolist()} (limit 150), "
          f"arms {peak[4:].max():.1f} (limit 60)")  # fmt: skip
    lqr = control.lqr_balance(fn, q0=np.zeros(robot.nj))
    open_loop = result.track(plant, samples=101)
    balanced = result.track(plant, samples=101, controller=tracking_lqr(result, lqr))
    print(f"  collocation error (estimate) {result.collocation_error:.2e} (local {result.local_error:.2e}); re-simulated ({plant.backend}): open loop "
          f"{open_loop.max_error:.2e}, with the balancing LQR on the error {balanced.max_error:.2e} (largest |q - q*| over the motion)")  # fmt: skip
    figures = []
    if output is not None:
        try:
            figures.append(figure(Path(output), result, balanced, open_loop, q0, pitch))
            print(f"  figure {figures[0]}")
        except ImportError:
            print("  matplotlib is not installed: no figure")
    print(f"done in {time.perf_counter() - start:.1f} s")
    return {"result": result, "open_loop": open_loop.max_error, "balanced": balanced.max_error, "figures": figures,
            "hand_error": float(np.abs(hand(result.q[-1]).full().ravel() - target).max())}  # fmt: skip


def figure(folder, result, balanced, open_loop, q0, pitch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    times = np.linspace(0, result.duration, 201)
    q = np.array([result.configuration(t) for t in times])
    u = np.array([result.torque(t) for t in times])
    fig, (ax_pitch, ax_arm, ax_u) = plt.subplots(3, 1, figsize=(8, 8), sharex=True, constrained_layout=True)
    ax_pitch.plot(times, q[:, pitch] - q0[pitch], lw=1.4, label="collocated")
    ax_pitch.plot(balanced.simulation.t, balanced.simulation.q[:, pitch] - q0[pitch], "k:", label="re-simulated, LQR on the error")
    ax_pitch.plot(open_loop.simulation.t, open_loop.simulation.q[:, pitch] - q0[pitch], "r--", lw=0.8, label="re-simulated, open loop")
    ax_pitch.set_ylabel("pitch - upright [rad]")
    ax_pitch.legend(fontsize="small")
    for k in range(15, 22):
        ax_arm.plot(times, q[:, k], lw=1.1)
    ax_arm.set_ylabel("right arm joints [rad]")
    ax_u.plot(times, u[:, 0], label="right wheel")
    ax_u.plot(times, u[:, 1], label="left wheel")
    ax_u.plot(times, u[:, 2], label="waist")
    ax_u.set_ylabel("u [N m]")
    ax_u.set_xlabel("t [s]")
    ax_u.legend(fontsize="small")
    fig.suptitle("Krang reaching while balancing: minimum torque by direct collocation", fontsize="medium")
    path = folder / "krang_reach.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--fast"]
    main(arguments[0] if arguments else "krang_reach", fast="--fast" in sys.argv[1:])
