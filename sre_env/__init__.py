"""sre-env: Gymnasium environments where agents diagnose and repair broken cloud-native systems.

    import gymnasium as gym
    import sre_env  # registers the SREGym/* ids
    env = gym.make("SREGym/DiskSector-v0")
    obs, info = env.reset(seed=3)
"""

from __future__ import annotations

from .envs.registry import ENV_IDS, list_scenarios, register_all
from .errors import (
    ApiError,
    MissingExtraError,
    ScenarioError,
    SREEnvError,
    UnknownEnvironmentError,
)

__version__ = "0.1.0"
__all__ = [
    "ENV_IDS",
    "ApiError",
    "MissingExtraError",
    "SREEnv",
    "SREEnvError",
    "ScenarioError",
    "UnknownEnvironmentError",
    "list_scenarios",
    "register_all",
    "__version__",
]

register_all()


def __getattr__(name: str):
    # SREEnv pulls in the simulator; load it on first use so `import sre_env` stays light.
    if name == "SREEnv":
        from .env import SREEnv

        return SREEnv
    raise AttributeError(f"module 'sre_env' has no attribute {name!r}")
