"""Stand the wheel-legged quadruped on its wheels, then roll it under a constant wheel torque; print the constraint drift.

Run from the repository root: ``python examples/wheel_legged/roll.py`` (about a minute).

A PD on the six independent leg joints holds the stance from the start; at
``t = 1 s`` the four wheels get a constant torque and the robot rolls
forward.  The rolling rows hold by construction (the speeds are ``G(q)
qd_a``); the contact heights are kept by projection (the model is evaluated
at the integrated configuration with the legs' coordinates solved from the
contact, :class:`~kanerobot.dynamics.rolling_disc.RollingDiscDynamics`).
Printed: the largest contact height of the integrated configuration (the
integrator's drift, before the projection), of the projected one, and
``|J qd|``, the rolling rows at the projected configuration and ``G qd_a``.
"""

import pathlib
import sys

import numpy as np
import sympy

import kanerobot as kr
from kanerobot.dynamics.constrained import batched_function, configuration

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # wheel_legged.py beside this script
import wheel_legged as wl

KP, KD = 400.0, 40.0  # the legs' PD about the stance, on top of the gravity compensation (N m / rad, N m s / rad)
KP_WHEEL, KD_WHEEL = 20.0, 2.0  # the wheels' brake (standing) and synchronisation (rolling)
WHEEL_TORQUE = 0.5  # N m, each wheel, from t = 1 s


def run(seconds=5.0, seed=0, rtol=1e-9, atol=1e-11, backend="numpy", method="DOP853"):
    """``(results, drift)``: the two runs (standing, rolling) and ``{"raw height", "height", "rolling"}``, the largest
    over the run, with its ``"t"``, ``"q"``, ``"qd"`` and ``"nfev"``."""
    tree = wl.robot()
    model = wl.model(tree)
    values = wl.values(tree, seed)
    fn = model.numeric(values, backend=backend)
    c = model.constraint
    q0 = wl.standing(c, values)
    labels = list(model.independent)
    legs = [labels.index(label) for label in wl.LEG_INPUTS]  # in qd_a and tau_a
    wheels = [k for k, label in enumerate(labels) if label.startswith("wh_")]
    driven = [k for k, label in enumerate(labels) if label != "0"]  # tau's order: the independent joints
    reference = np.array([q0[7 + list(tree.joint_labels).index(label)] for label in wl.LEG_INPUTS])
    columns = [7 + list(tree.joint_labels).index(label) for label in wl.LEG_INPUTS]
    assert len(driven) == len(labels)  # the base is dependent here: qd_a and tau_a line up

    spins = [7 + list(tree.joint_labels).index(labels[k]) for k in wheels]

    def controller(t, q, qd):
        tau = fn.gravity(q)  # holds the stance still: the model's own Q_a on the 10 independent joints
        tau[legs] += KP * (reference - q[columns]) - KD * qd[legs]
        angle, rate = q[spins], qd[wheels]
        if t < 1.0:  # standing: the wheels braked at their starting angle
            tau[wheels] += -KP_WHEEL * (angle - q0[spins]) - KD_WHEEL * rate
        else:  # rolling: the constant torque, the wheels kept together (else the feet drift apart and the legs splay)
            tau[wheels] += WHEEL_TORQUE - KP_WHEEL * (angle - angle.mean()) - KD_WHEEL * (rate - rate.mean())
        return tau[driven]

    x0 = np.concatenate([q0, np.zeros(model.dof)])
    results = []
    for span in ((0.0, 1.0), (1.0, seconds)):  # two runs: the torque steps at 1 s (a step after a long rest would leap over it)
        results.append(kr.simulate(fn, None, x0, span, controller, t_eval=np.linspace(*span, int(10 * (span[1] - span[0])) + 1),
                                   method=method, rtol=rtol, atol=atol))
        x0 = np.concatenate([results[-1].q[-1], results[-1].qd[-1]])
    q = np.concatenate([r.q for r in results])
    qd = np.concatenate([r.qd for r in results])
    J = batched_function(list(c.J), [configuration(tree)], {sympy.Symbol(k): v for k, v in values.items()})
    rolling = np.abs(np.einsum("nij,nj->ni", J(q).reshape(len(q), *c.J.shape), fn.velocities(q, qd)))
    drift = {"raw height": max(float(np.max(r.monitors["contact_height"])) for r in results),
             "height": float(np.max(fn.contact_height(q))), "rolling": float(rolling.max()),
             "t": np.concatenate([r.t for r in results]), "q": q, "qd": qd, "nfev": sum(r.nfev for r in results)}  # fmt: skip
    return results, drift


def main():
    _, drift = run()
    q, t = drift["q"], drift["t"]
    print(f"{len(t)} outputs over {t[-1]:g} s, {drift['nfev']} evaluations; base x from {q[0, 0]:.3f} to {q[-1, 0]:.3f} m, "
          f"height {q[0, 2]:.3f} to {q[-1, 2]:.3f} m")
    print(f"largest contact height, integrated q (drift before projection): {drift['raw height']:.2e} m")
    print(f"largest contact height, projected q:                           {drift['height']:.2e} m")
    print(f"largest |J qd| (rolling rows):                                 {drift['rolling']:.2e} m/s")


if __name__ == "__main__":
    main()
