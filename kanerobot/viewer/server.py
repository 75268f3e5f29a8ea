"""The browser viewer: the robot in 3D on a local page, served by viser.

:func:`view` (``kr.view``) starts a :class:`Viewer`: a viser server on the
loopback interface (127.0.0.1) and a free port, whose page shows

- the robot: its links as the polylines of its table, its joint axes
  (cylinders for revolute joints, bars for prismatic ones), the base, and
  each frame's triad with its label; a URDF's own meshes and shapes when the
  files are at hand (:mod:`kanerobot.viewer.visuals`);
- a slider per joint, which moves the robot (the server computes the
  geometry and sends the new poses);
- checkboxes that show or hide the frames, the links and the meshes;
- with a saved simulation (``play=``), a time slider, Play/Pause and the
  speed: the recorded configurations, sample by sample.

The page is viser's own built web client; nothing is fetched from the
network.  The server runs in background threads: :meth:`Viewer.stop` (or
leaving a ``with`` block) ends it, and :meth:`Viewer.wait` blocks until
Ctrl-C, as ``kanerobot view`` does.
"""

import contextlib
import io
import math
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import cast

import numpy as np
from numpy.typing import ArrayLike

from kanerobot.errors import KaneRobotError
from kanerobot.robot import joints
from kanerobot.robot.description import BASE, Robot
from kanerobot.simulation import SimulationResult
from kanerobot.viewer.recording import Recording, read_recording
from kanerobot.viewer.visuals import missing_meshes, urdf_visuals

__all__ = ["LOOPBACK", "Viewer", "serve", "view"]

#: The address served by default: this machine only.
LOOPBACK = "127.0.0.1"
#: Colours (RGB 0-255) of the simple shapes.
LINK_COLOUR = (40, 60, 90)
REVOLUTE_COLOUR = (240, 140, 20)
PRISMATIC_COLOUR = (140, 60, 200)
BASE_COLOUR = (120, 120, 120)
CUT_COLOUR = (220, 30, 30)
WHEEL_COLOUR = (30, 30, 30)
#: The sliders of a floating base, before the joints': position (m) and roll-pitch-yaw (rad, URDF's Rz Ry Rx).
FLOATING_SLIDERS = ("x", "y", "z", "roll", "pitch", "yaw")
#: Slider steps: rad for revolute joints; a prismatic joint's is its range / this.
ANGLE_STEP = 1e-3
PRISMATIC_STEPS = 2000


def _need_viser():
    try:
        import viser
    except ImportError:
        raise KaneRobotError("the viewer needs viser: pip install 'kanerobot[view]'") from None
    return viser


def _quaternion(R):
    """``(w, x, y, z)`` of a rotation matrix (viser's convention)."""
    from viser.transforms import SO3

    return np.asarray(SO3.from_matrix(np.asarray(R, dtype=float)).wxyz)


def _z_to(u):
    """A rotation taking z to the unit vector ``u`` (the cylinders of viser are along z)."""
    u = np.asarray(u, dtype=float)
    z = np.array([0.0, 0.0, 1.0])
    v, c = np.cross(z, u), float(z @ u)
    if np.linalg.norm(v) < 1e-12:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    K = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + K + K @ K / (1 + c)  # Rodrigues with sin = |v|, 1 - cos = |v|^2 / (1 + c)


def _segments(scene):
    """The links' polylines as segments, shape (k, 2, 3), float32 for viser."""
    pairs = [np.stack([link.points[:-1], link.points[1:]], axis=1) for link in scene.links]
    return np.concatenate(pairs).astype(np.float32) if pairs else np.zeros((0, 2, 3), np.float32)


def _cut_segments(scene):
    """Each loop's gap between its cut joint and the frame closing it (a point when closed)."""
    return np.array([c.points for c in scene.cuts], dtype=np.float32).reshape(-1, 2, 3)


def _extent(scene):
    """The centre and radius of the scene's points: the sizes of shapes and axes, the camera."""
    points = scene.points()
    centre = (points.min(axis=0) + points.max(axis=0)) / 2
    radius = float(np.max(np.linalg.norm(points - centre, axis=1)))
    return centre, (radius if radius > 1e-9 else 1.0)


def _as_robot(robot):
    """A Robot from a Robot, a file or a library name; and the URDF file it came from, if it did."""
    from kanerobot.library import resolve
    from kanerobot.robot.description import Robot
    from kanerobot.robot.io import load

    if isinstance(robot, Robot):
        return robot, None
    path = resolve(str(robot))
    return load(path), (Path(path) if Path(path).suffix == ".urdf" else None)


def _as_recording(play):
    if play is None or isinstance(play, Recording):
        return play
    if hasattr(play, "t") and hasattr(play, "q") and hasattr(play, "coordinates"):  # a SimulationResult
        return Recording(np.asarray(play.t, dtype=float), np.asarray(play.q, dtype=float), tuple(play.coordinates), "the run")
    return read_recording(play)


class Viewer:
    """A running viewer: the server, its page's controls and the configuration shown.

    Made by :func:`view`; see there for the parameters.

    Attributes
    ----------
    robot : Robot
    coordinates : tuple of str
        The names of the entries of :attr:`q`, one slider each.
    url : str
        The page, ``http://127.0.0.1:PORT/``.
    """

    def __init__(self, robot, values=None, q=None, play=None, *, urdf=None, host=LOOPBACK, port=0, frames=True, verbose=True):
        from kanerobot.visual.skeleton import skeleton

        viser = _need_viser()
        self.robot, found_urdf = _as_robot(robot)
        # a missing value, a wrong q, a run of another robot fail here, before a port is taken
        self.skeleton = skeleton(self.robot, values)
        self.coordinates = (FLOATING_SLIDERS if self.robot.floating else ()) + tuple(
            self.robot.active_joints if self.robot.loops else self.robot.joint_labels
        )
        self.recording = _as_recording(play)
        # a flexible joint's run names its link side by the joint variable (th1), the skeleton by the label (1)
        aliases = {label: str(self.robot.frame(label).q) for label in self.robot.joint_labels}
        self._played = self.recording.columns(self.skeleton.coordinates, aliases) if self.recording is not None else None
        self.scene = None
        self._q = np.zeros(len(self.coordinates))  # joints at 0, a floating base at the origin: the skeleton's default
        if q is not None:
            self._q = self._checked(q, "q")  # a dict sets some coordinates and leaves the others at that default
        elif self._played is not None:
            self._q = self._sliders_of(self._played[0])
        first = self._scene_of(self._q) if self._played is None or q is not None else self.skeleton(self._played[0])
        urdf = urdf if urdf is not None else found_urdf
        self.visuals = urdf_visuals(urdf) if urdf else []
        lost = missing_meshes(self.visuals, urdf) if urdf else None
        if lost:
            print(lost, flush=True)
        self.centre, self.scale = _extent(first)
        self._lock = threading.RLock()
        self._quiet = False
        self._playing = threading.Event()
        self._closed = threading.Event()
        self._player = None
        with contextlib.redirect_stdout(io.StringIO()):  # viser prints its own address box: the viewer prints one line
            self.server = viser.ViserServer(host=host, port=port, verbose=False)
        try:
            self.host, self.port = host, self.server.get_port()
            self._build_scene(first, frames)
            self._build_gui(frames)
            self._draw(self._q, first)
        except BaseException:
            self.stop()
            raise
        if verbose:
            print(f"kanerobot: viewing {self.robot.name} at {self.url} (Ctrl-C stops)", flush=True)

    # ------------------------------------------------------------ state
    @property
    def url(self):
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    @property
    def q(self):
        """The configuration shown (a copy): the sliders' values, in :attr:`coordinates` order."""
        with self._lock:
            return self._q.copy()

    def set_q(self, q):
        """Show configuration ``q``: one value per coordinate, or a dict name -> value for some of them.

        Raises
        ------
        KaneRobotError
            A wrong size or name, values that are not finite, loops that do not close.
        """
        q = self._checked(q, "q")
        self._show(q, self._scene_of(q))

    def _show(self, q, scene):
        """Set the sliders to ``q`` (one redraw, not one per slider) and draw ``scene``."""
        with self._lock:
            self._quiet = True
            try:
                for slider, value in zip(self._sliders, q):
                    slider.value = float(value)
            finally:
                self._quiet = False
            self._draw(q, scene)

    def _checked(self, q, what):
        if isinstance(q, dict):
            unknown = sorted(set(map(str, q)) - set(self.coordinates))
            if unknown:
                raise KaneRobotError(f"{what}: {', '.join(unknown)} not among the coordinates of {self.robot.name} ({', '.join(self.coordinates)})")
            base = self._q.copy()
            for name, value in q.items():
                base[self.coordinates.index(str(name))] = float(value)
            q = base
        q = np.asarray(q, dtype=float).reshape(-1)
        if q.shape != (len(self.coordinates),):
            loops = " (the active joints: the loops are closed numerically)" if self.robot.loops else ""
            raise KaneRobotError(
                f"{what} has {q.size} values; {self.robot.name} shows {len(self.coordinates)}{loops}: {', '.join(self.coordinates)}"
            )
        if not np.all(np.isfinite(q)):
            raise KaneRobotError(f"{what} holds NaN or infinite values")
        return q

    def _scene_of(self, q):
        """The skeleton's Scene at slider values ``q``."""
        if self.robot.floating:
            from kanerobot.robot.urdf import rpy_matrix

            w, x, y, z = _quaternion(rpy_matrix(*q[3:6]))
            return self.skeleton(np.concatenate([q[:3], [x, y, z, w], q[6:]]))
        if self.robot.loops:
            # from the configuration shown, so that the loops keep their assembly mode as a slider moves
            guess = dict(zip(self.robot.joint_labels, self.scene.q)) if self.scene is not None else None
            return self.skeleton(q, guess=guess)
        return self.skeleton(q)

    def _sliders_of(self, full):
        """Slider values of a configuration in the skeleton's layout (a recorded row)."""
        full = np.asarray(full, dtype=float)
        base = ()
        if self.robot.floating:
            from viser.transforms import SO3

            x, y, z, w = full[3:7] / np.linalg.norm(full[3:7])
            base, full = (*full[:3], *SO3(np.array([w, x, y, z])).as_rpy_radians()), full[7:]
        if self.robot.loops:
            full = full[[self.robot.joint_labels.index(label) for label in self.robot.active_joints]]
        return np.concatenate([np.asarray(base, dtype=float), full])

    # ------------------------------------------------------------ scene
    def _build_scene(self, scene, frames):
        viewer, s = self.server.scene, self.scale
        viewer.set_up_direction("+z")
        viewer.add_grid("/ground", width=4 * s, height=4 * s, cell_size=s / 4, section_size=s)
        if self.robot.floating:  # the world apart from the free flyer's frame 0
            viewer.add_frame("/world", axes_length=0.3 * s, axes_radius=0.008 * s, origin_radius=0.015 * s)
        self._frames = {}
        for label in scene.poses:
            self._frames[label] = viewer.add_frame(
                f"/robot/{label}", show_axes=frames, axes_length=0.25 * s, axes_radius=0.012 * s, origin_radius=0.02 * s
            )
            self._frames[label].label = viewer.add_label(f"/robot/{label}/name", f"frame {label}", visible=frames)
        self._frames[BASE].base = viewer.add_box(
            f"/robot/{BASE}/base", color=BASE_COLOUR, dimensions=(0.3 * s, 0.3 * s, 0.04 * s), position=(0, 0, -0.02 * s)
        )
        self._links = viewer.add_line_segments("/links", points=_segments(scene), colors=LINK_COLOUR, thickness=0.03 * s)
        self._cuts = viewer.add_line_segments("/cuts", points=_cut_segments(scene), colors=CUT_COLOUR, thickness=0.03 * s)
        self._axes = {}
        for joint in scene.joints:
            colour = CUT_COLOUR if joint.cut else REVOLUTE_COLOUR if joint.kind == "revolute" else PRISMATIC_COLOUR
            opacity = None if joint.active else 0.5  # passive joints of loops: paler
            if joint.kind == "revolute":
                handle = viewer.add_cylinder(f"/axes/{joint.label}", radius=0.05 * s, height=0.2 * s, color=colour, opacity=opacity)
            else:
                handle = viewer.add_box(f"/axes/{joint.label}", color=colour, dimensions=(0.06 * s, 0.06 * s, 0.3 * s), opacity=opacity)
            self._axes[joint.label] = handle
        self._wheels = {
            w.joint: viewer.add_cylinder(f"/wheels/{w.joint}", radius=w.radius, height=0.3 * w.radius, color=WHEEL_COLOUR, opacity=0.8)
            for w in scene.wheels
        }
        self._meshes = [self._add_visual(k, v) for k, v in enumerate(self.visuals)]
        # from the front right, above, far enough for the whole robot in viser's 50 degree view
        self.server.initial_camera.position = tuple(self.centre + 3.0 * s * np.array([0.66, -0.66, 0.36]))
        self.server.initial_camera.look_at = tuple(self.centre)

    def _add_visual(self, k, visual):
        scene = self.server.scene
        name = f"/robot/{visual.label}/visual{k}"
        colour = tuple(round(255 * c) for c in visual.rgba[:3])
        opacity = None if visual.rgba[3] >= 1 else float(visual.rgba[3])
        pose = {"wxyz": _quaternion(visual.origin[:3, :3]), "position": visual.origin[:3, 3]}
        if visual.kind == "box":
            return scene.add_box(name, color=colour, dimensions=visual.size, opacity=opacity, **pose)
        if visual.kind == "cylinder":
            return scene.add_cylinder(name, radius=visual.size[0], height=visual.size[1], color=colour, opacity=opacity, **pose)
        if visual.kind == "sphere":
            return scene.add_icosphere(name, radius=visual.size[0], color=colour, opacity=opacity, **pose)
        if visual.path is None:  # not on disk: missing_meshes said so in __init__
            return None
        import trimesh

        try:
            mesh = cast("trimesh.Trimesh", trimesh.load(visual.path, force="mesh"))  # force="mesh": one Trimesh
        except Exception as exc:  # trimesh raises many kinds for unreadable files
            print(f"kanerobot: {visual.path}: cannot read the mesh ({exc}); the frame is drawn without it", flush=True)
            return None
        vertices = np.asarray(mesh.vertices, dtype=np.float32) * np.asarray(visual.size, dtype=np.float32)
        return scene.add_mesh_simple(name, vertices, np.asarray(mesh.faces, dtype=np.uint32), color=colour, opacity=opacity, **pose)

    def _draw(self, q, scene):
        """Move the 3D scene to ``scene`` and keep ``q`` as the state."""
        with self._lock, self.server.atomic():
            self._q, self.scene = np.array(q, dtype=float), scene
            for label, T in scene.poses.items():
                self._frames[label].position = T[:3, 3]
                self._frames[label].wxyz = _quaternion(T[:3, :3])
            self._links.points = _segments(scene)
            self._cuts.points = _cut_segments(scene)
            for joint in scene.joints:
                self._axes[joint.label].position = joint.origin
                self._axes[joint.label].wxyz = _quaternion(_z_to(joint.axis))
            for wheel in scene.wheels:
                self._wheels[wheel.joint].position = wheel.centre
                self._wheels[wheel.joint].wxyz = _quaternion(_z_to(wheel.axis))
            if self._configuration is not None:
                self._configuration.value = self._q_text(self._q)
                self._status.content = ""

    def _q_text(self, q):
        return ", ".join(f"{name}={value:.6g}" for name, value in zip(self._names, q))

    # -------------------------------------------------------------- GUI
    def _range(self, k):
        """The slider's range of coordinate k: the joint's limits, else +-pi rad or +-2 reach, widened to hold q."""
        label = self.coordinates[k]
        limits = self.robot.limits.get(label) if self.robot.limits else None
        base = self.robot.floating and k < len(FLOATING_SLIDERS)
        prismatic = k < 3 if base else isinstance(self.robot.frame(label).joint, joints.Prismatic)
        lower, upper = (-2 * self.scale, 2 * self.scale) if prismatic else (-math.pi, math.pi)
        if limits is not None and limits.lower is not None and limits.upper is not None:
            lower, upper = float(limits.lower), float(limits.upper)
        lower, upper = min(lower, float(self._q[k])), max(upper, float(self._q[k]))
        step = (upper - lower) / PRISMATIC_STEPS if prismatic else ANGLE_STEP
        return lower, upper, step

    def _build_gui(self, frames):
        gui = self.server.gui
        gui.add_markdown(f"**{self.robot.name}** ({self.robot.structure}, {len(self.coordinates)} joints)")
        # the joint variables' names (th1, q_hinge), the base's x .. yaw
        self._names = [label if self.robot.floating and k < len(FLOATING_SLIDERS) else str(self.robot.frame(label).q)
                       for k, label in enumerate(self.coordinates)]  # fmt: skip
        self._configuration = None
        with gui.add_folder("Joints"):
            self._sliders = []
            for k, name in enumerate(self._names):
                lower, upper, step = self._range(k)
                slider = gui.add_slider(name, min=lower, max=upper, step=step, initial_value=float(self._q[k]))
                slider.on_update(self._slid)
                self._sliders.append(slider)
        self._configuration = gui.add_text("q", self._q_text(self._q), disabled=True, hint="the configuration shown")
        self._status = gui.add_markdown("")
        with gui.add_folder("Show"):
            shown = gui.add_checkbox("frames", frames, hint="each frame's x (red), y (green), z (blue) and its label")
            shown.on_update(lambda event: self._toggle_frames(event.target.value))
            links = gui.add_checkbox("links", not self._meshes or not any(self._meshes))
            links.on_update(lambda event: setattr(self._links, "visible", event.target.value))
            self._links.visible = links.value
            if any(m is not None for m in self._meshes):
                meshes = gui.add_checkbox("meshes", True, hint="the URDF's visual elements")
                meshes.on_update(self._show_meshes)
        if self._played is not None:
            self._build_playback(gui)

    def _toggle_frames(self, shown):
        with self.server.atomic():
            for handle in self._frames.values():
                handle.show_axes = shown
                handle.label.visible = shown

    def _slid(self, event):
        if self._quiet:
            return
        with self._lock:
            q = np.array([s.value for s in self._sliders], dtype=float)
            try:
                scene = self._scene_of(q)
            except KaneRobotError as exc:  # loops that do not close there: say so, keep the last picture
                self._status.content = f"**not shown**: {exc}"
                return
            self._draw(q, scene)

    def _build_playback(self, gui):
        t = self.recording.t
        with gui.add_folder("Playback"):
            gui.add_markdown(f"{self.recording.source}: {len(t)} samples, t = {t[0]:g} .. {t[-1]:g} s")
            step = float(np.min(np.diff(t))) if len(t) > 1 and np.min(np.diff(t)) > 0 else 1.0
            self._time = gui.add_slider("time (s)", min=float(t[0]), max=float(max(t[-1], t[0] + step)), step=step, initial_value=float(t[0]))
            self._time.on_update(lambda event: self._seek(event.target.value))
            self._play_button = gui.add_button("Play")
            self._play_button.on_click(lambda event: self.play())
            self._pause_button = gui.add_button("Pause")
            self._pause_button.on_click(lambda event: self.pause())
            self._speed = gui.add_number("speed", 1.0, min=0.01, max=100.0, step=0.01, hint="times real time")
            self._loop = gui.add_checkbox("loop", True)
        self._seek(t[0])

    def _show_meshes(self, event):
        for m in self._meshes:
            if m is not None:
                m.visible = event.target.value

    def _seek(self, time):
        """Show the recorded sample nearest ``time``: as saved (a closed loop's every joint, the base's quaternion)."""
        assert self._played is not None  # seeking plays a recording
        row = self._played[self.recording.row_at(time)]
        self._show(self._sliders_of(row), self.skeleton(row))

    # --------------------------------------------------------- playback
    def play(self):
        """Play the saved simulation from the time slider's position (in a background thread)."""
        if self._played is None:
            raise KaneRobotError("nothing to play: give a saved simulation, view(robot, play='run.npz') or kanerobot view ROBOT --play run.npz")
        with self._lock:  # two quick Play clicks start one thread
            if self._playing.is_set():
                return
            self._playing.set()
            self._player = threading.Thread(target=self._run, name="kanerobot-viewer-playback", daemon=True)
            self._player.start()

    def pause(self):
        """Stop playing (the configuration stays where it is)."""
        self._playing.clear()
        if self._player is not None and self._player is not threading.current_thread():
            self._player.join()
        self._player = None

    def _run(self):
        import time

        t = self.recording.t
        start_wall, start_t = time.monotonic(), float(self._time.value)
        if start_t >= t[-1]:
            start_t = float(t[0])
        while self._playing.is_set() and not self._closed.is_set():
            now = start_t + (time.monotonic() - start_wall) * float(self._speed.value)
            if now > t[-1]:
                if not self._loop.value:
                    self._time.value = float(t[-1])
                    break
                start_wall, start_t, now = time.monotonic(), float(t[0]), float(t[0])
            self._time.value = now  # moves the robot through _seek
            self._closed.wait(1 / 30)  # about 30 pictures a second
        self._playing.clear()

    # ---------------------------------------------------------- lifetime
    def stop(self):
        """Stop playing and serving; the port is free when it returns."""
        if self._closed.is_set():
            return
        self._closed.set()
        self._playing.clear()
        if self._player is not None:
            self._player.join()
        with contextlib.redirect_stdout(io.StringIO()):  # viser's "Server stopped"
            self.server.stop()

    def wait(self):
        """Serve until Ctrl-C (KeyboardInterrupt), then stop."""
        try:
            while not self._closed.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def _repr_html_(self):
        """In Jupyter, the page itself in the notebook (the notebook's browser reaches the server on this machine)."""
        return f'<iframe src="{self.url}" width="100%" height="560" style="border: none"></iframe>'

    def __repr__(self):
        return f"<Viewer {self.robot.name} at {self.url}{' (stopped)' if self._closed.is_set() else ''}>"


def view(
    robot: Robot | str | Path,
    values: Mapping[str, float] | None = None,
    q: ArrayLike | None = None,
    play: str | Path | SimulationResult | None = None,
    *,
    urdf: str | Path | None = None,
    host: str = LOOPBACK,
    port: int = 0,
    frames: bool = True,
    verbose: bool = True,
) -> Viewer:
    """Show ``robot`` in the browser: a local page with the robot in 3D and a slider per joint.

    Parameters
    ----------
    robot : Robot, str or Path
        A robot, a robot file (.par, .toml, .urdf) or the name of one in
        frames/.  A URDF file's meshes and shapes are drawn when its mesh
        files are at hand.
    values : dict str -> float, optional
        Values of the geometric parameters (``{"D3": 0.45, "RL4": 0.5}``
        for the RX-90), on top of those the robot carries (a URDF's).
    q : sequence of float or dict, optional
        The configuration shown first (default all zeros).
    play : str, Path, SimulationResult or Recording, optional
        A saved simulation (``SimulationResult.save``'s ``.npz`` or
        ``.csv``) to play back: adds a time slider and Play/Pause.
    urdf : str or Path, optional
        A URDF whose visual elements dress ``robot`` (default: ``robot``'s
        own file when it is a URDF).
    host : str, optional
        Address to serve on; the default 127.0.0.1 is this machine only.
    port : int, optional
        0 (default) takes a free port.
    frames : bool, optional
        Show each frame's triad and label at first.
    verbose : bool, optional
        Print the page's address.

    Returns
    -------
    Viewer
        Running in background threads: open :attr:`Viewer.url`; stop it
        with :meth:`Viewer.stop` or a ``with`` block.

    Raises
    ------
    KaneRobotError
        Missing parameter values (named), a configuration of the wrong
        size, a saved run that does not match the robot, viser missing.

    Examples
    --------
    >>> import kanerobot as kr
    >>> with kr.view("rx90", values={"D3": 0.45, "RL4": 0.5}, q=[0, 0.5, 0, 0, 0, 0], verbose=False) as viewer:  # doctest: +SKIP
    ...     viewer.url
    'http://127.0.0.1:...'
    """
    return Viewer(robot, values, q, play, urdf=urdf, host=host, port=port, frames=frames, verbose=verbose)


def serve(robot, values=None, q=None, play=None, *, urdf=None, host=LOOPBACK, port=0, frames=True):
    """:func:`view` until Ctrl-C, then stop: ``kanerobot view``.

    Prints the page's address, and ``stopped`` once the port is free.
    ``values`` are the command line's ``--set``: a name the drawing does not
    use (a typo) is an error, where :func:`view` ignores it (it takes a
    simulation's whole parameter set).
    """
    viewer = view(robot, values, q, play, urdf=urdf, host=host, port=port, frames=frames, verbose=False)
    unused = sorted(set(values or {}) - set(viewer.skeleton.values))
    if unused:
        viewer.stop()
        raise KaneRobotError(
            f"--set: {', '.join(unused)} {'is' if len(unused) == 1 else 'are'} not a geometric parameter of {viewer.robot.name} "
            f"(it has {', '.join(sorted(viewer.skeleton.values)) or 'none'})"
        )
    try:
        print(f"kanerobot: viewing {viewer.robot.name} at {viewer.url} (Ctrl-C stops)", flush=True)
        viewer.wait()
    except KeyboardInterrupt:  # Ctrl-C between the address and wait() taking over (a reader may act on the address at once)
        viewer.stop()
    print("kanerobot: viewer stopped", flush=True)
