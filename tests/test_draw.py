"""kr.plot and ``kanerobot draw``: a figure for every robot of frames/, whose drawn
origins are the geometric model's, and one clear error per mistake."""

import xml.etree.ElementTree as ElementTree

import numpy
import pytest
from conftest import assert_close, library, random_values

import kanerobot as kr
from kanerobot.cli import main
from kanerobot.geometry import numeric_function, transform

pytest.importorskip("matplotlib", reason="the drawings need matplotlib: pip install 'kanerobot[plot]'")


def drawing_values(robot, rng):
    values = random_values(robot, rng)
    for wheel in robot.wheels:
        values.update({str(s): float(rng.uniform(0.4, 1.6)) for s in wheel.radius.free_symbols})
    return values


def check_file(path):
    """The file is a whole PNG, SVG or PDF (by its bytes, not its name)."""
    data = path.read_bytes()
    if path.suffix == ".png":
        from PIL import Image

        assert data.startswith(b"\x89PNG\r\n\x1a\n")
        with Image.open(path) as image:
            image.load()  # decodes every byte: a truncated file fails
            assert image.size == (1000, 750)
            assert len(image.getcolors(1 << 16) or range(1 << 16)) > 10  # something was drawn, not a blank page
    elif path.suffix == ".svg":
        root = ElementTree.fromstring(data)
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert len(list(root.iter())) > 100
    else:
        assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")


@pytest.mark.parametrize("name", kr.robot_names())
@pytest.mark.long
def test_kanerobot_draw_writes_every_robot(name, tmp_path, rng, capsys):
    robot = library(name)
    suffix = {"rx90": ".svg", "fourbar": ".pdf", "satellite": ".pdf", "krang": ".svg"}.get(name, ".png")
    path = tmp_path / f"{name}{suffix}"
    options = [item for k, v in drawing_values(robot, rng).items() for item in ("--set", f"{k}={v!r}")]
    assert main(["draw", name, *options, "-o", str(path)]) == 0
    assert capsys.readouterr().err == f"written {path}\n"
    check_file(path)
    assert not [p for p in tmp_path.iterdir() if p != path]  # no temporary file left behind


def drawn_origins(figure):
    """``{label: origin}`` read back from the figure's artists: the origins' markers, in the order of the labels."""
    ax = next(a for a in figure.axes if a.name == "3d")
    [line] = [line for line in ax.lines if line.get_gid() == "origins"]
    points = numpy.array(line.get_data_3d()).T
    labels = {t.get_gid(): numpy.array(t.get_position_3d()) for t in ax.texts if (t.get_gid() or "").startswith("frame:")}
    return points, labels


@pytest.mark.parametrize("name", ["rx90", "stanford", "krang", "diffdrive", "satellite", "sr400"])
def test_drawn_origins_are_the_geometric_model(name, rng):
    robot = library(name)
    values = drawing_values(robot, rng)
    joints = rng.uniform(-1, 1, robot.nj)
    if robot.loops:  # every joint given: drawn as given
        q = joints
    elif robot.floating:
        q = numpy.concatenate([[0.3, -0.2, 0.5], [0, 0, 0, 1], joints])
    else:
        q = joints
    figure = kr.plot(robot, q, values)
    points, labels = drawn_origins(figure)
    cache = {}
    expected = [numpy.zeros(3) if label == "0" else numeric_function(robot, transform(robot, "0", label, cache=cache)[:3, 3], values)(joints).reshape(3)
                for label in ("0",) + robot.labels]
    if robot.floating:
        expected = [e + [0.3, -0.2, 0.5] for e in expected]
    assert_close(points, expected, rtol=1e-12)
    origin = dict(zip(("0",) + robot.labels, expected))
    for gid, position in labels.items():  # each label is written at its frame's origin (shared by coincident frames)
        for label in gid.removeprefix("frame:").split(","):
            assert_close(position, numpy.zeros(3) if label == "world" else origin[label], rtol=1e-12)
    assert sorted(label for gid in labels for label in gid.removeprefix("frame:").split(",")) == sorted(
        ["0", *robot.labels] + (["world"] if robot.floating else []))


def test_the_text_beside_says_the_values_and_configuration():
    figure = kr.plot(library("stanford"), [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], {"RL2": 0.25})
    texts = [t.get_text() for ax in figure.axes for t in ax.texts if t.get_text().startswith("parameters")]
    assert texts == [
        "parameters\n  RL2 = 0.25\nconfiguration\n  th1 = 0.1 rad\n  th2 = 0.2 rad\n  r3 = 0.3 m\n"
        "  th4 = 0.4 rad\n  th5 = 0.5 rad\n  th6 = 0.6 rad"
    ]


def test_plot_into_given_axes_and_equal_scaling():
    from matplotlib.figure import Figure

    figure = Figure()
    ax = figure.add_subplot(projection="3d")
    assert kr.plot(library("planar2"), [0.3, 0.2], {"L1": 2.0}, ax=ax) is figure
    spans = [numpy.ptp(limits) for limits in (ax.get_xlim(), ax.get_ylim(), ax.get_zlim())]
    assert spans[0] == pytest.approx(spans[1]) and spans[1] == pytest.approx(spans[2])
    assert spans[0] >= 2.0  # the whole arm is in view
    with pytest.raises(kr.KaneRobotError, match=r"^plot\(\.\.\., ax=\.\.\.\) needs 3D axes: figure.add_subplot\(projection='3d'\)$"):
        kr.plot(library("planar2"), [0.3, 0.2], {"L1": 2.0}, ax=figure.add_subplot())


def test_joint_kinds_are_drawn_differently():
    """Stanford's joint 3 is prismatic: its axis has square ends and another colour than the revolute ones."""
    from kanerobot.visual.draw import draw_scene
    from kanerobot.visual.skeleton import skeleton

    figure = kr.plot(library("stanford"), None, {"RL2": 0.25})
    ax = figure.axes[0]
    ax.cla()
    artists = draw_scene(ax, skeleton(library("stanford"), {"RL2": 0.25})())
    styles = [(line.get_color(), line.get_marker()) for line in artists["joints"]]
    assert styles[2] != styles[0] and styles[0] == styles[1] == styles[3]
    assert styles[2][1] == "s"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "revolute joint axis" in legend and "prismatic joint axis" in legend


def test_cut_joints_are_dashed():
    from kanerobot.visual.draw import draw_scene
    from kanerobot.visual.skeleton import skeleton

    figure = kr.plot(library("fourbar"))
    ax = figure.axes[0]
    ax.cla()
    artists = draw_scene(ax, skeleton(library("fourbar"))([0.5], guess=[-0.5, 0.5, -0.5]))
    assert [line.get_linestyle() for line in artists["joints"]] == ["-", "-", "-", "--"]


def draw_error(capsys, *args):
    assert main(["draw", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    return err[0]


def test_draw_errors(capsys, tmp_path):
    out = str(tmp_path / "rx90.png")
    assert draw_error(capsys, "rx90", "-o", out) == (
        "kanerobot: error: robot RX90: no value for the geometric parameters D3, RL4: give them as values={'D3': ..., 'RL4': ...} "
        "in Python, or --set D3=VALUE --set RL4=VALUE on the command line"
    )
    assert draw_error(capsys, "rx90", "--set", "D3=0.4", "--set", "RL4=0.3", "-o", str(tmp_path / "rx90.jpg")) == (
        f"kanerobot: error: -o {tmp_path / 'rx90.jpg'}: cannot save a drawing as 'rx90.jpg': use a .png or .svg or .pdf file"
    )
    assert draw_error(capsys, "rx90", "--set", "D3=0.4", "--set", "RL4=0.3", "--q", "1,2", "-o", out) == (
        "kanerobot: error: --q: q of RX90 needs 6 values (1, 2, 3, 4, 5, 6), got 2"
    )
    assert draw_error(capsys, "rx90", "--set", "D3=0.4", "--set", "RL4=0.3", "--set", "D4=1", "-o", out) == (
        "kanerobot: error: --set: D4 is not a symbol of RX90's tables (its geometric parameters: D3, RL4; see kanerobot info RX90)"
    )
    assert draw_error(capsys, "fourbar", "--q", "1,2", "-o", out) == (
        "kanerobot: error: --q: q of fourbar needs 4 values (1, 2, 3, 4), or 1 (the active joints 1, the loops closed "
        "numerically), got 2"
    )
    assert not list(tmp_path.iterdir())  # nothing written by a failed command
    from kanerobot.visual.draw import write_drawing
    from kanerobot.visual.figures import save

    with pytest.raises(kr.KaneRobotError, match=r"^cannot write a figure as 'a.gif': use a .png, .svg, .pdf file$"):
        write_drawing(library("planar2"), tmp_path / "a.gif", None, {"L1": 1.0})
    with pytest.raises(kr.KaneRobotError, match=r"^cannot write a figure as 'a.jpg': use a .png, .svg, .pdf file$"):
        save(kr.plot(library("planar2"), None, {"L1": 1.0}), tmp_path / "a.jpg")
    assert not list(tmp_path.iterdir())


def test_draw_values_file(tmp_path, capsys):
    values = tmp_path / "rx90.toml"
    values.write_text("D3 = 0.45\nRL4 = 0.4\n")
    path = tmp_path / "rx90.png"
    assert main(["draw", "rx90", "--values", str(values), "--q", "0,0.5,-0.5,0,0.7,0", "-o", str(path)]) == 0
    check_file(path)
