"""kanerobot: symbolic modelling of robots.

>>> import kanerobot as kr
>>> robot = kr.load(kr.frames_path("rx90.par"))
>>> robot.dof, robot.structure
(6, 'serial')
"""

#: The version, in one place (pyproject.toml reads it from here).
__version__ = "0.1.0"

from kanerobot.campaign import campaign
from kanerobot.dynamics.model import derive
from kanerobot.errors import (
    DescriptionError,
    ExpressionError,
    KaneRobotError,
    ParameterError,
    RobotFileError,
    SingularityError,
)
from kanerobot.identification import Recording, base_parameter_set, base_parameters, fourier_excitation, identification_model, identify
from kanerobot.igm import inverse_geometric, redundant_ik
from kanerobot.library import frames_path, robot_names
from kanerobot.robot import Base, Frame, GeneralPlacement, KKPlacement, Robot
from kanerobot.robot.io import load, save
from kanerobot.robot.khalil_kleinfinger import to_khalil_kleinfinger
from kanerobot.simulation import cross_validate, simulate
from kanerobot.viewer import view
from kanerobot.visual.draw import plot

__all__ = [
    "Base",
    "DescriptionError",
    "ExpressionError",
    "Frame",
    "GeneralPlacement",
    "KKPlacement",
    "KaneRobotError",
    "ParameterError",
    "Recording",
    "Robot",
    "RobotFileError",
    "SingularityError",
    "base_parameter_set",
    "base_parameters",
    "campaign",
    "cross_validate",
    "derive",
    "fourier_excitation",
    "frames_path",
    "identification_model",
    "identify",
    "inverse_geometric",
    "load",
    "plot",
    "redundant_ik",
    "robot_names",
    "save",
    "simulate",
    "to_khalil_kleinfinger",
    "view",
]
