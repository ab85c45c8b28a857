"""RLlib glue: every SREGym id registered with Ray Tune, and a masked PPO module.

    from sre_env.rllib import register_envs
    register_envs()                                  # "SREGym/DiskSector-v0", ..., and "SREGym/Mix"
    config = PPOConfig().environment("SREGym/Mix", env_config={"env_ids": [...], "seeds": list(range(50))})

Each id is registered twice: under its own name with the text interface (for
custom models that read text) and as ``<id>/numeric`` with the command catalog
and the numeric observation (``{"observations": Box, "action_mask": Box}``),
which is what masked PPO needs. ``SREGym/Mix`` is a ``ScenarioMix`` over
``env_config["env_ids"]``. ``env_config`` entries other than the mix's own are
passed to ``gym.make`` (``max_steps``, ``task``, ``reward_spec``...).

Ray is an optional extra: ``pip install 'sre-env[rllib]'``.
"""

from __future__ import annotations

from typing import Any

from sre_env.errors import MissingExtraError

__all__ = ["register_envs", "masked_ppo_module_spec", "slot_ppo_module_spec", "load_module", "module_policy", "MIX_ENV"]

MIX_ENV = "SREGym/Mix"


def _require_ray() -> Any:
    try:
        import ray  # noqa: F401
        from ray import tune
    except ImportError as exc:  # pragma: no cover - depends on the extra
        raise MissingExtraError("ray[rllib]", "rllib") from exc
    return tune


def _text_creator(env_id: str) -> Any:
    def create(env_config: dict[str, Any]) -> Any:
        import gymnasium as gym

        import sre_env  # noqa: F401

        config = dict(env_config or {})
        max_steps = int(config.pop("max_steps", 50))
        return gym.make(env_id, max_steps=max_steps, **config)

    return create


def _numeric_creator(env_id: str) -> Any:
    def create(env_config: dict[str, Any]) -> Any:
        from sre_env.wrappers.mix import make_numeric_env

        return make_numeric_env(env_id, None, **dict(env_config or {}))

    return create


def _mix_creator(env_config: dict[str, Any]) -> Any:
    from sre_env.wrappers.mix import ScenarioMix

    config = dict(env_config or {})
    env_ids = config.pop("env_ids")
    seeds = config.pop("seeds", None)
    return ScenarioMix(env_ids, seeds=seeds, **config)


def register_envs() -> list[str]:
    """Register every SREGym id (text and ``/numeric``) and ``SREGym/Mix`` with Ray Tune; returns the names."""
    tune = _require_ray()
    from sre_env.envs.registry import ENV_IDS

    names = []
    for env_id in ENV_IDS:
        tune.register_env(env_id, _text_creator(env_id))
        tune.register_env(env_id + "/numeric", _numeric_creator(env_id))
        names += [env_id, env_id + "/numeric"]
    tune.register_env(MIX_ENV, _mix_creator)
    names.append(MIX_ENV)
    return names


def masked_ppo_module_spec(hiddens: tuple[int, ...] = (256, 256)) -> Any:
    """An RLModuleSpec for PPO whose logits are masked by ``obs["action_mask"]`` (new API stack)."""
    _require_ray()
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
        ActionMaskingTorchRLModule,
    )

    return RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config={"fcnet_hiddens": list(hiddens), "head_fcnet_hiddens": [], "vf_share_layers": False})


def slot_ppo_module_spec(catalog: Any, hidden: int = 64, verb_prior: bool = True) -> Any:
    """An RLModuleSpec for PPO with a slot-shared (permutation-equivariant) masked policy.

    The catalog's actions are verbs over target slots, and the numeric
    observation has one block of features per slot. This module scores each
    (verb, slot) with weights shared across the slots of a kind, from that slot's
    features and a summary of the whole cluster (means and maxima over slots,
    plus the global features). What it learns about "undo the workload that
    crash-loops" therefore holds for every workload, including ones it never saw
    fail. Invalid actions are masked out of the logits.

    With ``verb_prior`` the logits start from a verb-uniform prior: each valid
    action gets ``-log(number of valid actions with its verb)``, so an untrained
    policy picks a verb uniformly and then a target. Without it, verbs with many
    targets (19 workloads x 3 verbs) swamp the rare ones (evacuating one of 3
    nodes): a repair that needs the rare verb is then almost never tried, and
    PPO cannot learn what it never samples. The prior adds no parameters, so a
    saved state dict loads either way, and the policy can still learn any
    distribution over actions.
    """
    _require_ray()
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from sre_env.wrappers.numeric import _G, _N, _S, _W

    w, s, n = catalog.capacity
    layout = [(a.verb, a.kind, a.slot) for a in catalog.layout]
    config = {"capacity": [w, s, n], "sizes": [len(_G), len(_W), len(_S), len(_N)], "layout": layout, "hidden": int(hidden), "verb_prior": bool(verb_prior)}
    return RLModuleSpec(module_class=_slot_module_class(), model_config=config)


def load_module(path: Any, env: Any, module: str = "slot", *, verb_prior: bool = True) -> Any:
    """Rebuild a PPO RLModule saved with ``torch.save(module.state_dict(), path)`` for ``env``.

    ``env`` is the ``ScenarioMix`` (or catalog env) it was trained on: its spaces
    and catalog fix the module's shape. ``module`` is ``"slot"`` or ``"mlp"``, as
    in ``examples/rllib_ppo.py --module``; ``verb_prior`` must match the trained
    slot module's (the prior has no weights, so a mismatch loads but plays differently).
    """
    _require_ray()
    import torch

    spec = slot_ppo_module_spec(env.catalog, verb_prior=verb_prior) if module == "slot" else masked_ppo_module_spec()
    spec.observation_space = env.observation_space
    spec.action_space = env.action_space
    built = spec.build()
    built.load_state_dict(torch.load(path, weights_only=True))
    built.eval()
    return built


def module_policy(module: Any, sample_seed: int | None = None) -> Any:
    """``obs -> action`` for a masked RLModule: its most likely valid action (deterministic),
    or, with ``sample_seed``, one drawn from its distribution as during training."""
    import numpy as np
    import torch

    rng = np.random.default_rng(sample_seed)

    def act(obs: dict[str, Any]) -> int:
        batch = {"obs": {k: torch.as_tensor(np.asarray(v)[None]) for k, v in obs.items()}}
        with torch.no_grad():
            logits = module.forward_inference(batch)["action_dist_inputs"][0].numpy().astype(np.float64)
        logits = np.where(np.asarray(obs["action_mask"]) > 0, logits, -np.inf)
        if sample_seed is None:
            return int(np.argmax(logits))
        p = np.exp(logits - logits.max())
        return int(rng.choice(len(p), p=p / p.sum()))

    return act


_SLOT_MODULE: Any = None


def _slot_module_class() -> Any:
    """Built on first use so that importing this module never needs torch or ray."""
    global _SLOT_MODULE
    if _SLOT_MODULE is not None:
        return _SLOT_MODULE
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
    from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
    from ray.rllib.utils.torch_utils import FLOAT_MIN
    from torch import nn

    class SlotPolicyModule(TorchRLModule, ValueFunctionAPI):
        def setup(self) -> None:
            cfg = self.model_config
            self.capacity = list(cfg["capacity"])
            g, wd, sd, nd = cfg["sizes"]
            self.sizes = (g, wd, sd, nd)
            h = int(cfg.get("hidden", 64))
            layout = [tuple(x) for x in cfg["layout"]]
            kinds = ("workload", "service", "node")
            self.verbs = {k: list(dict.fromkeys(v for v, kk, _ in layout if kk == k)) for k in kinds}
            self.globals = [v for v, kk, _ in layout if kk == "global"]
            # the layout must be globals, then slot-major blocks per kind (CommandCatalog's order)
            expected = [(v, "global", -1) for v in self.globals]
            for k, count in zip(kinds, self.capacity):
                expected += [(v, k, i) for i in range(count) for v in self.verbs[k]]
            if expected != layout:
                raise ValueError("SlotPolicyModule needs CommandCatalog's layout")
            ctx_in = g + 2 * (wd + sd + nd)
            self.ctx = nn.Sequential(nn.Linear(ctx_in, h), nn.Tanh(), nn.Linear(h, h), nn.Tanh())
            self.slot_nets = nn.ModuleDict({k: nn.Sequential(nn.Linear(d + h, h), nn.Tanh(), nn.Linear(h, len(self.verbs[k]))) for k, d in zip(kinds, (wd, sd, nd))})
            self.global_head = nn.Linear(h, len(self.globals))
            self.value_head = nn.Sequential(nn.Linear(h, h), nn.Tanh(), nn.Linear(h, 1))
            # action -> verb one-hot, for the verb-uniform prior (not a parameter: absent from state dicts)
            verb_names = list(dict.fromkeys(v for v, _, _ in layout))
            onehot = torch.zeros(len(layout), len(verb_names))
            for i, (v, _, _) in enumerate(layout):
                onehot[i, verb_names.index(v)] = 1.0
            self.register_buffer("verb_onehot", onehot, persistent=False)
            self.verb_prior = bool(cfg.get("verb_prior", False))

        def _split(self, x: "torch.Tensor") -> tuple[Any, ...]:
            g, wd, sd, nd = self.sizes
            w, s, n = self.capacity
            b = x.shape[0]
            i = g
            W = x[:, i : i + w * wd].reshape(b, w, wd)
            i += w * wd
            S = x[:, i : i + s * sd].reshape(b, s, sd)
            i += s * sd
            N = x[:, i : i + n * nd].reshape(b, n, nd)
            return x[:, :g], W, S, N

        def _context(self, x: "torch.Tensor") -> tuple[Any, ...]:
            g, W, S, N = self._split(x)
            pooled = [t for blk in (W, S, N) for t in (blk.mean(dim=1), blk.max(dim=1).values)]
            return self.ctx(torch.cat([g, *pooled], dim=-1)), (W, S, N)

        def _forward(self, batch: dict, **kwargs: Any) -> dict:
            obs = batch[Columns.OBS]
            x = obs["observations"].float()
            e, blocks = self._context(x)
            parts = [self.global_head(e)]
            for k, blk in zip(("workload", "service", "node"), blocks):
                ctx = e.unsqueeze(1).expand(-1, blk.shape[1], -1)
                parts.append(self.slot_nets[k](torch.cat([blk, ctx], dim=-1)).reshape(x.shape[0], -1))
            logits = torch.cat(parts, dim=-1)
            mask = obs["action_mask"].float()
            if self.verb_prior:
                valid_per_verb = mask @ self.verb_onehot  # (batch, verbs)
                logits = logits - torch.log(torch.clamp(valid_per_verb @ self.verb_onehot.T, min=1.0))
            logits = logits + torch.clamp(torch.log(mask), min=FLOAT_MIN)
            return {Columns.ACTION_DIST_INPUTS: logits}

        def compute_values(self, batch: dict, embeddings: Any = None) -> Any:
            x = batch[Columns.OBS]["observations"].float()
            e, _ = self._context(x)
            return self.value_head(e).squeeze(-1)

    _SLOT_MODULE = SlotPolicyModule
    return SlotPolicyModule
