"""Catalog module: every family of the Network table of SCENARIOS.md, on hotel-reservation.

Ids follow envs/registry.py's scheme (``SREGym/<Family>-v0`` for a family's
primary app). The model capabilities they rely on live in ``sre_env.sim``:
``dns`` (resolv.conf per dnsPolicy, CoreDNS Corefile), ``netpol``
(NetworkPolicy), ``ingress`` (ingress-nginx and Ingress routes), ``kubeproxy``
and ``daemonsets`` (per-node Service rules), ``nodenet`` (host firewall, pod
IPAM) and ``netmodel`` (routes as one client pod sees them).
"""

from __future__ import annotations

from sre_env.apps.social_network import SOCIAL_NETWORK

from .base import Scenario
from .network_dns import ServiceDNSFailure, StaleCoreDNSConfig, WrongDNSPolicy
from .network_edge import IngressMisroute, KubeProxyBroken
from .network_ipam import PodCIDRExhaustion
from .network_paths import (
    InternalTrafficPolicyLocal,
    NetworkPartition,
    NetworkPolicyBlock,
)

SCENARIOS: dict[str, type[Scenario]] = {
    "ServiceDNSFailure": ServiceDNSFailure,
    "StaleCoreDNSConfig": StaleCoreDNSConfig,
    "WrongDNSPolicy": WrongDNSPolicy,
    "NetworkPolicyBlock": NetworkPolicyBlock,
    "IngressMisroute": IngressMisroute,
    "InternalTrafficPolicyLocal": InternalTrafficPolicyLocal,
    "KubeProxyBroken": KubeProxyBroken,
    "PodCIDRExhaustion": PodCIDRExhaustion,
    "NetworkPartition": NetworkPartition,
    # the CoreDNS families on the second app: the same Corefile faults on another call graph
    "ServiceDNSFailure-SocialNetwork": ServiceDNSFailure.for_app(
        SOCIAL_NETWORK,
        summary="Part of the social-network site fails although every pod is running and ready.",
        description=(
            "Since a few minutes ago some actions on the social network fail for every user while others work. "
            "All pods are Running and Ready, nothing restarted and no application was deployed today; the "
            "platform team made some cluster-wide changes this morning."
        ),
    ),
    "StaleCoreDNSConfig-SocialNetwork": StaleCoreDNSConfig.for_app(
        SOCIAL_NETWORK,
        summary="One dependency of the social-network site cannot be found by its callers.",
        description=(
            "Users of the social network get errors on some actions. Every pod is Running, the failing service "
            "itself looks healthy and answers when reached directly by IP, and nobody deployed the application "
            "today. The cluster's platform configuration was cleaned up after last week's migration."
        ),
    ),
    "NetworkPartition-SocialNetwork": NetworkPartition.for_app(
        SOCIAL_NETWORK,
        summary="Some social-network requests time out while every pod reports Ready.",
        description=(
            "Requests on the social network hang and time out for a large share of users. Every node is Ready, "
            "every pod is Running, and the failing services answer normally when called from some other pods. "
            "A node hardening playbook ran against the worker nodes overnight."
        ),
    ),
    "KubeProxyBroken-SocialNetwork": KubeProxyBroken.for_app(
        SOCIAL_NETWORK,
        summary="After a routine deploy, one social-network backend is unreachable from part of the cluster.",
        description=(
            "A routine restart of one social-network backend went fine — its new pod is Running and Ready — but "
            "since then calls to it time out from some of its clients while others reach it. The platform team "
            "has been canarying a cluster component upgrade this week."
        ),
    ),
}

