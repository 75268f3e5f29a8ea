"""Batched poses and Jacobians against pinocchio, in one run.

For the RX-90's end frame, a hand of the 17-DOF Krang tree and the arm's end
of the floating satellite, and N random configurations (1000 by default),
kanerobot's generated programs give the pose and the Jacobian of the frame
for the whole batch at once (``fn.pose``, ``fn.jacobian``), with both backends of
`model.numeric`: numpy (vectorized numpy source) and c (C compiled with the
system compiler, one call looping over the batch).  The baseline is
pinocchio (the `pin` package) called in a Python loop over the same
configurations: ``forwardKinematics`` + ``updateFramePlacements`` +
``computeFrameJacobian`` (``LOCAL_WORLD_ALIGNED``, the Jacobian of the
frame's origin projected in the base frame, which is kanerobot's with
``projection="0"``; for the floating satellite, in the world frame with the
base's six columns first, kanerobot's default ``projection="world"``).  The script checks that all give the same numbers.
Ratios are pinocchio's time over kanerobot's: above 1 means kanerobot is
faster.  The C backend is skipped (and said so) when there is no C
compiler.  Without pinocchio the script says so in one line, times
kanerobot's backends alone, and exits with status 2 (``needs``).

Run:  pip install -e '.[bench]' && python benchmarks/kinematics_vs_pinocchio.py [N]
"""

import importlib
import sys
import timeit

import needs  # first: one line and exit status 2 when kanerobot is not installed
import numpy as np
from numeric_vs_pinocchio import pinocchio_comparable  # beside this script, as needs

from kanerobot.dynamics.kinematic_programs import jacobian_program, pose_program
from kanerobot.interop import to_pinocchio

#: (robot, frame): a serial arm's end, a tree's hand (frame 10l of the 17-DOF Krang), a floating base's arm end.
CASES = [("rx90", "6"), ("krang", "10l"), ("satellite", "3")]


def check():
    """Lines naming the missing requirements (pinocchio)."""
    return needs.missing(needs.pinocchio("the comparison with pinocchio's frame placements and frame Jacobians"))


def seconds(function):
    """Best of three runs of ``function``, in seconds."""
    return min(timeit.repeat(function, number=1, repeat=3))


def pinocchio_loop(pin, robot, values, q, frame):
    """A function running pinocchio on every row of ``q``: (N, 4, 4) poses and (N, 6, nv) Jacobians."""
    pmodel = to_pinocchio(robot, values)
    # each frame compared is a joint's: an operational frame at that joint's origin
    frame = pmodel.addFrame(pin.Frame("end", pmodel.getJointId(f"joint{frame}"), pin.SE3.Identity(), pin.FrameType.OP_FRAME))
    data = pmodel.createData()
    world = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED

    def run():
        poses, jacobians = [], []
        for k in range(len(q)):
            pin.forwardKinematics(pmodel, data, q[k])
            pin.updateFramePlacements(pmodel, data)
            poses.append(data.oMf[frame].homogeneous)
            jacobians.append(pin.computeFrameJacobian(pmodel, data, q[k], frame, world))
        return np.array(poses), np.array(jacobians)

    return run


def configurations(model, rng, N):
    """N random configurations; a floating base's quaternion (q[3:7]) normalised, as pinocchio wants it."""
    q = rng.uniform(-np.pi, np.pi, (N, model.nq))
    if model.nq > model.n:
        q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    return q


def main(N=1000):
    status = needs.announce(__file__, check())
    pin = None if status else importlib.import_module("pinocchio")
    print(f"{'robot':10s} {'frame':5s} {'backend':8s} {'us/config':>10s} {'pinocchio us/config':>20s} {'pin/ours':>9s} {'max abs diff':>13s}")
    for name, frame in CASES:
        robot, model, values, rng = pinocchio_comparable(name)
        backends = {"numpy": model.numeric(values, backend="numpy"), "c": model.numeric(values, backend="auto")}
        q = configurations(model, rng, N)
        for fn in backends.values():
            fn.pose(frame, q[:2]), fn.jacobian(frame, q[:2])  # derive and compile once, outside the timing
        if backends["c"].backend != "c":
            print(f"{name}: no C backend ({backends['c'].fallback_reason})", file=sys.stderr)
            del backends["c"]
        counts = {"pose": pose_program(robot, frame).op_count(), "jacobian": jacobian_program(robot, frame).op_count()}
        reference_time, reference = float("nan"), None
        if pin is not None:
            run = pinocchio_loop(pin, robot, values, q, frame)
            reference_time, reference = seconds(run), run()
        for key, fn in backends.items():
            time = seconds(lambda fn=fn, frame=frame, q=q: (fn.pose(frame, q), fn.jacobian(frame, q)))
            diff = float("nan")
            if reference is not None:
                diff = max(np.abs(fn.pose(frame, q) - reference[0]).max(), np.abs(fn.jacobian(frame, q) - reference[1]).max())
            print(
                f"{name:10s} {frame:5s} {key:8s} {time / N * 1e6:10.3f} {reference_time / N * 1e6:20.3f}"
                f" {reference_time / time:9.2f} {diff:13.1e}"
            )
        print(f"{'':10s} programs of the joints' part, N = {N}: pose {counts['pose']}, jacobian {counts['jacobian']}")
    return status


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))
