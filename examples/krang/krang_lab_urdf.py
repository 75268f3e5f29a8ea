"""Write ``krang_lab.urdf``: Krang on its wheels laid out as a lab's URDF is, the base link the body that pitches.

``frames/krang_wheeled.toml`` is Krang as kanerobot's planar-chassis model
wants it: massless x, y, heading joints, the wheels and the body's pitch
``q_imu`` on the heading frame.  A robot's own URDF is not written that way:
its root link is the body (the IMU's link), its wheels hang on it
(continuous joints at the axle), and the pitch is no joint at all but the
floating base's orientation.  This script writes that layout from the same
description and the same numbers as ``krang_control.py`` (the body of
``body_values(17)``, 5 kg wheels of radius 0.25 m, 0.6 m apart; no rotor
inertia, which URDF does not hold):

- link 0, the root, is the body's link 1 with its frame turned back to the
  heading frame's axes at ``q_imu = 0`` (x forward, y along the axle, z up),
  its inertia re-expressed in those axes;
- the wheels ``wr`` and ``wl`` are its children, at ``(0, -+b/2, 0)``, axle y;
- the spine ``2`` and the rest of the body hang on it as in krang.urdf.

``kr.load("krang_lab.urdf", floating=True, discs={"wr": 0.25, "wl": 0.25})``
then gives the robot ``krang_control.py`` (d) balances.  Run from the
repository's folder: ``python examples/krang/krang_lab_urdf.py [PATH]``
(default ``examples/krang/krang_lab.urdf``); tests/test_axle_base.py checks
that the file shipped is what it writes.
"""

import sys
from pathlib import Path

import numpy as np
import sympy

import kanerobot as kr
from kanerobot.robot.description import BASE, Frame, GeneralPlacement

sys.path.insert(0, str(Path(__file__).resolve().parent))
from krang_control import body_values, wheeled_values

#: The wheels' radius and track, metres.
RADIUS, TRACK = 0.25, 0.6
HEADER = """<!--
  Golem Krang on its two wheels, laid out as a robot's own URDF is: the root
  link "link_0" is the body (the pitch is the floating base's orientation),
  the wheels wr and wl hang on it, then the 16 joints of krang.urdf.
  Written by examples/krang/krang_lab_urdf.py from frames/krang_wheeled.toml
  with the numbers of examples/krang/krang_control.py (body_values(17),
  wheels of 5 kg, radius 0.25 m, track 0.6 m; no rotor inertia).
  Load it with kr.load(path, floating=True, discs={"wr": 0.25, "wl": 0.25}).
-->
"""


def lab_robot():
    """``(robot, values)``: the lab layout's description (floating, link 0 the body) and its numbers."""
    wheeled = kr.load(kr.frames_path("krang_wheeled"))
    values = wheeled_values(body_values()[1], RADIUS, TRACK, rotor=0.0)
    values.update({k: 0.0 for k in values if k.startswith("IA")})  # URDF holds no rotor inertia
    body = wheeled.frame("1")
    R1 = sympy.Matrix(body.placement.R0)  # frame 1 in the heading frame's axes at q_imu = 0
    frames = []
    for f in wheeled.frames:
        if f.label in ("x", "y", "th", "1"):
            continue
        if f.antecedent == "th":  # the wheels: the heading frame's axes are link 0's, the origin on the axle already
            f = Frame(f.label, BASE, f.joint, f.mu, f.placement, f.stem)
        elif f.antecedent == "1":
            p = f.placement
            f = Frame(f.label, BASE, f.joint, f.mu, GeneralPlacement(R1 * p.R0, R1 * p.P, p.axis, p.q), f.stem)
        frames.append(f)
    J1 = np.array([[values[f"{a}{b}1"] if f"{a}{b}1" in values else values[f"{b}{a}1"] for b in "XYZ"] for a in "XYZ"])
    MS1 = np.array([values["MX1"], values["MY1"], values["MZ1"]])
    R = np.array(R1, dtype=float)
    J0, MS0 = R @ J1 @ R.T, R @ MS1  # about the same origin, in link 0's axes
    link0 = {"XX": J0[0, 0], "XY": J0[0, 1], "XZ": J0[0, 2], "YY": J0[1, 1], "YZ": J0[1, 2], "ZZ": J0[2, 2],
             "MX": MS0[0], "MY": MS0[1], "MZ": MS0[2], "M": values["M1"], "IA": 0.0, "FV": 0.0, "FS": 0.0}  # fmt: skip
    dynamics = {BASE: {k: float(v) for k, v in link0.items()}}
    links = [BASE] + [label for label in wheeled.links if label not in ("th", "1")]
    robot = kr.Robot.create("KrangLab", frames, links=links, dynamics=dynamics, floating=True, base=wheeled.base)
    return robot, values


#: Where the file is shipped.
SHIPPED = Path(__file__).resolve().parent / "krang_lab.urdf"


def main(path=SHIPPED):
    robot, values = lab_robot()
    text = kr.robot.urdf_writer.write_urdf(robot, values={k: v for k, v in values.items() if k in {str(s) for s in _symbols(robot)}})
    Path(path).write_text(text.replace("<robot ", HEADER + "<robot ", 1))
    print(f"wrote {path}")


def _symbols(robot):
    out = set()
    for f in robot.frames:
        out |= set(sympy.Matrix(f.placement.P).free_symbols)
    for table in robot.dynamics.values():
        for v in table.values():
            out |= sympy.sympify(v).free_symbols
    return out | set(robot.base.G.free_symbols)


if __name__ == "__main__":
    main(*sys.argv[1:])
