"""Loading and saving robot files, whatever their format.

:func:`load` picks the reader by the file's extension; :func:`save` the
writer.  Writing goes to a temporary file in the same folder that is renamed
over the target only once complete, so an error never leaves a half-written
file behind.
"""

import os
import warnings
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import cast

import sympy

from kanerobot.errors import DescriptionError, RobotFileError
from kanerobot.robot import frames_toml, mjcf, mjcf_writer, par, urdf, urdf_writer, wheel_shapes
from kanerobot.robot.axle_base import on_axle
from kanerobot.robot.description import Disc, Robot
from kanerobot.robot.expressions import symbol
from kanerobot.robot.files import GRAVITY_NAMES, atomic_write, atomic_write_text, checked_gravity, read_text

__all__ = ["DISC_FLAG", "PAR_HOLDS_NO_VALUES", "atomic_write", "atomic_write_text", "bound_values", "load", "read_text", "save",
           "with_discs", "with_gravity"]


def _codec(path):
    """(reader, writer) for the file's extension."""
    suffix = Path(path).suffix.lower()
    if suffix == ".par":
        return par.read_par, par.write_par
    if suffix == ".toml":
        return frames_toml.read_frames, frames_toml.write_frames
    if suffix == ".urdf":
        return urdf.read_urdf, urdf_writer.write_urdf
    if suffix == ".xml":
        return mjcf.read_mjcf, mjcf_writer.write_mjcf
    raise RobotFileError(
        path, None, f"unknown file type {suffix or '(none)'!r}: use .par (SYMORO table), .toml (frame tree), .urdf or .xml (MJCF)"
    )


def load(path: str | os.PathLike, **options: bool | str | tuple | list | Mapping | os.PathLike) -> Robot:
    """Read a robot from a ``.par`` (SYMORO), ``.toml`` (frame tree), ``.urdf`` or ``.xml`` (MJCF) file.

    ``path`` is a file; the robots shipped with kanerobot are
    ``load(frames_path("rx90"))`` (a missing file named like one of them
    says so).  Raises :class:`~kanerobot.errors.RobotFileError` naming the
    file and line for anything wrong in it.

    ``gravity=(gx, gy, gz)`` (3 finite numbers, m/s^2 in frame 0) is for
    every format: the robot's gravity becomes ``G = [G1, G2, G3]`` with
    these numbers in ``robot.values`` (:func:`with_gravity`; a URDF's
    default is ``(0, 0, -9.81)``, a ``.par`` or ``.toml`` file's gravity is
    its own without the option).  The other ``options`` go to the URDF
    reader (:func:`kanerobot.robot.urdf.read_urdf`): ``floating=True`` (a
    free flyer under the root link), ``bind=True`` (the file's numbers in
    the description rather than in ``robot.values``),
    ``mimic="independent"``, ``physical=False``.  ``.par``, ``.toml`` and
    ``.xml`` files take none of those (an MJCF file says itself whether its
    robot is free-flying: :mod:`kanerobot.robot.mjcf`).

    ``discs=`` (every format; :func:`with_discs`) declares rolling discs the
    file does not: ``{joint: radius}`` (a radius, an expression, or
    ``(radius, tyre)`` for a torus wheel), each a revolute (a URDF
    ``continuous``) joint rolling on the ground ``z = 0`` of frame 0
    (gravity's), or the path of a side file of ``[[disc]]`` tables (and
    ``[ground]``, ``independent``: ``docs/frames-format.md``).  A URDF's
    or MJCF's wheel may leave its radius out (``{joint: None}``, a list of
    joints, a table without ``radius``): it is then read from the wheel
    link's cylinder or sphere (:mod:`~kanerobot.robot.wheel_shapes`).
    ``kr.derive`` then holds them as a constraint
    (:class:`~kanerobot.dynamics.rolling_disc.RollingDisc`).  A floating
    robot whose base link carries two coaxial discs (a Segway, Krang as its
    lab's URDF has it) gets x, y, heading and pitch joints in place of its
    free flyer (:func:`~kanerobot.robot.axle_base.on_axle`).

    Examples
    --------
    >>> from kanerobot.library import frames_path
    >>> robot = load(frames_path("planar2"), gravity=(0, -9.81, 0))  # a vertical plane: gravity along -y
    >>> robot.base.G.T, dict(robot.values)
    (Matrix([[G1, G2, G3]]), {'G1': 0.0, 'G2': -9.81, 'G3': 0.0})
    >>> load("rx90")
    Traceback (most recent call last):
      ...
    kanerobot.errors.RobotFileError: rx90: no such file; did you mean kr.load(kr.frames_path('rx90')), the robot rx90 shipped with kanerobot?
    """
    path = Path(path)
    if path.is_dir():
        raise RobotFileError(path, None, "is a folder, not a robot file (.par, .toml, .urdf or .xml)")
    if not path.is_file():
        raise RobotFileError(path, None, "no such file" + _library_hint(path))
    reader, _ = _codec(path)
    discs = options.pop("discs", None)
    robot = _read(path, reader, options)
    robot = robot if discs is None else with_discs(robot, cast(Mapping | list | str | os.PathLike, discs), path)  # with_discs checks its type
    try:
        return on_axle(robot)  # a floating base link on two coaxial discs: the joints they leave it
    except DescriptionError as exc:
        raise RobotFileError(path, None, str(exc)) from None


def _read(path, reader, options):
    """The robot of the file at ``path`` read by ``reader`` with the load ``options`` (``gravity`` for every format)."""
    gravity = options.pop("gravity", None)
    if gravity is not None:
        gravity = checked_gravity(gravity, path)
    if options and reader is not urdf.read_urdf:
        names = ", ".join(urdf.advice(name, options[name]) for name in sorted(options))
        what = "is a load option" if len(options) == 1 else "are load options"
        raise RobotFileError(path, None, f"{names} {what} of .urdf files: a {path.suffix} file takes gravity= only (--gravity on the command line)")
    unknown = sorted(set(options) - set(urdf.OPTIONS))
    if unknown:
        raise RobotFileError(path, None, f"unknown load option {unknown[0]!r}: a .urdf file takes {', '.join(urdf.OPTIONS)}")
    if reader is urdf.read_urdf:
        return reader(path, **options, **({} if gravity is None else {"gravity": gravity}))
    if reader is mjcf.read_mjcf:  # G1 G2 G3 are the file's <option gravity>: the option gives them other values
        return reader(path, gravity=gravity)
    robot = reader(path)
    return robot if gravity is None else with_gravity(robot, gravity, path)


def with_discs(robot: Robot, discs: Mapping | list | tuple | str | os.PathLike, path: str | os.PathLike = "<robot>") -> Robot:
    """``robot`` with the rolling discs of ``kr.load``'s ``discs=`` option (:meth:`Robot.with_discs`).

    Parameters
    ----------
    robot : Robot
    discs : mapping str -> radius, list of str, or str or Path
        ``{joint: radius}``: each joint's link a disc of that radius (a
        number or an expression; ``(radius, tyre)`` for a torus wheel)
        rolling on the ground ``z = 0`` of frame 0; a radius None, or a
        list of joints, takes each radius from the wheel's cylinder or
        sphere in the URDF or MJCF file ``path``
        (:func:`~kanerobot.robot.wheel_shapes.radius_reader`: its
        ``<collision>``, else ``<visual>``, elements; an MJCF body's
        colliding geoms, else the others), as if it were typed; or the path
        of a side file (:func:`~kanerobot.robot.frames_toml.with_disc_file`),
        which may give the ground and the independent speeds too, and whose
        tables may leave the radius out in the same way.
    path : str or Path, optional
        The robot's file, named in errors, whose shapes give the radii left
        out.

    Returns
    -------
    Robot

    Raises
    ------
    RobotFileError
        Naming the option's value at fault (or the side file's line) and
        what to give instead; for a radius left out that the file does not
        give (no cylinder or sphere, only meshes, two radii, an axis across
        the joint's), the file's line of the link or shape.

    Examples
    --------
    >>> from kanerobot.library import frames_path
    >>> with_discs(load(frames_path("planar2")), {"2": 0.25}).discs
    (Disc(joint='2', radius=0.250000000000000, tyre=0),)
    >>> with_discs(load(frames_path("planar2")), {"3": 0.25}, "planar2.toml")
    Traceback (most recent call last):
      ...
    kanerobot.errors.RobotFileError: planar2.toml: discs={'3': 0.25} (--disc 3=0.25 on the command line): disc 3: there is no joint 3; joints: 1, 2
    """
    if robot.discs:
        raise RobotFileError(path, None, f"declares its discs ({', '.join(d.joint for d in robot.discs)}) itself: load it without "
                                         f"discs= ({DISC_FLAG}, --discs on the command line), or change them in the file")  # fmt: skip
    radius_of = wheel_shapes.radius_reader(path)
    if isinstance(discs, (str, os.PathLike)):
        if not Path(discs).is_file():
            raise RobotFileError(discs, None, f"no such file: the side file of discs= (--discs on the command line) for {path}")
        return frames_toml.with_disc_file(robot, discs, radius_of)
    if isinstance(discs, (list, tuple)) and all(isinstance(joint, str) for joint in discs):
        discs = dict.fromkeys(discs)  # joint names alone: their radii from the file
    if not isinstance(discs, Mapping):
        raise RobotFileError(path, None, f"discs={discs!r}: give {{joint: radius}}, [joint, ...] (the radii read from the file) "
                                         f"or the path of a file of [[disc]] tables")  # fmt: skip
    items = []
    for joint, value in discs.items():
        given = f"discs={{{joint!r}: {value!r}}} ({DISC_FLAG} {joint}{'' if value is None else '=' + _flag_value(value)} on the command line)"
        radii = tuple(value) if isinstance(value, (tuple, list)) else (value,)
        if value is not None and (not 1 <= len(radii) <= 2 or any(isinstance(v, bool) or not isinstance(v, (int, float, str)) for v in radii)):
            raise RobotFileError(path, None, f"{given}: give a disc's radius (a number or an expression), or (radius, tyre) for a "
                                             f"torus wheel (None: the radius of the wheel's shape in a URDF or MJCF file)")  # fmt: skip
        items.append((joint, radii, given))
    # The joints are checked first (radius 1 in place of a missing one), so that a wrong joint says so, not that it has no shape.
    whole = f"discs={dict(discs)!r}"
    robot_with = _discs_of(robot, path, [(joint, (1,) if radii == (None,) else radii, given) for joint, radii, given in items], whole)
    missing = [(joint, given) for joint, radii, given in items if radii == (None,)]
    if not missing:
        return robot_with
    if radius_of is None:
        joint, given = missing[0]
        raise RobotFileError(path, None, f"{given}: give the disc's radius: a {Path(path).suffix or 'robot'} file has no shapes "
                                         f"to read it from (a .urdf or MJCF file has)")  # fmt: skip
    found = {joint: radius_of(str(joint), f"discs={{{str(joint)!r}: RADIUS}} ({DISC_FLAG} {joint}=RADIUS on the command line)")
             for joint, _ in missing}  # fmt: skip
    return _discs_of(robot, path, [(joint, (found[joint],) if radii == (None,) else radii, given) for joint, radii, given in items], whole)


def _discs_of(robot, path, items, whole):
    """``robot.with_discs`` of ``[(joint, radii, given)]``, each error naming the option's value at fault (``given``, else ``whole``)."""
    out = []
    for joint, radii, given in items:
        try:
            out.append(Disc(str(joint), *radii))
        except DescriptionError as exc:
            raise RobotFileError(path, None, f"{given}: {exc}") from None
    try:
        return robot.with_discs(out)
    except DescriptionError as exc:
        given = next((g for joint, _, g in items if str(joint) == exc.label), whole)
        raise RobotFileError(path, None, f"{given}: {exc}") from None


#: The command line's flag of ``discs={joint: radius}`` (repeated), as errors name it; ``--discs FILE`` gives a side file.
DISC_FLAG = "--disc"


def _flag_value(value):
    """A disc's radius as ``--disc JOINT=RADIUS[,TYRE]`` writes it."""
    return ",".join(str(v) for v in value) if isinstance(value, (tuple, list)) else str(value)


def with_gravity(robot: Robot, gravity, path: str | os.PathLike = "<robot>") -> Robot:
    """``robot`` with gravity ``G = [G1, G2, G3]`` and these values in ``robot.values``.

    What ``kr.load(path, gravity=...)`` does to a ``.par`` or ``.toml``
    robot: whatever the file's ``G`` (``{0, 0, G3}``, numbers), the robot's
    gravity is the vector given, as symbols whose numbers go with the robot
    (``kr.derive(robot).numeric({**values, **robot.values})``).

    Parameters
    ----------
    robot : Robot
    gravity : sequence of 3 floats
        The gravity acceleration (m/s^2) in the base frame 0.
    path : str or Path, optional
        The robot's file, named in errors.

    Returns
    -------
    Robot

    Raises
    ------
    RobotFileError
        For a gravity that is not 3 finite numbers, or a robot that uses
        ``G1``, ``G2`` or ``G3`` for something else than its gravity.
    """
    gravity = checked_gravity(gravity, path)
    zero = replace(robot, base=replace(robot.base, G=sympy.ImmutableMatrix([0, 0, 0])))
    used = [name for name in GRAVITY_NAMES if zero.subs({name: 0}) != zero]
    if used:
        raise RobotFileError(
            path, None, f"{', '.join(used)} {'is a parameter' if len(used) == 1 else 'are parameters'} of {robot.name} besides its "
            f"gravity: gravity= would give {'it' if len(used) == 1 else 'them'} a value; rename {'it' if len(used) == 1 else 'them'} in the file",
        )
    values = {**robot.values, **dict(zip(GRAVITY_NAMES, gravity))}
    G = sympy.ImmutableMatrix([symbol(name) for name in GRAVITY_NAMES])
    return replace(robot, base=replace(robot.base, G=G), values=MappingProxyType(values))


def _library_hint(path):
    """Advice for a missing file that names a robot shipped in ``frames/``:
    ``kr.load("rx90")`` means ``kr.load(kr.frames_path("rx90"))``."""
    from kanerobot.errors import KaneRobotError
    from kanerobot.library import robot_names

    if len(path.parts) != 1 or path.suffix.lower() not in ("", ".par", ".toml"):
        return ""
    try:
        shipped = robot_names()
    except KaneRobotError:
        return ""
    name = path.stem if path.suffix else path.name
    if name not in shipped:
        return ""
    return f"; did you mean kr.load(kr.frames_path({name!r})), the robot {name} shipped with kanerobot?"


#: Why a ``.par`` file gets a robot's values as numbers (:func:`bound_values`): SYMORO's format has no table of them.
PAR_HOLDS_NO_VALUES = "a .par file holds no values (a .toml file keeps the symbols and their values)"


def bound_values(robot: Robot, why: str) -> tuple[Robot, str]:
    """``robot`` with the numbers of ``robot.values`` written in its description, and the line that says so.

    What :func:`save` does for a ``.par`` file and ``kanerobot convert`` for
    a ``.par`` file or a conversion to Khalil-Kleinfinger frames (which
    needs the numbers): the models are the same, the symbols that had
    values are gone.

    Parameters
    ----------
    robot : Robot
    why : str
        Why the numbers go in the description, for the line.

    Returns
    -------
    tuple of (Robot, str)
        The robot (``robot`` itself, without values) and the line ('' for a
        robot without values).

    Examples
    --------
    >>> from kanerobot.library import frames_path
    >>> robot, line = bound_values(load(frames_path("planar2"), gravity=(0, -9.81, 0)), PAR_HOLDS_NO_VALUES)
    >>> robot.base.G.T, dict(robot.values)
    (Matrix([[0.0, -9.81, 0.0]]), {})
    >>> line
    'the 3 parameter values of planar2 written as numbers: a .par file holds no values (a .toml file keeps the symbols and their values)'
    """
    if not robot.values:
        return robot, ""
    return robot.subs(robot.values), f"the {len(robot.values)} parameter values of {robot.name} written as numbers: {why}"


def save(robot: Robot, path: str | os.PathLike) -> None:
    """Write ``robot`` to ``path`` in the format its extension names.

    ``robot.values`` (a URDF's numbers) are kept: a ``.toml`` file writes
    them in its ``[values]`` table (``kr.load`` reads them back); a ``.par``
    file has no place for them, so they are written as numbers in its
    tables (:func:`bound_values`), with a ``UserWarning`` that says so.  A
    ``.urdf`` file is written by :func:`kanerobot.robot.urdf_writer.write_urdf`
    with the robot's values (every parameter symbol needs one in
    ``robot.values``); call it directly for ``values=`` or ``limits=``.  An
    MJCF file (``.xml``, MuJoCo's) is written by
    :func:`kanerobot.robot.mjcf_writer.write_mjcf` with the robot's values
    in the same way, for contact simulation in MuJoCo with the same numbers.
    """
    path = Path(path)
    writer = _codec(path)[1]
    line = ""
    if path.suffix.lower() == ".par":
        robot, line = bound_values(robot, PAR_HOLDS_NO_VALUES)
    atomic_write_text(path, writer(robot, path))
    if line:  # once written: a file that cannot be written says that alone
        warnings.warn(f"{path}: {line}", UserWarning, stacklevel=2)
