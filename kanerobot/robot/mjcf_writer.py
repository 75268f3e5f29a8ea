"""Robots as MJCF files (MuJoCo's format): ``kr.save(robot, "x.xml")``.

:func:`write_mjcf` writes a tree robot (fixed or floating base) with its
numbers, so that MuJoCo compiles it with the same mass matrix and bias
forces ``C qd + g`` as kanerobot's models (to rounding, 1e-9 in the tests),
and a user can go on to contact simulation in MuJoCo with the same robot.

- A moving link is a ``<body>`` named by its label, placed in its parent
  body at the robot's q = 0 (joint offsets folded in, as the URDF writer
  does).  Its joint is named by the frame's label: a revolute joint is a
  ``hinge``, a prismatic one a ``slide`` (``axis`` the joint axis in the
  frame), a spherical one a ``ball`` (MuJoCo's ``qpos`` is our quaternion
  in the order w x y z, its ``qvel`` our speeds ``WX WY WZ``), a planar one
  two slides and a hinge in one body, ``<label>_x``, ``<label>_y``,
  ``<label>_theta`` (same positions; MuJoCo's slide speeds are
  ``d(x, y)/dt`` in the antecedent's axes, ours ``VX VY`` the same velocity
  in the joint's own frame).  A floating robot's link 0 is the body ``0``
  with a ``<freejoint name="0">``: MuJoCo's ``qpos`` is our ``X0 Y0 Z0``
  then the quaternion w x y z, its ``qvel`` the velocity of O_0 in the
  world frame (ours in frame 0) and the angular velocity in frame 0 (the
  base's ``Z`` is not written: the free joint places frame 0).
- A fixed frame is folded into the body it is fixed to: its placement
  into those of its children, its link's inertia into the body's, and it
  is kept as a ``<site>`` named by its label (a frame for sensors and
  contacts).  On a fixed base, frame 0 is the site ``0`` of the world
  body, placed by the base's ``Z`` (gravity turned into the world frame);
  links fixed to it never move and their inertia is not written.
- A link without mass (nor inertia) that moves is refused by MuJoCo; when
  it carries one moving link and no fixed frame, its joints move into that
  link's body (MuJoCo's several joints in one body, expressed in the
  child's frame), which keeps the dynamics.  Otherwise (a massless leaf: a
  finger's tip frame, a gripper joint), and for a moving body whose inertia
  about its centre of mass has a principal moment under MuJoCo's 1e-15 (a
  point mass, a rod), the file keeps the robot's numbers and asks MuJoCo's
  compiler to raise masses and principal inertias to ``bound`` (``<compiler
  boundmass boundinertia>``), with one warning naming the links: their
  joints' rows of M then hold about ``bound`` (times a squared lever arm)
  instead of MuJoCo's refusal.  ``bound=0`` refuses them instead.  An
  inertia no rigid body has (``A + B < C``) is refused: MuJoCo's own fix
  (``balanceinertia``) would change the robot.
- Each body's ``<inertial>`` is ``mass``, ``pos`` (the centre of mass
  ``MS / M``) and ``fullinertia`` about the centre of mass, ``J - M (|c|^2 1
  - c c^T)`` from SYMORO's ``XX .. ZZ`` about the frame origin.  ``IA`` is
  the joint's ``armature``, ``FV`` its ``damping``, ``FS`` its
  ``frictionloss`` (on each of the joint's speeds; a planar joint's
  slides move along its antecedent's axes in MuJoCo, so its ``IA`` and
  ``FS``, which act on our speeds ``VX VY`` along its own, must be 0).
  ``<option gravity>`` is the robot's gravity in the world frame; a joint
  with both position limits
  in ``robot.limits`` gets its ``range``; every actuated hinge and slide a
  ``<motor>`` (gear 1: the control is the joint torque or force), with the
  effort limit as its ``ctrlrange``.  The compiler works in radians
  (``angle="radian"``), quaternions are w x y z.

Numbers are the robot's values: every parameter symbol is bound from
``robot.values`` and the ``values`` mapping (which wins); a symbol without
a value is one :class:`~kanerobot.errors.RobotFileError` naming it.  A
closed loop cut at a ball joint (an MJCF ``<connect>`` read back) is
written as ``<equality><connect site1 site2>`` named by the cut joint,
between the sites of the cut joint (on its antecedent's body) and of the
closing frame, and only its active joints get a motor (the reader takes
the actuated joints as the active ones).  Other closed loops, wheeled and
flexible robots, a moving fixed base, constant external wrenches and
negative ``IA``, ``FV`` or ``FS`` have no MJCF form and are refused, each
with one line that says what to do instead.

Examples
--------
>>> import kanerobot as kr
>>> from kanerobot.dynamics.parameters import random_parameters
>>> robot = kr.load(kr.frames_path("planar2"))
>>> values = random_parameters(robot, np.random.default_rng(1), friction=False, rotor=False, wrench=False)
>>> text = write_mjcf(robot, values=values)
>>> for line in text.splitlines():
...     if "<body" in line or "<joint" in line:
...         print(line.strip())
<body name="1">
<joint name="1" type="hinge" axis="0 0 1.0"/>
<body name="2" pos="0.35591081235012834 0 0">
<joint name="2" type="hinge" axis="0 0 1.0"/>
>>> values["L1"]
0.35591081235012834
>>> write_mjcf(robot)
Traceback (most recent call last):
  ...
kanerobot.errors.RobotFileError: <string>: cannot write robot planar2 as MJCF: no value for FS1, FS2, FV1, FV2, G3, IA1, IA2, L1, M1, M2, MX1, MX2 ... (28 in all): give them in robot.values or values={...}
"""

import warnings
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

import numpy as np
import sympy

from kanerobot.errors import KaneRobotWarning, RobotFileError
from kanerobot.robot import joints
from kanerobot.robot.description import BASE, WRENCH_NAMES
from kanerobot.robot.files import NumbersWriter

__all__ = ["write_mjcf"]

#: MuJoCo's smallest mass and principal inertia of a moving body (mjMINVAL).
MINIMUM = 1e-15
#: The mass and principal inertia MuJoCo's compiler gives a moving link it would refuse (see ``bound``).
BOUND = 1e-12
#: The inertia of a link and its friction, as the file needs them.
_INERTIAL = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")
_JOINT = ("IA", "FV", "FS")
_PLANAR = (("_x", "slide", (1.0, 0.0, 0.0)), ("_y", "slide", (0.0, 1.0, 0.0)), ("_theta", "hinge", (0.0, 0.0, 1.0)))


def write_mjcf(robot, path=None, values=None, bound=BOUND) -> str:
    """The text of an MJCF file describing ``robot`` (see the module's notes).

    Parameters
    ----------
    robot : Robot
        A tree (no closed loop, wheel or flexible joint) on a fixed or
        floating base, with revolute, prismatic, spherical, planar and fixed
        frames.
    path : str or Path, optional
        The file's name in error messages (``kr.save`` writes the text).
    values : mapping str -> float, optional
        Values of the parameter symbols, over ``robot.values``.
    bound : float, optional
        The least mass and principal inertia MuJoCo's compiler gives a
        moving link without mass, a point mass or a rod (``boundmass`` and
        ``boundinertia``, written only when such a link exists, with a
        ``UserWarning`` naming it); 0 refuses those links.

    Returns
    -------
    str

    Raises
    ------
    RobotFileError
        A robot MJCF cannot hold, a symbol without a value, a moving link
        with an inertia no rigid body has, or (``bound=0``) a moving link
        MuJoCo cannot take (no mass, a point mass or a rod).
    """
    if not (isinstance(bound, (int, float)) and 0 <= bound < 1e-3):
        raise RobotFileError(path if path is not None else "<string>", None,
                             f"bound={bound!r} must be a number from 0 (refuse) to well under the robot's masses, e.g. 1e-12")  # fmt: skip
    return _Writer(robot, path, values, bound).text()


def _float(x):
    """``repr`` of a float (17 digits: no loss), ``-0.0`` written as ``0.0``."""
    x = float(x)
    return repr(x + 0.0) if x != 0 else "0"


def _floats(xs):
    return " ".join(_float(x) for x in np.ravel(xs))


def _transform(R, p):
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return T


def _inverse(T):
    return _transform(T[:3, :3].T, -T[:3, :3].T @ T[:3, 3])


@dataclass
class _Inertia:
    """Mass, first moments ``m c`` and inertia ``J`` about the origin of a frame, in that frame."""

    mass: float = 0.0
    moments: np.ndarray = field(default_factory=lambda: np.zeros(3))
    J: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))

    def add(self, other, T):
        """Add ``other``, given in a frame placed by ``T`` in this one (Huygens-Steiner on ``J``)."""
        R, p = T[:3, :3], T[:3, 3]
        h = R @ other.moments
        cross = 2 * (p @ h) * np.eye(3) - np.outer(p, h) - np.outer(h, p)
        self.J = self.J + R @ other.J @ R.T + other.mass * (p @ p * np.eye(3) - np.outer(p, p)) + cross
        self.moments = self.moments + h + other.mass * p
        self.mass += other.mass

    @property
    def empty(self):
        return self.mass == 0 and not self.moments.any() and not self.J.any()

    def about_centre(self):
        """``(c, I_c)``: the centre of mass and the inertia about it."""
        c = self.moments / self.mass
        return c, self.J - self.mass * (c @ c * np.eye(3) - np.outer(c, c))


@dataclass
class _Joint:
    name: str
    kind: str
    axis: tuple = (0.0, 0.0, 1.0)
    pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    friction: tuple = (0.0, 0.0, 0.0)  # IA, FV, FS
    range: tuple | None = None


@dataclass
class _Body:
    """A MuJoCo body: its link's label, placement in its parent body, joints, inertia, sites and children."""

    name: str
    placement: np.ndarray
    joints: list
    inertia: _Inertia = field(default_factory=_Inertia)
    sites: list = field(default_factory=list)
    children: list = field(default_factory=list)
    merged: list = field(default_factory=list)  # labels of the massless links whose joints it took


class _Writer(NumbersWriter):
    format = "MJCF"

    def __init__(self, robot, path, values, bound):
        super().__init__(robot, path, values)
        self.bound = bound
        self.bounded: list[str] = []  # the links whose mass or inertia MuJoCo's compiler raises to the bound

    # ------------------------------------------------------------ numbers
    def matrix(self, M):
        """A sympy matrix as floats (every symbol has a value: :meth:`check` ran)."""
        return np.array(sympy.Matrix(M).xreplace(self.substitution).evalf(), dtype=float)

    def number(self, expr):
        return float(sympy.sympify(expr).xreplace(self.substitution))

    def neutral(self, frame):
        """``aT_j`` of ``frame`` at its joint's neutral configuration (q = 0, the unit quaternion)."""
        T = frame.transform()
        if frame.is_joint:
            T = T.xreplace(dict(zip(frame.coordinates, (sympy.Integer(int(v)) for v in frame.joint.neutral()))))
        return T

    def static(self, label):
        """True for a frame that never moves (fixed to a fixed base)."""
        return not self.robot.floating and not any(self.robot.frame(j).is_joint for j in self.robot.root_path(label))

    def needed(self):
        """Names of the symbols the file's numbers depend on."""
        robot = self.robot
        exprs = [robot.base.G]
        if not robot.floating:
            exprs += [robot.base.Z, robot.base.W0, robot.base.WP0, robot.base.V0, robot.base.VP0]
        exprs += [self.neutral(frame) for frame in robot.frames]
        for label in robot.links:
            if not self.static(label):
                keys = _INERTIAL + WRENCH_NAMES + (_JOINT if label != BASE and robot.frame(label).is_joint else ())
                exprs += [sympy.sympify(robot.dynamics[label][key]) for key in keys]
        exprs += [sympy.sympify(x) for item in robot.mimics for x in (item.offset, *(k for _, k in item.terms))]  # the equalities'
        return {str(s) for expr in exprs for s in expr.free_symbols}

    # ------------------------------------------------------------- checks
    def check(self):
        robot = self.robot
        if robot.loops:
            self.check_loops()
        if robot.wheeled or robot.wheels:
            self.fail("it is a wheeled robot (wheels rolling without slipping have no MJCF form): save it as .toml")
        if robot.discs:
            self.fail(f"joint(s) {', '.join(d.joint for d in robot.discs)} are rolling discs (rolling without slipping has no MJCF "
                      f"form): save it as .toml")  # fmt: skip
        if robot.flexible_joints:
            self.fail(f"joint(s) {', '.join(robot.flexible_joints)} are flexible (eta = 1) and MJCF joints are rigid: "
                      "save it as .toml, or make them rigid (eta = 0)")  # fmt: skip
        self.check_values()
        if not robot.floating:
            for name in ("W0", "WP0", "V0", "VP0"):
                if self.matrix(getattr(robot.base, name)).any():
                    self.fail(f"its fixed base moves ({name} is not 0) and MuJoCo's world stands still: set {name} to 0, "
                              "or make the base floating")  # fmt: skip
        for label in robot.links:
            if self.static(label):
                continue
            table = robot.dynamics[label]
            for key in WRENCH_NAMES:
                if self.number(table[key]):
                    self.fail(f"link {label} has a constant external wrench {key} and MJCF has none: set it to 0 "
                              "(apply it in MuJoCo with data.xfrc_applied)")  # fmt: skip
            if label != BASE and robot.frame(label).is_joint:
                self.check_joint(label, table)

    def check_loops(self):
        """Loops cut at a ball joint on a fixed base: MuJoCo's ``<connect>`` (a ball joint outside the tree) holds them."""
        robot = self.robot
        others = [f"{cut}-{closing}" for cut, closing in robot.loops if not isinstance(robot.frame(cut).joint, joints.Spherical)]
        if others:
            self.fail(f"its loops cut at joint(s) {', '.join(others)} are not cut at a ball joint, and MJCF closes a loop only by a "
                      f"ball joint outside the tree (<equality><connect>): save it as .toml, or cut them at a ball joint")  # fmt: skip
        if robot.floating:
            self.fail("it is a floating robot with closed loops, which kanerobot models on a fixed base only: save it as .toml")
        for cut, _ in robot.loops:
            carried = [frame.label for frame in robot.frames if frame.antecedent == cut]
            if carried:
                self.fail(f"frame(s) {', '.join(carried)} hang on the cut joint {cut}, which MJCF writes as a <connect> (no body): "
                          f"hang them on its antecedent")  # fmt: skip

    def check_joint(self, label, table):
        """IA, FV, FS of a joint that MuJoCo's armature, damping and frictionloss hold."""
        planar = isinstance(self.robot.frame(label).joint, joints.Planar)
        for key, name in zip(_JOINT, ("armature", "damping", "frictionloss")):
            value, symbol = self.number(table[key]), f"{key}{self.robot.stems[label]}"
            if value < 0:
                self.fail(f"{symbol} = {value:g} < 0, and MuJoCo's {name} is not negative: give it a value >= 0")
            # MuJoCo's slides act along the antecedent's axes, our planar speeds VX VY along the joint's own:
            # viscous friction is the same either way, a rotor inertia and Coulomb friction are not
            if planar and value and key != "FV":
                self.fail(f"planar joint {label} has {symbol} = {value:g}, which MuJoCo's {name} on its slides (along the "
                          f"antecedent's x and y, ours along the joint's turning axes) does not model: set {symbol} to 0")  # fmt: skip

    # --------------------------------------------------------------- tree
    def link_inertia(self, label):
        table = self.robot.dynamics[label]
        J = np.empty((3, 3))
        for key, (i, j) in zip(_INERTIAL[:6], ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))):
            J[i, j] = J[j, i] = self.number(table[key])
        return _Inertia(self.number(table["M"]), np.array([self.number(table[k]) for k in ("MX", "MY", "MZ")]), J)

    def joints_of(self, frame):
        """The MuJoCo joints of a moving frame, at its origin."""
        robot, label = self.robot, frame.label
        friction = tuple(self.number(robot.dynamics[label][key]) for key in _JOINT) if label in robot.links else (0.0, 0.0, 0.0)
        model = frame.joint
        if isinstance(model, joints.Planar):
            return [_Joint(label + suffix, kind, axis, friction=friction) for suffix, kind, axis in _PLANAR]
        if isinstance(model, joints.Spherical):
            return [_Joint(label, "ball", friction=friction)]
        kind = {joints.Revolute.name: "hinge", joints.Prismatic.name: "slide"}.get(model.name)
        if kind is None:
            self.fail(f"frame {label} has a {model.name} joint, which MJCF cannot hold here")
        limit = robot.limits.get(label)
        span = (limit.lower, limit.upper) if limit is not None and limit.lower is not None and limit.upper is not None else None
        axis = tuple(self.matrix(frame.axis).ravel())
        return [_Joint(label, kind, axis, friction=friction, range=span)]

    def tree(self):
        """The world body, its bodies below it."""
        robot = self.robot
        world = _Body("world", np.eye(4), [])
        if robot.floating:
            base = _Body(BASE, np.eye(4), [_Joint(BASE, "free")])
            world.children.append(base)
            place = {BASE: (base, np.eye(4))}
            base.inertia.add(self.link_inertia(BASE), np.eye(4))
        else:
            place = {BASE: (world, self.matrix(robot.base.Z))}
            world.sites.append((BASE, place[BASE][1]))
        cuts = set(robot.cut_joints)
        for frame in robot.frames:
            parent, T_parent = place[frame.antecedent]
            T = T_parent @ self.matrix(self.neutral(frame))
            if frame.is_joint and frame.label not in cuts:
                body = _Body(frame.label, T, self.joints_of(frame))
                parent.children.append(body)
                place[frame.label] = (body, np.eye(4))
            else:  # a fixed frame, or a ball joint cutting a loop: the site of its <connect>
                parent.sites.append((frame.label, T))
                place[frame.label] = (parent, T)
            body, T_link = place[frame.label]
            if frame.label in robot.links and body is not world:
                body.inertia.add(self.link_inertia(frame.label), T_link)
        for child in world.children:
            self.fold_massless(world, child)
        return world

    def fold_massless(self, parent, body):
        """Move the joints of a massless moving body into its only child's body, from the leaves up."""
        for child in list(body.children):
            self.fold_massless(body, child)
        if not body.inertia.empty:
            return
        moves = ", ".join(j.name for j in body.joints)
        refusal = f"link {body.name} moves (joint {moves}) but has no mass, and MuJoCo refuses a moving body without mass"
        advice = f"give it a mass and an inertia, or save with bound > 0 ({BOUND:g}: MuJoCo's compiler then gives it that much)"
        if body.joints[0].kind == "free":
            self.refuse_or_bound(body, f"{refusal}: {advice} (the floating base)")
            return
        if len(body.children) != 1 or body.sites:
            what = f"{len(body.children)} moving links" if len(body.children) != 1 else f"the fixed frame(s) {', '.join(s for s, _ in body.sites)}"
            self.refuse_or_bound(body, f"{refusal}; it carries {what}, so its joints cannot move into a link with mass: {advice}")
            return
        child = body.children[0]
        A = child.placement
        if any(j.kind == "ball" for j in body.joints) and not np.allclose(A[:3, :3], np.eye(3), rtol=0, atol=1e-15):
            self.refuse_or_bound(body, f"{refusal}; its ball joint cannot move into link {child.name}, which is turned on it: {advice}")
            return
        inverse = _inverse(A)  # the massless body's joints, seen from the child's frame
        moved = [_Joint(j.name, j.kind, tuple(inverse[:3, :3] @ np.array(j.axis)), inverse[:3, :3] @ j.pos + inverse[:3, 3], j.friction, j.range)
                 for j in body.joints]  # fmt: skip
        child.placement = body.placement @ A
        child.joints = moved + child.joints
        child.merged = body.merged + [body.name] + child.merged
        parent.children[parent.children.index(body)] = child

    def checked_inertia(self, body):
        """``(mass, c, I_c)`` of a moving body, or a line saying why MuJoCo refuses it."""
        inertia = body.inertia
        if inertia.empty and body.name in self.bounded:  # a massless moving link (fold_massless)
            return 0.0, np.zeros(3), np.zeros((3, 3))
        if inertia.mass <= MINIMUM:
            if inertia.mass == 0:
                self.fail(f"link {body.name} moves and has no mass but first moments or inertia: MuJoCo needs a mass above {MINIMUM:g}")
            self.refuse_or_bound(body, f"link {body.name} moves and has mass {inertia.mass:g}: MuJoCo needs a mass above {MINIMUM:g}")
        c, I = inertia.about_centre()
        principal = np.linalg.eigvalsh(I)
        scale = max(principal.sum(), MINIMUM)
        if principal[0] + principal[1] < principal[2] - 1e-9 * scale - MINIMUM:  # MINIMUM: a point mass's round-off
            self.fail(f"link {body.name} (with what is fixed to it) has principal inertias {_floats(principal)} about its "
                      f"centre of mass, A + B < C, which no rigid body has, and MuJoCo refuses it: give it an inertia a rigid body has")  # fmt: skip
        if principal[0] <= MINIMUM:
            self.refuse_or_bound(body, f"link {body.name} (with what is fixed to it) has principal inertias {_floats(principal)} about "
                                       f"its centre of mass, one at or under {MINIMUM:g} (a point mass or a rod), and MuJoCo refuses "
                                       f"it: give it an inertia a rigid body has, or save with bound > 0 ({BOUND:g})")  # fmt: skip
        return inertia.mass, c, I

    def refuse_or_bound(self, body, refusal):
        """Refuse ``body`` (``bound=0``), or note it among those MuJoCo's compiler raises to the bound."""
        if not self.bound:
            self.fail(refusal)
        if body.name not in self.bounded:
            self.bounded.append(body.name)

    # --------------------------------------------------------------- text
    def placement(self, T):
        """`` pos="..." quat="..."`` of a placement, each left out when it is the identity's."""
        out = ""
        if T[:3, 3].any():
            out += f' pos="{_floats(T[:3, 3])}"'
        if not np.array_equal(T[:3, :3], np.eye(3)):
            x, y, z, w = joints.rotation_to_quaternion(T[:3, :3])
            out += f' quat="{_floats((w, x, y, z))}"'
        return out

    def joint(self, joint):
        if joint.kind == "free":
            return f"<freejoint name={quoteattr(joint.name)}/>"
        text = f"<joint name={quoteattr(joint.name)} type=\"{joint.kind}\""
        if joint.pos.any():
            text += f' pos="{_floats(joint.pos)}"'
        if joint.kind != "ball":
            text += f' axis="{_floats(joint.axis)}"'
        for key, value in zip(("armature", "damping", "frictionloss"), joint.friction):
            if value:
                text += f' {key}="{_float(value)}"'
        if joint.range is not None:
            text += f' range="{_floats(joint.range)}"'
        return text + "/>"

    def body(self, body, depth):
        pad = "  " * depth
        out = [f"{pad}<body name={quoteattr(body.name)}{self.placement(body.placement)}>"]
        if body.merged:
            out.append(f"{pad}  <!-- with the joints of massless link(s) {', '.join(body.merged)} -->")
        mass, c, I = self.checked_inertia(body)
        full = (I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2])
        out.append(f'{pad}  <inertial pos="{_floats(c)}" mass="{_float(mass)}" fullinertia="{_floats(full)}"/>')
        out += [f"{pad}  {self.joint(joint)}" for joint in body.joints]
        out += self.sites(body, depth + 1)
        for child in body.children:
            out += self.body(child, depth + 1)
        out.append(f"{pad}</body>")
        return out

    def sites(self, body, depth):
        return [f"{'  ' * depth}<site name={quoteattr(label)}{self.placement(T)}/>" for label, T in body.sites]

    def gravity(self):
        G = self.matrix(self.robot.base.G).ravel()
        return G if self.robot.floating else self.matrix(self.robot.base.Z)[:3, :3] @ G

    def tendons(self):
        """A mimic joint of several leaders as a fixed tendon ``q - sum k_i q_i`` (its leaders first, the mimic
        joint last: the joint MJCF readers take as the dependent one)."""
        out = []
        for mimic in self.robot.mimics:
            if len(mimic.terms) > 1:
                joints_ = [(leader, -self.number(k)) for leader, k in mimic.terms] + [(mimic.joint, 1.0)]
                out.append(f"    <fixed name={quoteattr('coupling_' + mimic.joint)}>")
                out += [f'      <joint joint={quoteattr(label)} coef="{_float(c)}"/>' for label, c in joints_]
                out.append("    </fixed>")
        return ["  <tendon>", *out, "  </tendon>"] if out else []

    def equalities(self):
        """Each mimic joint ``q = sum k_i q_i + o`` as MuJoCo's equality (no ``ref`` is written: qpos0 = 0):
        a joint equality for one leader, the equality of its fixed tendon (:meth:`tendons`) for several."""
        out = []
        for mimic in self.robot.mimics:
            o = self.number(mimic.offset)
            if len(mimic.terms) > 1:
                out.append(f'    <tendon tendon1={quoteattr("coupling_" + mimic.joint)} polycoef="{_floats((o, 1, 0, 0, 0))}"/>')
                continue
            k = self.number(mimic.multiplier)
            out.append(f'    <joint joint1={quoteattr(mimic.joint)} joint2={quoteattr(mimic.leader)} polycoef="{_floats((o, k, 0, 0, 0))}"/>')
        for cut, closing in self.robot.loops:  # the loop's ball joint outside the tree: the cut's site held on the closing one's
            out.append(f"    <connect name={quoteattr(cut)} site1={quoteattr(cut)} site2={quoteattr(closing)}/>")
        return ["  <equality>", *out, "  </equality>"] if out else []

    def motors(self):
        out = []
        mimics = {mimic.joint for mimic in self.robot.mimics}  # driven by their leaders
        for frame in self.robot.frames:
            if frame.label in self.robot.active_joints and frame.label not in mimics and isinstance(frame.joint, (joints.Revolute, joints.Prismatic)):
                limit = self.robot.limits.get(frame.label)
                effort = f' ctrlrange="{_floats((-limit.effort, limit.effort))}"' if limit is not None and limit.effort else ""
                out.append(f'    <motor name={quoteattr(frame.label)} joint={quoteattr(frame.label)} gear="1"{effort}/>')
        return ["  <actuator>", *out, "  </actuator>"] if out else []

    def check_names(self, world):
        seen: dict[str, str] = {}
        stack = list(world.children)
        while stack:
            body = stack.pop()
            if body.name == "world":
                self.fail("link 'world' would have the name of MuJoCo's world body: rename its frame")
            for joint in body.joints:
                if joint.name in seen:
                    self.fail(f"two MuJoCo joints would be named {joint.name!r} ({seen[joint.name]} and {body.name}): rename a frame")
                seen[joint.name] = body.name
            stack += body.children

    def text(self):
        self.check()
        world = self.tree()
        self.check_names(world)
        bodies = [line for body in world.children for line in self.body(body, 2)]
        compiler = '  <compiler angle="radian" autolimits="true"/>'
        if self.bounded:
            compiler = f'  <compiler angle="radian" autolimits="true" boundmass="{_float(self.bound)}" boundinertia="{_float(self.bound)}"/>'
            warnings.warn(KaneRobotWarning(f"{self.path}: link(s) {', '.join(self.bounded)} of {self.robot.name} move without mass or "
                                           f"as point masses, which MuJoCo refuses: the file asks its compiler to raise masses and "
                                           f"principal inertias to {self.bound:g}, so MuJoCo's M differs from the robot's by about "
                                           f"that on their joints"), stacklevel=3)  # fmt: skip
        out = [
            f"<mujoco model={quoteattr(self.robot.name)}>",
            compiler,
            f'  <option gravity="{_floats(self.gravity())}"/>',
            "  <worldbody>",
            *self.sites(world, 2),
            *bodies,
            "  </worldbody>",
            *self.tendons(),
            *self.equalities(),
            *self.motors(),
            "</mujoco>",
        ]
        return "\n".join(out) + "\n"
