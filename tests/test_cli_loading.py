"""Loading a robot, from Python and from the command line (issue 25, defects 6 and 7).

Every command that loads a robot takes ``kr.load``'s options (``--floating``,
``--mimic``, ``--unphysical``, ``--gravity``), and every error that advises
one names the Python keyword and the flag.  A body whose violation of
physical consistency cannot change the dynamics is not refused: the base
link of a fixed base (it never moves), a link fixed to a moving one when
the two make a rigid body together, a link whose correction is below
NEGLIGIBLE of the robot (one warning per load names it and the number).
The small robots are URDF texts written here with random physical bodies;
the acceptance test loads the whole example-robot-data corpus, each file
with the options its refusal names, and checks each refusal against
pinocchio's bodies (which merge the links fixed together).
"""

import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import benchmark, one_line_error

import kanerobot as kr
from kanerobot.cli import build_parser, main
from kanerobot.command_options import load_options
from kanerobot.dynamics.parameters import NEGLIGIBLE, check_physical
from kanerobot.errors import KaneRobotWarning
from kanerobot.identification.base_parameters import base_parameter_set
from kanerobot.report import robot_tables, summary

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ small robots as URDF text
def body(rng, mass=(0.5, 3.0), size=0.1):
    """``(mass, centre, inertia about the centre)`` of a random rigid body (positive masses along three axes)."""
    m = rng.uniform(*mass)
    a, b, c = m * rng.uniform(0.05, 1.0, 3) * size**2
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return m, rng.uniform(-size, size, 3), Q @ np.diag([b + c, a + c, a + b]) @ Q.T


def link(name, inertial=None):
    if inertial is None:
        return f'<link name="{name}"/>'
    m, c, I = float(inertial[0]), [float(x) for x in inertial[1]], np.asarray(inertial[2], dtype=float).tolist()
    return (f'<link name="{name}"><inertial><origin xyz="{c[0]!r} {c[1]!r} {c[2]!r}"/><mass value="{m!r}"/>'
            f'<inertia ixx="{I[0][0]!r}" ixy="{I[0][1]!r}" ixz="{I[0][2]!r}" iyy="{I[1][1]!r}" iyz="{I[1][2]!r}" izz="{I[2][2]!r}"/>'
            "</inertial></link>")  # fmt: skip


def joint(name, parent, child, kind="revolute", xyz=(0.0, 0.0, 0.3), extra=""):
    axis = '<axis xyz="0 1 0"/>' if kind != "fixed" else ""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz[0]!r} {xyz[1]!r} {xyz[2]!r}"/>{axis}{extra}</joint>')  # fmt: skip


def urdf(folder, name, *parts):
    path = Path(folder) / f"{name}.urdf"
    path.write_text(f'<?xml version="1.0"?>\n<robot name="{name}">\n' + "\n".join(parts) + "\n</robot>\n")
    return path


def arm(rng):
    """A two-joint arm on link ``base`` (the base's own left to the caller): its parts and its two bodies."""
    bodies = [body(rng), body(rng)]
    return [link("upper", bodies[0]), link("fore", bodies[1]), joint("shoulder", "base", "upper"), joint("elbow", "upper", "fore")], bodies


def arm_parts(rng):
    return arm(rng)[0]


def broken(mass, moments):
    """A body whose principal moments break the triangle inequality (or are negative): no rigid body."""
    return mass, np.zeros(3), np.diag(moments)


def correction(moments):
    """The moment to add to each principal moment to make a rigid body of them (what the warning names)."""
    e = np.sort(moments)
    return max(0.0, -e[0], e[2] - e[0] - e[1])


def info_of(robot):
    """What ``kanerobot info`` prints for ``robot``."""
    return summary(robot) + "\n" + robot_tables(robot)


# ------------------------------------------------------------------ bodies that cannot change the dynamics
def test_a_fixed_base_link_is_no_part_of_the_dynamics(tmp_path):
    """Go1, B1, ANYmal and HyQ were refused for their 1e-6 kg dummy base link. On a fixed base the
    base link never moves: it loads without a word and the dynamics are those of the same arm
    with a real base link; on a free-flying base it is link 0 of the dynamics, and is refused."""
    rng = np.random.default_rng(1)
    parts = arm_parts(rng)
    bad = urdf(tmp_path, "bad", link("base", broken(3.0, [1.0, 1.0, 5.0])), *parts)
    clean = urdf(tmp_path, "clean", link("base", body(rng)), *parts)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        robot = kr.load(bad)
    reference = kr.load(clean)
    assert robot.values == reference.values  # the base link's numbers are no parameter
    model, other = kr.derive(robot).numeric(robot.values, backend="numpy"), kr.derive(reference).numeric(reference.values, backend="numpy")
    for _ in range(3):
        q, qd, qdd = rng.uniform(-2, 2, (3, 2))
        np.testing.assert_allclose(model.inverse_dynamics(q, qd, qdd), other.inverse_dynamics(q, qd, qdd), rtol=1e-12, atol=1e-12)
    with pytest.raises(kr.RobotFileError, match=r"bad.urdf:3: link 'base': the principal moments .* break the triangle inequality"
                       r".*physical=False \(--unphysical on the command line\)"):  # fmt: skip
        kr.load(bad, floating=True)


def test_a_negligible_link_is_read_with_one_warning_naming_it_and_the_number(tmp_path, capsys):
    """Two dummy links (1e-6 kg, the six entries of the inertia 1e-9, as published URDFs write
    them) on joints of their own: one warning names both and how much it would take."""
    rng = np.random.default_rng(2)
    parts, bodies = arm(rng)
    dummy = (1e-6, np.zeros(3), np.full((3, 3), 1e-9))
    path = urdf(tmp_path, "dummies", link("base"), *parts, link("tip", dummy), link("tool", dummy),
                joint("tip_joint", "fore", "tip"), joint("tool_joint", "tip", "tool"))  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        robot = kr.load(path)
    assert [w.category for w in caught] == [KaneRobotWarning]
    moments = [np.linalg.eigvalsh(inertial[2])[-1] for inertial in (*bodies, dummy)]
    size = correction(np.linalg.eigvalsh(dummy[2])) / max(moments)  # the robot's largest principal moment: a real link's
    assert size < NEGLIGIBLE
    message = str(caught[0].message)
    assert "link 'tip' (line" in message and "link 'tool' (line" in message and f"({size:.2g} of the robot's largest" in message
    check_physical(robot, robot.values)  # numeric(robot.values) agrees: no refusal
    assert main(["info", str(path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"kanerobot: warning: {path}: 2 links not quite a rigid body's"), err


def test_a_link_whose_violation_matters_is_refused_naming_both_spellings(tmp_path, capsys):
    rng = np.random.default_rng(3)
    path = urdf(tmp_path, "wrong", link("base"), *arm_parts(rng), link("tip", broken(0.2, [1e-3, 1e-3, 5e-3])),
                joint("tip_joint", "fore", "tip"))  # fmt: skip
    with pytest.raises(kr.RobotFileError) as error:
        kr.load(path)
    assert "link 'tip': the principal moments about the centre of mass (0.001, 0.001, 0.005) break the triangle inequality" in str(error.value)
    assert "load with physical=False (--unphysical on the command line)" in str(error.value)
    assert "each principal moment raised by 0.003 kg m^2" in str(error.value)
    assert "--unphysical on the command line" in one_line_error(capsys, "info", path)
    assert main(["info", str(path), "--unphysical"]) == 0
    assert capsys.readouterr().out == info_of(kr.load(path, physical=False))


def test_a_link_fixed_to_a_moving_link_is_one_body_with_it(tmp_path):
    """Allegro's finger links break the triangle inequality alone; with the fingertip fixed to
    each (the rigid body that moves, and that pinocchio merges) they do not: loaded, and
    numeric's check agrees.  The sum is checked here by the parallel-axis theorem."""
    finger = broken(0.0096, [2.301e-06, 3.485e-06, 7.266e-06])
    tip, d = (0.0168, np.zeros(3), np.eye(3) * 9.68e-07), 0.0267
    m = finger[0] + tip[0]
    z = tip[0] * d / m  # the centre of mass of the two, on z
    together = finger[2] + finger[0] * z**2 * np.diag([1, 1, 0]) + tip[2] + tip[0] * (d - z) ** 2 * np.diag([1, 1, 0])
    assert correction(np.linalg.eigvalsh(finger[2])) > 0 and correction(np.linalg.eigvalsh(together)) == 0
    parts = [link("base"), link("finger", finger), joint("knuckle", "base", "finger")]
    with pytest.raises(kr.RobotFileError, match="link 'finger': the principal moments"):
        kr.load(urdf(tmp_path, "alone", *parts))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        robot = kr.load(urdf(tmp_path, "finger", *parts, link("tip", tip), joint("tip_joint", "finger", "tip", "fixed", (0.0, 0.0, d))))
    check_physical(robot, robot.values)


def test_a_link_fixed_to_a_fixed_base_is_not_checked(tmp_path):
    """ANYmal C's depth camera, fixed to its base: on a fixed base it never moves (no parameter of
    it in the model); on a free-flying base it is part of link 0, a rigid body with the trunk."""
    rng = np.random.default_rng(4)
    camera = broken(0.1, [8.672e-06, 0.0006688, 0.001374])
    path = urdf(tmp_path, "camera", link("base", body(rng, mass=(20.0, 30.0), size=0.3)), link("camera", camera),
                joint("mount", "base", "camera", "fixed", (0.3, 0.0, 0.1)), link("leg", body(rng)), joint("hip", "base", "leg"))  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        robot, flying = kr.load(path), kr.load(path, floating=True)
    model = kr.derive(robot)
    assert not any(name.endswith("mount") for name in model.parameters)
    model.numeric(robot.values, backend="numpy")  # the check of numeric: the camera's link is not used
    check_physical(flying, flying.values)


# ------------------------------------------------------------------ the command line's loading options
def mimic_arm(tmp_path, rng):
    upper, _, shoulder, _ = arm_parts(rng)
    return urdf(tmp_path, "mimic", link("base"), upper, shoulder, link("fore", body(rng)),
                joint("elbow", "upper", "fore", extra='<mimic joint="shoulder" multiplier="2"/>'))  # fmt: skip


@pytest.mark.parametrize(
    "flags, options",
    [
        (["--floating"], {"floating": True}),
        (["--gravity", "0,-9.81,0"], {"gravity": (0.0, -9.81, 0.0)}),
        (["--mimic", "independent"], {"mimic": "independent"}),
        (["--unphysical"], {"physical": False}),
    ],
)
def test_each_loading_flag_loads_what_kr_load_does(flags, options, tmp_path, capsys):
    rng = np.random.default_rng(5)
    if "mimic" in options:
        path = mimic_arm(tmp_path, rng)
    else:
        tip = broken(0.5, [0.1, 0.1, 0.5]) if "physical" in options else body(rng)
        path = urdf(tmp_path, "arm", link("base", body(rng)), *arm_parts(rng), link("tip", tip), joint("tip_joint", "fore", "tip"))
    expected = kr.load(path, **options)
    assert main(["info", str(path), *flags]) == 0
    out = capsys.readouterr().out
    assert out == info_of(expected)
    if "floating" in options:
        assert expected.dof == kr.load(path).dof + 6
    if "gravity" in options:
        assert expected.values["G2"] == -9.81 and "G2" in out
    for command in ("info", "model", "simulate", "draw", "campaign", "identify", "convert", "view"):  # every command that loads
        rest = {"model": ["idm"], "draw": ["-o", "x.png"], "campaign": ["--runs", "1"], "identify": ["run.csv"], "convert": ["x.toml"]}
        assert load_options(build_parser().parse_args([command, str(path), *rest.get(command, []), *flags])) == options


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda folder, rng: "nosuch.urdf", "nosuch.urdf: no such file"),
        (lambda folder, rng: "robots/nosuch", "robots/nosuch: no such file"),
        (lambda folder, rng: urdf(folder, "static", link("base"), link("box", body(rng)), joint("fix", "base", "box", "fixed")),
         "load it with floating=True (--floating on the command line) for a free body"),
        (lambda folder, rng: urdf(folder, "ur3"), "the <robot> element is empty: no robot to load"),
    ],
    ids=["missing file", "missing path", "no moving joint", "empty robot"],
)
def test_loading_errors_name_the_flag(make, words, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = one_line_error(capsys, "info", make(tmp_path, np.random.default_rng(6)))
    assert line.startswith("kanerobot: error: ") and words in line, line


def test_urdf_options_on_a_par_file_and_unknown_choices(capsys):
    line = one_line_error(capsys, "info", "rx90", "--floating", "--unphysical")
    assert "floating=True (--floating on the command line), physical=False (--unphysical on the command line) are load options of .urdf files" in line
    assert "argument --mimic: invalid choice: 'copy'" in one_line_error(capsys, "info", "rx90", "--mimic", "copy")


def test_an_output_inside_a_file_says_it_is_a_file(tmp_path, capsys, monkeypatch):
    """``-o afile/run.npz`` with afile a file said 'folder afile does not exist'."""
    monkeypatch.chdir(tmp_path)
    Path("afile").write_text("")
    assert one_line_error(capsys, "simulate", "planar2", "-o", "afile/run.npz").endswith("-o afile/run.npz: afile is a file, not a folder")
    assert one_line_error(capsys, "info", "planar2", "-o", "afile/sub/info.txt").endswith("afile is a file, not a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_regp_takes_the_method_its_error_advises(capsys):
    """sr400's symbolic grouping advises method='numeric': the flag it names exists, and the
    numeric method gives planar2's ZZR1 = ZZ1 + IA1 + M2 L1^2 (L1 = 0.5)."""
    line = one_line_error(capsys, "model", "sr400", "regp")
    assert "use method='numeric' (--base-method numeric on the command line)" in line
    assert "--set NAME=VALUE on the command line" in one_line_error(capsys, "model", "sr400", "regp", "--base-method", "numeric")
    assert main(["model", "planar2", "regp", "--base-method", "numeric", "--set", "L1=0.5"]) == 0
    out = capsys.readouterr().out
    assert "ZZR1 = IA1 + M2/4 + ZZ1" in out and "by the numeric method" in out
    names = base_parameter_set(kr.load(kr.frames_path("planar2")), "numeric", values={"L1": 0.5}).names
    assert [line.split(" = ")[0] for line in out.splitlines() if " = " in line and line.split(" = ")[0] in names] == names


def test_simulate_runs_an_unphysical_file_with_the_flag(tmp_path, capsys):
    """--unphysical loads the file as written and runs the models on it (numeric(physical=False))."""
    rng = np.random.default_rng(7)
    path = urdf(tmp_path, "pendulum", link("base"), link("arm", broken(1.0, [0.01, 0.01, 0.05])), joint("hinge", "base", "arm"))
    assert "--unphysical on the command line" in one_line_error(capsys, "simulate", path, "--t", "0.1", "--samples", "3")
    assert main(["simulate", str(path), "--t", "0.1", "--samples", "3", "--unphysical", "--x0", f"{rng.uniform(-1, 1)},0"]) == 0
    assert capsys.readouterr().out.startswith("robot                  pendulum")


def test_a_missing_file_in_a_real_process():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "kanerobot", "info", "nosuch.urdf"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert out.returncode == 2 and out.stderr == "kanerobot: error: nosuch.urdf: no such file\n" and out.stdout == ""


# ------------------------------------------------------------------ acceptance: example-robot-data
#: How an error's advice reads, and the load option it names.
ADVICE = {"mimic='independent'": ("mimic", "independent", ["--mimic", "independent"]), "floating=True": ("floating", True, ["--floating"]),
          "physical=False": ("physical", False, ["--unphysical"])}  # fmt: skip


def advised(path):
    """``(options, flags, messages)``: the options that load ``path``, found by following the advice of each refusal."""
    options, flags, messages = {}, [], []
    while True:
        try:
            kr.load(path, **options)
            return options, flags, messages
        except kr.RobotFileError as exc:
            messages.append(str(exc))
            named = [advice for text, advice in ADVICE.items() if f"{text} ({advice[2][0]}" in str(exc) and advice[0] not in options]
            if not named:
                return None, flags, messages
            options[named[0][0]] = named[0][1]
            flags += named[0][2]


def unphysical_bodies(path, floating):
    """pinocchio's bodies (links fixed together merged) that are no rigid body by more than NEGLIGIBLE of the robot."""
    import pinocchio

    model = pinocchio.buildModelFromUrdf(str(path), *([pinocchio.JointModelFreeFlyer()] if floating else []))
    bodies = list(zip(model.names, model.inertias))[1:]  # the universe of a fixed base does not move
    mass = sum(max(b.mass, 0.0) for _, b in bodies)
    moment = max(np.linalg.eigvalsh(b.inertia)[-1] for _, b in bodies)
    return [name for name, b in bodies if max(correction(np.linalg.eigvalsh(b.inertia)) / moment, max(0.0, -b.mass) / mass) > NEGLIGIBLE]


@pytest.mark.long
def test_every_example_robot_data_urdf_loads_or_is_refused_for_what_changes_the_dynamics(capsys, monkeypatch):
    """Each URDF loads with the options its refusals name, through kr.load and through
    ``kanerobot info`` (in-process; its printing left out: loading only), whose refusals name
    the flags; an option physical=False is needed only where pinocchio's bodies are no rigid
    bodies beyond NEGLIGIBLE; the one file that never loads holds no robot (an empty
    <robot>, which pinocchio refuses too)."""
    bench = benchmark("urdf_vs_pinocchio")
    robots = bench.corpus()
    if not robots or bench.check():
        pytest.skip("example-robot-data and pinocchio are not installed: pip install -e '.[bench]'")
    import kanerobot.cli

    monkeypatch.setattr(kanerobot.cli, "summary", lambda robot: robot.name)  # the loading is tested, not the tables
    monkeypatch.setattr(kanerobot.cli, "robot_tables", lambda robot: "")
    start, cpu, loaded, refused = time.perf_counter(), time.process_time(), [], []
    for name, path in robots.items():
        options, flags, messages = advised(path)
        if options is None:
            refused.append(name)
            assert "the <robot> element is empty" in messages[-1], messages[-1]
            continue
        loaded.append(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", KaneRobotWarning)
            assert main(["info", str(path), *flags]) == 0, capsys.readouterr().err
            if flags:
                line = one_line_error(capsys, "info", path)
                assert any(flag in line for flag in flags if flag.startswith("--")), line
        capsys.readouterr()
        bad = unphysical_bodies(path, options.get("floating", False))
        assert bool(bad) == (options.get("physical") is False), (name, bad, messages)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"{len(loaded)} URDFs loaded, {len(refused)} refused ({', '.join(refused)}), in {elapsed:.1f} s ({cpu:.1f} s of CPU)")
    assert refused == ["ur3"] and len(loaded) == len(robots) - 1
