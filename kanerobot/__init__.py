"""kanerobot: symbolic modelling of robots.

>>> import kanerobot as kr
>>> robot = kr.load(kr.frames_path("rx90.par"))
>>> robot.dof, robot.structure
(6, 'serial')
"""

from kanerobot.errors import (
    DescriptionError,
    ExpressionError,
    KaneRobotError,
    ParameterError,
    RobotFileError,
    SingularityError,
)
from kanerobot.robot import Base, Frame, GeneralPlacement, KKPlacement, Robot

__version__ = "0.1.0"
from kanerobot.robot.io import load, save
from kanerobot.library import frames_path, robot_names
from kanerobot.dynamics.model import derive
from kanerobot.simulation import cross_validate, simulate
from kanerobot.identification import base_parameter_set, base_parameters, fourier_excitation, identification_model, identify
from kanerobot.igm import inverse_geometric
