"""Snapshots of the generated programs: their text must not change in a refactor.

Baseline: ``benchmarks/program_snapshots.json``, the SHA-256 of the text of
every program of every robot in frames/ (every engine, every dynamic model
the structure has, the pose and Jacobian of every frame, the balance
programs) and of 10 URDFs of example-robot-data (Newton-Euler's dynamic
models, the pose of the last frame), keyed ``robot/engine/model``.  The
script derives them again and prints, for each key, ``same``, ``CHANGED``
or ``new``; any ``CHANGED`` or missing key makes the exit status 1.

``--write`` replaces the baseline (after a deliberate change, say why in the
commit); ``--dump DIR`` also writes each program's text to DIR, so that two
dumps can be compared with ``diff -r`` to see what changed.  Without
example-robot-data (the bench extra) the URDF keys are skipped with a line
saying so.

Run:  python benchmarks/program_snapshots.py [--robot rx90] [--dump /tmp/after]
"""

import argparse
import hashlib
import json
import sys
from pathlib import Path

import needs  # noqa: F401  first: one line and exit status 2 when kanerobot is not installed
from urdf_vs_pinocchio import corpus

import kanerobot as kr
from kanerobot.dynamics.kinematic_programs import KinematicPrograms
from kanerobot.dynamics.model import MODELS

BASELINE = Path(__file__).with_name("program_snapshots.json")
ENGINES = ("newton-euler", "lagrange", "kane")
#: Ten URDFs of example-robot-data: serial arms, a tree (solo), a gripper, a pendulum.
URDFS = ("ur5_robot", "panda", "kinova", "double_pendulum", "solo", "talos_left_arm", "xarm7", "z1", "so100", "finger_edu")
DYNAMIC = (*MODELS, "base_acceleration")


def _programs_of(name, robot, engines):
    """``{key: Program}`` of the robot's models, derived in a fixed order."""
    for engine in engines:
        model = kr.derive(robot, engine)
        for key in DYNAMIC:
            if key == "base_acceleration" and not robot.floating:
                continue
            if hasattr(model, "has_program") and not model.has_program(key):
                continue
            yield f"{name}/{engine}/{key}", model.program(key)


def _kinematic_programs(name, robot, frames):
    kinematic = KinematicPrograms(robot)
    for frame in frames:
        yield f"{name}/kinematics/pose_{frame}", kinematic.program(("pose", frame))
        yield f"{name}/kinematics/jacobian_{frame}", kinematic.program(("jacobian", frame, "0"))
    for key in ("center_of_mass_jacobian", "centroidal_momentum_matrix"):
        yield f"{name}/kinematics/{key}", kinematic.program((key,))


def programs(robots=None, urdfs=True):
    """``(key, text)`` of every program snapshotted, one at a time."""
    for name in robots or kr.robot_names():
        robot = kr.load(kr.frames_path(name))
        yield from ((key, str(p)) for key, p in _programs_of(name, robot, ENGINES))
        if not robot.wheeled and not robot.loops:  # the numeric kinematics serve serial and tree robots
            yield from ((key, str(p)) for key, p in _kinematic_programs(name, robot, [f.label for f in robot.frames]))
    if not urdfs:
        return
    files = corpus()
    if not files:
        print("example-robot-data is not installed: the URDF snapshots are skipped (pip install -e '.[bench]')")
        return
    for name in URDFS:
        robot = kr.load(files[name], mimic="independent")  # as pinocchio reads them
        yield from ((key, str(p)) for key, p in _programs_of(name, robot, ("newton-euler",)))
        yield from ((key, str(p)) for key, p in _kinematic_programs(name, robot, [robot.frames[-1].label]))


def digest(text):
    return hashlib.sha256(text.encode()).hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", action="append", help="only this robot of frames/ (repeatable; no URDFs then)")
    parser.add_argument("--write", action="store_true", help="replace the baseline with today's snapshots")
    parser.add_argument("--dump", type=Path, help="also write each program's text under this folder")
    args = parser.parse_args()
    baseline = json.loads(BASELINE.read_text()) if BASELINE.is_file() else {}
    today, changed, new = {}, [], []
    for key, text in programs(args.robot, urdfs=not args.robot):
        today[key] = digest(text)
        if args.dump:
            path = args.dump / (key.replace("/", "__") + ".txt")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        state = "new" if key not in baseline else "same" if baseline[key] == today[key] else "CHANGED"
        (changed if state == "CHANGED" else new if state == "new" else []).append(key)
        print(f"{key:60s} {state}", flush=True)
    if args.write:
        BASELINE.write_text(json.dumps(today, indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(today)} snapshots to {BASELINE}")
        return 0
    scope = [key for key in baseline if not args.robot or key.split("/")[0] in args.robot]
    missing = [key for key in scope if key not in today]
    print(
        f"{len(today)} programs: {len(today) - len(changed) - len(new)} same, {len(changed)} changed, {len(new)} new, "
        f"{len(missing)} missing" + ("".join(f"\n  changed: {k}" for k in changed) + "".join(f"\n  missing: {k}" for k in missing))
    )
    return 1 if changed or missing else 0


if __name__ == "__main__":
    sys.exit(main())
