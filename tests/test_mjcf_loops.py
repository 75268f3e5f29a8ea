"""Closed loops in MJCF: ``<equality><connect>`` read as SYMORO+ loops, against MuJoCo's own constraint.

A connect (body1's point held on body2's: a ball joint outside the tree) is
read as a loop cut at a new massless ball joint at body1's point, closed by
a fixed frame on body2; the joints driven by an actuator are the active
ones.  Two random mechanisms written in MJCF, with random inertias,
armatures, refs and gravity: a planar four-bar (hinges, the body1/anchor
form) and a spatial mechanism of hinges and a slide with two actuated
joints in the loop and an actuated branch off it (the site1/site2 form,
sites apart at qpos0).

Independent path: at random configurations on the loop (MuJoCo's own
equality residual ``efc_pos`` driven to 0 by Newton on its ``efc_J``, the
cut ball's quaternion from MuJoCo's body orientations), MuJoCo's tree
``mj_fullM``, ``qfrc_bias`` and ``mj_inverse`` projected on the active
joints with ``G`` the null space of MuJoCo's equality rows of ``efc_J``
(identity on the active joints) and the acceleration offset ``g`` from
``mj_jacDot`` (``J g = -Jdot qd``): ``G^T M G``, ``G^T (M g + bias(G v))``,
``G^T inverse(G v, G a + g)`` equal our closed-loop model's A, h and
inverse dynamics.
"""

import functools
from pathlib import Path

import numpy as np
import pytest
from test_mjcf import TOL, _inertial, _v, no_friction

import kanerobot as kr
from kanerobot.geometry import coordinate_starts
from kanerobot.robot.joints import Spherical, rotation_to_quaternion
from kanerobot.robot.mjcf import mjcf_from_text

mujoco = pytest.importorskip("mujoco", reason="pip install -e '.[test]' (MuJoCo is the reference of the MJCF reader)")
from mujoco_reference import MujocoReference, assert_projected  # noqa: E402 (needs mujoco)


def _axes(rng):
    """``xyaxes`` of a random rotation that permutes the axes (with signs): a spatial mechanism all the same, and short
    expressions (random rotations everywhere make the loop's symbolic Jdot take minutes)."""
    while True:
        R = np.eye(3)[rng.permutation(3)] * rng.choice([-1, 1], 3)[:, None]
        if np.linalg.det(R) > 0:
            return f'xyaxes="{" ".join(str(int(x)) for x in R[:, :2].T.ravel())}"'


def _placement(rng, planar):
    """A random body placement: in the x-z plane, turned about y, for a planar mechanism; anywhere, its axes permuted,
    otherwise."""
    if planar:
        return f'pos="{_v([rng.uniform(0.2, 0.5), rng.uniform(-0.1, 0.1), rng.uniform(-0.2, 0.2)])}" euler="0 {rng.uniform(-90, 90):.17g} 0"'
    return f'pos="{_v(rng.uniform(-0.4, 0.4, 3))}" {_axes(rng)}'


def _joint(rng, name, planar, kind="hinge"):
    axis = [0, 1, 0] if planar else np.eye(3)[rng.integers(3)] * rng.choice([-1, 1])
    ref = rng.uniform(-30, 30) if kind == "hinge" else rng.uniform(-0.1, 0.1)
    return (f'<joint name="{name}" type="{kind}" pos="{_v(rng.uniform(-0.1, 0.1, 3) * [1, 0, 1] if planar else rng.uniform(-0.1, 0.1, 3))}" '
            f'axis="{_v(axis)}" ref="{ref:.17g}" armature="{rng.uniform(0, 0.05):.17g}"/>')  # fmt: skip


def fourbar(seed):
    """A planar four-bar: crank j1 (actuated) and coupler j2 from the base, rocker j3 beside them, the coupler's
    point ``anchor`` connected to the rocker."""
    rng = np.random.default_rng(seed)
    return f"""<mujoco model="fourbar{seed}">
  <option gravity="{_v(rng.normal(size=3) * 4)}"/>
  <worldbody>
    <body name="crank">
      {_joint(rng, "j1", True)}
      {_inertial(rng)}
      <body name="coupler" {_placement(rng, True)}>
        {_joint(rng, "j2", True)}
        {_inertial(rng, full=True)}
      </body>
    </body>
    <body name="rocker" pos="{rng.uniform(0.6, 0.9):.17g} 0 0">
      {_joint(rng, "j3", True)}
      {_inertial(rng)}
    </body>
  </worldbody>
  <equality><connect name="pin" body1="coupler" body2="rocker" anchor="{_v(rng.uniform(0.3, 0.6, 3) * [1, 0.2, 1])}"/></equality>
  <actuator><motor joint="j1"/></actuator>
</mujoco>
"""


def sixbar(seed):
    """Watt's six-bar, two planar loops: the four-bar a (actuated), b, c with b's point connected to the rocker c, and
    d on c connected to e beside them; an inactive connect between the two (MuJoCo's equality indices 0 and 2)."""
    rng = np.random.default_rng(seed)
    return f"""<mujoco model="sixbar{seed}">
  <option gravity="{_v(rng.normal(size=3) * 4)}"/>
  <worldbody>
    <body name="A">{_joint(rng, "a", True)}{_inertial(rng)}
      <body name="B" {_placement(rng, True)}>{_joint(rng, "b", True)}{_inertial(rng)}</body>
    </body>
    <body name="C" pos="{rng.uniform(0.6, 0.9):.17g} 0 0">{_joint(rng, "c", True)}{_inertial(rng, full=True)}
      <body name="D" {_placement(rng, True)}>{_joint(rng, "d", True)}{_inertial(rng)}</body>
    </body>
    <body name="E" pos="{rng.uniform(1.5, 1.8):.17g} 0 0">{_joint(rng, "e", True)}{_inertial(rng)}</body>
  </worldbody>
  <equality>
    <connect body1="B" body2="C" anchor="{_v(rng.uniform(0.3, 0.6, 3) * [1, 0.2, 1])}"/>
    <connect body1="A" body2="E" anchor="0 0 0" active="false"/>
    <connect name="outer" body1="D" body2="E" anchor="{_v(rng.uniform(0.3, 0.6, 3) * [1, 0.2, 1])}"/>
  </equality>
  <actuator><motor joint="a"/></actuator>
</mujoco>
"""


def spatial(seed):
    """Two chains from the base (a1 a2, b1 b2 b3; a1 and b1 actuated, b2 a slide), axes along random ones of the
    bodies (whose axes are permuted), the site at the end
    of a2 connected to the site at the end of b3 (5 mm apart at qpos0); and t, an actuated hinge off the loop."""
    rng = np.random.default_rng(seed)
    body = lambda name, joint, kind="hinge": (f'<body name="{name}" {_placement(rng, False)}>{_joint(rng, joint, False, kind)}'  # noqa: E731
                                              f'{_inertial(rng, full=bool(rng.integers(2)))}')  # fmt: skip
    return f"""<mujoco model="spatial{seed}">
  <option gravity="{_v(rng.normal(size=3) * 4)}"/>
  <worldbody>
    {body("A1", "a1")}
      {body("A2", "a2")}
        <site name="tipA" pos="{_v(rng.uniform(-0.3, 0.3, 3))}"/>
        {body("T", "t")}</body>
      </body>
    </body>
    <body name="B0" pos="0.5 0 0">
      {body("B1", "b1")}
        <frame pos="0.1 0 0" {_axes(rng)}>
          {body("B2", "b2", "slide")}
            {body("B3", "b3")}
              <site name="tipB"/>
            </body>
          </body>
        </frame>
      </body>
    </body>
  </worldbody>
  <equality><connect site1="tipA" site2="tipB"/></equality>
  <actuator><motor joint="a1"/><motor joint="b1"/><position joint="t" kp="10"/></actuator>
</mujoco>
"""


def place_tip(text):
    """``text`` with site tipB placed 5 mm from where tipA is at qpos0 (so that the loop nearly closes there)."""
    model = mujoco.MjModel.from_xml_string(text)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    site = lambda name: mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, name)  # noqa: E731
    body = model.site_bodyid[site("tipB")]
    local = data.xmat[body].reshape(3, 3).T @ (data.site_xpos[site("tipA")] - data.xpos[body]) + 0.005
    return text.replace('<site name="tipB"/>', f'<site name="tipB" pos="{_v(local)}"/>')


# ------------------------------------------------------------ MuJoCo's side
class Loops:
    """MuJoCo's model of an MJCF mechanism with connects, and our closed-loop model of it."""

    def __init__(self, text, path):
        self.parsed = mjcf_from_text(text, path)
        self.robot = self.parsed.robot
        self.model = mujoco.MjModel.from_xml_string(text)
        self.reference = MujocoReference(self.parsed, self.model)
        self.fn = kr.derive(self.robot).numeric(no_friction(self.robot.values), backend="numpy")
        own = [label for label in self.robot.joint_labels if label not in self.parsed.cut_joints]
        assert all(self.robot.frame(label).joint.nv == 1 for label in own)  # MuJoCo's joints here: one speed each
        self.own = own
        self.active = [own.index(label) for label in self.robot.active_joints]
        self.passive = [k for k in range(len(own)) if k not in self.active]
        self.adr = [self.model.jnt_dofadr[self.parsed.joint_ids[label]] for label in own]

    def equality(self, q=None, qvel=None):
        """MuJoCo's equality rows at our ``q`` (else its qpos as it is) and MuJoCo's ``qvel``: ``(efc_pos, efc_J)``
        (J: our order of MuJoCo's joints)."""
        model, data = self.model, self.reference.data
        model.opt.disableflags, model.opt.jacobian = 0, mujoco.mjtJacobian.mjJAC_DENSE
        if q is not None:
            data.qpos[:] = self.reference.qpos(q)
        data.qvel[:] = 0 if qvel is None else qvel
        mujoco.mj_forward(model, data)
        rows = data.efc_type[: data.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
        assert rows.sum() == 3 * len(self.parsed.cut_joints)
        return data.efc_pos[: data.nefc][rows], data.efc_J.reshape(data.nefc, model.nv)[rows][:, self.adr]

    def configuration(self, offsets):
        """A configuration on the loops: the active joints moved by ``offsets`` from qpos0, the passive ones found by
        Newton on MuJoCo's equality (``efc_pos`` = 0), the cut balls' quaternions from MuJoCo's body orientations."""
        data = self.reference.data
        qpos = np.array(self.model.qpos0)
        qadr = [self.model.jnt_qposadr[self.parsed.joint_ids[label]] for label in self.own]
        start = qpos[[qadr[k] for k in self.active]]
        for step in np.linspace(0, 1, 6):  # followed from qpos0 (the assembly mode of the file), a few steps at a time
            qpos[[qadr[k] for k in self.active]] = start + step * np.asarray(offsets)
            for _ in range(30):
                data.qpos[:] = qpos
                residual, J = self.equality()
                if np.abs(residual).max() < 1e-14:
                    break
                qpos[[qadr[k] for k in self.passive]] -= np.linalg.lstsq(J[:, self.passive], residual, rcond=None)[0]
        assert np.abs(residual).max() < 1e-13
        q = []
        for label in self.robot.joint_labels:
            if label in self.parsed.cut_joints:
                body1, body2 = self.bodies(self.parsed.cut_joints[label])
                closing = dict(self.robot.loops)[label]
                Rc = np.array(self.robot.frame(closing).placement.R0, dtype=float)
                q.extend(rotation_to_quaternion(self.rotation(body1).T @ self.rotation(body2) @ Rc))
            else:
                q.append(qpos[self.model.jnt_qposadr[self.parsed.joint_ids[label]]])
        return np.array(q)

    def bodies(self, eq):
        """MuJoCo's two bodies of equality ``eq`` (of its sites for the site form)."""
        ids = self.model.eq_obj1id[eq], self.model.eq_obj2id[eq]
        if self.model.eq_objtype[eq] == mujoco.mjtObj.mjOBJ_SITE:
            return tuple(int(self.model.site_bodyid[i]) for i in ids)
        return tuple(int(i) for i in ids)

    def points(self, eq):
        """``[(body, world point)]`` of equality ``eq``'s two ends at MuJoCo's current state."""
        model, data = self.model, self.reference.data
        if model.eq_objtype[eq] == mujoco.mjtObj.mjOBJ_SITE:
            return [(int(model.site_bodyid[i]), data.site_xpos[i].copy()) for i in (model.eq_obj1id[eq], model.eq_obj2id[eq])]
        return [(b, data.xpos[b] + self.rotation(b) @ model.eq_data[eq][3 * k:3 * k + 3]) for k, b in enumerate(self.bodies(eq))]

    def rotation(self, body):
        return self.reference.data.xmat[body].reshape(3, 3)

    def projection(self, q, v):
        """MuJoCo's ``(G, g)`` at ``q`` and active speeds ``v``: ``qd = G v`` (null space of its equality rows, the
        identity on the active joints) and ``qdd = G a + g`` (``J g = -Jdot qd``, ``Jdot qd`` from ``mj_jacDot``)."""
        model, data = self.model, self.reference.data
        _, J = self.equality(q)
        G = np.zeros((len(self.own), len(self.active)))
        G[self.active] = np.eye(len(self.active))
        G[self.passive] = -np.linalg.lstsq(J[:, self.passive], J[:, self.active], rcond=None)[0]
        assert np.abs(J @ G).max() < 1e-12
        qvel = np.zeros(model.nv)
        qvel[self.adr] = G @ v
        _, J = self.equality(q, qvel)
        jdot_qd, jac = [], []
        for eq in sorted(self.parsed.cut_joints.values()):
            ends = []
            for body, point in self.points(eq):
                jacp, jacp_dot = np.zeros((3, model.nv)), np.zeros((3, model.nv))
                mujoco.mj_jac(model, data, jacp, None, point, body)
                mujoco.mj_jacDot(model, data, jacp_dot, None, point, body)
                ends.append((jacp[:, self.adr], jacp_dot @ qvel))
            jac.append(ends[0][0] - ends[1][0])
            jdot_qd.append(ends[0][1] - ends[1][1])
        np.testing.assert_allclose(np.vstack(jac), J, rtol=0, atol=1e-12)  # MuJoCo's rows: body1's point less body2's
        g = np.zeros(len(self.own))
        g[self.passive] = -np.linalg.lstsq(J[:, self.passive], np.concatenate(jdot_qd), rcond=None)[0]
        return G, g


@functools.cache
def mechanism(name):
    """The ``Loops`` of the random four-bar or spatial mechanism, derived once for the module's tests."""
    text = {"fourbar": lambda: fourbar(5), "sixbar": lambda: sixbar(8), "spatial": lambda: place_tip(spatial(2))}[name]()
    return Loops(text, Path(f"{name}.xml"))


@pytest.fixture(scope="module", params=["fourbar", "sixbar", "spatial"])
def loops(request):
    return mechanism(request.param)


def test_connect_is_a_loop_cut_at_a_ball_joint(loops):
    robot, parsed = loops.robot, loops.parsed
    name = robot.name.rstrip("0123456789")
    cuts = {"fourbar": {"pin": 0}, "sixbar": {"connect0": 0, "outer": 2}, "spatial": {"connect0": 0}}[name]
    assert robot.loops == tuple((cut, f"{cut}_closure") for cut in cuts) and dict(parsed.cut_joints) == cuts
    for cut, closing in robot.loops:
        assert isinstance(robot.frame(cut).joint, Spherical) and robot.frame(closing).joint.nv == 0 and cut not in robot.links
    expected = {"fourbar": ("j1",), "sixbar": ("a",), "spatial": ("a1", "t", "b1")}[name]
    assert robot.active_joints == expected and robot.dof == len(expected)


def test_loops_equal_mujoco_projected_on_its_own_constraint(loops):
    """A, h and the inverse dynamics of the closed-loop model equal MuJoCo's tree projected by MuJoCo's constraint."""
    rng = np.random.default_rng(3)
    reference, fn = loops.reference, loops.fn
    for _ in range(3):
        q = loops.configuration(rng.uniform(-0.3, 0.3, len(loops.active)))
        assert fn.closure_residual(q) < 1e-12  # our loop closes where MuJoCo's equality holds
        v, a = rng.normal(size=len(loops.active)), rng.normal(size=len(loops.active))
        G, g = loops.projection(q, v)
        assert_projected(fn, reference, q, v, a, G, g, tol=TOL)


def test_our_loop_solver_finds_mujocos_configurations(loops):
    """``fn.configuration(q_active)`` closes the loops where MuJoCo does: the passive joints from a guess 0.05 off,
    the cut ball turned to close the loop."""
    rng = np.random.default_rng(4)
    robot, start = loops.robot, coordinate_starts(loops.robot)
    passive = [label for label in robot.passive_joints if label not in loops.parsed.cut_joints]
    for _ in range(2):
        q = loops.configuration(rng.uniform(-0.3, 0.3, len(loops.active)))
        solved = loops.fn.configuration([q[start[label]] for label in robot.active_joints],
                                        guess={label: q[start[label]] + 0.05 for label in passive})  # fmt: skip
        for cut in loops.parsed.cut_joints:
            ball = start[cut]
            q[ball:ball + 4] *= np.sign(q[ball + 3] * solved[ball + 3])  # q and -q: the same turn of the ball
        np.testing.assert_allclose(solved, q, rtol=0, atol=1e-9)


@pytest.mark.long  # 3 s each
def test_a_simulated_connect_loop_stays_closed_and_keeps_its_energy(loops):
    """Without friction the total energy of the closed-loop model is a constant of the motion (an independent
    check of the integration); the integrated state stays on the loops (its drift, ``closure_residual``, before
    any projection), the cut ball's quaternion included."""
    from kanerobot.dynamics.energy import total_energy

    fn, n = loops.fn, len(loops.active)
    q0 = fn.configuration(np.full(n, 0.2))
    result = kr.simulate(fn, None, np.concatenate([q0, np.full(n, 0.5)]), (0.0, 1.5), t_eval=np.linspace(0.0, 1.5, 7),
                         rtol=1e-10, atol=1e-12)  # fmt: skip
    energy = np.array([total_energy(fn, q, qd) for q, qd in zip(result.q, result.qd)])
    assert np.ptp(energy) < 1e-6 * np.abs(energy).max(), energy
    assert result.monitors["closure_residual"].max() < 1e-8
    assert max(fn.closure_residual(q) for q in result.q) < 1e-10


@pytest.mark.long  # a second model derived
def test_a_ball_cut_loop_is_written_as_a_connect_and_read_back(tmp_path):
    """``kr.save`` writes the four-bar's loop as ``<connect site1 site2>`` (its actuated joint a motor): MuJoCo compiles
    it, its own equality holds at the configurations our model of the file read back solves, and that model equals the
    first one (the cut ball's quaternion aside: the closing frame is placed anew)."""
    first = mechanism("fourbar")
    path = tmp_path / "again.xml"
    kr.save(first.robot, path)
    assert '<connect name="pin" site1="pin" site2="pin_closure"/>' in path.read_text()
    again = Loops(path.read_text(), path)
    robot = again.robot
    assert robot.loops == (("pin", "pin_closure"),) and robot.active_joints == first.robot.active_joints
    start = coordinate_starts(robot)
    rng = np.random.default_rng(5)
    for _ in range(2):
        q = first.configuration(rng.uniform(-0.3, 0.3, 1))
        q2 = again.fn.configuration([q[start["j1"]]], guess={"j2": q[start["j2"]] + 0.05, "j3": q[start["j3"]] + 0.05})
        np.testing.assert_allclose(q2[:3], q[:3], rtol=0, atol=1e-9)
        assert np.abs(again.equality(q2)[0]).max() < 1e-12  # MuJoCo's own equality of the written file holds there
        v, a = rng.normal(size=1), rng.normal(size=1)
        np.testing.assert_allclose(again.fn.mass_matrix(q2), first.fn.mass_matrix(q), rtol=0, atol=TOL)
        np.testing.assert_allclose(again.fn.h(q2, v), first.fn.h(q, v), rtol=0, atol=TOL)
        np.testing.assert_allclose(again.fn.inverse_dynamics(q2, v, a), first.fn.inverse_dynamics(q, v, a), rtol=0, atol=TOL)


# ------------------------------------------------------------------ errors
FOURBAR = """<mujoco model="fourbar">
  <worldbody>
    <body name="crank"><joint name="j1" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.02"/>
      <body name="coupler" pos="0.4 0 0"><joint name="j2" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.8 0 0.3" size="0.02"/>
        <site name="end"/><body name="tag" pos="0.1 0 0"><geom size="0.01"/></body></body></body>
    <body name="rocker" pos="1 0 0"><joint name="j3" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.2 0 0.3" size="0.02"/></body>
  </worldbody>
  <equality>
    <connect body1="coupler" body2="rocker" anchor="0.8 0 0.3"/>
  </equality>
  <actuator><motor joint="j1"/></actuator>
</mujoco>"""
CONNECT = '<connect body1="coupler" body2="rocker" anchor="0.8 0 0.3"/>'


def test_the_fourbar_of_the_errors_loads():
    robot = mjcf_from_text(FOURBAR).robot
    assert robot.loops == (("connect0", "connect0_closure"),) and robot.active_joints == ("j1",) and robot.dof == 1


@pytest.mark.parametrize(
    "old, new, message",
    [
        (CONNECT, '<connect body1="nope" anchor="0 0 0"/>', 'body1="nope" names no body of the model'),
        (CONNECT, '<connect body1="coupler" body2="rocker" anchor="0.8 0"/>', 'anchor="0.8 0" must be 3 finite numbers'),
        (CONNECT, '<connect body2="rocker" anchor="0 0 0"/>', 'has no body1="...": give body1 and anchor'),
        (CONNECT, '<connect site1="end" site2="nope"/>', 'site2="nope" names no site of the model'),
        (CONNECT, '<connect site1="end" body1="coupler" anchor="0 0 0"/>', "gives site1/site2 and body1/anchor"),
        (CONNECT, '<weld body1="coupler" body2="rocker"/>', "is not supported: a weld removes all 6 relative motions"),
        (CONNECT, '<connect body1="coupler" body2="tag" anchor="0 0 0"/>', "bodies 'coupler' and 'tag' move together"),
        ('<motor joint="j1"/>', "", r"the mechanism has 1 degree\(s\) of freedom \(3 joint speeds, 2 independent loop constraints\) "
                                    r"but the actuators drive 0 joint speed\(s\) \(none\)"),
        ('<motor joint="j1"/>', '<motor joint="j1"/><motor joint="j3"/>', "the mechanism has 1 degree"),
        ('<body name="tag" pos="0.1 0 0">', '<body name="tag" pos="0.1 0 0"><joint name="j4"/>', "the mechanism has 2 degree"),
        ('<body name="tag" pos="0.1 0 0">', '<body name="tag" pos="0.1 0 0"><joint name="j4"/><motor joint="j2"/>', ""),
        ('<joint name="j1" axis="0 1 0"/>', '<freejoint/>', "a loop on a free-floating robot"),
        ("</equality>", '<joint joint1="j2" joint2="j3"/></equality>', "a loop and joint couplings"),
    ],
    ids=["unknown body", "anchor of 2", "no body1", "unknown site", "sites and bodies", "weld", "welded", "no actuator",
         "too many", "too few", "do not drive", "free root", "coupling"],
)
def test_loop_mistakes_name_the_line(old, new, message):
    assert old in FOURBAR
    text = FOURBAR.replace(old, new)
    if not message:  # j1 and j2 actuated, j4 (off the loop) free: j4 and j3 not fixed by them
        text = text.replace('<joint name="j4"/><motor joint="j2"/>', '<joint name="j4"/>').replace(
            '<motor joint="j1"/>', '<motor joint="j1"/><motor joint="j2"/>')
        message = "the actuated joints 'j1', 'j2' do not drive the mechanism: the passive joints 'j4', 'j3' are not determined"
    with pytest.raises(kr.RobotFileError, match=r"^model\.xml:9: <equality> <(connect|weld)>.*" + message) as info:
        mjcf_from_text(text, path="model.xml")
    assert "\n" not in str(info.value)
