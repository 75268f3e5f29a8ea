"""The Whipple bicycle of the benchmark of Meijaard, Papadopoulos, Ruina and Schwab (2007), derived by kanerobot.

Nothing is typed in from the paper but its 27 parameters (table 1,
:data:`BENCHMARK`): the bicycle is a kanerobot robot (:func:`bicycle`), a
tree of joints on the ground

    x, y (the rear contact point), yaw, roll, pitch (the rear frame B and
    rider, about the rear axle), rear (the rear wheel R), steer (the front
    frame H, about the steer axis), front (the front wheel F)

in the paper's axes (x forward, y to the right, z down, gravity along +z),
its two wheels rolling discs on the ground (:class:`~kanerobot.dynamics.rolling_disc.RollingDisc`):
five velocity constraints (the rear wheel touches the ground by
construction, its contact row vanishes), the independent speeds those of
roll, rear wheel and steer.  The front wheel's contact fixes the pitch
(:func:`upright`, :meth:`RollingDisc.solve_contact
<kanerobot.dynamics.rolling_disc.RollingDisc.solve_contact>` for any
configuration).  The dynamics are the tree's, by Kane's method (or any
engine), projected on the independent speeds.

:func:`state_matrix` linearises the motion about the steady, upright,
straight run at forward speed ``v`` (the rear wheel spinning at
``-v/rR``: a steady motion, not an equilibrium) by
:func:`kanerobot.control.linearize`; the states are roll, steer, roll rate
and steer rate.  Its eigenvalues are the paper's table 2.

Run ``python examples/bicycle/whipple.py`` for the eigenvalues at 0 to 10 m/s
and the weave and capsize speeds.
"""

import functools

import numpy as np
import sympy

import kanerobot as kr
from kanerobot.control import linearize
from kanerobot.dynamics.constrained import ConstrainedModel
from kanerobot.dynamics.rolling_disc import RollingDisc
from kanerobot.robot.description import Base, GeneralPlacement

#: The benchmark's parameters (Meijaard et al. 2007, table 1), SI units.
BENCHMARK = {
    "w": 1.02, "c": 0.08, "lam": np.pi / 10, "g": 9.81,
    "rR": 0.3, "mR": 2.0, "IRxx": 0.0603, "IRyy": 0.12,
    "xB": 0.3, "zB": -0.9, "mB": 85.0, "IBxx": 9.2, "IByy": 11.0, "IBzz": 2.8, "IBxz": 2.4,
    "xH": 0.9, "zH": -0.7, "mH": 4.0, "IHxx": 0.05892, "IHyy": 0.06, "IHzz": 0.00708, "IHxz": -0.00756,
    "rF": 0.35, "mF": 3.0, "IFxx": 0.1405, "IFyy": 0.28,
}  # fmt: skip

#: The joints, root first; the independent speeds; the joint the front contact fixes.
JOINTS = ("x", "y", "yaw", "roll", "pitch", "rear", "steer", "front")
INDEPENDENT = ("roll", "rear", "steer")
PITCH = "pitch"

_I3 = sympy.eye(3)


def _rot_y(angle):
    c, s = sympy.cos(angle), sympy.sin(angle)
    return sympy.Matrix([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def _link(m, com, inertia):
    """SYMORO's parameters of a body: inertia about the frame origin, first moments, mass (frame axes)."""
    com = sympy.Matrix(com)
    J = inertia + m * ((com.T * com)[0] * _I3 - com * com.T)
    names = {"XX": (0, 0), "XY": (0, 1), "XZ": (0, 2), "YY": (1, 1), "YZ": (1, 2), "ZZ": (2, 2)}
    out = {key: sympy.expand(J[i, j]) for key, (i, j) in names.items()}
    out.update(MX=m * com[0], MY=m * com[1], MZ=m * com[2], M=m)
    return out


def bicycle():
    """The Whipple bicycle as a kanerobot robot, its parameters the symbols of :data:`BENCHMARK`.

    Frames in the paper's reference configuration (every joint 0): the rear
    contact at the origin, the rear wheel's centre at ``(0, 0, -rR)`` (the
    pitch and rear-wheel frames), the steer axis through ``(w + c, 0, 0)``
    tilted back by ``lam`` (the steer frame's z, pointing down), the front
    wheel's centre at ``(w, 0, -rF)``; the wheels' axles along y.

    Returns
    -------
    Robot
    """
    s = {name: sympy.Symbol(name) for name in BENCHMARK}
    I, Rs = _I3.tolist(), _rot_y(s["lam"])
    steer_origin = sympy.Matrix([s["w"] + s["c"], 0, s["rR"]])  # in the pitch frame, whose origin is (0, 0, -rR)
    front_centre = Rs.T * sympy.Matrix([-s["c"], 0, -s["rF"]])  # from the steer origin, in the steer frame

    def frame(label, parent, sigma, R0, P, axis):
        return kr.Frame(label, parent, sigma, 1, GeneralPlacement(R0=R0, P=P, axis=axis, q=label))

    frames = [
        frame("x", "0", 1, I, [0, 0, 0], [1, 0, 0]),
        frame("y", "x", 1, I, [0, 0, 0], [0, 1, 0]),
        frame("yaw", "y", 0, I, [0, 0, 0], [0, 0, 1]),
        frame("roll", "yaw", 0, I, [0, 0, 0], [1, 0, 0]),
        frame("pitch", "roll", 0, I, [0, 0, -s["rR"]], [0, 1, 0]),
        frame("rear", "pitch", 0, I, [0, 0, 0], [0, 1, 0]),
        frame("steer", "pitch", 0, Rs.tolist(), list(steer_origin), [0, 0, 1]),
        frame("front", "steer", 0, Rs.T.tolist(), list(front_centre), [0, 1, 0]),
    ]
    IB = sympy.Matrix([[s["IBxx"], 0, s["IBxz"]], [0, s["IByy"], 0], [s["IBxz"], 0, s["IBzz"]]])
    IH = sympy.Matrix([[s["IHxx"], 0, s["IHxz"]], [0, s["IHyy"], 0], [s["IHxz"], 0, s["IHzz"]]])
    dynamics = {
        "pitch": _link(s["mB"], [s["xB"], 0, s["zB"] + s["rR"]], IB),
        "rear": _link(s["mR"], [0, 0, 0], sympy.diag(s["IRxx"], s["IRyy"], s["IRxx"])),
        "steer": _link(s["mH"], Rs.T * sympy.Matrix([s["xH"] - s["w"] - s["c"], 0, s["zH"]]), Rs.T * IH * Rs),
        "front": _link(s["mF"], [0, 0, 0], sympy.diag(s["IFxx"], s["IFyy"], s["IFxx"])),
    }
    for label in dynamics:
        dynamics[label].update(IA=0, FV=0, FS=0)
    return kr.Robot.create(
        "whipple", frames, links=list(dynamics), dynamics=dynamics,
        base=Base(G=sympy.ImmutableMatrix([0, 0, s["g"]])),
    )  # fmt: skip


def constraint(robot=None):
    """Both wheels rolling discs on the ground ``z = 0`` (normal ``-z``: up in the paper's axes)."""
    robot = robot or bicycle()
    return RollingDisc(robot, {"rear": sympy.Symbol("rR"), "front": sympy.Symbol("rF")}, normal=(0, 0, -1), independent=INDEPENDENT)


@functools.lru_cache(maxsize=4)
def model(method="kane"):
    """The bicycle's constrained models by ``method`` (derived once)."""
    robot = bicycle()
    return ConstrainedModel(robot, method, constraint(robot))


@functools.lru_cache(maxsize=4)
def numeric(method="kane", backend="numpy"):
    """The numeric models with the benchmark's values."""
    return model(method).numeric(BENCHMARK, backend=backend, physical=False)


def configuration(fn, roll=0.0, steer=0.0, guess=0.0):
    """Every joint variable with the given roll and steer, the pitch solved from the front contact."""
    q = np.zeros(len(JOINTS))
    q[JOINTS.index("roll")], q[JOINTS.index("steer")], q[JOINTS.index(PITCH)] = roll, steer, guess
    return fn.model.constraint.solve_contact(fn.values_by_name, q, [PITCH])


def state_matrix(v, fn=None, **options):
    """The 4x4 state matrix of the linearised roll and steer dynamics at forward speed ``v`` (m/s).

    States (roll, steer, roll rate, steer rate), about the steady upright
    straight run: every joint 0, the rear wheel at ``-v/rR`` (rolling
    forward), roll and steer rates 0.  ``options`` go to
    :func:`kanerobot.control.linearize` (default: central differences of
    order 8, relative step 1e-2: the derivatives to about 1e-13).

    Returns
    -------
    numpy.ndarray, shape (4, 4)
    """
    fn = fn or numeric()
    q0 = configuration(fn)
    speeds = np.zeros(len(INDEPENDENT))
    speeds[INDEPENDENT.index("rear")] = -v / BENCHMARK["rR"]
    options = {"order": 8, "step": 1e-2} | options
    A, _ = linearize(fn, q0, qd_eq=speeds, solve=functools.partial(_on_ground, fn), **options)
    keep = [INDEPENDENT.index("roll"), INDEPENDENT.index("steer")]
    keep = keep + [len(INDEPENDENT) + k for k in keep]
    return A[np.ix_(keep, keep)]


def _on_ground(fn, qs):
    """Configurations touching the ground: the pitch of each solved (a batch)."""
    return fn.model.constraint.solve_contact(fn.values_by_name, qs, [PITCH])


def eigenvalues(v, fn=None):
    """The four eigenvalues at forward speed ``v``, sorted by real part."""
    return np.sort_complex(np.linalg.eigvals(state_matrix(v, fn)))


def stability_speeds(fn=None):
    """``(weave, capsize)``: the speeds where the weave pair's real part and the capsize mode cross zero (brentq)."""
    from scipy.optimize import brentq

    fn = fn or numeric()

    def weave(v):
        z = eigenvalues(v, fn)
        return z[np.abs(z.imag) > 1e-6].real.max()

    def capsize(v):
        z = eigenvalues(v, fn)
        real = z[np.abs(z.imag) <= 1e-6].real
        return real[np.argmin(np.abs(real))]

    return brentq(weave, 3.0, 5.0, xtol=1e-14), brentq(capsize, 5.5, 7.0, xtol=1e-14)


def main():
    fn = numeric()
    for v in range(11):
        print(f"v = {v:2d} m/s: " + "  ".join(f"{z.real:+.14f}{z.imag:+.14f}j" for z in eigenvalues(v, fn)))
    weave, capsize = stability_speeds(fn)
    print(f"self-stable from the weave speed {weave:.14f} m/s to the capsize speed {capsize:.14f} m/s")


if __name__ == "__main__":
    main()
