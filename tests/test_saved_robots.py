"""A URDF robot saved or converted keeps its numbers and its joints (issue 25).

A URDF's numbers are ``robot.values`` (its parameters are symbols):
``kr.save`` to a ``.toml`` keeps symbols and values (a ``[values]`` table),
to a ``.par`` (which has no place for values) writes them as numbers in its
tables, saying so, as ``kanerobot convert`` does.  The checks: the values
read back equal those saved, and the models of the robot saved and of the
robot read back agree at random states; ``kanerobot identify`` of such a
file needs no ``--values``.

``kr.cross_validate`` of a controller built on a URDF against its ``.par``
conversion (frames numbered 1..N, the URDF's joint names gone) writes its
figures with the controller's joint names; a failure of the figures after the
simulation keeps the result.

The small robot of these tests has a continuous joint named like Krang's
wheels (``JLWheel``) and a revolute elbow; cheap to derive.
"""

import tomllib
import warnings

import numpy as np
import pytest
from conftest import assert_close

import kanerobot as kr
from kanerobot.cli import main
from kanerobot.control import quintic
from kanerobot.robot.description import parameter_symbol_names
from kanerobot.robot.khalil_kleinfinger import numbered
from kanerobot.visual.figures import cross_validation_panels

URDF = """<robot name="wheelarm">
  <link name="base"/>
  <link name="wheel"><inertial><origin xyz="0.02 0.01 0.03"/><mass value="2.0"/>
    <inertia ixx="0.011" ixy="0.001" ixz="0" iyy="0.021" iyz="0.002" izz="0.031"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0.15 0.01 -0.02"/><mass value="1.2"/>
    <inertia ixx="0.012" ixy="0" ixz="0.001" iyy="0.014" iyz="0" izz="0.02"/></inertial></link>
  <joint name="JLWheel" type="continuous"><parent link="base"/><child link="wheel"/>
    <origin xyz="0 0.1 0.25" rpy="0.3 0 0"/><axis xyz="0 1 0"/><dynamics damping="0.2"/></joint>
  <joint name="elbow" type="revolute"><parent link="wheel"/><child link="arm"/>
    <origin xyz="0.4 0 0.05"/><axis xyz="0 0 1"/><limit lower="-2" upper="2" effort="10" velocity="3"/></joint>
</robot>
"""


@pytest.fixture(scope="module")
def urdf(tmp_path_factory):
    path = tmp_path_factory.mktemp("wheelarm") / "wheelarm.urdf"
    path.write_text(URDF)
    return path


@pytest.fixture(scope="module")
def robot(urdf):
    return kr.load(urdf)


def same_dynamics(a, values_a, b, values_b, seed):
    """The inverse dynamics and the mass matrices of two robots agree at random states."""
    fa = kr.derive(a).numeric(values_a, backend="numpy")
    fb = kr.derive(b).numeric(values_b, backend="numpy")
    q, qd, qdd = np.random.default_rng(seed).uniform(-2, 2, (3, 5, a.dof))
    assert_close(fb.inverse_dynamics(q, qd, qdd), fa.inverse_dynamics(q, qd, qdd), rtol=1e-12, what="inverse dynamics")
    assert_close(fb.mass_matrix(q), fa.mass_matrix(q), rtol=1e-12, what="mass matrix")


@pytest.mark.parametrize("path", ["small", "arm7"])
def test_toml_keeps_symbols_and_values(path, robot, tmp_path):
    original = robot if path == "small" else kr.load(kr.frames_path("arm7"), gravity=(0, -9.81, 0))
    kr.save(original, tmp_path / "saved.toml")
    again = kr.load(tmp_path / "saved.toml")
    assert dict(again.values) == dict(original.values) and len(again.values) > 20
    assert parameter_symbol_names(again) == parameter_symbol_names(original)
    same_dynamics(original, original.values, again, again.values, seed=1)


def test_a_values_table_mistake_names_its_line(tmp_path):
    path = tmp_path / "planar2.toml"
    kr.save(kr.load(kr.frames_path("planar2"), gravity=(0, -9.81, 0)), path)
    text = path.read_text()
    line = text.splitlines().index("G2 = -9.81") + 1
    for wrong, message in (("MX22 = 0.3", r"MX22 in \[values\] is not a parameter of planar2 \(did you mean 'MX2'\?\)"),
                           ('G2 = "-9.81"', r"G2 in \[values\] must be a finite number, as in G2 = 0.5; got '-9.81'"),
                           ("G2 = inf", r"G2 in \[values\] must be a finite number")):  # fmt: skip
        path.write_text(text.replace("G2 = -9.81", wrong))
        with pytest.raises(kr.RobotFileError, match=rf"^{path}:{line}: {message}"):
            kr.load(path)


def test_par_holds_the_values_as_numbers(robot, tmp_path):
    """A .par has no table of values: the numbers go in its tables, and kr.save says so."""
    table = numbered(kr.to_khalil_kleinfinger(robot))
    with pytest.warns(UserWarning, match=rf"the {len(table.values)} parameter values of wheelarm written as numbers: a \.par file holds no values"):
        kr.save(table, tmp_path / "saved.par")
    again = kr.load(tmp_path / "saved.par")
    assert not again.values and again.joint_labels == ("1", "2")
    same_dynamics(robot, robot.values, again, {}, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to say for a robot without values
        kr.save(again, tmp_path / "again.par")


def recording(robot, path):
    """A short run of ``robot`` (its own values), q and the torques of its inverse dynamics, as .npz."""
    fn = kr.derive(robot).numeric(robot.values, backend="numpy")
    t = np.linspace(0.0, 6.0, 300)
    q = np.stack([np.sin(1.3 * t) + 0.3 * np.sin(3.1 * t), 0.8 * np.sin(0.7 * t + 1.0) + 0.2 * np.cos(2.3 * t)], axis=1)
    qd = np.stack([1.3 * np.cos(1.3 * t) + 0.93 * np.cos(3.1 * t), 0.56 * np.cos(0.7 * t + 1.0) - 0.46 * np.sin(2.3 * t)], axis=1)
    qdd = np.stack([-1.69 * np.sin(1.3 * t) - 2.883 * np.sin(3.1 * t), -0.392 * np.sin(0.7 * t + 1.0) - 1.058 * np.cos(2.3 * t)], axis=1)
    np.savez(path, t=t, q=q, tau=fn.inverse_dynamics(q, qd, qdd))
    return path


def test_identify_takes_the_files_own_values(robot, urdf, tmp_path, capsys):
    """No --values for a URDF, nor for the .toml kr.save wrote of it: their numbers are the geometry and gravity."""
    run = recording(robot, tmp_path / "run.npz")
    kr.save(robot, tmp_path / "saved.toml")
    for source in (urdf, tmp_path / "saved.toml"):
        assert main(["identify", str(source), str(run), "-o", str(tmp_path / "estimate.toml")]) == 0, capsys.readouterr().err
        capsys.readouterr()  # the report, read: the next file starts clean
        written = tomllib.loads((tmp_path / "estimate.toml").read_text())
        truth = kr.identify(robot, run)  # its base parameters' true values: T K of the robot's own numbers
        true_base = truth.T @ np.array([robot.values[name] for name in truth.regressors.parameters])
        assert_close([written[name] for name in truth.names], true_base, rtol=1e-3, what=str(source))


# ------------------------------------------------------- cross-validation
@pytest.fixture(scope="module")
def converted(urdf, tmp_path_factory):
    """The URDF's .par by ``kanerobot convert``: frames numbered 1, 2 (the joint names gone), numbers in the tables."""
    target = tmp_path_factory.mktemp("par") / "wheelarm.par"
    assert main(["convert", str(urdf), str(target)]) == 0
    return kr.load(target)


def cross_validation(robot, converted, **options):
    """Computed torque built on the URDF drives its .par conversion."""
    return kr.cross_validate((robot, robot.values), (converted, {}), "computed_torque", quintic([0.0, 0.0], [1.0, -0.5], 0.4),
                             backend="numpy", samples=9, **options)  # fmt: skip


def test_cross_validation_of_a_urdf_on_its_par_draws_the_urdf_joints(robot, converted, tmp_path):
    pytest.importorskip("matplotlib")
    assert converted.joint_labels == ("1", "2")
    cv = cross_validation(robot, converted, plot=tmp_path / "figs")
    assert sorted(p.name for p in cv.figures) == [f"cross_validation_{k}.png" for k in ("disagreement", "energy", "torques", "tracking")]
    # the .par's models are the URDF's (the conversion is exact): the controller's model is the plant's
    s = cv.summary()
    assert s["max_tracking_error"] < 1e-6 and s["relative_mass_matrix_disagreement"] < 1e-9 and s["relative_h_disagreement"] < 1e-9
    tracking, torques = cross_validation_panels(cv.controller_model, cv.coordinates, cv.simulation.numeric)
    # the legends: the controller's coordinates named by the controller's robot, the plant's torques by the plant's
    assert [[s.name for s in chosen] for _, _, chosen in tracking] == [["q_JLWheel", "q_elbow"]]
    assert [[s.name for s in chosen] for _, _, chosen in torques] == [["th1", "th2"]]


def test_figures_that_cannot_be_drawn_are_said_before_the_run(robot, converted, tmp_path, monkeypatch):
    """What the figures need is checked before the simulation: an error comes in seconds, not after the run."""
    pytest.importorskip("matplotlib")
    import kanerobot.simulation as simulation
    import kanerobot.visual.figures as figures

    def unknown(robot, names, quantity, aliases=None):
        raise kr.KaneRobotError(f"cannot tell which joint column {names[0]!r} of {quantity} belongs to (robot {robot.name})")

    def no_run(*args, **kwargs):
        raise AssertionError("simulated before the figures were checked")

    monkeypatch.setattr(figures, "series", unknown)
    monkeypatch.setattr(simulation, "simulate", no_run)
    with pytest.raises(kr.KaneRobotError, match=r"cannot tell which joint column 'JLWheel' of q belongs to \(robot wheelarm\)"):
        cross_validation(robot, converted, plot=tmp_path / "figs")


def test_a_failure_of_the_figures_after_the_run_keeps_the_result(robot, converted, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import kanerobot.visual.figures as figures

    def full_disk(cv, folder, prefix):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(figures, "plot_cross_validation", full_disk)
    with pytest.warns(UserWarning, match=r"the figures were not written \(\[Errno 28\] No space left on device\); the result"):
        cv = cross_validation(robot, converted, plot=tmp_path / "figs")
    assert cv.figures == [] and cv.summary()["max_tracking_error"] < 1e-6
    assert any("figures were not written" in note for note in cv.notes)
