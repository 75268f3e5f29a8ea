"""Identification models: the regressor, base inertial parameters, estimation from recorded data (SYMORO+ section 6).

>>> import kanerobot as kr
>>> robot = kr.load(kr.frames_path("rx90"))
>>> len(base_parameters(robot, friction=False))
40
"""

from kanerobot.identification.base_parameters import BaseParameterSet, base_parameter_set, base_parameters
from kanerobot.identification.data import DataError, RecordedData, load_data, save_data
from kanerobot.identification.energy_model import energy_model
from kanerobot.identification.excitation import ExcitationResult, FourierTrajectory, fourier_excitation
from kanerobot.identification.filtering import filtered_model
from kanerobot.identification.identify import IdentificationResult, identify
from kanerobot.identification.numeric_regressor import Regressors
from kanerobot.identification.recording import Recording
from kanerobot.identification.regressor import IdentificationModel, identification_model

__all__ = [
    "BaseParameterSet",
    "DataError",
    "ExcitationResult",
    "FourierTrajectory",
    "IdentificationModel",
    "IdentificationResult",
    "RecordedData",
    "Recording",
    "Regressors",
    "base_parameter_set",
    "base_parameters",
    "energy_model",
    "filtered_model",
    "fourier_excitation",
    "identification_model",
    "identify",
    "load_data",
    "save_data",
]
