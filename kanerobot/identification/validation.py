"""Validation of identified parameters on a recording they were not fitted to.

An estimate is worth what it predicts: the torques that the identified model
computes from a *test* run's motion are compared with the torques measured in
that run (Khalil and Dombre, ch. 14: cross validation on another trajectory).
Per joint j, with ``e = tau - tau_hat`` over the N samples kept::

    relative RMS error   r_j = sqrt(sum e_j^2) / sqrt(sum tau_j^2)
    correlation          rho_j = corr(tau_j, tau_hat_j)

and over all joints ``r = |e| / |tau|`` (Frobenius norms).  ``r_j = 1`` is
what predicting zero torque gives; the noise of the measurement is the floor
that no estimate goes below (the true parameters reach it).

:meth:`IdentificationResult.validate <kanerobot.identification.identify.IdentificationResult.validate>`
makes a :class:`Validation`; :meth:`Validation.summary` is the table and
:meth:`Validation.figures` the figures (measured and predicted torque per
joint; the residuals), written by :meth:`Validation.save_figures`.

Examples
--------
>>> import numpy as np
>>> t = np.linspace(0.0, 1.0, 101)
>>> tau = np.column_stack([np.sin(2 * np.pi * t), np.cos(2 * np.pi * t)])
>>> check = Validation(t, tau, 0.9 * tau, joints=("1", "2"))
>>> round(check.relative_rms["1"], 6), round(check.correlation["2"], 6)
(0.1, 1.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from kanerobot.errors import KaneRobotError

__all__ = ["Validation"]


class Validation:
    """Measured and predicted torques of one recording, and how far apart they are.

    Parameters
    ----------
    t : array_like, shape (N,)
    measured, predicted : array_like, shape (N, n)
        Joint torques (N m, or N for prismatic joints).
    joints : sequence of str
        The n joint names.
    source : str, optional
        The recording, for titles and messages.
    log : sequence of str, optional
        What was done to the recording before the comparison.
    units : sequence of str, optional
        The unit of each joint's torque, for the figures (``N·m`` for a
        revolute joint, ``N`` for a prismatic one); default ``N·m``.

    Attributes
    ----------
    relative_rms : dict
        ``{joint: r_j}`` (module notes); ``inf`` for a joint whose measured
        torque is 0 throughout, NaN if its prediction is 0 too.
    correlation : dict
        ``{joint: rho_j}`` (NaN for a joint whose torque is constant).
    overall : float
        ``r`` over all joints.
    residual : numpy.ndarray, shape (N, n)
        ``measured - predicted``.
    """

    def __init__(self, t, measured, predicted, joints: Sequence[str], source: str = "recording", log: Sequence[str] = (),
                 units: Sequence[str] | None = None):  # fmt: skip
        self.t = np.asarray(t, dtype=float)
        self.measured = np.atleast_2d(np.asarray(measured, dtype=float))
        self.predicted = np.atleast_2d(np.asarray(predicted, dtype=float))
        if self.measured.shape != self.predicted.shape or self.measured.shape[0] != len(self.t):
            raise KaneRobotError(f"measured {self.measured.shape} and predicted {self.predicted.shape} torques must both have one row per "
                                 f"time sample ({len(self.t)})")  # fmt: skip
        self.joints = tuple(str(j) for j in joints)
        self.source = str(source)
        self.log = list(log)
        self.units = tuple(units) if units is not None else ("N·m",) * len(self.joints)
        self.residual = self.measured - self.predicted
        norm = np.linalg.norm(self.measured, axis=0)
        error = np.linalg.norm(self.residual, axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):  # a joint without torque: inf, or NaN if predicted 0 too
            ratio = np.where(norm > 0, error / np.where(norm > 0, norm, 1.0), np.where(error > 0, np.inf, np.nan))
        self.relative_rms = dict(zip(self.joints, ratio.tolist()))
        total = float(np.linalg.norm(self.measured))
        self.overall = float(np.linalg.norm(self.residual)) / total if total > 0 else float("inf")
        self.correlation = {j: _correlation(self.measured[:, k], self.predicted[:, k]) for k, j in enumerate(self.joints)}

    def summary(self) -> str:
        """The table: per joint the RMS of the measured torque and of the error, ``r_j`` and ``rho_j``.

        Returns
        -------
        str
        """
        rms = np.sqrt(np.mean(self.measured**2, axis=0))
        err = np.sqrt(np.mean(self.residual**2, axis=0))
        width = max(8, *(len(j) for j in self.joints))
        lines = [f"validation on {self.source}: {len(self.t)} samples", f"{'joint':>{width}s} {'rms tau':>11s} {'rms error':>11s} {'rel. error':>10s} {'corr.':>8s}"]
        for k, joint in enumerate(self.joints):
            lines.append(f"{joint:>{width}s} {rms[k]:11.4g} {err[k]:11.4g} {self.relative_rms[joint]:10.4f} {self.correlation[joint]:8.4f}")
        lines.append(f"{'all':>{width}s} {'':11s} {'':11s} {self.overall:10.4f}")
        return "\n".join(lines)

    def figures(self):
        """Two matplotlib figures: measured and predicted torque per joint, and the residuals.

        Returns
        -------
        list of (str, matplotlib.figure.Figure)
            ``("torques", figure)`` and ``("residuals", figure)``.
        """
        from kanerobot.visual.figures import figure_grid, require_matplotlib

        require_matplotlib("the validation figures")
        n = len(self.joints)
        torques, axes = figure_grid(n, height=1.6, width=9.0)
        for k, (ax, joint) in enumerate(zip(axes, self.joints)):
            ax.plot(self.t, self.measured[:, k], color="0.55", lw=0.8, label="measured")
            ax.plot(self.t, self.predicted[:, k], color="C0", lw=1.2, label="predicted")
            ax.set_ylabel(f"{joint}\n({self.units[k]})")
            ax.set_title(f"{joint}: relative RMS error {self.relative_rms[joint]:.3f}, correlation {self.correlation[joint]:.3f}",
                         fontsize="small", loc="left")  # fmt: skip
            ax.legend(loc="upper right", fontsize="x-small")
        axes[-1].set_xlabel("t (s)")
        name = Path(self.source).name
        torques.suptitle(f"Measured and predicted joint torques on {name} (relative RMS error, all joints: {self.overall:.3f})")
        residuals, axes = figure_grid(n, height=1.3, width=9.0)
        for k, (ax, joint) in enumerate(zip(axes, self.joints)):
            ax.plot(self.t, self.residual[:, k], color="C3", lw=0.7, label="measured - predicted")
            ax.axhline(0.0, color="0.3", lw=0.5)
            ax.set_ylabel(f"{joint}\n({self.units[k]})")
            ax.legend(loc="upper right", fontsize="x-small")
        axes[-1].set_xlabel("t (s)")
        residuals.suptitle(f"Torque residuals on {name}")
        return [("torques", torques), ("residuals", residuals)]

    def save_figures(self, prefix: str | Path) -> list[Path]:
        """Write :meth:`figures` as ``<prefix>_torques.png`` and ``<prefix>_residuals.png``
        (or the suffix of ``prefix`` when it has one of .png, .svg, .pdf).

        Returns
        -------
        list of pathlib.Path
        """
        from kanerobot.visual.figures import FORMATS, save

        prefix = Path(prefix)
        suffix = prefix.suffix.lower() if prefix.suffix.lower() in FORMATS else ".png"
        stem = prefix.with_suffix("") if prefix.suffix.lower() in FORMATS else prefix
        return [save(figure, stem.parent / f"{stem.name}_{name}{suffix}") for name, figure in self.figures()]

    def __repr__(self):
        return f"<Validation on {self.source}: {len(self.t)} samples, relative RMS error {self.overall:.4f}>"


def _correlation(a, b):
    a, b = a - a.mean(), b - b.mean()
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norm if norm > 0 else float("nan")
