"""Joint models: the one place that knows what a joint type means.

A joint type is one class (:class:`~kanerobot.robot.joints.model.JointModel`:
sizes, transform, motion subspace, symbols, integration), one module each;
every recursion asks a frame's joint for them instead of testing its type.
:data:`JOINT_MODELS` is the registry: a new joint type is its own module
and one entry here.  ``sigma`` (0 revolute, 1 prismatic, 2 fixed) is the
code of SYMORO's files, read and written only by the file readers and
writers through :func:`from_sigma` and ``JointModel.sigma``.
"""

from kanerobot.robot.joints.fixed import Fixed
from kanerobot.robot.joints.free_flyer import FreeFlyer, base_pose, configuration_derivative, integrate
from kanerobot.robot.joints.model import JointModel
from kanerobot.robot.joints.planar import Planar
from kanerobot.robot.joints.prismatic import Prismatic
from kanerobot.robot.joints.quaternion import (
    exp_rotation,
    log_rotation,
    normalised_quaternion,
    quaternion_product,
    quaternion_to_rotation,
    rotation_matrix,
    rotation_to_quaternion,
)
from kanerobot.robot.joints.revolute import Revolute
from kanerobot.robot.joints.spherical import Spherical
from kanerobot.robot.joints.transforms import (
    JointVariableError,
    hat,
    homogeneous,
    kk_transform,
    rot_axis,
    rot_x,
    rot_z,
    split_joint_variable,
)

__all__ = [
    "FIXED",
    "FREE_FLYER",
    "JOINT_MODELS",
    "JOINT_SIZES",
    "JOINT_TYPES",
    "PRISMATIC",
    "REVOLUTE",
    "Fixed",
    "FreeFlyer",
    "JointModel",
    "JointVariableError",
    "Planar",
    "Prismatic",
    "Revolute",
    "Spherical",
    "base_pose",
    "configuration_derivative",
    "exp_rotation",
    "from_sigma",
    "hat",
    "homogeneous",
    "integrate",
    "joint_model",
    "kk_transform",
    "log_rotation",
    "normalised_quaternion",
    "quaternion_product",
    "quaternion_to_rotation",
    "rot_axis",
    "rot_x",
    "rot_z",
    "rotation_matrix",
    "rotation_to_quaternion",
    "split_joint_variable",
]

#: Every joint type, by name: the registry.
JOINT_MODELS = {model.name: model for model in (Revolute, Prismatic, Fixed, FreeFlyer, Spherical, Planar)}

#: SYMORO's codes (``sigma``) of the types its files hold, and the free flyer's (the root of a floating robot).
REVOLUTE, PRISMATIC, FIXED, FREE_FLYER = 0, 1, 2, 3
_BY_SIGMA = {REVOLUTE: Revolute, PRISMATIC: Prismatic, FIXED: Fixed, FREE_FLYER: FreeFlyer}
JOINT_TYPES = {code: model.name for code, model in _BY_SIGMA.items()}
#: ``(nq, nv)`` of each code.
JOINT_SIZES = {code: (model.nq, model.nv) for code, model in _BY_SIGMA.items()}


def from_sigma(sigma) -> JointModel:
    """The joint model of SYMORO's code ``sigma`` (0, 1 or 2); a :class:`JointModel` is returned as it is.

    Raises
    ------
    ValueError
        For another code (the description turns it into a message naming the frame).

    Examples
    --------
    >>> from_sigma(0), from_sigma(2)
    (Revolute(), Fixed())
    """
    if isinstance(sigma, JointModel):
        return sigma
    if sigma in (REVOLUTE, PRISMATIC, FIXED):
        return _BY_SIGMA[int(sigma)]()
    raise ValueError(f"sigma {sigma!r} is not a joint code: use 0 (revolute), 1 (prismatic) or 2 (fixed)")


def joint_model(name: str) -> JointModel:
    """The joint model called ``name`` (:data:`JOINT_MODELS`).

    Raises
    ------
    ValueError
        Naming the known types.

    Examples
    --------
    >>> joint_model("spherical").nq, joint_model("planar").nv
    (4, 3)
    """
    if name not in JOINT_MODELS:
        raise ValueError(f"unknown joint type {name!r}: use {', '.join(JOINT_MODELS)}")
    return JOINT_MODELS[name]()
