"""SYMORO's parameter names, in one place below the description and the reports that use them."""

#: Inertial, friction and external-wrench parameters of a link, SYMORO names.
INERTIAL_NAMES = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M", "IA")
FRICTION_NAMES = ("FV", "FS")
WRENCH_NAMES = ("FX", "FY", "FZ", "CX", "CY", "CZ")
DYNAMIC_NAMES = INERTIAL_NAMES + FRICTION_NAMES + WRENCH_NAMES
#: Per-joint parameters: velocity, acceleration, torque, flexibility flag, stiffness.
JOINT_NAMES = ("QP", "QDP", "GAM", "eta", "k")
#: Base vectors: angular velocity and acceleration, linear velocity and acceleration, gravity.
BASE_VECTOR_NAMES = ("W0", "WP0", "V0", "VP0", "G")
