"""SimulationResult.animate and ``kanerobot simulate --animate``: a short Krang run as GIF, HTML
and (with ffmpeg) MP4; the frames drawn are the robot at the run's rows (checked against the
generated pose programs), and they differ from one another."""

import base64
import itertools
import re

import numpy
import pytest
from conftest import assert_close, derived, library
from scipy.spatial.transform import Rotation

import kanerobot as kr
from kanerobot.cli import main
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.visual import animate as animation

pytest.importorskip("matplotlib", reason="animations need matplotlib: pip install 'kanerobot[plot]'")


@pytest.fixture(scope="module")
def krang_run():
    """Krang falling for 0.2 s from rest at q = 0 (random physical parameters), 11 samples."""
    robot = library("krang")
    values = random_parameters(robot, numpy.random.default_rng(3), friction=False, wrench=False)
    fn = derived("krang").numeric(values, backend="numpy")
    x0 = numpy.zeros(2 * robot.nj)
    x0[: robot.nj] = numpy.linspace(-0.3, 0.3, robot.nj)  # arms spread: the whole body moves
    return kr.simulate(fn, None, x0, (0.0, 0.2), t_eval=numpy.linspace(0.0, 0.2, 11))


def frames_of_gif(path):
    from PIL import Image, ImageSequence

    with Image.open(path) as image:
        return [numpy.asarray(frame.convert("RGB"), dtype=int) for frame in ImageSequence.Iterator(image)]


@pytest.mark.long
def test_gif_of_a_krang_run(krang_run, tmp_path):
    path = krang_run.animate(tmp_path / "krang.gif", fps=20, frames=4)
    assert path == tmp_path / "krang.gif" and list(tmp_path.iterdir()) == [path]
    frames = frames_of_gif(path)
    assert len(frames) == 4 and frames[0].shape == (480, 640, 3)
    # the view of the robot (below the title, left of the values) changes from frame to frame
    views = [f[70:460, :440] for f in frames]
    for a, b in itertools.pairwise(views):
        assert numpy.mean(numpy.any(a != b, axis=-1)) > 1e-3


def test_frames_are_the_robot_at_the_rows_of_the_run(krang_run):
    """Each frame's origins are the numeric model's generated pose programs at that row of result.q."""
    rows, scenes = animation.animation_scenes(krang_run, frames=4)
    assert rows.tolist() == [0, 3, 7, 10]  # the samples nearest to 0, 0.0667, 0.1333, 0.2 s
    fn = krang_run.numeric
    for row, scene in zip(rows, scenes):
        assert_close(scene.q, krang_run.q[row], rtol=1e-15)
        for label in library("krang").labels:
            assert_close(scene.origin(label), fn.pose(label, krang_run.q[row])[:3, 3], rtol=1e-12, what=f"frame {label}")
    moved = [numpy.linalg.norm(scenes[-1].origin(label) - scenes[0].origin(label)) for label in ("10l", "10r")]
    assert min(moved) > 1e-3  # the hands moved between the first and last frames


def test_html_animation(krang_run, tmp_path):
    path = krang_run.animate(tmp_path / "krang.html", fps=10, frames=3)
    text = path.read_text()
    images = re.findall(r"data:image/png;base64,([A-Za-z0-9+/=\\\n]+)", text)
    assert len(images) == 3
    assert base64.b64decode(images[0].replace("\\\n", "").replace("\n", ""))[:8] == b"\x89PNG\r\n\x1a\n"


def test_mp4_animation_or_how_to_get_ffmpeg(krang_run, tmp_path, monkeypatch):
    if animation.ffmpeg_path() is not None:
        path = krang_run.animate(tmp_path / "krang.mp4", fps=10, frames=3)
        assert path.read_bytes()[4:8] == b"ftyp"  # an ISO media file
    monkeypatch.setattr(animation, "ffmpeg_path", lambda: None)
    with pytest.raises(kr.KaneRobotError) as info:
        krang_run.animate(tmp_path / "other.mp4")
    assert str(info.value) == (
        "other.mp4: an .mp4 animation needs ffmpeg, which was not found: pip install 'kanerobot[animation]' "
        "(imageio-ffmpeg, which brings it) or install ffmpeg (apt-get install ffmpeg); or write a .gif or .html "
        "animation, which need no ffmpeg"
    )


def test_animation_errors(krang_run, tmp_path):
    with pytest.raises(kr.KaneRobotError, match=r"^cannot write an animation as 'krang.avi': use a .gif, .html, .mp4 file$"):
        krang_run.animate(tmp_path / "krang.avi")
    with pytest.raises(kr.KaneRobotError, match=r"^frames must be a whole number >= 1, got 2.5$"):
        krang_run.animate(tmp_path / "krang.gif", frames=2.5)
    with pytest.raises(kr.KaneRobotError, match=r"folder .*nowhere does not exist: create it first$"):
        krang_run.animate(tmp_path / "nowhere" / "krang.gif")
    assert not list(tmp_path.iterdir())


def test_frame_rows_spread_over_the_run():
    t = numpy.array([0.0, 0.1, 0.15, 0.4, 1.0])
    assert animation.frame_rows(t, frames=3).tolist() == [0, 3, 4]  # nearest to 0, 0.5, 1
    assert animation.frame_rows(t, fps=2).tolist() == [0, 3, 4]  # real time: 1 s at 2 frames/s, 3 frames
    assert animation.frame_rows(numpy.linspace(0, 100, 1001)).tolist()[-1] == 1000
    assert len(animation.frame_rows(numpy.linspace(0, 100, 1001))) == animation.MAX_FRAMES


def test_simulate_animate_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "run.gif"
    assert main(["simulate", "planar2", "--t", "0.3", "--samples", "11", "--animate", str(path)]) == 0
    assert f"written {path}" in capsys.readouterr().err
    assert len(frames_of_gif(path)) == 7  # real time: 0.3 s at 20 frames/s, within the 11 samples
    assert main(["simulate", "planar2", "--t", "0.3", "--animate", str(tmp_path / "run.avi")]) == 2
    assert capsys.readouterr().err.strip() == "kanerobot: error: cannot write an animation as 'run.avi': use a .gif, .html, .mp4 file"


#: A short run of each other structure: its start (x0) or None for rest at q = 0, and the solver.
STRUCTURES = {
    "fourbar": ([1.2, -1.2, 1.2, -1.2, 0.5], "DOP853"),  # closed loop: q holds every joint, closed
    "diffdrive": ([0.0] * 7 + [1.0, 2.0], "DOP853"),  # wheeled: the posture moves
    "planar2flex": (None, "Radau"),  # flexible joints: q holds the links, then the motors
    "satellite": (None, "DOP853"),  # floating base: q starts with the base's pose
}


@pytest.mark.parametrize("name", sorted(STRUCTURES))
@pytest.mark.long
def test_every_structure_animates_and_plots(name, tmp_path):
    """The frames of a run of each structure are the robot at its rows (the geometric model's
    transforms, after the free flyer's pose), and its figures have a unit on every panel."""
    from kanerobot.geometry import numeric_function, transform
    from kanerobot.visual.figures import simulation_figures

    robot = library(name)
    x0, method = STRUCTURES[name]
    values = random_parameters(robot, numpy.random.default_rng(1), friction=False, wrench=False)
    fn = derived(name).numeric(values, backend="numpy")
    space = fn.state_space
    if x0 is None:
        x0 = numpy.concatenate([space.origin, numpy.full(space.nv, 0.2)])
    run = kr.simulate(fn, None, x0, (0.0, 0.1), t_eval=numpy.linspace(0.0, 0.1, 3), method=method)
    rows, scenes = animation.animation_scenes(run, frames=3)
    assert rows.tolist() == [0, 1, 2]
    geometric = {k: v for k, v in space.values.items() if k in robot.geometric_parameters}
    for row, scene in zip(rows, scenes):
        q = run.q[row]
        joints = q[7:] if robot.floating else q[: robot.nj]  # flexible joints: the links, before the motors
        world = numpy.eye(4)
        if robot.floating:  # wT_0 from the run's x y z and quaternion (x y z w)
            world[:3, :3] = Rotation.from_quat(q[3:7]).as_matrix()
            world[:3, 3] = q[:3]
        for label in robot.labels:
            pose = numeric_function(robot, transform(robot, "0", label), geometric)(joints)
            assert_close(scene.poses[label], world @ pose, rtol=1e-12, what=f"{name} frame {label} at row {row}")
    assert numpy.max([numpy.linalg.norm(scenes[-1].origin(k) - scenes[0].origin(k)) for k in robot.labels]) > 1e-4
    path = run.animate(tmp_path / f"{name}.gif", frames=3)
    assert len(frames_of_gif(path)) == 3
    for figure in simulation_figures(run).values():
        assert all(ax.get_ylabel().endswith("]") for ax in figure.axes if ax.lines)
