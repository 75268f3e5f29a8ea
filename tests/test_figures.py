"""kanerobot.visual.figures: the figures of simulations and cross-validations are readable.

Joints are grouped by chain (checked on the library's trees by hand), each
panel has one unit on its axis, a legend naming its lines and distinct
colours, the lines are the right columns of the run, and the values and
gains are written beside.
"""

import numpy
import pytest
from conftest import derived, library, plate_robot, tree_robot

import kanerobot as kr
from kanerobot.control import quintic
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.visual.figures import cross_validation_figures, joint_groups, series, simulation_figures

pytest.importorskip("matplotlib", reason="the figures need matplotlib: pip install 'kanerobot[plot]'")


def test_joint_groups_follow_the_branches():
    assert joint_groups(library("krang")) == [
        ("joints 1-3", ["1", "2", "3"]),
        ("joints 4l-10l", ["4l", "5l", "6l", "7l", "8l", "9l", "10l"]),
        ("joints 4r-10r", ["4r", "5r", "6r", "7r", "8r", "9r", "10r"]),
    ]
    assert [chain for _, chain in joint_groups(library("krang_wheeled"))] == [
        ["x", "y", "th"], ["wr", "wl"], ["1", "2", "3"], ["4l", "5l", "6l", "7l", "8l", "9l", "10l"],
        ["4r", "5r", "6r", "7r", "8r", "9r", "10r"],
    ]
    assert joint_groups(library("fourbar")) == [("joints 1, 2", ["1", "2"]), ("joints 3, 4", ["3", "4"])]
    assert joint_groups(library("puma560")) == [("joints 1-6", ["1", "2", "3", "4", "5", "6"])]
    # 1 carries two branches, 2-3 and 4-5-6 (7 is a fixed frame)
    assert joint_groups(tree_robot()) == [("joint 1", ["1"]), ("joints 2, 3", ["2", "3"]), ("joints 4-6", ["4", "5", "6"])]
    # joints 2 and 3 hang from the fixed plate p on joint 1: two leaves on one point, one group
    assert joint_groups(plate_robot()) == [("joint 1", ["1"]), ("joints 2, 3", ["2", "3"])]
    assert joint_groups(library("krang"), ["2", "5l", "6l"]) == [("joint 2", ["2"]), ("joints 5l, 6l", ["5l", "6l"])]


def test_series_units_by_joint_type():
    stanford = library("stanford")
    assert [(s.name, s.unit) for s in series(stanford, ["QP2", "QP3"], "qd")] == [("th2", "rad/s"), ("r3", "m/s")]
    assert [s.unit for s in series(stanford, ["GAM1", "GAM3"], "tau")] == ["N·m", "N"]
    satellite = derived("satellite").state_space
    q = series(library("satellite"), satellite.coordinates, "q")
    assert [(s.group, s.unit) for s in q][::3] == [("base position", "m"), ("base orientation", "quaternion, no unit"),
                                                 ("base orientation", "quaternion, no unit"), ("joints 1-3", "rad")]
    qd = series(library("satellite"), satellite.qd_names, "qd")
    assert [s.unit for s in qd] == ["m/s"] * 3 + ["rad/s"] * 6
    flexible = derived("planar2flex").state_space
    motors = series(library("planar2flex"), flexible.coordinates, "q", flexible.aliases)
    assert [(s.name, s.joint) for s in motors] == [("th1", "1"), ("th2", "2"), ("qr1 (motor)", "1"), ("qr2 (motor)", "2")]
    with pytest.raises(kr.KaneRobotError, match=r"^cannot tell which joint column 'nope' of q belongs to \(robot Stanford\)$"):
        series(stanford, ["nope"], "q")


@pytest.fixture(scope="module")
def krang_run():
    robot = library("krang")
    values = random_parameters(robot, numpy.random.default_rng(5), friction=False, wrench=False)
    fn = derived("krang").numeric(values, backend="numpy")
    x0 = numpy.concatenate([numpy.linspace(-0.2, 0.2, robot.nj), numpy.zeros(robot.nj)])
    return kr.simulate(fn, None, x0, (0.0, 0.1), t_eval=numpy.linspace(0.0, 0.1, 6))


def panels_of(figure):
    """``[(title, ylabel, [(legend, ydata, colour)])]`` of every axes with lines."""
    out = []
    for ax in figure.axes:
        if not ax.lines:
            continue
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        labelled = [line for line in ax.lines if not line.get_label().startswith("_")]
        assert [line.get_label() for line in labelled] == legend  # every line the legend names is on the panel
        out.append((ax.get_title(loc="left"), ax.get_ylabel(), [(line.get_label(), line.get_ydata(), line.get_color()) for line in labelled]))
    return out


def side_text(figure):
    return "\n".join(t.get_text() for ax in figure.axes if not ax.axison for t in ax.texts)


def test_krang_motion_is_small_multiples_by_chain(krang_run):
    figures = simulation_figures(krang_run)
    assert list(figures) == ["motion", "torques", "energy"]
    robot = library("krang")
    variables = {label: str(robot.frame(label).q) for label in robot.joint_labels}
    motion = panels_of(figures["motion"])
    chains = [chain for _, chain in joint_groups(robot)]
    expected = [(title, "q [rad]", chain) for (title, _), chain in zip(joint_groups(robot), chains)]
    expected += [(title, "qd [rad/s]", chain) for (title, _), chain in zip(joint_groups(robot), chains)]
    assert [(title, ylabel, [name for name, _, _ in lines]) for title, ylabel, lines in motion] == [
        (title, ylabel, [variables[label] for label in chain]) for title, ylabel, chain in expected
    ]
    for (_, ylabel, lines), (_, _, chain) in zip(motion, expected):
        data = krang_run.q if ylabel.startswith("q [") else krang_run.qd
        for (_, ydata, _), label in zip(lines, chain):  # each line is its joint's column of the run
            numpy.testing.assert_array_equal(ydata, data[:, robot.joint_labels.index(label)])
        colours = [colour for _, _, colour in lines]
        assert len(set(map(tuple, numpy.atleast_2d(colours)))) == len(colours)  # distinct inside a panel
    torques = panels_of(figures["torques"])
    assert [ylabel for _, ylabel, _ in torques] == ["tau [N·m]"] * 3
    energy = panels_of(figures["energy"])
    assert [ylabel for _, ylabel, _ in energy] == ["energy [J]", "E - E(0) - work [J]"]
    for figure in figures.values():  # every panel says its unit, and has its time axis labelled where it ends
        assert all("[" in ax.get_ylabel() for ax in figure.axes if ax.lines)
        text = side_text(figure) + "\n"
        values = {str(k): v for k, v in krang_run.numeric.values.items()}  # the numeric model's own, by symbol
        assert f"parameters ({len(values)})" in text
        for name in ("L1", "L9", "M2", "ZZ10r"):
            assert f"  {name} = {values[name]:.6g}\n" in text


def test_mixed_joint_types_get_a_panel_per_unit():
    robot = library("stanford")
    values = random_parameters(robot, numpy.random.default_rng(2), friction=False, wrench=False)
    run = kr.simulate(derived("stanford").numeric(values, backend="numpy"), None, numpy.zeros(12), (0.0, 0.05),
                      t_eval=numpy.linspace(0, 0.05, 4))
    motion = panels_of(simulation_figures(run)["motion"])
    assert [(ylabel, [name for name, _, _ in lines]) for _, ylabel, lines in motion] == [
        ("q [rad]", ["th1", "th2", "th4", "th5", "th6"]), ("q [m]", ["r3"]),
        ("qd [rad/s]", ["th1", "th2", "th4", "th5", "th6"]), ("qd [m/s]", ["r3"]),
    ]
    numpy.testing.assert_array_equal(motion[1][2][0][1], run.q[:, 2])
    assert [ylabel for _, ylabel, _ in panels_of(simulation_figures(run)["torques"])] == ["tau [N·m]", "tau [N]"]


def test_cross_validation_figures_say_the_gains():
    values = {"L1": 1.0, "M2": 1.0, "MX2": 0.5, "MY2": 0.0, "ZZ1": 0.4, "ZZ2": 0.35, "IA1": 0.01, "IA2": 0.01,
              "FV1": 0.0, "FV2": 0.0, "FS1": 0.0, "FS2": 0.0}
    cv = kr.cross_validate((derived("planar2"), values), (derived("planar2", "kane"), dict(values, M2=1.1)), "computed_torque",
                           quintic([0, 0], [1, -1], 1.0), gains={"kp": 64.0, "kd": [16.0, 12.0]}, backend="numpy", samples=11)
    figures = cross_validation_figures(cv)
    assert list(figures) == ["tracking", "torques", "energy", "disagreement"]
    tracking = figures["tracking"]
    text = side_text(tracking)
    assert "controller computed_torque\n  kp = 64 I\n  kd = diag(16, 12)\n" in text
    assert "plant: planar2 (fixed base)" in text and "  M2 = 1.1\n" in text
    panel = next(ax for ax in tracking.axes if ax.lines)
    assert panel.get_ylabel() == "q, q_d (dashed) [rad]"
    solid = [line for line in panel.lines if line.get_linestyle() == "-"]
    dashed = [line for line in panel.lines if line.get_linestyle() == "--"]
    assert [line.get_label() for line in solid] == ["th1", "th2"]
    assert [line.get_color() for line in solid] == [line.get_color() for line in dashed]  # q and q_d of a joint share a colour
    numpy.testing.assert_array_equal(dashed[1].get_ydata(), cv.desired[:, 1])
    assert [ax.get_ylabel() for ax in figures["disagreement"].axes if ax.lines] == ["max |ctrl - plant| [SI]", "relative to the plant [1]"]
