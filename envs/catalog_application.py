"""Catalog module: see envs/registry.py for the id scheme.

Application-configuration incidents on hotel-reservation: env values, image
versions and commands, MongoDB users and credentials, ConfigMaps.
"""

from __future__ import annotations

from .app_env import EnvVarShadowing, IncorrectPortAssignment, MisconfiguredEnv
from .base import Scenario
from .configmaps import ConfigMapDrift, MissingConfigMap
from .mongo_users import MongoAuthRevoked, MongoUserMissing, StaleSecretCredentials
from .releases import BuggyRelease, IncorrectImage, IncorrectImageWrongCommand

SCENARIOS: dict[str, type[Scenario]] = {
    "MisconfiguredEnv": MisconfiguredEnv,
    "IncorrectPortAssignment": IncorrectPortAssignment,
    "EnvVarShadowing": EnvVarShadowing,
    "IncorrectImage": IncorrectImage,
    "IncorrectImage-WrongCommand": IncorrectImageWrongCommand,
    "BuggyRelease": BuggyRelease,
    "MongoAuthRevoked": MongoAuthRevoked,
    "MongoUserMissing": MongoUserMissing,
    "StaleSecretCredentials": StaleSecretCredentials,
    "ConfigMapDrift": ConfigMapDrift,
    "MissingConfigMap": MissingConfigMap,
}
