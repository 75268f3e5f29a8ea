"""Every URDF of example-robot-data saved as MJCF (kr.save) and evaluated by MuJoCo, against kanerobot's models.

For each URDF of the `example-robot-data` package, kanerobot loads it
(``kr.load(path, mimic="independent", physical=False)``: mimic joints as
joints of their own), writes it with its own numbers as an MJCF file
(:func:`kanerobot.robot.mjcf_writer.write_mjcf`), MuJoCo compiles the file
(``mujoco.MjModel.from_xml_path``) and, at random states, MuJoCo's mass
matrix (``mj_fullM``, with the armature: our rotor inertia ``IA``) and
``qfrc_bias - qfrc_passive`` (``C qd + g`` and the damping, our ``FV qd``)
are compared with kanerobot's numeric ``mass_matrix`` and ``h`` (with
``FS`` = 0: MuJoCo's frictionloss is a constraint force).  States are
mapped by MuJoCo's conventions (:func:`mujoco_terms`): joints by name, a
ball joint's quaternion w x y z, the free joint's linear velocity in the
world frame (ours in frame 0), a planar joint's slide speeds along its
antecedent's axes (ours along its own).  The table gives the robot, the
base, the DOF (nv), MuJoCo's bodies, the time to derive and bind kanerobot's
numeric model, and the worst relative error ``max |ours - MuJoCo| / (1 +
max |MuJoCo|)`` of the mass matrix and of h; ``bounded`` counts the links
MuJoCo's compiler raises to the writer's bound (massless moving links and
point masses, 1e-12: see :func:`~kanerobot.robot.mjcf_writer.write_mjcf`);
a robot the writer refuses (an inertia no rigid body has) or the loader
refuses (nothing moves on a fixed base, an empty file) gets that line
instead.

tests/test_mjcf_writer.py runs :func:`compare` on a few of these robots
(the whole corpus in its long test) and uses :func:`mujoco_terms`.

Run:  pip install -e '.[test]' && python benchmarks/mjcf_writer_vs_mujoco.py [--floating] [NAME ...]
"""

import argparse
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import needs  # first: one line and exit status 2 when kanerobot is not installed
import numpy as np
from urdf_vs_pinocchio import CORPUS, corpus, corpus_folder

import kanerobot as kr
from kanerobot.errors import KaneRobotWarning
from kanerobot.robot import joints

#: The largest relative error accepted (the tests' tolerance).
TOL = 1e-9
#: A planar joint's three MuJoCo joints: two slides and a hinge, named by its label and these.
PLANAR = ("_x", "_y", "_theta")


def check():
    """Lines naming the missing requirements (MuJoCo, example-robot-data)."""
    line = None
    if not needs.installed("mujoco"):
        line = "mujoco is not installed, so the comparison with MuJoCo is skipped: pip install -e '.[test]' (the test extra) to get it"
    elif corpus_folder() is None:
        line = f"{CORPUS} (the robots' URDFs) is not installed, so the comparison is skipped: {needs.BENCH_EXTRA} (the bench extra) to get it"
    return needs.missing(line)


# ------------------------------------------------------------- MuJoCo's side
def joint_list(robot):
    """``(MuJoCo joint name or None for the free joint, our joint model)`` in the order of our q."""
    models = [frame.joint for frame in robot.frames if frame.is_joint]
    labels = list(robot.joint_labels)
    if robot.floating:
        models, labels = [joints.FreeFlyer(), *models], [None, *labels]
    return list(zip(labels, models))


def random_state(robot, rng):
    """Random (q, qd): each joint's configuration from its own model (unit quaternions), speeds normal."""
    q = np.concatenate([model.random_configuration(rng) for _, model in joint_list(robot)])
    return q, rng.normal(size=robot.dof)


def mujoco_state(mujoco, model, robot, q, qd):
    """MuJoCo's ``(qpos, qvel, T, dT/dt qd)`` of our ``(q, qd)``: ``qvel = T qd``, by MuJoCo's conventions."""
    qpos, T, Tdot_qd = model.qpos0.copy(), np.zeros((model.nv, len(qd))), np.zeros(model.nv)
    i = k = 0
    for name, joint in joint_list(robot):
        part, speed = q[i:i + joint.nq], qd[k:k + joint.nv]
        if isinstance(joint, joints.FreeFlyer):
            free = next(j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE)
            a, d = model.jnt_qposadr[free], model.jnt_dofadr[free]
            qpos[a:a + 7] = [*part[:3], part[6], *part[3:6]]  # x y z, then the quaternion w x y z
            R = np.zeros(9)
            mujoco.mju_quat2Mat(R, qpos[a + 3:a + 7])
            R = R.reshape(3, 3)
            # MuJoCo: the body origin's velocity in the world frame, the angular velocity in the body's
            T[d:d + 3, k:k + 3], T[d + 3:d + 6, k + 3:k + 6] = R, np.eye(3)
            Tdot_qd[d:d + 3] = R @ np.cross(speed[3:], speed[:3])
        elif isinstance(joint, joints.Spherical):
            j = model.joint(name)
            qpos[j.qposadr[0]:j.qposadr[0] + 4] = [part[3], *part[:3]]
            T[j.dofadr[0]:j.dofadr[0] + 3, k:k + 3] = np.eye(3)  # both the angular velocity in the joint's frame
        elif isinstance(joint, joints.Planar):
            x, y, t = (model.joint(name + suffix) for suffix in PLANAR)
            qpos[[x.qposadr[0], y.qposadr[0], t.qposadr[0]]] = part
            c, s = np.cos(part[2]), np.sin(part[2])
            rows = [x.dofadr[0], y.dofadr[0]]
            # MuJoCo's slide rates d(x, y)/dt along the antecedent's axes = Rz(theta) (VX, VY), ours along the joint's own
            T[np.ix_(rows, [k, k + 1])] = [[c, -s], [s, c]]
            T[t.dofadr[0], k + 2] = 1.0
            Tdot_qd[rows] = speed[2] * np.array([[c, -s], [s, c]]) @ [-speed[1], speed[0]]
        else:
            j = model.joint(name)
            qpos[j.qposadr[0]] = part[0]
            T[j.dofadr[0], k] = 1.0
        i, k = i + joint.nq, k + joint.nv
    if i != len(q) or k != len(qd) or k != model.nv:
        raise AssertionError(f"{robot.name}: {len(q)} configuration values and {len(qd)} speeds here, {model.nv} dofs in MuJoCo")
    return qpos, T @ qd, T, Tdot_qd


def full_mass_matrix(mujoco, model, data):
    """``mj_fullM`` of MuJoCo 3 (``m, dst, qM``) or 4 (``m, d, dst``)."""
    M = np.zeros((model.nv, model.nv))
    if hasattr(data, "qM"):
        mujoco.mj_fullM(model, M, data.qM)
    else:
        mujoco.mj_fullM(model, data, M)
    return M


def mujoco_terms(mujoco, model, robot, q, qd):
    """MuJoCo's mass matrix and ``C qd + g + FV qd`` in our speeds: ``T^T M T`` and ``T^T (bias - passive + M dT/dt qd)``.

    ``qvel = T qd`` gives ``qacc = T qdd + dT/dt qd``; the generalized forces
    of our speeds are ``T^T`` those of MuJoCo's (the same power).
    """
    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:], T, Tdot_qd = mujoco_state(mujoco, model, robot, q, qd)
    mujoco.mj_forward(model, data)
    M = full_mass_matrix(mujoco, model, data)
    return T.T @ M @ T, T.T @ (data.qfrc_bias - data.qfrc_passive + M @ Tdot_qd)


def worst_errors(fn, robot, model, seed=0, states=3):
    """The worst relative errors of the mass matrix and of h of ``fn`` (FS = 0) against MuJoCo's, over random states."""
    import mujoco

    rng = np.random.default_rng(seed)
    worst = [0.0, 0.0]
    for _ in range(states):
        q, qd = random_state(robot, rng)
        for n, (theirs, ours) in enumerate(zip(mujoco_terms(mujoco, model, robot, q, qd), (fn.mass_matrix(q), fn.h(q, qd)))):
            worst[n] = max(worst[n], float(np.abs(theirs - ours).max() / (1 + np.abs(theirs).max())))
    return worst


# ---------------------------------------------------------------- the table
@dataclass
class Row:
    name: str
    floating: bool
    dof: int = 0
    bodies: int = 0
    seconds: float = 0.0
    error: tuple | None = None  # (mass matrix, h)
    refusal: str | None = None  # the writer's line, or the loader's
    bounded: int = 0  # links MuJoCo's compiler gives the writer's bound (massless moving links, point masses)


def compare(name, path, floating=False, states=3, seed=0):
    """Load, save as MJCF, compile with MuJoCo and compare one URDF: a :class:`Row`."""
    import mujoco

    row = Row(name, floating)
    try:
        robot = kr.load(path, floating=floating, mimic="independent", physical=False)
    except kr.KaneRobotError as exc:
        row.refusal = f"not loaded: {exc}"
        return row
    row.dof = robot.dof
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / f"{robot.name}.xml"
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", KaneRobotWarning)
                kr.save(robot, target)
            row.bounded = sum(str(w.message).split("link(s) ", 1)[1].split(" of ")[0].count(",") + 1
                              for w in caught if "link(s) " in str(w.message))  # fmt: skip
        except kr.KaneRobotError as exc:
            row.refusal = str(exc).split(": ", 1)[1]
            return row
        model = mujoco.MjModel.from_xml_path(str(target))
    row.bodies = model.nbody - 1
    start = time.perf_counter()
    values = {key: (0.0 if key.startswith("FS") else value) for key, value in robot.values.items()}
    fn = kr.derive(robot).numeric(values, backend="numpy", physical=False)
    row.seconds = time.perf_counter() - start
    row.error = tuple(worst_errors(fn, robot, model, seed, states))
    return row


def rows(names=None, floating=False):
    """The :class:`Row` of every URDF of the corpus (or of ``names``)."""
    robots = corpus()
    return [compare(name, robots[name], floating) for name in (names or robots)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--floating", action="store_true", help="every robot on a free-flying base (a <freejoint>)")
    parser.add_argument("names", nargs="*", metavar="NAME", help="robots of the corpus (default: all)")
    args = parser.parse_args(argv)
    status = needs.announce(__file__, check())
    if status:
        return status
    print(f"{'robot':40s} {'base':8s} {'DOF':>4s} {'bodies':>6s} {'bounded':>7s} {'numeric s':>9s} {'M error':>9s} {'h error':>9s}")
    counts = {"compared": 0, "bounded": 0, "refused": 0, "not loaded": 0}
    for name in args.names or corpus():
        row = compare(name, corpus()[name], args.floating)
        base = "floating" if row.floating else "fixed"
        if row.error is None:
            counts["not loaded" if row.refusal.startswith("not loaded") else "refused"] += 1
            print(f"{row.name:40s} {base:8s} {row.dof:4d} refused: {row.refusal}", flush=True)
            continue
        counts["compared"] += 1
        counts["bounded"] += row.bounded > 0
        print(f"{row.name:40s} {base:8s} {row.dof:4d} {row.bodies:6d} {row.bounded:7d} {row.seconds:9.2f} {row.error[0]:9.1e} "
              f"{row.error[1]:9.1e}", flush=True)  # fmt: skip
        if max(row.error) >= TOL:
            status = 1
    print(f"{counts['compared']} compared ({counts['bounded']} with bounded links), {counts['refused']} refused by the writer, "
          f"{counts['not loaded']} not loaded")  # fmt: skip
    return status


if __name__ == "__main__":
    sys.exit(main())
