"""MJCF files (MuJoCo's .xml) read by kr.load, against MuJoCo itself.

Random models (random placements in every orientation syntax, inertias,
joint anchors and axes, geoms) written as MJCF text, read by kanerobot and
compiled by MuJoCo: the mass matrix, the bias forces C qd + g and the
inverse dynamics of ``kr.derive(robot).numeric(robot.values)`` equal
``mj_fullM``, ``qfrc_bias`` and ``mj_inverse`` (contacts, constraints and
springs off; tests/mujoco_reference.py maps the states) at random states.
Each malformed file is one line naming the file, the line and the fix.
"""

import dataclasses
import importlib.metadata
import importlib.util
import warnings
from pathlib import Path

import numpy as np
import pytest
from ball_robots import random_state

import kanerobot as kr
from kanerobot.cli import main as cli
from kanerobot.errors import KaneRobotWarning
from kanerobot.robot.mjcf import mjcf_from_text, parse_mjcf

mujoco = pytest.importorskip("mujoco", reason="pip install -e '.[test]' (MuJoCo is the reference of the MJCF reader)")
from mujoco_reference import MujocoReference, assert_projected, worst_errors  # noqa: E402 (needs mujoco)

TOL = 1e-9


# ----------------------------------------------------------- random models
def _v(x):
    return " ".join(f"{float(v):.17g}" for v in np.ravel(x))


def _unit(rng):
    x = rng.normal(size=3)
    return x / np.linalg.norm(x)


def _orientation(rng, how, angle):
    """A random orientation attribute, written the way ``how`` says (``angle``: the compiler's unit)."""
    k = 180 / np.pi if angle == "degree" else 1.0
    if how == "quat":
        return f'quat="{_v(rng.normal(size=4) * 3)}"'  # not unit: MuJoCo normalises
    if how == "euler":
        return f'euler="{_v(rng.uniform(-np.pi, np.pi, 3) * k)}"'
    if how == "axisangle":
        return f'axisangle="{_v(np.concatenate([_unit(rng) * 2, [rng.uniform(-3, 3) * k]]))}"'
    if how == "xyaxes":
        return f'xyaxes="{_v(np.concatenate([_unit(rng), rng.normal(size=3)]))}"'
    return f'zaxis="{_v(rng.normal(size=3))}"'


def _inertial(rng, full=False):
    moments = rng.uniform(0.05, 0.1, 3)  # any three in [0.05, 0.1] are a rigid body's
    pos = rng.uniform(-0.2, 0.2, 3)
    if full:
        Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        J = Q @ np.diag(moments) @ Q.T
        numbers = [J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2], J[1, 2]]
        return f'<inertial mass="{rng.uniform(0.5, 2):.17g}" pos="{_v(pos)}" fullinertia="{_v(numbers)}"/>'
    return f'<inertial mass="{rng.uniform(0.5, 2):.17g}" pos="{_v(pos)}" diaginertia="{_v(moments)}" quat="{_v(rng.normal(size=4))}"/>'


def _hinge(rng, name, angle, extra=""):
    k = 180 / np.pi if angle == "degree" else 1.0
    return (f'<joint name="{name}" type="hinge" pos="{_v(rng.uniform(-0.3, 0.3, 3))}" axis="{_v(rng.normal(size=3))}" '
            f'ref="{rng.uniform(-1, 1) * k:.17g}"{extra}/>')  # fmt: skip


def random_mjcf(seed, floating=False, angle="degree", eulerseq="xyz"):
    """A tree of 9 bodies and 12 joints (hinge, slide, ball; free root if ``floating``): every orientation
    syntax, defaults and childclass, several joints in a body, a <frame>, inertials and geoms of every shape."""
    rng = np.random.default_rng(seed)
    o = lambda how: _orientation(rng, how, angle)  # noqa: E731
    p = lambda: f'pos="{_v(rng.uniform(-0.5, 0.5, 3))}"'  # noqa: E731
    root_joint = '<freejoint name="root"/>' if floating else _hinge(rng, "h0", angle)
    return f"""<mujoco model="random{seed}">
  <compiler angle="{angle}" eulerseq="{eulerseq}"/>
  <option gravity="{_v(rng.normal(size=3) * 4)}"/>
  <default>
    <joint armature="0" damping="0"/>
    <geom density="{rng.uniform(500, 1500):.17g}"/>
    <default class="arm">
      <joint type="slide" axis="{_v(rng.normal(size=3))}"/>
      <geom type="box" size="{_v(rng.uniform(0.05, 0.2, 3))}"/>
    </default>
  </default>
  <worldbody>
    <geom type="plane" size="5 5 0.1"/>
    <body name="a" {p()} {o("quat")}>
      {root_joint}
      {_inertial(rng)}
      <body name="b" childclass="arm" {p()} {o("euler")}>
        {_hinge(rng, "h1", angle)}
        <joint name="s1" pos="0.1 0 0"/>
        {_inertial(rng, full=True)}
        <body name="c" {p()} {o("axisangle")}>
          <joint name="ball1" type="ball" {p()}/>
          <geom {p()} {o("quat")}/>
          <geom type="ellipsoid" size="{_v(rng.uniform(0.05, 0.2, 3))}" {p()} {o("zaxis")}/>
          <body name="d" {p()} {o("xyaxes")}>
            <geom class="arm" mass="{rng.uniform(0.5, 2):.17g}" {p()}/>
            <body name="e" {p()} {o("euler")}>
              <frame {p()} {o("axisangle")}>
                {_hinge(rng, "h2", angle)}
                <geom type="capsule" fromto="{_v(rng.uniform(-0.3, 0.3, 6))}" size="{rng.uniform(0.02, 0.1):.17g}"/>
              </frame>
              <geom type="cylinder" size="{_v(rng.uniform(0.05, 0.2, 2))}" {p()} {o("xyaxes")}/>
              <geom type="sphere" size="{rng.uniform(0.05, 0.2):.17g}" {p()} density="0"/>
              <geom type="sphere" size="0.1" group="7"/>
              <site name="tip" pos="0 0 0.3"/>
            </body>
          </body>
        </body>
      </body>
      <body name="f" {p()} {o("zaxis")}>
        <joint type="slide" {p()} axis="{_v(rng.normal(size=3))}" ref="{rng.uniform(-0.3, 0.3):.17g}"/>
        {_hinge(rng, "h3", angle)}
        <joint name="ball2" type="ball" {p()}/>
        <geom type="capsule" size="{_v(rng.uniform(0.05, 0.1, 2))}" {p()} {o("euler")}/>
      </body>
      <body name="g" {p()} {o("quat")}>
        <geom type="box" size="{_v(rng.uniform(0.05, 0.2, 3))}" {p()} {o("euler")}/>
        <body name="h" {p()}>
          {_hinge(rng, "h4", angle)}
          <geom size="0.1" {p()}/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="h1" gear="2" ctrlrange="-1 1.5"/></actuator>
</mujoco>
"""


def load_pair(text, folder, name="robot.xml"):
    """``(parsed, MuJoCo model)`` of MJCF text written to ``folder``."""
    path = Path(folder) / name
    path.write_text(text)
    return parse_mjcf(path), mujoco.MjModel.from_xml_path(str(path))


def no_friction(values):
    """The values with damping and dry friction 0 (MuJoCo's damper is off, its frictionloss a constraint)."""
    return {name: (0.0 if name.startswith(("FV", "FS")) else value) for name, value in values.items()}


@pytest.fixture(scope="module", params=[(False, "degree", "xyz"), (True, "radian", "zXy")], ids=["fixed", "floating"])
def random_pair(request, tmp_path_factory):
    """``(parsed, MuJoCo model, derived model, numeric model)`` of a random tree."""
    floating, angle, seq = request.param
    parsed, model = load_pair(random_mjcf(3, floating, angle, seq), tmp_path_factory.mktemp("mjcf"))
    derived = kr.derive(parsed.robot)
    return parsed, model, derived, derived.numeric(no_friction(parsed.robot.values), backend="numpy")


def test_random_trees_equal_mujoco(random_pair):
    parsed, model, _, fn = random_pair
    robot = parsed.robot
    assert robot.floating == (parsed.free_joint is not None)
    assert robot.dof == model.nv == (18 if robot.floating else 13)
    assert {"h1", "s1", "ball1", "h2", "h3", "ball2", "joint5"} <= set(robot.joint_labels)
    rng = np.random.default_rng(7)
    states = [random_state(robot, rng) for _ in range(4)]
    assert max(worst_errors(fn, MujocoReference(parsed, model), states)) < TOL


def test_inertia_from_geoms_is_mujocos(random_pair):
    """Each body's mass (from its geoms, densities and masses, or its inertial) is MuJoCo's ``body_mass``
    (a free body's link 0 holds those welded to it too: only the total is compared there)."""
    parsed, model, _, _ = random_pair
    values = parsed.robot.values
    masses = {}
    for label, body in parsed.body_names.items():
        if "M" + parsed.robot.stems[label] in values:
            masses[body] = masses.get(body, 0.0) + values["M" + parsed.robot.stems[label]]
            if label != "0":
                assert abs(masses[body] - model.body(body).mass[0]) < 1e-12, body
    assert abs(sum(masses.values()) - model.body_mass.sum()) < 1e-12 and len(masses) >= 6


def test_armature_is_ia_damping_fv_frictionloss_fs(random_pair):
    """MuJoCo's armature adds to M's diagonal as IA, its damper's force is FV qd (its frictionloss, a
    constraint, is FS: read, not compared)."""
    text = '<mujoco><worldbody><body><joint name="j" armature="0.3" damping="0.7" frictionloss="0.2"/><geom size="1"/></body></worldbody></mujoco>'
    values = mjcf_from_text(text).robot.values
    assert (values["IAj"], values["FVj"], values["FSj"]) == (0.3, 0.7, 0.2)
    parsed, model, derived, _ = random_pair
    rng = np.random.default_rng(2)
    values = no_friction(parsed.robot.values)
    reference = MujocoReference(parsed, model)
    for label in parsed.robot.joint_labels:
        stem, index = parsed.robot.stems[label], parsed.joint_ids[label]
        values["IA" + stem], values["FV" + stem] = rng.uniform(0.1, 1, 2)
        dofs = slice(model.jnt_dofadr[index], model.jnt_dofadr[index] + parsed.robot.frame(label).joint.nv)
        model.dof_armature[dofs], model.dof_damping[dofs] = values["IA" + stem], values["FV" + stem]
    try:
        fn = derived.numeric(values, backend="numpy")
        for q, v, a in (random_state(parsed.robot, rng) for _ in range(2)):
            assert np.abs(fn.inverse_dynamics(q, v, a) - reference.inverse(q, v, a, damping=True)).max() < TOL
            assert np.abs(fn.mass_matrix(q) - reference.mass_matrix(q)).max() < TOL
    finally:
        model.dof_armature[:], model.dof_damping[:] = 0.0, 0.0


def test_limits_and_names(random_pair):
    parsed, _, _, _ = random_pair
    robot = parsed.robot
    assert robot.limits["h1"].effort == 3.0  # the motor's ctrlrange times its gear
    assert parsed.joint_names["h1"] == "h1" and parsed.body_names["h1"] == "b"
    unnamed = next(label for label in robot.joint_labels if label.startswith("joint"))
    assert parsed.joint_names[unnamed] == "" and parsed.body_names[unnamed] == "f"
    text = ('<mujoco><compiler angle="degree"/><worldbody><body><joint name="j" range="-90 45"/><geom size="0.1"/>'
            '<body><joint name="k" type="slide" range="-0.5 0.5" limited="false"/><geom size="0.1"/></body></body></worldbody></mujoco>')
    limits = mjcf_from_text(text).robot.limits
    assert limits["j"].lower == pytest.approx(-np.pi / 2) and limits["j"].upper == pytest.approx(np.pi / 4) and "k" not in limits


def test_compiler_bounds_and_total_mass(tmp_path, monkeypatch):
    """``boundmass`` and ``boundinertia`` raise small bodies' mass and principal moments (from an inertial or
    geoms), then ``settotalmass`` scales every body, as MuJoCo compiles them."""
    monkeypatch.chdir(tmp_path)  # MuJoCo writes its warning (settotalmass is deprecated) to MUJOCO_LOG.TXT where it runs
    text = """<mujoco><compiler boundmass="0.5" boundinertia="0.02" settotalmass="7"/><worldbody>
      <body pos="0 0 1" euler="10 20 30"><joint name="a" axis="1 1 0" pos="0.1 0 0"/>
        <inertial pos="0.1 0.2 0.3" mass="0.1" diaginertia="0.01 0.05 0.03" quat="1 2 3 4"/>
        <body pos="0.3 0 0"><joint name="b" type="ball"/><geom type="box" size="0.01 0.02 0.3" density="10"/>
          <body pos="0 0.3 0"><joint name="c" type="slide" axis="0 0 1"/><geom type="sphere" size="0.3"/></body>
        </body>
      </body></worldbody></mujoco>"""
    parsed = mjcf_from_text(text)
    model = mujoco.MjModel.from_xml_string(text)
    assert parsed.robot.values["Ma"] == pytest.approx(model.body_mass[1], rel=1e-14)
    fn = kr.derive(parsed.robot).numeric(dict(parsed.robot.values), backend="numpy")
    rng = np.random.default_rng(4)
    assert max(worst_errors(fn, MujocoReference(parsed, model), [random_state(parsed.robot, rng) for _ in range(3)])) < TOL


def test_labels_and_stems_never_clash():
    """Joint names are labels; a body named like a joint, a joint named 0, symbols that would coincide
    (``MX1`` of frame ``1``, ``M`` of frame ``X1``) get distinct labels and stems."""
    body = '<body name="{b}"><joint name="{j}"/><geom size="0.1"/>{inner}</body>'
    inner = body.format(b="X1", j="X1", inner=body.format(b="q", j="0", inner=body.format(b="c", j="a.b", inner='<body name="a_b"/>')))
    parsed = mjcf_from_text(f"<mujoco><worldbody>{body.format(b='1', j='1', inner=inner)}</worldbody></mujoco>")
    robot = parsed.robot
    assert robot.joint_labels == ("1", "X1", "0_2", "a.b") and robot.labels[-1] == "a_b"
    assert len(set(robot.stems.values())) == len(robot.stems) and "MX1" in robot.values and "MX1_2" in robot.values
    assert parsed.joint_names["0_2"] == "0"


def test_include_next_to_the_model(tmp_path):
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "defaults.xml").write_text('<mujoco><default><joint axis="0 1 0"/></default></mujoco>')
    (tmp_path / "arm.xml").write_text('<mujoco><include file="parts/defaults.xml"/><worldbody><body pos="0 0 1">\n'
                                      '<joint name="j"/><geom size="0.1" pos="0.5 0 0"/></body></worldbody></mujoco>')  # fmt: skip
    robot = kr.load(tmp_path / "arm.xml")
    assert list(robot.frame("j").axis) == [0, 1, 0] and robot.values["PZj"] == 1.0
    assert kr.load(tmp_path / "arm.xml", gravity=(0, -9.81, 0)).values["G2"] == -9.81
    (tmp_path / "parts" / "defaults.xml").write_text('<mujoco>\n<default><joint type="screw"/></default></mujoco>')
    with pytest.raises(kr.RobotFileError, match="unknown type 'screw'"):  # the line of the joint, in arm.xml
        kr.load(tmp_path / "arm.xml")
    (tmp_path / "parts" / "defaults.xml").write_text('<mujoco>\n<worldbody><body quat="0 0 0 0"/></worldbody></mujoco>')
    with pytest.raises(kr.RobotFileError) as info:  # an error in the included file names it and its line
        kr.load(tmp_path / "arm.xml")
    assert str(info.value).startswith(f"{tmp_path / 'parts' / 'defaults.xml'}:2: body 1 (unnamed): quat=\"0 0 0 0\" is zero")


def test_inactive_equality_loads_and_springs_warn():
    body = '<worldbody><body><joint name="j" stiffness="3"/><geom size="0.1"/></body></worldbody>'
    with pytest.warns(KaneRobotWarning, match=r"<string>: passive forces left out of the model .*: joint springs \(stiffness\) \('j'\)"):
        robot = mjcf_from_text(f'<mujoco>{body}<equality><joint joint1="j" active="false"/></equality></mujoco>').robot
    assert robot.joint_labels == ("j",)


# ------------------------------------------------------------------ errors
def model(worldbody, head=""):
    return f"<mujoco>{head}\n<worldbody>\n{worldbody}\n</worldbody>\n</mujoco>\n"


GOOD = '<body name="b">\n<joint name="j"/>\n<geom size="0.1"/>\n</body>'


@pytest.mark.parametrize(
    "text, line, words",
    [
        (model('<body name="b" pos="0 0 x">\n<joint/><geom size="0.1"/></body>'), 3,
         "body 'b': pos=\"0 0 x\" must be 3 finite numbers separated by spaces"),
        (model(GOOD.replace('<joint name="j"/>', '<joint name="j" type="screw"/>')), 4,
         "joint 'j' has unknown type 'screw': use one of hinge, slide, ball, free"),
        (model('<body name="b"><joint/><inertial mass="1" diaginertia="1 1 1"/></body>'), 3,
         "the <inertial> of body 'b': <inertial> has no pos=\"...\": give it"),
        (model('<body name="b"><joint/><inertial pos="0 0 0" mass="1"/></body>'), 3,
         "the <inertial> of body 'b' has neither diaginertia=\"...\" nor fullinertia=\"...\""),
        (model(GOOD + '\n<body name="c">\n<joint/>\n<body name="d">\n<freejoint/>\n<geom size="1"/></body></body>'), 10,
         "the free joint of body 'd' is not on a child of <worldbody>: only a top-level body can be free"),
        (model(GOOD.replace('<body name="b">', '<body name="b" quat="0 0 0 0">')), 3,
         "body 'b': quat=\"0 0 0 0\" is zero: give a rotation (w x y z), \"1 0 0 0\" for none"),
        (model(GOOD.replace('<body name="b">', '<body name="b" quat="1 0 0 0" euler="0 0 1">')), 3,
         "body 'b': quat and euler both give its orientation: keep one"),
        (model('<body name="b">\n<joint name="j"/>\n<body name="c"><joint/><geom size="0.1"/></body></body>'), 3,
         "body 'b' moves (joint 'j') but has no mass, nor have the bodies welded to it: MuJoCo refuses it"),
        (model(GOOD.replace('<joint name="j"/>', '<joint name="j" axis="0 0 0"/>')), 4, "joint 'j': its axis is zero: give a direction"),
        (model(GOOD, '<include file="../outside.xml"/>'), 1, "<include file=\"../outside.xml\"> is outside the model's folder"),
        (model(GOOD, '<include file="https://example.com/m.xml"/>'), 1,
         "<include file=\"https://example.com/m.xml\"> is a URL: nothing is fetched from the network"),
        (model(GOOD, '<include file="/etc/hostname"/>'), 1, "<include file=\"/etc/hostname\"> is an absolute path"),
        (model(GOOD, "<include/>"), 1, "an <include>: <include> has no file=\"...\": give it"),
        (model(GOOD.replace('<geom size="0.1"/>', '<geom type="mesh" mesh="m"/>')), 5,
         "a geom of body 'b': mesh=\"m\" names no <mesh> of <asset> (meshes: none): give the name of one"),
        (model(GOOD.replace('<geom size="0.1"/>', '<geom type="hfield" hfield="h"/>')), 5,
         "a geom of body 'b' is a hfield, whose mass and inertia kanerobot does not compute: give body 'b' an <inertial>"),
        (model(GOOD + '<body name="c"><freejoint/><geom size="1"/></body>\n<body name="e"><freejoint/><geom size="1"/></body>'), 7,
         "the free joint of body 'e': a second free body (the first is 'c', line 6)"),
        (model(GOOD) + "", 0, ""),
        (model(GOOD + '<body name="table"><geom type="mesh" mesh="m"/></body>'), 0, ""),  # static: its mesh never moves
        (model('<body name="c">\n<freejoint/>\n<joint name="j"/>\n<geom size="1"/></body>'), 4,
         "the free joint of body 'c': body 'c' has other joints besides its free joint"),
        (model('<body name="c">\n<freejoint/>\n<geom size="1"/></body>\n' + GOOD), 7,
         "body 'b' moves (its joints) beside the free body 'c': a robot has one free-flying root or a fixed base"),
        (model(GOOD).replace("</mujoco>", "<equality>\n<flex flex=\"cloth\"/></equality></mujoco>"), 9,
         "<equality> <flex> is not supported (its constraint would change the dynamics; joint and fixed-tendon couplings and "
         "connect loops are): remove it, or make it active=\"false\""),
        (model(GOOD).replace("</mujoco>", "<tendon>\n<fixed name=\"t\" damping=\"1\"><joint joint=\"j\" coef=\"1\"/></fixed>"
                                          "</tendon></mujoco>"), 9, "tendon 't' has damping: tendon forces are not modelled"),
        (model(GOOD.replace("<joint", '<joint class="nope"')), 4, "<joint> uses class 'nope', which no <default class=...> defines"),
        (model(GOOD.replace('<geom size="0.1"/>', '<geom type="capsule" size="0.1"/>')), 5,
         "a geom of body 'b': size=\"0.1\" must give 2 positive numbers for a capsule"),
        (model(GOOD, '<compiler angle="grad"/>'), 1, "<compiler>: angle=\"grad\": use 'degree' or 'radian'"),
        (model(GOOD.replace("<joint", "<composite"), ""), 4, "<composite> (bodies generated by MuJoCo) is not supported"),
        ("<robot/>", 1, "the document element is <robot>: an MJCF file is one <mujoco> element"),
        ("<mujoco><worldbody>\n<body>\n</mujoco>", 3, "malformed XML: mismatched tag"),
        ('<!DOCTYPE m [<!ENTITY e "x">]>\n<mujoco/>', 1, "a DOCTYPE is not accepted in an MJCF file"),
        (model("<body><geom size='0.1'/></body>"), 1, "model 'robot' has no joint: nothing moves"),
    ],
)
def test_malformed_files_name_the_line(text, line, words, tmp_path):
    path = tmp_path / "robot.xml"
    path.write_text(text)
    if not words:
        assert kr.load(path).joint_labels == ("j",)
        return
    with pytest.raises(kr.RobotFileError) as info:
        kr.load(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: ") and words in message and "\n" not in message, message


def test_mujoco_refuses_them_too(tmp_path, monkeypatch):
    """The malformed cases that MuJoCo defines are errors for MuJoCo itself (not a refusal of ours only)."""
    monkeypatch.chdir(tmp_path)  # MuJoCo writes MUJOCO_LOG.TXT where it runs
    for text in (model(GOOD.replace('<body name="b">', '<body name="b" quat="0 0 0 0">')),
                 model('<body name="b">\n<joint name="j"/>\n<body name="c"><joint/><geom size="0.1"/></body></body>'),
                 model(GOOD + '\n<body name="c">\n<joint/>\n<body name="d">\n<freejoint/>\n<geom size="1"/></body></body>')):  # fmt: skip
        with pytest.raises(ValueError):
            mujoco.MjModel.from_xml_string(text)


def test_cli_loads_mjcf_and_says_what_is_wrong_on_one_line(tmp_path, capsys):
    good, bad = tmp_path / "good.xml", tmp_path / "bad.xml"
    good.write_text(model(GOOD))
    bad.write_text(model(GOOD.replace('<joint name="j"/>', '<joint name="j" type="screw"/>')))
    assert cli(["info", str(good)]) == 0
    assert "j" in capsys.readouterr().out
    assert cli(["info", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err == f"kanerobot: error: {bad}:4: joint 'j' has unknown type 'screw': use one of hinge, slide, ball, free\n"


# --------------------------------------------------------------- the suites
def suite_files():
    """``{name: path}`` of the MJCF models of dm_control's suite and gymnasium's MuJoCo environments."""
    out = {}
    for package, folder, prefix in (("dm_control", "suite", "dm_control/"), ("gymnasium", "envs/mujoco/assets", "gymnasium/")):
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        for path in sorted(Path(spec.submodule_search_locations[0], folder).glob("*.xml")):
            out[prefix + path.stem] = path
    return out


ACCEPTANCE = ("dm_control/cartpole", "dm_control/acrobot", "dm_control/pendulum", "dm_control/reacher", "dm_control/hopper",
              "dm_control/walker", "dm_control/cheetah", "dm_control/humanoid", "gymnasium/ant", "gymnasium/humanoid",
              "dm_control/manipulator", "dm_control/stacker")  # fmt: skip
#: The models of :data:`ACCEPTANCE` with couplings (a fixed-tendon equality: the finger follows the thumb).
COUPLINGS = {"dm_control/manipulator": 1, "dm_control/stacker": 1}


@pytest.mark.long
@pytest.mark.parametrize("name", ACCEPTANCE)
def test_suite_models_equal_mujoco(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MuJoCo writes its warnings (cheetah's settotalmass) to MUJOCO_LOG.TXT where it runs
    path = suite_files().get(name)
    if path is None:
        pytest.skip("pip install -e '.[test]' (dm-control and gymnasium hold the models)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", KaneRobotWarning)  # their joint springs, left out (MuJoCo's are off here too)
        parsed = parse_mjcf(path)
    tree = dataclasses.replace(parsed, robot=dataclasses.replace(parsed.robot, mimics=()))  # MuJoCo's equalities off
    fn = kr.derive(tree.robot).numeric(no_friction(tree.robot.values), backend="numpy", physical=False)
    rng = np.random.default_rng(0)
    states = [random_state(tree.robot, rng) for _ in range(3)]
    assert max(worst_errors(fn, MujocoReference(tree, mujoco.MjModel.from_xml_path(str(path))), states)) < TOL
    assert len(parsed.robot.mimics) == COUPLINGS.get(name, 0)
    if parsed.robot.mimics:  # the fingers' fixed-tendon coupling: MuJoCo's tree projected by its own equality rows
        reference = MujocoReference(parsed, mujoco.MjModel.from_xml_path(str(path)))
        coupled = kr.derive(parsed.robot).numeric(no_friction(parsed.robot.values), backend="numpy", physical=False)
        for _ in range(3):
            q = coupled.configuration(rng.uniform(-1, 1, coupled.nv))
            residual, G = mujoco_coupling(reference, q)
            v, a = rng.normal(size=coupled.nv), rng.normal(size=coupled.nv)
            assert residual < 1e-12
            np.testing.assert_allclose(coupled.mass_matrix(q), G.T @ reference.mass_matrix(q) @ G, rtol=0, atol=TOL)
            np.testing.assert_allclose(coupled.inverse_dynamics(q, v, a), G.T @ reference.inverse(q, G @ v, G @ a), rtol=0, atol=TOL)


@pytest.mark.long
@pytest.mark.parametrize("name", ["dm_control/quadruped"])
def test_a_free_object_beside_the_robot_is_left_out(name, tmp_path, monkeypatch):
    """dm_control's quadruped holds a ball on a free joint of its own: read as it is, the ball is left out
    with one warning, and the robot equals MuJoCo's model of the whole file (the ball decoupled without contacts).
    The quadruped's legs: each fixed-tendon equality (pitch + knee + ankle held at qpos0's sum) makes the ankle
    follow the pitch and the knee."""
    monkeypatch.chdir(tmp_path)
    path = suite_files().get(name)
    if path is None:
        pytest.skip("pip install -e '.[test]' (dm-control holds the models)")
    with pytest.warns(KaneRobotWarning, match=r"free bodies left out, objects beside the robot .*'ball'"):
        parsed = parse_mjcf(path)
    if name.endswith("quadruped"):
        legs = ("front_left", "front_right", "back_right", "back_left")
        assert [(m.joint, m.terms, m.offset) for m in parsed.robot.mimics] == [
            (f"ankle_{leg}", ((f"pitch_{leg}", -1), (f"knee_{leg}", -1)), 0) for leg in legs]
    tree = dataclasses.replace(parsed, robot=dataclasses.replace(parsed.robot, mimics=()))
    fn = kr.derive(tree.robot).numeric(no_friction(tree.robot.values), backend="numpy", physical=False)
    rng = np.random.default_rng(0)
    states = [random_state(tree.robot, rng) for _ in range(2)]
    assert max(worst_errors(fn, MujocoReference(tree, mujoco.MjModel.from_xml_path(str(path))), states)) < TOL


#: The MJCF robots of frames/mjcf (examples/mjcf/convert_robots.py): an arm, an arm and hand whose second
#: finger mimics the first, a quadruped and a humanoid on a free root, a tree with a ball and a planar joint.
FRAMES_MJCF = sorted((Path(__file__).resolve().parents[1] / "frames" / "mjcf").glob("*.xml"))


def test_the_frames_mjcf_robots_are_there():
    assert [path.stem for path in FRAMES_MJCF] == ["ball_and_plane", "panda", "solo12", "talos_reduced", "ur5"]


@pytest.mark.long
@pytest.mark.parametrize("path", FRAMES_MJCF, ids=lambda path: path.stem)
def test_frames_mjcf_robots_equal_mujoco(path, tmp_path, monkeypatch):
    """Each robot's tree (its mimic joints as joints of their own, MuJoCo's equality off) equals MuJoCo's M, bias
    and inverse dynamics; the panda's coupled finger is read as a mimic joint."""
    monkeypatch.chdir(tmp_path)
    parsed = parse_mjcf(path)
    assert len(parsed.robot.mimics) == (1 if path.stem == "panda" else 0)
    tree = dataclasses.replace(parsed, robot=dataclasses.replace(parsed.robot, mimics=()))
    fn = kr.derive(tree.robot).numeric(no_friction(tree.robot.values), backend="numpy", physical=False)
    rng = np.random.default_rng(1)
    states = [random_state(tree.robot, rng) for _ in range(2)]
    assert max(worst_errors(fn, MujocoReference(tree, mujoco.MjModel.from_xml_path(str(path))), states)) < TOL


@pytest.mark.long
def test_frames_mjcf_robots_are_what_the_script_writes(tmp_path, monkeypatch):
    """examples/mjcf/convert_robots.py writes frames/mjcf again, byte for byte (from example-robot-data)."""
    try:
        importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("pip install -e '.[bench]' (example-robot-data holds the URDFs converted)")
    monkeypatch.chdir(tmp_path)
    spec = importlib.util.spec_from_file_location("convert_robots", Path(__file__).resolve().parents[1] / "examples" / "mjcf" / "convert_robots.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", KaneRobotWarning)
        assert script.main(tmp_path / "mjcf") == 0
    for path in FRAMES_MJCF:
        assert (tmp_path / "mjcf" / path.name).read_text() == path.read_text(), path.name


# ------------------------------------------------------------- joint couplings
COUPLED = """<mujoco><compiler angle="degree"/><worldbody>
  <body pos="0 0 0.5"><joint name="a" axis="0 1 0" ref="10"/><geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.05"/>
    <body pos="0.4 0 0"><joint name="b" axis="0 0 1" ref="-20"/><geom type="box" size="0.1 0.02 0.03" pos="0.1 0 0"/></body>
    <body pos="0.4 0.1 0"><joint name="c" axis="0 0 1" ref="30"/><geom type="box" size="0.1 0.02 0.03" pos="0.1 0 0"/></body>
  </body></worldbody>
  <equality><joint joint1="c" joint2="b" polycoef="0.1 -0.7 0 0 0"/></equality></mujoco>"""


def test_joint_equality_is_a_mimic_joint_equal_to_mujoco(tmp_path, monkeypatch):
    """``<equality><joint>`` (q1 - ref1 = a0 + a1 (q2 - ref2)) becomes a mimic joint: MuJoCo's own constraint
    residual is zero at our coupled configurations, and our model in the independent joints is MuJoCo's tree
    M and bias projected by the coupling (``G^T M G``, ``G^T bias(G v)``)."""
    monkeypatch.chdir(tmp_path)
    parsed = mjcf_from_text(COUPLED)
    robot = parsed.robot
    (mimic,) = robot.mimics
    degree = np.pi / 180
    assert (mimic.joint, mimic.leader) == ("c", "b") and float(mimic.multiplier) == -0.7
    assert float(mimic.offset) == pytest.approx(0.1 + 30 * degree - 0.7 * 20 * degree, abs=1e-15)
    model = mujoco.MjModel.from_xml_string(COUPLED)
    reference = MujocoReference(parsed, model)
    fn = kr.derive(robot).numeric(dict(robot.values), backend="numpy")
    G = np.array([[1, 0], [0, 1], [0, -0.7]])  # speeds of a, b, c from those of a, b
    rng = np.random.default_rng(11)
    data = mujoco.MjData(model)
    for _ in range(3):
        qa, qb = rng.uniform(-1, 1, 2)
        q = np.array([qa, qb, -0.7 * qb + float(mimic.offset)])
        v, acc = rng.normal(size=2), rng.normal(size=2)
        model.opt.disableflags = 0
        data.qpos[:] = reference.qpos(q)
        mujoco.mj_forward(model, data)
        assert data.nefc >= 1 and abs(data.efc_pos[0]) < 1e-12  # MuJoCo's own equality holds there
        assert_projected(fn, reference, q, v, acc, G, tol=TOL)


@pytest.mark.parametrize(
    "equality, message",
    [
        ('<joint joint1="c" joint2="b" polycoef="0 1 0.5 0 0"/>', 'polycoef="0 1 0.5 0 0" is not linear'),
        ('<joint joint1="c"/>', "holds joint1 at a constant: lock the joint (remove it) instead, or give joint2"),
        ('<joint joint1="c" joint2="z"/>', 'joint2="z" names no joint of the model'),
    ],
)
def test_joint_equality_mistakes_name_the_line(equality, message):
    text = COUPLED.replace('<joint joint1="c" joint2="b" polycoef="0.1 -0.7 0 0 0"/>', equality)
    with pytest.raises(kr.RobotFileError, match=":6: .*" + message.replace("(", r"\(").replace(")", r"\)")):
        mjcf_from_text(text, path="model.xml")


# ------------------------------------------------------------- fixed-tendon couplings
TENDON = """<mujoco><compiler angle="degree"/><worldbody>
  <body pos="0 0 0.5"><joint name="a" axis="0 1 0" ref="10"/><geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.05"/>
    <body pos="0.4 0 0"><joint name="b" axis="0 0 1" ref="-20"/><geom type="box" size="0.1 0.02 0.03" pos="0.1 0 0"/>
      <site name="s1"/>
      <body pos="0.2 0.1 0"><joint name="c" axis="1 0 0" ref="30"/><geom type="box" size="0.1 0.02 0.03" pos="0.1 0 0"/>
        <site name="s2"/></body></body>
  </body></worldbody>
  <tendon><fixed name="t1"><joint joint="a" coef="0.5"/><joint joint="b" coef="0.3"/><joint joint="c" coef="-0.8"/></fixed>
    <fixed name="t2"><joint joint="a" coef="1.0"/></fixed>
    <spatial name="rope"><site site="s1"/><site site="s2"/></spatial></tendon>
  <equality><tendon tendon1="t1" tendon2="t2" polycoef="0.05 0.6 0 0 0"/></equality></mujoco>"""


def mujoco_coupling(reference, q):
    """MuJoCo's own equality constraints at our ``q`` (a fixed-base tree of scalar joints, constraints on): their
    largest residual ``efc_pos``, and ``G`` (nv, nv - rows) with ``J G = 0``, J their rows of ``efc_J``, the
    identity on our independent joints (the mimic joints' speeds solved from J)."""
    model, data, robot = reference.model, reference.data, reference.parsed.robot
    model.opt.disableflags, model.opt.jacobian = 0, mujoco.mjtJacobian.mjJAC_DENSE
    data.qpos[:], data.qvel[:] = reference.qpos(q), 0
    mujoco.mj_forward(model, data)
    rows = data.efc_type[: data.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    J = data.efc_J.reshape(data.nefc, model.nv)[rows][:, reference.v_index]
    labels = list(robot.joint_labels)
    dependent = [labels.index(label) for label in robot.mimic_joints]
    independent = [k for k in range(len(labels)) if k not in dependent]
    G = np.zeros((len(labels), len(independent)))
    G[independent, np.arange(len(independent))] = 1
    G[dependent] = -np.linalg.solve(J[:, dependent], J[:, independent])
    return float(np.abs(data.efc_pos[: data.nefc][rows]).max()), G


def test_fixed_tendon_equality_is_a_coupling_equal_to_mujoco(tmp_path, monkeypatch):
    """``<equality><tendon>`` on fixed tendons (L1 - L1_0 = a0 + a1 (L2 - L2_0)) couples a, b, c: c (the last joint
    of tendon1) follows a and b.  MuJoCo's own constraint residual is zero at our coupled configurations, and our
    model is MuJoCo's tree projected by G, the null space of MuJoCo's own constraint Jacobian row."""
    monkeypatch.chdir(tmp_path)
    parsed = mjcf_from_text(TENDON)
    robot = parsed.robot
    (mimic,) = robot.mimics
    assert mimic.joint == "c" and mimic.leaders == ("a", "b") and robot.dof == 2
    reference = MujocoReference(parsed, mujoco.MjModel.from_xml_string(TENDON))
    fn = kr.derive(robot).numeric(dict(robot.values), backend="numpy")
    rng = np.random.default_rng(12)
    for _ in range(3):
        q = fn.configuration(rng.uniform(-1, 1, 2))
        v, acc = rng.normal(size=2), rng.normal(size=2)
        residual, G = mujoco_coupling(reference, q)
        assert residual < 1e-12  # MuJoCo's own equality holds there
        assert_projected(fn, reference, q, v, acc, G, tol=TOL)


@pytest.mark.parametrize(
    "equality, message",
    [
        ('<tendon tendon1="rope"/>', 'tendon1="rope" is a spatial tendon \\(line 10\\); only fixed tendons'),
        ('<tendon tendon1="t1" tendon2="nope"/>', 'tendon2="nope" names no tendon of the model'),
        ('<tendon tendon1="t1" tendon2="t2" polycoef="0 1 0.5 0 0"/>', 'polycoef="0 1 0.5 0 0" is not linear'),
        ('<tendon tendon1="t2"/>', "holds joint 'a' at a constant: lock the joint"),
    ],
    ids=["spatial", "unknown", "not linear", "one joint"],
)
def test_tendon_equality_mistakes_name_the_line(equality, message):
    text = TENDON.replace('<tendon tendon1="t1" tendon2="t2" polycoef="0.05 0.6 0 0 0"/>', equality)
    with pytest.raises(kr.RobotFileError, match=":11: .*" + message) as info:
        mjcf_from_text(text, path="model.xml")
    assert "\n" not in str(info.value)
