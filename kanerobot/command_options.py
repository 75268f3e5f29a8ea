"""Options that kanerobot's commands share: how the robot is loaded (``--floating``, ``--mimic``, ``--unphysical``,
``--gravity``, ``--disc``/``--discs``).

:mod:`kanerobot.cli` and :mod:`kanerobot.campaign.command` both import this
module (which imports neither), so that every command that loads a robot
(``info``, ``model``, ``simulate``, ``draw``, ``campaign``, ``identify``,
``convert``, ``view``) takes the options of :func:`kanerobot.load` and loads
it the same way.  Their names are :data:`kanerobot.robot.urdf.FLAGS`, which
the loader's errors name beside the Python keyword.
"""

import argparse
import math
import sys

from kanerobot.library import resolve
from kanerobot.robot.io import DISC_FLAG, GRAVITY_NAMES, load
from kanerobot.robot.urdf import FLAGS, MIMIC

__all__ = ["add_discs", "add_gravity", "add_loading", "disc_option", "announced_own_values", "gravity_option", "gravity_values", "load_options", "load_robot", "own_values"]


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
    """``--gravity`` on the subparser ``p`` of a command that loads a robot."""
    p.add_argument(FLAGS["gravity"], type=gravity_option, metavar="GX,GY,GZ",
                   help="gravity in frame 0, m/s^2 (default: the file's; a URDF's is 0,0,-9.81): the robot's G becomes G1, G2, G3 "
                        "with these values, which win over --values")  # fmt: skip


def disc_option(text):
    """``--disc JOINT[=RADIUS[,TYRE]]``: ``(joint, radius)`` (a number, else an expression; ``(radius, tyre)`` for a torus
    wheel; None without ``=``: the radius read from the file's shapes), for argparse."""
    joint, equals, radii = text.rpartition("=")
    if not equals and text.strip():
        return text.strip(), None
    values = [v.strip() for v in radii.split(",")]
    if not joint.strip() or not 1 <= len(values) <= 2 or not all(values):
        raise argparse.ArgumentTypeError(f"takes JOINT=RADIUS, JOINT=RADIUS,TYRE (a torus wheel) or JOINT (the radius of a URDF or "
                                         f"MJCF file's wheel shape), e.g. {DISC_FLAG} left_wheel_joint=0.25; got {text!r}")  # fmt: skip

    def number(value):
        try:
            return float(value)
        except ValueError:
            return value  # an expression: kr.load reads it, or says what is wrong with it

    radius = tuple(number(v) for v in values)
    return joint.strip(), radius[0] if len(radius) == 1 else radius


class _Discs(argparse.Action):
    """``--disc`` repeated: ``{joint: radius}``, each joint once."""

    def __call__(self, parser, namespace, values, option_string=None):
        joint, radius = values
        discs = dict(getattr(namespace, self.dest) or {})
        if joint in discs:
            parser.error(f"argument {DISC_FLAG}: joint {joint!r} is given twice: give each disc once")
        discs[joint] = radius
        setattr(namespace, self.dest, discs)


def add_discs(p):
    """``--disc JOINT=RADIUS`` (repeated) or ``--discs FILE`` on the subparser ``p``: kr.load's ``discs=``."""
    group = p.add_mutually_exclusive_group()
    group.add_argument(DISC_FLAG, dest="discs", type=disc_option, action=_Discs, metavar="JOINT[=RADIUS]",
                       help="the link of revolute joint JOINT is a disc of this radius (JOINT=RADIUS,TYRE: a torus wheel; JOINT "
                            "alone: the radius of its link's cylinder or sphere in a URDF or MJCF file) rolling without slipping "
                            "on the ground z = 0 of frame 0; repeat for each disc (kr.load's discs=)")  # fmt: skip
    group.add_argument("--discs", dest="discs", metavar="FILE",
                       help="the discs of a side file: [[disc]] tables (joint, radius, tyre; without radius: read from the URDF or "
                            "MJCF file's shapes), [ground] (normal, height) and independent, as in a .toml robot "
                            "(docs/frames-format.md)")  # fmt: skip


def add_loading(p):
    """The options of :func:`kanerobot.load` on the subparser ``p`` of a command that loads a robot (ROBOT)."""
    p.add_argument(FLAGS["floating"], action="store_true",
                   help="a URDF robot free in space: a free flyer under its root link (kr.load's floating=True)")  # fmt: skip
    p.add_argument(FLAGS["mimic"], choices=MIMIC, default=MIMIC[0],
                   help="a URDF's <mimic> joints: coupled to their leaders, a constraint of the models (default), each read "
                        "as a joint of its own, as pinocchio does (kr.load's mimic='independent'), or refused")  # fmt: skip
    p.add_argument(FLAGS["physical"], action="store_true",
                   help="read a URDF's <inertial>s that are no rigid body's as written, and run the models on them "
                        "(kr.load's physical=False; numeric(..., physical=False))")  # fmt: skip
    add_gravity(p)
    add_discs(p)


def load_options(args):
    """``{keyword: value}`` of :func:`kanerobot.load` for the loading options given on the command line (defaults left out)."""
    options = {"floating": getattr(args, "floating", False), "mimic": getattr(args, "mimic", MIMIC[0]),
               "physical": not getattr(args, "unphysical", False), "gravity": getattr(args, "gravity", None),
               "discs": getattr(args, "discs", None)}  # fmt: skip
    defaults = {"floating": False, "mimic": MIMIC[0], "physical": True, "gravity": None, "discs": None}
    return {name: value for name, value in options.items() if value != defaults[name]}


def load_robot(args):
    """The robot named by ``args.robot``, loaded with the command's options (:func:`load_options`)."""
    return load(resolve(args.robot), **load_options(args))


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
