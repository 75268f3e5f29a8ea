"""kr.fourier_excitation: SLSQP with the analytic gradient of log cond(W_b) against SLSQP's finite differences.

Issue 25 (defect 8): on an 18-joint robot ``kr.fourier_excitation`` ran 230 s
in silence.  Its SLSQP had no gradient, so every iteration differenced the
objective in each of the ``2 n L`` Fourier coefficients: ``2 n L + 1``
regressors over the samples and as many SVDs (145 of each for n = 18, L = 4).
The gradient is now analytic in the singular vectors (``d log(s_1 / s_m) =
u_1' dW v_1 / s_1 - u_m' dW v_m / s_m``), with ``dW`` from the regressor's
derivatives in each joint's q, qd and qdd at the samples: 3 n regressor
batches and one SVD.

Measured here, in one run, on RX-90 (6 joints, 52 base parameters) and Krang
(17 joints, 160): the time of one gradient both ways and their agreement,
then the whole optimisation both ways from the same start with the same
constraints and ``maxiter`` (the old path is SLSQP on the same objective
without ``jac``, as ``fourier_excitation`` ran it), and the condition
numbers each reached.  One BLAS thread, as ``fourier_excitation`` runs.

Run:  python benchmarks/excitation_gradient.py [maxiter]   (default 15)
"""

import sys
import time

import needs  # noqa: F401 -- first: one line and exit status 2 when kanerobot is not installed
import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.identification.excitation import _problem, _slsqp, _start
from kanerobot.identification.numeric_regressor import Regressors

ROBOTS = ("rx90", "krang")


def timed(function):
    start = time.perf_counter()
    out = function()
    return time.perf_counter() - start, out


STEP = float(np.sqrt(np.finfo(float).eps))  # scipy's forward-difference step


def numeric_gradient(value, x, step=STEP):
    """Forward differences, as SLSQP takes them without ``jac``."""
    f0 = value(x)
    out = np.empty_like(x)
    for k in range(len(x)):
        e = np.zeros_like(x)
        e[k] = step * max(1.0, abs(x[k]))
        out[k] = (value(x + e) - f0) / e[k]
    return out


def compare(name, maxiter):
    robot = kr.load(kr.frames_path(name))
    values = random_parameters(robot, np.random.default_rng(0), wrench=False)
    regs = Regressors(robot, values, backend="numpy")
    base = regs.base_parameter_set()
    problem, limits = _problem(regs, base, 4, 0.2, None, (-np.pi, np.pi), 2.0, 10.0, None)
    constraints = _slsqp(limits)
    x0 = _start(limits, regs.n * 8, 0)
    options = {"maxiter": maxiter, "ftol": 1e-6}
    print(f"\n{robot.name}: {regs.n} joints, {len(base)} base parameters, {len(problem.times)} samples, {x0.size} coefficients")
    t_new, analytic = timed(lambda: problem.gradient(x0))
    t_old, differenced = timed(lambda: numeric_gradient(problem.value, x0))
    gap = np.abs(analytic - differenced).max() / np.abs(differenced).max()
    print(f"  one gradient: analytic {t_new:.3f} s, finite differences {t_old:.3f} s, ratio {t_old / t_new:.1f}; "
          f"largest difference {gap:.1e} of the largest component")  # fmt: skip
    t_new, new = timed(lambda: minimize(problem.value, x0, jac=problem.gradient, method="SLSQP", constraints=constraints, options=options))
    t_old, old = timed(lambda: minimize(problem.value, x0, method="SLSQP", constraints=constraints, options=options))
    print(f"  SLSQP, maxiter {maxiter}: analytic gradient {t_new:.1f} s ({new.nit} iterations, condition number {np.exp(new.fun):.4g}); "
          f"finite differences {t_old:.1f} s ({old.nit} iterations, {np.exp(old.fun):.4g}); start {np.exp(problem.value(x0)):.4g}")
    print(f"  ratio old / new: {t_old / t_new:.1f} (per iteration {(t_old / max(old.nit, 1)) / (t_new / max(new.nit, 1)):.1f})")


def main():
    maxiter = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    with threadpool_limits(limits=1, user_api="blas"):
        for name in ROBOTS:
            compare(name, maxiter)


if __name__ == "__main__":
    main()
