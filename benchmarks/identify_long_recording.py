"""Identification from a long recording, chunk by chunk: 10 million RX-90 samples in bounded memory.

Issue 18: ``kr.identify`` on recordings that do not fit in memory.  This
script writes a simulated RX-90 excitation of ``--samples`` samples at
1 kHz (default 10,000,000: 2 h 47 min) as NPZ files of ``--file-samples``
samples in a temporary folder, generating it block by block (positions,
rates and accelerations of a Fourier motion in closed form, torques by the
compiled inverse dynamics, 1 % torque noise and 1e-5 rad of position noise),
so that generating stays bounded too.  Then:

1. the folder is identified chunk by chunk (``method="wls"``, positions
   low-passed at 20 Hz and differentiated, the default chunk size); printed:
   the wall time, samples per second, and the process's peak resident
   memory so far (``ru_maxrss``: generation, model compilation and the
   identification), against the issue's 2 GB;
2. the first ``--subset`` samples (whole files) are identified both ways,
   chunked from their files and in memory (``load_data`` then
   ``identify``); the largest relative differences of the estimates,
   standard deviations and WLS weights are printed against the issue's
   1e-10, and the time of each (the baseline: the in-memory path, per
   sample).  The subset comes after the long run, since the in-memory path's
   own peak (its whole regressor) would otherwise hide the chunked one's.

BLAS runs on one thread (``OPENBLAS_NUM_THREADS=1`` unless set): see the
note at the imports.  Exit status 1 when memory or agreement miss their targets.  No requirement
beyond kanerobot (NPZ files; Parquet would need pyarrow).

Run:  python benchmarks/identify_long_recording.py [--samples N] [--file-samples M] [--subset S] [--chunk-size C]
"""

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import needs  # noqa: F401 -- first: one line and exit status 2 when kanerobot is not installed

# One BLAS thread, set before numpy loads its BLAS: the QR of a block 53 columns wide gains nothing from
# a second thread, and on a shared machine spinning BLAS threads made each chunk 6 times slower (measured).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402 -- after the thread settings

import kanerobot as kr  # noqa: E402
from kanerobot.dynamics.parameters import random_parameters  # noqa: E402
from kanerobot.identification.chunked import CHUNK_SIZE  # noqa: E402
from kanerobot.identification.data import RecordedData, load_data, save_data  # noqa: E402
from kanerobot.identification.excitation import FourierTrajectory  # noqa: E402
from kanerobot.identification.numeric_regressor import Regressors  # noqa: E402

DT = 1e-3
GB = 2**30
MEMORY_TARGET = 2 * GB
AGREEMENT_TARGET = 1e-10
OPTIONS = dict(method="wls", cutoff=20.0)


def peak_memory():
    """The process's peak resident memory so far, in bytes (``ru_maxrss`` is in kB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else 1024 * peak


def generate(fn, folder, samples, file_samples, block=100_000, seed=0):
    """Write the excitation as NPZ files of ``file_samples``, computed ``block`` samples at a time; return the files."""
    rng = np.random.default_rng(seed)
    tr = FourierTrajectory(rng.uniform(-0.3, 0.3, 6), 0.4 * rng.normal(size=(6, 4)), 0.4 * rng.normal(size=(6, 4)), 0.1)
    scale = None
    files = []
    for start in range(0, samples, file_samples):
        m = min(file_samples, samples - start)
        t = (start + np.arange(m)) * DT
        q, tau = np.empty((m, 6)), np.empty((m, 6))
        for a in range(0, m, block):
            b = min(a + block, m)
            qa, qda, qdda = tr.sample(t[a:b])
            tau[a:b] = fn.inverse_dynamics(qa, qda, qdda)
            scale = np.sqrt(np.mean(tau[a:b] ** 2, axis=0)) if scale is None else scale
            tau[a:b] += 0.01 * scale * rng.normal(size=(b - a, 6))
            q[a:b] = qa + 1e-5 * rng.normal(size=(b - a, 6))
        files.append(save_data(RecordedData(t, q, tau), folder / f"rx90_{start // file_samples:05d}.npz"))
    return files


def largest_difference(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)) / np.abs(np.asarray(b))))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000_000)
    parser.add_argument("--file-samples", type=int, default=100_000)
    parser.add_argument("--subset", type=int, default=200_000, help="samples identified both ways (whole files)")
    parser.add_argument("--chunk-size", type=int, default=CHUNK_SIZE)
    args = parser.parse_args()

    robot = kr.load(kr.frames_path("rx90"))
    values = random_parameters(robot, np.random.default_rng(5), wrench=False)
    model = kr.derive(robot)
    fn = model.numeric({k: values[k] for k in model.parameters})
    regs = Regressors(robot, values)
    ok = True
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        start = time.perf_counter()
        files = generate(fn, folder, args.samples, args.file_samples)
        print(f"RX-90 excitation: {args.samples:,} samples at {1 / DT:g} Hz in {len(files)} NPZ files of {args.file_samples:,}, "
              f"written in {time.perf_counter() - start:.0f} s; peak memory so far {peak_memory() / GB:.2f} GB")  # fmt: skip

        start = time.perf_counter()
        result = kr.identify(regs, folder, chunk_size=args.chunk_size, **OPTIONS)
        seconds = time.perf_counter() - start
        peak = peak_memory()
        print(f"chunked identification ({OPTIONS}, chunks of {args.chunk_size:,}): {result.rows:,} equations, "
              f"{len(result.names)} base parameters, condition number {result.condition_number:.3g}")
        print(f"  {seconds:.0f} s ({args.samples / seconds:,.0f} samples/s); peak memory of the process {peak / GB:.2f} GB "
              f"(target < {MEMORY_TARGET / GB:.0f} GB: {'met' if peak < MEMORY_TARGET else 'MISSED'})")  # fmt: skip
        ok &= peak < MEMORY_TARGET

        subset = files[: max(1, -(-args.subset // args.file_samples))]
        n = min(args.samples, len(subset) * args.file_samples)
        start = time.perf_counter()
        chunked = kr.identify(regs, subset, chunk_size=args.chunk_size, **OPTIONS)
        chunked_seconds = time.perf_counter() - start
        parts = [load_data(path) for path in subset]
        data = RecordedData(*(np.concatenate([getattr(p, name) for p in parts]) for name in ("t", "q", "tau")))
        del parts
        start = time.perf_counter()
        memory = kr.identify(regs, data, **OPTIONS)
        memory_seconds = time.perf_counter() - start
        std = ([chunked.std[k] for k in chunked.names], [memory.std[k] for k in memory.names])
        differences = {
            "estimates": largest_difference(chunked.values, memory.values),
            "standard deviations": largest_difference(*std),
            "WLS weights": largest_difference(chunked.weights, memory.weights),
        }
        print(f"the first {n:,} samples both ways ({len(subset)} files): chunked {chunked_seconds:.1f} s, in memory {memory_seconds:.1f} s "
              f"(baseline); ratio chunked / in memory {chunked_seconds / memory_seconds:.2f}")  # fmt: skip
        for what, value in differences.items():
            print(f"  largest relative difference of the {what}: {value:.1e} (target <= {AGREEMENT_TARGET:g})")
        ok &= max(differences.values()) <= AGREEMENT_TARGET and chunked.rows == memory.rows
    print("targets met" if ok else "a target MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
