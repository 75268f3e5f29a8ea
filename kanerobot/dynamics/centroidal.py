"""Balance quantities as programs: centre of mass, its Jacobian, the centroidal momentum matrix.

The centroidal momentum of a robot is its linear momentum ``l`` and its
angular momentum ``k_G`` about its centre of mass G, in the axes of the
world; it is linear in the speeds (Orin and Goswami 2008, "Centroidal
momentum matrix of a humanoid robot", IROS; Orin, Goswami and Lee 2013,
"Centroidal dynamics of a humanoid robot", Autonomous Robots 35)::

    h_G = [l; k_G] = A_G(q) qd,      l = M cdot,      cdot = J_G(q) qd = A_G[:3] qd / M

``A_G`` (6 x nv) is the centroidal momentum matrix (CMM), ``J_G`` (3 x nv)
the Jacobian of the centre of mass ``c``, ``M`` the total mass; ``dh_G/dt``
is the sum of the external wrenches at G, which is what balance
controllers shape.  These are pinocchio's ``centerOfMass``,
``jacobianCenterOfMass`` and ``computeCentroidalMap`` (``data.Ag``).

**The algorithm** (Orin, Goswami and Lee 2013, section 4; Wensing and Orin
2016, "Improved computation of the humanoid centroidal dynamics and
application for whole-body control", IJHR 13) is the composite-rigid-body
algorithm with its columns carried to G instead of projected on the joints:

1. forward pass: the placement ``0A_j, 0P_j`` of every joint frame in frame 0
   (:class:`~kanerobot.dynamics.common.BasePlacements`);
2. backward pass: the composite links, link j with everything it carries,
   ``jJ+_j, jMS+_j, M+_j`` from the leaves to link 0 (SYMORO+ eqs 27-30,
   :func:`~kanerobot.dynamics.composite.composite_links`), so that composite
   link 0 is the whole robot about O_0 in frame 0;
3. total mass and centre of mass: ``M = M+_0``, ``0c = 0MS+_0 / M``;
4. column j: the momentum of composite link j moving with the unit twist
   ``a_j`` of joint j, at O_j in frame j (eqs 31-34,
   :func:`~kanerobot.dynamics.composite.composite_wrench`: the same ``[f; m] =
   I+_j a_j`` that gives the inertia matrix), then carried to G in the axes
   of frame 0::

       [f_j; m_j] = I+_j a_j
       l_j = 0A_j f_j,      k_j = 0A_j m_j + (0P_j - 0c) x l_j,      A_G[:, j] = [l_j; k_j]

   A free flyer's six columns are those of ``I+_0`` (its motion subspace is
   the identity): ``[[M 1, -M [0c]x], [0, I_G]]``, ``I_G`` the whole robot's
   inertia about G.  ``J_G`` is ``l_j / M``: its program
   (:func:`center_of_mass`) needs no inertia, only the first moments.

**Axes and bodies.**  The programs give ``c`` and ``A_G`` in the axes of
frame 0, with the joint variables (and the geometric and inertial
parameters) as inputs, like the numeric kinematics
(:mod:`~kanerobot.dynamics.kinematic_programs`).  On a fixed base frame 0
is the world; the bodies are those a joint moves (link 0 and the links
fixed to it carry no momentum and are left out of M and c, as pinocchio
does).  A floating robot's speeds are pinocchio's (``v, w`` of link 0 in
frame 0, then the joints) and every link counts; in the world,
``c_w = p_0 + wR_0 0c``, ``A_G = diag(wR_0, wR_0) 0A_G``
(:class:`~kanerobot.dynamics.dynamic_model.NumericDynamics` composes them).
Closed loops and wheeled bases have the programs of their tree
(``tree_robot``, ``equivalent_tree``), the numeric model projecting them on
the independent speeds: ``A_G G(q)``, ``qd = G qd_a``
(:class:`~kanerobot.dynamics.constrained.ConstrainedDynamics`).  A base
of known motion (``W0``, ``V0``): the momentum relative to frame 0.
Flexible joints: the programs read the link side q (the rotors' spin is not
counted); the flexible model's numeric functions do not offer them yet.
"""

import dataclasses
from types import MappingProxyType

import sympy

from kanerobot.dynamics.common import BasePlacements, frame_placements, program_inputs
from kanerobot.dynamics.composite import composite_links, composite_wrench
from kanerobot.dynamics.free_flyer import RIGID_INERTIAL_NAMES, check_floating
from kanerobot.dynamics.root import is_free, root_joint_model
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import BASE, Robot
from kanerobot.symbolic.program import Program
from kanerobot.symbolic.vectors import cross, plus, times

__all__ = ["NAMES", "center_of_mass", "centroidal_momentum_matrix", "moving_links"]

#: Names: of the outputs, the total mass, the centre of mass ``0c``
#: (``{r}``: 1..3), the COM Jacobian and the CMM (``{r}``: row, ``{c}``:
#: speed, 1-based); of the variables, ``1/M`` and the linear momentum
#: ``0A_j f_j`` of column j (``{j}``: the frame's stem).
NAMES = {"mass": "MG", "com": "PG{r}", "jacobian": "JG{r}_{c}", "cmm": "AG{r}_{c}", "inverse": "IMG", "linear": "LG{r}_{j}"}


def center_of_mass(robot: Robot, jacobian: bool = True, trig: bool = True) -> Program:
    """Program of the centre of mass ``0c`` and its Jacobian ``J_G`` (composite links).

    ``0c = 0MS+_0 / M`` (the first moments of composite link 0, the whole
    robot, over its mass) and, column j, ``J_G[:, j] = 0A_j f_j / M`` with
    ``f_j = M+_j sigma_j e_j + sigmabar_j e_j x jMS+_j`` the linear momentum
    of composite link j when joint j moves at unit rate (see the module
    notes).  ``cdot = J_G qd``.

    Parameters
    ----------
    robot : Robot
        Serial or tree robot, fixed base (frame 0 is the world) or floating
        (frame 0 is link 0; its six speeds first).
    jacobian : bool, optional
        Also the Jacobian (outputs ``JG{r}_{c}``).
    trig : bool, optional
        The program's trigonometric rules (``C23 = C2*C3 - S2*S3``).

    Returns
    -------
    Program
        Outputs ``MG`` (total mass), ``PG1 .. PG3`` (``0c``), then the
        Jacobian row by row, ``JG1_1 .. JG3_<nv>`` (3 x nv: a floating base's
        six speeds, then ``robot.joint_labels``).  Inputs: q, then the
        geometric and inertial parameters (``XX .. M``) sorted by name.

    Raises
    ------
    KaneRobotError
        Closed loops or a wheeled base (their numeric models give these
        quantities through their tree), a floating robot the free-flyer
        algorithms do not handle.

    Examples
    --------
    >>> import kanerobot as kr
    >>> program = center_of_mass(kr.load(kr.frames_path("planar2")))
    >>> print(program)
    C1 = cos(th1)
    S1 = sin(th1)
    C2 = cos(th2)
    S2 = sin(th2)
    AS12 = C2*MX2 - MY2*S2
    AS22 = C2*MY2 + MX2*S2
    PM12 = L1*M2
    MSP11 = AS12 + MX1 + PM12
    MSP21 = AS22 + MY1
    MSP31 = MZ1 + MZ2
    MP1 = M1 + M2
    AS11 = C1*MSP11 - MSP21*S1
    AS21 = C1*MSP21 + MSP11*S1
    IMG = 1/MP1
    PG1 = AS11*IMG
    PG2 = AS21*IMG
    PG3 = IMG*MSP31
    C12 = C1*C2 - S1*S2
    S12 = C1*S2 + C2*S1
    LG1_2 = -C12*MY2 - MX2*S12
    LG2_2 = C12*MX2 - MY2*S12
    MG = MP1
    JG1_1 = -AS21*IMG
    JG1_2 = IMG*LG1_2
    JG2_1 = AS11*IMG
    JG2_2 = IMG*LG2_2
    JG3_1 = 0
    JG3_2 = 0

    ``MSP.1`` are the first moments of composite link 1 (the whole arm) in
    frame 1, ``AS.1`` the same in frame 0; ``LG.2`` is the linear momentum
    of composite link 2 when joint 2 turns at unit rate.
    """
    return _Balance(robot, "the centre of mass", inertia=False, trig=trig).center_of_mass(jacobian)


def centroidal_momentum_matrix(robot: Robot, trig: bool = True) -> Program:
    """Program of the centroidal momentum matrix ``A_G`` (Orin-Goswami; pinocchio's ``computeCentroidalMap``).

    ``h_G = [l; k_G] = A_G qd``: linear momentum and angular momentum about
    the centre of mass, in the axes of frame 0.  Column j is the momentum of
    composite link j moving with joint j's unit twist ``a_j``, carried from
    O_j to G::

        [f_j; m_j] = I+_j a_j,    A_G[:, j] = [0A_j f_j; 0A_j m_j + (0P_j - 0c) x 0A_j f_j]

    (``I+_j`` the spatial inertia of composite link j about O_j in frame j;
    see the module notes); a free flyer's six columns are ``I+_0`` carried
    to G, ``[[M 1, -M [0c]x], [0, I_G]]``.

    Parameters
    ----------
    robot : Robot
        As :func:`center_of_mass`.
    trig : bool, optional

    Returns
    -------
    Program
        Outputs ``MG``, ``PG1 .. PG3`` (as :func:`center_of_mass`), then
        ``A_G`` row by row, ``AG1_1 .. AG6_<nv>`` (6 x nv, linear rows
        first).  Inputs as :func:`center_of_mass`.

    Raises
    ------
    KaneRobotError
        As :func:`center_of_mass`.

    Examples
    --------
    A planar arm turning about z: in the first column, the angular momentum
    about G is the whole arm's inertia about the vertical through G, its
    inertia about the axis of joint 1 (``JP331``, composite link 1) less
    the mass times the squared distance of G to that axis; in the second,
    link 2's inertia about its axis plus the moment of its momentum about G:

    >>> import kanerobot as kr
    >>> program = centroidal_momentum_matrix(kr.load(kr.frames_path("planar2")))
    >>> [(name, program.outputs[name]) for name in ("AG6_1", "AG6_2")]
    [('AG6_1', -AS11*PG1 - AS21*PG2 + JP331), ('AG6_2', -LG1_2*(-PG2 + TP2_2) + LG2_2*(-PG1 + TP1_2) + ZZ2)]
    >>> program.op_count()
    {'add': 35, 'mul': 46, 'fn': 4}
    """
    return _Balance(robot, "the centroidal momentum matrix", trig=trig).centroidal_momentum_matrix()


def moving_links(robot: Robot) -> Robot:
    """``robot`` with only the links that move: on a fixed base, those with a joint on their path.

    Link 0 and the links fixed to it (no joint between them and the base)
    carry no momentum; pinocchio leaves them out of the centre of mass too
    (the universe's inertia).  A floating robot is returned as is: its base
    moves.

    Examples
    --------
    >>> import kanerobot as kr
    >>> moving_links(kr.load(kr.frames_path("rx90"))).links
    ('1', '2', '3', '4', '5', '6')
    """
    if is_free(robot):
        return robot
    keep = tuple(label for label in robot.links if label != BASE and any(robot.frame(k).is_joint for k in robot.root_path(label)))
    if keep == robot.links:
        return robot
    return dataclasses.replace(robot, links=keep, dynamics=MappingProxyType({label: robot.dynamics[label] for label in keep}))


class _Balance:
    """The two passes shared by both programs: one program, its composite links and placements."""

    def __init__(self, robot, what, inertia=True, trig=True):
        if robot.loops or robot.wheeled:
            kind = "closed loops" if robot.loops else "a wheeled base"
            raise KaneRobotError(
                f"{what} of {robot.name}: the program is that of a serial or tree robot, and {robot.name} has {kind}: "
                f"kr.derive(robot).numeric(values) gives it on the independent speeds (A_G G, the tree's times the "
                f"constraints' speed map)"
            )
        if is_free(robot):
            check_floating(robot, what)
        self.robot = robot = moving_links(robot)
        self.program = program = Program(inputs=program_inputs(robot, [robot.q], RIGID_INERTIAL_NAMES), trig=trig)
        # Backward pass (SYMORO+ eqs 27-30) down to link 0, fixed or not: composite link 0 is every moving body.
        placements = frame_placements(robot, program)
        self.plus = {j: (J, MS, M) for j, J, MS, M in composite_links(program, robot, placements, root=True, inertia=inertia)}
        _, MS0, M = self.plus[BASE]
        self.mass = M
        self.inverse = program.assign(NAMES["inverse"], 1 / M)
        self.com = [program.assign(NAMES["com"].format(r=r + 1), self.inverse * MS0[r]) for r in range(3)]
        self.forward = BasePlacements(robot, program)  # forward pass, each joint frame's 0A_j, 0P_j when asked

    def columns(self, angular):
        """``[(l_j, k_j)]`` for every speed: the momentum at G of each unit speed (k_j None unless ``angular``)."""
        robot, out = self.robot, []
        root = root_joint_model(robot).motion_subspace(None)  # the root joint's speeds move composite link 0 (none if fixed)
        for a in (root[:, k] for k in range(root.cols)):
            f, m = composite_wrench(*self.plus[BASE], a)
            out.append((list(f), plus(list(m), cross(f, self.com)) if angular else None))  # m + (0 - c) x f
        for j in robot.joint_labels:
            S = robot.frame(j).motion_subspace()
            for k in range(S.cols):  # one column per speed of the joint (a stem of its own past the first)
                f, m = composite_wrench(*self.plus[j], S[:, k])  # (31)-(34)
                A, P = self.forward(j)
                stem = robot.stems[j] if S.cols == 1 else f"{robot.stems[j]}_{k + 1}"
                # l_j named: the angular rows read it through the lever arm O_j - G
                l = list(self.program.assign_matrix(lambda r, c, stem=stem: NAMES["linear"].format(r=r, j=stem), sympy.Matrix(times(A, f))))
                lever = [P[r] - self.com[r] for r in range(3)]
                out.append((l, plus(times(A, m), cross(lever, l)) if angular else None))
        return out

    def _outputs(self):
        program = self.program
        program.set_output(NAMES["mass"], self.mass)
        for r in range(3):
            program.set_output(NAMES["com"].format(r=r + 1), self.com[r])

    def _matrix(self, key, columns):
        """Outputs ``NAMES[key]`` of a matrix given by its columns, row by row (as the Jacobian programs)."""
        for r in range(len(columns[0]) if columns else 0):
            for c, column in enumerate(columns):
                self.program.set_output(NAMES[key].format(r=r + 1, c=c + 1), column[r])

    def center_of_mass(self, jacobian):
        self._outputs()
        if jacobian:
            self._matrix("jacobian", [[self.inverse * x for x in l] for l, _ in self.columns(angular=False)])
        self.program.prune()
        return self.program

    def centroidal_momentum_matrix(self):
        self._outputs()
        self._matrix("cmm", [l + k for l, k in self.columns(angular=True)])
        self.program.prune()
        return self.program
