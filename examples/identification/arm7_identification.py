"""Identify a robot from its own recordings, then check the estimate on another run.

The robot is frames/arm7.urdf, a 7-joint arm mounted on a wall: gravity is
along -y of its base.  Its URDF is what a CAD export gives, zero products of
inertia, no friction and no rotor inertia; the real robot has all of them.
To know the right answer, the "real robot" here is a random physical truth
near the file's numbers, and its two runs (training and test) are logged the
way a real controller logs them (kanerobot.identification.synthetic):

- time stamps that jitter (steps of 10 to 33 ms),
- a quarter of the rows stale (the previous row re-sent with a new time stamp),
- motor currents instead of torques (tau = gain * current, one gain per joint),
- 1 % noise on the currents; friction dominates the wrist's torque.

Then the user's route, from the files alone:

    robot = kr.load("arm7.urdf", gravity=(0, -9.81, 0))
    result = kr.identify(robot, "train.csv", gains="gains.toml", cutoff=5, method="wls")
    check = result.validate("test.csv")

which is also the command line:

    kanerobot identify arm7.urdf train.csv --gravity 0,-9.81,0 --gains gains.toml \
        --cutoff 5 --method wls --validate test.csv -o estimate.toml

Run:  python examples/identification/arm7_identification.py [--out FOLDER] [--duration S]
It writes FOLDER/train.csv, test.csv, gains.toml, estimate.toml and the
validation figures, and prints the estimate, its check against the truth and
the test run's errors.
"""

import argparse
import time
from pathlib import Path

import numpy as np

import kanerobot as kr
from kanerobot.identification import synthetic


def simulate_runs(folder, duration, seed=24):
    """Write the training and test runs and the gains; return the truth."""
    robot = kr.load(kr.frames_path("arm7"), gravity=synthetic.GRAVITY)
    rng = np.random.default_rng(seed)
    truth = synthetic.random_truth(robot, rng)
    model = synthetic.symbolic_dynamics(robot)
    numeric = kr.derive(model).numeric(truth)
    lower, upper, velocity = synthetic.joint_limit_arrays(robot)
    gains = synthetic.random_gains(len(robot.joint_labels), rng)
    for name in ("train", "test"):
        trajectory = synthetic.excitation(len(robot.joint_labels), duration, rng, lower=lower, upper=upper, velocity=velocity)
        run = synthetic.defective_recording(model, truth, trajectory, gains=gains, rng=rng, duration=duration, dynamics=numeric)
        synthetic.write_csv(run, folder / f"{name}.csv", robot.joint_labels)
        print(f"{name}.csv: {len(run.t)} rows, steps {1e3 * np.diff(run.t).min():.1f}-{1e3 * np.diff(run.t).max():.1f} ms, "
              f"{int(run.stale.sum())} stale rows")  # fmt: skip
    synthetic.write_gains(gains, folder / "gains.toml", robot.joint_labels)
    return truth


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="arm7_identification", help="folder for the recordings, estimate and figures")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of each run (default 60)")
    args = parser.parse_args(argv)
    folder = Path(args.out)
    folder.mkdir(parents=True, exist_ok=True)
    truth = simulate_runs(folder, args.duration)

    # --- the user's route: a URDF, two recordings, the drive gains
    robot = kr.load(kr.frames_path("arm7"), gravity=(0, -9.81, 0))
    start = time.perf_counter()
    result = kr.identify(robot, folder / "train.csv", gains=folder / "gains.toml", cutoff=5.0, method="wls")
    print(f"\nidentified in {time.perf_counter() - start:.2f} s")
    print(result.summary())
    result.save(folder / "estimate.toml")

    # --- how far the estimate is from the truth, in standard deviations
    true_base = result.T @ np.array([truth[name] for name in result.regressors.parameters])
    z = (result.values - true_base) / np.array([result.std[name] for name in result.names])
    print(f"\n{len(result.names)} base parameters; estimate - truth within {np.abs(z).max():.2f} standard deviations")

    # --- the test run: torques predicted from its motion against those measured
    check = result.validate(folder / "test.csv")
    print()
    print(check.summary())
    for path in check.save_figures(folder / "estimate_validation"):
        print(f"written {path}")


if __name__ == "__main__":
    main()
