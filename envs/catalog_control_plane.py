"""Catalog module: control-plane incidents (admission, RBAC, finalizers, batch, kubelet config).

See envs/registry.py for the id scheme. All run on hotel-reservation.
"""

from __future__ import annotations

from .admission import (
    AdmissionWebhookOutage,
    ExpiredTLS,
    MutatingWebhookLimits,
    PodSecurityRestricted,
    WebhookTlsMismatch,
)
from .base import Scenario
from .cronjob_sidecar import CronJobSidecarBlocks
from .finalizer_deadlock import FinalizerDeadlock
from .kubelet_eviction import KubeletEvictionMisconfig
from .rbac import RBACMisconfig

SCENARIOS: dict[str, type[Scenario]] = {
    "PodSecurityRestricted": PodSecurityRestricted,
    "AdmissionWebhookOutage": AdmissionWebhookOutage,
    "WebhookTlsMismatch": WebhookTlsMismatch,
    "MutatingWebhookLimits": MutatingWebhookLimits,
    "KubeletEvictionMisconfig": KubeletEvictionMisconfig,
    "CronJobSidecarBlocks": CronJobSidecarBlocks,
    "ExpiredTLS": ExpiredTLS,
    "RBACMisconfig": RBACMisconfig,
    "FinalizerDeadlock": FinalizerDeadlock,
}
