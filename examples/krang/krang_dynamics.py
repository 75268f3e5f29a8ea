"""Krang's A and C matrices, the report's goal, by the Newton-Euler engine.

The seed report derives the inertia matrix A and the Coriolis matrix C of
Krang on fixed wheels (A qdd + C qd + Q = F) by Kane's method.  Here they
come from kanerobot's customized symbolic algorithms (composite links for A,
Christoffel symbols of A for C), as programs of intermediate variables with
their cost.  The script then evaluates them with random physically
consistent parameters, checks the properties a controller writer relies on
(A symmetric positive definite, A-dot - 2C skew-symmetric, torques equal to
A qdd + C qd + Q) and writes C code for A and C.

Run from the repository:  python examples/krang/krang_dynamics.py [OUTPUT_FOLDER]
"""

import sys
import time
from pathlib import Path

import numpy as np

import kanerobot as kr
from kanerobot.codegen import generate, write
from kanerobot.dynamics.parameters import random_parameters


def main(output=None):
    krang = kr.load(kr.frames_path("krang"))
    model = kr.derive(krang)
    for name in ("mass_matrix", "coriolis_matrix", "gravity", "inverse_dynamics"):
        start = time.perf_counter()
        counts = model.op_count(name)
        print(f"{name:17s} {counts['mul']:6d} '*' {counts['add']:6d} '+' {counts['fn']:3d} functions  ({time.perf_counter() - start:.1f} s)")

    rng = np.random.default_rng(17)
    values = random_parameters(krang, rng, friction=False, wrench=False)
    fn = model.numeric(values)
    q, qd, qdd = rng.uniform(-1, 1, (3, krang.nj))
    A, C, Q = fn.mass_matrix(q), fn.coriolis_matrix(q, qd), fn.gravity(q)
    print(f"\nA is {A.shape[0]}x{A.shape[1]}, smallest eigenvalue {np.linalg.eigvalsh(A).min():.3e}, asymmetry {np.abs(A - A.T).max():.1e}")
    h = 1e-6
    A_dot = (fn.mass_matrix(q + h * qd) - fn.mass_matrix(q - h * qd)) / (2 * h)
    N = A_dot - 2 * C
    print(f"A-dot - 2C: largest |N + N^T| = {np.abs(N + N.T).max():.1e} (skew-symmetric)")
    residual = fn.inverse_dynamics(q, qd, qdd) - (A @ qdd + C @ qd + Q)
    print(f"Newton-Euler torques - (A qdd + C qd + Q): {np.abs(residual).max():.1e}")
    assert np.abs(residual).max() < 1e-8 and np.abs(N + N.T).max() < 1e-5

    if output:
        folder = Path(output)
        folder.mkdir(parents=True, exist_ok=True)
        groups = [("q", model.q), ("qd", model.qd), ("p", [kr.robot.expressions.symbol(p) for p in model.parameters])]
        n = krang.nj
        write(folder / "krang_A.c", generate(model.program("mass_matrix"), "c", "krang_A", groups[:1] + groups[2:], outputs=(n, n)))
        write(folder / "krang_C.c", generate(model.program("coriolis_matrix"), "c", "krang_C", groups, outputs=(n, n)))
        print(f"\nwritten {folder / 'krang_A.c'} and {folder / 'krang_C.c'}; p holds the {len(model.parameters)} names of model.parameters")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
