"""Gymnasium wrappers: text, chat, command catalog, numeric and tokenized observations, recording.

    from sre_env.wrappers import ChatWrapper, CatalogWrapper, NumericObservation
    env = NumericObservation(CatalogWrapper(gym.make("SREGym/DiskSector-v0")))

Each wrapper does one thing. Names load lazily, so ``import sre_env.wrappers``
stays cheap and ``TokenizedObservation`` only needs ``transformers`` when used.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "CatalogWrapper",
    "ChatWrapper",
    "CommandCatalog",
    "NumericObservation",
    "RecordEpisode",
    "ScenarioMix",
    "TextObservation",
    "TokenizedObservation",
    "catalog_for",
    "parse_action",
    "render_observation",
    "tool_schemas",
]

_WHERE = {
    "CatalogWrapper": "catalog",
    "CommandCatalog": "catalog",
    "catalog_for": "catalog",
    "ChatWrapper": "chat",
    "parse_action": "chat",
    "tool_schemas": "chat",
    "NumericObservation": "numeric",
    "RecordEpisode": "recording",
    "ScenarioMix": "mix",
    "TextObservation": "text",
    "render_observation": "text",
    "TokenizedObservation": "tokenized",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'sre_env.wrappers' has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return sorted(__all__)
