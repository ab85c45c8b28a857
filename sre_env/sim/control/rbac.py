"""The apiserver's RBAC authorizer over the simulator's store, with its decision cache.

The decision itself is sre_env.kube.rbac's (bindings, roles, subjects, rules);
here it is cached per RBAC revision of the store, so in-process clients
(kube-state-metrics) can ask every scrape at no cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sre_env.kube.rbac import allows

if TYPE_CHECKING:
    from sre_env.sim.kernel.store import ObjectStore
    from sre_env.sim.kernel.world import World

__all__ = ["authorize", "rbac_revision"]


def rbac_revision(store: ObjectStore) -> tuple[int, int, int, int]:
    kr = store.kind_revision
    return (kr.get("Role", 0), kr.get("RoleBinding", 0), kr.get("ClusterRole", 0), kr.get("ClusterRoleBinding", 0))


@dataclass
class _Decisions:
    """The authorizer's answers at one RBAC revision (cleared when a role or binding changes)."""

    rev: tuple[int, int, int, int] | None = None
    allowed: dict[tuple[str, str, str, str, str | None, str | None], bool] = field(default_factory=dict)


def authorize(world: "World", user: str, verb: str, resource: str, group: str = "", namespace: str | None = None, name: str | None = None) -> bool:
    """Whether RBAC allows ``user`` to ``verb`` ``resource`` (cluster-wide when ``namespace`` is None)."""
    store = world.store
    cache = world.slot(_Decisions)
    rev = rbac_revision(store)
    if cache.rev != rev:
        cache.rev = rev
        cache.allowed = {}
    key = (user, verb, resource, group, namespace, name)
    hit = cache.allowed.get(key)
    if hit is not None:
        return hit
    allowed = allows(store, user, verb, resource, group, namespace, name)
    cache.allowed[key] = allowed
    return allowed
