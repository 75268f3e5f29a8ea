"""The MJCF models of dm_control's suite and gymnasium's MuJoCo environments read by kr.load, against MuJoCo.

For each ``.xml`` of ``dm_control/suite`` and ``gymnasium/envs/mujoco/assets``
(both in the test extra): kanerobot reads it (:func:`kanerobot.robot.mjcf.parse_mjcf`),
derives the inverse dynamics and the mass matrix (Newton-Euler), binds the
file's numbers (``robot.values``, friction set to 0: MuJoCo's damper is off
and its dry friction is a constraint) and compares with MuJoCo's own
``mj_fullM``, ``qfrc_bias`` (C qd + g) and ``mj_inverse`` (contacts, every
constraint and the springs disabled) at random states, joints matched by
MuJoCo index and name, quaternions and the free joint's velocity mapped
(tests/mujoco_reference.py).  The table gives the DOF (nv), the derivation
time and the worst relative error ``max |ours - MuJoCo| / max(1, max
|MuJoCo|)`` of each, on the tree (joint and fixed-tendon couplings are
mimic joints, compared as joints of their own: MuJoCo's equalities are off);
a model that is not read says why in one line (a connect or weld equality,
two free bodies, no joint).  dm_control's dog takes its bodies' mass from
bone meshes (kanerobot.robot.mesh): MuJoCo's own diagonalisation of each
mesh's inertia stops early, which leaves errors near 1e-11 there.

tests/test_mjcf.py runs the same comparison on ten of them (``-m long``).

Run:  pip install -e '.[test]' && python benchmarks/mjcf_vs_mujoco.py [NAME ...]
"""

import dataclasses
import importlib.util
import sys
import time
import warnings
from pathlib import Path

import needs  # first: one line and exit status 2 when kanerobot is not installed
import numpy as np

import kanerobot as kr
from kanerobot.errors import KaneRobotWarning
from kanerobot.robot.mjcf import parse_mjcf

sys.path.insert(0, str(needs.ROOT / "tests"))  # the state mapping and MuJoCo's evaluation, shared with the tests
#: Where each package keeps its models.
SUITES = (("dm_control", "suite", "dm_control/"), ("gymnasium", "envs/mujoco/assets", "gymnasium/"))


def requirements():
    """The line naming what is missing (MuJoCo), or an empty list."""
    if needs.installed("mujoco"):
        return []
    return ["mujoco is not installed, so the comparison with MuJoCo is skipped: pip install -e '.[test]' (the test extra) to get it"]


def models():
    """``{name: path}`` of the robots of frames/mjcf and of the models of the packages installed."""
    frames = Path(__file__).resolve().parents[1] / "frames" / "mjcf"  # the robots converted by examples/mjcf/convert_robots.py
    out = {"frames/" + path.stem: path for path in sorted(frames.glob("*.xml"))}
    for package, folder, prefix in SUITES:
        if not needs.installed(package):
            print(f"{package} is not installed: its models are skipped (pip install -e '.[test]')", file=sys.stderr)
            continue
        root = Path(importlib.util.find_spec(package).submodule_search_locations[0], folder)
        out.update({prefix + path.stem: path for path in sorted(root.glob("*.xml"))})
    return out


def compare(path, states=3, seed=0):
    """``{"dof", "time", "errors"}`` of one model: errors of (M, bias, inverse dynamics)."""
    import mujoco
    from ball_robots import random_state
    from mujoco_reference import MujocoReference, worst_errors

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", KaneRobotWarning)  # springs left out: MuJoCo's are off in the comparison
        parsed = parse_mjcf(path)
    # the tree, mimic joints as joints of their own: MuJoCo's equality constraints are off in the comparison
    parsed = dataclasses.replace(parsed, robot=dataclasses.replace(parsed.robot, mimics=()))
    robot = parsed.robot
    start = time.perf_counter()
    model = kr.derive(robot)
    model.program("inverse_dynamics"), model.program("mass_matrix")
    elapsed = time.perf_counter() - start
    values = {name: (0.0 if name.startswith(("FV", "FS")) else value) for name, value in robot.values.items()}
    fn = model.numeric(values, backend="numpy", physical=False)
    reference = MujocoReference(parsed, mujoco.MjModel.from_xml_path(str(path)))
    rng = np.random.default_rng(seed)
    errors = worst_errors(fn, reference, [random_state(robot, rng) for _ in range(states)])
    return {"dof": robot.dof, "time": elapsed, "errors": errors}


def main(names=None):
    status = needs.announce(__file__, requirements())
    if status:
        return status
    found = models()
    print(f"{'model':36s} {'DOF':>4s} {'derivation s':>13s} {'M error':>9s} {'bias error':>11s} {'inverse error':>14s}")
    for name in names or list(found):
        try:
            result = compare(found[name])
        except kr.KaneRobotError as exc:
            print(f"{name:36s} not read: {exc.reason if hasattr(exc, 'reason') else exc}", flush=True)
            continue
        m, bias, inverse = result["errors"]
        print(f"{name:36s} {result['dof']:4d} {result['time']:13.2f} {m:9.1e} {bias:11.1e} {inverse:14.1e}", flush=True)
        if max(result["errors"]) >= 1e-9:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
