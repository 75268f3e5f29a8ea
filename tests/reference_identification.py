"""Independent references for identification tests on synthetic recordings (issue 24).

Nothing here uses kanerobot's identification programs (the regressor
program, the base parameters, ``identify``):

* :func:`full_regressor_by_units` builds the regressor of every standard
  parameter from the *numeric inverse dynamics* only, by linearity: column
  ``(link, name)`` is the torque with that parameter 1 and every other
  dynamic parameter 0 (geometry and gravity kept), minus the torque with all
  of them 0 (which is 0: no dynamic parameter, no torque);
* :func:`pinocchio_regressor` is pinocchio's ``computeJointTorqueRegressor``
  on the URDF file itself (pinocchio's own reader, frames and gravity), with
  the columns ``qdd_j, qd_j, sign(qd_j)`` of ``IA, FV, FS`` per joint;
  :func:`pinocchio_parameters` maps SYMORO's values to its columns;
* :func:`rank` is the rank by SVD, :func:`least_squares_reference` an
  ordinary least-squares identification on base columns chosen by QR with
  column pivoting (scipy).

Pinocchio's 10 dynamic parameters of a body are
``[m, mc_x, mc_y, mc_z, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` with the inertia
about the *joint frame origin* in the joint frame's axes
(``pin.Inertia.toDynamicParameters``); for a URDF joint pinocchio's joint
frame is kanerobot's frame of that joint (``origin * Rot(axis, q)``), so the
map is ``M, MX, MY, MZ, XX, XY, YY, XZ, YZ, ZZ`` of the same link (checked
numerically in tests/test_synthetic.py).
"""

import numpy as np
import scipy.linalg

import kanerobot as kr
from kanerobot.identification.regressor import STANDARD_NAMES
from kanerobot.robot.description import Robot

#: Pinocchio's order of a body's dynamic parameters, as SYMORO names.
PINOCCHIO_ORDER = ("M", "MX", "MY", "MZ", "XX", "XY", "YY", "XZ", "YZ", "ZZ")
#: Columns added per joint after pinocchio's 10.
JOINT_COLUMNS = ("IA", "FV", "FS")


def standard_parameters(robot):
    """Names of the standard parameters of ``robot``, link by link in ``STANDARD_NAMES`` order (13 per link)."""
    return [str(robot.dynamics[label][name]) for label in robot.links for name in STANDARD_NAMES]


def _dynamic_model(model):
    return kr.derive(model) if isinstance(model, Robot) else model


def full_regressor_by_units(model, values, q, qd, qdd, backend="numpy"):
    """The regressor of every standard parameter by unit parameters on the numeric inverse dynamics.

    Parameters
    ----------
    model : Robot or DynamicModel
        A robot whose 13 standard parameters per link are plain symbols
        (``kanerobot.identification.synthetic.symbolic_dynamics``).
    values : mapping
        Geometry and gravity (other names, the dynamic ones, are replaced).
    q, qd, qdd : array_like, shape (N, n)
    backend : str
        Of ``numeric``; numpy by default (one model per column: no compile).

    Returns
    -------
    W : numpy.ndarray, shape (N, n, p)
        ``tau = W @ K``, ``K`` in :func:`standard_parameters` order.
    names : list of str
    """
    dm = _dynamic_model(model)
    names = standard_parameters(dm.robot)
    zero = {k: float(v) for k, v in values.items() if k not in names}
    zero.update(dict.fromkeys(names, 0.0))
    q, qd, qdd = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, qd, qdd))
    zero_torque = dm.numeric(zero, backend=backend, physical=False).inverse_dynamics(q, qd, qdd)
    assert np.abs(zero_torque).max() == 0.0, "no dynamic parameter must give no torque"
    columns = [dm.numeric(dict(zero, **{name: 1.0}), backend=backend, physical=False).inverse_dynamics(q, qd, qdd) for name in names]
    return np.stack(columns, axis=-1), names


def rank(W, rtol=None):
    """Numerical rank of ``W`` (2-D, or (N, n, p) stacked to (N n, p)) by SVD.

    Columns are first scaled to unit norm (a zero column stays zero): the
    rank does not change, and parameters of very different sizes (a mass
    beside a product of inertia) no longer spread the singular values.  A
    singular value counts when above ``rtol * s_max`` with
    ``rtol = max(rows, columns) * eps`` by default (numpy's ``matrix_rank``
    rule); dependent columns give singular values at rounding level
    (~1e-14 s_max), independent ones on random states far above (> 1e-8).

    Returns
    -------
    r : int
    s : numpy.ndarray
        The singular values of the scaled matrix, decreasing (to see the gap).
    """
    W = np.asarray(W, dtype=float)
    W = W.reshape(-1, W.shape[-1])
    norms = np.linalg.norm(W, axis=0)
    W = W / np.where(norms > 0, norms, 1.0)
    s = np.linalg.svd(W, compute_uv=False)
    rtol = max(W.shape) * np.finfo(float).eps if rtol is None else rtol
    return int(np.sum(s > rtol * s[0])), s


def pinocchio_regressor(urdf_path, q, qd, qdd, gravity, joint_names=None):
    """Pinocchio's joint torque regressor with ``IA, FV, FS`` columns, stacked over samples.

    Parameters
    ----------
    urdf_path : str or Path
    q, qd, qdd : array_like, shape (N, n)
        In the order of ``joint_names``.
    gravity : sequence of 3 float
        In the root link's frame (``model.gravity.linear``).
    joint_names : sequence of str, optional
        URDF joint names of the columns of ``q``; default pinocchio's order.

    Returns
    -------
    numpy.ndarray, shape (N n, 13 n)
        Row ``k n + i``: sample k, joint i; per joint (in ``joint_names``
        order) 13 columns: :data:`PINOCCHIO_ORDER` then ``IA, FV, FS``.
    """
    import pinocchio as pin

    model = pin.buildModelFromUrdf(str(urdf_path))
    model.gravity.linear = np.asarray(gravity, dtype=float)
    data = model.createData()
    names = list(model.names)[1:] if joint_names is None else list(joint_names)
    ids = [model.getJointId(name) for name in names]
    assert all(model.joints[j].nq == 1 and model.joints[j].nv == 1 for j in ids), "revolute or prismatic joints only"
    iq = [model.joints[j].idx_q for j in ids]
    iv = [model.joints[j].idx_v for j in ids]
    n = len(names)
    assert model.nq == n and model.nv == n
    q, qd, qdd = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, qd, qdd))
    out = np.zeros((len(q), n, 13 * n))
    for k in range(len(q)):
        qk, vk, ak = np.zeros(n), np.zeros(n), np.zeros(n)
        qk[iq], vk[iv], ak[iv] = q[k], qd[k], qdd[k]
        Y = pin.computeJointTorqueRegressor(model, data, qk, vk, ak)  # (nv, 10 (njoints - 1)), body j - 1 at 10 (j - 1)
        for i, j in enumerate(ids):
            out[k, :, 13 * i:13 * i + 10] = Y[iv][:, 10 * (j - 1):10 * j]
            out[k, i, 13 * i + 10:13 * i + 13] = ak[iv[i]], vk[iv[i]], np.sign(vk[iv[i]])
    return out.reshape(len(q) * n, 13 * n)


def pinocchio_parameters(values, labels):
    """SYMORO's values (``XX<label>`` ...) as the vector of :func:`pinocchio_regressor`'s columns."""
    return np.array([values[name + label] for label in labels for name in PINOCCHIO_ORDER + JOINT_COLUMNS])


def base_columns(W, rtol=1e-10):
    """Indices of independent columns of ``W`` by QR with column pivoting.

    The columns are scaled to unit norm, ``scipy.linalg.qr(pivoting=True)``
    orders them by decreasing contribution; the first ``r`` pivots with
    ``|R_kk| > rtol |R_00|`` are kept (dependent columns give
    ``|R_kk|`` at rounding level, ~1e-14).

    Returns
    -------
    numpy.ndarray of int
        Sorted column indices.
    """
    W = np.asarray(W, dtype=float)
    norms = np.linalg.norm(W, axis=0)
    _, R, pivots = scipy.linalg.qr(W / np.where(norms > 0, norms, 1.0), mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    return np.sort(pivots[: int(np.sum(d > rtol * d[0]))])


def relative_rms(y, y_hat):
    """``rms(y - y_hat) / rms(y)`` per joint (columns of (N, n) arrays) and over all joints.

    Returns
    -------
    per_joint : numpy.ndarray, shape (n,)
    overall : float
    """
    y, y_hat = np.asarray(y, dtype=float), np.asarray(y_hat, dtype=float)
    e = y - y_hat
    per_joint = np.sqrt(np.mean(e**2, axis=0)) / np.sqrt(np.mean(y**2, axis=0))
    return per_joint, float(np.sqrt(np.mean(e**2)) / np.sqrt(np.mean(y**2)))


def least_squares_reference(W_train, y_train, W_test, y_test, rtol=1e-10):
    """Ordinary least squares on base columns, validated on a test run.

    Parameters
    ----------
    W_train, W_test : numpy.ndarray, shape (N, n, p)
        Full regressors (:func:`full_regressor_by_units`) of the two runs.
    y_train, y_test : numpy.ndarray, shape (N, n)
        Torques.
    rtol : float
        Of :func:`base_columns` on the training regressor.

    Returns
    -------
    dict
        ``columns`` (base columns), ``estimate`` (their values),
        ``per_joint`` and ``overall``: :func:`relative_rms` of the test
        torques predicted, ``rms(y - y_hat) / rms(y)``.
    """
    n, p = W_train.shape[1], W_train.shape[2]
    A = W_train.reshape(-1, p)
    columns = base_columns(A, rtol)
    estimate, *_ = scipy.linalg.lstsq(A[:, columns], np.asarray(y_train).reshape(-1))
    y_hat = (W_test.reshape(-1, p)[:, columns] @ estimate).reshape(-1, n)
    per_joint, overall = relative_rms(y_test, y_hat)
    return {"columns": columns, "estimate": estimate, "per_joint": per_joint, "overall": overall}
