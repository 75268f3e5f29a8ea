"""Robot descriptions and their file formats."""

from kanerobot.robot.description import (
    BASE,
    Base,
    Frame,
    GeneralPlacement,
    KKPlacement,
    MimicJoint,
    Robot,
    Wheel,
)

__all__ = ["BASE", "Base", "Frame", "GeneralPlacement", "KKPlacement", "MimicJoint", "Robot", "Wheel"]
