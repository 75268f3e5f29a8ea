"""Write the MJCF robots of ``frames/mjcf/`` (MuJoCo's format) from kanerobot's descriptions.

Four come from example-robot-data's URDFs (BSD-3-Clause; ``pip install -e
'.[bench]'``), their numbers unchanged; one is a tree with a ball and a
planar joint whose parameters are drawn at random (physically consistent,
seed 0).  Each is written by ``kr.save(robot, "name.xml")``; reading it back
with ``kr.load`` and comparing with MuJoCo is tests/test_mjcf.py's
``test_frames_mjcf_robots_equal_mujoco`` and ``benchmarks/mjcf_vs_mujoco.py``.

Run from the repository's folder::

    python examples/mjcf/convert_robots.py
"""

import importlib.metadata
import sys
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import numpy as np

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.robot import joints
from kanerobot.robot.description import GeneralPlacement

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "frames" / "mjcf"

#: name -> (example-robot-data URDF, floating base, what it is)
URDFS = {
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False, "an arm"),
    "panda": ("panda_description/urdf/panda.urdf", False, "an arm whose hand's second finger mimics the first"),
    "solo12": ("solo_description/robots/solo12.urdf", True, "a quadruped on a free root"),
    "talos_reduced": ("talos_data/robots/talos_reduced.urdf", True, "a humanoid on a free root"),
}


def ball_and_plane():
    """A revolute, a ball and a planar joint, and a second revolute branch, with random numbers (seed 0)."""
    turn = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]
    frames = [
        kr.Frame("1", "0", 0, 1, GeneralPlacement(R0=turn, P=[0, 0, 0.3], axis=[0, 1, 0], q="q1")),
        kr.Frame("2", "1", joints.Spherical(), 1, GeneralPlacement(R0=turn, P=[0.4, 0, 0], axis=[0, 0, 1])),
        kr.Frame("3", "2", joints.Planar(), 1, GeneralPlacement(R0=[[1, 0, 0], [0, 0, -1], [0, 1, 0]], P=[0.3, 0, 0.1], axis=[0, 0, 1])),
        kr.Frame("4", "1", 1, 1, GeneralPlacement(R0=np.eye(3).tolist(), P=[0, 0.2, 0], axis=[1, 0, 0], q="q4")),
    ]
    robot = kr.Robot.create("ball_and_plane", frames)
    values = random_parameters(robot, np.random.default_rng(0), wrench=False)
    # no Coulomb friction, and no rotor inertia on the planar joint: MuJoCo's frictionloss is a constraint
    # force, and its armature acts along the planar joint's slides, not along its speeds (the writer refuses them)
    values = {name: (0.0 if name.startswith("FS") or name == "IA3" else value) for name, value in values.items()}
    return replace(robot, values=MappingProxyType({**robot.values, **values}))


def main(out=OUT):
    try:
        share = Path(importlib.metadata.distribution("example-robot-data").locate_file("cmeel.prefix/share/example-robot-data/robots"))
    except importlib.metadata.PackageNotFoundError:
        print("example-robot-data is not installed: pip install -e '.[bench]'", file=sys.stderr)
        return 2
    out.mkdir(exist_ok=True)
    for name, (relative, floating, what) in URDFS.items():
        robot = kr.load(share / relative, floating=floating)
        kr.save(replace(robot, name=name), out / f"{name}.xml")
        print(f"{name}.xml: {what}, {robot.dof} DOF")
    kr.save(ball_and_plane(), out / "ball_and_plane.xml")
    print("ball_and_plane.xml: a ball and a planar joint, 8 DOF")
    return 0


if __name__ == "__main__":
    sys.exit(main())
