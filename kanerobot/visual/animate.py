"""Animations of a simulation: ``SimulationResult.animate("run.gif")`` and ``kanerobot simulate ... --animate``.

Each frame is the robot's :class:`~kanerobot.visual.skeleton.Scene` at one
row of ``result.q``, drawn as :func:`kanerobot.visual.draw.plot` draws a
still, in a view fixed for the whole run (equal scaling, the cube that
holds every frame).  The run is subsampled to ``frames`` rows spread evenly
over it (default: real time at ``fps`` frames per second, at most
:data:`MAX_FRAMES`).

Formats, all through matplotlib:

- ``.gif``: Pillow (which comes with matplotlib);
- ``.html``: a page with the frames embedded and a player (matplotlib's
  HTMLWriter; no ffmpeg);
- ``.mp4``: ffmpeg, found on the PATH or given by the ``imageio-ffmpeg``
  package; without either, one error says how to get it.

The file is written in a scratch folder beside it and becomes ``path``
only once complete (:func:`kanerobot.robot.files.atomic_write`).
"""

import contextlib
import shutil
import tempfile
from pathlib import Path

import numpy

from kanerobot.errors import KaneRobotError
from kanerobot.progress import slow_step
from kanerobot.robot.files import atomic_write, missing_folder
from kanerobot.visual.draw import draw_scene, scene_limits, values_text
from kanerobot.visual.figures import figure_canvas, require_matplotlib
from kanerobot.visual.skeleton import skeleton

__all__ = ["FORMATS", "MAX_FRAMES", "animate", "animation_scenes", "check_path", "ffmpeg_path", "frame_rows"]

#: What an animation can be written as.
FORMATS = (".gif", ".html", ".mp4")
#: The most frames drawn by default (a longer run is subsampled further).
MAX_FRAMES = 150


def ffmpeg_path():
    """The ffmpeg executable: ``ffmpeg`` on the PATH, else the one of the ``imageio-ffmpeg`` package; None if neither."""
    found = shutil.which("ffmpeg")
    if found:
        return found
    try:
        import imageio_ffmpeg
    except ImportError:
        return None
    try:
        return imageio_ffmpeg.get_ffmpeg_exe()
    except RuntimeError:  # the package without its binary
        return None


def check_path(path):
    """``path`` as a Path, checked before any work: a known suffix, matplotlib, ffmpeg for .mp4, an existing folder.

    Raises
    ------
    KaneRobotError
        Saying what to change or install.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise KaneRobotError(f"cannot write an animation as {path.name!r}: use a {', '.join(FORMATS)} file")
    require_matplotlib("an animation")
    if suffix == ".mp4" and ffmpeg_path() is None:
        raise KaneRobotError(
            f"{path.name}: an .mp4 animation needs ffmpeg, which was not found: pip install 'kanerobot[animation]' "
            "(imageio-ffmpeg, which brings it) or install ffmpeg (apt-get install ffmpeg); or write a .gif or .html "
            "animation, which need no ffmpeg"
        )
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise KaneRobotError(f"{path}: {missing_folder(folder)}")
    return path


def frame_rows(t, fps=20, frames=None):
    """The rows of a run drawn as frames: ``frames`` rows spread evenly over the run's times.

    Parameters
    ----------
    t : numpy.ndarray, shape (N,)
        The run's times.
    fps : float, optional
        Frames per second of the animation.
    frames : int, optional
        How many; default real time (``duration * fps``) within
        ``[2, MAX_FRAMES]``, and never more than the run's samples.

    Returns
    -------
    numpy.ndarray of int
        Increasing row indices, the first and last rows included.

    Examples
    --------
    >>> frame_rows(numpy.linspace(0.0, 1.0, 101), fps=10).tolist()
    [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
    """
    t = numpy.asarray(t, dtype=float)
    if len(t) == 0:
        raise KaneRobotError("the run has no samples to animate")
    if frames is None:
        frames = int(numpy.clip(round((t[-1] - t[0]) * fps) + 1, 2, MAX_FRAMES))
    elif int(frames) != frames or frames < 1:
        raise KaneRobotError(f"frames must be a whole number >= 1, got {frames!r}")
    # the sample nearest to each of `frames` evenly spread times
    targets = numpy.linspace(t[0], t[-1], int(frames))
    rows = numpy.clip(numpy.searchsorted(t, targets), 0, len(t) - 1)
    earlier = numpy.clip(rows - 1, 0, len(t) - 1)
    rows = numpy.where(numpy.abs(t[earlier] - targets) <= numpy.abs(t[rows] - targets), earlier, rows)
    return numpy.unique(rows)


def _columns(result, draw):
    """The columns of ``result.q`` that make the skeleton's configuration (by name, through the state's aliases)."""
    space = result.numeric.state_space
    names = list(result.coordinates)
    out = []
    for name in draw.coordinates:
        if name in names:
            out.append(names.index(name))
        elif name in space.aliases:
            out.append(space.aliases[name])
        else:
            raise KaneRobotError(f"the run of {result.name} has no column for coordinate {name!r} of its drawing ({', '.join(names)})")
    return out


def animation_scenes(result, fps=20, frames=None, values=None):
    """The scenes an animation of ``result`` draws, one per frame.

    Parameters
    ----------
    result : SimulationResult
    fps, frames
        As for :func:`frame_rows`.
    values : dict, optional
        Geometric values on top of the run's own (``result.numeric.state_space.values``).

    Returns
    -------
    rows : numpy.ndarray of int
        The rows of the run drawn.
    scenes : list of Scene
    """
    robot = result.numeric.model.robot
    given = dict(result.numeric.state_space.values or {})  # every structure's numeric model binds its values there
    given.update(values or {})
    draw = skeleton(robot, given)
    columns = _columns(result, draw)
    rows = frame_rows(result.t, fps, frames)
    return rows, [draw(result.q[row, columns]) for row in rows]


def _writer(suffix, fps):
    from matplotlib import animation

    if suffix == ".gif":
        return animation.PillowWriter(fps=fps)
    if suffix == ".html":
        return animation.HTMLWriter(fps=fps, embed_frames=True)
    return animation.FFMpegWriter(fps=fps)


def animate(result, path, fps=20, frames=None, *, values=None, triads=True, labels=True, dpi=80):
    """Write an animation of a simulation to ``path`` (.gif, .html or .mp4).

    Parameters
    ----------
    result : SimulationResult
    path : str or path-like
    fps : float, optional
        Frames per second.
    frames : int, optional
        How many frames (the run is subsampled to them); default real time
        at ``fps``, at most :data:`MAX_FRAMES`.
    values : dict, optional
        Geometric values the run's model lacks (the run's own,
        ``result.numeric.state_space.values``, are used).
    triads, labels : bool, optional
        Draw each frame's axes and label.
    dpi : int, optional
        Resolution of the frames (the figure is 8 x 6 inches).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    KaneRobotError
        A suffix other than .gif, .html, .mp4; matplotlib missing; ffmpeg
        missing for .mp4 (with how to get it); ``frames`` not a whole
        number >= 1.
    """
    path = check_path(path)
    if not (numpy.isfinite(fps) and fps > 0):
        raise KaneRobotError(f"fps must be a positive number, got {fps!r}")
    rows, scenes = animation_scenes(result, fps, frames, values)
    limits = scene_limits(scenes)
    figure = figure_canvas(8.0, 6.0)
    grid = figure.add_gridspec(1, 2, width_ratios=(4, 1))
    ax = figure.add_subplot(grid[0, 0], projection="3d")
    side = figure.add_subplot(grid[0, 1])
    side.axis("off")
    text = side.text(0.0, 1.0, "", va="top", ha="left", family="monospace", fontsize="x-small", transform=side.transAxes)
    suffix = path.suffix.lower()
    writer = _writer(suffix, fps)
    # the writers take a file name: they write in a scratch folder, and the file becomes `path` whole
    with tempfile.TemporaryDirectory(prefix=f".{path.name}.", dir=path.parent if str(path.parent) else ".") as scratch:
        temporary = Path(scratch) / f"animation{suffix}"
        with slow_step(f"animating {result.name}: {len(scenes)} frames to {path}"):
            context = _ffmpeg_context() if suffix == ".mp4" else contextlib.nullcontext()
            with context, writer.saving(figure, str(temporary), dpi):
                for row, scene in zip(rows, scenes):
                    ax.cla()
                    draw_scene(ax, scene, triads=triads, labels=labels, limits=limits)
                    ax.set_title(f"{result.name}   t = {result.t[row]:.3f} s")
                    text.set_text(values_text(scene))
                    writer.grab_frame()
        atomic_write(path, lambda handle: handle.write(temporary.read_bytes()))
    return path


def _ffmpeg_context():
    """matplotlib's ffmpeg path set, for this writing only, to the one :func:`ffmpeg_path` found."""
    import matplotlib

    return matplotlib.rc_context({"animation.ffmpeg_path": ffmpeg_path()})
