"""The equalities of MJCF models, for :mod:`kanerobot.robot.mjcf`'s reader: joint couplings and closed loops.

- ``<equality><joint>`` and ``<equality><tendon>`` on fixed tendons: linear couplings of joints, each a mimic joint
  (:func:`equalities`, then :func:`mimics`: :class:`~kanerobot.robot.description.MimicJoint`);
- ``<equality><connect>``: a loop cut at a new ball joint and closed by a fixed frame, the actuated joints active
  (:func:`equalities`, :func:`check_loops`, then :func:`close_loops` on the reader's frame builder);
- :func:`refuse_tendons`: the tendon properties that would change the dynamics.

:mod:`kanerobot.robot.mjcf` holds the reader and its notes (what each equality becomes, what is refused) and calls
these; each function takes that reader (its ``numbers``, ``fail``, ``root``, ...) or its frame builder first.  The
bodies' inertias are in :mod:`kanerobot.robot.mjcf_inertia`.

Examples
--------
>>> from kanerobot.robot.mjcf import mjcf_from_text
>>> robot = mjcf_from_text('''<mujoco><worldbody><body name="a"><joint name="j1"/><geom size="0.1"/>
...   <body name="b"><joint name="j2"/><geom size="0.1"/></body></body></worldbody>
...   <equality><joint joint1="j2" joint2="j1" polycoef="0.1 2 0 0 0"/></equality></mujoco>''').robot
>>> mimic = robot.mimics[0]
>>> mimic.joint, mimic.leader, mimic.multiplier, float(mimic.offset)  # q_j2 = 2 q_j1 + 0.1
('j2', 'j1', 2, 0.1)
"""

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from kanerobot.robot import joints
from kanerobot.robot.description import BASE, MimicJoint
from kanerobot.robot.expressions import exact_number
from kanerobot.robot.xmlfile import Element

__all__ = ["equalities", "check_loops", "refuse_tendons", "mimics", "close_loops"]


def equalities(reader, bodies):
    """``(couplings, connects)``: the active ``<equality><joint>`` and ``<equality><tendon>`` couplings as
    ``(element, terms, a0)``: ``sum coef (q - ref) = a0`` over ``terms`` ``[(joint, coef), ...]``, the dependent
    joint first (a mimic joint, :func:`_mimic`), and the active ``<connect>`` (:class:`_Connect`); any other
    active equality is refused."""
    joints = {joint.name: joint for body in bodies for joint in body.joints if joint.name}
    out = []
    connects: list[_Connect] = []
    index = -1  # MuJoCo's index of the equality
    for block in reader.root.findall("equality"):
        for element in block.children:
            index += 1
            attrib = reader.resolved(element, "main", "equality")
            if reader.flag(element, attrib, "active", f"<equality> <{element.tag}>", "true") != "true":
                continue
            name = attrib.get("name", "").strip()
            what = f"<equality> <{element.tag}{' name=' + repr(name) if name else ''}>"
            if element.tag == "connect":
                connects.append(_connect(reader, element, attrib, what, bodies, name or f"connect{index}", index))
                continue
            if element.tag == "weld":
                reader.fail(element, f"{what} is not supported: a weld removes all 6 relative motions, and kanerobot cuts a loop at a "
                            f"joint (a ball joint for a <connect>), not at a fixed one; put body2 in body1 without a joint if "
                            f"it is rigid, or use a <connect>, or make it active=\"false\"")  # fmt: skip
            if element.tag not in ("joint", "tendon"):
                reader.fail(element, f"{what} is not supported (its constraint would change the dynamics; joint and fixed-tendon "
                            f"couplings and connect loops are): remove it, or make it active=\"false\"")  # fmt: skip
            if element.tag == "joint":
                out.append(_joint_equality(reader, element, attrib, what, joints))
            else:
                out.append(_tendon_equality(reader, element, attrib, what, joints))
    return out, connects


def _linear(reader, element, attrib, what, second):
    """``a0, a1`` of ``polycoef``; refused if not linear while a second joint or tendon is named."""
    polycoef = reader.numbers(element, attrib, "polycoef", 5, what, (0, 1, 0, 0, 0))
    if second and any(polycoef[2:]):
        reader.fail(element, f"{what}: polycoef=\"{attrib.get('polycoef')}\" is not linear: a mimic joint is "
                    f"a linear coupling (a0 + a1 x); give the last three coefficients 0")  # fmt: skip
    return float(polycoef[0]), float(polycoef[1])


def _joint_equality(reader, element, attrib, what, joints):
    """MuJoCo's ``q1 - ref1 = a0 + a1 (q2 - ref2)``: joint1 follows joint2."""
    coupled = []
    for key in ("joint1", "joint2"):
        joint_name = attrib.get(key, "").strip()
        if key == "joint2" and not joint_name:
            reader.fail(element, f"{what} holds joint1 at a constant: lock the joint (remove it) instead, or give joint2")
        coupled.append(_coupled_joint(reader, element, f"{what}: {key}=\"{joint_name}\"", joint_name, joints))
    a0, a1 = _linear(reader, element, attrib, what, True)
    return element, [(coupled[0], 1.0), (coupled[1], -a1)], a0


def _coupled_joint(reader, element, what, joint_name, joints):
    if joint_name not in joints:
        reader.fail(element, f"{what} names no joint of the model")
    if joints[joint_name].kind not in ("hinge", "slide"):
        reader.fail(element, f"{what} is a {joints[joint_name].kind} joint; a coupling takes hinge and slide joints")
    return joints[joint_name]


def _fixed_tendons(reader, joints):
    """``{name: (element, [(joint, coef), ...])}`` of the ``<tendon><fixed>`` elements, ``{name: element}`` of the spatial ones."""
    fixed, spatial = {}, {}
    for block in reader.root.findall("tendon"):
        for element in block.children:
            name = element.attrib.get("name", "").strip()
            if element.tag != "fixed":
                spatial[name] = element
                continue
            terms = []
            for child in element.children:
                if child.tag != "joint":
                    continue
                joint_name = child.attrib.get("joint", "").strip()
                what = f"fixed tendon {name!r}: <joint joint=\"{joint_name}\">"
                joint = _coupled_joint(reader, child, what, joint_name, joints)
                terms.append((joint, reader.number(child, child.attrib, "coef", what, math.nan)))
                if math.isnan(terms[-1][1]):
                    reader.fail(child, f"{what} has no coef=\"...\": give it")
            fixed[name] = (element, terms)
    return fixed, spatial


def _tendon_equality(reader, element, attrib, what, joints):
    """MuJoCo's ``L1 - L1_0 = a0 + a1 (L2 - L2_0)`` (``= a0`` without tendon2), ``L = sum coef q`` of a fixed
    tendon and ``L_0`` its value at qpos0 (the refs): one linear coupling of their joints.  The dependent
    joint is the last joint of tendon1 whose coefficient in the coupling is not 0."""
    fixed, spatial = _fixed_tendons(reader, joints)
    tendons = []
    for key in ("tendon1", "tendon2"):
        tendon_name = attrib.get(key, "").strip()
        if key == "tendon2" and not tendon_name:
            break
        if tendon_name in spatial:
            reader.fail(element, f"{what}: {key}=\"{tendon_name}\" is a spatial tendon (line {spatial[tendon_name].line}); "
                        f"only fixed tendons (linear in the joints) are couplings: remove the equality")  # fmt: skip
        if tendon_name not in fixed:
            reader.fail(element, f"{what}: {key}=\"{tendon_name}\" names no tendon of the model")
        tendons.append(fixed[tendon_name][1])
    a0, a1 = _linear(reader, element, attrib, what, len(tendons) > 1)
    coefs: dict[str, float] = {}
    by_name = {}
    for scale, terms in zip((1.0, -a1), tendons):
        for joint, coef in terms:
            coefs[joint.name] = coefs.get(joint.name, 0.0) + scale * coef
            by_name[joint.name] = joint
    moving = [joint for joint, _ in tendons[0] if coefs[joint.name] != 0]
    if not moving:
        reader.fail(element, f"{what}: no joint of tendon1 moves the coupling (every coefficient is 0): remove the equality")
    dependent = moving[-1]
    terms = [(dependent, coefs[dependent.name])] + [(by_name[n], c) for n, c in coefs.items() if c != 0 and n != dependent.name]
    if len(terms) == 1:
        reader.fail(element, f"{what} holds joint {dependent.name!r} at a constant: lock the joint (remove it) instead")
    return element, terms, a0


def _connect(reader, element, attrib, what, bodies, name, index):
    """A ``<connect>``'s two bodies and points: ``body1 anchor [body2]`` (body2's point is where the anchor is at
    qpos0, the world without body2) or ``site1 site2`` (the sites' places, wherever they are at qpos0)."""
    named = {body.element.attrib.get("name", "").strip(): body for body in bodies[1:]}
    named.pop("", None)
    named["world"] = bodies[0]
    if "site1" in attrib or "site2" in attrib:
        mixed = [key for key in ("body1", "body2", "anchor") if key in attrib]
        if mixed:
            reader.fail(element, f"{what} gives site1/site2 and {'/'.join(mixed)}: give site1 and site2, or body1 and anchor "
                        f"(and body2)")  # fmt: skip
        sites = _sites(reader, bodies)
        ends = []
        for key in ("site1", "site2"):
            site = attrib.get(key, "").strip()
            if not site:
                reader.fail(element, f"{what} has no {key}=\"...\": give both sites (or body1 and anchor)")
            if site not in sites:
                reader.fail(element, f"{what}: {key}=\"{site}\" names no site of the model")
            ends.append(sites[site])
        return _Connect(element, what, name, index, ends[0][0], ends[1][0], ends[0][1], ends[1][1])
    ends = []
    for key in ("body1", "body2"):
        body = attrib.get(key, "world" if key == "body2" else "").strip()
        if not body:
            reader.fail(element, f"{what} has no body1=\"...\": give body1 and anchor (or site1 and site2)")
        if body not in named:
            reader.fail(element, f"{what}: {key}=\"{body}\" names no body of the model")
        ends.append(named[body])
    return _Connect(element, what, name, index, ends[0], ends[1], reader.numbers(element, attrib, "anchor", 3, what), None)


def _sites(reader, bodies):
    """``{name: (body, position in the body's frame)}`` of the named sites (``<frame>`` elements and classes applied)."""
    out = {}

    def visit(container, body, R, p, cls):
        for child in container.children:
            if child.tag == "frame":
                Rf = reader.orientation(child, child.attrib, "a <frame>")
                pf = reader.numbers(child, child.attrib, "pos", 3, "a <frame>", (0, 0, 0))
                visit(child, body, R @ Rf, p + R @ pf, child.attrib.get("childclass", cls))
            elif child.tag == "site":
                attrib = reader.resolved(child, cls)
                name = attrib.get("name", "").strip()
                if name:
                    out[name] = (body, p + R @ reader.numbers(child, attrib, "pos", 3, f"site {name!r}", (0, 0, 0)))

    classes = {0: "main"}
    for body in bodies:
        cls = body.element.attrib.get("childclass", classes.get(body.parent, "main")) if body.index else "main"
        classes[body.index] = cls
        visit(body.element, body, np.eye(3), np.zeros(3), cls)
    return out


def check_loops(reader, connects, root, couplings):
    """Loops close on a fixed base without joint couplings (the models that compose them)."""
    connect = connects[0]
    if root.index != 0:
        reader.fail(connect.element, f"{connect.what}: a loop on a free-floating robot (the free joint of body {root.name!r}) is not "
                    f"supported: kanerobot's closed loops have a fixed base; remove the free joint or the connect")  # fmt: skip
    if couplings:
        reader.fail(connect.element, f"{connect.what}: a loop and joint couplings (the equality at line {couplings[0][0].line}) in "
                    f"one model are not supported: keep one kind")  # fmt: skip


def refuse_tendons(reader):
    """Refuse a tendon's damping (a force on the joints the model has no place for); its springs are left out, with the
    reader's one warning."""
    for block in reader.root.findall("tendon"):
        for element in block.children:
            attrib = reader.resolved(element, "main", "tendon")
            what = f"tendon {attrib.get('name', '').strip()!r}" if attrib.get("name") else "a tendon"
            if reader.number(element, attrib, "damping", what, 0.0) != 0:
                reader.fail(element, f"{what} has damping: tendon forces are not modelled; remove damping (a joint's damping is FV)")
            if reader.number(element, attrib, "stiffness", what, 0.0) != 0:
                reader.unmodelled.setdefault("tendon springs (stiffness)", []).append(what)


@dataclass
class _Connect:
    """A ``<connect>``: body1's point ``point1`` (in its frame) held on body2's ``point2`` (None: where point1 is at qpos0)."""

    element: Element
    what: str
    name: str
    index: int  # MuJoCo's index of the equality
    body1: Any  # the reader's bodies (kanerobot.robot.mjcf's, which imports this module)
    body2: Any
    point1: np.ndarray
    point2: np.ndarray | None


def _world_poses(bodies):
    """``{index: (R, p)}``: each body's axes and origin in the world at qpos0 (where the file places it)."""
    out = {0: (np.eye(3), np.zeros(3))}
    for body in bodies[1:]:
        R, p = out[body.parent]
        out[body.index] = (R @ body.R, p + R @ body.pos)
    return out


def _actuated(reader):
    """The names of the joints an actuator drives (``joint`` or ``jointinparent``)."""
    out = set()
    for block in reader.root.findall("actuator"):
        for element in block.children:
            attrib = reader.resolved(element, "main")
            out |= {attrib.get(key, "").strip() for key in ("joint", "jointinparent")}
    return out - {""}


def mimics(builder):
    """The joint couplings of the model's ``<equality><joint>`` and ``<equality><tendon>`` elements (:func:`_mimic`)."""
    return tuple(_mimic(builder, *coupling) for coupling in builder.couplings)


def close_loops(builder, connects, bodies):
    """Each ``<connect>`` a loop (SYMORO+'s): cut at a new massless ball joint at body1's point, closed by a fixed frame
    on body2 where that point is (the ball at its identity at qpos0 for body1 and anchor), the actuated joints active."""
    poses = _world_poses(bodies)
    for connect in connects:
        _close_loop(builder, connect, poses)
    _activate(builder, connects, bodies, poses)


def _moving(builder, label):
    """The joint frame (or the base) that moves the frame ``label``: its link."""
    by_label = {frame.label: frame for frame in builder.frames}
    while label != BASE and not by_label[label].is_joint:
        label = by_label[label].antecedent
    return label


def _close_loop(builder, connect, poses):
    (label1, o1), (label2, o2) = builder.anchor[connect.body1.index], builder.anchor[connect.body2.index]
    if _moving(builder, label1) == _moving(builder, label2):
        builder.reader.fail(connect.element, f"{connect.what}: bodies {connect.body1.name!r} and {connect.body2.name!r} move together "
                            f"(no joint between them): the connect closes no loop; remove it")  # fmt: skip
    (R1, p1), (R2, p2) = poses[connect.body1.index], poses[connect.body2.index]
    point2 = connect.point2 if connect.point2 is not None else R2.T @ (p1 + R1 @ connect.point1 - p2)
    cut = builder.label(connect.name)
    closing = builder.label(f"{cut}_closure")
    z = np.array([0.0, 0.0, 1.0])
    frame = builder.frame
    builder.frames.append(replace(frame(cut, builder.stem(cut), label1, joints.Spherical(), np.eye(3), o1 + connect.point1, z), mu=0))
    builder.frames.append(replace(frame(closing, builder.stem(closing), label2, joints.Fixed(), R2.T @ R1, o2 + point2, z), mu=0))
    builder.loops.append((cut, closing))
    builder.cut_joints[cut] = connect.index


def _activate(builder, connects, bodies, poses):
    """The joints driven by an actuator are the active ones: as many speeds as the mechanism's degrees of freedom
    (its joints' speeds less the rank of the loops' point constraints at qpos0), which must fix the others."""
    J, labels, columns = _point_constraints(builder, connects, bodies, poses)
    actuated = _actuated(builder.reader)
    active = [label for label in labels if builder.joint_names.get(label) in actuated]
    active_columns = [c for label in active for c in columns[label]]
    passive_columns = [c for c in range(J.shape[1]) if c not in active_columns]
    rank = _rank(J)
    dof = J.shape[1] - rank
    where = connects[0].what if len(connects) == 1 else f"the loops ({', '.join(f'{c.what} line {c.element.line}' for c in connects)})"
    if len(active_columns) != dof:
        names = ", ".join(repr(builder.joint_names[label]) for label in active) or "none"
        builder.reader.fail(connects[0].element, f"{where}: the mechanism has {dof} degree(s) of freedom ({J.shape[1]} joint speeds, "
                            f"{rank} independent loop constraints) but the actuators drive {len(active_columns)} "
                            f"joint speed(s) ({names}): the active joints of a closed-loop robot are its "
                            f"actuated ones; drive {dof} of joints {', '.join(repr(builder.joint_names[x]) for x in labels)} "
                            f"by a <motor joint=...>")  # fmt: skip
    if _rank(J[:, passive_columns]) < len(passive_columns):
        passive = [label for label in labels if label not in active]
        builder.reader.fail(connects[0].element, f"{where}: the actuated joints {', '.join(repr(builder.joint_names[x]) for x in active)} "
                            f"do not drive the mechanism: the passive joints "
                            f"{', '.join(repr(builder.joint_names[x]) for x in passive)} are not determined by them "
                            f"at the model's configuration; actuate others")  # fmt: skip
    cut = {label for label, _ in builder.loops}
    builder.frames = [replace(frame, mu=int(frame.label in active)) if frame.is_joint and frame.label not in cut else frame
                      for frame in builder.frames]  # fmt: skip


def _point_constraints(builder, connects, bodies, poses):
    """``(J, labels, columns)``: the loops' point constraints at qpos0 (3 rows per connect: the velocity of body1's point
    less body2's, in the world, from the joints between them), one column per speed of MuJoCo's joints (the ball joints'
    three about the world axes: the same rank); ``labels`` the joint frames, ``columns[label]`` their columns."""
    by_body = {body.index: body for body in bodies}
    labels = [frame.label for frame in builder.frames if frame.is_joint and frame.label not in builder.cut_joints]
    joint_of = {builder.joint_ids[label]: label for label in labels}
    columns, n = {}, 0
    for label in labels:
        width = 3 if isinstance(next(f for f in builder.frames if f.label == label).joint, joints.Spherical) else 1
        columns[label], n = list(range(n, n + width)), n + width
    J = np.zeros((3 * len(connects), n))
    for b, connect in enumerate(connects):
        R1, p1 = poses[connect.body1.index]
        R2, p2 = poses[connect.body2.index]
        x1 = p1 + R1 @ connect.point1
        x2 = x1 if connect.point2 is None else p2 + R2 @ connect.point2
        chain1, chain2 = _chain(by_body, connect.body1), _chain(by_body, connect.body2)
        common = {body.index for body in chain1} & {body.index for body in chain2}
        for sign, chain, x in ((1.0, chain1, x1), (-1.0, chain2, x2)):
            for body in chain:
                if body.index in common:
                    break  # the loop's root and what is above it move both points alike
                R, p = poses[body.index]
                for joint in body.joints:
                    c, a = p + R @ joint.pos, R @ joint.axis
                    cols = columns[joint_of[joint.index]]
                    if joint.kind == "hinge":
                        J[3 * b:3 * b + 3, cols[0]] += sign * np.cross(a, x - c)
                    elif joint.kind == "slide":
                        J[3 * b:3 * b + 3, cols[0]] += sign * a
                    else:
                        J[3 * b:3 * b + 3, cols] += sign * np.cross(np.eye(3), x - c).T
    return J, labels, columns


def _chain(by_body, body):
    """``body`` and its ancestors up to the world, in that order."""
    out = [body]
    while out[-1].index != 0:
        out.append(by_body[out[-1].parent])
    return out


def _rank(J, rtol=1e-9):
    if J.size == 0:
        return 0
    s = np.linalg.svd(J, compute_uv=False)
    return int(np.sum(s > rtol * max(1.0, float(s[0]))))


def _mimic(builder, element, terms, a0):
    """``MimicJoint`` of the coupling ``sum c_i (q_i - ref_i) = a0``, the dependent joint d first: our q is MuJoCo's
    qpos, so ``q_d = (a0 + sum c_i ref_i - sum_{i != d} c_i q_i) / c_d`` (refs of hinges in radians)."""
    degrees = math.pi / 180 if builder.reader.compiler["angle"] == "degree" else 1.0
    labels = {name: label for label, name in builder.joint_names.items()}
    (mimic, c_d), *leaders = terms
    constant = a0
    for joint, c in terms:
        constant += c * builder.reader.number(joint.element, joint.attrib, "ref", "a joint", 0.0) * (degrees if joint.kind == "hinge" else 1.0)
    (leader, c_l), *more = leaders
    return MimicJoint(labels[mimic.name], labels[leader.name], exact_number(-c_l / c_d), exact_number(constant / c_d),
                      tuple((labels[joint.name], exact_number(-c / c_d)) for joint, c in more))
