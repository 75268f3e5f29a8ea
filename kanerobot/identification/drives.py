"""Joint drives: from motor current to joint torque.

A recording of a real robot holds motor currents, not torques.  Through a
gearbox of ratio ``N_j`` a motor of torque constant ``k_j`` (N m / A) gives
the joint the torque

    tau_j = g_j i_j,        g_j = k_j N_j                    (drive gain)

and its rotor, of inertia ``J_j`` about its own axis, adds ``N_j^2 J_j`` to
the joint's inertia: SYMORO's ``IA_j`` is that reflected inertia, which
identification estimates (the prior ``N_j^2 J_j`` is known when the motor's
data sheet gives ``J_j``).  :class:`Drives` holds the gains of the joints;
:func:`read_drives` reads them from a TOML file, one table per joint or one
``[gains]`` table::

    [gains]                      # joint torque per ampere (N m / A)
    joint_1 = 12.5
    "joint_0.0" = 8.0            # quoted: any joint name

    [joints.joint_2]             # or the parts: g = torque_constant * gear_ratio
    torque_constant = 0.12       # N m / A at the motor
    gear_ratio = 100
    rotor_inertia = 1.3e-5       # kg m^2 at the motor: IA prior = gear_ratio^2 * this

Each joint appears once; a joint of the robot without a gain, a name that is
no joint, a gain that is not a positive finite number are errors naming the
file.

Examples
--------
>>> drives = Drives({"1": 10.0, "2": 4.0})
>>> drives.torque([[0.5, -1.0]], ("1", "2")).tolist()
[[5.0, -4.0]]
>>> Drives.from_parts({"1": (0.1, 100.0, 2e-5)}).rotor_inertia
{'1': 0.2}
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from kanerobot.errors import DataError, KaneRobotError

__all__ = ["Drives", "read_drives"]


def _positive(value, what, where, sign="positive"):
    """``value`` as a float: a finite number, positive (``sign="nonzero"``: either sign, not 0)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or (value <= 0 and sign == "positive") \
            or value == 0:  # fmt: skip
        raise KaneRobotError(f"{where}{what} = {value!r}: give a {sign} finite number")
    return float(value)


class Drives:
    """Drive gains ``g_j`` (joint torque per ampere) of named joints.

    Parameters
    ----------
    gains : mapping str -> float
        Joint name -> ``g_j = k_j N_j`` (N m / A, or N / A for a prismatic
        joint), nonzero (negative for a current measured with the other sign).
    rotor_inertia : mapping str -> float, optional
        Joint name -> the rotor's inertia reflected on the joint,
        ``N_j^2 J_j`` (kg m^2): the data sheet's value, to compare with the
        identified ``IA_j`` (which adds the gearbox's own inertia).
    source : str, optional
        Where the gains come from (a file), for messages.

    Attributes
    ----------
    gains, rotor_inertia : dict
    """

    def __init__(self, gains: Mapping[str, float], rotor_inertia: Mapping[str, float] | None = None, source: str = "drives"):
        where = f"{source}: "
        self.source = str(source)
        # a negative gain is a current measured with the other sign (a drive's convention)
        self.gains = {str(name): _positive(value, f"gain of joint {name!r}", where, "nonzero") for name, value in gains.items()}
        self.rotor_inertia = {str(name): _positive(value, f"rotor inertia of joint {name!r}", where)
                              for name, value in (rotor_inertia or {}).items()}  # fmt: skip

    @classmethod
    def from_parts(cls, parts: Mapping[str, Sequence[float]], source: str = "drives") -> Drives:
        """Gains from ``{joint: (torque_constant, gear_ratio[, motor rotor inertia])}``:
        ``g = k N`` and the reflected rotor inertia ``N^2 J``."""
        gains, rotor = {}, {}
        for name, part in parts.items():
            k, ratio, *rest = part
            where = f"{source}: joint {name!r}: "
            gains[name] = _positive(k, "torque_constant", where) * _positive(ratio, "gear_ratio", where)
            if rest:
                rotor[name] = ratio**2 * _positive(rest[0], "rotor_inertia", where)
        return cls(gains, rotor, source)

    def vector(self, joints: Sequence[str]) -> np.ndarray:
        """The gains of ``joints`` in that order, shape (n,).

        Raises
        ------
        KaneRobotError
            Naming the joints without a gain and the names that are no joint.
        """
        joints = tuple(str(j) for j in joints)
        missing = [j for j in joints if j not in self.gains]
        unknown = sorted(set(self.gains) - set(joints))
        if missing or unknown:
            parts = []
            if missing:
                parts.append(f"no gain for joint(s) {', '.join(missing)}")
            if unknown:
                parts.append(f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not a joint of the recording")
            raise KaneRobotError(f"{self.source}: " + "; ".join(parts) + f" (joints: {', '.join(joints)})")
        return np.array([self.gains[j] for j in joints])

    def torque(self, current: np.ndarray, joints: Sequence[str]) -> np.ndarray:
        """``tau = current * g`` per joint column, shape of ``current`` (N, n)."""
        return np.asarray(current, dtype=float) * self.vector(joints)

    def __repr__(self):
        return f"<Drives {', '.join(f'{k}: {v:g}' for k, v in self.gains.items())}>"


def as_drives(gains, joints=None):
    """``gains`` as :class:`Drives`: Drives, a path to a TOML file, a mapping
    name -> gain, or a sequence of n gains in the order of ``joints``."""
    if gains is None or isinstance(gains, Drives):
        return gains
    if isinstance(gains, (str, os.PathLike)):
        return read_drives(gains)
    if isinstance(gains, Mapping):
        return Drives(gains)
    values = list(np.asarray(gains, dtype=float).reshape(-1))
    if joints is None or len(values) != len(joints):
        raise KaneRobotError(f"{len(values)} gains for {len(joints or ())} joints: give one gain per joint, or a mapping joint name -> gain")
    return Drives(dict(zip(joints, values)))


def read_drives(path: str | os.PathLike) -> Drives:
    """Read drive gains from a TOML file (module notes).

    Raises
    ------
    DataError
        Naming the file: no such file, not TOML, an unknown key, a joint given
        twice, a value that is not a positive number.
    """
    import tomllib

    path = Path(path)
    if not path.is_file():
        raise DataError(path, None, "no such file (drive gains: a TOML file with a [gains] table)")
    try:
        data = tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise DataError(path, None, f"not a TOML file ({exc}): write [gains] then one \"joint\" = gain line per joint") from None
    unknown = sorted(set(data) - {"gains", "joints"})
    if unknown or not data:
        raise DataError(path, None, f"unknown table(s) {', '.join(unknown) or '(none given)'}: give [gains] (joint = N m/A) or [joints.<name>] tables")
    for key in ("gains", "joints"):
        if key in data and not isinstance(data[key], dict):
            raise DataError(path, None, f"{key} must be a table ([{key}] then one line per joint), not {data[key]!r}")
    gains = dict(data.get("gains", {}))
    parts = {}
    for name, table in data.get("joints", {}).items():
        if not isinstance(table, dict):
            raise DataError(path, None, f"joints.{name} must be a table with gain, or torque_constant and gear_ratio")
        keys = set(table) - {"gain", "torque_constant", "gear_ratio", "rotor_inertia"}
        if keys:
            raise DataError(path, None, f"joints.{name}: unknown key(s) {', '.join(sorted(keys))} (gain, torque_constant, gear_ratio, rotor_inertia)")
        if name in gains:
            raise DataError(path, None, f"joint {name!r} is given twice ([gains] and [joints.{name}]): keep one")
        if "gain" in table:
            if {"torque_constant", "gear_ratio"} & set(table):
                raise DataError(path, None, f"joints.{name}: give gain, or torque_constant and gear_ratio, not both")
            gains[name] = table["gain"]
            if "rotor_inertia" in table:
                raise DataError(path, None, f"joints.{name}: rotor_inertia needs gear_ratio (IA = gear_ratio^2 rotor_inertia)")
        elif {"torque_constant", "gear_ratio"} <= set(table):
            parts[name] = (table["torque_constant"], table["gear_ratio"]) + ((table["rotor_inertia"],) if "rotor_inertia" in table else ())
        else:
            raise DataError(path, None, f"joints.{name}: give gain, or torque_constant and gear_ratio")
    try:
        from_parts = Drives.from_parts(parts, source=str(path))
        return Drives({**gains, **from_parts.gains}, from_parts.rotor_inertia, source=str(path))
    except KaneRobotError as exc:
        raise DataError(path, None, str(exc).removeprefix(f"{path}: ")) from None
