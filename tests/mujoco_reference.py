"""MuJoCo as the reference of a robot read from MJCF: our states mapped to MuJoCo's, its dynamics mapped back.

``MujocoReference(parsed, model)`` pairs an
:class:`~kanerobot.robot.mjcf.MjcfRobot` (``kanerobot.robot.mjcf.parse_mjcf``)
with MuJoCo's compiled ``MjModel`` of the same file, joints matched by MuJoCo
index (which :func:`parse_mjcf` keeps with the names).  Our state is ``(q, v,
a)`` in the order of the numeric models (a floating base's X0 .. QW0 and
VX0 .. WZ0 first, then each joint's), MuJoCo's ``(qpos, qvel, qacc)``:

- a ball joint's quaternion is x y z w here, w x y z in MuJoCo; both take
  the angular velocity in the child's frame;
- the free joint: the same position and quaternion (reordered), but
  MuJoCo's linear velocity is the world frame's, ours frame 0's:
  ``v_mj = T v`` with ``T = diag(R, 1, ..)``, R the base's rotation, so that
  ``qacc_mj = T a + dT/dt v`` (``dT/dt v = R (w x v_lin)`` on the linear
  part), and generalized forces map by ``T^T``;
- the ball joint cutting a loop (``<equality><connect>``, ``parsed.cut_joints``)
  is no joint of MuJoCo's: its coordinates in q are left out of qpos, and the
  speeds, accelerations and forces are MuJoCo's joints' only (``own_speeds``:
  where they are in ours).

:meth:`mass_matrix`, :meth:`bias` and :meth:`inverse` give MuJoCo's
``mj_fullM``, ``qfrc_bias`` (C qd + g) and ``mj_inverse`` in our
coordinates, with every constraint (contacts, limits, equalities, dry
friction) and the springs disabled; the damper too unless ``damping=True``.
"""

import numpy as np
import pytest
from reference_dynamics import quaternion_matrix

mujoco = pytest.importorskip("mujoco", reason="pip install -e '.[test]' (MuJoCo is the reference of the MJCF reader)")


def full_m(model, data, out):
    """``mj_fullM`` into ``out``: MuJoCo 4 takes the data, MuJoCo 3 its ``qM``."""
    if hasattr(data, "qM"):
        mujoco.mj_fullM(model, out, data.qM)
    else:
        mujoco.mj_fullM(model, data, out)


class MujocoReference:
    """MuJoCo's dynamics of the model of ``parsed`` (an MjcfRobot) at our states."""

    def __init__(self, parsed, model):
        self.parsed = parsed
        self.model = model
        self.data = mujoco.MjData(model)
        robot = parsed.robot
        self.floating = robot.floating
        self.q_slices, self.v_slices = [], []  # (ours, MuJoCo's, kind) per joint
        k_q, k_v = (7, 6) if self.floating else (0, 0)
        if self.floating:
            free = parsed.free_joint
            self.q_slices.append((slice(0, 7), model.jnt_qposadr[free], "free"))
            self.v_slices.append((slice(0, 6), model.jnt_dofadr[free]))
        self.own_speeds = []  # where MuJoCo's joints' speeds are in ours (not the loops' cut joints)
        for label in robot.joint_labels:
            joint = robot.frame(label).joint
            if label in parsed.cut_joints:  # a loop's cut joint: no joint of MuJoCo's (its equality closes the loop)
                k_q, k_v = k_q + joint.nq, k_v + joint.nv
                continue
            self.own_speeds.extend(range(k_v, k_v + joint.nv))
            index = parsed.joint_ids[label]
            assert parsed.joint_names[label] == (mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, index) or "")
            kind = "ball" if joint.nq == 4 else "scalar"
            self.q_slices.append((slice(k_q, k_q + joint.nq), model.jnt_qposadr[index], kind))
            self.v_slices.append((slice(k_v, k_v + joint.nv), model.jnt_dofadr[index]))
            k_q, k_v = k_q + joint.nq, k_v + joint.nv
        # MuJoCo may hold more: the free objects the reader leaves out (at rest at qpos0, they do not couple without contacts)
        n_q, n_v = sum(s.stop - s.start for s, _, _ in self.q_slices), sum(s.stop - s.start for s, _ in self.v_slices)
        assert n_q <= model.nq and n_v <= model.nv, f"{n_q, n_v} coordinates here, {model.nq, model.nv} in MuJoCo"
        self.v_index = np.concatenate([np.arange(adr, adr + s.stop - s.start) for s, adr in self.v_slices]).astype(int)

    # -------------------------------------------------------------- states
    def qpos(self, q):
        out = np.array(self.model.qpos0, dtype=float)
        for ours, adr, kind in self.q_slices:
            part = np.asarray(q[ours], dtype=float)
            if kind == "free":
                out[adr:adr + 7] = np.concatenate([part[:3], [part[6]], part[3:6]])
            elif kind == "ball":
                out[adr:adr + 4] = np.concatenate([[part[3]], part[:3]])
            else:
                out[adr:adr + len(part)] = part
        return out

    def transform(self, q):
        """``T`` (nv x nv, our order): MuJoCo's speeds are ``T v``."""
        T = np.eye(len(self.v_index))
        if self.floating:
            T[:3, :3] = quaternion_matrix(q[3:7])
        return T

    def speeds(self, x):
        """Our order -> MuJoCo's (a permutation)."""
        out = np.zeros(self.model.nv)
        out[self.v_index] = x
        return out

    def state(self, q, v, a):
        T = self.transform(q)
        acc = T @ a
        if self.floating:
            acc[:3] += T[:3, :3] @ np.cross(v[3:6], v[:3])  # dT/dt v: the frame turns under the linear velocity
        return self.qpos(q), self.speeds(T @ v), self.speeds(acc)

    def configure(self, damping):
        flags = mujoco.mjtDisableBit
        self.model.opt.disableflags = int(flags.mjDSBL_CONSTRAINT | flags.mjDSBL_CONTACT | flags.mjDSBL_SPRING)
        if not damping:
            self.model.opt.disableflags |= int(flags.mjDSBL_DAMPER)

    # ------------------------------------------------------------- dynamics
    def mass_matrix(self, q):
        """``T^T M T`` in our order, armature included."""
        self.configure(False)
        self.data.qpos[:] = self.qpos(q)
        self.data.qvel[:] = 0
        mujoco.mj_forward(self.model, self.data)
        M = np.zeros((self.model.nv, self.model.nv))
        full_m(self.model, self.data, M)
        T = self.transform(q)
        return T.T @ M[np.ix_(self.v_index, self.v_index)] @ T

    def bias(self, q, v):
        """Our ``C qd + g``: MuJoCo's ``qfrc_bias`` mapped (``T^T (bias + M dT/dt v)``)."""
        return self.inverse(q, v, np.zeros_like(v))

    def raw_bias(self, q, v):
        """MuJoCo's ``qfrc_bias`` itself, at our state (for a fixed base it is our ``C qd + g``)."""
        self.configure(False)
        qpos, qvel, _ = self.state(q, v, np.zeros_like(v))
        self.data.qpos[:], self.data.qvel[:] = qpos, qvel
        mujoco.mj_forward(self.model, self.data)
        return self.transform(q).T @ self.data.qfrc_bias[self.v_index]

    def inverse(self, q, v, a, damping=False):
        """``mj_inverse``'s ``qfrc_inverse`` in our coordinates (the damper's force with ``damping=True``)."""
        self.configure(damping)
        qpos, qvel, qacc = self.state(q, v, a)
        self.data.qpos[:], self.data.qvel[:], self.data.qacc[:] = qpos, qvel, qacc
        mujoco.mj_inverse(self.model, self.data)
        return self.transform(q).T @ self.data.qfrc_inverse[self.v_index]


def assert_projected(fn, reference, q, v, a, G, g=None, tol=1e-9, relative=False):
    """Our constrained model equals MuJoCo's tree projected on the independent speeds ``qd = G v``,
    ``qdd = G a + g``: ``G^T M G``, ``G^T (M g + bias(G v))`` and ``G^T inverse(G v, G a + g)``, to ``tol``
    (times ``max(1, max |MuJoCo's|)`` with ``relative``)."""
    g = np.zeros(G.shape[0]) if g is None else g
    M = reference.mass_matrix(q)
    expected = (G.T @ M @ G, G.T @ (M @ g + reference.bias(q, G @ v)), G.T @ reference.inverse(q, G @ v, G @ a + g))
    for ours, theirs in zip((fn.mass_matrix(q), fn.h(q, v), fn.inverse_dynamics(q, v, a)), expected):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=tol * (max(1.0, np.abs(theirs).max()) if relative else 1.0))


def worst_errors(fn, reference, states, damping=False):
    """``(M, bias, inverse)``: the worst ``max |ours - MuJoCo| / max(1, max |MuJoCo|)`` over ``states`` ((q, v, a) triples)."""

    def error(ours, theirs):
        return float(np.abs(ours - theirs).max() / max(1.0, np.abs(theirs).max()))

    worst = [0.0, 0.0, 0.0]
    for q, v, a in states:
        worst[0] = max(worst[0], error(fn.mass_matrix(q), reference.mass_matrix(q)))
        worst[1] = max(worst[1], error(fn.h(q, v), reference.bias(q, v)))
        worst[2] = max(worst[2], error(fn.inverse_dynamics(q, v, a), reference.inverse(q, v, a, damping)))
    return tuple(worst)
