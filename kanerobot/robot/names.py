"""SYMORO's parameter names, in one place below the description and the reports that use them."""

import re

#: The label of frame 0, the base.
BASE = "0"

#: Inertial, friction and external-wrench parameters of a link, SYMORO names.
INERTIAL_NAMES = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M", "IA")
FRICTION_NAMES = ("FV", "FS")
WRENCH_NAMES = ("FX", "FY", "FZ", "CX", "CY", "CZ")
DYNAMIC_NAMES = INERTIAL_NAMES + FRICTION_NAMES + WRENCH_NAMES
#: Per-joint parameters: velocity, acceleration, torque, flexibility flag, stiffness.
JOINT_NAMES = ("QP", "QDP", "GAM", "eta", "k")
#: Base vectors: angular velocity and acceleration, linear velocity and acceleration, gravity.
BASE_VECTOR_NAMES = ("W0", "WP0", "V0", "VP0", "G")

#: Characters a label keeps in its stem; any other becomes ``_``.
_STEM_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def label_stem(label):
    """The part of symbol and variable names that stands for frame ``label``.

    A frame's label is any name (a URDF's ``l-hip.y`` or ``joint_0.0``); the
    names built from it (``XX<stem>``, ``q_<stem>``, ``H<stem>``, ...) must be
    identifiers, so every character other than an ASCII letter, a digit or
    ``_`` becomes ``_``.  A label made of those characters only (every label
    of a ``.par`` or ``.toml`` file) is its own stem.  This is the default
    stem of :class:`~kanerobot.robot.description.Frame`; a frame may be given
    another (``Frame(..., stem="a_b_2")``) where two labels would share one,
    and every engine takes a frame's stem from ``robot.stems``, never from
    the label itself.

    >>> label_stem("3"), label_stem("l-hip.y"), label_stem("joint_0.0")
    ('3', 'l_hip_y', 'joint_0_0')
    """
    return "".join(c if c in _STEM_CHARACTERS else "_" for c in str(label))


def is_stem(text):
    """True when ``text`` can be a stem: non-empty, ASCII letters, digits and ``_``."""
    return isinstance(text, str) and bool(text) and all(c in _STEM_CHARACTERS for c in text)


def natural_key(name):
    """Sort key of a name with numbers in it: ``D3`` before ``D10``.

    >>> sorted(["FS10", "FS2", "D3"], key=natural_key)
    ['D3', 'FS2', 'FS10']
    """
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


#: Prefixes of the symbols named after a frame's stem (its parameters, joint
#: parameters, lengths and joint variable): the file readers choose stems so that none clash.
STEM_PREFIXES = tuple(name for name in DYNAMIC_NAMES + JOINT_NAMES if name != "eta") + ("PX", "PY", "PZ", "q_")


class StemChooser:
    """Unique stems for the labels of a file, in reading order: letters, digits and ``_``
    (:func:`label_stem`, with a letter or digit), ``name_2`` ... when taken, and such that no
    symbol built from one (``MX<stem>`` ...) is another's (``X1``'s ``MX1`` would be ``1``'s)
    nor one of ``reserved`` (gravity, the base's quaternion).  One rule for every reader.

    Examples
    --------
    >>> chooser = StemChooser({"G3"})
    >>> chooser.stem("l-hip.y"), chooser.stem("l_hip_y"), chooser.stem("X1"), chooser.stem("1")
    ('l_hip_y', 'l_hip_y_2', 'X1', '1_2')
    """

    def __init__(self, reserved=()):
        self.stems = {BASE}
        self.symbols = set(reserved) | self.symbols_of(BASE)

    @staticmethod
    def symbols_of(stem):
        """The names of the symbols built from ``stem``."""
        return {prefix + stem for prefix in STEM_PREFIXES}

    def stem(self, label):
        """The stem of ``label``, taken for good."""
        base = label_stem(label)
        base = base if re.search(r"[A-Za-z0-9]", base) else "j" + base
        stem, n = base, 2
        while stem in self.stems or self.symbols & self.symbols_of(stem):
            stem, n = f"{base}_{n}", n + 1
        self.stems.add(stem)
        self.symbols |= self.symbols_of(stem)
        return stem
