"""Frame-tree robot files in TOML (``.toml``), read and written.

A frame-tree file lists the frames of a robot one ``[[frame]]`` table each,
in an order where every antecedent comes first.  A frame is placed on its
antecedent either by Khalil-Kleinfinger parameters (``gamma b alpha d theta
r``) or, as in the Krang report (seed 001), by a general placement: the
rotation ``R0`` (row by row) and position ``P`` at q = 0, the joint axis
``axis`` in the frame itself and the joint variable ``q``.  The format is
described in ``docs/frames-format.md``::

    name = "planar2"

    [[frame]]
    label = "1"
    antecedent = "0"
    sigma = 0
    theta = "th1"

    [[frame]]
    label = "2"
    antecedent = "1"
    sigma = 0
    R0 = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    P = ["L1", 0, 0]
    axis = [0, 0, 1]
    q = "th2"

Every value is a number or an expression read by
:func:`~kanerobot.robot.expressions.parse_expression`, never evaluated.  Any
mistake in a file is reported as one :class:`~kanerobot.errors.RobotFileError`
``path:line: what is wrong and what to do``.

>>> import sympy
>>> from kanerobot.robot.description import Robot, Frame, KKPlacement
>>> L0, th1 = sympy.symbols("L0 th1")
>>> arm = Robot.create("planar1", [Frame("1", "0", 0, 1, KKPlacement(d=L0, theta=th1))])
>>> print(write_frames(arm), end="")
# kanerobot frame tree, see docs/frames-format.md
name = "planar1"
floating = false
wheeled = false
<BLANKLINE>
[[frame]]
label = "1"
antecedent = "0"
sigma = 0
gamma = 0
b = 0
alpha = 0
d = "L0"
theta = "th1"
r = 0
>>> frames_from_text(write_frames(arm)) == arm
True
"""

import difflib
import math
import re
import tomllib
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import sympy

from kanerobot.errors import DescriptionError, RobotFileError
from kanerobot.robot import joints
from kanerobot.robot.description import (
    BASE,
    BASE_VECTOR_NAMES,
    DYNAMIC_NAMES,
    JOINT_NAMES,
    Base,
    Disc,
    Frame,
    GeneralPlacement,
    Ground,
    KKPlacement,
    Robot,
    Wheel,
    default_dynamics,
    default_joint_parameters,
    default_links,
    parameter_symbol_names,
)
from kanerobot.robot.dh import DHLink, standard_dh_robot
from kanerobot.robot.expressions import format_expression, format_joint, parse_expression
from kanerobot.robot.files import read_text, toml_key, toml_string

TOP_KEYS = ("name", "convention", "floating", "wheeled", "posture", "independent", "base", "frame", "wheel", "mimic", "disc", "ground",
            "values")
#: ``convention``: frames (the default) or the rows of a standard-DH table.
FRAMES, STANDARD_DH = "frames", "standard-dh"
CONVENTIONS = (FRAMES, STANDARD_DH)
DH_TOP_KEYS = ("name", "convention", "end", "base", "joint", "values")
DH_BASE_KEYS = ("Z",) + BASE_VECTOR_NAMES
DH_JOINT_KEYS = ("label", "sigma", "theta", "d", "a", "alpha", "offset", "inertial", "dynamics")
DH_INERTIAL_KEYS = ("mass", "com", "inertia")
WHEEL_KEYS = ("joint", "kind", "radius", "steer", "offset")
#: A ``[[disc]]`` table: the revolute ``joint`` whose link is a disc of ``radius`` (a torus wheel: and ``tyre``), rolling on
#: the ``[ground]`` (``normal``, ``height``; default z = 0 of frame 0); the top-level ``independent`` chooses the speeds.
DISC_KEYS = ("joint", "radius", "tyre")
GROUND_KEYS = ("normal", "height")
#: What a side file of discs (:func:`with_disc_file`) holds: the discs' tables and keys of a frame-tree file.
DISC_FILE_KEYS = ("independent", "disc", "ground")
#: A ``[[mimic]]`` table: ``joint`` follows ``leader``, ``q_joint = multiplier q_leader + offset`` (defaults 1, 0);
#: ``more = [{leader = "...", multiplier = ...}, ...]`` adds further leaders (a linear coupling of several joints).
MIMIC_KEYS = ("joint", "leader", "multiplier", "offset", "more")
BASE_KEYS = ("Z",) + BASE_VECTOR_NAMES + ("link", "dynamics")
KK_KEYS = KKPlacement.KEYS
GENERAL_KEYS = ("R0", "P", "axis", "q")
FRAME_KEYS = ("label", "antecedent", "sigma", "mu", "link", "closes") + KK_KEYS + GENERAL_KEYS + ("dynamics", "joint")

_IDENTITY3 = sympy.ImmutableMatrix(sympy.eye(3))
_ZERO3 = sympy.ImmutableMatrix([0, 0, 0])
_Z_AXIS = sympy.ImmutableMatrix([0, 0, 1])
_TOML_INT = 2**63


# ---------------------------------------------------------------- line finder
_ARRAY_HEADER = re.compile(r"^\s*\[\[\s*(.+?)\s*\]\]\s*(?:#.*)?$")
_TABLE_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")
_KEY_PART = r"(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')"
_KEY_LINE = re.compile(r"^\s*(" + _KEY_PART + r"(?:\s*\.\s*" + _KEY_PART + r")*)\s*=")
_MAX_NESTING = 50
_LONG_NUMBER = re.compile(r"[0-9_]{4000,}")
_TOML_ERROR_AT = re.compile(r"\s*\((?:at line (\d+), column (\d+)|at end of document)\)\s*$")


def _key_parts(text):
    return [p[1:-1] if p[:1] in "\"'" else p for p in re.findall(_KEY_PART, text)]


def _scan_brackets(line, depth, in_multiline):
    """Bracket depth and open multi-line string after ``line`` (strings and
    comments skipped), so that continuation lines of arrays are not taken
    for keys or table headers, and the deepest nesting within the line."""
    i, peak = 0, depth
    while i < len(line):
        if in_multiline:
            end = line.find(in_multiline, i)
            if end < 0:
                return depth, in_multiline, peak
            i, in_multiline = end + 3, None
            continue
        if line.startswith('"""', i) or line.startswith("'''", i):
            in_multiline = line[i : i + 3]
            i += 3
            continue
        ch = line[i]
        if ch == '"':
            i += 1
            while i < len(line) and line[i] != '"':
                i += 2 if line[i] == "\\" else 1
            i += 1
            continue
        if ch == "'":
            end = line.find("'", i + 1)
            i = len(line) if end < 0 else end + 1
            continue
        if ch == "#":
            break
        if ch in "[{":
            depth += 1
            peak = max(peak, depth)
        elif ch in "]}":
            depth = max(0, depth - 1)
        i += 1
    return depth, in_multiline, peak


class _Lines:
    """Where things are in the text: a path such as ``('frame', 3, 'R0')``
    (the fourth ``[[frame]]``'s R0) maps to the line that defines it."""

    def __init__(self, text):
        self.where = {}
        self.too_deep = None  # first line nesting arrays or tables more than _MAX_NESTING deep
        table: tuple = ()
        counts: dict[str, int] = {}  # arrays of tables ([[frame]], [[wheel]], [[joint]]): how many met so far
        depth, multiline = 0, None
        for number, line in enumerate(text.splitlines(), 1):
            if depth == 0 and multiline is None:
                array, plain = _ARRAY_HEADER.match(line), _TABLE_HEADER.match(line)
                if array:
                    parts = _key_parts(array.group(1))
                    if parts in (["frame"], ["wheel"], ["joint"], ["disc"]):
                        counts[parts[0]] = counts.get(parts[0], -1) + 1
                        self._add((parts[0],), number)
                        table = (parts[0], counts[parts[0]])
                    else:
                        table = tuple(parts)
                    self._add(table, number)
                elif plain:
                    parts = _key_parts(plain.group(1))
                    if parts[:1] and parts[0] in counts and len(parts) > 1:
                        table = (parts[0], counts[parts[0]]) + tuple(parts[1:])
                    else:
                        table = tuple(parts)
                    self._add(table, number)
                else:
                    key = _KEY_LINE.match(line)
                    if key:
                        parts = _key_parts(key.group(1))
                        for n in range(1, len(parts) + 1):
                            self._add(table + tuple(parts[:n]), number)
            depth, multiline, peak = _scan_brackets(line, depth, multiline)
            if peak > _MAX_NESTING and self.too_deep is None:
                self.too_deep = number

    def _add(self, path, number):
        self.where.setdefault(path, number)

    def line(self, *path):
        """Line of ``path``, or of its nearest enclosing table or key."""
        for n in range(len(path), 0, -1):
            if path[:n] in self.where:
                return self.where[path[:n]]
        return None


# --------------------------------------------------------------------- reader
def read_frames(path):
    """Read a robot from a frame-tree TOML file.

    Raises :class:`~kanerobot.errors.RobotFileError` (``path:line: message``)
    for anything wrong in the file.
    """
    return frames_from_text(read_text(path), path)


def frames_from_text(text, path="<string>"):
    """Read a robot from the text of a frame-tree TOML file."""
    lines, data = _parse(text, path)
    reader = _Reader(path, lines, data)
    if reader.convention() == STANDARD_DH:
        reader = _DHReader(path, lines, data)
    return reader.robot()


def _parse(text, path):
    """``(lines, data)``: the line finder and the tables of a TOML text; its syntax errors as one :class:`RobotFileError`."""
    lines = _Lines(text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = _TOML_ERROR_AT.search(message)
        line = None
        if match:
            message = message[: match.start()]
            line = int(match.group(1)) if match.group(1) else max(1, len(text.splitlines()))
        raise RobotFileError(path, line, f"TOML syntax error: {message}") from None
    except (RecursionError, MemoryError):
        # tomllib parses nested arrays and inline tables recursively.
        raise RobotFileError(
            path, lines.too_deep, f"arrays or tables nested too deeply (more than {_MAX_NESTING} levels): a robot file needs 2"
        ) from None
    except ValueError:
        # tomllib converts integers with int(), which refuses more than 4300
        # digits (sys.get_int_max_str_digits) with a bare ValueError.
        match = _LONG_NUMBER.search(text)
        line = text.count("\n", 0, match.start()) + 1 if match else None
        raise RobotFileError(path, line, "a number has too many digits: numbers must be within a double's range (1.8e308)") from None
    return lines, data


def with_disc_file(robot, path, radius_of=None):
    """``robot`` with the rolling discs of a side file: the ``[[disc]]`` tables, ``[ground]`` and ``independent`` of a frame-tree file.

    The discs of a URDF or MJCF robot, declared beside its file
    (``kr.load("robot.urdf", discs="robot.discs.toml")``, ``--discs`` on the
    command line); ``docs/frames-format.md`` describes the tables.

    Parameters
    ----------
    robot : Robot
    path : str or Path
        The side file (TOML).
    radius_of : callable, optional
        ``radius_of(joint, instead) -> float``: the radius of a ``[[disc]]``
        table without ``radius``, read from the robot's file
        (:func:`kanerobot.robot.wheel_shapes.radius_reader`); without it
        (a ``.par`` or ``.toml`` robot) every table gives its radius.

    Returns
    -------
    Robot
        :meth:`Robot.with_discs` of the file's discs.

    Raises
    ------
    RobotFileError
        ``path:line:`` for anything wrong in the file, a disc naming no
        revolute joint of ``robot`` included.

    Examples
    --------
    >>> import tempfile, kanerobot as kr
    >>> side = Path(tempfile.mkdtemp()) / "planar2.discs.toml"
    >>> _ = side.write_text('[[disc]]\\njoint = "2"\\nradius = 0.1\\n')
    >>> with_disc_file(kr.load(kr.frames_path("planar2")), side).discs
    (Disc(joint='2', radius=0.100000000000000, tyre=0),)
    """
    lines, data = _parse(read_text(path), path)
    reader = _Reader(path, lines, data)
    reader.check_keys(data, DISC_FILE_KEYS, (), "a file of discs (top level)")
    if not data.get("disc"):
        first = next((lines.line(key) for key in data), 1)
        raise RobotFileError(path, first, "no discs: declare each in a [[disc]] table (joint, radius), see docs/frames-format.md")
    discs, ground, independent = reader.disc_tables(radius_of is not None)
    try:
        with_discs = robot.with_discs(discs, ground, independent)  # the joints checked before their shapes are read
    except DescriptionError as exc:
        raise RobotFileError(path, reader.description_line(exc), f"{exc} (robot {robot.name})") from None
    if not reader.unsized:
        return with_discs
    for index in reader.unsized:  # radius 1 stood for the radius of the robot's file
        joint, line = discs[index].joint, reader.lines.line("disc", index)
        discs[index] = Disc(joint, radius_of(joint, f"radius = RADIUS in its [[disc]] table ({path}:{line})"))
    return robot.with_discs(discs, ground, independent)


def _close(word, known):
    same = [k for k in known if k.lower() == str(word).lower()]
    guess = same or difflib.get_close_matches(str(word), known, n=1)
    return f" (did you mean {guess[0]!r}?)" if guess else ""


class _Reader:
    def __init__(self, path, lines, data):
        self.path = path
        self.lines = lines
        self.data = data
        self.labels = []  # frame labels in file order
        self.wheel_labels = []  # wheel joints in file order

    # ------------------------------------------------------------- helpers
    def fail(self, where, message):
        raise RobotFileError(self.path, self.lines.line(*where), message)

    def check_keys(self, table, known, where, what):
        for key in table:
            if key not in known:
                self.fail(
                    where + (key,),
                    f"unknown key {key!r} in {what}{_close(key, known)}; known keys: {', '.join(known)}",
                )

    def table(self, value, where, what):
        if not isinstance(value, dict):
            self.fail(where, f"{what} must be a table of keys and values, got {value!r}")
        return value

    def expr(self, value, where, what):
        if isinstance(value, (list, dict)):
            self.fail(where, f"{what} must be a number or an expression in quotes, got {value!r}")
        try:
            # parse_expression refuses values that are not finite real numbers.
            return parse_expression(value)
        except Exception as exc:  # ExpressionError, or sympy failing on odd input
            self.fail(where, f"{what}: {exc}")

    def vector(self, value, size, where, what):
        if not isinstance(value, list) or len(value) != size or any(isinstance(v, (list, dict)) for v in value):
            self.fail(where, f"{what} must be a list of {size} values, like [0, 0, 1]; got {value!r}")
        return sympy.ImmutableMatrix([self.expr(v, where, what) for v in value])

    def matrix(self, value, size, where, what):
        example = "[[1, 0, 0], [0, 1, 0], [0, 0, 1]]" if size == 3 else "[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]"
        rows_ok = isinstance(value, list) and len(value) == size
        if rows_ok:
            rows_ok = all(isinstance(row, list) and len(row) == size for row in value)
        if not rows_ok:
            shape = _shape(value)
            self.fail(where, f"{what} must be {size} rows of {size} values, written row by row like {example}; got {shape}")
        entries = [self.expr(v, where, what) for row in value for v in row]
        return sympy.ImmutableMatrix(size, size, entries)

    def label(self, value, where, what):
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            self.fail(where, f"{what} must be a frame label such as \"3\" or \"4l\", got {value!r}")
        label = str(value).strip()
        if not label:
            self.fail(where, f"{what} is empty: write a frame label such as \"3\" or \"4l\" (\"0\" is the base)")
        return label

    def integer(self, value, allowed, where, what, meaning):
        if isinstance(value, bool) or not isinstance(value, int) or value not in allowed:
            self.fail(where, f"{what} is {value!r}: use {meaning}")
        return value

    def boolean(self, value, where, what):
        if not isinstance(value, bool):
            self.fail(where, f"{what} must be true or false, got {value!r}")
        return value

    def name(self):
        """The robot's name: the ``name`` key, or the file's name."""
        name = self.data.get("name", Path(str(self.path)).stem)
        if not isinstance(name, str) or not name.strip():
            self.fail(("name",), f"name must be a non-empty string in quotes, got {name!r}")
        return name

    def convention(self):
        """``"frames"`` or ``"standard-dh"``: how the file describes the robot."""
        value = self.data.get("convention", FRAMES)
        if value not in CONVENTIONS:
            self.fail(("convention",), f"convention is {value!r}: use \"{FRAMES}\" ([[frame]] tables, the default) or "
                                       f"\"{STANDARD_DH}\" ([[joint]] tables, the rows of a standard-DH table)")
        return value

    # --------------------------------------------------------------- build
    def robot(self):
        """The robot the file describes: top-level keys, frames, base, wheels, links, then Robot.create."""
        data = self.data
        name, floating, wheeled, raw_frames = self.top_level()
        frames, overrides, dynamics, joint_parameters, loops = self.frame_tables(raw_frames)
        self.check_loops(frames, loops)
        base, base_link, base_dynamics = self.base(data.get("base", {}))
        if base_link is not None:
            overrides[BASE] = base_link
        if base_dynamics is not None:
            dynamics[BASE] = base_dynamics
        posture = self.posture(data["posture"]) if "posture" in data else ()
        wheels = self.wheels(data.get("wheel", []))
        self.wheel_labels = [wheel.joint for wheel in wheels]
        mimics = self.mimics(data.get("mimic", []))
        discs, ground, independent = self.disc_tables()
        links = self.links(default_links(frames, loops, floating, wheeled, posture), overrides, dynamics)
        try:
            robot = Robot.create(
                name,
                frames,
                links=links,
                dynamics=dynamics,
                joint_parameters=joint_parameters,
                base=base,
                loops=loops,
                floating=floating,
                wheeled=wheeled,
                wheels=wheels,
                posture=posture,
                mimics=mimics,
                discs=discs,
                ground=ground,
                independent=independent,
            )
        except DescriptionError as exc:
            raise RobotFileError(self.path, self.description_line(exc), str(exc)) from None
        except Exception as exc:  # sympy failing on an odd value: still the file's fault
            raise RobotFileError(self.path, None, f"cannot build the robot: {exc}") from None
        return self.with_values(robot)

    def with_values(self, robot):
        """``robot`` with the numbers of the file's ``[values]`` table (``NAME = number``), each a parameter of it."""
        if "values" not in self.data:
            return robot
        raw = self.table(self.data["values"], ("values",), "[values]")
        known = sorted(parameter_symbol_names(robot))
        values = {}
        for name, value in raw.items():
            where = ("values", name)
            if name not in known:
                self.fail(where, f"{name} in [values] is not a parameter of {robot.name}{_close(name, known)}: "
                                 f"give numbers to the symbols of its frames, links and base only")
            try:
                number = float(value) if not isinstance(value, (bool, str, list, dict)) else math.nan
            except OverflowError:
                number = math.inf
            if not math.isfinite(number):
                self.fail(where, f"{name} in [values] must be a finite number, as in {name} = 0.5; got {value!r}")
            values[name] = number
        return replace(robot, values=MappingProxyType(values))

    def top_level(self):
        """The name, floating and wheeled flags and the list of [[frame]] tables, checked."""
        data = self.data
        if "joint" in data and "frame" not in data:
            self.fail(("joint",), f"[[joint]] tables are the rows of a standard-DH table: add convention = \"{STANDARD_DH}\" "
                                  f"at the top of the file, or describe frames in [[frame]] tables")
        self.check_keys(data, TOP_KEYS, (), "the file (top level)")
        name = self.name()
        floating = self.boolean(data.get("floating", False), ("floating",), "floating")
        wheeled = self.boolean(data.get("wheeled", False), ("wheeled",), "wheeled")
        if "frame" not in data:
            self.fail((), "no frames: describe each frame in a [[frame]] table (see docs/frames-format.md)")
        raw_frames = data["frame"]
        if not isinstance(raw_frames, list):
            self.fail(("frame",), "frames are written [[frame]] (double brackets), one table per frame")
        if not raw_frames:
            self.fail(("frame",), "no frames: describe each frame in a [[frame]] table")
        return name, floating, wheeled, raw_frames

    def frame_tables(self, raw_frames):
        """Frames, link flags given, dynamics, joint parameters and loops of the [[frame]] tables."""
        frames, overrides, dynamics, joint_parameters, loops = [], {}, {}, {}, []
        for index, raw in enumerate(raw_frames):
            where = ("frame", index)
            raw = self.table(raw, where, "a frame")
            frame, link, closes = self.frame(index, raw)
            if frame.label in self.labels:
                self.fail(where + ("label",), f"frame label {frame.label} is used twice: every frame needs its own label")
            self.labels.append(frame.label)
            frames.append(frame)
            if link is not None:
                overrides[frame.label] = link
            if closes is not None:
                loops.append((closes, frame.label))
            if "dynamics" in raw:
                dynamics[frame.label] = self.parameters(raw["dynamics"], DYNAMIC_NAMES, where + ("dynamics",), f"dynamics of frame {frame.label}")
            if "joint" in raw:
                if not frame.is_joint:
                    self.fail(where + ("joint",), f"frame {frame.label} is fixed (sigma = 2), so it has no joint parameters: remove [frame.joint]")
                joint_parameters[frame.label] = self.parameters(raw["joint"], JOINT_NAMES, where + ("joint",), f"joint of frame {frame.label}")
        return frames, overrides, dynamics, joint_parameters, loops

    def links(self, links, overrides, dynamics):
        """The default ``links`` with the link flags of the file applied; only links may have dynamics."""
        if overrides:
            chosen = {label: (label in links) for label in [BASE] + self.labels}
            chosen.update(overrides)
            links = [label for label in [BASE] + self.labels if chosen[label]]
        for label in dynamics:
            if label not in links:
                where = ("base", "dynamics") if label == BASE else ("frame", self.labels.index(label), "dynamics")
                what = "the base" if label == BASE else f"frame {label}"
                self.fail(where, f"{what} carries no link, so it has no dynamics: remove the table or set link = true")
        return links

    def frame(self, index, raw):
        where = ("frame", index)
        named = raw.get("label")
        what = f"frame {named}" if isinstance(named, (str, int)) and not isinstance(named, bool) else f"frame number {index + 1}"
        self.check_keys(raw, FRAME_KEYS, where, what)
        for key in ("label", "antecedent", "sigma"):
            if key not in raw:
                self.fail(where, f"frame number {index + 1} has no {key}: every [[frame]] needs label, antecedent and sigma")
        label = self.label(raw["label"], where + ("label",), "label")
        antecedent = self.label(raw["antecedent"], where + ("antecedent",), f"antecedent of frame {label}")
        sigma = self.integer(raw["sigma"], (0, 1, 2), where + ("sigma",), f"sigma of frame {label}", "0 (revolute), 1 (prismatic) or 2 (fixed)")
        mu = self.integer(raw.get("mu", 1), (0, 1), where + ("mu",), f"mu of frame {label}", "1 (active) or 0 (passive)")
        link = self.boolean(raw["link"], where + ("link",), f"link of frame {label}") if "link" in raw else None
        closes = self.label(raw["closes"], where + ("closes",), f"closes of frame {label}") if "closes" in raw else None
        kk = [k for k in KK_KEYS if k in raw]
        general = [k for k in GENERAL_KEYS if k in raw]
        if kk and general:
            later = max(kk[0], general[0], key=lambda k: self.lines.line(*where, k) or 0)
            self.fail(
                where + (later,),
                f"frame {label} mixes Khalil-Kleinfinger parameters ({', '.join(kk)}) with a general placement "
                f"({', '.join(general)}): use one or the other",
            )
        placement: KKPlacement | GeneralPlacement
        if general:
            R0 = self.matrix(raw["R0"], 3, where + ("R0",), f"R0 of frame {label}") if "R0" in raw else _IDENTITY3
            P = self.vector(raw["P"], 3, where + ("P",), f"P of frame {label}") if "P" in raw else _ZERO3
            axis = self.vector(raw["axis"], 3, where + ("axis",), f"axis of frame {label}") if "axis" in raw else _Z_AXIS
            if "q" in raw:
                q = self.expr(raw["q"], where + ("q",), f"q of frame {label}")
            elif sigma != joints.FIXED:
                self.fail(where, f"frame {label} is a joint (sigma = {sigma}) with a general placement: give its joint variable, e.g. q = \"q{label}\"")
            else:
                q = sympy.S.Zero
            placement = GeneralPlacement(R0=R0, P=P, axis=axis, q=q)
        else:
            placement = KKPlacement(*(self.expr(raw.get(k, 0), where + (k,), f"{k} of frame {label}") for k in KK_KEYS))
        return Frame(label, antecedent, sigma, mu, placement), link, closes

    def posture(self, value):
        where = ("posture",)
        if not isinstance(value, list) or len(value) != 3:
            self.fail(where, f"posture must be a list of the 3 joints x, y, theta of the planar base, like [\"x\", \"y\", \"th\"]; got {value!r}")
        return tuple(self.label(v, where, "a joint of the posture") for v in value)

    def wheels(self, raw_wheels):
        if not isinstance(raw_wheels, list):
            self.fail(("wheel",), "wheels are written [[wheel]] (double brackets), one table per wheel")
        wheels = []
        for index, raw in enumerate(raw_wheels):
            where = ("wheel", index)
            raw = self.table(raw, where, "a wheel")
            named = raw.get("joint")
            what = f"wheel {named}" if isinstance(named, (str, int)) and not isinstance(named, bool) else f"wheel number {index + 1}"
            self.check_keys(raw, WHEEL_KEYS, where, what)
            if "joint" not in raw:
                self.fail(where, f"wheel number {index + 1} has no joint: give joint, the label of the wheel's revolute joint")
            joint = self.label(raw["joint"], where + ("joint",), f"joint of wheel number {index + 1}")
            kind = raw.get("kind", "fixed")
            if not isinstance(kind, str):
                self.fail(where + ("kind",), f"kind of wheel {joint} must be \"fixed\", \"steering\" or \"castor\", got {kind!r}")
            radius = self.expr(raw["radius"], where + ("radius",), f"radius of wheel {joint}") if "radius" in raw else None
            steer = self.label(raw["steer"], where + ("steer",), f"steer of wheel {joint}") if "steer" in raw else None
            offset = self.expr(raw["offset"], where + ("offset",), f"offset of wheel {joint}") if "offset" in raw else None
            try:
                wheels.append(Wheel(joint, kind, radius=radius, steer=steer, offset=offset))
            except DescriptionError as exc:
                key = (exc.key or "").partition(":")[2]
                self.fail(where + ((key,) if key in raw else ()), str(exc))
        return tuple(wheels)

    def mimics(self, raw_mimics):
        """``(joint, leader, multiplier, offset)`` of the ``[[mimic]]`` tables (Robot.create checks the labels)."""
        if not isinstance(raw_mimics, list):
            self.fail(("mimic",), "mimic joints are written [[mimic]] (double brackets), one table per mimic joint")
        out = []
        self.mimic_labels = []
        for index, raw in enumerate(raw_mimics):
            where = ("mimic", index)
            raw = self.table(raw, where, "a mimic joint")
            self.check_keys(raw, MIMIC_KEYS, where, f"mimic joint number {index + 1}")
            for key in ("joint", "leader"):
                if key not in raw:
                    self.fail(where, f"mimic joint number {index + 1} has no {key}: give joint and leader, the labels of the mimic "
                                     f"joint and of the joint it follows")  # fmt: skip
            joint = self.label(raw["joint"], where + ("joint",), f"joint of mimic number {index + 1}")
            leader = self.label(raw["leader"], where + ("leader",), f"leader of mimic joint {joint}")
            k, o = (self.expr(raw[key], where + (key,), f"{key} of mimic joint {joint}") if key in raw else default
                    for key, default in (("multiplier", sympy.S.One), ("offset", sympy.S.Zero)))  # fmt: skip
            out.append((joint, leader, k, o, self.more_leaders(raw.get("more", []), where + ("more",), joint)))
            self.mimic_labels.append(joint)
        return out

    def more_leaders(self, raw, where, joint):
        """``((leader, multiplier), ...)`` of a mimic's ``more = [{leader, multiplier}, ...]``."""
        if not isinstance(raw, list):
            self.fail(where, f"more of mimic joint {joint} is a list of tables: more = [{{leader = \"...\", multiplier = ...}}]")
        out = []
        for index, item in enumerate(raw):
            item = self.table(item, where + (index,), f"a further leader of mimic joint {joint}")
            self.check_keys(item, ("leader", "multiplier"), where + (index,), f"further leader number {index + 1} of mimic joint {joint}")
            if "leader" not in item:
                self.fail(where, f"further leader number {index + 1} of mimic joint {joint} has no leader: give its label")
            leader = self.label(item["leader"], where + (index, "leader"), f"further leader of mimic joint {joint}")
            k = self.expr(item["multiplier"], where + (index, "multiplier"), f"multiplier of leader {leader} of mimic joint {joint}") \
                if "multiplier" in item else sympy.S.One
            out.append((leader, k))
        return tuple(out)

    def disc_tables(self, unsized=False):
        """``(discs, ground, independent)`` of the ``[[disc]]`` tables, ``[ground]`` and ``independent`` (Robot.create checks the labels);
        ``unsized``: a table may leave out its radius (radius 1 in its place, its index in :attr:`unsized`), but a torus wheel's."""
        data = self.data
        raw_discs = data.get("disc", [])
        if not isinstance(raw_discs, list):
            self.fail(("disc",), "discs are written [[disc]] (double brackets), one table per disc")
        discs = []
        self.disc_labels = []
        self.unsized = []  # the tables without radius, when the robot's file gives it (a side file of a URDF or MJCF robot)
        for index, raw in enumerate(raw_discs):
            where = ("disc", index)
            raw = self.table(raw, where, "a disc")
            named = raw.get("joint")
            what = f"disc {named}" if isinstance(named, (str, int)) and not isinstance(named, bool) else f"disc number {index + 1}"
            self.check_keys(raw, DISC_KEYS, where, what)
            for key in ("joint", "radius"):
                if key not in raw and not (key == "radius" and unsized and "tyre" not in raw):
                    self.fail(where, f"{what} has no {key}: give joint (the label of its revolute joint, its axle) and radius")
            joint = self.label(raw["joint"], where + ("joint",), f"joint of disc number {index + 1}")
            if "radius" not in raw:
                self.unsized.append(index)
            radius = self.expr(raw["radius"], where + ("radius",), f"radius of disc {joint}") if "radius" in raw else sympy.S.One
            tyre = self.expr(raw["tyre"], where + ("tyre",), f"tyre of disc {joint}") if "tyre" in raw else sympy.S.Zero
            try:
                discs.append(Disc(joint, radius, tyre))
            except DescriptionError as exc:
                self.fail(where + ((exc.key or "").partition(":")[2],), str(exc))
            self.disc_labels.append(joint)
        ground = None
        if "ground" in data:
            raw = self.table(data["ground"], ("ground",), "[ground]")
            self.check_keys(raw, GROUND_KEYS, ("ground",), "[ground]")
            normal = self.vector(raw["normal"], 3, ("ground", "normal"), "normal of the ground") if "normal" in raw else _Z_AXIS
            height = self.expr(raw["height"], ("ground", "height"), "height of the ground") if "height" in raw else sympy.S.Zero
            try:
                ground = Ground(normal, height)
            except DescriptionError as exc:
                self.fail(("ground", (exc.key or "").partition(":")[2]), str(exc))
        independent = ()
        if "independent" in data:
            value = data["independent"]
            if not isinstance(value, list):
                self.fail(("independent",), f"independent must be a list of joint labels, like [\"wl\", \"wr\"]; got {value!r}")
            independent = tuple(self.label(v, ("independent",), "an independent speed") for v in value)
        return discs, ground, independent

    def parameters(self, raw, known, where, what):
        raw = self.table(raw, where, what)
        self.check_keys(raw, known, where, what)
        return {key: self.expr(value, where + (key,), f"{key} in {what}") for key, value in raw.items()}

    def base(self, raw):
        where = ("base",)
        raw = self.table(raw, where, "base")
        self.check_keys(raw, BASE_KEYS, where, "[base]")
        values = {}
        if "Z" in raw:
            values["Z"] = self.matrix(raw["Z"], 4, where + ("Z",), "Z of the base")
        for key in BASE_VECTOR_NAMES:
            if key in raw:
                values[key] = self.vector(raw[key], 3, where + (key,), f"{key} of the base")
        link = self.boolean(raw["link"], where + ("link",), "link of the base") if "link" in raw else None
        dynamics = None
        if "dynamics" in raw:
            dynamics = self.parameters(raw["dynamics"], DYNAMIC_NAMES, where + ("dynamics",), "dynamics of the base")
        return Base(**values), link, dynamics

    def check_loops(self, frames, loops):
        by_label = {f.label: f for f in frames}
        cuts: dict[str, str] = {}  # cut joint -> the frame closing its loop
        for cut, closing in loops:
            where = ("frame", self.labels.index(closing), "closes")
            frame = by_label[closing]
            if frame.is_joint:
                self.fail(
                    where,
                    f"frame {closing} closes a loop but is a joint (sigma = {frame.sigma}): the frame that closes "
                    f"a loop must be fixed (sigma = 2); put closes on that fixed frame",
                )
            if cut not in by_label:
                self.fail(
                    where,
                    f"loop does not close: closes = {cut!r} names no frame (frames are {', '.join(self.labels)}); "
                    f"name the joint where the loop is cut",
                )
            if not by_label[cut].is_joint:
                self.fail(
                    where,
                    f"loop does not close: frame {cut} is fixed (sigma = 2), but closes must name the joint "
                    f"(sigma 0 or 1) where the loop is cut",
                )
            if cut == closing:
                self.fail(where, f"frame {closing} cannot close a loop on itself")
            if by_label[cut].antecedent == frame.antecedent:
                self.fail(
                    where,
                    f"loop does not close: frames {cut} and {closing} both hang on frame {frame.antecedent}; "
                    f"the closing frame must be on the other link of the cut joint {cut}",
                )
            if cut in cuts:
                self.fail(where, f"joint {cut} is already closed by frame {cuts[cut]}: each cut joint closes one loop")
            cuts[cut] = closing

    def description_line(self, exc):
        key, label = exc.key, exc.label
        if key == "posture":
            return self.lines.line("posture") or self.lines.line("wheeled")
        if key and key.startswith("mimic"):
            if label in getattr(self, "mimic_labels", []):
                return self.lines.line("mimic", self.mimic_labels.index(label))
            return self.lines.line("mimic", 0)
        if key and key.startswith("disc:"):
            labels = getattr(self, "disc_labels", [])
            return self.lines.line("disc", labels.index(label), key.partition(":")[2]) if label in labels else self.lines.line("disc", 0)
        if key and key.partition(":")[0] in ("ground", "independent"):
            return self.lines.line(key.partition(":")[0], key.partition(":")[2]) if ":" in key else self.lines.line(key)
        if key and key.startswith("wheel:"):
            if label in self.wheel_labels:
                return self.lines.line("wheel", self.wheel_labels.index(label), key.partition(":")[2])
            return self.lines.line("wheel", 0)
        if label in (BASE, "the base", "base"):  # how description errors name the base
            if key in DYNAMIC_NAMES:
                return self.lines.line("base", "dynamics", key)
            return self.lines.line("base", key) if key else self.lines.line("base")
        if label not in self.labels:
            return self.lines.line("frame", 0) if key in (None, "links", "dynamics", "joint_parameters") else None
        index = len(self.labels) - 1 - self.labels[::-1].index(label)
        where = ("frame", index)
        names = {"ant": ("antecedent",), "links": ("link",), "loops": ("closes",)}
        if key in names:
            return self.lines.line(*where, *names[key])
        if key in DYNAMIC_NAMES:
            return self.lines.line(*where, "dynamics", key)
        if key in JOINT_NAMES:
            return self.lines.line(*where, "joint", key)
        if key in FRAME_KEYS:
            return self.lines.line(*where, key)
        return self.lines.line(*where)


class _DHReader(_Reader):
    """A file with ``convention = "standard-dh"``: one ``[[joint]]`` table per
    row of a standard-DH table, converted by :mod:`kanerobot.robot.dh`."""

    def robot(self):
        data = self.data
        self.check_keys(data, DH_TOP_KEYS, (), "a standard-DH file (top level)")
        name = self.name()
        raw_joints = data.get("joint", [])
        if not isinstance(raw_joints, list):
            self.fail(("joint",), "joints are written [[joint]] (double brackets), one table per row of the DH table")
        if not raw_joints:
            self.fail((), "no joints: write each row of the standard-DH table as a [[joint]] table (see docs/frames-format.md)")
        end = self.label(data["end"], ("end",), "end") if "end" in data else None
        raw_base = self.table(data.get("base", {}), ("base",), "base")
        self.check_keys(raw_base, DH_BASE_KEYS, ("base",), "[base] of a standard-DH arm (a fixed base, not a link)")
        base, _, _ = self.base(raw_base)
        links = [self.row(index, raw) for index, raw in enumerate(raw_joints)]
        try:
            robot = standard_dh_robot(name, links, base=base, end=end)
        except DescriptionError as exc:
            raise RobotFileError(self.path, self.dh_line(exc), str(exc)) from None
        except Exception as exc:  # sympy failing on an odd value: still the file's fault
            raise RobotFileError(self.path, None, f"cannot build the robot: {exc}") from None
        return self.with_values(robot)

    def row(self, index, raw):
        """The :class:`~kanerobot.robot.dh.DHLink` of the ``index``-th [[joint]] table."""
        where = ("joint", index)
        raw = self.table(raw, where, "a joint")
        label = self.label(raw["label"], where + ("label",), "label") if "label" in raw else str(index + 1)
        self.labels.append(label)
        what = f"joint {label}"
        self.check_keys(raw, DH_JOINT_KEYS, where, what)
        sigma = self.integer(raw.get("sigma", 0), (0, 1), where + ("sigma",), f"sigma of {what}",
                             "0 (revolute: theta is the joint variable) or 1 (prismatic: d is); a standard-DH table has no fixed rows")
        variable = "theta" if sigma == joints.REVOLUTE else "d"
        required = [key for key in ("theta", "d", "a", "alpha") if key != variable]
        for key in required:
            if key not in raw:
                self.fail(where, f"{what} has no {key}: every row of a standard-DH table gives {', '.join(required)} "
                                 f"({variable} holds the joint variable); write 0 where the table has 0")
        values = {key: self.expr(raw[key], where + (key,), f"{key} of {what}")
                  for key in ("theta", "d", "a", "alpha", "offset") if key in raw}
        if "inertial" in raw:
            values.update(self.inertial(raw["inertial"], where + ("inertial",), label))
        if "dynamics" in raw:
            # Every SYMORO name is read; DHLink refuses those the inertial table gives.
            values["dynamics"] = self.parameters(raw["dynamics"], DYNAMIC_NAMES, where + ("dynamics",), f"dynamics of link {label}")
        try:
            return DHLink(label, sigma, **values)
        except DescriptionError as exc:
            self.fail(self.dh_where(exc.key, index), str(exc))

    def inertial(self, raw, where, label):
        """mass, com and inertia of a [joint.inertial] table, all three required."""
        what = f"[joint.inertial] of link {label}"
        raw = self.table(raw, where, what)
        self.check_keys(raw, DH_INERTIAL_KEYS, where, what)
        for key in DH_INERTIAL_KEYS:
            if key not in raw:
                self.fail(where, f"{what} has no {key}: give mass, com (the centre of mass in DH frame {label}) and inertia "
                                 f"(about the centre of mass, in the axes of DH frame {label})")
        inertia = raw["inertia"]
        diagonal = isinstance(inertia, list) and len(inertia) == 3 and not any(isinstance(v, (list, dict)) for v in inertia)
        return {
            "mass": self.expr(raw["mass"], where + ("mass",), f"mass of link {label}"),
            "com": self.vector(raw["com"], 3, where + ("com",), f"com of link {label}"),
            "inertia": (self.vector(inertia, 3, where + ("inertia",), f"inertia of link {label}") if diagonal else
                        self.matrix(inertia, 3, where + ("inertia",), f"inertia of link {label} (or its 3 diagonal values)")),
        }

    def dh_where(self, key, index):
        """Where the DH entry ``key`` of the ``index``-th [[joint]] is (or would be)."""
        where = ("joint", index)
        if key in DH_INERTIAL_KEYS:
            return where + ("inertial", key)
        if key in DYNAMIC_NAMES:
            return where + ("dynamics", key)
        return where + (key,) if key else where

    def dh_line(self, exc):
        """Line of a description error raised in DH terms by standard_dh_robot."""
        if exc.label == BASE and exc.key not in DH_JOINT_KEYS:
            return self.description_line(exc)
        if exc.key == "end" and "end" in self.data:
            return self.lines.line("end")
        if exc.key == "end":
            # The default end label str(n + 1) is a joint's: that joint's label is at fault too.
            return self.lines.line("joint", self.labels.index(exc.label), "label")
        if exc.label in self.labels:
            index = len(self.labels) - 1 - self.labels[::-1].index(exc.label)
            return self.lines.line(*self.dh_where(exc.key, index))
        return self.lines.line("joint", 0)


def _shape(value):
    if not isinstance(value, list):
        return repr(value)
    if value and all(isinstance(row, list) for row in value):
        sizes = sorted({len(row) for row in value})
        return f"{len(value)} rows of {' or '.join(str(n) for n in sizes)} values"
    return f"{len(value)} values"


# --------------------------------------------------------------------- writer
def write_frames(robot, path=None):
    """The TOML text of ``robot`` (``kanerobot.robot.io.save`` writes it).

    Only what differs from the defaults is written for the base, the links'
    dynamic parameters and the joint parameters; ``robot.values`` (a URDF's
    numbers) go in a ``[values]`` table.  ``read_frames`` of the text gives
    back an equal robot, but for a URDF's joint limits (``robot.limits``),
    which the format has no place for.
    """
    return _Writer(robot, path).text()


class _Writer:
    def __init__(self, robot, path):
        self.robot = robot
        self.path = path if path is not None else "<string>"
        self.out = []

    def fail(self, message):
        raise RobotFileError(self.path, None, f"cannot write robot {self.robot.name}: {message}")

    def value(self, expr, what):
        expr = sympy.sympify(expr)
        if isinstance(expr, sympy.Integer) and abs(int(expr)) < _TOML_INT:
            text, back = str(int(expr)), parse_expression(int(expr))
        elif isinstance(expr, sympy.Float) and sympy.Float(float(expr)) == expr and abs(float(expr)) != float("inf"):
            text, back = repr(float(expr)), parse_expression(float(expr))
        else:
            source = format_expression(expr)
            text = toml_string(source)
            try:
                back = parse_expression(source)
            except Exception as exc:
                self.fail(f"{what} = {source} cannot be read back ({exc})")
        if back != expr:
            self.fail(f"{what} = {expr} would read back as {back}")
        return text

    def joint_value(self, frame, expr, what):
        """A joint's theta, r or q as written, the variable first (``"th2 - pi/2"``)."""
        if frame.offset == 0:
            return self.value(expr, what)
        source = format_joint(frame.q, frame.offset)
        if parse_expression(source) != sympy.sympify(expr):
            self.fail(f"{what} = {expr} would read back as {source}")
        return toml_string(source)

    def vector(self, values, what):
        return "[" + ", ".join(self.value(v, what) for v in values) + "]"

    def matrix(self, m, what):
        return "[" + ", ".join(self.vector(m.row(i), what) for i in range(m.rows)) + "]"

    def put(self, key, text):
        self.out.append(f"{key} = {text}")

    def text(self):
        robot = self.robot
        loops = robot.loops
        position = {label: n for n, label in enumerate(robot.labels)}
        closing = {close: cut for cut, close in loops}
        if len(closing) != len(loops) or list(loops) != sorted(loops, key=lambda loop: position.get(loop[1], -1)):
            self.fail("its loops must be listed in the order of their closing frames, one loop per closing frame")
        canonical = [label for label in (BASE,) + robot.labels if label in robot.links]
        if list(robot.links) != canonical:
            self.fail(f"its links {', '.join(robot.links)} must be in frame order ({', '.join(canonical)})")
        defaults = set(default_links(robot.frames, loops, robot.floating, robot.wheeled, robot.posture))
        links = set(robot.links)

        self.out.append("# kanerobot frame tree, see docs/frames-format.md")
        self.put("name", toml_string(robot.name))
        self.put("floating", _bool(robot.floating))
        self.put("wheeled", _bool(robot.wheeled))
        if robot.posture:
            self.put("posture", "[" + ", ".join(toml_string(label) for label in robot.posture) + "]")
        if robot.independent:
            self.put("independent", "[" + ", ".join(toml_string(label) for label in robot.independent) + "]")
        self.write_base((BASE in links) != (BASE in defaults))
        for frame in robot.frames:
            self.write_frame(frame, frame.label in links, frame.label in defaults, closing.get(frame.label))
        for wheel in robot.wheels:
            self.write_wheel(wheel)
        self.write_discs()
        for mimic in robot.mimics:
            self.out.extend(["", "[[mimic]]"])
            self.put("joint", toml_string(mimic.joint))
            self.put("leader", toml_string(mimic.leader))
            self.put("multiplier", self.value(mimic.multiplier, f"multiplier of mimic joint {mimic.joint}"))
            self.put("offset", self.value(mimic.offset, f"offset of mimic joint {mimic.joint}"))
            if mimic.more:
                terms = (f"{{leader = {toml_string(leader)}, multiplier = {self.value(k, f'multiplier of mimic joint {mimic.joint}')}}}"
                         for leader, k in mimic.more)  # fmt: skip
                self.put("more", f"[{', '.join(terms)}]")
        self.write_values()
        return "\n".join(self.out) + "\n"

    def write_values(self):
        """``[values]``: the numbers of ``robot.values`` (a URDF's), each read back exactly (``repr``)."""
        if not self.robot.values:
            return
        self.out.extend(["", "# the parameters' numbers: kr.load gives them as robot.values", "[values]"])
        for name, value in self.robot.values.items():
            self.put(toml_key(name), repr(float(value)))

    def write_discs(self):
        """``[[disc]]`` tables (a tyre only where not 0), then ``[ground]`` where it is not the default z = 0."""
        for disc in self.robot.discs:
            what = f"disc {disc.joint}"
            self.out.extend(["", "[[disc]]"])
            self.put("joint", toml_string(disc.joint))
            self.put("radius", self.value(disc.radius, f"radius of {what}"))
            if disc.tyre != 0:
                self.put("tyre", self.value(disc.tyre, f"tyre of {what}"))
        ground = self.robot.ground
        if ground != Ground():
            self.out.extend(["", "[ground]"])
            self.put("normal", self.vector(ground.normal, "normal of the ground"))
            self.put("height", self.value(ground.height, "height of the ground"))

    def write_wheel(self, wheel):
        what = f"wheel {wheel.joint}"
        self.out.extend(["", "[[wheel]]"])
        self.put("joint", toml_string(wheel.joint))
        self.put("kind", toml_string(wheel.kind))
        self.put("radius", self.value(wheel.radius, f"radius of {what}"))
        if wheel.steer is not None:
            self.put("steer", toml_string(wheel.steer))
        if wheel.kind == "castor":
            self.put("offset", self.value(wheel.offset, f"offset of {what}"))

    def write_base(self, link_differs):
        base, default = self.robot.base, Base()
        lines = []
        if base.Z != default.Z:
            lines.append(("Z", self.matrix(base.Z, "Z of the base")))
        for key in BASE_VECTOR_NAMES:
            if getattr(base, key) != getattr(default, key):
                lines.append((key, self.vector(getattr(base, key), f"{key} of the base")))
        if link_differs:
            lines.append(("link", _bool(BASE in self.robot.links)))
        dynamics = self.changed(self.robot.dynamics.get(BASE), default_dynamics(BASE), "the base")
        if lines or dynamics:
            self.out.extend(["", "[base]"])
            for key, text in lines:
                self.put(key, text)
        if dynamics:
            self.out.extend(["", "[base.dynamics]"])
            for key, text in dynamics:
                self.put(key, text)

    def changed(self, values, defaults, what):
        if values is None:
            return []
        return [
            (key, self.value(values[key], f"{key} of {what}"))
            for key in defaults
            if key in values and values[key] != defaults[key]
        ]

    def write_frame(self, frame, is_link, default_link, closes):
        label = frame.label
        what = f"frame {label}"
        self.out.extend(["", "[[frame]]"])
        self.put("label", toml_string(label))
        self.put("antecedent", toml_string(frame.antecedent))
        self.put("sigma", str(frame.sigma))
        if frame.mu != 1:
            self.put("mu", str(frame.mu))
        p = frame.placement
        if frame.is_kk:
            for key in KK_KEYS:
                if key == frame.joint_key:
                    self.put(key, self.joint_value(frame, getattr(p, key), f"{key} of {what}"))
                else:
                    self.put(key, self.value(getattr(p, key), f"{key} of {what}"))
        else:
            self.put("R0", self.matrix(p.R0, f"R0 of {what}"))
            self.put("P", self.vector(p.P, f"P of {what}"))
            if frame.is_joint or p.axis != _Z_AXIS:
                self.put("axis", self.vector(p.axis, f"axis of {what}"))
            if frame.is_joint or sympy.sympify(p.q) != 0:
                self.put("q", self.joint_value(frame, p.q, f"q of {what}") if frame.is_joint else self.value(p.q, f"q of {what}"))
        if is_link != default_link:
            self.put("link", _bool(is_link))
        if closes is not None:
            self.put("closes", toml_string(closes))
        dynamics = self.changed(self.robot.dynamics.get(label), default_dynamics(self.robot.stems[label]), f"link {label}")
        if dynamics:
            self.out.append("[frame.dynamics]")
            for key, text in dynamics:
                self.put(key, text)
        joint = self.changed(self.robot.joint_parameters.get(label), default_joint_parameters(self.robot.stems[label]), f"joint {label}")
        if joint:
            self.out.append("[frame.joint]")
            for key, text in joint:
                self.put(key, text)


def _bool(flag):
    return "true" if flag else "false"
