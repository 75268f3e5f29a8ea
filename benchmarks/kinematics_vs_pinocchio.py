"""Batched pose and Jacobian of the RX-90's end frame against pinocchio, in one run.

For N random configurations (1000 by default), kanerobot's generated
programs give the pose 0T_6 and the Jacobian 0J_6 of the end frame for the
whole batch at once (``fn.pose``, ``fn.jacobian``), with both backends of
`model.numeric`: numpy (vectorized numpy source) and c (C compiled with the
system compiler, one call looping over the batch).  The baseline is
pinocchio (the `pin` package) called in a Python loop over the same
configurations: ``forwardKinematics`` + ``updateFramePlacements`` +
``computeFrameJacobian`` (``LOCAL_WORLD_ALIGNED``, the Jacobian of the
frame's origin projected in the base frame, which is kanerobot's with
``projection="0"``).  The script checks that all give the same numbers.
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

import kanerobot as kr
from kanerobot.dynamics.kinematic_programs import jacobian_program, pose_program
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.interop import to_pinocchio

FRAME = "6"


def check():
    """Lines naming the missing requirements (pinocchio)."""
    return needs.missing(needs.pinocchio("the comparison with pinocchio's frame placements and frame Jacobians"))


def seconds(function):
    """Best of three runs of ``function``, in seconds."""
    return min(timeit.repeat(function, number=1, repeat=3))


def pinocchio_loop(pin, robot, values, q):
    """A function running pinocchio on every row of ``q``: (N, 4, 4) poses and (N, 6, n) Jacobians."""
    pmodel = to_pinocchio(robot, values)
    # the RX-90's frame 6 is joint 6's: an operational frame at that joint's origin
    frame = pmodel.addFrame(pin.Frame("end", pmodel.getJointId(f"joint{FRAME}"), pin.SE3.Identity(), pin.FrameType.OP_FRAME))
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


def main(N=1000):
    status = needs.announce(__file__, check())
    pin = None if status else importlib.import_module("pinocchio")
    robot = kr.load(kr.frames_path("rx90"))
    rng = np.random.default_rng(0)
    model = kr.derive(robot)
    values = random_parameters(robot, rng, friction=False, rotor=False, wrench=False)
    backends = {"numpy": model.numeric(values, backend="numpy"), "c": model.numeric(values, backend="auto")}
    q = rng.uniform(-np.pi, np.pi, (N, robot.nj))
    for fn in backends.values():
        fn.pose(FRAME, q[:2]), fn.jacobian(FRAME, q[:2])  # derive and compile once, outside the timing
    if backends["c"].backend != "c":
        print(f"rx90: no C backend ({backends['c'].fallback_reason})", file=sys.stderr)
        del backends["c"]
    counts = {"pose": pose_program(robot, FRAME).op_count(), "jacobian": jacobian_program(robot, FRAME).op_count()}
    print(f"RX-90, frame {FRAME}, N = {N}: programs pose {counts['pose']}, jacobian {counts['jacobian']}")

    reference_time, reference = float("nan"), None
    if pin is not None:
        run = pinocchio_loop(pin, robot, values, q)
        reference_time, reference = seconds(run), run()
    print(f"{'backend':8s} {'us/config':>10s} {'pinocchio us/config':>20s} {'pin/ours':>9s} {'max abs diff':>13s}")
    for key, fn in backends.items():
        time = seconds(lambda fn=fn: (fn.pose(FRAME, q), fn.jacobian(FRAME, q)))
        diff = float("nan")
        if reference is not None:
            diff = max(np.abs(fn.pose(FRAME, q) - reference[0]).max(), np.abs(fn.jacobian(FRAME, q) - reference[1]).max())
        print(
            f"{key:8s} {time / N * 1e6:10.3f} {reference_time / N * 1e6:20.3f} {reference_time / time:9.2f} {diff:13.1e}"
        )
    return status


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))
