"""Krang under control: computed torque on fixed wheels, and balancing on its wheels.

(a) Krang on fixed wheels (``frames/krang.toml``, 17 joints) moves both arms
    along a rest-to-rest quintic while the pitch, spine and torso hold still.
    The controller is computed torque built on the Newton-Euler model; it is
    cross-validated (``kr.cross_validate``) against two plants:

    1. the Kane model with the same parameters: the models are the same, so
       the tracking error is the integrator's (about 1e-7 or less) and the
       disagreement between the models is round-off;
    2. a plant 10 % heavier than the controller believes (every link's mass,
       first moments and inertia scaled by 1.1): a bounded tracking error,
       and inertias and torques that disagree by about 10 %.

(b) Krang on its wheels (``frames/krang_wheeled.toml``: the same body on two
    wheels, 19 independent speeds) balanced by an LQR linearised from the
    model (``kanerobot.control.lqr_balance``), released 0.05 rad away from
    upright; and the same start without control, which falls.

(c) The same robot on a 10-degree slope (gravity tilted in the ground's
    frame): the LQR's equilibrium is where the wheel motors hold it still
    (the whole centre of mass above the wheels' contacts, the body leaning
    uphill); pushed 0.1 rad, it is upright again and has not rolled away
    after 10 s.  Without feedback it falls.

(d) The same robot from a URDF laid out as a lab's own (``krang_lab.urdf``:
    the root link is the body, the wheels hang on it), loaded with
    ``floating=True`` and its wheels declared as discs: the base gets x, y,
    heading and pitch joints (``kanerobot.robot.axle_base``), the same
    upright pitch as (b), and the LQR built the same way holds it 10 s
    after a 0.1 rad push.  No ``.toml`` written by hand.

The body's parameters are random but physically consistent (seed 17, the
same body in (a) and (b)); the wheels are 5 kg discs of radius 0.25 m, 0.6 m
apart.  Figures (PNG) go to the output folder when matplotlib is installed.

Run from the repository:
    python examples/krang/krang_control.py [--fast] [OUTPUT_FOLDER]     # default ./krang_control

``--fast`` runs shorter motions with fewer samples.  Either takes 20-30 s,
most of it deriving (and compiling) the Kane model of (a).
"""

import dataclasses
import sys
import time
from pathlib import Path

import numpy as np
import sympy

import kanerobot as kr
from kanerobot import control
from kanerobot.dynamics.parameters import random_parameters

HERE = Path(__file__).resolve().parent
INERTIAL = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")


def body_values(seed=17):
    """Random consistent parameters of Krang's body, gravity 9.81 m/s^2 down z."""
    robot = kr.load(kr.frames_path("krang"))
    values = random_parameters(robot, np.random.default_rng(seed), friction=False, wrench=False)
    values["G3"] = -9.81
    return robot, values


def heavier(values, factor=1.1):
    """Every link ``factor`` times as dense: mass, first moments and inertia scaled."""
    out = dict(values)
    for key, value in values.items():
        for name in INERTIAL:
            rest = key[len(name):]
            if key.startswith(name) and rest and rest[0].isdigit():
                out[key] = value * factor
    return out


def wheeled_values(body, radius=0.25, track=0.6, mass=5.0, rotor=0.01):
    """The body's values and two balanced wheels (uniform discs: centre of mass on the axle)."""
    values = dict(body)
    values.update(R=radius, b=track)
    for wheel in ("wr", "wl"):
        values.update({f"{name}{wheel}": 0.0 for name in ("XY", "XZ", "YZ", "MX", "MY", "MZ", "FV", "FS")})
        values.update({f"M{wheel}": mass, f"XX{wheel}": mass * radius**2 / 4, f"ZZ{wheel}": mass * radius**2 / 4,
                       f"YY{wheel}": mass * radius**2 / 2, f"IA{wheel}": rotor})  # fmt: skip
    return values


def matplotlib_available():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def tracking(output, fast):
    print("(a) Krang on fixed wheels: both arms along a quintic under computed torque (Newton-Euler model)")
    robot, values = body_values()
    ne, kane = kr.derive(robot), kr.derive(robot, "kane")
    labels = robot.joint_labels
    q0 = np.zeros(robot.nj)
    q1 = q0.copy()
    arms = [k for k, label in enumerate(labels) if label[-1] in "lr"]
    q1[arms] = np.resize([0.6, -0.5, 0.4, 0.8, -0.6, 0.5, -0.4], len(arms))
    duration = 1.0 if fast else 2.0
    trajectory = control.quintic(q0, q1, duration)
    t_span = (0.0, duration + (0.5 if fast else 1.0))
    samples = 31 if fast else 121
    plot = output if output is not None and matplotlib_available() else None
    results = {}
    for name, plant_values in (("kane", values), ("kane_10pct_heavier", heavier(values))):
        start = time.perf_counter()
        cv = kr.cross_validate(ne, kane, "computed_torque", trajectory, controller_values=values, plant_values=plant_values,
                               t_span=t_span, samples=samples, plot=plot, prefix=f"krang_ct_{name}",
                               rtol=1e-10, atol=1e-12)  # fmt: skip
        s = cv.summary()
        results[name] = s
        print(f"  plant: Kane model{' 10 % heavier' if 'heavier' in name else ', same parameters'}  "
              f"({time.perf_counter() - start:.1f} s)")
        print(f"    tracking error   max {s['max_tracking_error']:.3e}  rms {s['rms_tracking_error']:.3e}  "
              f"final {s['final_tracking_error']:.3e} rad")
        print(f"    max |tau|        {s['max_abs_tau']:.1f} N m")
        print(f"    models disagree  A {s['max_mass_matrix_disagreement']:.3e} ({s['relative_mass_matrix_disagreement']:.1%}), "
              f"H {s['max_h_disagreement']:.3e} ({s['relative_h_disagreement']:.1%}), "
              f"ID(plant motion) - tau {s['max_torque_disagreement']:.3e} N m")
        for path in cv.figures:
            print(f"    figure {path}")
    return results


def balancing(output, fast):
    print("\n(b) Krang on its wheels: balancing LQR linearised from the model")
    _, body = body_values()
    robot = kr.load(kr.frames_path("krang_wheeled"))
    fn = kr.derive(robot).numeric(wheeled_values(body))
    start = time.perf_counter()
    lqr = control.lqr_balance(fn, q0=np.zeros(robot.nj))
    pitch_column = robot.joint_labels.index("1")
    unstable = np.sort(lqr.open_loop_poles.real[lqr.open_loop_poles.real > 1e-9])
    print(f"  upright pitch q_imu = {lqr.q_eq[pitch_column]:+.4f} rad (centre of mass above the axle, the rest of the body at 0)")
    print(f"  state: {len(lqr.states)} (positions and rates of the wheels, pitch and 16 body joints; x, y, theta not fed back)")
    print(f"  inputs: {len(lqr.motors)} motor torques (2 wheels reacting on the pitch, 16 body joints), all in the LQR")
    print(f"  open loop: {len(unstable)} unstable poles, fastest {unstable.max():.2f} 1/s; "
          f"closed loop: slowest pole {lqr.closed_loop_poles.real.max():.3f} 1/s  ({time.perf_counter() - start:.1f} s)")
    x0 = np.concatenate([lqr.q_eq, np.zeros(fn.m)])
    x0[pitch_column] += 0.05
    t_end = 4.0 if fast else 8.0
    times = np.linspace(0.0, t_end, int(t_end * 50) + 1)
    closed = kr.simulate(fn, None, x0, (0.0, t_end), lqr, t_eval=times)
    error = lqr.pitch_error(closed.q)
    print("  closed loop, released 0.05 rad from upright:")
    print("     t [s]   pitch error [rad]   wheel torques [N m]")
    for t in np.arange(0.0, t_end + 1e-9, 0.5):
        k = int(np.argmin(np.abs(times - t)))
        print(f"    {times[k]:5.1f}   {error[k]:+.3e}          {closed.tau[k, 0]:+8.3f} {closed.tau[k, 1]:+8.3f}")
    late = np.abs(error[times >= t_end - 1.0]).max()
    print(f"  |pitch error| over the last second: {late:.2e} rad (below 1e-3: {late < 1e-3}); "
          f"wheels back within {np.abs(closed.q[-1, 3:5] - lqr.q_eq[3:5]).max():.1e} rad; "
          f"constraint residual {closed.monitors['constraint_residual'].max():.1e}")
    open_loop, fall_time = without_feedback(fn, lqr, x0, times)
    fell = fall_time is not None
    print("  open loop (constant torques u_eq, those of the equilibrium, no feedback): "
          + (f"falls, |pitch error| 0.5 rad at t = {fall_time:.2f} s" if fell else "did not fall"))
    figures = []
    if output is not None and matplotlib_available():
        figures.append(pitch_figure(Path(output), closed, error, open_loop, lqr))
        for path in figures:
            print(f"  figure {path}")
    return {"late_pitch_error": late, "open_loop_falls": fell, "fall_time": fall_time, "lqr": lqr, "figures": figures}


def without_feedback(fn, lqr, x0, times):
    """The same start under the equilibrium's constant torques only: the result and when the pitch error reaches
    0.5 rad (None if it does not)."""
    fall = kr.simulation.event(lambda t, q, qd: abs(lqr.pitch_error(q)) - 0.5, terminal=True, name="fall")
    open_loop = kr.simulate(fn, None, x0, (times[0], times[-1]), lqr.tau_eq, events=fall, t_eval=times)
    return open_loop, float(open_loop.events["fall"]["t"][0]) if open_loop.terminated_by == "fall" else None


def on_slope(robot, degrees):
    """``robot`` on ground tilted by ``degrees`` about its y axis: gravity ``G = (G1, G2, G3)`` in the ground's
    frame 0 (the chassis moves in the slope's plane; at heading 0 it faces uphill) and its values."""
    a = np.radians(degrees)
    tilted = dataclasses.replace(robot, base=dataclasses.replace(robot.base, G=sympy.ImmutableMatrix(sympy.symbols("G1 G2 G3"))))
    return tilted, {"G1": -9.81 * np.sin(a), "G2": 0.0, "G3": -9.81 * np.cos(a)}


def slope(output, fast, degrees=10.0, push=0.1):
    print(f"\n(c) Krang on a {degrees:g}-degree slope: balancing LQR, pushed {push:g} rad")
    _, body = body_values()
    flat = kr.load(kr.frames_path("krang_wheeled"))
    robot, gravity = on_slope(flat, degrees)
    fn = kr.derive(robot).numeric({**wheeled_values(body), **gravity})
    start = time.perf_counter()
    lqr = control.lqr_balance(fn, q0=np.zeros(robot.nj))  # the pitch where the wheel motors hold it still
    pitch_column = robot.joint_labels.index("1")
    flat_fn = kr.derive(flat).numeric(wheeled_values(body))
    lean = lqr.q_eq[pitch_column] - control.upright_equilibrium(flat_fn, np.zeros(robot.nj))[pitch_column]
    c = fn.center_of_mass(lqr.q_eq)
    print(f"  equilibrium: the body leans {lean:+.4f} rad from its flat-ground upright, the centre of mass "
          f"{(c[0] - lqr.q_eq[0]) / c[2]:.5f} = tan({np.degrees(np.arctan2(c[0] - lqr.q_eq[0], c[2])):.3f} deg) ahead of the axle per height: above "
          f"the contacts; the wheels' motors hold {lqr.u_eq[0]:+.2f} and {lqr.u_eq[1]:+.2f} N m ({time.perf_counter() - start:.1f} s)")
    x0 = np.concatenate([lqr.q_eq, np.zeros(fn.m)])
    x0[pitch_column] += push
    t_end = 10.0
    times = np.linspace(0.0, t_end, int(t_end * (10 if fast else 50)) + 1)
    closed = kr.simulate(fn, None, x0, (0.0, t_end), lqr, t_eval=times)
    error = lqr.pitch_error(closed.q)
    late = np.abs(error[times >= t_end - 2.0]).max()
    drift = np.abs(closed.q[:, 0] - lqr.q_eq[0]).max()
    print(f"  closed loop over {t_end:g} s: |pitch error| over the last 2 s {late:.2e} rad (below 1e-3: {late < 1e-3}); "
          f"the axle moved at most {drift:.3f} m along the slope and ends {closed.q[-1, 0] - lqr.q_eq[0]:+.1e} m from "
          f"where it started; constraint residual {closed.monitors['constraint_residual'].max():.1e}")
    open_loop, fall_time = without_feedback(fn, lqr, x0, times)
    fell = fall_time is not None
    print("  open loop (the equilibrium's torques, no feedback): "
          + (f"falls, |pitch error| 0.5 rad at t = {fall_time:.2f} s" if fell else "did not fall"))
    figures = []
    if output is not None and matplotlib_available():
        title = f"Krang balancing on a {degrees:g}-degree slope (LQR), pushed {push:g} rad"
        figures.append(pitch_figure(Path(output), closed, error, open_loop, lqr, title, "krang_slope_pitch.png"))
        print(f"  figure {figures[0]}")
    return {"late_pitch_error": late, "open_loop_falls": fell, "lean": lean, "drift": drift, "lqr": lqr, "figures": figures}


def lab_urdf(flat_lqr, push=0.1):
    """(d) Krang from a URDF laid out as a lab's (``krang_lab.urdf``: the body the root link, the wheels on it)."""
    print(f"\n(d) Krang from its URDF (krang_lab.urdf: the base link is the body, the wheels hang on it), pushed {push:g} rad")
    start = time.perf_counter()
    robot = kr.load(HERE / "krang_lab.urdf", floating=True, discs={"wr": 0.25, "wl": 0.25})
    fn = kr.derive(robot).numeric(robot.values)
    lqr = control.lqr_balance(fn, pitch="pitch")
    k = robot.joint_labels.index("pitch")
    same = abs(lqr.q_eq[k] - flat_lqr.q_eq[kr.load(kr.frames_path("krang_wheeled")).joint_labels.index("1")])  # q_imu
    print(f"  kr.load(..., floating=True, discs={{'wr': 0.25, 'wl': 0.25}}): the base gets joints "
          f"{', '.join(robot.joint_labels[:4])}; independent speeds {', '.join(fn.model.independent[:3])} and the body's")
    print(f"  upright pitch {lqr.q_eq[k]:+.6f} rad: (b)'s q_imu to {same:.1e}; motors {', '.join(lqr.motors[:2])} and the body's "
          f"(each wheel motor on its own joint: the wheels hang on the body) ({time.perf_counter() - start:.1f} s)")
    x0 = np.concatenate([lqr.q_eq, np.zeros(fn.m)])
    x0[k] += push
    closed = kr.simulate(fn, None, x0, (0.0, 10.0), lqr, t_eval=np.linspace(0.0, 10.0, 101))
    error = closed.q[:, k] - lqr.q_eq[k]
    late = np.abs(error[closed.t >= 8.0]).max()
    print(f"  closed loop over 10 s: |pitch error| over the last 2 s {late:.2e} rad (below 1e-3: {late < 1e-3}); "
          f"the axle ends {np.hypot(*(closed.q[-1, :2] - lqr.q_eq[:2])):.1e} m from where it started")
    return {"late_pitch_error": late, "equilibrium_difference": same, "lqr": lqr}


def pitch_figure(folder, closed, error, open_loop, lqr, title=None, name="krang_balance_pitch.png"):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    figure, (ax_pitch, ax_log, ax_tau) = plt.subplots(3, 1, figsize=(8, 7.5), sharex=True, constrained_layout=True)
    ax_pitch.plot(closed.t, error, lw=1.2, label="LQR")
    ax_pitch.plot(open_loop.t, lqr.pitch_error(open_loop.q), "--", lw=1.2, label="open loop (falls)")
    ax_pitch.set_ylim(-0.6, 0.6)
    ax_pitch.set_ylabel("pitch - upright [rad]")
    ax_pitch.legend(loc="best", fontsize="small")
    ax_log.semilogy(closed.t, np.maximum(np.abs(error), 1e-12), lw=1.2)
    ax_log.axhline(1e-3, color="grey", lw=0.8, ls=":")
    ax_log.set_ylabel("|pitch error| [rad]")
    ax_tau.plot(closed.t, closed.tau[:, 0], lw=1, label="right wheel")
    ax_tau.plot(closed.t, closed.tau[:, 1], lw=1, label="left wheel")
    ax_tau.set_ylabel("wheel torque [N m]")
    ax_tau.set_xlabel("t [s]")
    ax_tau.legend(loc="best", fontsize="small")
    figure.suptitle(title or "Krang balancing on its wheels (LQR), released 0.05 rad from upright", fontsize="medium")
    path = folder / name
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def main(output="krang_control", fast=False):
    start = time.perf_counter()
    if output is not None and not matplotlib_available():
        print("matplotlib is not installed: no figures (pip install matplotlib to get them)")
    results = {"tracking": tracking(output, fast)}
    results["balancing"] = balancing(output, fast)
    results["slope"] = slope(output, fast)
    results["lab_urdf"] = lab_urdf(results["balancing"]["lqr"])
    print(f"\ndone in {time.perf_counter() - start:.1f} s")
    return results


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--fast"]
    main(arguments[0] if arguments else "krang_control", fast="--fast" in sys.argv[1:])
