"""Identification of a robot's own recording of 1 million samples: time and memory.

Issue 24: ``kr.identify`` on a recording as a controller logs it.  The robot
is frames/arm7.urdf (7 joints, 91 standard parameters, 64 base parameters
with IA, FV, FS) mounted on a wall; its recording
(:mod:`kanerobot.identification.synthetic`) has jittered time stamps (steps
of 10-33 ms), 25 % stale rows and motor currents with 1 % noise, written as
one NPZ file of ``--samples`` rows (default 1,000,000: about 6 hours).  Timed,
in one run:

1. the baseline: the same route on the first ``--baseline`` rows (default
   20,000), per sample;
2. the whole file: ``kr.identify(robot, "long.npz", gains=..., cutoff=5,
   method="wls")``, which reads it, drops the stale rows, resamples and
   low-passes the positions, differentiates, interpolates back to the time
   stamps kept, and factors the observation matrix block by block
   (``max_gap=0.5``: a million rows hold runs of ten stale rows, 0.25 s,
   which the default limit of ten median steps refuses);

printed: the wall time of each, samples per second, the ratio of the time
per sample of the whole file to the baseline's (1 means the cost grows
linearly with the length), the peak resident memory of the process, and the
largest distance of the estimate from the truth in standard deviations.

Run:  python benchmarks/identify_recordings.py [--samples N] [--baseline M]
"""

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import needs  # noqa: F401 -- first: one line and exit status 2 when kanerobot is not installed

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # small QRs: one BLAS thread (as identify_long_recording.py)

import numpy as np  # noqa: E402

import kanerobot as kr  # noqa: E402
from kanerobot.identification import synthetic  # noqa: E402
from kanerobot.identification.recording import Recording  # noqa: E402

GB = 2**30
#: Mean step of the jittered clock (uniform in 10-33 ms).
MEAN_STEP = 0.0215
#: Period of the synthetic.excitation, repeated over the recording.
PERIOD = 60.0


def peak_memory():
    """Peak resident memory of this process so far, bytes (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def write_recording(path, robot, samples, rng):
    """The truth, and a recording of about ``samples`` rows written to ``path`` (NPZ) with its gains."""
    truth = synthetic.random_truth(robot, rng)
    model = synthetic.symbolic_dynamics(robot, synthetic.GRAVITY)
    numeric = kr.derive(model).numeric(truth)
    lower, upper, velocity = synthetic.joint_limit_arrays(robot)
    n = len(robot.joint_labels)
    gains = synthetic.random_gains(n, rng)
    trajectory = synthetic.excitation(n, PERIOD, rng, lower=lower, upper=upper, velocity=velocity)
    run = synthetic.defective_recording(model, truth, trajectory, gains=gains, rng=rng, duration=samples * MEAN_STEP, dynamics=numeric)
    Recording(run.t, run.q, current=run.current, joints=robot.joint_labels, source=str(path)).write(path)
    return truth, dict(zip(robot.joint_labels, gains.tolist())), len(run.t)


def identify(robot, path, gains, truth):
    start = time.perf_counter()
    # max_gap: in a million rows some runs of 9 or 10 stale rows in a row occur (0.25^10 per row), a quarter second
    result = kr.identify(robot, path, gains=gains, cutoff=5.0, method="wls", max_gap=0.5)
    seconds = time.perf_counter() - start
    true_base = result.T @ np.array([truth[name] for name in result.regressors.parameters])
    z = np.abs(result.values - true_base) / np.array([result.std[name] for name in result.names])
    return result, seconds, float(z.max())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000, help="rows of the recording (default 1,000,000)")
    parser.add_argument("--baseline", type=int, default=20_000, help="rows of the baseline recording (default 20,000)")
    args = parser.parse_args(argv)
    robot = kr.load(kr.frames_path("arm7"), gravity=synthetic.GRAVITY)
    with tempfile.TemporaryDirectory() as folder:
        rows = {}
        runs = {}
        for name, samples in (("baseline", args.baseline), ("long", args.samples)):
            start = time.perf_counter()
            path = Path(folder) / f"{name}.npz"
            truth, gains, rows[name] = write_recording(path, robot, samples, np.random.default_rng(24))
            print(f"{name}: {rows[name]:,} rows written in {time.perf_counter() - start:.1f} s ({path.stat().st_size / 2**20:.0f} MiB)")
            identify(robot, path, gains, truth) if name == "baseline" else None  # the first call compiles the models
            runs[name] = identify(robot, path, gains, truth)
        base_result, base_time, base_z = runs["baseline"]
        result, seconds, z = runs["long"]
    per_sample = {name: runs[name][1] / rows[name] for name in runs}
    print(f"\nbaseline: {rows['baseline']:,} rows identified in {base_time:.2f} s ({1e6 * per_sample['baseline']:.2f} us per row), "
          f"{len(base_result.names)} base parameters, truth within {base_z:.2f} std")
    print(f"whole file: {rows['long']:,} rows identified in {seconds:.1f} s ({rows['long'] / seconds:,.0f} rows/s, "
          f"{1e6 * per_sample['long']:.2f} us per row), {len(result.names)} base parameters, truth within {z:.2f} std")
    print(f"time per row, whole file / baseline: {per_sample['long'] / per_sample['baseline']:.2f}")
    print(f"peak resident memory of the process: {peak_memory() / GB:.2f} GB")
    for line in result.log:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
