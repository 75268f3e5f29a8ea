"""The browser viewer (kr.view, kanerobot view), tested in a real browser.

The browser tests open the page in headless Chromium (Debian's ``chromium``
package, driven by playwright with ``executable_path``: nothing is
downloaded) and act as a user would: they read the canvas's pixels, press
keys on a slider and type in its number box, and compare what the page
reports with the values set and with the server's state.  They skip, saying
what to install, without Chromium, viser or playwright.
"""

import io
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import derived, library

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError, RobotFileError
from kanerobot.geometry import numeric_transform
from kanerobot.viewer.recording import read_recording
from kanerobot.viewer.visuals import link_visuals

NEEDS = "needs Chromium: apt-get install chromium, and pip install 'kanerobot[view]'"
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
]


def _chromium():
    found = os.environ.get("KANEROBOT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found and Path("/usr/bin/chromium").exists():
        found = "/usr/bin/chromium"
    return found


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    pytest.importorskip("viser", reason=NEEDS)
    sync_api = pytest.importorskip("playwright.sync_api", reason=NEEDS)
    executable = _chromium()
    if not executable:
        pytest.skip(NEEDS)
    profile = tmp_path_factory.mktemp("chromium-profile")  # a new empty profile
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=executable, headless=True, args=CHROMIUM_FLAGS, viewport={"width": 1100, "height": 750}
        )
        yield chromium
        chromium.close()


@pytest.fixture
def viser():
    return pytest.importorskip("viser", reason=NEEDS)


# ------------------------------------------------------------ the page
def _open(browser, viewer):
    """A page on the viewer, connected, its notifications closed, the scene drawn."""
    page = browser.new_page()
    page.goto(viewer.url)
    page.get_by_text("Connected").wait_for()
    page.locator("[role=slider]").first.wait_for()
    for button in page.locator(".mantine-Notification-closeButton").all():
        button.click()
    page.locator(".mantine-Notification-root").first.wait_for(state="detached")
    return page


def _canvas(page):
    """The 3D view's pixels left of the control panel (RGB, uint8)."""
    from PIL import Image

    canvas = page.locator("canvas").first.bounding_box()
    panel = page.get_by_text("Connected").bounding_box()
    width = min(canvas["width"], panel["x"] - canvas["x"] - 20)
    png = page.screenshot(clip={"x": canvas["x"], "y": canvas["y"], "width": width, "height": canvas["height"]})
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def _settled(page, previous=None):
    """The canvas once two pictures 300 ms apart agree (the scene updates asynchronously)."""
    picture = _canvas(page)
    for _ in range(40):
        page.wait_for_timeout(300)
        again = _canvas(page)
        if np.array_equal(again, picture) and (previous is None or not np.array_equal(again, previous)):
            return again
        picture = again
    return picture


def _slider(page, name):
    """The thumb and the number box of the slider labelled ``name``."""
    ident = page.locator("label").filter(has_text=re.compile(f"^{re.escape(name)}$")).first.get_attribute("for")
    root = page.locator(f'[id="{ident}"]')
    return root.locator("[role=slider]"), root.locator("xpath=..").locator("input.mantine-NumberInput-input")


def _reported(page, names):
    """The joint values the page shows: each slider's number box, and its thumb's aria-valuenow."""
    boxes, thumbs = [], []
    for name in names:
        thumb, box = _slider(page, name)
        boxes.append(float(box.input_value()))
        thumbs.append(float(thumb.get_attribute("aria-valuenow")))
    return np.array(boxes), np.array(thumbs)


def _configuration(page):
    """The read-only box ``q`` of the page: ``th1=..., th2=...``."""
    label = page.locator("label").filter(has_text=re.compile("^q$")).first
    return label.locator("xpath=ancestor::div[contains(@class, 'mantine-Flex-root')][1]").locator("input").input_value()


def _orange(picture):
    """Pixels of the revolute joints' orange cylinders (lit: the hue kept, the brightness varies)."""
    r, g, b = (picture[..., k].astype(int) for k in range(3))
    return int(np.count_nonzero((r > 150) & (r - g > 40) & (g - b > 30)))


def test_page_draws_the_robot_and_its_sliders_move_it(browser):
    names = ["th1", "th2", "th3", "th4", "th5", "th6"]
    with kr.view("rx90", values=RX90, q=Q0, verbose=False) as viewer:
        assert viewer.url.startswith("http://127.0.0.1:")
        page = _open(browser, viewer)
        first = _settled(page)
        # the canvas shows something: many colours, the joints' orange among them
        colours = len(np.unique(first.reshape(-1, 3), axis=0))
        assert colours > 50, colours
        assert _orange(first) > 100
        np.testing.assert_allclose(_reported(page, names), [Q0, Q0])
        assert np.array_equal(_canvas(page), first)  # nothing moves by itself: a difference below is the slider's

        # type a value in th2's number box, as a user would
        _, box = _slider(page, "th2")
        box.fill("1.2")
        box.press("Enter")
        second = _settled(page, first)
        assert np.count_nonzero(np.any(second != first, axis=-1)) > 500
        expected = np.array(Q0)
        expected[1] = 1.2
        # keyboard on th5's thumb: End takes it to its maximum, pi (the range of a revolute joint without limits)
        thumb, _ = _slider(page, "th5")
        thumb.focus()
        thumb.press("End")
        third = _settled(page, second)
        assert np.count_nonzero(np.any(third != second, axis=-1)) > 100
        expected[4] = np.pi
        boxes, thumbs = _reported(page, names)
        np.testing.assert_allclose(thumbs, expected, atol=1e-12)
        np.testing.assert_allclose(boxes, expected, atol=5e-7)  # the box shows 7 digits
        assert "th2=1.2, th3=-0.4, th4=0, th5=3.14159" in _configuration(page)
        np.testing.assert_allclose(viewer.q, expected, atol=1e-12)  # the server's state is the page's
        # and the server drew that configuration: its frame 6 is where the geometric model puts it
        T = numeric_transform(viewer.robot, "0", "6", RX90)(expected)
        np.testing.assert_allclose(viewer._frames["6"].position, T[:3, 3], atol=1e-12)

        # the frames checkbox hides the triads and labels: the picture loses them
        page.get_by_label("frames").uncheck()
        hidden = _settled(page, third)
        assert not page.get_by_label("frames").is_checked()
        assert not viewer._frames["6"].show_axes
        assert np.count_nonzero(np.any(hidden != third, axis=-1)) > 50
        page.close()


def test_page_plays_a_saved_simulation(browser, tmp_path):
    robot = library("planar2")
    values = random_parameters(robot, np.random.default_rng(3), friction=False, wrench=False)
    fn = derived("planar2").numeric(values, backend="numpy")
    run = kr.simulate(fn, None, [0.3, -0.2, 2.0, -1.0], (0, 0.5), t_eval=np.linspace(0, 0.5, 11))
    path = run.save(tmp_path / "run.npz")
    with kr.view(robot, values=values, play=path, verbose=False) as viewer:
        page = _open(browser, viewer)
        np.testing.assert_allclose(viewer.q, run.q[0], atol=1e-12)
        start = _settled(page)
        # typing a time in the time slider's box shows the recorded sample of that time
        _, box = _slider(page, "time (s)")
        box.fill("0.3")
        box.press("Enter")
        later = _settled(page, start)
        assert np.count_nonzero(np.any(later != start, axis=-1)) > 100
        np.testing.assert_allclose(viewer.q, run.q[6], atol=1e-12)  # t[6] = 0.3
        np.testing.assert_allclose(_reported(page, ["th1", "th2"])[1], run.q[6], atol=1e-12)
        # Play, without looping, runs to the end and stays on the last sample
        page.get_by_label("loop").uncheck()
        page.get_by_role("button", name="Play").click()
        last = ", ".join(f"th{k + 1}={v:.6g}" for k, v in enumerate(run.q[-1]))
        page.wait_for_function("text => [...document.querySelectorAll('input')].some(e => e.value === text)", arg=last)
        np.testing.assert_allclose(viewer.q, run.q[-1], atol=1e-12)
        page.close()
