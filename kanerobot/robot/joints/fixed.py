"""A frame without a joint (``sigma = 2``): no configuration, no speed."""

from kanerobot.robot.joints.model import JointModel


class Fixed(JointModel):
    """``M = I``; ``S`` is 6 x 0.

    Examples
    --------
    >>> Fixed().motion_subspace([0, 0, 1]).shape
    (6, 0)
    """

    name = "fixed"
    nq = nv = 0
    sigma = 2
