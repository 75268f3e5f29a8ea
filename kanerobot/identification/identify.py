"""Identification of the base dynamic parameters from recorded motion.

:func:`identify` goes from a recording ``(t, q, tau)`` to estimates one can
trust (Gautier's method, SYMORO+ section 6):

1. rates and accelerations from the positions: zero-phase Butterworth
   low-pass then central differences (:mod:`.filtering`), unless the
   recording carries them;
2. the observation matrix, one of three models:

   - ``form="dynamic"``: ``tau = D_b(q, qd, qdd) K_b`` (39) at every sample;
   - ``form="filtered"``: ``F[tau] = (F'[D1] + F[D2])_b K_b`` (44), no
     acceleration;
   - ``form="energy"``: ``int qd^T tau = (Delta h + friction integrals)_b K_b``
     (47) over consecutive intervals;

   ``D`` from the identification model's program
   (:func:`~.regressor.identification_model`), ``D1``, ``D2``, ``h`` by the
   unit-parameter rule (:class:`~.numeric_regressor.Regressors`), restricted
   to the base columns of :func:`~.base_parameters.base_parameter_set`
   (numeric method with the given geometry and gravity, or a set passed as
   ``base``): ``D_b = D[..., columns]`` and ``K_b = T K`` with
   ``T = base.matrix(values)``;
3. parallel decimation of the torques and of the observation matrix alike;
4. least squares: ``method="ls"`` (ordinary) or ``"wls"`` (each joint's
   equations weighted by the inverse standard deviation of its own
   residual, Gautier 1997).  With ``r`` rows and ``nb`` base parameters::

       K_b = argmin |W K_b - y|^2,    sigma^2 = |y - W K_b|^2 / (r - nb)
       C = sigma^2 (W^T W)^-1,        sigma_i = sqrt(C_ii),   %sigma_i = 100 sigma_i / |K_b,i|

   and the condition number of ``W`` (2-norm) says how well the motion
   excites the parameters (:mod:`.excitation` minimises it).  All of it
   comes from the triangular factor of each joint's ``[W_j | y_j]``
   (:mod:`.tsqr`), which a recording too long for memory builds chunk by
   chunk (:mod:`.chunked`, a folder or list of files, or ``chunk_size=``);
5. ``physical=True``: standard parameters of real bodies closest to the
   least-squares estimate in the metric of its covariance,
   ``min (T K - K_b)^T C^-1 (T K - K_b)``, over each link's pseudo-inertia
   ``[[Sigma, MS], [MS^T, M]] = U U^T`` (``Sigma = 1/2 tr(J) I - J``, U upper
   triangular with a positive diagonal, a Cholesky factor: positive mass
   and an inertia about the centre of mass that satisfies the triangle
   inequalities) and ``IA, FV, FS >= 0`` (bounds of ``least_squares``).

Examples
--------
>>> import numpy as np, kanerobot as kr
>>> robot = kr.load(kr.frames_path("planar2"))
>>> true = {"ZZ1": 0.5, "ZZ2": 0.2, "MX2": 0.3, "MY2": 0.05, "M2": 1.0, "IA1": 0.1, "IA2": 0.05,
...         "FV1": 0.2, "FV2": 0.1, "FS1": 0.0, "FS2": 0.0}
>>> values = dict(dict.fromkeys(kr.derive(robot).parameters, 0.0), L1=0.5, G3=-9.81, **true)
>>> fn = kr.derive(robot).numeric(values)
>>> t = np.linspace(0.0, 4.0, 801)
>>> q = np.column_stack([np.sin(2 * t) + 0.3 * np.sin(5 * t), np.cos(3 * t) - 0.5 * np.sin(7 * t)])
>>> qd = np.column_stack([2 * np.cos(2 * t) + 1.5 * np.cos(5 * t), -3 * np.sin(3 * t) - 3.5 * np.cos(7 * t)])
>>> qdd = np.column_stack([-4 * np.sin(2 * t) - 7.5 * np.sin(5 * t), -9 * np.cos(3 * t) + 24.5 * np.sin(7 * t)])
>>> data = {"t": t, "q": q, "qd": qd, "qdd": qdd, "tau": fn.inverse_dynamics(q, qd, qdd)}
>>> result = identify(robot, data, values={"L1": 0.5, "G3": -9.81})
>>> round(result.estimates["ZZ2"], 9), result.relative_std["ZZ2"] < 1e-6
(0.2, True)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from kanerobot.dynamics.model import DynamicModel
from kanerobot.errors import KaneRobotError
from kanerobot.identification import chunked, filtering
from kanerobot.identification.base_parameters import BaseParameterSet
from kanerobot.identification.data import RecordedData, as_recorded
from kanerobot.identification.drives import Drives, as_drives
from kanerobot.identification.energy_model import energy_model
from kanerobot.identification.numeric_regressor import Regressors
from kanerobot.identification.regressor import IdentificationModel
from kanerobot.identification.tsqr import Factors, joint_weights, solve, square_factor
from kanerobot.identification.validation import Validation
from kanerobot.robot.description import Robot
from kanerobot.robot.files import toml_key
from kanerobot.robot.joints import Prismatic
from kanerobot.simulation import SimulationResult

__all__ = ["FORMS", "METHODS", "IdentificationResult", "identify", "physical_estimate"]

#: Estimators of :func:`identify`.
METHODS = ("ls", "wls")
#: Identification models of :func:`identify`.
FORMS = ("dynamic", "filtered", "energy")
#: Samples of a recording in memory above which the dynamic model's observation matrix is
#: factored block by block (:mod:`.tsqr`) rather than built whole: (N, n, p) floats grow fast.
BLOCK_SAMPLES = 50_000


def as_regressors(model, values, friction, rotor, backend):
    """``model`` as numeric :class:`~kanerobot.identification.numeric_regressor.Regressors`
    (returned as is when it already is one), for :func:`identify` and the
    excitation optimisation."""
    if isinstance(model, Regressors):
        return model
    if values is None:  # the robot's own numbers (a URDF's lengths and gravity)
        values = dict(_robot_of(model).values)
    return Regressors(model, values, friction=friction, rotor=rotor, backend=backend)


def identify(
    model: Robot | DynamicModel | IdentificationModel | Regressors,
    data: RecordedData | str | os.PathLike | Mapping[str, ArrayLike] | SimulationResult,
    values: Mapping[str, float] | None = None,
    method: str = "ls",
    *,
    form: str = "dynamic",
    cutoff: float | None = None,
    decimation: int = 1,
    bandwidth: float | None = None,
    window: int = 20,
    trim: int | None = None,
    physical: bool = False,
    friction: bool = True,
    rotor: bool = True,
    base: BaseParameterSet | None = None,
    backend: str = "auto",
    chunk_size: int | None = None,
    gains: Drives | str | os.PathLike | Mapping[str, float] | ArrayLike | None = None,
    period: float | None = None,
    max_gap: float | None = None,
    identify_gains: bool = False,
) -> IdentificationResult:
    """Estimate the base dynamic parameters of a robot from a recording.

    Parameters
    ----------
    model : Robot, DynamicModel, IdentificationModel or Regressors
        The robot (fixed-base serial or tree), its dynamic or identification
        model, or its :class:`~.numeric_regressor.Regressors` (then
        ``values``, ``friction``, ``rotor`` and ``backend`` are its own).
        ``D`` is the identification model's program.
    data : RecordedData, str, pathlib.Path, list, mapping or SimulationResult
        ``t`` (N,), ``q`` and ``tau`` (N, n), optionally ``qd``, ``qdd``; a
        path is read by :func:`~.data.load_data` (CSV or NPZ).  A folder,
        a list of files or a Parquet file is read chunk by chunk
        (:mod:`.chunked`: CSV, NPZ and Parquet files that continue one
        another), for recordings longer than memory; ``form="dynamic"``.
    values : mapping, optional
        ``{name: float}`` of the geometric and gravity symbols (``L1``,
        ``D3``, ``G3`` ...); other entries are ignored.  Default: the
        robot's own ``robot.values`` (a URDF's lengths and gravity).  The
        values of dynamic parameters are never used: every standard
        parameter that the description holds as a symbol is an unknown
        (a URDF's inertias, zeros included, and ``IA``, ``FV``, ``FS``).
    method : {"ls", "wls"}
        Ordinary or weighted (per joint) least squares.
    form : {"dynamic", "filtered", "energy"}
        The identification model (module notes).
    cutoff : float, optional
        Cut-off frequency (Hz) of the zero-phase Butterworth filter of the
        positions before differentiation (fourth-order central
        differences); none by default (second-order differences of the raw
        positions), also for a recording file or a ``Recording``, unlike
        :meth:`~kanerobot.identification.recording.Recording.prepare`'s own
        default: give one for a real robot's log.  When given, rates and
        accelerations come from the filtered positions even if the
        recording has measured ones.
    decimation : int, optional
        Factor of the parallel decimation of torques and observation matrix.
    bandwidth : float, optional
        ``a`` (rad/s) of the filters F, F' of ``form="filtered"``; default
        a tenth of the sampling frequency, ``2 pi / (10 dt)``.
    window : int, optional
        Samples per interval of ``form="energy"``.
    trim : int, optional
        Samples dropped at each end (after decimation): the ends of the
        filters and differences.  Default 2, or 10 with decimation, and
        with ``cutoff`` the first and last ``3 / cutoff`` seconds
        (:func:`~.filtering.default_trim`: filtfilt's end transients); the
        filtered model also drops the first ``10 / a`` seconds.
    physical : bool, optional
        Also a physically consistent estimate (module notes); the
        least-squares one stays in ``result.ls_estimates``.
    friction, rotor : bool, optional
        Identify ``FV, FS`` and ``IA``.
    base : BaseParameterSet, optional
        The base parameters (default: :func:`~.base_parameters.base_parameter_set`
        with ``method="numeric"``, the geometry and gravity of ``values`` and
        ``friction``); matched to the regressor's columns by name
        (:meth:`~.numeric_regressor.Regressors.base_columns`).
    backend : {"auto", "c", "numpy"}, optional
    gains : Drives, path, mapping or sequence, optional
        Drive gains (:mod:`.drives`: joint torque per ampere) for a
        recording of motor currents (``current_<joint>`` columns, or the
        ``current`` of a :class:`~kanerobot.identification.recording.Recording`): ``tau = g i``.
        A TOML file, ``{joint: gain}`` or n numbers in the joints' order.
    identify_gains : bool, optional
        Identify the drive gains of the joints that ``gains`` leaves out,
        with the base parameters, by output error: their currents are the
        measurements, ``i_j = D_j K_b / g_j`` (a linear fit of ``D_j K_b -
        g_j i_j = 0`` would shrink every parameter and gain toward 0); the
        gains given, at least one, fix the scale (every parameter and gain
        scaled alike fits as well).  The result's ``gains`` and
        ``gain_std`` hold them; validation and ``save`` use them.  For the
        dynamic model of a recording in memory, without ``physical``.  A
        gain is seen through the inertial coupling of its joint's equation
        with the others': a light wrist's is known less well (the summary
        names those above 10 % relative standard deviation).
    period, max_gap : float, optional
        Of :meth:`~kanerobot.identification.recording.Recording.prepare`: the uniform grid a
        recording with jittered time stamps or stale rows is resampled to
        (default its median step), and the longest step that is not a gap
        (an error).  A recording read from one CSV or NPZ file, or given as
        a :class:`~kanerobot.identification.recording.Recording`, is prepared this way (what was
        done is in ``result.log``); ``cutoff`` is its low-pass filter.
    chunk_size : int, optional
        Read ``data`` (any of the above) in chunks of this many samples
        and solve by a tall-skinny QR (:mod:`.chunked`): memory for one
        chunk, the same estimates and standard deviations as in memory to
        rounding.  One CSV or NPZ file, or a ``Recording``, is read and
        prepared in memory first (stale rows, resampling), then solved
        chunk by chunk.  Default :data:`~.chunked.CHUNK_SIZE` for a folder, a list
        or a Parquet file, none (all in memory) otherwise.  The result then
        has no ``residual`` array (``relative_residual`` is there).

    Returns
    -------
    IdentificationResult

    Raises
    ------
    KaneRobotError
        For an unknown method or form, a recording that does not match the
        robot (:class:`~.data.DataError`), too few samples for the
        parameters, missing geometric values, a base set that does not
        match the regressor's parameters.
    """
    if method not in METHODS:
        raise KaneRobotError(f"unknown identification method {method!r}: choose among {', '.join(METHODS)}")
    if form not in FORMS:
        raise KaneRobotError(f"unknown identification model {form!r}: choose among {', '.join(FORMS)}")
    regs = as_regressors(model, values, friction, rotor, backend)
    drives = as_drives(gains, regs.robot.joint_labels)
    unknown_gains, reading_drives = _unknown_gains(drives, regs.robot.joint_labels, identify_gains, form, physical, data, chunk_size)
    base = base if base is not None else regs.base_parameter_set()
    selected = regs.base_columns(base)
    columns = selected.columns
    given_trim = trim
    options = dict(cutoff=cutoff, decimation=decimation, trim=trim, period=period, max_gap=max_gap, drives=drives)
    log: list[str] = []
    filtered = False
    at_samples = form == "dynamic" and decimation == 1 and not chunked.is_chunked(data, chunk_size)
    options["at"] = "samples" if at_samples else "grid"
    if _is_recording(data):  # cleaned in memory first, then solved whole or chunk by chunk
        data, log, filtered = prepared_recording(data, regs.robot, reading_drives, cutoff, period, max_gap, at=options["at"])
    elif drives is not None:
        raise KaneRobotError("gains= apply to motor currents: give the recording as one .csv/.npz file or a kanerobot Recording "
                             "with current_<joint> columns")  # fmt: skip
    elif period is not None or max_gap is not None:
        raise KaneRobotError("period= and max_gap= prepare a recording as it comes: give it as one .csv/.npz file, a kanerobot "
                             "Recording or a mapping with current (arrays in memory and folders are taken as they are)")  # fmt: skip
    if chunked.is_chunked(data, chunk_size):
        if form != "dynamic":
            raise KaneRobotError(f"form={form!r} needs the whole recording in memory: a recording read in chunks is identified "
                                 "with form='dynamic' (or read it whole with kanerobot.identification.load_data)")  # fmt: skip
        if given_trim is None and filtered:  # low-passed before: its ends trimmed as in memory
            assert isinstance(data, RecordedData)  # prepared_recording made it
            given_trim = filtering.default_trim(_period(data.t), cutoff, decimation)
        factors, _ = chunked.chunked_factors(regs, columns, data, chunk_size=chunk_size, cutoff=None if filtered else cutoff,
                                             decimation=decimation, trim=given_trim)  # fmt: skip
        options["trim"] = factors.trim
        groups = list(regs.robot.joint_labels)
        result = _solve(regs, base, selected, factors, None, groups, method, form, physical, options)
        result.log = log
        return result
    if not filtered:
        data = as_recorded(data, regs.robot)
    assert isinstance(data, RecordedData) and data.tau is not None  # filtered: prepared_recording made one, with torques
    # a recording prepared at its own time stamps has q, qd, qdd there: the dynamic model needs no period
    # its rates and accelerations given at any time stamps serve the dynamic model as they are
    measured = data.qd is not None and data.qdd is not None and cutoff is None and form == "dynamic" and decimation == 1
    dt = None if (filtered and at_samples) or measured else filtering.check_uniform(data.t, source=data.source)
    t = data.t
    trim = filtering.default_trim(dt or _period(t), cutoff, decimation) if given_trim is None else int(given_trim)
    options["trim"] = trim
    q, qd, qdd = chunked.motion(data.q, data.qd, data.qdd, dt, None if filtered else cutoff)
    if form == "energy":
        W, y = energy_model(regs, t, q, qd, data.tau, window=window)
        W, y = W[:, columns][:, None, :], y[:, None]  # one equation per interval: one group
        groups = ["energy"]
    else:
        if form == "dynamic" and decimation == 1 and len(t) > BLOCK_SAMPLES:
            # a long recording: the observation matrix block by block into the triangular factors
            # (memory for one block; the same estimate as whole, to rounding), no residual array kept
            first, last = trim, chunked.trimmed_rows(len(t), len(t), trim, trim)
            factors = Factors(regs.n, len(columns))
            for start in range(first, last, BLOCK_SAMPLES):
                rows = slice(start, min(start + BLOCK_SAMPLES, last))
                factors.add(regs.regressor(q[rows], qd[rows], qdd[rows])[:, :, columns], data.tau[rows])
            result = _solve(regs, base, selected, factors, None, list(regs.robot.joint_labels), method, form, physical, options,
                            unknown_gains, drives)  # fmt: skip
            result.log = log
            return result
        if form == "dynamic":
            W = regs.regressor(q, qd, qdd)[:, :, columns]
            y = data.tau
            start = 0
        else:
            assert dt is not None  # only the dynamic form reads the samples at their own time stamps
            a = bandwidth if bandwidth is not None else 2 * np.pi / (10 * dt)
            W, y = filtering.filtered_model(regs, t, q, qd, a, tau=data.tau)
            W = W[:, :, columns]
            start = int(np.ceil(10.0 / (a * dt)))
        W, y = filtering.decimate(W, decimation), filtering.decimate(y, decimation)
        first = max(trim, int(np.ceil(start / max(decimation, 1))))
        last = chunked.trimmed_rows(len(data.t), len(y), first, trim)
        W, y = W[first:last], y[first:last]
        groups = list(regs.robot.joint_labels)
    factors = Factors(len(groups), len(columns))
    factors.add(W, y)
    result = _solve(regs, base, selected, factors, (W, y), groups, method, form, physical, options, unknown_gains, drives)
    result.log = log
    return result


def _period(t):
    """The median step of time stamps ``t`` (those of a recording kept at its own samples)."""
    return float(np.median(np.diff(t)))


def _unknown_gains(drives, joints, identify_gains, form, physical, data, chunk_size):
    """``(unknown, reading)``: the indices of the joints whose gain :func:`identify` estimates, and the
    drives that read the recording (gain 1 for those: their torque column is the current)."""
    if not identify_gains:
        return [], drives
    given = [joint for joint in joints if drives is not None and joint in drives.gains]
    if not given:
        raise KaneRobotError("identify_gains: give the gain of at least one joint (gains=): it fixes the scale, since every parameter "
                             "and gain scaled alike fits the currents as well")  # fmt: skip
    if form != "dynamic" or physical or chunked.is_chunked(data, chunk_size):
        raise KaneRobotError("identify_gains is for the dynamic model of a recording in memory, without physical=True: identify the "
                             "gains first, then give them as known")  # fmt: skip
    unknown = [k for k, joint in enumerate(joints) if joint not in drives.gains]
    if not unknown:
        raise KaneRobotError(f"identify_gains: every joint's gain is given ({', '.join(joints)}): there is none to identify")
    reading = Drives({**drives.gains, **{joints[k]: 1.0 for k in unknown}}, drives.rotor_inertia, drives.source)
    return unknown, reading


def _robot_of(model):
    if isinstance(model, Robot):
        return model
    if isinstance(model, (DynamicModel, IdentificationModel)):
        return model.robot
    raise KaneRobotError(f"identification needs a Robot, a DynamicModel or an IdentificationModel, got {type(model).__name__}")


def _prediction_recording(data, robot, drives, gains_given, cutoff, period, max_gap, at):
    """A recording to predict on, read and prepared as :func:`identify` did its own, except that
    neither torque nor current is needed (``tau`` is then None); the identification's drives read
    its currents unless it has torques (``gains_given``: the caller's gains, for its currents)."""
    from kanerobot.identification.recording import Recording

    if isinstance(data, Mapping) and "tau" not in data:
        data = Recording.read(data, joints=robot)
    if not _is_recording(data):
        return as_recorded(data, robot), [], False
    if not isinstance(data, Recording):
        data = Recording.read(data, joints=robot)
    if data.tau is not None and not gains_given:
        drives = None  # torques recorded: the identification's gains are for currents
    if data.tau is None and (data.current is None or drives is None):
        if data.current is not None:
            raise KaneRobotError(f"{data.source}: currents without drive gains: give gains= (joint torque per ampere)")
        prepared = _prepared(data, robot, cutoff, period, max_gap, at)
        recorded = RecordedData(prepared.t, prepared.q, np.zeros_like(prepared.q), prepared.qd, prepared.qdd, prepared.joints,
                                source=prepared.source)  # fmt: skip
        recorded.tau = None
        return recorded, list(prepared.log), True
    return prepared_recording(data, robot, drives, cutoff, period, max_gap, at=at)


def _is_recording(data):
    """Whether ``data`` is read as a :class:`~kanerobot.identification.recording.Recording` (one CSV or NPZ
    file, a Recording, a mapping of arrays with motor currents)."""
    from kanerobot.identification.recording import Recording

    if isinstance(data, (str, os.PathLike)):
        return Path(data).suffix.lower() in (".csv", ".npz") and not Path(data).is_dir()
    return isinstance(data, Recording) or (isinstance(data, Mapping) and "current" in data)


def prepared_recording(data, robot, drives=None, cutoff=None, period=None, max_gap=None, at="grid") -> tuple[RecordedData, list[str], bool]:
    """``(RecordedData, log, filtered)``: a recording as :func:`identify` uses it.

    A :class:`~kanerobot.identification.recording.Recording`, one CSV or NPZ file, or a mapping of
    arrays with ``current`` (read as a Recording) is prepared by
    :meth:`~kanerobot.identification.recording.Recording.prepare` (stale rows dropped, a uniform
    grid, the ``cutoff`` low-pass, rates and accelerations); its torques are
    the recorded ones or ``current * gains``; ``filtered`` says that the
    low-pass and the differentiation are done.  ``at``: of
    :meth:`~kanerobot.identification.recording.Recording.prepare` (``"samples"``: q, qd, qdd at
    the recorded time stamps, the torques as measured).
    """
    from kanerobot.identification.recording import Recording

    if not isinstance(data, Recording):
        data = Recording.read(data, joints=robot)
    prepared = _prepared(data, robot, cutoff, period, max_gap, at)
    gains = drives.vector(prepared.joints) if drives is not None else None
    return prepared.to_recorded(gains=gains), list(prepared.log), True


def _prepared(recording, robot, cutoff, period, max_gap, at):
    """``recording`` in the robot's joint order, prepared (once: a prepared one is taken as it is).

    ``cutoff`` None is no low-pass, as for arrays in memory (:meth:`Recording.prepare`'s None is its
    default cut-off)."""
    recording = recording.for_robot(robot)
    if recording.prepared:
        return recording
    return recording.prepare(cutoff=False if cutoff is None else cutoff, period=period, max_gap=max_gap, at=at)


def _solve(regs, base, selected, factors, arrays, groups, method, form, physical, options, unknown_gains=(), drives=None):
    """Least squares from the per-group factors of the equations (:mod:`.tsqr`), shared by the
    in-memory path (``arrays``: the (N, g, nb) observation array and (N, g) torques, for the
    residual array) and the chunked one (``arrays`` None)."""
    rows, nb = factors.rows, factors.nb
    if rows <= nb + len(unknown_gains):
        raise KaneRobotError(f"{rows} equations for {nb + len(unknown_gains)} unknowns: record a longer motion (more samples than parameters)")
    gains = None
    if unknown_gains:
        estimate, covariance, sigma2, cond, weights, gains = _solve_with_gains(factors, unknown_gains, method)
        options = dict(options, drives=Drives({**drives.gains, **{groups[j]: g for j, (g, _) in gains.items()}},
                                              drives.rotor_inertia, drives.source))  # fmt: skip
        scales = np.ones(len(groups))
        scales[list(gains)] = [1.0 / g for g, _ in gains.values()]
        residual, norms, R = None, factors.norms(estimate, scales), None
    else:
        weights = joint_weights(factors) if method == "wls" else np.ones(len(groups))
        R = factors.stacked(weights)
        estimate, covariance, sigma2, cond = solve(R, rows)
        if arrays is not None:
            W, y = arrays
            residual, observed = (y - W @ estimate).T.reshape(rows), y.T.reshape(rows)  # rows joint by joint
            norms = float(np.linalg.norm(residual)), float(np.linalg.norm(observed))
        else:
            residual, norms = None, factors.norms(estimate)
    result = IdentificationResult(
        regressors=regs, base=base, selected=selected, estimate=estimate, covariance=covariance, sigma2=sigma2, condition_number=cond,
        residual=residual, norms=norms, rows=rows, groups=groups, weights=weights, method=method, form=form, options=options,
    )  # fmt: skip
    if gains is not None:
        result.gains = {groups[j]: g for j, (g, _) in gains.items()}
        result.gain_std = {groups[j]: std for j, (_, std) in gains.items()}
    if physical:
        assert R is not None  # physical=True is refused with identify_gains
        # the weighted observation matrix enters by its triangular factor only
        result._set_physical(*physical_estimate(regs, selected.T, estimate, R[:nb, :nb]))
    return result


def _gain_fit(factors, weights, s):
    """``K(s)`` and the weighted residual ``r(s)``: per joint ``w_j R_j [s_j K; -1]``, the joints' equations
    ``s_j D_j K = y_j`` (``s_j = 1 / g_j`` for a joint of unknown gain, whose ``y_j`` is its current; 1 otherwise)."""
    nb = factors.nb
    blocks = [square_factor(R, nb) for R in factors.R]
    A = np.concatenate([w * sj * R[:, :nb] for w, sj, R in zip(weights, s, blocks)])
    b = np.concatenate([w * R[:, nb] for w, R in zip(weights, blocks)])
    K = np.linalg.lstsq(A, b, rcond=None)[0]
    return K, A @ K - b, A, blocks


def _solve_with_gains(factors, unknown, method):
    """Base parameters and the gains of joints ``unknown`` by output error (variable projection).

    The currents ``i_j`` of those joints are the measurements: ``i_j = D_j K_b / g_j``, the other
    joints' ``tau_j = D_j K_b``.  For given ``s = 1 / g`` the least-squares ``K_b`` is linear; ``s`` is
    found by ``scipy.optimize.least_squares`` on the projected residual.  (The linear form
    ``D_j K_b - g_j i_j = 0`` would be biased: its fit shrinks every parameter and gain toward 0.)
    WLS weights are the inverse residual standard deviations of the ordinary fit, per joint.
    Covariance: ``sigma^2 (J^T J)^-1`` of the whole residual's Jacobian in ``(K_b, s)``.

    Returns
    -------
    K, covariance of K, sigma^2, condition number, weights, ``{joint index: (g, std of g)}``
    """
    from scipy.optimize import least_squares

    n, nb = len(factors.R), factors.nb
    rows = factors.rows

    def fit(weights):
        def projected(u):
            s = np.ones(n)
            s[unknown] = u
            return _gain_fit(factors, weights, s)[1]

        start = np.ones(len(unknown))
        for _ in range(2):  # a rough scale per joint first: the ratio of the predicted torque to the current
            s = np.ones(n)
            s[unknown] = start
            K, _, _, blocks = _gain_fit(factors, weights, s)
            for k, j in enumerate(unknown):
                torque = blocks[j][:, :nb] @ K
                start[k] = float(torque @ blocks[j][:, nb]) / max(float(torque @ torque), 1e-300)
        u = least_squares(projected, start, x_scale="jac", xtol=1e-14, ftol=1e-14, gtol=1e-14).x
        s = np.ones(n)
        s[unknown] = u
        return s

    weights = np.ones(n)
    s = fit(weights)
    if method == "wls":
        K, _, _, blocks = _gain_fit(factors, weights, s)
        sigma = np.array([np.linalg.norm(R @ np.append(sj * K, -1.0)) / np.sqrt(max(c, 1)) for R, sj, c in zip(blocks, s, factors.counts)])
        weights = np.where(sigma > 0, sigma.min() / np.where(sigma > 0, sigma, 1.0), 1.0)
        s = fit(weights)
    K, r, A, blocks = _gain_fit(factors, weights, s)
    # Jacobian of the residual in (K, s_unknown): A for K; w_j R_jA K in joint j's block for s_j
    J = np.zeros((len(r), nb + len(unknown)))
    J[:, :nb] = A
    size = nb + 1
    for k, j in enumerate(unknown):
        J[j * size:(j + 1) * size, nb + k] = weights[j] * blocks[j][:, :nb] @ K
    rho2 = sum((weights[j] * blocks[j][nb, nb]) ** 2 for j in range(n))  # the part of the residual no unknown reaches
    sigma2 = (float(r @ r) + rho2) / (rows - nb - len(unknown))
    C = sigma2 * np.linalg.pinv(J.T @ J)
    cond = float(np.linalg.cond(A))
    gains = {}
    for k, j in enumerate(unknown):
        sj, var = s[j], C[nb + k, nb + k]
        gains[j] = (1.0 / sj, float(np.sqrt(max(var, 0.0))) / sj**2)
    return K, C[:nb, :nb], sigma2, cond, weights, gains


# ------------------------------------------------------------------ physical
def _link_blocks(regs):
    """``[(link, {kind: column index})]`` of the standard parameters, by link."""
    blocks: dict[str, dict[str, int]] = {}
    for k, (label, kind) in enumerate(regs.owners):
        blocks.setdefault(label, {})[kind] = k
    return list(blocks.items())


_INERTIA_INDEX = {"XX": (0, 0), "XY": (0, 1), "XZ": (0, 2), "YY": (1, 1), "YZ": (1, 2), "ZZ": (2, 2)}
_TRIU = np.triu_indices(4)
_DIAGONAL = [k for k, (i, j) in enumerate(zip(*_TRIU)) if i == j]
_UNITS = np.zeros((10, 4, 4))
_UNITS[np.arange(10), _TRIU[0], _TRIU[1]] = 1.0
#: Floor of the diagonal of the pseudo-inertia's factor: strictly real bodies.
_FLOOR = 1e-4


def _pseudo_inertia_map(kinds, p):
    """``M`` (p, 16) with ``K = M vec(P)`` for one link's entries of the pseudo-inertia ``P``
    (``J = tr(Sigma) I - Sigma``, ``MS = P[:3, 3]``, ``M = P[3, 3]``)."""
    M = np.zeros((p, 16))
    for kind, column in kinds.items():
        if kind in _INERTIA_INDEX:
            a, b = _INERTIA_INDEX[kind]
            if a == b:
                for c in range(3):
                    if c != a:
                        M[column, 4 * c + c] = 1.0
            else:
                M[column, 4 * a + b] = -1.0
        elif kind in ("MX", "MY", "MZ"):
            M[column, 4 * "XYZ".index(kind[1]) + 3] = 1.0
        elif kind == "M":
            M[column, 15] = 1.0
    return M


class _Parametrisation:
    """Standard parameters from ``theta``: per link the 10 entries of an upper
    triangular U with the pseudo-inertia ``P = U U^T``, then ``IA, FV, FS``;
    the Jacobian ``dK/dtheta`` and the bounds: U's diagonal at least
    :data:`_FLOOR`, ``IA, FV, FS >= 0`` (bounds rather than squares, whose
    zero is a stationary point where the optimiser stalls)."""

    def __init__(self, regs):
        self.p = len(regs.parameters)
        self.links = []
        k = 0
        for _, kinds in _link_blocks(regs):
            extra = [kinds[kind] for kind in ("IA", "FV", "FS") if kind in kinds]
            self.links.append((k, _pseudo_inertia_map(kinds, self.p), extra))
            k += 10 + len(extra)
        self.size = k

    def _factor(self, theta):
        U = np.zeros((4, 4))
        U[_TRIU] = theta
        return U

    def standard(self, theta):
        K = np.zeros(self.p)
        for k, M, extra in self.links:
            U = self._factor(theta[k : k + 10])
            K += M @ (U @ U.T).reshape(16)
            K[extra] += theta[k + 10 : k + 10 + len(extra)]
        return K

    def jacobian(self, theta):
        J = np.zeros((self.p, self.size))
        for k, M, extra in self.links:
            U = self._factor(theta[k : k + 10])
            EU = _UNITS @ U.T  # (10, 4, 4): dU U^T for each entry of U
            J[:, k : k + 10] = M @ (EU + EU.transpose(0, 2, 1)).reshape(10, 16).T
            for e, column in enumerate(extra):
                J[column, k + 10 + e] = 1.0
        return J

    def start(self):
        """Each link a small body of unit mass at its origin; IA, FV, FS 0.5."""
        theta = np.zeros(self.size)
        for k, _, extra in self.links:
            theta[[k + d for d in _DIAGONAL]] = np.sqrt([0.1, 0.1, 0.1, 1.0])
            theta[k + 10 : k + 10 + len(extra)] = 0.5
        return theta

    def lower_bounds(self):
        lower = np.full(self.size, -np.inf)
        for k, _, extra in self.links:
            lower[[k + d for d in _DIAGONAL]] = _FLOOR
            lower[k + 10 : k + 10 + len(extra)] = 0.0
        return lower


def physical_estimate(regs, T, estimate, A, max_nfev=300):
    """Standard parameters of real bodies whose base parameters best fit the data.

    Minimises ``|R (T K(theta) - K_b)|^2 + eps^2 |K(theta)|^2`` (``R`` the
    triangular factor of the observation matrix ``A``, so that the first
    term is the increase of the least-squares cost) by
    ``scipy.optimize.least_squares`` with the exact Jacobian, over each
    link's factor ``U`` of its pseudo-inertia ``P = U U^T`` (upper
    triangular, diagonal bounded below by ``1e-4``: positive definite, so a
    positive mass and an inertia about the centre of mass satisfying the
    triangle inequalities strictly) and ``IA, FV, FS >= 0`` (bounds).  The small ``eps`` picks, among standard
    parameters with the same base values, small ones.

    Parameters
    ----------
    regs : Regressors
    T : numpy.ndarray, shape (nb, p)
        ``K_b = T K`` on the columns of ``regs.parameters``
        (:meth:`~.numeric_regressor.Regressors.base_columns`).
    estimate : numpy.ndarray, shape (nb,)
        Least-squares base estimate.
    A : numpy.ndarray, shape (r, nb)
        The (weighted) observation matrix, or any matrix with the same
        triangular factor (:func:`identify` gives that factor itself).
    max_nfev : int, optional
        Evaluations per start (three starts, the best kept).  The cost
        flattens along the directions only ``eps`` sees: more changes the
        fit by a few percent of its (chi-square) cost at most.

    Returns
    -------
    K : numpy.ndarray, shape (p,)
        Standard parameters (order of ``regs.parameters``).
    K_b : numpy.ndarray, shape (nb,)
        ``T K``.
    """
    from scipy.optimize import least_squares

    param = _Parametrisation(regs)
    R = np.linalg.qr(A, mode="r")
    T = np.asarray(T, dtype=float)
    RT = R @ T
    eps = 1e-4 * np.linalg.norm(RT) / np.sqrt(max(len(regs.parameters), 1))

    def residual(theta):
        K = param.standard(theta)
        return np.concatenate([RT @ K - R @ estimate, eps * K])

    def jacobian(theta):
        J = param.jacobian(theta)
        return np.vstack([RT @ J, eps * J])

    best = None
    rng = np.random.default_rng(0)
    bounds = (param.lower_bounds(), np.full(param.size, np.inf))
    for attempt in range(3):  # the start, then two perturbed ones: keep the best
        x0 = param.start() * (1.0 if attempt == 0 else np.exp(rng.normal(scale=0.5, size=param.size)))
        solution = least_squares(residual, x0, jac=jacobian, bounds=bounds, method="trf", x_scale="jac", max_nfev=max_nfev)
        if best is None or solution.cost < best.cost:
            best = solution
    assert best is not None  # three attempts ran
    K = param.standard(best.x)
    return K, T @ K


# ------------------------------------------------------------------ result
class IdentificationResult:
    """Estimates of the base parameters with their uncertainty.

    Attributes
    ----------
    names : list of str
        Base parameter names.
    estimates : dict
        ``{name: value}``: the physically consistent estimate with
        ``physical=True``, else the least-squares one.
    ls_estimates : dict
        The least-squares estimate.
    std, relative_std : dict
        ``sigma_i = sqrt(C_ii)`` and ``100 sigma_i / |K_i|`` (%) of the
        least-squares estimate.
    covariance : numpy.ndarray, shape (nb, nb)
        ``C = sigma^2 (W^T W)^-1`` (W weighted for ``"wls"``).
    sigma2 : float
        Residual variance of the (weighted) equations.
    condition_number : float
        2-norm condition number of the (weighted) observation matrix.
    residual : numpy.ndarray, shape (rows,), or None
        ``y - W K_b`` (unweighted), joint by joint; None for a recording
        read in chunks or longer than :data:`BLOCK_SAMPLES` samples (too
        long to keep).
    relative_residual : float
        ``|y - W K_b| / |y|``.
    weights : numpy.ndarray, shape (groups,)
        Per-joint weights (1 for ``"ls"``).
    standard : dict or None
        With ``physical=True``: standard parameter values of real bodies
        (``{name: value}``); ``consistent`` says whether each link passes
        :func:`kanerobot.dynamics.parameters.is_physically_consistent`.
    base : BaseParameterSet
        The base parameter set identified.
    columns : list of int
        The base columns among ``regressors.parameters``: ``D_b = D[..., columns]``.
    T : numpy.ndarray, shape (nb, p)
        ``K_b = T K`` for standard parameters K in the order of
        ``regressors.parameters`` (``base.matrix`` with the geometry bound).
    method, form : str
    rows : int
        Number of equations.
    """

    def __init__(self, *, regressors, base, selected, estimate, covariance, sigma2, condition_number, residual, norms, rows, groups, weights,
                 method, form, options):  # fmt: skip
        self.regressors = regressors
        self.base = base
        self.names = list(selected.names)
        self.columns = list(selected.columns)
        self.T = selected.T
        self._ls = np.asarray(estimate, dtype=float)
        self._values = self._ls.copy()
        self.covariance = covariance
        self.sigma2 = sigma2
        self.condition_number = condition_number
        self.residual = residual
        self.rows = rows
        self.groups = groups
        self.weights = weights
        self.method, self.form, self.options = method, form, options
        std = np.sqrt(np.maximum(np.diag(covariance), 0.0))
        self.std = dict(zip(self.names, std.tolist()))
        with np.errstate(divide="ignore"):
            rel = np.where(np.abs(self._ls) > 0, 100.0 * std / np.abs(self._ls), np.inf)
        self.relative_std = dict(zip(self.names, rel.tolist()))
        self.ls_estimates = dict(zip(self.names, self._ls.tolist()))
        residual_norm, observed_norm = norms
        self.relative_residual = residual_norm / observed_norm if observed_norm > 0 else residual_norm
        self.standard = None
        self.consistent = None
        #: What was done to the recording before the estimate (:meth:`~kanerobot.identification.recording.Recording.prepare`).
        self.log = []
        #: With ``identify_gains``: the drive gains identified, ``{joint: g}``, and their standard deviations.
        self.gains: dict[str, float] | None = None
        self.gain_std: dict[str, float] | None = None

    @property
    def estimates(self):
        return dict(zip(self.names, self._values.tolist()))

    @property
    def values(self):
        """Estimates as an array, shape (nb,), in the order of :attr:`names`."""
        return self._values.copy()

    def _set_physical(self, K, K_b):
        from kanerobot.dynamics.parameters import is_physically_consistent

        self._values = np.asarray(K_b, dtype=float)
        self.standard = dict(zip(self.regressors.parameters, np.asarray(K).tolist()))
        self.consistent = {}
        for label, kinds in _link_blocks(self.regressors):
            link = {kind: self.standard[self.regressors.parameters[k]] for kind, k in kinds.items()}
            if all(kind in link for kind in ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")):
                self.consistent[label] = is_physically_consistent(link, tol=0.0)

    def predict(self, q, qd=None, qdd=None):
        """Joint torques of the identified model, ``D_b(q, qd, qdd) K_b``.

        Parameters
        ----------
        q, qd, qdd : array_like, shape (n,) or (N, n)
            A state or a batch; or ``q`` alone a recording (a path, a
            :class:`~kanerobot.identification.recording.Recording`, RecordedData or a mapping of
            arrays), prepared as the identification's own recording was
            (same resampling and ``cutoff``): then the torques at its
            prepared samples, shape (N, n), the ends trimmed as for the
            identification.

        Returns
        -------
        numpy.ndarray, shape (n,) or (N, n)
        """
        if qd is None and qdd is None:
            if isinstance(q, (np.ndarray, list, tuple)):
                raise KaneRobotError("predict(q, qd, qdd) needs the rates and accelerations too, or a recording (a file, a Recording, "
                                     "a mapping of arrays) alone")  # fmt: skip
            return self._on_recording(q)[1]
        single = np.ndim(q) == 1
        D = self.regressors.regressor(q, qd, qdd)[:, :, self.columns]
        tau = D @ self._values
        return tau[0] if single else tau

    def _on_recording(self, data, gains=None):
        """``(prepared RecordedData, predicted torques, log)`` of a recording, ends trimmed."""
        options = self.options
        robot = self.regressors.robot
        drives = as_drives(gains, robot.joint_labels) if gains is not None else options.get("drives")
        cutoff = options.get("cutoff")
        data, log, filtered = _prediction_recording(data, robot, drives, gains is not None, cutoff, options.get("period"),
                                                    options.get("max_gap"), options.get("at", "samples"))  # fmt: skip
        at_samples = filtered and options.get("at", "samples") == "samples"
        dt = None if at_samples else filtering.check_uniform(data.t, source=data.source)
        q, qd, qdd = chunked.motion(data.q, data.qd, data.qdd, dt, None if filtered else cutoff)
        trim = options.get("trim", 2)
        keep = slice(trim, len(data.t) - trim)
        if keep.stop - keep.start < 1:
            raise KaneRobotError(f"{data.source}: {len(data.t)} samples leave none after trimming {trim} at each end: record longer")
        predicted = self.predict(q[keep], qd[keep], qdd[keep])
        data.keep = keep
        return data, predicted, log

    def validate(self, data, gains=None) -> Validation:
        """Predict the torques of another recording and compare them with its measured ones.

        Parameters
        ----------
        data : str, pathlib.Path, Recording, RecordedData or mapping
            A test recording of the same robot (torques, or currents with
            the identification's ``gains`` or ``gains`` given here),
            prepared as the identification's own (same resampling, same
            ``cutoff``); the ends trimmed as for the identification.
        gains : optional
            Drive gains of this recording, if not those of the identification.

        Returns
        -------
        Validation
            Per-joint relative RMS error and correlation, the table
            (``summary()``) and figures (``figures()``, ``save_figures``).
        """
        recorded, predicted, log = self._on_recording(data, gains)
        if recorded.tau is None:
            raise KaneRobotError(f"{recorded.source}: no measured torque (tau_<joint>) or current (current_<joint>) to validate against")
        keep = recorded.keep
        robot = self.regressors.robot
        units = ["N" if isinstance(robot.frame(joint).joint, Prismatic) else "N·m" for joint in recorded.joints]  # prismatic: a force
        return Validation(recorded.t[keep], recorded.tau[keep], predicted, recorded.joints, source=recorded.source, log=log, units=units)

    def poorly_excited(self, threshold: float = 10.0) -> list[str]:
        """Base parameters whose relative standard deviation exceeds ``threshold`` %.

        Their effect on the torques of this recording is small against the
        noise: the motion does not excite them (or their value is near 0);
        a richer excitation (:func:`~.excitation.fourier_excitation`)
        identifies them, or they can be left out of the model.

        Returns
        -------
        list of str
        """
        return [name for name in self.names if not self.relative_std[name] <= threshold]

    def summary(self):
        """The estimates as a text table: name, value, sigma, %sigma, then the condition number.

        Returns
        -------
        str
        """
        lines = [f"{'parameter':>10s} {'estimate':>14s} {'std':>12s} {'%std':>9s}"]
        for name, value in zip(self.names, self._values):
            lines.append(f"{name:>10s} {value:14.6g} {self.std[name]:12.4g} {self.relative_std[name]:9.3g}")
        lines.append(f"method {self.method}, model {self.form}, {self.rows} equations, {len(self.names)} base parameters")
        lines.append(f"condition number {self.condition_number:.4g}, residual variance {self.sigma2:.4g}")
        lines.append(f"base parameter set: {len(self.base)} base parameters of {self.base.robot.name} ({self.base.method} method)")
        gain_std = self.gain_std or {}  # set with gains
        if self.gains:
            lines.append("drive gains identified: " + ", ".join(f"{joint} {value:.6g} (std {gain_std[joint]:.3g})"
                                                               for joint, value in self.gains.items()))  # fmt: skip
            vague = [joint for joint, value in self.gains.items() if not gain_std[joint] <= 0.1 * abs(value)]
            if vague:
                lines.append(f"poorly determined gains (relative std above 10 %): {', '.join(vague)}: the motion couples their "
                             f"joints too weakly to the others; give them as known")  # fmt: skip
        poor = self.poorly_excited()
        if poor:
            lines.append(f"poorly excited (relative std above 10 %): {', '.join(poor)}")
        for line in self.log:
            lines.append(f"recording: {line}")
        if self.consistent is not None:
            lines.append("physically consistent estimate: " + ", ".join(f"link {k} {'ok' if v else 'NOT consistent'}" for k, v in self.consistent.items()))
        return "\n".join(lines)

    def save(self, path):
        """Write the estimates: ``.toml`` (``NAME = value`` lines, readable by
        ``kanerobot simulate --values`` when the standard ones are there) or
        ``.csv`` (name, estimate, std, relative std %); identified drive
        gains as ``gain_<joint>`` entries.

        Returns
        -------
        pathlib.Path
        """
        from pathlib import Path

        from kanerobot.robot.io import atomic_write_text

        path = Path(path)
        gain_std = self.gain_std or {}  # set with gains
        if path.suffix == ".toml":
            lines = [f"# kanerobot identify: {self.method}, {self.form} model, condition number {self.condition_number:.6g}",
                     "# base parameters (value, then std and relative std % as comments)"]  # fmt: skip
            for name, value in zip(self.names, self._values):
                lines.append(f"{name} = {float(value)!r}  # std {self.std[name]:.6g}, {self.relative_std[name]:.4g} %")
            if self.gains:
                lines.append("# drive gains identified (joint torque per ampere)")
                lines += [f"{toml_key('gain_' + joint)} = {float(value)!r}  # std {gain_std[joint]:.6g}" for joint, value in self.gains.items()]
            if self.standard is not None:
                lines.append("# physically consistent standard parameters")
                lines.append("[standard]")
                lines += [f"{name} = {float(value)!r}" for name, value in self.standard.items()]
            text = "\n".join(lines) + "\n"
        elif path.suffix == ".csv":
            text = "name,estimate,std,relative_std_percent\n" + "".join(
                f"{name},{float(value)!r},{self.std[name]!r},{self.relative_std[name]!r}\n" for name, value in zip(self.names, self._values)
            ) + "".join(f"gain_{joint},{float(value)!r},{gain_std[joint]!r},{100 * gain_std[joint] / abs(value)!r}\n"
                        for joint, value in (self.gains or {}).items())  # fmt: skip
        else:
            raise KaneRobotError(f"cannot save identification results as {path.name!r}: use a .toml or .csv file")
        atomic_write_text(path, text)
        return path

    def __repr__(self):
        return (f"<IdentificationResult {self.method} {self.form}: {len(self.names)} base parameters, {self.rows} equations, "
                f"condition number {self.condition_number:.3g}>")  # fmt: skip
