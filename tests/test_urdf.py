"""URDF files read by kr.load: the mapping, the numbers, the errors, and pinocchio.

The small robots here are written as Python data, rendered to URDF text and
read by kr.load; their reference dynamics is computed from the same data
with URDF's own semantics (joint origin then joint motion, inertial about
the centre of mass) by Featherstone's recursive Newton-Euler in numpy, with
no kanerobot code but the spatial-algebra helpers of
tests/reference_dynamics.py.  The corpus of example-robot-data is compared
with pinocchio's buildModelFromUrdf (optional: the bench extra).
"""

import importlib.util
import tempfile
from pathlib import Path

import numpy as np
import pytest
from conftest import benchmark
from reference_dynamics import crf, crm, hat, motion_transform, quaternion_matrix

import kanerobot as kr
from kanerobot.cli import main as cli
from kanerobot.robot.urdf import parse_urdf, urdf_from_text

G = np.array([0.0, 0.0, -9.81])


# ------------------------------------------------------------------ small robots as data
def inertial(mass, xyz, rpy, ixx, ixy, ixz, iyy, iyz, izz):
    return {"mass": mass, "xyz": xyz, "rpy": rpy, "I": np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])}


#: links: name -> inertial or None (massless); joints: parent first.
ARM = {
    "links": {
        "base": inertial(5.0, (0, 0, 0.1), (0, 0, 0), 0.2, 0, 0, 0.2, 0, 0.3),
        "upper": inertial(2.0, (0.05, 0.02, 0.1), (0.1, 0.2, 0.3), 0.03, 0.001, -0.002, 0.04, 0.003, 0.02),
        "fore": inertial(1.5, (0.2, -0.01, 0.0), (0.4, -0.3, 0.2), 0.01, 0.0005, 0.0, 0.02, -0.001, 0.015),
        "slider": inertial(0.7, (0.0, 0.03, 0.05), (0, 0, 0), 0.004, 0, 0, 0.005, 0, 0.003),
        "massless": None,
        "tool": inertial(0.4, (0.01, 0.0, 0.02), (0.0, 0.5, 0.0), 0.001, 0, 0, 0.002, 0, 0.0015),
        "finger": inertial(0.1, (0.0, 0.0, 0.03), (0, 0, 0), 1e-4, 0, 0, 1e-4, 0, 5e-5),
        "side": inertial(0.8, (0.1, 0.0, 0.0), (0, 0, 0), 0.002, 0, 0, 0.01, 0, 0.01),
    },
    "joints": [
        # name, type, parent, child, xyz, rpy, axis, damping, friction
        ("shoulder", "revolute", "base", "upper", (0.1, 0.2, 0.3), (0.3, -0.2, 0.5), (0, 0, 1), 0.5, 0.2),
        ("elbow", "continuous", "upper", "fore", (0.4, 0.0, 0.05), (1.5707963267948966, 0, 0), (1, 1, 0), 0.0, 0.0),
        ("slide", "prismatic", "fore", "slider", (0.3, 0.0, 0.0), (0, 0.2, 0), (0, 1, 0.5), 1.0, 0.0),
        ("spacer", "fixed", "slider", "massless", (0.0, 0.0, 0.1), (0, 0, 0), None, 0.0, 0.0),
        ("flange", "fixed", "massless", "tool", (0.0, 0.05, 0.0), (0.2, 0.0, -0.4), None, 0.0, 0.0),
        ("wrist-1.a", "revolute", "tool", "finger", (0.0, 0.0, 0.04), (0, 0, 0), (1, 0, 0), 0.0, 0.0),
        ("side", "revolute", "upper", "side", (0.0, 0.1, 0.2), (0, 0, 3.141592653589793 / 2), (0, -1, 0), 0.0, 0.0),
    ],
}


def render(spec, name="arm"):
    """The URDF text of a robot given as data."""
    out = [f'<?xml version="1.0"?>\n<robot name="{name}">']
    for link, body in spec["links"].items():
        if body is None:
            out.append(f'  <link name="{link}"><visual><geometry><mesh filename="package://x/{link}.stl"/></geometry></visual></link>')
            continue
        I = body["I"].tolist()
        out.append(
            f'  <link name="{link}">\n    <inertial>\n      <origin xyz="{" ".join(map(repr, body["xyz"]))}" rpy="{" ".join(map(repr, body["rpy"]))}"/>\n'
            f'      <mass value="{body["mass"]!r}"/>\n'
            f'      <inertia ixx="{I[0][0]!r}" ixy="{I[0][1]!r}" ixz="{I[0][2]!r}" iyy="{I[1][1]!r}" iyz="{I[1][2]!r}" izz="{I[2][2]!r}"/>\n'
            f"    </inertial>\n  </link>"
        )
    for joint, kind, parent, child, xyz, rpy, axis, damping, friction in spec["joints"]:
        lines = [f'  <joint name="{joint}" type="{kind}">', f'    <parent link="{parent}"/>', f'    <child link="{child}"/>']
        lines.append(f'    <origin xyz="{" ".join(map(repr, xyz))}" rpy="{" ".join(map(repr, rpy))}"/>')
        if axis is not None:
            lines.append(f'    <axis xyz="{" ".join(map(repr, axis))}"/>')
        if damping or friction:
            lines.append(f'    <dynamics damping="{damping!r}" friction="{friction!r}"/>')
        if kind != "fixed":
            lines.append('    <limit lower="-2" upper="2" velocity="3" effort="40"/>')
        out.extend(lines + ["  </joint>"])
    return "\n".join(out + ["</robot>"]) + "\n"


# ------------------------------------------------------------------ the reference, from the data
def rot(axis, angle):
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    K = hat(axis)
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def rpy_rotation(r, p, y):
    """URDF: fixed-axis roll about x, then pitch about y, then yaw about z."""
    return rot((0, 0, 1), y) @ rot((0, 1, 0), p) @ rot((1, 0, 0), r)


def spatial_inertia_at_origin(body):
    """[[I_O, m hat(c)], [m hat(c)^T, m 1]] from URDF's inertial: I_O = R I R^T + m hat(c) hat(c)^T."""
    out = np.zeros((6, 6))
    if body is None:
        return out
    m, c, R = body["mass"], np.array(body["xyz"], dtype=float), rpy_rotation(*body["rpy"])
    out[:3, :3] = R @ body["I"] @ R.T + m * hat(c) @ hat(c).T
    out[:3, 3:] = m * hat(c)
    out[3:, :3] = m * hat(c).T
    out[3:, 3:] = m * np.eye(3)
    return out


class Reference:
    """Generalized forces of a robot given as data, by URDF's semantics; joints by name."""

    def __init__(self, spec, floating=False, friction=True):
        self.spec, self.floating, self.friction = spec, floating, friction
        self.moving = [j[0] for j in spec["joints"] if j[1] != "fixed"]
        self.root = next(link for link in spec["links"] if link not in {j[3] for j in spec["joints"]})

    def forces(self, q, qd, qdd, gravity=True):
        """q etc. {joint name: value} (and "base": (q7, v6, a6) when floating); returns (base wrench, {joint: torque})."""
        g = G if gravity else np.zeros(3)
        v, a, f, X, S = {}, {}, {}, {}, {}
        if self.floating:
            qb, vb, ab = q["base"], qd["base"], qdd["base"]
            R = quaternion_matrix(qb[3:7])
            v[self.root] = np.concatenate([vb[3:], vb[:3]])
            a[self.root] = np.concatenate([ab[3:], ab[:3] - R.T @ g])
        else:
            v[self.root], a[self.root] = np.zeros(6), np.concatenate([np.zeros(3), -g])
        for name, kind, parent, child, xyz, rpy, axis, *_ in self.spec["joints"]:
            e = np.array(axis if axis is not None else (1, 0, 0), dtype=float)
            e = e / np.linalg.norm(e)
            T = np.eye(4)
            T[:3, :3], T[:3, 3] = rpy_rotation(*rpy), xyz
            motion = np.eye(4)
            S[name] = np.zeros(6)
            if kind in ("revolute", "continuous"):
                motion[:3, :3] = rot(e, q[name])
                S[name][:3] = e
            elif kind == "prismatic":
                motion[:3, 3] = e * q[name]
                S[name][3:] = e
            X[name] = motion_transform(T @ motion)
            rate, acc = qd.get(name, 0.0), qdd.get(name, 0.0)
            v[child] = X[name] @ v[parent] + S[name] * rate
            a[child] = X[name] @ a[parent] + S[name] * acc + crm(v[child]) @ (S[name] * rate)
        for link in v:
            inertia = spatial_inertia_at_origin(self.spec["links"][link])
            f[link] = inertia @ a[link] + crf(v[link]) @ inertia @ v[link]
        tau = {}
        for name, kind, parent, child, *_, damping, friction in reversed(self.spec["joints"]):
            if kind != "fixed":
                tau[name] = S[name] @ f[child]
                if self.friction:
                    tau[name] += damping * qd[name] + friction * np.sign(qd[name])
            f[parent] = f[parent] + X[name].T @ f[child]
        return np.concatenate([f[self.root][3:], f[self.root][:3]]), tau


def reference_vector(ref, labels, names, q, qd, qdd, gravity=True):
    """The reference's generalized forces in kanerobot's order (base wrench first when floating)."""
    def by_name(x):
        joints = x[7:] if ref.floating and len(x) == len(labels) + 7 else (x[6:] if ref.floating else x)
        out = {names[label]: value for label, value in zip(labels, joints)}
        if ref.floating:
            out["base"] = x[:7] if len(x) == len(labels) + 7 else x[:6]
        return out

    base, tau = ref.forces(by_name(q), by_name(qd), by_name(qdd), gravity)
    joints = np.array([tau[names[label]] for label in labels])
    return np.concatenate([base, joints]) if ref.floating else joints


def random_state(rng, n, floating):
    q = rng.uniform(-np.pi, np.pi, n)
    nv = n + (6 if floating else 0)
    if floating:
        quaternion = rng.normal(size=4)
        q = np.concatenate([rng.uniform(-1, 1, 3), quaternion / np.linalg.norm(quaternion), q])
    return q, rng.uniform(-2, 2, nv), rng.uniform(-3, 3, nv)


def close(a, b, tol=1e-9):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and np.abs(a - b).max() <= tol * max(1.0, np.abs(b).max())


@pytest.fixture(scope="module")
def arm_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("urdf") / "arm.urdf"
    path.write_text(render(ARM))
    return path


# ------------------------------------------------------------------ dynamics against the reference
@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.long
def test_dynamics_equal_urdf_semantics(arm_file, floating):
    parsed = parse_urdf(arm_file, floating=floating)
    robot, names = parsed.robot, parsed.joint_names
    labels = robot.joint_labels
    fn = kr.derive(robot).numeric(robot.values, backend="numpy")
    ref = Reference(ARM, floating)
    rng = np.random.default_rng(3)
    n = len(labels)
    for _ in range(3):
        q, qd, qdd = random_state(rng, n, floating)
        qd[np.abs(qd) < 0.1] = 0.5  # Coulomb friction's sign well defined
        tau = reference_vector(ref, labels, names, q, qd, qdd)
        assert close(fn.inverse_dynamics(q, qd, qdd), tau)
        nv = len(qd)
        columns = [reference_vector(Reference(ARM, floating, friction=False), labels, names, q, np.zeros(nv), e, gravity=False)
                   for e in np.eye(nv)]
        A = np.array(columns).T
        assert close(fn.mass_matrix(q), A)
        torques = rng.uniform(-5, 5, n)
        h = reference_vector(ref, labels, names, q, qd, np.zeros(nv))
        generalized = np.concatenate([np.zeros(6), torques]) if floating else torques
        assert close(fn.direct_dynamics(q, qd, torques), np.linalg.solve(A, generalized - h))


def test_labels_order_and_names(arm_file):
    parsed = parse_urdf(arm_file)
    robot = parsed.robot
    # depth first from the root, each link's joints in the order of the file
    assert robot.labels == ("shoulder", "elbow", "slide", "spacer", "flange", "wrist-1.a", "side")
    assert robot.joint_labels == ("shoulder", "elbow", "slide", "wrist-1.a", "side")
    assert parsed.joint_names["wrist-1.a"] == "wrist-1.a" and robot.stems["wrist-1.a"] == "wrist_1_a"
    assert str(robot.frame("wrist-1.a").q) == "q_wrist_1_a"
    assert parsed.link_names["0"] == "base" and parsed.link_names["flange"] == "tool"
    assert parsed.limits["slide"] == {"lower": -2.0, "upper": 2.0, "velocity": 3.0, "effort": 40.0}
    assert [robot.frame(label).sigma for label in robot.labels] == [0, 0, 1, 2, 2, 0, 0]
    assert str(robot.frame("elbow").q) == "q_elbow"
    # the massless link of a fixed joint carries no link; a fixed link with an inertial does
    assert "spacer" not in robot.links and "flange" in robot.links and "0" not in robot.links
    assert robot.name == "arm" and not robot.floating


def test_parameters_symbolic_with_values_zeros_included(arm_file):
    """A number of the file is a value: dynamic parameters that are 0 are symbols with value 0;
    the zero lengths of the geometry stay structural (they make the frame's form)."""
    robot = kr.load(arm_file)
    shoulder = robot.frame("shoulder").placement
    assert [str(x) for x in shoulder.P] == ["PXshoulder", "PYshoulder", "PZshoulder"]
    assert robot.values["PZshoulder"] == 0.3
    slide = robot.frame("slide").placement
    assert list(slide.P)[1:] == [0, 0]  # zero lengths of the file vanish
    # rpy = (pi/2, 0, 0) is exact: its R0 is made of 0, 1 and -1
    assert all(x in (0, 1, -1) for x in robot.frame("elbow").placement.R0)
    assert list(robot.frame("elbow").axis) == [pytest.approx(2**-0.5), pytest.approx(2**-0.5), 0]
    upper = robot.dynamics["shoulder"]
    assert str(upper["XX"]) == "XXshoulder" and str(upper["IA"]) == "IAshoulder" and robot.values["IAshoulder"] == 0
    assert robot.values["Mshoulder"] == 2.0 and robot.values["MXshoulder"] == pytest.approx(0.1)
    assert robot.values["FVshoulder"] == 0.5 and robot.values["FSshoulder"] == 0.2
    # no <dynamics>: friction symbols with value 0; gravity G = [G1, G2, G3], pinocchio's by default
    assert str(robot.dynamics["elbow"]["FV"]) == "FVelbow" and robot.values["FVelbow"] == robot.values["FSelbow"] == 0
    assert list(map(str, robot.base.G)) == ["G1", "G2", "G3"]
    assert (robot.values["G1"], robot.values["G2"], robot.values["G3"]) == (0.0, 0.0, -9.81)
    # a fixed frame's link (flange carries the tool) has its ten inertial symbols, no joint's IA, FV, FS
    flange = robot.dynamics["flange"]
    assert all(str(flange[key]) == key + "flange" for key in ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M"))
    assert flange["IA"] == flange["FV"] == flange["FS"] == 0
    # J_O = R I_c R^T + m (|c|^2 1 - c c^T) of the file's numbers
    body = ARM["links"]["upper"]
    c, R = np.array(body["xyz"]), rpy_rotation(*body["rpy"])
    J = R @ body["I"] @ R.T + 2.0 * (c @ c * np.eye(3) - np.outer(c, c))
    assert robot.values["XYshoulder"] == pytest.approx(J[0, 1], rel=1e-14)
    assert robot.values["ZZshoulder"] == pytest.approx(J[2, 2], rel=1e-14)
    assert set(kr.derive(robot).parameters) <= set(robot.values)


def test_bind_puts_the_numbers_in_and_shortens_the_programs(arm_file):
    symbolic, bound = kr.load(arm_file), kr.load(arm_file, bind=True)
    assert dict(bound.values) == {} and bound.frame("shoulder").placement.P[2] == 0.3
    m1, m2 = kr.derive(symbolic), kr.derive(bound)
    assert m2.parameters == []
    f1, f2 = m1.numeric(symbolic.values, backend="numpy"), m2.numeric({}, backend="numpy")
    q, qd, qdd = random_state(np.random.default_rng(5), 5, False)
    assert close(f1.inverse_dynamics(q, qd, qdd), f2.inverse_dynamics(q, qd, qdd), 1e-12)
    ops1, ops2 = m1.op_count("inverse_dynamics"), m2.op_count("inverse_dynamics")
    assert ops2["mul"] < ops1["mul"]


def test_floating_link0_is_the_root_and_what_is_fixed_to_it():
    spec = {"links": dict(ARM["links"]), "joints": list(ARM["joints"])}
    spec["links"]["base"] = None  # a massless root: the mass fixed to it makes the free flyer's body
    spec["links"]["imu"] = inertial(3.0, (0.1, 0.0, 0.0), (0.2, 0, 0), 0.01, 0, 0, 0.02, 0, 0.03)
    spec["joints"].insert(0, ("imu_mount", "fixed", "base", "imu", (0.0, 0.2, 0.1), (0, 0.3, 0), None, 0.0, 0.0))
    parsed = parse_urdf_text(render(spec), floating=True)
    robot = parsed.robot
    assert robot.floating and "imu_mount" not in robot.links and robot.values["M0"] == 3.0
    fn = kr.derive(robot).numeric(robot.values, backend="numpy")
    ref = Reference(spec, floating=True)
    q, qd, qdd = random_state(np.random.default_rng(8), len(robot.joint_labels), True)
    assert close(fn.inverse_dynamics(q, qd, qdd), reference_vector(ref, robot.joint_labels, parsed.joint_names, q, qd, qdd))


def parse_urdf_text(text, **options):
    """parse_urdf of a text (through a temporary file)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "robot.urdf"
        path.write_text(text)
        return parse_urdf(path, **options)


def test_cli_takes_a_urdf(arm_file, tmp_path, capsys):
    assert cli(["info", str(arm_file)]) == 0
    assert "wrist-1.a" in capsys.readouterr().out
    out = tmp_path / "arm.toml"
    assert cli(["convert", str(arm_file), str(out)]) == 0
    assert kr.load(out).joint_labels == kr.load(arm_file).joint_labels


def test_save_as_urdf_and_options_elsewhere_are_refused(arm_file, tmp_path):
    robot = kr.load(arm_file)
    # saving needs a value for every symbol (robot.values or values=): a missing one is named
    with pytest.raises(kr.RobotFileError, match=r"cannot write robot arm as URDF: no value for FSelbow, FSshoulder, .* \(86 in all\): give them in robot.values"):
        kr.save(kr.Robot.create(robot.name, robot.frames, links=robot.links, dynamics=robot.dynamics), tmp_path / "x.urdf")
    assert not (tmp_path / "x.urdf").exists()
    kr.save(robot, tmp_path / "x.urdf")  # tests/test_urdf_write.py checks what is written
    assert kr.load(tmp_path / "x.urdf").joint_labels == robot.joint_labels
    with pytest.raises(kr.RobotFileError, match=r"floating=True \(--floating on the command line\) is a load option of .urdf files: a .par file takes gravity="):
        kr.load(kr.frames_path("rx90"), floating=True)
    with pytest.raises(kr.RobotFileError, match="unknown load option 'floting'"):
        kr.load(arm_file, floting=True)
    with pytest.raises(kr.RobotFileError, match="mimic='copy': use one of 'constraint', 'independent', 'refuse'"):
        kr.load(arm_file, mimic="copy")


# ------------------------------------------------------------------ errors
GOOD_LINKS = '<link name="a"/>\n<link name="b"/>\n'


def joint(name="j", kind="revolute", parent="a", child="b", extra=""):
    return f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>{extra}</joint>\n'


def error_of(text, **options):
    with pytest.raises(kr.RobotFileError) as info:
        urdf_from_text(text, path="bad.urdf", **options)
    return info.value


@pytest.mark.parametrize(
    "text, line, words",
    [
        ('<robot name="r">\n<link name="a">\n</robot>\n', 3, "malformed XML: mismatched tag (column 3)"),
        ('<robot name="r">\n<link name="a"/>\n', 3, "malformed XML: no element found"),
        ("", 1, "malformed XML: no element found"),
        ('<robot name="r">\n<link name="a"/><link name="b"><inertial><origin xyz="0 0 0"/>\n'
         '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>\n' + joint() + "</robot>",
         2, "inertial of link 'b' has no <mass value=\"...\"/>: give the link's mass (kg), or remove <inertial> for a massless link"),
        ('<robot name="r">\n<link name="a"/><link name="b"><inertial><mass value="1"/></inertial></link>\n' + joint() + "</robot>",
         2, "inertial of link 'b' has no <inertia ixx=... iyz=.../>"),
        ('<robot name="r">\n<link name="a"/><link name="b"><inertial><mass value="-1"/>\n'
         '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>\n' + joint() + "</robot>",
         2, "link 'b': mass M = -1 < 0: give a rigid body's mass (>= 0) and inertia"),
        ('<robot name="r">\n<link name="a"/><link name="b"><inertial><mass value="1"/>\n'
         '<inertia ixx="1" ixy="0" ixz="0" iyy="-1" iyz="0" izz="1"/></inertial></link>\n' + joint() + "</robot>",
         2, "or load with physical=False (--unphysical on the command line) to read it as written"),
        ('<robot name="r">\n<link name="a"/><link name="b"><inertial><mass value="1"/>\n'
         '<inertia ixx="1" ixy="0" ixz="0" iyy="abc" iyz="0" izz="1"/></inertial></link>\n' + joint() + "</robot>",
         3, 'inertia of link \'b\': iyy="abc" must be 1 finite number separated by spaces'),
        ('<robot name="r">\n' + GOOD_LINKS + '<link name="c"/>\n' + joint() + joint("k", child="b") + "</robot>",
         6, "link 'b' has two parents: joint 'k' and joint 'j' (line 5) both have it as child"),
        ('<robot name="r">\n' + GOOD_LINKS + '<link name="c"/>\n' + joint() + joint("k", parent="b", child="c")
         + joint("l", parent="c", child="b") + "</robot>", 7, "link 'b' has two parents"),
        ('<robot name="r">\n<link name="o"/>\n' + GOOD_LINKS + joint() + joint("k", parent="b", child="a") + "</robot>",
         6, "joints form a cycle: links 'a' -> 'b' -> 'a'; a URDF is a tree"),
        ('<robot name="r">\n' + GOOD_LINKS + joint(kind="hinge") + "</robot>",
         4, "joint 'j' has unknown type 'hinge': use one of revolute, continuous, prismatic, fixed"),
        ('<robot name="r">\n' + GOOD_LINKS + joint(kind="planar") + "</robot>", 4, "joint 'j' is planar: planar joints are not supported"),
        ('<robot name="r">\n' + GOOD_LINKS + joint(kind="floating") + "</robot>",
         4, "kr.load(path, floating=True) (--floating on the command line), with a free flyer under the root link"),
        ('<robot name="r">\n' + GOOD_LINKS + joint(child="c") + "</robot>",
         4, "joint 'j' names child link 'c', which is not a <link> of the file (links: a, b)"),
        ('<robot name="r">\n' + GOOD_LINKS + '<link name="c"/>\n' + joint() + "</robot>",
         4, "links 'a' and 'c' are both roots (no joint has them as child): a URDF is one tree"),
        ('<robot name="r">\n' + GOOD_LINKS + '<link name="a"/>\n' + joint() + "</robot>", 4, "link 'a' is defined twice (first at line 2)"),
        ('<robot name="r">\n' + GOOD_LINKS + joint(extra='<axis xyz="0 0 0"/>') + "</robot>", 4, "axis of joint 'j' is 0 0 0"),
        ('<robot name="r">\n' + GOOD_LINKS + joint(extra='<origin xyz="0 0"/>') + "</robot>",
         4, 'origin of joint \'j\': xyz="0 0" must be 3 finite numbers'),
        ('<robot name="r">\n' + GOOD_LINKS + joint(extra='<origin xyz="0 nan 0"/>') + "</robot>", 4, "must be 3 finite numbers"),
        ('<robot name="r">\n' + GOOD_LINKS + joint(extra='\n<mimic joint="j" multiplier="2"/>') + "</robot>",
         5, "mimic joint j mimics itself: name another joint as its leader"),
        ('<robot name="r">\n' + GOOD_LINKS + '<joint type="revolute"/>' + "</robot>", 4, "a joint: <joint> has no name=\"...\": give it"),
        ('<model name="r">\n' + GOOD_LINKS + "</model>", 1, "the document element is <model>: a URDF file is one <robot> element"),
    ],
)
def test_malformed_files_name_the_line(text, line, words):
    error = error_of(text)
    assert error.line == line, str(error)
    assert words in str(error)
    assert str(error).startswith(f"bad.urdf:{line}: " if line else "bad.urdf: ")


def test_entity_expansion_is_refused():
    laughs = (
        '<?xml version="1.0"?>\n<!DOCTYPE robot [\n <!ENTITY lol "lol">\n <!ENTITY lol2 "&lol;&lol;&lol;&lol;">\n]>\n'
        '<robot name="&lol2;"><link name="a"/></robot>\n'
    )
    error = error_of(laughs)
    assert error.line == 2 and "a DOCTYPE is not accepted in a URDF file" in str(error)
    external = '<?xml version="1.0"?>\n<!DOCTYPE robot SYSTEM "http://example.com/robot.dtd">\n<robot name="r"/>\n'
    assert "DOCTYPE is not accepted" in str(error_of(external))
    undeclared = '<robot name="&secret;"><link name="a"/></robot>'
    assert "malformed XML: undefined entity" in str(error_of(undeclared))


def test_mimic_independent_and_inertia_as_written():
    text = '<robot name="r">\n' + GOOD_LINKS + '<link name="c"/>\n' + joint() + joint("k", parent="b", child="c", extra='<mimic joint="j"/>')
    robot = urdf_from_text(text + "</robot>", mimic="independent")
    assert robot.joint_labels == ("j", "k")
    wrong = ('<robot name="r">\n<link name="a"/><link name="b"><inertial><mass value="1"/>\n'
             '<inertia ixx="1" ixy="0" ixz="0" iyy="3" iyz="0" izz="1"/></inertial></link>\n' + joint() + "</robot>")
    error = error_of(wrong)
    assert error.line == 2
    assert "link 'b': the principal moments about the centre of mass (1, 1, 3) break the triangle inequality" in str(error)
    assert urdf_from_text(wrong, physical=False).values["YYj"] == 3.0


def test_labels_are_the_names_and_stems_never_clash():
    text = ('<robot name="r">\n<link name="a"/><link name="b"/><link name="c"/><link name="d"/>\n'
            + joint("0", child="b") + joint("x.1", parent="b", child="c") + joint("x-1", parent="c", child="d") + "</robot>")
    robot = urdf_from_text(text)
    assert robot.joint_labels == ("0_2", "x.1", "x-1")  # "0" is the base's label
    assert [robot.stems[label] for label in robot.joint_labels] == ["0_2", "x_1", "x_1_2"]
    assert [str(robot.frame(label).q) for label in robot.joint_labels] == ["q_0_2", "q_x_1", "q_x_1_2"]


# ------------------------------------------------------------------ pinocchio on example-robot-data
def corpus_or_skip():
    if importlib.util.find_spec("pinocchio") is None:
        pytest.skip("install pin and example-robot-data (pip install -e '.[bench]')")
    bench = benchmark("urdf_vs_pinocchio")
    robots = bench.corpus()
    if not robots:
        pytest.skip("install pin and example-robot-data (pip install -e '.[bench]')")
    return bench, robots


#: In the default run: arms, hands, quadrupeds and a 32-joint humanoid, each with one base
#: (a continuous joint, prismatic joints, mimic joints read as independent ones, massless links).
DEFAULT = [
    ("double_pendulum_continuous", False),
    ("ur5_robot", True),
    ("panda", False),
    ("so100", True),
    ("z1", False),
    ("kinova", False),
    ("solo12", True),
    ("go2", True),
    ("allegro_right_hand", False),
    ("talos_reduced", True),
]


@pytest.mark.parametrize("name, floating", DEFAULT, ids=[f"{n}-{'floating' if f else 'fixed'}" for n, f in DEFAULT])
@pytest.mark.long
def test_example_robot_data_against_pinocchio(name, floating):
    bench, robots = corpus_or_skip()
    result = bench.compare(robots[name], floating, states=2)
    assert result["error"] < 1e-9, (name, result["error"])
    assert result["dof"] == len(result["robot"].joint_labels) + (6 if floating else 0)


def test_talos_is_a_humanoid_of_32_joints():
    _bench, robots = corpus_or_skip()
    robot = kr.load(robots["talos_reduced"], floating=True, mimic="independent")
    assert len(robot.joint_labels) == 32 and robot.dof == 38
    assert "arm_left_1_joint" in robot.joint_labels


@pytest.mark.slow
@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
def test_every_robot_pinocchio_reads(floating):
    bench, robots = corpus_or_skip()
    failures = []
    for name, path in robots.items():
        try:
            bench.pinocchio_model(path, floating)
        except Exception:  # pinocchio cannot read it: not in the corpus
            continue
        try:
            result = bench.compare(path, floating, states=1)
        except kr.RobotFileError as exc:
            assert not floating and "has no moving joint" in str(exc), str(exc)  # a rigid body on a fixed base
            continue
        if not result["error"] < 1e-9:
            failures.append((name, result["error"]))
    assert failures == []
