"""A wheel-legged quadruped: a floating base, four legs (hip abduction, hip flexion, knee) and a wheel on each foot.

The description is built here from Python (a ``.toml`` has no field for a
disc's radius): :func:`robot` gives the floating tree, :func:`constraint`
its rolling discs (:class:`~kanerobot.dynamics.rolling_disc.RollingDisc`:
12 rows, 3 per wheel), :func:`values` random physically consistent
inertias (:func:`~kanerobot.dynamics.parameters.random_parameters`) on
fixed lengths, :func:`standing` a configuration on the ground.

Independent speeds (10 = 22 speeds - 12 rows): the four wheels' spins and
six leg joints; the base's six and the six other leg joints follow.  With
the wheels held the legs and the ground make a parallel mechanism: the
base moves in 6 dof (its height and pitch by all the hips alone, or by all
the knees alone), so the six independent leg joints must move the base
without singularity: a diagonal pattern (front-left abduction and
flexion, front-right knee, rear-left abduction and knee, rear-right
flexion), the best-conditioned 12 x 12 dependent block of J at the stance
among the 924 choices of six leg joints (``examples/wheel_legged/README.md``).
The base's six speeds as the independent ones (every leg joint
dependent) is valid too, but leaves only the wheels actuated.
Every independent joint is an input; a PD on the six leg joints holds the
stance.  The contact heights are solved, along a simulation, for the
front-left knee, the front-right and rear-left flexions and the rear-right
knee (the nearest dependent joint of each leg).
"""

import numpy as np

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.dynamics.rolling_disc import RollingDisc, rolling_disc_model
from kanerobot.robot.description import GeneralPlacement

I3 = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]

#: Legs: name, sign of x (front +), sign of y (left +).
LEGS = (("fl", 1, 1), ("fr", 1, -1), ("rl", -1, 1), ("rr", -1, -1))

#: The lengths (m): half the body's length and width, the hip's offset, thigh, shank, wheel radius.
LENGTHS = {"LX": 0.3, "LY": 0.12, "LH": 0.06, "L1": 0.22, "L2": 0.22, "r": 0.07}

#: The independent leg joints (with the four wheels).
LEG_INPUTS = ("ha_fl", "hf_fl", "kn_fr", "ha_rl", "kn_rl", "hf_rr")
INDEPENDENT = LEG_INPUTS + ("wh_fl", "wh_fr", "wh_rl", "wh_rr")

#: The coordinates :func:`standing` solves from the four contact heights.
KNEES = ("kn_fl", "kn_fr", "kn_rl", "kn_rr")


def robot(name="wheel_legged", legs=LEGS):
    """The floating tree: per leg ``ha_<leg>`` (abduction, about x), ``hf_<leg>`` (flexion, y), ``kn_<leg>`` (knee, y), ``wh_<leg>`` (wheel, y).

    ``legs``: a subset of :data:`LEGS` (a one-legged hopper on a wheel for a quick check).
    """
    frames = []
    for leg, sx, sy in legs:
        x, y = ("LX" if sx > 0 else "-LX"), ("LY" if sy > 0 else "-LY")
        h = "LH" if sy > 0 else "-LH"
        frames += [
            kr.Frame(f"ha_{leg}", "0", 0, 1, GeneralPlacement(R0=I3, P=[x, y, 0], axis=[1, 0, 0], q=f"qa_{leg}")),
            kr.Frame(f"hf_{leg}", f"ha_{leg}", 0, 1, GeneralPlacement(R0=I3, P=[0, h, 0], axis=[0, 1, 0], q=f"qf_{leg}")),
            kr.Frame(f"kn_{leg}", f"hf_{leg}", 0, 1, GeneralPlacement(R0=I3, P=[0, 0, "-L1"], axis=[0, 1, 0], q=f"qk_{leg}")),
            kr.Frame(f"wh_{leg}", f"kn_{leg}", 0, 1, GeneralPlacement(R0=I3, P=[0, 0, "-L2"], axis=[0, 1, 0], q=f"qw_{leg}")),
        ]
    return kr.Robot.create(name, frames, floating=True)


def constraint(tree, independent=INDEPENDENT):
    """The wheels rolling on level ground (z = 0 in the world)."""
    wheels = [label for label in tree.joint_labels if label.startswith("wh_")]
    return RollingDisc(tree, dict.fromkeys(wheels, "r"), independent=independent)


def model(tree, method="newton-euler"):
    """The constrained model (:class:`~kanerobot.dynamics.rolling_disc.RollingDiscModel`) in the independent speeds."""
    c = constraint(tree)
    return rolling_disc_model(tree, {d.joint: d.radius for d in c.discs}, method, independent=c.independent)


def values(tree, seed=0, gravity=9.81):
    """Random physically consistent inertias on :data:`LENGTHS`, gravity ``-gravity`` along the world's z.

    No rotor inertia, friction or external wrench (pinocchio has none; a
    light wheel's viscous friction would make a simulation stiff).
    """
    out = random_parameters(tree, np.random.default_rng(seed), friction=False, rotor=False, wrench=False)
    out.update(LENGTHS)
    out["G3"] = -gravity  # G1 = G2 = 0 in the description
    return out


def standing(c, vals, height=0.35, flexion=0.7, knee=-1.4, yaw=0.0, base=(0.0, 0.0), joints=None):
    """A configuration on the ground: the base at ``height`` (upright, turned by ``yaw``), the legs bent, the knees solved."""
    n = len(c.robot.joint_labels)
    q = np.zeros(7 + n)
    q[:3] = [base[0], base[1], height]
    q[3:7] = [0.0, 0.0, np.sin(yaw / 2), np.cos(yaw / 2)]
    labels = list(c.robot.joint_labels)
    for leg, _, _ in LEGS:
        q[7 + labels.index(f"hf_{leg}")] = flexion
        q[7 + labels.index(f"kn_{leg}")] = knee
    for label, value in (joints or {}).items():
        q[7 + labels.index(label)] = value
    return c.solve_contact(vals, q, KNEES)
