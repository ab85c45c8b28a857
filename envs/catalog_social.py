"""Catalog module: see envs/registry.py for the id scheme.

Scenarios on DeathStarBench social-network (``sre_env.apps.social_network``):
families written for it, and families first written for hotel-reservation
re-targeted with ``Scenario.for_app``.
"""

from __future__ import annotations

from sre_env.apps.social_network import SOCIAL_NETWORK

from .base import Scenario
from .cache_memory import CacheMemoryExhausted
from .edge_filter import EdgeFilterCpu
from .sched_common import SOCIAL_SERVICES, SOCIAL_STORES
from .target_port import TargetPortMisconfig
from .traffic_policy import InternalTrafficPolicyLocal

TargetPortMisconfigSocialNetwork = TargetPortMisconfig.for_app(
    SOCIAL_NETWORK,
    targets=SOCIAL_SERVICES + SOCIAL_STORES,
    summary="Part of the social network fails although every pod is running.",
    description=(
        "Users of the social network get errors on some actions (posting, reading timelines) although every "
        "pod is Running and Ready and nothing restarts. An infrastructure change was applied to the cluster "
        "earlier today; the application teams say they have not deployed."
    ),
)

SCENARIOS: dict[str, type[Scenario]] = {
    "CacheMemoryExhausted": CacheMemoryExhausted,
    "EdgeFilterCpu-SocialNetwork": EdgeFilterCpu,
    "TargetPortMisconfig-SocialNetwork": TargetPortMisconfigSocialNetwork,
    "InternalTrafficPolicyLocal-SocialNetwork": InternalTrafficPolicyLocal,
}
