"""The API clients' rate limits of the control plane's components, per tick.

Every client of kube-controller-manager talks to the API server through
client-go's token bucket: ``--kube-api-qps`` 20 requests a second with bursts of
``--kube-api-burst`` 30 (the defaults). That, and not the number a user asks
for, is what bounds how fast a controller creates or deletes pods: scaling a
Deployment to 5000 replicas makes the ReplicaSet controller create about 20
pods a second, so the simulator's work per tick is bounded the same way.

A tick of :data:`~sre_env.sim.kernel.clock.TICK_S` stands for the interval it
starts; the requests a client may send in it are the tokens left in its bucket
plus what refills during the tick (``burst + qps * tick`` after an idle spell,
``qps * tick`` while it keeps sending).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sre_env.sim.kernel.clock import TICK_S

__all__ = ["TokenBucket", "ClientLimits", "client", "CONTROLLER_QPS", "CONTROLLER_BURST"]

#: kube-controller-manager's --kube-api-qps and --kube-api-burst defaults
CONTROLLER_QPS = 20.0
CONTROLLER_BURST = 30


@dataclass
class TokenBucket:
    """client-go's token bucket, sampled once per tick."""

    qps: float
    burst: int
    #: tokens in the bucket at ``end``, the end of the last interval that spent any
    level: float = -1.0
    end: float = 0.0
    #: the interval being spent: its start, and what may still be sent in it
    start: float = -1.0
    budget: float = 0.0

    def take(self, now: float, n: int = 1) -> int:
        """How many of ``n`` requests go out in the tick starting at ``now`` (the rest wait for the next)."""
        if now != self.start:
            level = float(self.burst) if self.level < 0 else min(float(self.burst), self.level + self.qps * max(now - self.end, 0.0))
            self.start, self.budget = now, level + self.qps * TICK_S
        granted = max(min(n, int(self.budget)), 0)
        self.budget -= granted
        self.level, self.end = min(float(self.burst), self.budget), now + TICK_S
        return granted


@dataclass
class ClientLimits:
    """Each component's client, by name (``replicaset-controller``, ...)."""

    buckets: dict[str, TokenBucket] = field(default_factory=dict)


def client(world_slots: ClientLimits, name: str, qps: float = CONTROLLER_QPS, burst: int = CONTROLLER_BURST) -> TokenBucket:
    """The named component's token bucket (full when first used)."""
    bucket = world_slots.buckets.get(name)
    if bucket is None:
        bucket = world_slots.buckets[name] = TokenBucket(qps, burst)
    return bucket
