"""Tokenized observations: the rendered text through a ``transformers`` tokenizer.

For policies that are language models fine-tuned with RL: the observation is
``{"input_ids", "attention_mask"}`` of fixed length (left-truncated, so the
newest text survives, and right-padded), ready to batch. The tokenizer is any
``transformers`` tokenizer object, or a name/path loaded with ``AutoTokenizer``
(``pip install 'sre-env[llm]'``).

    tok = AutoTokenizer.from_pretrained("path/to/model")
    env = TokenizedObservation(gym.make("SREGym/TargetPortMisconfig-v0"), tok, max_length=1024)
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from sre_env.errors import MissingExtraError

from .text import render_observation

__all__ = ["TokenizedObservation"]


class TokenizedObservation(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """Observation -> ``{"input_ids": int64[max_length], "attention_mask": int8[max_length]}``."""

    def __init__(self, env: gym.Env, tokenizer: Any, *, max_length: int = 1024) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, tokenizer=tokenizer, max_length=max_length)
        super().__init__(env)
        if isinstance(tokenizer, str):
            try:
                from transformers import AutoTokenizer
            except ImportError:
                raise MissingExtraError("transformers", "llm") from None
            tokenizer = AutoTokenizer.from_pretrained(tokenizer)
        self.tokenizer = tokenizer
        self.max_length = int(max_length)
        vocab = int(getattr(tokenizer, "vocab_size", 0) or 0) + len(getattr(tokenizer, "get_added_vocab", dict)())
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self.pad_id = int(pad) if pad is not None else 0
        self.observation_space = spaces.Dict(
            {
                "input_ids": spaces.Box(0, max(vocab, self.pad_id + 1) - 1, shape=(self.max_length,), dtype=np.int64),
                "attention_mask": spaces.Box(0, 1, shape=(self.max_length,), dtype=np.int8),
            }
        )
        self._metric_names: list[str] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._metric_names = list(info.get("metric_names", []))
        return self.observation(obs), info

    def text(self, observation: dict[str, Any]) -> str:
        return render_observation(observation, metric_names=self._metric_names)

    def observation(self, observation: dict[str, Any]) -> dict[str, np.ndarray]:
        ids = list(self.tokenizer(self.text(observation), add_special_tokens=False)["input_ids"])[-self.max_length :]
        input_ids = np.full(self.max_length, self.pad_id, dtype=np.int64)
        mask = np.zeros(self.max_length, dtype=np.int8)
        input_ids[: len(ids)] = ids
        mask[: len(ids)] = 1
        return {"input_ids": input_ids, "attention_mask": mask}
