"""Catalog module: see envs/registry.py for the id scheme.

Kubernetes-object incidents about where pods run and what they may use:
Services and replica counts, placement rules (node selectors, taints,
anti-affinity), resources, quotas, priorities and autoscaling. Written for
hotel-reservation; the families that only need a Deployment and its Service
are re-targeted to social-network with ``Scenario.for_app``.
"""

from __future__ import annotations

from sre_env.apps.social_network import SOCIAL_NETWORK

from .base import Scenario
from .sched_common import SOCIAL_SERVICES, SOCIAL_STORES
from .sched_objects import MissingService, ScalePodZero, WrongServiceSelector
from .sched_placement import AntiAffinityDeadlock, NonExistentNode, TaintNoToleration
from .sched_resources import (
    HPAWithoutRequests,
    LimitTooSmall,
    NamespaceQuota,
    PriorityPreemption,
    RequestTooLarge,
)

_SN = "the social network"

SCENARIOS: dict[str, type[Scenario]] = {
    "WrongServiceSelector": WrongServiceSelector,
    "MissingService": MissingService,
    "ScalePodZero": ScalePodZero,
    "NonExistentNode": NonExistentNode,
    "TaintNoToleration": TaintNoToleration,
    "AntiAffinityDeadlock": AntiAffinityDeadlock,
    "RequestTooLarge": RequestTooLarge,
    "LimitTooSmall": LimitTooSmall,
    "NamespaceQuota": NamespaceQuota,
    "PriorityPreemption": PriorityPreemption,
    "HPAWithoutRequests": HPAWithoutRequests,
    "WrongServiceSelector-SocialNetwork": WrongServiceSelector.for_app(
        SOCIAL_NETWORK,
        targets=SOCIAL_SERVICES,
        summary="Part of the social network fails although every pod is running.",
        description=(
            f"Since an infrastructure change this morning, part of {_SN} (posting, timelines or profiles) fails for everyone "
            "while every pod reports Running and Ready and nothing restarts. The application teams have not deployed today."
        ),
    ),
    "MissingService-SocialNetwork": MissingService.for_app(
        SOCIAL_NETWORK,
        targets=SOCIAL_SERVICES + SOCIAL_STORES,
        summary="Part of the social network fails right after a cluster clean-up.",
        description=f"After an automated clean-up job ran against the cluster, part of {_SN} fails for every user. All pods are Running and Ready, and nothing was deployed.",
    ),
    "ScalePodZero-SocialNetwork": ScalePodZero.for_app(
        SOCIAL_NETWORK,
        targets=SOCIAL_SERVICES + SOCIAL_STORES,
        summary="Part of the social network stopped answering after a capacity change.",
        description=f"Shortly after someone ran a capacity clean-up on the cluster, part of {_SN} fails for every user. No pod is crash-looping and no alert fired about nodes.",
    ),
    "NonExistentNode-SocialNetwork": NonExistentNode.for_app(
        SOCIAL_NETWORK,
        targets=SOCIAL_SERVICES,
        summary="Part of the social network is down after a service was redeployed.",
        description=(
            f"A platform engineer re-applied one {_SN} service from an updated manifest to move it onto dedicated hardware. "
            "Since then part of the site fails for every user; nothing is crash-looping."
        ),
    ),
    "RequestTooLarge-SocialNetwork": RequestTooLarge.for_app(
        SOCIAL_NETWORK,
        targets=SOCIAL_SERVICES,
        summary="Part of the social network is down after a service was given more resources.",
        description=(
            f"To give a {_SN} service 'more headroom' before a launch, an engineer raised its resources and re-applied it. "
            "Since then part of the site fails for every user and the service has no running pod."
        ),
    ),
    "AntiAffinityDeadlock-SocialNetwork": AntiAffinityDeadlock.for_app(
        SOCIAL_NETWORK,
        targets=SOCIAL_SERVICES,
        summary="One social-network feature is down after a placement policy change.",
        description=(
            f"To keep a latency-sensitive {_SN} service away from noisy neighbours, the platform team re-applied it with a "
            "new placement policy. Since then part of the site fails for every user and the service's pod never starts."
        ),
    ),
    "NamespaceQuota-SocialNetwork": NamespaceQuota.for_app(
        SOCIAL_NETWORK,
        targets=SOCIAL_SERVICES,
        summary="One social-network service has no pods after a routine redeploy.",
        description=(
            "The FinOps team rolled out cost guardrails to the application namespaces this week. Today a routine redeploy "
            f"of one {_SN} service finished without errors in CI, but the service never came back and part of the site "
            "fails for every user."
        ),
    ),
    "LimitTooSmall-SocialNetwork": LimitTooSmall.for_app(
        SOCIAL_NETWORK,
        targets=SOCIAL_SERVICES,
        summary="A social-network service restarts in a loop after a resource policy change.",
        description=(
            f"After a cost-saving change tightened resource settings on a {_SN} service, part of the site fails for every user "
            "and the service's pod keeps restarting. Its logs show nothing alarming before each restart."
        ),
    ),
}
