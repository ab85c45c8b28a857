"""Control-plane add-ons and their per-tick work: Gatekeeper, Jobs/CronJobs, the eviction manager.

``install_control_plane_addons`` runs once when a world is built;
``control_plane_tick`` runs at the start of every tick and returns at once
while nothing it owns is due (no pending webhook registration, no Job or
CronJob written or scheduled, no node whose kubelet config was changed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sre_env.sim.control.gatekeeper import NAMESPACE as GATEKEEPER_NS
from sre_env.sim.control.gatekeeper import (
    bootstrap_webhooks,
    install_gatekeeper,
    rotate_certificates,
    webhooks_pending,
)
from sre_env.sim.control.jobs import reconcile_batch
from sre_env.sim.control.kube_state_metrics import (
    install_kube_state_metrics,
    log_denials,
)
from sre_env.sim.control.namespaces import (
    install_metrics_server,
    namespaces_terminating,
    reconcile_namespaces,
    refresh_apiservices,
)
from sre_env.sim.kubelet.eviction import eviction_pending, run_eviction_managers

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["control_plane_tick", "install_control_plane_addons"]


#: images platform tooling pulls (log shippers for batch jobs)
EXTRA_IMAGES = ("cr.fluentbit.io/fluent/fluent-bit:3.1.9",)


def install_control_plane_addons(world: World) -> None:
    install_gatekeeper(world)
    install_kube_state_metrics(world)
    install_metrics_server(world)
    for ref in EXTRA_IMAGES:
        world.images.add(ref)


def control_plane_tick(world: World) -> None:
    store = world.store
    gatekeeper_pod = aggregated = False
    for kind, ns, name in store.dirty:
        if kind == "Pod" and ns == GATEKEEPER_NS:
            gatekeeper_pod = True
        elif kind == "APIService" or (ns == "kube-system" and name == "metrics-server" and kind in ("Service", "Endpoints")):
            aggregated = True
    if webhooks_pending(world):
        bootstrap_webhooks(world)
    elif gatekeeper_pod:
        # a Gatekeeper pod changed: its cert-controller (when enabled) checks the certificates
        rotate_certificates(world)
    if aggregated:
        refresh_apiservices(world)
    if namespaces_terminating(world):
        reconcile_namespaces(world)
    if store.kind_revision.get("CronJob") or store.kind_revision.get("Job"):
        reconcile_batch(world, dict(store.dirty))
    log_denials(world)
    if eviction_pending(world):
        run_eviction_managers(world)
