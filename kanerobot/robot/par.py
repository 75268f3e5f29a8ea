"""SYMORO's ``.par`` robot files (OpenSYMORO's format), read and written.

A .par file is a list of statements ``KEY = value`` or ``KEY = {v1, v2, ...}``
(a list may span lines) with Mathematica comments ``(* ... *)``::

    NL = 6
    NJ = 6
    NF = 6
    Type = 0                 (* 0 serial, 1 tree, 2 closed loop *)
    ant = {0,1,2,3,4,5}      (* NF values; then sigma b d r gamma alpha mu theta *)
    XX = {XX1,...}           (* NL values (NL + 1 with a floating/mobile base) *)
    QP = {QP1,...}           (* NJ values; also QDP GAM, and eta k for flexible joints *)
    W0 = {0,0,0}             (* also WP0 V0 VP0 G: 3 values *)
    Z = {1,0,0,0, ...}       (* 16 values, row by row *)

Frames 1..NL carry the links, NL+1..NJ are the joints where loops are cut and
NJ+1..NF the fixed frames closing them (NF = NL + 2B, SYMORO+ section 2.1).
Every value is parsed by :func:`~kanerobot.robot.expressions.parse_expression`,
which accepts arithmetic on numbers and names and nothing else.
"""

import re
from pathlib import Path

import sympy

from kanerobot.errors import DescriptionError, ExpressionError, RobotFileError
from kanerobot.robot.description import (
    BASE,
    BASE_VECTOR_NAMES,
    DYNAMIC_NAMES,
    Base,
    Frame,
    KKPlacement,
    Robot,
)
from kanerobot.robot.expressions import format_expression, format_joint, parse_expression
from kanerobot.robot.files import read_text

GEOMETRY_KEYS = ("ant", "sigma", "b", "d", "r", "gamma", "alpha", "mu", "theta")
JOINT_KEYS = ("QP", "QDP", "GAM")
FLEXIBLE_KEYS = ("eta", "k")
SCALAR_KEYS = ("NL", "NJ", "NF", "Type", "is_floating", "is_mobile")
LIST_KEYS = GEOMETRY_KEYS + DYNAMIC_NAMES + JOINT_KEYS + FLEXIBLE_KEYS + BASE_VECTOR_NAMES[:4] + ("G", "Z")
#: Spellings of older SYMORO files.
ALIASES = {"Ant": "ant", "Sigma": "sigma", "B": "b", "R": "r", "Alpha": "alpha", "Mu": "mu", "Theta": "theta", "Gamma": "gamma"}
TYPES = {0: "serial", 1: "tree", 2: "closed loop"}

_COMMENT = re.compile(r"\(\*.*?\*\)", re.S)
_NAME_COMMENT = re.compile(r"Robotname\s*=\s*'([^']*)'")
_STATEMENT = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*")


class _Statement:
    def __init__(self, key, line, items):
        self.key = key
        self.line = line
        self.items = items  # list of (text, line) for lists, or [(text, line)] for scalars
        self.is_list = None


def _blank_comments(text):
    """Replace comments by spaces, keeping newlines so that lines still count."""
    return _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _check_comments(path, text):
    """Every ``(*`` must be closed by ``*)`` before the next ``(*`` opens."""
    for match in re.finditer(r"\(\*", text):
        end = text.find("*)", match.end())
        following = text.find("(*", match.end())
        if end < 0 or (0 <= following < end):
            line = text.count("\n", 0, match.start()) + 1
            raise RobotFileError(path, line, "comment '(*' is not closed by '*)'")


def _statements(path, text):
    """Split the file into statements, each with the line it starts on."""
    _check_comments(path, text)
    clean = _blank_comments(text)
    statements = []
    pos = 0
    n = len(clean)
    while True:
        while pos < n and clean[pos].isspace():
            pos += 1
        if pos >= n:
            break
        line = clean.count("\n", 0, pos) + 1
        match = _STATEMENT.match(clean, pos)
        if not match:
            snippet = clean[pos:].split("\n", 1)[0].strip()
            raise RobotFileError(path, line, f"expected 'KEY = value', found {snippet[:60]!r}")
        key = ALIASES.get(match.group(1), match.group(1))
        pos = match.end()
        if pos < n and clean[pos] == "{":
            end = clean.find("}", pos)
            if end < 0:
                raise RobotFileError(path, line, f"list of {key} is not closed by '}}'")
            inner_start = pos + 1
            if "{" in clean[inner_start:end]:
                raise RobotFileError(path, line, f"list of {key} is not closed by '}}' before the next list")
            items = _split_items(clean[inner_start:end], clean.count("\n", 0, inner_start) + 1, path, line)
            stmt = _Statement(key, line, items)
            stmt.is_list = True
            pos = end + 1
        else:
            end = clean.find("\n", pos)
            end = n if end < 0 else end
            value = clean[pos:end].strip()
            if not value:
                raise RobotFileError(path, line, f"{key} has no value")
            stmt = _Statement(key, line, [(value, line)])
            stmt.is_list = False
            pos = end
        statements.append(stmt)
    return statements


def _split_items(inner, first_line, path, line):
    """Split a list body on the commas that are not inside parentheses."""
    items, depth, start, current_line = [], 0, 0, first_line
    item_line = first_line
    for i, ch in enumerate(inner):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise RobotFileError(path, current_line, "unbalanced ')' in list")
        elif ch == "," and depth == 0:
            items.append((inner[start:i].strip(), item_line))
            start = i + 1
            item_line = current_line
        elif ch == "\n":
            current_line += 1
            if not inner[start:i].strip():
                item_line = current_line
    items.append((inner[start:].strip(), item_line))
    if len(items) == 1 and not items[0][0]:
        return []
    for text, at in items:
        if not text:
            raise RobotFileError(path, at, "empty value in list: write 0 for a zero parameter")
    return items


def _integer(path, stmt, text, at, allowed=None):
    try:
        value = parse_expression(text)
    except ExpressionError as exc:
        raise RobotFileError(path, at, f"{stmt.key}: {exc}") from None
    if not value.is_Integer:
        raise RobotFileError(path, at, f"{stmt.key} must be a whole number, got {text!r}")
    value = int(value)
    if allowed is not None and value not in allowed:
        raise RobotFileError(path, at, f"{stmt.key} = {value} is not allowed; use one of {sorted(allowed)}")
    return value


def read_par(path):
    """Read a SYMORO ``.par`` file into a :class:`~kanerobot.robot.Robot`.

    Examples
    --------
    >>> import kanerobot as kr
    >>> robot = read_par(kr.frames_path("rx90.par"))
    >>> robot.name, robot.nl, robot.frame("3").placement.d
    ('RX90', 6, D3)
    """
    path = Path(path)
    text = read_text(path)
    name_match = _NAME_COMMENT.search(text)
    name = name_match.group(1) if name_match else path.stem
    table: dict[str, _Statement] = {}
    for stmt in _statements(path, text):
        if stmt.key not in SCALAR_KEYS and stmt.key not in LIST_KEYS:
            known = ", ".join(SCALAR_KEYS + LIST_KEYS)
            raise RobotFileError(path, stmt.line, f"unknown keyword {stmt.key!r}; known keywords: {known}")
        if stmt.key in table:
            raise RobotFileError(path, stmt.line, f"{stmt.key} is given twice (first on line {table[stmt.key].line})")
        if stmt.key in SCALAR_KEYS and stmt.is_list:
            raise RobotFileError(path, stmt.line, f"{stmt.key} takes a single value, not a list")
        if stmt.key in LIST_KEYS and not stmt.is_list:
            raise RobotFileError(path, stmt.line, f"{stmt.key} takes a list {{...}}, not a single value")
        table[stmt.key] = stmt
    return _build(path, name, table)


def _scalar(path, table, key, default=None, allowed=None):
    if key not in table:
        if default is None:
            raise RobotFileError(path, None, f"{key} is missing: give '{key} = <number>'")
        return default
    stmt = table[key]
    text, at = stmt.items[0]
    if key in ("is_floating", "is_mobile") and text.lower() in ("true", "false"):
        return int(text.lower() == "true")
    return _integer(path, stmt, text, at, allowed)


def _values(path, table, key, count, default):
    """The ``count`` expressions of list ``key`` (or the defaults), with lines."""
    if key not in table:
        return [(default(i), None) for i in range(count)]
    stmt = table[key]
    if len(stmt.items) != count:
        raise RobotFileError(path, stmt.line, f"{key} has {len(stmt.items)} values, expected {count}")
    out = []
    for text, at in stmt.items:
        try:
            out.append((parse_expression(text), at))
        except ExpressionError as exc:
            raise RobotFileError(path, at, f"{key}: {exc}") from None
    return out


def _build(path, name, table):
    """The robot of a parsed .par file: counts, geometry, links, dynamics, joints, base, then Robot.create."""
    nl, nj, nf, loops = _counts(path, table)
    floating = bool(_scalar(path, table, "is_floating", default=0, allowed={0, 1}))
    wheeled = bool(_scalar(path, table, "is_mobile", default=0, allowed={0, 1}))
    with_base = floating or wheeled
    links = ([BASE] if with_base else []) + [str(j) for j in range(1, nl + 1)]
    try:  # a frame's joint code (sigma) is checked as the frame is made
        frames = _frames(path, table, nf)
        dynamics = _dynamics(path, table, links)
        joint_parameters = _joint_parameters(path, table, nj, frames)
        base_values = _base_values(path, table)
        loop_pairs = [(str(nl + b), str(nj + b)) for b in range(1, loops + 1)]
        base = Base.from_values(**base_values)
        robot = Robot.create(
            name,
            frames,
            links=links,
            dynamics=dynamics,
            joint_parameters=joint_parameters,
            base=base,
            loops=loop_pairs,
            floating=floating,
            wheeled=wheeled,
        )
        return robot
    except DescriptionError as exc:
        raise RobotFileError(path, _line_of(table, exc, links), str(exc)) from None


def _counts(path, table):
    """NL, NJ, NF and the number of loops, consistent with each other and with Type."""
    nl = _scalar(path, table, "NL")
    nj = _scalar(path, table, "NJ")
    if nl < 1 or nj < nl:
        line = table["NJ"].line
        raise RobotFileError(path, line, f"NL = {nl} and NJ = {nj}: need NL >= 1 and NJ >= NL (NJ - NL loops)")
    loops = nj - nl
    nf = _scalar(path, table, "NF", default=nl + 2 * loops)
    if nf != nl + 2 * loops:
        raise RobotFileError(
            path, table["NF"].line, f"NF = {nf} but NL + 2B = {nl + 2 * loops} with B = NJ - NL = {loops} loops"
        )
    kind = _scalar(path, table, "Type", default=2 if loops else 0, allowed=TYPES)
    if (kind == 2) != (loops > 0):
        raise RobotFileError(
            path,
            table["Type"].line,
            f"Type = {kind} ({TYPES[kind]}) but NJ - NL = {loops} loops: closed loops have Type = 2 and NJ > NL",
        )
    return nl, nj, nf, loops


def _frames(path, table, nf):
    """The ``nf`` frames of the geometric lists, numbered 1..nf, each on an earlier antecedent."""
    for key in GEOMETRY_KEYS:
        if key not in table:
            raise RobotFileError(path, None, f"the geometric list {key} = {{...}} ({nf} values) is missing")
    geometry = {key: _values(path, table, key, nf, None) for key in GEOMETRY_KEYS}
    frames = []
    for j in range(1, nf + 1):
        label = str(j)
        ant_value, ant_line = geometry["ant"][j - 1]
        sigma_value, sigma_line = geometry["sigma"][j - 1]
        mu_value, mu_line = geometry["mu"][j - 1]
        for key, value, at in (("ant", ant_value, ant_line), ("sigma", sigma_value, sigma_line), ("mu", mu_value, mu_line)):
            if not value.is_Integer:
                raise RobotFileError(path, at, f"{key} of frame {j} must be a whole number, got {format_expression(value)}")
        if not 0 <= int(ant_value) < j:
            raise RobotFileError(
                path,
                ant_line,
                f"ant of frame {j} is {ant_value}: the antecedent must be an earlier frame, 0 <= a(j) < j",
            )
        placement = KKPlacement(**{key: geometry[key][j - 1][0] for key in KKPlacement.KEYS})
        frames.append(Frame(label, str(int(ant_value)), int(sigma_value), int(mu_value), placement))
    return frames


def _dynamics(path, table, links):
    """Per link, the dynamic parameters its lists give (one value per link)."""
    dynamics: dict[str, dict[str, sympy.Expr]] = {label: {} for label in links}
    for key in DYNAMIC_NAMES:
        if key in table:
            for label, (value, _) in zip(links, _values(path, table, key, len(links), None)):
                dynamics[label][key] = value
    return dynamics


def _joint_parameters(path, table, nj, frames):
    """Per joint among frames 1..nj, the joint parameters its lists give (one value per frame)."""
    joint_labels = [str(j) for j in range(1, nj + 1)]
    joint_parameters: dict[str, dict[str, sympy.Expr]] = {label: {} for label in joint_labels if frames[int(label) - 1].is_joint}
    for key in JOINT_KEYS + FLEXIBLE_KEYS:
        if key in table:
            for label, (value, _) in zip(joint_labels, _values(path, table, key, nj, None)):
                if label in joint_parameters:
                    joint_parameters[label][key] = value
    return joint_parameters


def _base_values(path, table):
    """The base's vectors and Z as the file gives them."""
    base_values = {}
    for key in BASE_VECTOR_NAMES:
        if key in table:
            base_values[key] = [v for v, _ in _values(path, table, key, 3, None)]
    if "Z" in table:
        base_values["Z"] = [v for v, _ in _values(path, table, "Z", 16, None)]
    return base_values


def _line_of(table, exc, links=()):
    """The line of the statement (or list item) a description error points at.

    Geometric and joint lists hold frames 1, 2, ... in order; the dynamic
    lists hold ``links`` (the base first when it is a link); the base's
    vectors and Z are pointed at by their statement.
    """
    key = {"label": "ant", "links": "NL", "loops": "NJ", "theta": "theta", "r": "r"}.get(exc.key, exc.key)
    if key not in table:
        return None
    stmt = table[key]
    if exc.label is None or not stmt.is_list or key in BASE_VECTOR_NAMES + ("Z",):
        return stmt.line
    label = str(exc.label).split(",")[0].strip()
    if key in DYNAMIC_NAMES:
        index = list(links).index(label) if label in links else None
    else:
        index = int(label) - 1 if label.isdigit() and int(label) >= 1 else None
    if index is not None and index < len(stmt.items):
        return stmt.items[index][1]
    return stmt.line


# --------------------------------------------------------------------- writing
def _format_list(key, values):
    return f"{key} = {{{','.join(format_expression(v) for v in values)}}}\n"


def _check_writable(robot):
    """A robot fits a .par file when it is a numbered KK table in SYMORO order."""
    if robot.mimics:
        return f"mimic joints {', '.join(robot.mimic_joints)} have no place in a .par file"
    if robot.discs:
        return f"rolling discs ({', '.join(d.joint for d in robot.discs)}) have no place in a .par file"
    labels = [f.label for f in robot.frames]
    if labels != [str(j) for j in range(1, len(labels) + 1)]:
        return f"frames must be numbered 1..{len(labels)} in order (got {', '.join(labels)})"
    bad = [f.label for f in robot.frames if not f.is_kk]
    if bad:
        return f"frames {', '.join(bad)} are general frames (R0, P, axis), which .par cannot hold"
    nl, loops = robot.nl, len(robot.loops)
    nj = nl + loops
    if robot.nf != nl + 2 * loops:
        return f"NF = {robot.nf} frames but NL + 2B = {nl + 2 * loops}"
    if [label for label in robot.links if label != BASE] != [str(j) for j in range(1, nl + 1)]:
        return f"links must be frames 1..{nl}"
    expected_loops = tuple((str(nl + b), str(nj + b)) for b in range(1, loops + 1))
    if robot.loops != expected_loops:
        return "loops must be cut at frames NL+1..NJ and closed by frames NJ+1..NF"
    return None


def write_par(robot, path=None):
    """The text of a ``.par`` file describing ``robot``.

    Raises :class:`~kanerobot.errors.RobotFileError` when the robot is not a
    Khalil-Kleinfinger table in SYMORO's numbering (use ``.toml`` then).
    """
    problem = _check_writable(robot)
    if problem:
        raise RobotFileError(path or robot.name, None, f"cannot write {robot.name} as .par: {problem}; save it as .toml")
    nl = robot.nl
    nj = nl + len(robot.loops)
    kind = 2 if robot.loops else (1 if robot.structure == "tree" else 0)
    out = [f"(* Robotname = '{robot.name}' *)\n", f"NL = {nl}\n", f"NJ = {nj}\n", f"NF = {robot.nf}\n", f"Type = {kind}\n"]
    out.append(f"is_floating = {int(robot.floating)}\n")
    out.append(f"is_mobile = {int(robot.wheeled)}\n")
    out.append("\n(* Geometric parameters *)\n")
    frames = robot.frames
    for key in GEOMETRY_KEYS:
        if key == "ant":
            values = [sympy.Integer(int(f.antecedent)) for f in frames]
        elif key in ("sigma", "mu"):
            values = [sympy.Integer(getattr(f, key)) for f in frames]
        else:
            # a joint's theta or r as written, the variable first: th2 - pi/2
            values = [format_joint(f.q, f.offset) if key == f.joint_key else format_expression(getattr(f.placement, key)) for f in frames]
            out.append(f"{key} = {{{','.join(values)}}}\n")
            continue
        out.append(_format_list(key, values))
    out.append("\n(* Dynamic parameters and external forces *)\n")
    for key in DYNAMIC_NAMES:
        out.append(_format_list(key, [robot.dynamics[label][key] for label in robot.links]))
    out.append("\n(* Joint parameters *)\n")
    joint_frames = frames[:nj]
    for key in JOINT_KEYS:
        out.append(_format_list(key, [robot.joint_parameters[f.label][key] if f.is_joint else 0 for f in joint_frames]))
    if any(robot.joint_parameters[label]["eta"] != 0 for label in robot.joint_labels):
        for key in FLEXIBLE_KEYS:
            out.append(_format_list(key, [robot.joint_parameters[f.label][key] if f.is_joint else 0 for f in joint_frames]))
    out.append("\n(* Speed and acceleration of the base *)\n")
    for key in BASE_VECTOR_NAMES[:4]:
        out.append(_format_list(key, getattr(robot.base, key)))
    out.append("\n(* Acceleration of gravity *)\n")
    out.append(_format_list("G", robot.base.G))
    out.append("\n(* Transformation of 0 frame position fT0 *)\n")
    out.append(_format_list("Z", list(robot.base.Z)))
    out.append("\n(* End of definition *)\n")
    return "".join(out)
