"""Every URDF of example-robot-data read by kr.load, against pinocchio's buildModelFromUrdf.

For each URDF of the `example-robot-data` package (BSD; about 70 robots,
arms, hands, quadrupeds, humanoids) that pinocchio reads: kanerobot loads
it (``kr.load(path, mimic="independent", physical=False)``: mimic joints as
joints of their own and inertias as written, as pinocchio reads them), with
a fixed base and with ``floating=True``, derives the inverse dynamics, the
inertia matrix and the direct dynamics (Newton-Euler), binds the file's
numbers (``robot.values``, friction set to 0: pinocchio's algorithms have
none) and compares with pinocchio's ``rnea``, ``crba`` and ``aba`` (with a
``JointModelFreeFlyer`` root when floating) at random states, joints matched
by name (a continuous joint is one angle here and a cos/sin pair in
pinocchio).  The table gives the DOF (nv), the derivation time of the three
programs, their operations (multiplications + additions, ``op_count``),
pinocchio's time per call of rnea + crba + aba (its C++ at run time, for
scale: kanerobot's cost is in the derivation, once) and the worst relative
error ``max |ours - pin| / max(1, max |pin|)``; the last column the same
error of the centre of mass, its Jacobian and the centroidal momentum matrix
against ``centerOfMass``, ``jacobianCenterOfMass`` and
``computeCentroidalMap`` (:func:`compare_balance`; every robot but a fixed
one whose moving links have no mass).  A robot with a joint that
moves massless links only has a singular inertia matrix: its direct dynamics
is undefined (here and in pinocchio) and is not compared (the table says so).
When A is ill-conditioned (cond(A) > 1e6, tiny links: iCub's), any two
solvers' accelerations differ by ~cond(A) eps; the direct dynamics is then
compared by its backward error ``|A qdd + h - tau| / (|A| |qdd| + |h| +
|tau|)`` in pinocchio's own A and h (the table says so).

tests/test_urdf.py runs :func:`compare` on a dozen of these robots,
tests/test_centroidal.py :func:`compare_balance` on Talos.

Run:  pip install -e '.[bench]' && python benchmarks/urdf_vs_pinocchio.py [NAME ...]
(``KANEROBOT_URDF_CORPUS=folder`` compares the URDFs of another folder.)
"""

import importlib
import importlib.metadata
import os
import sys
import time
from pathlib import Path

import needs  # first: one line and exit status 2 when kanerobot is not installed
import numpy as np

import kanerobot as kr
from kanerobot.errors import SingularityError
from kanerobot.robot.urdf import parse_urdf

#: Condition number of A above which the direct dynamics is compared by its backward error.
ILL = 1e6
#: The programs compared (and timed).
PROGRAMS = ("inverse_dynamics", "mass_matrix", "direct_dynamics")
CORPUS = "example-robot-data"
#: Where the package puts its URDFs, under its installation prefix.
ROBOTS = "cmeel.prefix/share/example-robot-data/robots"
#: An environment variable naming another folder of URDF files to compare instead.
FOLDER_VARIABLE = "KANEROBOT_URDF_CORPUS"


def corpus_folder():
    """The folder of the URDFs compared: :data:`FOLDER_VARIABLE` if set, else
    example-robot-data's robots; None when neither is there."""
    if os.environ.get(FOLDER_VARIABLE):
        folder = Path(os.environ[FOLDER_VARIABLE])
        return folder if folder.is_dir() else None
    try:
        folder = Path(importlib.metadata.distribution(CORPUS).locate_file(ROBOTS))
    except importlib.metadata.PackageNotFoundError:
        return None
    return folder if folder.is_dir() else None


def corpus():
    """``{name: path}`` of every URDF of example-robot-data (name: the file's stem, made unique by its folder)."""
    folder = corpus_folder()
    if folder is None:
        return {}
    out = {}
    for path in sorted(folder.rglob("*.urdf")):
        name = path.stem if path.stem not in out else f"{path.parts[-3]}/{path.stem}"
        out[name] = path
    return out


def check():
    """Lines naming the missing requirements (pinocchio; example-robot-data, which the same extra installs)."""
    line = needs.pinocchio("the comparison with pinocchio on example-robot-data's URDFs")
    if line is None and corpus_folder() is None:
        line = (
            f"{CORPUS} (the robots' URDFs) is not installed, so the comparison is skipped: {needs.BENCH_EXTRA} "
            f"(the bench extra) to get it, or set {FOLDER_VARIABLE} to a folder of URDF files"
        )
    return needs.missing(line)


def pinocchio_model(path, floating):
    """pinocchio's model of the URDF (mimic joints as independent joints, pinocchio's default)."""
    pin = importlib.import_module("pinocchio")
    if floating:
        return pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    return pin.buildModelFromUrdf(str(path))


def state_maps(parsed, pmodel, floating):
    """``(v_index, rubs)``: pinocchio's velocity index of each of our velocity
    entries, and ``{our joint index: pinocchio's q index}`` of the continuous
    joints, which pinocchio writes (cos, sin); other joints share q and v."""
    offset = 6 if floating else 0
    index = {name: k for k, name in enumerate(pmodel.names)}
    v_index = list(range(offset))
    q_index, rubs = list(range(7 if floating else 0)), {}
    for k, label in enumerate(parsed.robot.joint_labels):
        joint = pmodel.joints[index[parsed.joint_names[label]]]
        v_index.append(joint.idx_v)
        q_index.append(joint.idx_q)
        if joint.nq == 2:
            rubs[k] = joint.idx_q
    return np.array(v_index, dtype=int), np.array(q_index, dtype=int), rubs


def pinocchio_configuration(q, floating, q_index, rubs, nq):
    out = np.zeros(nq)
    base = 7 if floating else 0
    out[:base] = q[:base]
    for k, value in enumerate(q[base:]):
        if k in rubs:
            out[rubs[k]], out[rubs[k] + 1] = np.cos(value), np.sin(value)
        else:
            out[q_index[base + k]] = value
    return out


def compare(path, floating=False, states=3, seed=0, method="newton-euler"):
    """Derive and compare one URDF; returns ``{"dof", "time", "error", "robot"}``.

    ``time`` is the derivation time (s) of :data:`PROGRAMS`; ``error`` the
    worst relative error over ``states`` random states.
    """
    pin = importlib.import_module("pinocchio")
    parsed = parse_urdf(path, floating=floating, mimic="independent", physical=False)
    robot = parsed.robot
    start = time.perf_counter()
    model = kr.derive(robot, method)
    derived = []  # a joint moving only massless links has no direct dynamics: kanerobot says so
    for name in PROGRAMS:
        if model.has_program(name):
            try:
                model.program(name)
                derived.append(name)
            except SingularityError:
                pass
    undefined = "direct_dynamics" not in derived
    elapsed = time.perf_counter() - start
    values = {name: (0.0 if name.startswith(("FV", "FS")) else value) for name, value in robot.values.items()}
    fn = model.numeric(values, backend="numpy", physical=False)
    pmodel = pinocchio_model(path, floating)
    data = pmodel.createData()
    v_index, q_index, rubs = state_maps(parsed, pmodel, floating)
    nv = len(v_index)
    if nv != pmodel.nv:
        raise AssertionError(f"{path.name}: {nv} velocities here, {pmodel.nv} in pinocchio")
    rng = np.random.default_rng(seed)
    worst, singular, ill = 0.0, False, 0.0

    def error(ours, theirs):
        return float(np.abs(ours - theirs).max() / max(1.0, np.abs(theirs).max())) if np.size(theirs) else 0.0

    for _ in range(states):
        joints = rng.uniform(-np.pi, np.pi, nv - (6 if floating else 0))
        if floating:
            quaternion = rng.normal(size=4)
            q = np.concatenate([rng.uniform(-1, 1, 3), quaternion / np.linalg.norm(quaternion), joints])
        else:
            q = joints
        qd, qdd = rng.uniform(-2, 2, nv), rng.uniform(-3, 3, nv)
        pq = pinocchio_configuration(q, floating, q_index, rubs, pmodel.nq)
        pqd, pqdd = np.zeros(nv), np.zeros(nv)
        pqd[v_index], pqdd[v_index] = qd, qdd
        tau = pin.rnea(pmodel, data, pq, pqd, pqdd)[v_index]
        worst = max(worst, error(fn.inverse_dynamics(q, qd, qdd), tau))
        A = pin.crba(pmodel, data, pq)
        A = (np.triu(A) + np.triu(A, 1).T)[np.ix_(v_index, v_index)]
        worst = max(worst, error(fn.mass_matrix(q), A))
        eigenvalues = np.linalg.eigvalsh(A)
        if undefined or eigenvalues.min() <= 1e-12 * max(1.0, eigenvalues.max()):
            # a joint moving only massless links: A is singular and the direct dynamics undefined (pinocchio's aba
            # divides by 0 too, and the recursive program holds a division by a structural zero)
            singular = True
            continue
        torques = rng.uniform(-5, 5, nv)
        if floating:
            torques[:6] = 0.0  # the free flyer is not actuated
        ptau = np.zeros(nv)
        ptau[v_index] = torques
        ours = fn.direct_dynamics(q, qd, torques[6:] if floating else torques)
        condition = float(eigenvalues.max() / eigenvalues.min())
        if condition > ILL:
            # forward errors of any two solvers are ~ cond(A) eps: compare by the backward error in pinocchio's own
            # equations A qdd + h = tau (A and h from crba and rnea)
            h = pin.rnea(pmodel, data, pq, pqd, np.zeros(nv))[v_index]
            residual = np.abs(A @ ours + h - torques).max()
            worst = max(worst, residual / (np.abs(A).max() * np.abs(ours).max() + np.abs(h).max() + np.abs(torques).max()))
            ill = max(ill, condition)
        else:
            worst = max(worst, error(ours, pin.aba(pmodel, data, pq, pqd, ptau)[v_index]))
    ops = sum(model.op_count(name)[kind] for name in derived for kind in ("mul", "add"))
    ptau = np.zeros(nv)
    return {
        "dof": nv, "time": elapsed, "error": worst, "robot": robot, "ops": ops, "singular": singular, "ill": ill,
        "pin_us": pinocchio_time(pin, pmodel, data, pq, pqd, ptau),
    }  # fmt: skip


def compare_balance(path, floating=False, states=3, seed=0, backend="numpy"):
    """The balance quantities of one URDF against pinocchio's; returns ``{"dof", "time", "error"}``.

    The centre of mass, its Jacobian and the centroidal momentum matrix
    (``fn.center_of_mass``, ``fn.center_of_mass_jacobian``,
    ``fn.centroidal_momentum_matrix``) against ``centerOfMass``,
    ``jacobianCenterOfMass`` and ``computeCentroidalMap``, joints matched by
    name as in :func:`compare`; ``time`` is the derivation and first
    evaluation (s), ``error`` the worst relative error over ``states`` random
    configurations.
    """
    pin = importlib.import_module("pinocchio")
    parsed = parse_urdf(path, floating=floating, mimic="independent", physical=False)
    robot = parsed.robot
    start = time.perf_counter()
    fn = kr.derive(robot).numeric(dict(robot.values), backend=backend, physical=False)
    pmodel = pinocchio_model(path, floating)
    data = pmodel.createData()
    v_index, q_index, rubs = state_maps(parsed, pmodel, floating)
    rng = np.random.default_rng(seed)
    worst, elapsed = 0.0, None
    for _ in range(states):
        q = rng.uniform(-np.pi, np.pi, len(robot.joint_labels))
        if floating:
            quaternion = rng.normal(size=4)
            q = np.concatenate([rng.uniform(-1, 1, 3), quaternion / np.linalg.norm(quaternion), q])
        ours = (fn.center_of_mass(q), fn.center_of_mass_jacobian(q), fn.centroidal_momentum_matrix(q))
        elapsed = elapsed or time.perf_counter() - start
        pq = pinocchio_configuration(q, floating, q_index, rubs, pmodel.nq)
        theirs = (
            pin.centerOfMass(pmodel, data, pq),
            pin.jacobianCenterOfMass(pmodel, data, pq)[:, v_index],
            pin.computeCentroidalMap(pmodel, data, pq)[:, v_index],
        )
        for a, b in zip(ours, theirs):
            worst = max(worst, float(np.abs(a - b).max() / max(1.0, np.abs(b).max())))
    return {"dof": len(v_index), "time": elapsed, "error": worst}


def pinocchio_time(pin, pmodel, data, q, v, tau, calls=200):
    """Microseconds of one call of pinocchio's rnea + crba + aba (the best of 3 runs of ``calls``)."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(calls):
            pin.rnea(pmodel, data, q, v, tau)
            pin.crba(pmodel, data, q)
            pin.aba(pmodel, data, q, v, tau)
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    return best


def note(result):
    """What the error column of a robot compares, when it is not the plain forward error of all three models."""
    if result["singular"]:
        return "  (A singular: a joint moves massless links only; no direct dynamics)"
    if result["ill"]:
        return f"  (cond(A) up to {result['ill']:.0e}: direct dynamics by backward error)"
    return ""


def main(names=None):
    status = needs.announce(__file__, check())
    if status:
        return status
    robots = corpus()
    names = names or list(robots)
    print(
        f"{'robot':40s} {'base':8s} {'DOF':>4s} {'derivation s':>13s} {'ops':>7s} {'pin us/call':>12s} {'worst error':>12s}"
        f" {'balance error':>14s}"
    )
    for name in names:
        for floating in (False, True):
            base = "floating" if floating else "fixed"
            try:
                pinocchio_model(robots[name], floating)
            except Exception as exc:  # pinocchio cannot read it: not in the corpus compared
                print(f"{name:40s} {base:8s} pinocchio cannot read it ({str(exc).splitlines()[0][:60]})")
                continue
            try:
                result = compare(robots[name], floating)
            except kr.KaneRobotError as exc:
                if "has no moving joint" in str(exc):  # a rigid body on a fixed base: nothing to compare
                    print(f"{name:40s} {base:8s} no moving joint: nothing moves on a fixed base")
                    continue
                print(f"{name:40s} {base:8s} not loaded: {exc}")
                status = 1
                continue
            try:
                balance = compare_balance(robots[name], floating)["error"]
            except kr.KaneRobotError as exc:
                if "total mass" not in str(exc):
                    raise
                balance = float("nan")  # the moving links have no mass: no centre of mass
            print(
                f"{name:40s} {base:8s} {result['dof']:4d} {result['time']:13.2f} {result['ops']:7d} {result['pin_us']:12.1f}"
                f" {result['error']:12.1e} {balance:14.1e}" + note(result),
                flush=True,
            )
            if not (result["error"] < 1e-9 and not balance >= 1e-9):
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
