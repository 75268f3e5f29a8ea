"""URDF files to Khalil-Kleinfinger tables, and URDF limits in simulation (issue 15).

* A UR5 written as ROS's ur_description writes it (joint origins computed
  from the DH table with pi/2 rounded to 9 or 5 digits, ``-1.9e-11``
  leftovers) converts, with ``kr.to_khalil_kleinfinger(kr.load(path))`` and
  with ``kanerobot convert robot.urdf robot.par``, to the table of
  tests/data/dh/ur5_dh.par (alpha, d, r, theta offsets exact after
  snapping; inertial parameters to 1e-9), with the same models as the URDF
  (1e-12 relative when the file writes pi/2 to 17 digits, 1e-9 when it
  rounds it: the snapped angles moved by up to 1.8e-9) and no more
  operations.
* The legacy ur_description UR5 (``rpy="0 1.570796325 0"``, axes along y)
  gives the published UR5 lengths with ROS's axis signs.
* An RX-90-like URDF (frames/rx90.par's geometry with D3 = 0.45, RL4 =
  0.5: axes as vectors in world-aligned link frames, or KK frames written
  with ``rpy`` rounded to 5 digits) converts to rx90.par's table.
* ``robot.limits`` keeps ``<limit>``; :func:`kanerobot.simulation.joint_limits`
  stops a falling pendulum at its limit at the time a finer integration of
  its closed-form equation gives.
"""

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy
from conftest import assert_models_close
from scipy.integrate import solve_ivp

import kanerobot as kr
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import JointLimits
from kanerobot.robot.khalil_kleinfinger import khalil_kleinfinger_conversion
from kanerobot.robot.urdf import urdf_from_text
from kanerobot.simulation import joint_limits

DATA = Path(__file__).resolve().parent / "data" / "dh"
ROOT = Path(__file__).resolve().parent.parent


def rot_x(a):
    return np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])


def rot_z(a):
    return np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])


def rounded(angle, digits):
    """An angle as a URDF writes it: multiples of pi/2 rounded to ``digits`` decimals (None: full precision)."""
    return angle if digits is None else round(angle, digits)


def kk_table(par, values=None):
    """``[(alpha, d, offset, r)]`` floats of a .par robot's joint frames."""
    rows = []
    for f in kr.load(par).frames:
        p = f.placement
        rows.append(tuple(float(sympy.sympify(x).xreplace(values or {})) for x in (p.alpha, p.d, f.offset, p.r)))
    return rows


def inertial_xml(robot, label):
    """``<inertial>`` of a link whose SYMORO parameters (about its frame's origin) a .par gives:
    centre of mass c = MS/M, inertia about it J_O - M (|c|^2 1 - c c^T)."""
    values = {k: float(v) for k, v in robot.dynamics[label].items()}
    M = values["M"]
    c = np.array([values["MX"], values["MY"], values["MZ"]]) / M
    J = np.array([[values["XX"], values["XY"], values["XZ"]], [values["XY"], values["YY"], values["YZ"]], [values["XZ"], values["YZ"], values["ZZ"]]])
    Ic = J - M * (c @ c * np.eye(3) - np.outer(c, c))
    inertia = " ".join(f'{key}="{Ic[i, j]:.17g}"' for key, (i, j) in zip(("ixx", "ixy", "ixz", "iyy", "iyz", "izz"), zip(*np.triu_indices(3))))
    return f'<inertial><origin xyz="{numbers(c, ".17g")}" rpy="0 0 0"/><mass value="{M:.17g}"/><inertia {inertia}/></inertial>'


def chain_urdf(name, joints, inertials, limits='<limit lower="-6.28" upper="6.28" effort="150" velocity="3.15"/>'):
    """A serial URDF: ``joints`` [(name, xyz, rpy, axis)], link i+1 the child of joint i, ``inertials`` per child link."""
    text = [f'<robot name="{name}">', '<link name="base_link"/>']
    for i, (joint, xyz, rpy, axis) in enumerate(joints):
        text.append(f'<link name="link{i + 1}">{inertials[i]}</link>')
        parent = "base_link" if i == 0 else f"link{i}"
        text.append(f'<joint name="{joint}" type="revolute"><parent link="{parent}"/><child link="link{i + 1}"/>'
                    f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>{limits}</joint>')  # fmt: skip
    return "\n".join(text + ["</robot>"])


def numbers(values, fmt):
    return " ".join(format(float(v), fmt) for v in values)


def rpy(R):
    """URDF's roll, pitch, yaw of a rotation ``R = Rz(yaw) Ry(pitch) Rx(roll)``; roll = 0 at pitch = +-pi/2."""
    pitch = math.asin(max(-1.0, min(1.0, -R[2, 0])))
    if math.cos(pitch) > 1e-9:
        return math.atan2(R[2, 1], R[2, 2]), pitch, math.atan2(R[1, 0], R[0, 0])
    return 0.0, pitch, math.atan2(-R[0, 1], R[1, 1])


MODELS = ("inverse_dynamics", "mass_matrix", "direct_dynamics")


def same_models(original, converted, rtol, seed):
    """The converted robot's models (with its own ``values``: the inertial ones
    moved to the new frames) equal the original's at random states, to
    ``rtol``; returns and prints the operation counts ``{model: (before, after)}``."""
    before, after = kr.derive(original), kr.derive(converted)
    f0 = before.numeric(dict(original.values), backend="numpy", physical=False)
    f1 = after.numeric(dict(converted.values), backend="numpy", physical=False)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        q, qd, qdd = rng.uniform(-np.pi, np.pi, original.dof), rng.uniform(-2, 2, original.dof), rng.uniform(-3, 3, original.dof)
        assert_models_close(f1, f0, q, qd, qdd, rtol=rtol, what=original.name)
    counts = {name: (sum(before.op_count(name).values()), sum(after.op_count(name).values())) for name in MODELS}
    print(original.name, {name: f"{old} -> {new}" for name, (old, new) in counts.items()})
    return counts


# ------------------------------------------------------------------ UR5
UR5_JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint")


def ur5_urdf(digits):
    """The UR5 of ur5_dh.par as ROS's ur_description generates it from a DH table:
    joint j's origin is ``Rx(alpha) Tx(d) Rz(offset) Tz(r)`` (its child link
    frame is then KK frame j), computed with pi/2 rounded to ``digits``
    decimals and written as xyz and roll-pitch-yaw."""
    table = kr.load(DATA / "ur5_dh.par")
    joints = []
    for name, (alpha, d, offset, r) in zip(UR5_JOINTS, kk_table(DATA / "ur5_dh.par")):
        alpha, offset = rounded(alpha, digits), rounded(offset, digits)
        R = rot_x(alpha) @ rot_z(offset)
        xyz = rot_x(alpha) @ np.array([d, 0.0, r])
        roll, pitch, yaw = rpy(R)
        fmt = ".17g" if digits is None else f".{digits}f"
        joints.append((name, numbers(xyz, ".10g"), numbers([rounded(roll, digits), rounded(pitch, digits), rounded(yaw, digits)], fmt), "0 0 1"))
    return chain_urdf("ur5", joints, [inertial_xml(table, label) for label in table.labels])


def assert_ur5_table(robot, tol=1e-12, length_tol=1e-15):
    """The converted UR5 has ur5_dh.par's table (snapped: exact zeros and multiples of pi/2) and inertial parameters."""
    table = kr.load(DATA / "ur5_dh.par")
    assert len(robot.frames) == 6 and robot.joint_labels in (UR5_JOINTS, tuple("123456"))
    for f, (alpha, d, offset, r) in zip(robot.frames, kk_table(DATA / "ur5_dh.par")):
        p = f.placement
        assert f.is_kk and p.gamma == 0 and p.b == 0, f.label
        for key, got, want in (("alpha", p.alpha, alpha), ("d", p.d, d), ("offset", f.offset, offset), ("r", p.r, r)):
            got = sympy.sympify(got)
            assert float(got) == pytest.approx(want, abs=length_tol if key in "dr" else 1e-15), (f.label, key, got)
            assert (got == 0) == (want == 0) or (key in "dr" and length_tol > 1e-15), (f.label, key, got)
            if want != 0 and abs(want / (math.pi / 2) - round(want / (math.pi / 2))) < 1e-12:
                assert got.has(sympy.pi), (f.label, key, got)  # exact multiple of pi/2
    for label, par_label in zip(robot.joint_labels, table.labels):
        for key, value in table.dynamics[par_label].items():
            got = sympy.sympify(robot.dynamics[label][key]).xreplace({sympy.Symbol(k): v for k, v in robot.values.items()})
            assert float(got) == pytest.approx(float(value), rel=tol, abs=tol), (label, key)


@pytest.mark.parametrize("digits", [9, 5])
def test_ur5_urdf_converts_to_the_published_table(tmp_path, digits):
    path = tmp_path / "ur5.urdf"
    path.write_text(ur5_urdf(digits))
    assert ("1.570796327" if digits == 9 else "1.57080") in path.read_text()
    robot = kr.load(path, bind=True)
    conversion = khalil_kleinfinger_conversion(robot)
    assert conversion.general == () and conversion.branched == () and conversion.end_frames == ()
    # The snaps are listed, each of the size of the rounding of pi/2.
    largest = max(change for *_, change in conversion.snapped)
    assert (2e-10 < largest < 1e-9) if digits == 9 else (3.6e-6 < largest < 1e-5)
    assert "snapped to exact values within the tolerance 1e-05" in conversion.summary()
    assert_ur5_table(conversion.robot, tol=1e-9 if digits == 9 else 1e-5)
    # The strict tolerance keeps the file's numbers: no exact table.
    strict = khalil_kleinfinger_conversion(robot, tolerance=1e-12)
    assert strict.snapped == () and not any(sympy.sympify(f.placement.alpha).has(sympy.pi) for f in strict.robot.frames if f.is_kk)


def test_ur5_urdf_symbolic_converts_with_its_values(tmp_path):
    """``kr.to_khalil_kleinfinger(kr.load(path))``: symbols and robot.values; the values follow
    the new frames.  The file's ``-1.9413e-11`` leftovers are symbols there (``PZwrist_2_joint``),
    which no tolerance snaps: the lengths are the published ones to 1e-10."""
    path = tmp_path / "ur5.urdf"
    path.write_text(ur5_urdf(9))
    original = kr.load(path)
    robot = kr.to_khalil_kleinfinger(original)
    # The URDF's link frames are the KK frames but for the file's -1.9e-11 leftovers along z, which
    # the inertial values follow (every inertial parameter is a symbol: MZ' = MZ - M PZ ...).
    assert robot.values.keys() == original.values.keys()
    moved = {k: robot.values[k] - v for k, v in original.values.items() if robot.values[k] != v}
    assert moved and max(map(abs, moved.values())) < 3e-11 and {k[:2] for k in moved} <= {"XX", "YY", "YZ", "XZ", "MZ"}, moved
    assert_ur5_table(robot.subs(robot.values), tol=1e-9, length_tol=1e-10)
    same_models(original, robot, 1e-9, seed=13)


@pytest.mark.slow  # 4.5 s; the RX-90-like URDFs check the conversion's models by default
def test_ur5_urdf_models_equal_with_fewer_operations(tmp_path):
    """Full-precision pi/2: models equal to 1e-12 relative; 9-digit pi/2: to 1e-9 (the snaps moved angles by 2e-10)."""
    for digits, tol in ((None, 1e-12), (9, 1e-9), (5, 3e-5)):
        original = urdf_from_text(ur5_urdf(digits), bind=True)
        counts = same_models(original, kr.to_khalil_kleinfinger(original), tol, seed=11)
        assert all(new < old for old, new in counts.values()), counts


@pytest.mark.long
def test_convert_urdf_to_par_writes_the_published_table_with_numbers(tmp_path):
    source, target = tmp_path / "ur5.urdf", tmp_path / "ur5.par"
    source.write_text(ur5_urdf(5))
    run = subprocess.run([sys.executable, "-m", "kanerobot", "convert", str(source), str(target)], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert "parameter values of" in run.stderr and "written as numbers" in run.stderr
    assert "frames numbered for the .par: 1 = shoulder_pan_joint, 2 = shoulder_lift_joint" in run.stderr
    # Listed: the 5-digit pi/2 (3.7e-6 off) and the rotation entries two such angles moved (9.0e-6).
    assert "snapped to exact values within the tolerance 1e-05 (largest change 9.0e-06" in run.stderr
    assert "wrist_1_joint: -3.673205103e-06 -> 0 (3.7e-06)" in run.stderr
    written = kr.load(target)
    assert not written.values and written.joint_labels == tuple("123456")
    assert_ur5_table(written, tol=1e-5)
    assert {str(s) for f in written.frames for s in f.transform().free_symbols} == {f"th{n}" for n in range(1, 7)}
    # --snap 1e-6 leaves the 5-digit pi/2 (3.7e-6 off) as it is: a .par needs KK frames, so gamma/b appear.
    run = subprocess.run([sys.executable, "-m", "kanerobot", "convert", str(source), str(target), "--snap", "1e-6"],
                         capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert not any(sympy.sympify(f.placement.alpha).has(sympy.pi) for f in kr.load(target).frames)
    run = subprocess.run([sys.executable, "-m", "kanerobot", "convert", str(source), str(target), "--snap", "0.5"],
                         capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert run.returncode == 2 and "snapping tolerance 0.5: give a number between 0 and 0.01" in run.stderr
    assert "Traceback" not in run.stderr


def test_legacy_ur_description_gives_the_published_lengths():
    """The older ur_description UR5: joint axes along y, pi/2 written 1.570796325; published lengths, ROS's signs."""
    H = "1.570796325"
    joints = [("shoulder_pan_joint", "0 0 0.089159", "0 0 0", "0 0 1"), ("shoulder_lift_joint", "0 0.13585 0", f"0 {H} 0", "0 1 0"),
              ("elbow_joint", "0 -0.1197 0.425", "0 0 0", "0 1 0"), ("wrist_1_joint", "0 0 0.39225", f"0 {H} 0", "0 1 0"),
              ("wrist_2_joint", "0 0.093 0", "0 0 0", "0 0 1"), ("wrist_3_joint", "0 0 0.09465", "0 0 0", "0 1 0")]  # fmt: skip
    mass = '<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>'
    robot = kr.to_khalil_kleinfinger(urdf_from_text(chain_urdf("ur5", joints, [mass] * 6), bind=True))
    half = sympy.pi / 2
    # d2..: 0.425 and 0.39225 (the upper arm and forearm), r: 0.089159, d4 = 0.13585 - 0.1197 + 0.093 = 0.10915, 0.09465.
    expected = [(0, 0, 0, 0.089159), (-half, 0, 0, 0), (0, 0.425, 0, 0), (0, 0.39225, sympy.pi, 0.10915), (half, 0, 0, 0.09465), (-half, 0, 0, 0)]
    for f, (alpha, d, offset, r) in zip(robot.frames, expected):
        p = f.placement
        assert (p.gamma, p.b, p.alpha, f.offset) == (0, 0, alpha, offset), f.label
        assert float(p.d) == pytest.approx(d, abs=1e-15) and float(p.r) == pytest.approx(r, abs=1e-15), f.label


# ------------------------------------------------------------------ RX-90
RX90_VALUES = {sympy.Symbol("D3"): 0.45, sympy.Symbol("RL4"): 0.5}
RX90_INERTIAL = ('<inertial><origin xyz="0.01 -0.02 0.1" rpy="0.1 0.2 0.3"/><mass value="{m}"/>'
                 '<inertia ixx="0.3" ixy="0.01" ixz="-0.02" iyy="0.25" iyz="0.03" izz="0.2"/></inertial>')  # fmt: skip


def rx90_kk_poses():
    """World poses (R, o) at q = 0 of rx90.par's frames 1..6 with D3 = 0.45, RL4 = 0.5."""
    R, o, poses = np.eye(3), np.zeros(3), []
    for alpha, d, offset, r in kk_table(kr.frames_path("rx90.par"), RX90_VALUES):
        o = o + R @ rot_x(alpha) @ np.array([d, 0.0, r])
        R = R @ rot_x(alpha) @ rot_z(offset)
        poses.append((R, o))
    return poses


def rx90_urdf(style):
    """``"axes"``: link frames parallel to the world at the KK origins, joint axes as
    vectors (``0 -1 0``); ``"rpy"``: KK frames written as rpy with pi/2 to 5 digits."""
    joints, previous = [], (np.eye(3), np.zeros(3))
    for j, (R, o) in enumerate(rx90_kk_poses(), start=1):
        if style == "axes":
            xyz, angles, axis = o - previous[1], "0 0 0", numbers(R[:, 2], ".17g")
        else:
            Rp, op = previous
            roll, pitch, yaw = rpy(Rp.T @ R)
            xyz, angles, axis = Rp.T @ (o - op), numbers([roll, pitch, yaw], ".5f"), "0 0 1"
        joints.append((str(j), numbers(xyz, ".10g"), angles, axis))
        previous = (R, o)
    return chain_urdf("rx90", joints, [RX90_INERTIAL.format(m=10 - j) for j in range(6)])


@pytest.mark.parametrize("style", ["axes", "rpy"])
@pytest.mark.long
def test_rx90_like_urdf_converts_to_opensymoro_table(tmp_path, style):
    path = tmp_path / "rx90.urdf"
    path.write_text(rx90_urdf(style))
    original = kr.load(path, bind=True)
    conversion = khalil_kleinfinger_conversion(original)
    table = kr.load(kr.frames_path("rx90.par"))
    assert conversion.general == () and conversion.branched == () and len(conversion.robot.frames) == 6
    for f, expected in zip(conversion.robot.frames, table.frames):
        for key in ("gamma", "b", "alpha", "d", "theta", "r"):
            want = sympy.sympify(getattr(expected.placement, key)).xreplace(RX90_VALUES | {expected.q: f.q})
            assert sympy.sympify(getattr(f.placement, key)) == want, (style, f.label, key, getattr(f.placement, key))
    counts = same_models(original, conversion.robot, 1e-12 if style == "axes" else 3e-5, seed=12)
    if style == "rpy":
        assert all(new < old for old, new in counts.values()), counts
    else:
        # Link frames parallel to the world with exact axes are as cheap as KK frames for the
        # inverse dynamics and the mass matrix (623, 264 both); the direct dynamics takes 3
        # more operations (1161 -> 1164), which the report states.
        assert [new - old for old, new in counts.values()] == [0, 0, 3], counts
    # Symbolic lengths and inertias with robot.values: the moved inertial values keep the models.
    symbolic = kr.load(path)
    converted = kr.to_khalil_kleinfinger(symbolic)
    assert dict(converted.values) != dict(symbolic.values)
    same_models(symbolic, converted, 1e-12 if style == "axes" else 3e-5, seed=14)


# ------------------------------------------------------------------ tolerance
def test_tolerance_is_checked_and_strict_is_the_old_behaviour():
    robot = urdf_from_text(ur5_urdf(5), bind=True)
    for bad in (-1, 0.5, "abc", float("nan")):
        with pytest.raises(KaneRobotError, match=r"give a number between 0 and 0.01"):
            kr.to_khalil_kleinfinger(robot, tolerance=bad)
    loose = khalil_kleinfinger_conversion(robot, tolerance=1e-4)
    # The largest snap: a rotation entry that two 5-digit angles moved (about 2.4 times 1.5708 - pi/2).
    assert loose.tolerance == 1e-4 and 2 * abs(1.5708 - math.pi / 2) < max(c for *_, c in loose.snapped) < 3 * abs(1.5708 - math.pi / 2)


# ------------------------------------------------------------------ limits
PENDULUM = """<robot name="pendulum">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial></link>
  <link name="tip"><inertial><mass value="0.1"/>
    <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.003" iyz="0" izz="0.003"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 1" rpy="0 0 0"/><axis xyz="0 1 0"/><dynamics damping="0.1"/>
    <limit lower="-0.3" upper="1.2" effort="20" velocity="4"/></joint>
  <joint name="spin" type="continuous"><parent link="arm"/><child link="tip"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="10"/></joint>
</robot>"""


def test_limits_are_kept_and_survive_conversion():
    robot = urdf_from_text(PENDULUM)
    assert dict(robot.limits) == {"hinge": JointLimits(-0.3, 1.2, 4.0, 20.0), "spin": JointLimits(None, None, 10.0, 1.0)}
    assert kr.to_khalil_kleinfinger(robot).limits == robot.limits and robot.subs(robot.values).limits == robot.limits
    events = joint_limits(robot)
    assert [e.name for e in events] == ["limit hinge"] and events[0].terminal
    assert not joint_limits(robot, terminal=False)[0].terminal


def test_pendulum_stops_at_its_urdf_limit():
    """Falling from horizontal (x along the arm, gravity -z, axis y: a positive angle lowers it) the
    pendulum reaches upper = 1.2 rad at the time a fine integration of its
    closed-form equation gives: J q'' = m g l cos q - FV q' (the tip, symmetric about
    its spin axis through the hinge, adds only its iyy to J)."""
    robot = urdf_from_text(PENDULUM)
    m, l, g, fv = 2.0, 0.5, 9.81, 0.1
    J = 0.03 + m * l * l + 0.003  # the arm's iyy about the axis (centre 0.5 off) and the tip's

    def rhs(t, y):
        return [y[1], (m * g * l * math.cos(y[0]) - fv * y[1]) / J]

    def reach(t, y):
        return y[0] - 1.2

    reach.terminal = True
    exact = solve_ivp(rhs, (0, 5), [0.0, 0.0], events=reach, rtol=1e-12, atol=1e-12).t_events[0][0]
    result = kr.simulate(robot, robot.values, [0.0, 0.0, 0.0, 0.0], (0, 5), events=joint_limits(robot))
    assert result.t[-1] == pytest.approx(exact, rel=1e-5)
    assert result.q[-1][0] == pytest.approx(1.2, abs=1e-6)
