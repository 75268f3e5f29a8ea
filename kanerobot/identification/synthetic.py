"""Synthetic recordings of a real robot, with the defects of real ones, to test identification.

Identification is tested on a robot whose parameters are known: here a
robot file's geometry is kept, and everything a user would identify is made
an unknown with a random true value; then recordings are simulated the way a
real controller logs them (issue 24):

- :func:`symbolic_dynamics`: a copy of the robot where every link has all 13
  standard parameters ``XX XY XZ YY YZ ZZ MX MY MZ M IA FV FS`` as SYMORO's
  default symbols (``XXa1`` ...), whatever the file said (a CAD export's
  zeros are not the robot's), and gravity ``G = [G1, G2, G3]`` symbols, so
  that a wall-mounted robot (gravity along -y of its base,
  :data:`GRAVITY`) is modelled as it is;
- :func:`random_truth`: physically consistent values near the file's masses
  and centres of mass, with every inertial parameter nonzero, rotor
  inertias and viscous and Coulomb friction large enough to dominate the
  torque of the small joints, as on geared arms;
- :func:`excitation`: smooth Fourier trajectories inside the joint limits
  (:class:`~kanerobot.identification.excitation.FourierTrajectory`);
- :func:`defective_recording`: samples at jittered times (steps uniform in
  10 .. 33 ms, not a fixed period), a fraction of stale rows (the previous
  row's values re-sent with a new time stamp), motor currents
  (``torque / gain``) with noise, optionally quantised positions; the true
  torques are kept for tests;
- :func:`write_csv` and :func:`write_gains`: the files a user gets,
  ``t, q_<joint>..., current_<joint>...`` and ``[gains]`` (N m / A), both
  written atomically.

The true torque is the rigid-body inverse dynamics of the truth,
``kr.derive(symbolic_dynamics(robot)).numeric(truth).inverse_dynamics``,
which includes ``IA qdd + FV qd + FS sign(qd)`` at each joint, evaluated at
the exact sample times of the analytic trajectory.

Examples
--------
>>> import numpy as np, kanerobot as kr
>>> robot = kr.load(kr.frames_path("planar2"))
>>> model = symbolic_dynamics(robot)
>>> [str(g) for g in model.base.G], str(model.dynamics["2"]["XY"])
(['G1', 'G2', 'G3'], 'XY2')
>>> truth = random_truth(robot, np.random.default_rng(0), geometry={"L1": 0.4})
>>> truth["G2"], all(truth[name + "2"] != 0 for name in ("XY", "MZ", "FS"))
(-9.81, True)
>>> rng = np.random.default_rng(1)
>>> trajectory = excitation(2, 4.0, rng, lower=-1.5, upper=1.5, velocity=2.0)
>>> rec = defective_recording(model, truth, trajectory, gains=[10.0, 5.0], rng=rng, duration=4.0, backend="numpy")
>>> bool(0.0099 < np.diff(rec.t).min() and np.diff(rec.t).max() < 0.0331), bool(abs(rec.stale.mean() - 0.25) < 0.01)
(True, True)
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import sympy

from kanerobot.dynamics.model import derive
from kanerobot.dynamics.parameters import check_physical, random_rotation
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import Base, Robot, default_dynamics
from kanerobot.robot.expressions import symbol
from kanerobot.robot.files import atomic_write_text, toml_key

__all__ = [
    "GRAVITY",
    "DefectiveRecording",
    "defective_recording",
    "excitation",
    "joint_limit_arrays",
    "random_gains",
    "random_truth",
    "symbolic_dynamics",
    "write_csv",
    "write_gains",
]

#: Gravity in the base frame of a wall-mounted robot (``frames/arm7.urdf``):
#: along -y, the base's y axis pointing up (m/s^2).
GRAVITY = (0.0, -9.81, 0.0)
#: The gravity symbols of :func:`symbolic_dynamics`'s base.
GRAVITY_SYMBOLS = ("G1", "G2", "G3")
_INERTIA = ("XX", "XY", "XZ", "YY", "YZ", "ZZ")
_INDEX = {"XX": (0, 0), "XY": (0, 1), "XZ": (0, 2), "YY": (1, 1), "YZ": (1, 2), "ZZ": (2, 2)}


def symbolic_dynamics(robot: Robot, gravity: Sequence[float] = GRAVITY) -> Robot:
    """A copy of ``robot`` with every dynamic parameter an unknown symbol.

    Parameters
    ----------
    robot : Robot
        A fixed-base robot (as read from a URDF file).
    gravity : sequence of 3 float, optional
        The gravity vector in the base frame, stored in the copy's
        ``values`` as ``G1, G2, G3`` (default :data:`GRAVITY`).

    Returns
    -------
    Robot
        Same frames, links, joint parameters and limits; each link's
        dynamics SYMORO's defaults (:func:`~kanerobot.robot.description.default_dynamics`:
        ``XX<label> .. M<label>, IA, FV, FS`` symbols, no external
        wrench); the base's ``G = [G1, G2, G3]``; ``values`` the robot's
        geometric values and the gravity (its dynamic values dropped).

    Examples
    --------
    >>> import kanerobot as kr
    >>> model = symbolic_dynamics(kr.load(kr.frames_path("arm7")))
    >>> len(model.links), sorted(model.dynamics["a7"])[:4], model.values["G2"]
    (7, ['CX', 'CY', 'CZ', 'FS'], -9.81)
    >>> str(model.dynamics["a6"]["MX"]), dict(model.values)["PZa1"]
    ('MXa6', 0.16)
    """
    if robot.loops or robot.floating or robot.wheeled:
        raise KaneRobotError(f"robot {robot.name}: synthetic recordings are for fixed-base serial and tree robots ({robot.structure} given)")
    if len(gravity) != 3:
        raise KaneRobotError(f"gravity must be 3 numbers (the vector in the base frame), got {list(gravity)}")
    geometry = set(robot.geometric_parameters)
    values = {name: value for name, value in robot.values.items() if name in geometry}
    values.update({name: float(g) for name, g in zip(GRAVITY_SYMBOLS, gravity)})
    base = Base(Z=robot.base.Z, G=sympy.ImmutableMatrix([symbol(name) for name in GRAVITY_SYMBOLS]))
    return Robot.create(
        robot.name, robot.frames, links=robot.links, dynamics={label: default_dynamics(label) for label in robot.links},
        joint_parameters=robot.joint_parameters, base=base, values=values, limits=robot.limits,
    )  # fmt: skip


def _nominal_link(robot, label):
    """``(m, c, I_c)`` of link ``label`` as ``robot`` gives it (its expressions
    evaluated with ``robot.values``), or None where that is not a body with mass."""
    numbers = {symbol(k): sympy.Float(v) for k, v in robot.values.items()}
    table = robot.dynamics.get(label, {})
    values = {}
    for name in _INERTIA + ("MX", "MY", "MZ", "M"):
        value = sympy.sympify(table.get(name, 0)).xreplace(numbers)
        if not value.is_number:
            return None
        values[name] = float(value)
    m = values["M"]
    if m <= 0:
        return None
    J = np.zeros((3, 3))
    for name, (i, j) in _INDEX.items():
        J[i, j] = J[j, i] = values[name]
    c = np.array([values["MX"], values["MY"], values["MZ"]]) / m
    return m, c, J - m * (c @ c * np.eye(3) - np.outer(c, c))


def _small_rotation(rng, low, high):
    """A rotation of angle uniform in [low, high] about a random axis (Rodrigues)."""
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    angle = rng.uniform(low, high)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def _random_body(rng, nominal, spread):
    """``(m, c, I_c)`` near ``nominal`` (or a random body when None)."""
    if nominal is None:
        m, c, I_c = rng.uniform(0.5, 4.0), rng.uniform(-0.1, 0.1, 3), random_rotation(rng) @ np.diag(rng.uniform(0.005, 0.05, 3))
        I_c = I_c @ I_c.T / np.max(np.abs(I_c))  # a positive matrix, re-drawn below as a mass distribution
    else:
        m, c, I_c = nominal
    mass = m * rng.uniform(1 - spread, 1 + spread)
    centre = c + rng.uniform(-0.03, 0.03, 3)
    principal, axes = np.linalg.eigh((I_c + I_c.T) / 2)
    # Second moments of the mass along the principal axes: I1 = s2 + s3 ...; each > 0 keeps the triangle inequality strict.
    second = np.maximum(principal.sum() / 2 - principal, 1e-3 * max(principal.sum(), 1e-4))
    second = second * rng.uniform(1 - 2 * spread, 1 + 2 * spread, 3) * mass / m
    moments = second.sum() - second
    R = axes @ _small_rotation(rng, 0.15, 0.5)
    return mass, centre, R @ np.diag(moments) @ R.T


def random_truth(robot: Robot, rng: np.random.Generator, *, spread: float = 0.15, gravity: Sequence[float] = GRAVITY,
                 geometry: Mapping[str, float] | None = None) -> dict:  # fmt: skip
    """True values for every parameter of :func:`symbolic_dynamics` ``(robot)``.

    Each link is a rigid body drawn near the one ``robot`` describes (its
    expressions evaluated with ``robot.values``: a URDF file's numbers):
    mass within ``spread``, centre of mass moved by up to 3 cm on each
    axis, second moments of the mass within ``2 spread`` and principal axes
    turned by 0.15 .. 0.5 rad, so that every inertial parameter, products of
    inertia and first moments included, is nonzero even where the file has
    zeros.  A link the robot gives no mass gets a random body of 0.5 .. 4 kg.

    Rotor inertia and friction scale with the joint's effort limit
    (``robot.limits``; 50 N m where none): ``IA`` in 0.002 .. 0.005,
    ``FV`` in 0.02 .. 0.05 s/rad and ``FS`` in 0.02 .. 0.04 times it, so
    that friction dominates the torque of the wrist joints of a geared arm.

    Parameters
    ----------
    robot : Robot
    rng : numpy.random.Generator
    spread : float, optional
        Relative spread of the masses (and twice that of the inertias).
    gravity : sequence of 3 float, optional
        ``G1, G2, G3`` (default :data:`GRAVITY`, along -y).
    geometry : mapping, optional
        Values of geometric symbols that ``robot.values`` lacks (a ``.par``
        robot's lengths); ``robot.values`` is used first.

    Returns
    -------
    dict
        ``{name: float}``: the 13 standard parameters of every link, the
        geometric values and the gravity; physically consistent
        (:func:`~kanerobot.dynamics.parameters.check_physical`).

    Examples
    --------
    >>> import kanerobot as kr
    >>> robot = kr.load(kr.frames_path("arm7"))
    >>> truth = random_truth(robot, np.random.default_rng(0))
    >>> round(truth["Ma1"] / robot.values["Ma1"], 1), truth["XYa1"] != 0, truth["FSa7"] > 0
    (1.0, True, True)
    """
    model = symbolic_dynamics(robot, gravity)
    values = dict(model.values)
    values.update({k: float(v) for k, v in (geometry or {}).items() if k not in values})
    missing = [name for name in model.geometric_parameters if name not in values]
    if missing:
        raise KaneRobotError(f"robot {robot.name}: no value for {', '.join(missing)}: give them as geometry={{name: length}}")
    for label in model.links:
        while True:
            m, c, I_c = _random_body(rng, _nominal_link(robot, label), spread)
            J = I_c + m * (c @ c * np.eye(3) - np.outer(c, c))
            link = {name: float(J[i, j]) for name, (i, j) in _INDEX.items()}
            link.update(MX=m * c[0], MY=m * c[1], MZ=m * c[2], M=m)
            if min(abs(v) for v in link.values()) > 1e-6 * max(abs(v) for v in link.values()):
                break
        limit = robot.limits.get(label)
        effort = limit.effort if limit is not None and limit.effort else 50.0
        link.update(IA=effort * rng.uniform(0.002, 0.005), FV=effort * rng.uniform(0.02, 0.05), FS=effort * rng.uniform(0.02, 0.04))
        values.update({name + label: float(value) for name, value in link.items()})
    check_physical(model, values)
    return values


def joint_limit_arrays(robot: Robot, default: float = np.pi, velocity: float = 2.0):
    """``(lower, upper, velocity)`` arrays of the joints' limits in ``robot.joint_labels`` order.

    A limit ``robot.limits`` does not give is ``-default``, ``default`` or ``velocity``.

    Examples
    --------
    >>> import kanerobot as kr
    >>> lower, upper, speed = joint_limit_arrays(kr.load(kr.frames_path("arm7")))
    >>> lower[1].item(), upper[1].item(), speed[0].item()
    (-2.0, 2.0, 1.7)
    """
    out = np.empty((3, len(robot.joint_labels)))
    for k, label in enumerate(robot.joint_labels):
        item = robot.limits.get(label)
        given = (getattr(item, "lower", None), getattr(item, "upper", None), getattr(item, "velocity", None))
        for row, (value, fallback) in enumerate(zip(given, (-default, default, velocity))):
            out[row, k] = fallback if value is None else value
    return out[0], out[1], out[2]


def excitation(n: int, duration: float, rng: np.random.Generator, *, lower=-1.0, upper=1.0, velocity=None, acceleration=4.0,
               harmonics: int = 5, periods: int = 2, fill: float = 0.8):  # fmt: skip
    """A smooth random Fourier trajectory inside joint limits.

    Each joint's coefficients ``a_il, b_il`` are normal with standard
    deviation ``1 / l`` (smooth: higher harmonics smaller), then scaled so
    that over a period the position spans at most ``fill`` of the range
    ``[lower, upper]`` (centred in it), the rate at most ``fill`` of
    ``velocity`` and the acceleration at most ``acceleration``.  Two calls
    with the same generator give two different trajectories (a training and
    a test run).

    Parameters
    ----------
    n : int
        Number of joints.
    duration : float
        Length of the run (s); the base frequency is ``periods / duration``.
    rng : numpy.random.Generator
    lower, upper, velocity, acceleration : float or array_like (n,), optional
        Joint limits (rad, rad/s, rad/s^2); no rate limit when ``velocity`` is None.
    harmonics : int, optional
    periods : int, optional
        Periods in ``duration``.
    fill : float, optional
        Fraction of the position range and of the rate limit used.

    Returns
    -------
    FourierTrajectory

    Examples
    --------
    >>> tr = excitation(3, 10.0, np.random.default_rng(0), lower=-1.0, upper=2.0, velocity=1.5)
    >>> q, qd, qdd = tr.sample(np.linspace(0.0, 10.0, 2001))
    >>> bool(q.min() >= -1.0 and q.max() <= 2.0 and np.abs(qd).max() <= 1.5 and np.abs(qdd).max() <= 4.0)
    True
    """
    from kanerobot.identification.excitation import FourierTrajectory

    if not duration > 0 or periods < 1 or harmonics < 1:
        raise KaneRobotError(f"excitation needs duration > 0, periods >= 1 and harmonics >= 1, got {duration}, {periods}, {harmonics}")
    lower, upper = np.broadcast_to(np.asarray(lower, float), (n,)), np.broadcast_to(np.asarray(upper, float), (n,))
    if np.any(upper <= lower):
        raise KaneRobotError(f"excitation needs lower < upper for every joint, got {lower.tolist()} and {upper.tolist()}")
    scale = 1.0 / np.arange(1, harmonics + 1)
    a, b = rng.normal(size=(n, harmonics)) * scale, rng.normal(size=(n, harmonics)) * scale
    frequency = periods / duration
    unit = FourierTrajectory(np.zeros(n), a, b, frequency)
    q, qd, qdd = unit.sample(np.linspace(0.0, unit.period, 64 * harmonics + 1))
    middle = (q.max(axis=0) + q.min(axis=0)) / 2
    k = fill * (upper - lower) / np.maximum(q.max(axis=0) - q.min(axis=0), 1e-12)
    if velocity is not None:
        k = np.minimum(k, fill * np.broadcast_to(np.asarray(velocity, float), (n,)) / np.abs(qd).max(axis=0))
    if acceleration is not None:
        k = np.minimum(k, np.broadcast_to(np.asarray(acceleration, float), (n,)) / np.abs(qdd).max(axis=0))
    k = 0.98 * k  # the extremes fall between the samples: at most 0.5 % beyond them with 64 samples per shortest period
    return FourierTrajectory((lower + upper) / 2 - k * middle, a * k[:, None], b * k[:, None], frequency)


def random_gains(n: int, rng: np.random.Generator, low: float = 5.0, high: float = 40.0) -> np.ndarray:
    """Gains from motor current to joint torque (N m / A: torque constant times gear ratio), uniform in ``[low, high]``.

    Examples
    --------
    >>> g = random_gains(7, np.random.default_rng(0))
    >>> g.shape, bool(g.min() >= 5.0 and g.max() <= 40.0)
    ((7,), True)
    """
    return rng.uniform(low, high, n)


@dataclass
class DefectiveRecording:
    """A simulated recording with the defects of a real one (:func:`defective_recording`).

    Attributes
    ----------
    joints : tuple of str
        Joint labels, the order of the columns.
    t : numpy.ndarray, shape (N,)
        Time stamps (s), increasing, jittered.
    q : numpy.ndarray, shape (N, n)
        Recorded positions (stale rows repeat the previous row; quantised
        if asked).
    current : numpy.ndarray, shape (N, n)
        Recorded motor currents (A): ``tau / gains`` plus noise, stale rows
        repeating the previous row.
    gains : numpy.ndarray, shape (n,)
        N m / A.
    tau, qd, qdd : numpy.ndarray, shape (N, n)
        The truth at the time stamps (for tests): torque, rate, acceleration.
    q_true : numpy.ndarray, shape (N, n)
        The true positions at the time stamps.
    stale : numpy.ndarray of bool, shape (N,)
        The rows that repeat the previous row's values.

    Examples
    --------
    >>> one = np.ones((2, 1))
    >>> rec = DefectiveRecording(("1",), np.array([0.0, 0.02]), 0 * one, 0.5 * one, np.array([12.0]), 6 * one, 0 * one, 0 * one,
    ...                          0 * one, np.array([False, True]))
    >>> len(rec), rec.torque()[:, 0].tolist()
    (2, [6.0, 6.0])
    """

    joints: tuple
    t: np.ndarray
    q: np.ndarray
    current: np.ndarray
    gains: np.ndarray
    tau: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    q_true: np.ndarray
    stale: np.ndarray

    def __len__(self):
        return len(self.t)

    def torque(self):
        """Recorded torque, ``current * gains`` (N m), shape (N, n)."""
        return self.current * self.gains


@lru_cache(maxsize=4)
def _derived(robot):
    return derive(robot)


def defective_recording(robot: Robot, truth: Mapping[str, float], trajectory, *, gains, rng: np.random.Generator,
                        duration: float | None = None, period: float = 0.01, jitter=(0.010, 0.033), stale: float = 0.25,
                        noise: float = 0.01, resolution: float | None = None, t0: float = 0.0, backend: str = "auto",
                        dynamics=None) -> DefectiveRecording:  # fmt: skip
    """Simulate a real controller's log of ``trajectory`` on the robot with parameters ``truth``.

    Parameters
    ----------
    robot : Robot
        The robot with unknown parameters (:func:`symbolic_dynamics`).
    truth : mapping
        Values of its parameters (:func:`random_truth`), physical.
    trajectory : Trajectory
        With analytic ``sample(times) -> (q, qd, qdd)`` (a
        :class:`~kanerobot.identification.excitation.FourierTrajectory`).
    gains : sequence or mapping label -> float
        Current to joint torque (N m / A) per joint.
    rng : numpy.random.Generator
    duration : float, optional
        Length of the recording (s); default one period of the trajectory.
    period : float, optional
        The step when ``jitter`` is None (a clean, uniform clock).
    jitter : (float, float) or None, optional
        Bounds of the steps between time stamps, drawn uniformly (s).
    stale : float, optional
        Fraction of the rows (the first excepted) replaced by the previous
        row's values under a new time stamp.
    noise : float, optional
        Standard deviation of the current noise, relative to each joint's
        RMS current.
    resolution : float, optional
        Encoder step (rad): positions rounded to multiples of it.
    t0 : float, optional
        The first time stamp.
    backend : str, optional
        Of ``numeric`` (``"auto"``, ``"c"``, ``"numpy"``).
    dynamics : NumericDynamics, optional
        ``kr.derive(robot).numeric(truth)`` already built (saves the derivation).

    Returns
    -------
    DefectiveRecording

    Examples
    --------
    A pendulum-like 2-joint arm, 2 s at jittered steps, a quarter of the rows stale:

    >>> import kanerobot as kr
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> model, rng = symbolic_dynamics(robot), np.random.default_rng(3)
    >>> truth = random_truth(robot, rng, geometry={"L1": 0.5})
    >>> trajectory = excitation(2, 2.0, rng, lower=-2.0, upper=2.0)
    >>> rec = defective_recording(model, truth, trajectory, gains={"1": 20.0, "2": 8.0}, rng=rng, duration=2.0, backend="numpy")
    >>> fresh = ~rec.stale
    >>> error = np.abs(rec.torque()[fresh] - rec.tau[fresh]).max(axis=0) / np.sqrt(np.mean(rec.tau**2, axis=0))
    >>> bool(np.all(error < 0.06)), bool(np.all(rec.q[rec.stale] == rec.q[np.flatnonzero(rec.stale) - 1]))
    (True, True)
    """
    labels = tuple(robot.joint_labels)
    n = len(labels)
    gains = np.array([gains[label] for label in labels] if isinstance(gains, Mapping) else gains, dtype=float)
    if gains.shape != (n,) or np.any(gains <= 0):
        raise KaneRobotError(f"gains must be {n} positive numbers (N m / A), one per joint {', '.join(labels)}; got {gains.tolist()}")
    if not 0 <= stale < 1:
        raise KaneRobotError(f"stale is a fraction of the rows in [0, 1), got {stale}")
    duration = float(getattr(trajectory, "period", 0.0) if duration is None else duration)
    if not duration > 0:
        raise KaneRobotError("give the recording's duration (s)")
    if jitter is None:
        steps = np.full(int(np.ceil(duration / period)) + 1, float(period))
    else:
        low, high = map(float, jitter)
        if not 0 < low <= high:
            raise KaneRobotError(f"jitter is (smallest step, largest step) with 0 < smallest <= largest, got {jitter}")
        steps = rng.uniform(low, high, int(np.ceil(duration / low)) + 1)
    t = np.concatenate([[0.0], np.cumsum(steps)])
    t = t0 + t[t <= duration * (1 + 1e-12)]
    q_true, qd, qdd = (np.asarray(x, dtype=float) for x in trajectory.sample(t - t0))
    if dynamics is None:
        dynamics = _derived(robot).numeric(dict(truth), backend=backend)
    tau = np.asarray(dynamics.inverse_dynamics(q_true, qd, qdd), dtype=float)
    current = tau / gains
    current = current + rng.normal(size=current.shape) * noise * np.sqrt(np.mean(current**2, axis=0))
    q = q_true.copy() if resolution is None else np.round(q_true / resolution) * resolution
    N = len(t)
    mask = np.zeros(N, dtype=bool)
    mask[rng.choice(np.arange(1, N), size=round(stale * (N - 1)), replace=False)] = True
    for k in np.flatnonzero(mask):  # increasing: a run of stale rows repeats the last fresh one
        q[k], current[k] = q[k - 1], current[k - 1]
    return DefectiveRecording(labels, t, q, current, gains, tau, qd, qdd, q_true, mask)


def _names(joint_names, labels):
    if joint_names is None:
        return list(labels)
    if isinstance(joint_names, Mapping):
        return [joint_names[label] for label in labels]
    names = list(joint_names)
    if len(names) != len(labels):
        raise KaneRobotError(f"{len(names)} joint names for {len(labels)} joints")
    return names


def write_csv(recording: DefectiveRecording, path, joint_names=None, tau: bool = False):
    """Write a recording as a controller's log: ``t, q_<name>..., current_<name>...`` (and ``tau_<name>...``).

    Parameters
    ----------
    recording : DefectiveRecording
    path : str or Path
    joint_names : mapping label -> str or sequence of str, optional
        Column names per joint (a URDF's joint names,
        ``kanerobot.robot.urdf.parse_urdf(path).joint_names``); default the labels.
    tau : bool, optional
        Add the true torques.

    Returns
    -------
    pathlib.Path
        Written through a temporary file and a rename.

    Examples
    --------
    >>> import tempfile, os
    >>> rec = DefectiveRecording(("1",), np.array([0.0, 0.01]), np.zeros((2, 1)), np.ones((2, 1)), np.ones(1),
    ...                          np.ones((2, 1)), np.zeros((2, 1)), np.zeros((2, 1)), np.zeros((2, 1)), np.zeros(2, bool))
    >>> path = write_csv(rec, os.path.join(tempfile.mkdtemp(), "run.csv"), ["shoulder"])
    >>> open(path).readline().strip()
    't,q_shoulder,current_shoulder'
    """
    from pathlib import Path

    names = _names(joint_names, recording.joints)
    header = ["t"] + [f"q_{name}" for name in names] + [f"current_{name}" for name in names]
    columns = [recording.t[:, None], recording.q, recording.current]
    if tau:
        header += [f"tau_{name}" for name in names]
        columns.append(recording.tau)
    table = np.hstack(columns)
    lines = [",".join(header)] + [",".join(f"{x:.17g}" for x in row) for row in table]
    path = Path(path)
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path


def write_gains(gains, path, joint_names):
    """Write the current-to-torque gains as TOML: ``[gains]`` then ``<joint name> = <N m / A>``.

    Parameters
    ----------
    gains : sequence of float
    path : str or Path
    joint_names : sequence of str
        One per gain.

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> import tempfile, os, tomllib
    >>> path = write_gains([12.5, 8.0], os.path.join(tempfile.mkdtemp(), "gains.toml"), ["a1", "wrist.2"])
    >>> tomllib.loads(open(path).read())
    {'gains': {'a1': 12.5, 'wrist.2': 8.0}}
    """
    from pathlib import Path

    gains = [float(g) for g in gains]
    names = list(joint_names)
    if len(names) != len(gains):
        raise KaneRobotError(f"{len(gains)} gains for {len(names)} joint names")
    text = "[gains]\n" + "".join(f"{toml_key(name)} = {g!r}\n" for name, g in zip(names, gains))
    path = Path(path)
    atomic_write_text(path, text)
    return path
