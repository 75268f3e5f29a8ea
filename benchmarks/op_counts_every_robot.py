"""Operation counts of every model of every robot in frames/, by every engine, against a baseline.

Baseline: ``benchmarks/op_counts_baseline.json``, the counts on main before
the floating base became a root joint (issue 14), keyed
``robot/engine/model`` with ``{"mul", "add", "fn"}``.  For each entry the
script prints the baseline and today's counts (multiplications/additions)
and the ratio of today's total to the baseline's; a count above its baseline
is marked ``WORSE`` and makes the exit status 1.  ``--write`` replaces the
baseline with today's counts (after a deliberate change, say why in the commit).

Run:  python benchmarks/op_counts_every_robot.py [--engine newton-euler] [--robot rx90]
"""

import argparse
import json
import sys
from pathlib import Path

import needs  # noqa: F401  first: one line and exit status 2 when kanerobot is not installed

import kanerobot as kr
from kanerobot.dynamics.model import MODELS

BASELINE = Path(__file__).with_name("op_counts_baseline.json")
ENGINES = ("newton-euler", "lagrange", "kane")


def counts(robots=None, engines=ENGINES):
    """``{robot/engine/model: {"mul", "add", "fn"}}`` of today's programs (models with a program only)."""
    out = {}
    for name in robots or kr.robot_names():
        robot = kr.load(kr.frames_path(name))
        for engine in engines:
            model = kr.derive(robot, engine)
            for key in list(MODELS) + ["base_acceleration"]:
                if key == "base_acceleration" and not robot.floating:
                    continue
                if hasattr(model, "has_program") and not model.has_program(key):
                    continue
                c = model.op_count(key)
                out[f"{name}/{engine}/{key}"] = {k: int(c[k]) for k in ("mul", "add", "fn")}
    return out


def compare(baseline, today):
    """Lines of the table and the keys whose count rose."""
    lines, worse = [], []
    for key in sorted(set(baseline) | set(today)):
        before, now = baseline.get(key), today.get(key)
        if now is None:
            continue
        if before is None:
            lines.append(f"{key:45s} {'(new)':>14s} {now['mul']:>6d}/{now['add']:<6d}")
            continue
        ratio = (now["mul"] + now["add"]) / max(1, before["mul"] + before["add"])
        flag = "WORSE" if now["mul"] > before["mul"] or now["add"] > before["add"] else ""
        if flag:
            worse.append(key)
        lines.append(f"{key:45s} {before['mul']:>6d}/{before['add']:<6d} {now['mul']:>6d}/{now['add']:<6d} {ratio:6.2f} {flag}")
    return lines, worse


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", action="append", choices=ENGINES, help="only this engine (repeatable)")
    parser.add_argument("--robot", action="append", help="only this robot of frames/ (repeatable)")
    parser.add_argument("--write", action="store_true", help="replace the baseline with today's counts")
    args = parser.parse_args()
    today = counts(args.robot, tuple(args.engine or ENGINES))
    if args.write:
        BASELINE.write_text(json.dumps(today, indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(today)} counts to {BASELINE}")
        return 0
    baseline = json.loads(BASELINE.read_text())  # part of the repository, like this script
    lines, worse = compare(baseline, today)
    print(f"{'robot/engine/model':45s} {'baseline':>14s} {'today':>13s} {'ratio':>6s}   (mul/add; ratio of mul+add)")
    print("\n".join(lines))
    print(f"{len(lines)} models, {len(worse)} above the baseline" + (": " + ", ".join(worse) if worse else ""))
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
