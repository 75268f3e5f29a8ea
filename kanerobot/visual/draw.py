"""Static 3D views of a robot with matplotlib: ``kr.plot(robot, q)`` and ``kanerobot draw``.

What is drawn is the :class:`~kanerobot.visual.skeleton.Scene` of the robot
at ``q``, nothing else: the links as the polylines of their tables (a
Khalil-Kleinfinger frame bends where ``b``, ``d`` and ``r`` are, so a wrong
table shows), each frame's triad (x red, y green, z blue) with its label,
the joint axes (revolute: a purple line with a ring about it;
prismatic: an orange line with square ends; a loop's cut joint dashed),
the wheels as circles, the base (a plate for a fixed base, a box with the
world frame apart for a floating one, the ground for a wheeled one), on
axes of equal scaling, with the parameter values and the configuration
written beside the figure.

The figure is built on matplotlib's Agg canvas, without pyplot: nothing
global changes and no window opens.  Figures are written through a
temporary file renamed once complete (:func:`kanerobot.visual.figures.save`).

Examples
--------
>>> import kanerobot as kr
>>> figure = plot(kr.load(kr.frames_path("planar2")), [0.3, 0.6], {"L1": 0.5})
>>> figure.kanerobot_scene.origin("2").round(6).tolist()
[0.477668, 0.14776, 0.0]
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy
from numpy.typing import ArrayLike

from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import Robot
from kanerobot.visual.figures import FORMATS, figure_canvas, require_matplotlib, save
from kanerobot.visual.skeleton import Skeleton, skeleton

__all__ = ["draw_scene", "link_scale", "plot", "scene_limits", "values_text", "write_drawing"]

#: Triad axes, as fractions of the robot's typical link length (:func:`link_scale`), and their colours (x, y, z).
TRIAD = 0.35
TRIAD_COLOURS = ("tab:red", "tab:green", "tab:blue")
#: Joint axes, as fractions of the typical link length.
JOINT_AXIS = 0.7
JOINT_STYLE: dict[str, dict[str, Any]] = {"revolute": {"color": "tab:purple"}, "prismatic": {"color": "tab:orange", "marker": "s", "markersize": 4}}
LINK_STYLE: dict[str, Any] = {"color": "0.25", "lw": 2.5, "solid_capstyle": "round"}


def _unit(kind):
    return "m" if kind == "prismatic" else "rad"


def values_text(scene, coordinates=None):
    """The text written beside a drawing: the parameter values and the configuration, with units.

    Parameters
    ----------
    scene : Scene
    coordinates : sequence of (str, float), optional
        The free flyer's coordinates to list before the joints.

    Returns
    -------
    str
    """
    lines = ["parameters"] + ([f"  {name} = {value:.6g}" for name, value in sorted(scene.values.items())] or ["  (none)"])
    lines.append("configuration")
    lines += [f"  {name} = {value:.6g}" for name, value in (coordinates or ())]
    lines += [f"  {j.variable or 'q' + j.label} = {value:.6g} {_unit(j.kind)}" for j, value in zip(scene.joints, scene.q)]
    return "\n".join(lines)


def _segment(ax, points, **style):
    points = numpy.asarray(points, dtype=float)
    return ax.plot(points[:, 0], points[:, 1], points[:, 2], **style)[0]


def _perpendicular(axis):
    """Two unit vectors that make an orthonormal basis with the unit ``axis``."""
    helper = numpy.eye(3)[int(numpy.argmin(numpy.abs(axis)))]
    u = numpy.cross(axis, helper)
    u /= numpy.linalg.norm(u)
    return u, numpy.cross(axis, u)


def _circle(centre, axis, radius, n=48):
    u, v = _perpendicular(axis)
    t = numpy.linspace(0.0, 2 * numpy.pi, n)
    return centre + radius * (numpy.outer(numpy.cos(t), u) + numpy.outer(numpy.sin(t), v))


def _box(pose, half):
    """The 12 edges of a cube of half-side ``half`` about the frame ``pose`` (4, 4), as one polyline with breaks (NaN)."""
    corners = numpy.array([[x, y, z] for x in (-half, half) for y in (-half, half) for z in (-half, half)])
    world = corners @ pose[:3, :3].T + pose[:3, 3]
    edges = [(0, 1), (0, 2), (0, 4), (1, 3), (1, 5), (2, 3), (2, 6), (3, 7), (4, 5), (4, 6), (5, 7), (6, 7)]
    out = []
    for a, b in edges:
        out += [world[a], world[b], [numpy.nan] * 3]
    return numpy.array(out)


def _plate(pose, half):
    """A square of half-side ``half`` in the xy plane of ``pose``, closed."""
    corners = numpy.array([[-half, -half, 0], [half, -half, 0], [half, half, 0], [-half, half, 0], [-half, -half, 0]])
    return corners @ pose[:3, :3].T + pose[:3, 3]


def link_scale(scene):
    """The typical link length of ``scene``: the median of its links' nonzero lengths (its size if none).

    Joint axes and triads are drawn in proportion to it, so that a long
    robot with short links (Krang's arms) keeps readable symbols.
    """
    lengths = [float(numpy.sum(numpy.linalg.norm(numpy.diff(link.points, axis=0), axis=1))) for link in scene.links]
    lengths = [length for length in lengths if length > 1e-9 * scene.size]
    return float(numpy.median(lengths)) if lengths else scene.size


def scene_limits(scenes):
    """A cube ``(centre (3,), half side)`` holding everything drawn of ``scenes`` (with the joint axes and triads).

    Parameters
    ----------
    scenes : sequence of Scene
        One for a still, every frame of an animation (the view stays fixed).
    """
    reach = max(JOINT_AXIS / 2, TRIAD) * max(link_scale(scene) for scene in scenes)
    points = numpy.concatenate([scene.points() for scene in scenes])
    low, high = points.min(axis=0) - reach, points.max(axis=0) + reach
    return (low + high) / 2, float(numpy.max(high - low)) / 2


def draw_scene(ax, scene, *, triads=True, labels=True, limits=None, legend=True):
    """Draw ``scene`` into the 3D axes ``ax``.

    Parameters
    ----------
    ax : mpl_toolkits.mplot3d.Axes3D
    scene : Scene
    triads : bool, optional
        Draw each frame's x, y, z.
    labels : bool, optional
        Write each frame's label at its origin.
    limits : tuple, optional
        ``(centre, half side)`` of the cube shown (:func:`scene_limits`);
        default the scene's own.
    legend : bool, optional
        A legend of the joint kinds and the frames' axes.

    Returns
    -------
    dict
        The artists: ``"origins"`` (one Line3D through every frame origin,
        markers only, in ``scene.poses`` order), ``"links"``, ``"joints"``,
        ``"labels"`` (label -> Text3D at the frame's origin; frames whose
        origins coincide share one text, ``"4, 5, 6"``), ``"wheels"``.
    """
    size = scene.size
    scale = link_scale(scene)
    artists: dict[str, Any] = {"links": [], "joints": [], "labels": {}, "wheels": []}
    base = scene.base
    if scene.floating:  # the base is a body: a box about frame 0, and the world frame at the origin
        _segment(ax, _box(base, 0.25 * scale), color="0.45", lw=1)
        _triad(ax, numpy.eye(4), 1.5 * TRIAD * scale, artists)
        if labels:
            artists["labels"]["world"] = ax.text(0, 0, 0, " world", fontsize="small", gid="frame:world")
    elif scene.wheels:  # the ground under a wheeled robot
        centre = numpy.array([*numpy.mean([w.centre for w in scene.wheels], axis=0)[:2], 0.0])
        ground = numpy.eye(4)
        ground[:3, 3] = centre
        _segment(ax, _plate(ground, 0.6 * size), color="0.6", lw=1, ls=":")
    else:
        _segment(ax, _plate(base, 0.25 * scale), color="0.45", lw=1.5)
    for link in scene.links:
        artists["links"].append(_segment(ax, link.points, **LINK_STYLE))
    for joint in scene.joints:
        half = JOINT_AXIS * scale / 2
        style = dict(JOINT_STYLE[joint.kind])
        style.update(ls="--" if joint.cut else "-", lw=1.8 if joint.active else 1.2, alpha=1.0 if joint.active else 0.75)
        ends = [joint.origin - half * joint.axis, joint.origin + half * joint.axis]
        artists["joints"].append(_segment(ax, ends, markevery=[0, 1] if joint.kind == "prismatic" else None, **style))
        if joint.kind == "revolute":
            _segment(ax, _circle(joint.origin + 0.6 * half * joint.axis, joint.axis, 0.1 * scale, 24),
                     color=style["color"], lw=1, ls=style["ls"])
    for wheel in scene.wheels:
        artists["wheels"].append(_segment(ax, _circle(wheel.centre, wheel.axis, wheel.radius), color="black", lw=1.5))
        _segment(ax, [wheel.centre - 0.2 * wheel.radius * wheel.axis, wheel.centre + 0.2 * wheel.radius * wheel.axis], color="black", lw=1)
    if triads:
        for pose in scene.poses.values():
            _triad(ax, pose, TRIAD * scale, artists)
    if labels:
        for group in _coincident(scene, 1e-6 * scale):
            text = ax.text(*scene.origin(group[0]), " " + ", ".join(group), fontsize="small", gid="frame:" + ",".join(group))
            artists["labels"].update(dict.fromkeys(group, text))
    origins = numpy.array([pose[:3, 3] for pose in scene.poses.values()])
    artists["origins"] = _segment(ax, origins, ls="none", marker="o", markersize=3, color="black", gid="origins")
    centre, half = limits if limits is not None else scene_limits([scene])
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_zlim(centre[2] - half, centre[2] + half)
    ax.set_box_aspect((1, 1, 1))  # equal scaling: a right angle looks right
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")
    if legend:
        _legend(ax, scene)
    return artists


def _triad(ax, pose, length, artists):
    for k, colour in enumerate(TRIAD_COLOURS):
        _segment(ax, [pose[:3, 3], pose[:3, 3] + length * pose[:3, k]], color=colour, lw=1)


def _coincident(scene, tol):
    """The frames' labels grouped by origin (within ``tol``), in ``scene.poses`` order."""
    groups: list[list[str]] = []
    for label, origin in scene.origins.items():
        for group in groups:
            if numpy.linalg.norm(scene.origin(group[0]) - origin) <= tol:
                group.append(label)
                break
        else:
            groups.append([label])
    return groups


def _legend(ax, scene):
    from matplotlib.lines import Line2D

    kinds = {j.kind for j in scene.joints}
    kk = any(link.kind == "kk" for link in scene.links)
    handles = [Line2D([], [], **LINK_STYLE, label="link (KK frames: b, d, r)" if kk else "link")]
    handles += [Line2D([], [], lw=1.8, **JOINT_STYLE[kind], label=f"{kind} joint axis") for kind in ("revolute", "prismatic") if kind in kinds]
    if scene.cuts:
        handles.append(Line2D([], [], ls="--", color="0.3", label="cut joint (loop closed here)"))
    if scene.wheels:
        handles.append(Line2D([], [], color="black", lw=1.5, label="wheel"))
    handles += [Line2D([], [], color=c, lw=1, label=f"frame {a}") for c, a in zip(TRIAD_COLOURS, "xyz")]
    ax.legend(handles=handles, loc="upper left", fontsize="x-small", framealpha=0.8)


def _skeleton(robot, values):
    return robot if isinstance(robot, Skeleton) else skeleton(robot, values)


def plot(
    robot: Robot | Skeleton,
    q: ArrayLike | None = None,
    values: Mapping[str, float] | None = None,
    ax: Any = None,
    *,
    guess: ArrayLike | None = None,
    triads: bool = True,
    labels: bool = True,
    title: str | None = None,
) -> Any:
    """Draw ``robot`` at the configuration ``q`` in 3D.

    Parameters
    ----------
    robot : Robot or Skeleton
        A :class:`~kanerobot.visual.skeleton.Skeleton` already built for the
        values is used as it is (``values`` is then ignored).
    q : array_like, optional
        The configuration (see :meth:`Skeleton.configuration
        <kanerobot.visual.skeleton.Skeleton.configuration>`: every joint,
        after the free flyer's pose for a floating robot; the active joints
        alone for a closed-loop robot); default 0 (loops closed from the
        active joints at 0).
    values : dict str -> float, optional
        Values of the geometric parameters (see
        :func:`~kanerobot.visual.skeleton.skeleton`); a missing one is an
        error naming it.
    ax : mpl_toolkits.mplot3d.Axes3D, optional
        Draw into these 3D axes (``figure.add_subplot(projection="3d")``);
        the values are then written in the axes' corner.  Default: a new
        figure with the values in a panel beside the view.
    guess : array_like, optional
        The loop solver's starting point (the assembly mode).
    triads, labels : bool, optional
        Draw each frame's axes and its label.
    title : str, optional
        Default: the robot's name and structure.

    Returns
    -------
    matplotlib.figure.Figure
        (annotated ``Any``: matplotlib is an optional dependency, imported
        only when drawing.)  The figure drawn (``ax.figure`` when ``ax`` was given); its
        attribute ``kanerobot_scene`` is the
        :class:`~kanerobot.visual.skeleton.Scene` drawn.

    Raises
    ------
    KaneRobotError
        matplotlib missing, a parameter without a value, a ``q`` of the
        wrong length, ``ax`` not 3D.
    """
    require_matplotlib("drawing a robot")
    draw = _skeleton(robot, values)
    scene = draw(q, guess=guess)
    text = values_text(scene, _flyer_coordinates(draw, q))
    drawn = draw.robot
    kind = drawn.structure + (", floating base" if drawn.floating else "") + (", wheeled base" if drawn.wheeled else "")
    name = title or f"{drawn.name} ({kind})"
    if ax is None:
        figure = figure_canvas(10.0, 7.5)
        grid = figure.add_gridspec(1, 2, width_ratios=(4, 1))
        ax = figure.add_subplot(grid[0, 0], projection="3d")
        side = figure.add_subplot(grid[0, 1])
        side.axis("off")
        side.text(0.0, 1.0, text, va="top", ha="left", family="monospace", fontsize="small", transform=side.transAxes)
    else:
        if getattr(ax, "name", None) != "3d":
            raise KaneRobotError("plot(..., ax=...) needs 3D axes: figure.add_subplot(projection='3d')")
        figure = ax.figure
        ax.text2D(0.0, 0.0, text, va="bottom", ha="left", family="monospace", fontsize="x-small", transform=ax.transAxes)
    draw_scene(ax, scene, triads=triads, labels=labels)
    ax.set_title(name)
    figure.kanerobot_scene = scene
    return figure


def _flyer_coordinates(draw, q):
    """``[(name, value)]`` of the free flyer's coordinates in ``q`` (none for a fixed base)."""
    if not draw.robot.floating:
        return []
    q = draw.default() if q is None else numpy.asarray(q, dtype=float).reshape(-1)
    pose = q[:7].copy()
    pose[3:] /= numpy.linalg.norm(pose[3:]) or 1.0  # as drawn: the skeleton normalises the quaternion
    return list(zip(draw.coordinates[:7], pose))


def write_drawing(robot, path, q=None, values=None, option="q"):
    """Draw ``robot`` (:func:`plot`) and write the figure to ``path`` (:func:`~kanerobot.visual.figures.save`): ``kanerobot draw``.

    Parameters
    ----------
    robot : Robot
    path : str or pathlib.Path
        A .png, .svg or .pdf file; checked before anything is drawn.
    q, values
        As for :func:`plot`.
    option : str, optional
        How the configuration was given, for the message of a ``q`` of the
        wrong length (``"--q"`` on the command line).

    Returns
    -------
    pathlib.Path
    """
    path = Path(path)
    if path.suffix.lower() not in FORMATS:  # before the drawing
        raise KaneRobotError(f"cannot write a figure as {path.name!r}: use a {', '.join(FORMATS)} file")
    draw = skeleton(robot, values)
    try:
        draw.configuration(q)
    except KaneRobotError as exc:
        raise KaneRobotError(f"{option}: {exc}") from None
    return save(plot(draw, q), path)
