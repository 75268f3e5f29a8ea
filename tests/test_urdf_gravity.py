"""Issue 24, points 1 and 2: a number in a robot file is a value, not a structure; gravity in any direction.

* A URDF's dynamic parameters are all symbols with the file's numbers in
  ``robot.values``, zeros included (products of inertia, first moments,
  a massless link on a moving joint, rotor inertia, friction without
  ``<dynamics>``).
* ``gravity=(gx, gy, gz)`` (``kr.load`` of every format, the URDF reader,
  ``--gravity`` on the command line) gives ``G = [G1, G2, G3]`` values: the
  gravity torques of a pendulum in a vertical xy plane equal the closed
  form ``g0 (MX cos q - MY sin q)`` derived by hand from the potential
  energy ``V = -g . (m p)`` (and pinocchio's where installed).
* ``numeric(values, bind=True)`` folds the numbers into the code: no more
  operations than the reader gave before zeros became values, same numbers.
"""

import importlib.util
import math

import numpy as np
import pytest
from test_urdf import ARM, render

import kanerobot as kr
from kanerobot.cli import main as cli
from kanerobot.robot.urdf import urdf_from_text

G0 = 9.81
MASS, LENGTH, IZZ = 2.0, 0.4, 0.03

#: One link turning about z at the base origin, its centre of mass at (LENGTH, 0, 0) in the link frame;
#: a second link "tip" on a fixed joint with zero products of inertia and first moments, and a massless
#: link on a moving joint without <dynamics>.
PENDULUM = f'''<robot name="pendulum">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="{LENGTH} 0 0"/><mass value="{MASS}"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="{IZZ}"/></inertial></link>
  <link name="tip"><inertial><origin xyz="0 0 0"/><mass value="0.5"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <link name="empty"/>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0"/><axis xyz="0 0 1"/><dynamics damping="0.1"/></joint>
  <joint name="mount" type="fixed"><parent link="arm"/><child link="tip"/><origin xyz="{2 * LENGTH} 0 0"/></joint>
  <joint name="spin" type="continuous"><parent link="tip"/><child link="empty"/><axis xyz="0 0 1"/></joint>
</robot>'''
#: Closed form: arm and tip (rigidly on the arm at 2 LENGTH) give m_total l_c = MASS LENGTH + 0.5 * 2 LENGTH
#: of first moment along x; V = g0 MX sin q under gravity (0, -g0, 0), so the torque is dV/dq = g0 MX cos q.
MX_TOTAL = MASS * LENGTH + 0.5 * 2 * LENGTH
#: The pendulum alone (arm and tip): the massless spinning link without rotor inertia cannot be simulated.
SWINGING = PENDULUM.replace('  <link name="empty"/>\n', "").replace(
    '  <joint name="spin" type="continuous"><parent link="tip"/><child link="empty"/><axis xyz="0 0 1"/></joint>\n', "")


def test_zeros_of_the_file_are_symbols_with_value_zero():
    robot = urdf_from_text(PENDULUM)
    arm, tip, empty = (robot.dynamics[label] for label in ("hinge", "mount", "spin"))
    names = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")
    # every inertial parameter a symbol, its file value in robot.values, zeros included
    for label, table in (("hinge", arm), ("mount", tip), ("spin", empty)):
        assert [str(table[key]) for key in names] == [key + label for key in names]
    assert [robot.values[key + "hinge"] for key in ("XY", "XZ", "YZ", "MY", "MZ")] == [0.0] * 5
    assert robot.values["MXhinge"] == pytest.approx(MASS * LENGTH) and robot.values["ZZhinge"] == pytest.approx(IZZ + MASS * LENGTH**2)
    assert all(robot.values[key + "spin"] == 0 for key in names)  # no <inertial>: massless, a value
    # moving joints: IA, FV, FS symbols (IA 0, FV from <dynamics damping>, FS 0 without friction=)
    assert [str(arm[key]) for key in ("IA", "FV", "FS")] == ["IAhinge", "FVhinge", "FShinge"]
    assert (robot.values["IAhinge"], robot.values["FVhinge"], robot.values["FShinge"]) == (0.0, 0.1, 0.0)
    assert [str(empty[key]) for key in ("IA", "FV", "FS")] == ["IAspin", "FVspin", "FSspin"]
    assert tip["IA"] == tip["FV"] == tip["FS"] == 0  # a fixed frame has no joint
    # identification sees them all: the model's parameters include the zero-valued ones
    assert {"MYhinge", "IAhinge", "FShinge", "IAspin"} <= set(kr.derive(robot).parameters)
    assert set(kr.derive(robot).parameters) <= set(robot.values)


def pendulum_torque(q, gravity):
    """By hand: the first moment MX_TOTAL along the link's x at angle q about z: m p = MX (cos q, sin q, 0),
    V = -g . m p, torque dV/dq = -MX (-gx sin q + gy cos q)."""
    gx, gy, _ = gravity
    return -MX_TOTAL * (-gx * math.sin(q) + gy * math.cos(q))


@pytest.mark.parametrize("gravity", [(0.0, -G0, 0.0), (3.0, -G0, 1.5)])
def test_gravity_in_any_direction_against_the_closed_form_and_pinocchio(gravity):
    robot = urdf_from_text(PENDULUM, gravity=gravity)
    assert list(map(str, robot.base.G)) == ["G1", "G2", "G3"] and tuple(robot.values[g] for g in ("G1", "G2", "G3")) == gravity
    fn = kr.derive(robot).numeric(robot.values, backend="numpy")
    qs = [0.0, 0.7, -2.1]
    got = [fn.gravity([q, 0.3])[0] for q in qs]
    assert got == pytest.approx([pendulum_torque(q, gravity) for q in qs], rel=1e-12, abs=1e-12)
    assert [fn.gravity([q, 0.3])[1] for q in qs] == pytest.approx([0.0] * 3, abs=1e-15)  # a massless link
    if importlib.util.find_spec("pinocchio") is None:
        pytest.skip("needs pinocchio: pip install pin")
    import pinocchio as pin

    model = pin.buildModelFromXML(PENDULUM)
    model.gravity.linear = np.array(gravity)
    data = model.createData()
    for q in qs:  # pinocchio's continuous joints take (cos, sin)
        configuration = np.array([math.cos(q), math.sin(q), math.cos(0.3), math.sin(0.3)])
        assert fn.gravity([q, 0.3]) == pytest.approx(pin.computeGeneralizedGravity(model, data, configuration), rel=1e-12, abs=1e-12)


def planar2_torques(values, q, g0):
    """By hand, planar2 (revolute z axes, d2 = L1) under gravity (0, -g0, 0): V = g0 (y of the first moments),
    m1 p1 = R(q1) (MX1, MY1), m2 p2 = M2 L1 (cos q1, sin q1) + R(q1 + q2) (MX2, MY2); torques dV/dq."""
    v = values
    q1, q12 = q[0], q[0] + q[1]
    t2 = g0 * (v["MX2"] * math.cos(q12) - v["MY2"] * math.sin(q12))
    t1 = g0 * (v["MX1"] * math.cos(q1) - v["MY1"] * math.sin(q1) + v["M2"] * v["L1"] * math.cos(q1)) + t2
    return [t1, t2]


@pytest.mark.parametrize("suffix", [".par", ".toml"])
def test_load_par_and_toml_with_gravity_against_the_closed_form(tmp_path, suffix):
    path = tmp_path / f"planar2{suffix}"
    kr.save(kr.load(kr.frames_path("planar2")), path)
    robot = kr.load(path, gravity=(0, -G0, 0))
    assert list(map(str, robot.base.G)) == ["G1", "G2", "G3"] and dict(robot.values) == {"G1": 0.0, "G2": -G0, "G3": 0.0}
    model = kr.derive(robot)
    values = dict.fromkeys(model.parameters, 0.0) | {"L1": 0.5, "M1": 2.0, "MX1": 0.6, "MY1": 0.1, "M2": 1.5, "MX2": 0.3, "MY2": -0.2}
    values |= {"XX1": 1, "YY1": 1, "ZZ1": 1, "XX2": 1, "YY2": 1, "ZZ2": 1}
    fn = model.numeric({**values, **robot.values}, backend="numpy")
    for q in ([0.0, 0.0], [0.4, -1.2], [2.5, 0.9]):
        assert fn.gravity(q) == pytest.approx(planar2_torques(values, q, G0), rel=1e-12, abs=1e-12)
    # without the option, the file's own gravity G = [0, 0, G3]
    assert list(map(str, kr.load(path).base.G)) == ["0", "0", "G3"]


@pytest.mark.parametrize("gravity", [(0, 0), (0, 0, float("nan")), "0,0,-9.81", 9.81, (0, "x", 1), (0, 0, 0, 1)])
@pytest.mark.parametrize("name", ["pendulum.urdf", "planar2.par"])
def test_a_bad_gravity_is_one_clear_error(tmp_path, gravity, name):
    path = tmp_path / name
    if name.endswith(".urdf"):
        path.write_text(PENDULUM)
    else:
        kr.save(kr.load(kr.frames_path("planar2")), path)
    with pytest.raises(kr.RobotFileError, match=r"pendulum.urdf|planar2.par") as info:
        kr.load(path, gravity=gravity)
    assert "must be 3 finite numbers (gx, gy, gz) in m/s^2, in frame 0: e.g. gravity=(0, 0, -9.81)" in str(info.value)
    with pytest.raises(kr.RobotFileError, match=r"bind=True is a load option of .urdf files: a .par file takes gravity= only"):
        kr.load(tmp_path / "planar2.par" if name.endswith(".par") else kr.frames_path("planar2"), gravity=(0, 0, -9.81), bind=True)


def test_cli_gravity_option(tmp_path, capsys):
    path = tmp_path / "pendulum.urdf"
    path.write_text(SWINGING)
    assert urdf_from_text(SWINGING).joint_labels == ("hinge",)
    # a malformed value: one usage line, exit status 2
    with pytest.raises(SystemExit) as info:
        cli(["simulate", str(path), "--gravity", "0,-9.81"])
    assert info.value.code == 2
    assert "--gravity: takes 3 finite numbers gx,gy,gz (m/s^2 in frame 0), e.g. --gravity 0,0,-9.81; got '0,-9.81'" in capsys.readouterr().err
    # released at rest at q = 0 under gravity -y: q(t) = 1/2 qdd0 t^2 + O(t^4), qdd0 = -g0 MX / J_O (damping: O(t^3))
    out = tmp_path / "run.npz"
    T = 0.02
    assert cli(["simulate", str(path), "--gravity", "0,-9.81,0", "--t", str(T), "--samples", "3", "-o", str(out)]) == 0
    run = np.load(out)
    J = IZZ + MASS * LENGTH**2 + 0.001 + 0.5 * (2 * LENGTH) ** 2
    assert run["q"][-1, 0] == pytest.approx(0.5 * (-G0 * MX_TOTAL / J) * T**2, rel=1e-2)
    # the default gravity (0, 0, -9.81) is along the joint axis: the pendulum stays at rest
    assert cli(["simulate", str(path), "--t", str(T), "--samples", "3", "-o", str(out)]) == 0
    assert np.abs(np.load(out)["q"]).max() < 1e-12


def test_numeric_bind_is_as_short_as_the_old_reader_and_agrees():
    """The ARM of tests/test_urdf.py: ``numeric(values, bind=True)``'s inverse dynamics takes no more
    operations than the reader gave when the file's zeros were structural (built here by putting the
    zero values into the description), and gives the unbound model's numbers to 1e-12."""
    robot = urdf_from_text(render(ARM))
    old = robot.subs({k: 0 for k, v in robot.values.items() if v == 0})
    model = kr.derive(robot)
    unbound = model.numeric(robot.values, backend="numpy")
    bound = model.numeric(robot.values, backend="numpy", bind=True)
    assert bound.model.parameters == [] and bound.model.robot.values == {}
    count = lambda m: sum(m.op_count("inverse_dynamics").values())  # noqa: E731
    assert count(bound.model) <= count(kr.derive(old)) < count(model)
    rng = np.random.default_rng(24)
    n = robot.dof
    for _ in range(3):
        q, qd, qdd = rng.uniform(-2, 2, (3, n))
        a, b = unbound.inverse_dynamics(q, qd, qdd), bound.inverse_dynamics(q, qd, qdd)
        assert np.abs(a - b).max() <= 1e-12 * max(1.0, np.abs(a).max())
        assert np.abs(unbound.mass_matrix(q) - bound.mass_matrix(q)).max() <= 1e-12 * max(1.0, np.abs(unbound.mass_matrix(q)).max())
    # the values are checked as the unbound path checks them
    with pytest.raises(kr.ParameterError, match="nope is not a symbol of this robot"):
        model.numeric({**robot.values, "nope": 1.0}, bind=True)
    with pytest.raises(kr.ParameterError, match=r"no value for MXelbow"):
        model.numeric({k: v for k, v in robot.values.items() if k != "MXelbow"}, bind=True)
