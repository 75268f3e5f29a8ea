"""Options that several of kanerobot's commands share: the robot loaded for a numeric job, ``--gravity``.

:mod:`kanerobot.cli` and :mod:`kanerobot.campaign.command` both import this
module (which imports neither), so that ``kanerobot simulate``,
``identify`` and ``campaign`` load a robot and read ``--gravity`` the same way.
"""

import argparse
import math
import sys

from kanerobot.library import resolve
from kanerobot.robot.io import GRAVITY_NAMES, load

__all__ = ["add_gravity", "announced_own_values", "gravity_option", "gravity_values", "load_robot", "own_values"]


def gravity_option(text):
    """``--gravity gx,gy,gz``: 3 finite numbers (m/s^2 in frame 0), for argparse (``type=``)."""
    try:
        numbers = tuple(float(v) for v in text.split(","))
    except ValueError:
        numbers = ()
    if len(numbers) != 3 or not all(math.isfinite(v) for v in numbers):
        raise argparse.ArgumentTypeError(f"takes 3 finite numbers gx,gy,gz (m/s^2 in frame 0), e.g. --gravity 0,0,-9.81; got {text!r}")
    return numbers


def add_gravity(p):
    """``--gravity`` on the subparser ``p`` of a command that loads a robot for a numeric job."""
    p.add_argument("--gravity", type=gravity_option, metavar="GX,GY,GZ",
                   help="gravity in frame 0, m/s^2 (default: the file's; a URDF's is 0,0,-9.81): the robot's G becomes G1, G2, G3 "
                        "with these values, which win over --values")  # fmt: skip


def load_robot(args):
    """The robot named by ``args.robot``, with ``--gravity`` where the command has it (:func:`kanerobot.load`'s ``gravity=``)."""
    gravity = getattr(args, "gravity", None)
    return load(resolve(args.robot), **({} if gravity is None else {"gravity": gravity}))


def gravity_values(robot, args):
    """``{G1: .., G2: .., G3: ..}`` of ``--gravity`` (in ``robot.values`` once loaded), or {} without it."""
    if getattr(args, "gravity", None) is None:
        return {}
    return {name: robot.values[name] for name in GRAVITY_NAMES}


def own_values(robot):
    """``robot.values`` when they are more than the gravity ``--gravity`` gave a .par or .toml robot (a URDF's numbers), else None."""
    return dict(robot.values) if set(robot.values) - set(GRAVITY_NAMES) else None


def announced_own_values(robot, args):
    """:func:`own_values` of a command run without ``--values`` (those it works with), said on standard error; else None."""
    values = None if getattr(args, "values", None) else own_values(robot)
    if values:
        print(f"kanerobot: the {len(values)} parameter values of {args.robot}; give others with --values FILE", file=sys.stderr)
    return values
