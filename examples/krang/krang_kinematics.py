"""Krang's hands: geometric and kinematic models of the 17-DOF tree.

Loads frames/krang.toml (the seed report's getKrangFrames, transcribed),
prints the structure, generates the fast geometric model of the left hand
with its operation count, and evaluates, at a sample posture, the pose of
both hands and the left hand's Jacobian.  The Jacobian is checked against a
finite difference of the geometric model, so the script fails loudly if the
two ever disagree.

Run from the repository:  python examples/krang/krang_kinematics.py
"""

import numpy as np

import kanerobot as kr
from kanerobot.geometry import fast_geometric_model, numeric_function, numeric_transform
from kanerobot.kinematics import jacobian
from kanerobot.report import summary
from kanerobot.symbolic import format_operations

# Illustrative link lengths in metres (the report keeps L1..L9 symbolic).
LENGTHS = {"L1": 0.05, "L2": 0.20, "L3": 0.02, "L4": 0.45, "L5": 0.20, "L6": 0.25, "L7": 0.30, "L8": 0.30, "L9": 0.15}


def main():
    krang = kr.load(kr.frames_path("krang"))
    print(summary(krang))

    program = fast_geometric_model(krang, "0", "10l")
    print(f"Fast geometric model 0T10l: {len(program.assignments())} intermediate variables,")
    print("  " + format_operations(program.op_count()))

    rng = np.random.default_rng(2015)
    q = rng.uniform(-1.0, 1.0, krang.nj)  # joint order: q_imu, q_w, q_torso, q_1l..q_7l, q_1r..q_7r
    for hand in ("10l", "10r"):
        T = numeric_transform(krang, "0", hand, LENGTHS)(q)
        print(f"\n0T{hand} at the sample posture:\n{np.array2string(T, precision=4, suppress_small=True)}")

    J = numeric_function(krang, jacobian(krang, "10l"), LENGTHS)(q)
    right_arm = [krang.joint_labels.index(f"{k}r") for k in range(4, 11)]
    print(f"\nJacobian of the left hand: {J.shape[0]} x {J.shape[1]}; right-arm columns all zero: {not J[:, right_arm].any()}")

    # Independent check: finite difference of the hand position.
    position = numeric_transform(krang, "0", "10l", LENGTHS)
    h = 1e-6
    dP = np.column_stack([(position(q + h * e)[:3, 3] - position(q - h * e)[:3, 3]) / (2 * h) for e in np.eye(krang.nj)])
    error = np.abs(dP - J[:3]).max()
    print(f"Linear rows against finite differences of 0P10l: max error {error:.1e}")
    assert error < 1e-7, error

    qd = rng.uniform(-0.5, 0.5, krang.nj)
    print(f"Left-hand twist [V; w] for a random qd: {np.array2string(J @ qd, precision=4)}")


if __name__ == "__main__":
    main()
