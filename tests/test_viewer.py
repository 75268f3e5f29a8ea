"""The browser viewer (kr.view, kanerobot view), tested in a real browser.

The browser tests open the page in headless Chromium (Debian's ``chromium``
and ``chromium-driver`` packages, driven by selenium through that
chromedriver: nothing is downloaded) and act as a user would: they read the
canvas's pixels, type in a slider's number box and press keys on its thumb,
click checkboxes and buttons, and compare what the page reports with the
values set and with the server's state.  They skip, saying what to install,
without Chromium, its driver, viser or selenium.
"""

import io
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest
from conftest import derived, library

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError, RobotFileError
from kanerobot.geometry import numeric_transform
from kanerobot.viewer.recording import Recording, read_recording
from kanerobot.viewer.visuals import Visual, link_visuals, missing_meshes

NEEDS = "needs Chromium: apt-get install chromium chromium-driver, and pip install 'kanerobot[view]' selenium"
RX90 = {"D3": 0.45, "RL4": 0.5}
Q0 = [0.3, 0.5, -0.4, 0.0, 0.6, 0.0]
#: Flags of headless Chromium as root, with WebGL in software (SwiftShader); no network, no profile.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-unsafe-swiftshader",
    "--use-angle=swiftshader",
    "--window-size=1100,750",
]
#: How long the page may take to answer (seconds): software WebGL on a busy machine is slow.
PATIENCE = 120


def _executable(variable, *names):
    """``$variable`` if set (None if it is no executable), else the first of ``names`` on PATH or in /usr/bin."""
    if variable in os.environ:
        given = os.environ[variable]
        return given if os.access(given, os.X_OK) else None
    for name in names:
        found = shutil.which(name) or (f"/usr/bin/{name}" if os.access(f"/usr/bin/{name}", os.X_OK) else None)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    pytest.importorskip("viser", reason=NEEDS)
    webdriver = pytest.importorskip("selenium.webdriver", reason=NEEDS)
    chromium = _executable("KANEROBOT_CHROMIUM", "chromium", "chromium-browser")
    driver = _executable("KANEROBOT_CHROMEDRIVER", "chromedriver")
    if not (chromium and driver):
        pytest.skip(NEEDS)
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"]:  # a new empty profile
        options.add_argument(flag)
    # the system's chromedriver named: selenium then runs no driver manager (which would download one)
    browser = webdriver.Chrome(service=webdriver.ChromeService(driver), options=options)
    yield browser
    browser.quit()


@pytest.fixture
def viser():
    return pytest.importorskip("viser", reason=NEEDS)


# ------------------------------------------------------------ the page
def _until(browser, condition, what):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, PATIENCE, poll_frequency=0.1).until(lambda _: condition(), message=what)


def _open(browser, viewer):
    """The viewer's page, connected, its sliders drawn."""
    from selenium.webdriver.common.by import By

    browser.get(viewer.url)
    _until(browser, lambda: browser.find_elements(By.XPATH, "//*[text()='Connected']"), "the page connects")
    _until(browser, lambda: browser.find_elements(By.CSS_SELECTOR, "[role=slider]"), "the sliders appear")
    # viser's toasts (software WebGL) lie over the canvas and slide away on their own time: hidden, so that two
    # pictures differ by the robot only
    browser.execute_script(
        "const s = document.createElement('style');"
        "s.textContent = '.mantine-Notifications-root { display: none !important; }';"
        "document.head.appendChild(s);"
    )


def _canvas(browser):
    """The 3D view's pixels left of the control panel (RGB, uint8)."""
    from PIL import Image
    from selenium.webdriver.common.by import By

    x, y, width, height = browser.execute_script("const r = document.querySelector('canvas').getBoundingClientRect(); return [r.x, r.y, r.width, r.height]")
    panel = browser.find_element(By.XPATH, "//*[text()='Connected']").rect["x"]
    picture = np.asarray(Image.open(io.BytesIO(browser.get_screenshot_as_png())).convert("RGB"))
    return picture[int(y) : int(y + height), int(x) : int(min(x + width, panel - 20))]


def _settled(browser, previous=None):
    """The canvas once two pictures 300 ms apart agree and differ from ``previous`` (the scene updates asynchronously)."""
    picture = _canvas(browser)
    for _ in range(400):  # a bound on the pictures taken, not on time: the first one can take long in software WebGL
        time.sleep(0.3)
        again = _canvas(browser)
        if np.array_equal(again, picture) and (previous is None or not np.array_equal(again, previous)):
            return again
        picture = again
    raise AssertionError("the canvas never settled on a new picture")


def _row(browser, name):
    """The row of the control labelled ``name``: its label's closest flex box."""
    from selenium.webdriver.common.by import By

    return browser.find_element(By.XPATH, f"//label[text()='{name}']/ancestor::div[contains(@class, 'mantine-Flex-root')][1]")


def _slider(browser, name):
    """The thumb and the number box of the slider labelled ``name``."""
    from selenium.webdriver.common.by import By

    row = _row(browser, name)
    return row.find_element(By.CSS_SELECTOR, "[role=slider]"), row.find_element(By.CSS_SELECTOR, "input.mantine-NumberInput-input")


def _type(box, text):
    """Select what the box holds and type ``text`` then Enter, as a user would."""
    from selenium.webdriver.common.keys import Keys

    box.click()
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(text, Keys.ENTER)


def _reported(browser, names):
    """The joint values the page shows: each slider's number box, and its thumb's aria-valuenow."""
    boxes, thumbs = [], []
    for name in names:
        thumb, box = _slider(browser, name)
        boxes.append(float(box.get_property("value")))
        thumbs.append(float(thumb.get_attribute("aria-valuenow")))
    return np.array(boxes), np.array(thumbs)


def _configuration(browser):
    """The read-only box ``q`` of the page: ``th1=..., th2=...``."""
    from selenium.webdriver.common.by import By

    return _row(browser, "q").find_element(By.TAG_NAME, "input").get_property("value")


def _orange(picture):
    """Pixels of the revolute joints' orange cylinders (lit: the hue kept, the brightness varies)."""
    r, g, b = (picture[..., k].astype(int) for k in range(3))
    return int(np.count_nonzero((r > 150) & (r - g > 40) & (g - b > 30)))


def _changed(a, b):
    return int(np.count_nonzero(np.any(a != b, axis=-1)))


@pytest.mark.long
def test_page_draws_the_robot_and_its_sliders_move_it(browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    names = ["th1", "th2", "th3", "th4", "th5", "th6"]
    with kr.view("rx90", values=RX90, q=Q0, verbose=False) as viewer:
        assert viewer.url.startswith("http://127.0.0.1:")
        _open(browser, viewer)
        first = _settled(browser)
        # the canvas shows something: many colours, the joints' orange among them
        colours = len(np.unique(first.reshape(-1, 3), axis=0))
        assert colours > 50, colours
        assert _orange(first) > 100
        np.testing.assert_allclose(_reported(browser, names), [Q0, Q0])
        assert np.array_equal(_canvas(browser), first)  # nothing moves by itself: a difference below is the slider's

        # type a value in th2's number box
        _type(_slider(browser, "th2")[1], "1.2")
        second = _settled(browser, first)
        assert _changed(second, first) > 500
        expected = np.array(Q0)
        expected[1] = 1.2
        # keyboard on th5's thumb: End takes it to its maximum, pi (the range of a revolute joint without limits)
        _slider(browser, "th5")[0].send_keys(Keys.END)
        third = _settled(browser, second)
        assert _changed(third, second) > 100
        expected[4] = np.pi
        boxes, thumbs = _reported(browser, names)
        np.testing.assert_allclose(thumbs, expected, atol=1e-12)
        np.testing.assert_allclose(boxes, expected, atol=5e-7)  # the box shows 7 digits
        assert "th2=1.2, th3=-0.4, th4=0, th5=3.14159" in _configuration(browser)
        np.testing.assert_allclose(viewer.q, expected, atol=1e-12)  # the server's state is the page's
        # and the server drew that configuration: its frame 6 is where the geometric model puts it
        T = numeric_transform(viewer.robot, "0", "6", RX90)(expected)
        np.testing.assert_allclose(viewer._frames["6"].position, T[:3, 3], atol=1e-12)

        # the frames checkbox hides the triads and labels: the picture loses them
        box = _row(browser, "frames").find_element(By.CSS_SELECTOR, "input[type=checkbox]")
        assert box.is_selected()
        _row(browser, "frames").find_element(By.TAG_NAME, "label").click()
        hidden = _settled(browser, third)
        assert not box.is_selected() and not viewer._frames["6"].show_axes
        assert _changed(hidden, third) > 50


@pytest.mark.long
def test_page_plays_a_saved_simulation(browser, tmp_path):
    from selenium.webdriver.common.by import By

    robot = library("planar2")
    values = random_parameters(robot, np.random.default_rng(3), friction=False, wrench=False)
    fn = derived("planar2").numeric(values, backend="numpy")
    run = kr.simulate(fn, None, [0.3, -0.2, 2.0, -1.0], (0, 0.5), t_eval=np.linspace(0, 0.5, 11))
    path = run.save(tmp_path / "run.npz")
    with kr.view(robot, values=values, play=path, verbose=False) as viewer:
        _open(browser, viewer)
        np.testing.assert_allclose(viewer.q, run.q[0], atol=1e-12)
        start = _settled(browser)
        # typing a time in the time slider's box shows the recorded sample of that time
        _type(_slider(browser, "time (s)")[1], "0.3")
        later = _settled(browser, start)
        assert _changed(later, start) > 100
        np.testing.assert_allclose(viewer.q, run.q[6], atol=1e-12)  # t[6] = 0.3
        np.testing.assert_allclose(_reported(browser, ["th1", "th2"])[1], run.q[6], atol=1e-12)
        # Play, without looping, runs to the end and stays on the last sample
        _row(browser, "loop").find_element(By.TAG_NAME, "label").click()
        _until(browser, lambda: not viewer._loop.value, "the loop checkbox unticks")
        browser.find_element(By.XPATH, "//button[normalize-space()='Play']").click()
        last = ", ".join(f"th{k + 1}={v:.6g}" for k, v in enumerate(run.q[-1]))
        _until(browser, lambda: _configuration(browser) == last, "the run plays to its last sample")
        np.testing.assert_allclose(viewer.q, run.q[-1], atol=1e-12)


# ------------------------------------------------ without a browser
def test_saved_runs_read_back_as_simulated(tmp_path):
    robot = library("planar2")
    fn = derived("planar2").numeric(random_parameters(robot, np.random.default_rng(3), friction=False, wrench=False), backend="numpy")
    run = kr.simulate(fn, None, [0.3, -0.2, 2.0, -1.0], (0, 0.2), t_eval=np.linspace(0, 0.2, 5))
    for suffix in (".npz", ".csv"):
        recording = read_recording(run.save(tmp_path / f"run{suffix}"))
        assert recording.coordinates == ("1", "2")
        np.testing.assert_array_equal(recording.t, run.t)
        np.testing.assert_array_equal(recording.columns(["2", "1"]), run.q[:, ::-1])
    renamed = Recording(run.t, run.q, ("th1", "qr1"), "a flexible run")  # its link side named by the joint variable
    np.testing.assert_array_equal(renamed.columns(["1"], {"1": "th1"}), run.q[:, :1])
    with pytest.raises(KaneRobotError, match=r"run.npz: no column for coordinate\(s\) 3 of the robot shown; the run has 1, 2"):
        read_recording(tmp_path / "run.npz").columns(["1", "3"])
    (tmp_path / "bad.csv").write_text("t,q_1\n0,1\n0.1,x\n")
    with pytest.raises(RobotFileError, match=r"bad.csv:3: a value is not a number"):
        read_recording(tmp_path / "bad.csv")
    (tmp_path / "back.csv").write_text("t,q_1\n0.2,1\n0.1,2\n")
    with pytest.raises(RobotFileError, match=r"times decrease at sample 1"):
        read_recording(tmp_path / "back.csv")
    with pytest.raises(RobotFileError, match=r"run.txt: a saved simulation is a .npz or .csv file"):
        read_recording(tmp_path / "run.txt")
    with pytest.raises(RobotFileError, match=r"none.npz: no such file"):
        read_recording(tmp_path / "none.npz")


def test_urdf_visuals_placed_and_bad_ones_named(tmp_path):
    text = """<robot name="r"><material name="blue"><color rgba="0 0 1 1"/></material>
      <link name="base"><visual><origin xyz="0 0 0.1" rpy="0 0 1.5707963267948966"/><geometry><box size="1 2 3"/></geometry>
        <material name="blue"/></visual></link>
      <link name="arm"><visual><geometry><cylinder radius="0.1" length="0.5"/></geometry></visual>
        <visual><geometry><mesh filename="meshes/arm.stl" scale="2 2 2"/></geometry></visual></link>
      <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint></robot>"""
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "arm.stl").write_text("solid x\nendsolid x\n")
    box, cylinder, mesh = link_visuals(text, {"0": "base", "j": "arm"}, tmp_path / "r.urdf")
    assert (box.label, box.kind, box.size, box.rgba) == ("0", "box", (1.0, 2.0, 3.0), (0.0, 0.0, 1.0, 1.0))
    np.testing.assert_allclose(box.origin, [[0, -1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0.1], [0, 0, 0, 1]], atol=1e-15)
    assert (cylinder.label, cylinder.kind, cylinder.size) == ("j", "cylinder", (0.1, 0.5))
    assert (mesh.kind, mesh.size, mesh.path, mesh.missing) == ("mesh", (2.0, 2.0, 2.0), tmp_path / "meshes" / "arm.stl", None)
    with pytest.raises(RobotFileError, match=r"r.urdf: visual of link 'base': '1 2' is not 3 numbers separated by spaces"):
        link_visuals(text.replace('size="1 2 3"', 'size="1 2"'), {"0": "base", "j": "arm"}, tmp_path / "r.urdf")
    with pytest.raises(RobotFileError, match=r"r.urdf: visual of link 'base': '0 0 nan' has a number that is not finite: give finite numbers"):
        link_visuals(text.replace('rpy="0 0 1.5707963267948966"', 'rpy="0 0 nan"'), {"0": "base", "j": "arm"}, tmp_path / "r.urdf")


def test_viewer_state_errors_and_stop(viser, capsys):
    with pytest.raises(KaneRobotError, match=r"no value for the geometric parameters D3, RL4: give them as values="):
        kr.view("rx90")
    with pytest.raises(KaneRobotError, match=r"q has 2 values; RX90 shows 6: 1, 2, 3, 4, 5, 6"):
        kr.view("rx90", values=RX90, q=[0, 1])
    viewer = kr.view("rx90", values=RX90, q=Q0)
    assert capsys.readouterr().out == f"kanerobot: viewing RX90 at {viewer.url} (Ctrl-C stops)\n"
    assert viewer._repr_html_() == f'<iframe src="{viewer.url}" width="100%" height="560" style="border: none"></iframe>'
    viewer.set_q({"3": 0.7})
    expected = np.array(Q0)
    expected[2] = 0.7
    np.testing.assert_array_equal(viewer.q, expected)
    np.testing.assert_array_equal([s.value for s in viewer._sliders], expected)
    for label in ("3", "6"):  # the scene sent is the geometric model's
        np.testing.assert_allclose(viewer._frames[label].position, numeric_transform(viewer.robot, "0", label, RX90)(expected)[:3, 3], atol=1e-12)
    with pytest.raises(KaneRobotError, match=r"q: 7 not among the coordinates of RX90"):
        viewer.set_q({"7": 0.1})
    with pytest.raises(KaneRobotError, match=r"nothing to play: give a saved simulation"):
        viewer.play()
    viewer.stop()
    viewer.stop()  # twice is harmless
    with pytest.raises(ConnectionRefusedError):  # nothing listens on the port any more
        socket.create_connection(("127.0.0.1", viewer.port), timeout=5)
    assert capsys.readouterr().out == ""


def test_closed_loop_sliders_move_the_active_joints(viser):
    with kr.view("fourbar", q=[1.2], verbose=False) as viewer:
        assert viewer.coordinates == ("1",)
        first = viewer.scene.q
        assert first[0] == 1.2 and viewer.scene.cuts[0].gap < 1e-9
        viewer.set_q([1.0])
        # the loop closed again (the cut joint's origin on its closing frame's), in the same assembly mode
        assert viewer.scene.q[0] == 1.0 and viewer.scene.cuts[0].gap < 1e-9
        assert np.max(np.abs(viewer.scene.q[1:] - first[1:])) < 0.5
        np.testing.assert_allclose(viewer._cuts.points[0, 0], viewer._cuts.points[0, 1], atol=1e-6)


@pytest.mark.long
def test_kanerobot_view_serves_until_ctrl_c(viser):
    command = [sys.executable, "-m", "kanerobot", "view", "rx90", "--set", "D3=0.45", "--set", "RL4=0.5", "--q", "0,0.5,0,0,0,0"]
    # Ctrl-C as in a terminal: a shell starts background jobs (a CI script's, say) with SIGINT ignored,
    # which Python and its children keep; PYTHONFAULTHANDLER: should the viewer not stop, SIGABRT
    # makes it print where each thread is
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONFAULTHANDLER": "1"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        line = process.stdout.readline()
        url = re.fullmatch(r"kanerobot: viewing RX90 at (http://127\.0\.0\.1:(\d+)/) \(Ctrl-C stops\)\n", line)
        assert url, line
        with urllib.request.urlopen(url.group(1)) as response:
            assert "<title>Viser</title>" in response.read().decode()
        process.send_signal(signal.SIGINT)
        try:
            out, err = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)
            out, err = process.communicate(timeout=30)
            pytest.fail(f"kanerobot view still ran 60 s after Ctrl-C (exit {process.returncode}); stdout {out!r}; its threads:\n{err[-8000:]}")
    finally:
        process.kill() if process.poll() is None else None
    assert process.returncode == 0, err
    assert out == "kanerobot: viewer stopped\n"
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", int(url.group(2))), timeout=5)
    missing = subprocess.run([sys.executable, "-m", "kanerobot", "view", "rx90"], capture_output=True, text=True)
    assert missing.returncode == 2
    assert "kanerobot: error: robot RX90: no value for the geometric parameters D3, RL4" in missing.stderr
    assert "--set D3=VALUE --set RL4=VALUE" in missing.stderr
    typo = subprocess.run([sys.executable, "-m", "kanerobot", "view", "rx90", "--set", "D3=0.4", "--set", "RL4=0.5", "--set", "D4=1"],
                          capture_output=True, text=True)  # fmt: skip
    assert typo.returncode == 2
    assert typo.stderr == "kanerobot: error: --set: D4 is not a geometric parameter of RX90 (it has D3, RL4)\n"


def test_some_coordinates_by_name(viser):
    """q as a dict sets the joints it names and leaves the others at 0 (before, a raw AttributeError)."""
    with kr.view("rx90", values=RX90, q={"2": 0.5, "5": -0.3}, verbose=False) as viewer:
        assert viewer.q.tolist() == [0.0, 0.5, 0.0, 0.0, -0.3, 0.0]
    with pytest.raises(KaneRobotError, match=r"^q: 7 not among the coordinates of RX90 \(1, 2, 3, 4, 5, 6\)$"):
        kr.view("rx90", values=RX90, q={"7": 0.1}, verbose=False)


def test_urdf_meshes_dress_the_frames(viser, tmp_path, capsys):
    trimesh = pytest.importorskip("trimesh", reason=NEEDS)
    box = trimesh.creation.box(extents=(0.1, 0.2, 0.3))
    box.export(tmp_path / "arm.stl")
    (tmp_path / "r.urdf").write_text("""<robot name="r"><link name="base"/>
      <link name="arm"><visual><origin xyz="0 0 0.25"/><geometry><mesh filename="arm.stl" scale="2 2 2"/></geometry>
        <material name="red"><color rgba="1 0 0 1"/></material></visual>
        <visual><geometry><mesh filename="package://r/missing.dae"/></geometry></visual></link>
      <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 1"/><axis xyz="0 1 0"/></joint></robot>""")
    with kr.view(tmp_path / "r.urdf", q=[0.4], verbose=False) as viewer:
        mesh, missing = viewer._meshes
        assert missing is None and "1 mesh file of r.urdf not found on disk (package://r/missing.dae)" in capsys.readouterr().out
        # the box's 8 corners, scaled by 2 (STL stores triangles: the corners come back in another order)
        corners = np.unique(np.round(np.asarray(mesh.vertices, dtype=float), 6), axis=0)
        np.testing.assert_allclose(corners, np.unique(np.round(2 * box.vertices, 6), axis=0), atol=1e-6)
        assert len(mesh.faces) == len(box.faces) == 12
        assert tuple(mesh.color) == (255, 0, 0) and tuple(mesh.position) == (0, 0, 0.25)
        # it is a child of frame j, which is 1 m above the base, turned about y by 0.4 (quaternion of half the angle)
        np.testing.assert_allclose(viewer._frames["j"].position, [0, 0, 1], atol=1e-12)
        np.testing.assert_allclose(viewer._frames["j"].wxyz, [np.cos(0.2), 0, np.sin(0.2), 0], atol=1e-12)


def test_floating_base_sliders_and_playback(viser):
    from kanerobot.robot.urdf import rpy_matrix

    values = {"D1": 0.3, "D3": 0.4, "RL1": 0.2}
    angle = 0.8  # a turn about z (x y z w quaternion), the base moved to (1, 2, 3)
    row = np.array([1.0, 2.0, 3.0, 0, 0, np.sin(angle / 2), np.cos(angle / 2), 0.1, 0.2, 0.3])
    run = Recording(np.array([0.0, 1.0]), np.vstack([[0, 0, 0, 0, 0, 0, 1, 0, 0, 0], row]),
                    ("x", "y", "z", "qx", "qy", "qz", "qw", "1", "2", "3"), "a run")  # fmt: skip
    with kr.view("satellite", values=values, play=run, verbose=False) as viewer:
        assert viewer.coordinates == ("x", "y", "z", "roll", "pitch", "yaw", "1", "2", "3")
        viewer._time.value = 1.0
        np.testing.assert_allclose(viewer.q, [1, 2, 3, 0, 0, angle, 0.1, 0.2, 0.3], atol=1e-12)  # yaw is the turn about z
        np.testing.assert_allclose(viewer._frames["0"].position, [1, 2, 3], atol=1e-12)
        np.testing.assert_allclose(viewer._frames["0"].wxyz, row[[6, 3, 4, 5]], atol=1e-12)
        viewer.set_q([0, 0, 0, 0.3, -0.2, 0.5, 0, 0, 0])  # roll, pitch, yaw: URDF's Rz(yaw) Ry(pitch) Rx(roll)
        np.testing.assert_allclose(viewer.scene.base[:3, :3], rpy_matrix(0.3, -0.2, 0.5), atol=1e-12)


def _missing_mesh_urdf(tmp_path):
    """Two links whose meshes are not on disk: one with a collision box (drawn instead), one without."""
    path = tmp_path / "r.urdf"
    path.write_text("""<robot name="r"><link name="base"><visual><geometry><mesh filename="package://r/base.dae"/></geometry></visual></link>
      <link name="arm"><visual><material name="red"><color rgba="1 0 0 1"/></material>
          <geometry><mesh filename="package://r/meshes/arm.stl"/></geometry></visual>
        <collision><origin xyz="0.1 0.2 0.3" rpy="0 0 1.5707963267948966"/><geometry><box size="0.4 0.5 0.6"/></geometry></collision></link>
      <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 1"/><axis xyz="0 1 0"/></joint></robot>""")
    return path


def test_missing_mesh_drawn_as_the_collision_shape(tmp_path):
    """A visual mesh not on disk: the link's collision box of its size and pose stands in (issue 25, defect 9)."""
    base, arm = link_visuals(_missing_mesh_urdf(tmp_path).read_text(), {"0": "base", "j": "arm"}, tmp_path / "r.urdf")
    assert (base.kind, base.path, base.missing) == ("mesh", None, "package://r/base.dae")  # no collision: not drawn
    assert (arm.label, arm.kind, arm.size, arm.rgba, arm.missing) == ("j", "box", (0.4, 0.5, 0.6), (1.0, 0.0, 0.0, 1.0), "package://r/meshes/arm.stl")
    np.testing.assert_allclose(arm.origin, [[0, -1, 0, 0.1], [1, 0, 0, 0.2], [0, 0, 1, 0.3], [0, 0, 0, 1]], atol=1e-15)
    # a collision mesh on disk stands in as well; a missing one does not
    (tmp_path / "hull.stl").write_text("solid x\nendsolid x\n")
    text = """<robot name="r"><link name="base"><visual><geometry><mesh filename="a.dae"/></geometry></visual>
      <collision><geometry><mesh filename="hull.stl" scale="2 2 2"/></geometry></collision></link>
      <link name="arm"><visual><geometry><mesh filename="b.dae"/></geometry></visual>
      <collision><geometry><mesh filename="c.stl"/></geometry></collision></link>
      <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint></robot>"""
    hull, lost = link_visuals(text, {"0": "base", "j": "arm"}, tmp_path / "r.urdf")
    assert (hull.kind, hull.size, hull.path, hull.missing) == ("mesh", (2.0, 2.0, 2.0), tmp_path / "hull.stl", "a.dae")
    assert (lost.kind, lost.path, lost.missing) == ("mesh", None, "b.dae")
    assert missing_meshes([hull, lost], tmp_path / "r.urdf").endswith("; 1 link drawn with its collision shapes instead")
    # 23 missing meshes (Krang's real URDF): the count, the first three names, one line
    lost = [Visual(str(k), np.eye(4), "mesh", (1.0, 1.0, 1.0), missing=f"m{k}.stl") for k in range(23)] + [arm]
    line = missing_meshes(lost, tmp_path / "r.urdf")
    assert line.startswith("kanerobot: 24 mesh files of r.urdf not found on disk (m0.stl, m1.stl, m2.stl, ...), looked for under ")
    assert "\n" not in line and line.endswith("; 1 link drawn with its collision shapes instead")


def test_missing_meshes_in_one_line(viser, tmp_path, capsys):
    with kr.view(_missing_mesh_urdf(tmp_path), q=[0.4], verbose=False) as viewer:
        base, arm = viewer._meshes
        assert base is None
        assert tuple(arm.dimensions) == pytest.approx((0.4, 0.5, 0.6)) and tuple(arm.position) == pytest.approx((0.1, 0.2, 0.3))
        np.testing.assert_allclose(arm.wxyz, [np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)], atol=1e-7)
    lines = [line for line in capsys.readouterr().out.splitlines() if "not found" in line]
    assert lines == [
        f"kanerobot: 2 mesh files of r.urdf not found on disk (package://r/base.dae, package://r/meshes/arm.stl), looked for under {tmp_path} "
        "(package://NAME/... in a folder NAME there or above); 1 link drawn with its collision shapes instead"
    ]
