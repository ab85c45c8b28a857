"""CacheMemoryExhausted: a redis back end hits ``maxmemory`` with no evictable keys and refuses writes.

A config push gave one of social-network's redis servers a small ``--maxmemory``
and an eviction policy that cannot evict (``noeviction``, or a ``volatile-*``
policy while no timeline key has a TTL). Once the dataset reaches the limit
every write fails with redis' ``OOM command not allowed when used memory >
'maxmemory'.``; reads keep working, so timelines load while posting fails.
Restarting redis empties it (no persistence) and buys a minute or two until it
fills up again; ``CONFIG SET`` fixes the running process only. The durable fix
is the server's configuration in the workload: an ``allkeys-*`` policy, or
enough memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.social_network import SOCIAL_NETWORK
from sre_env.faults.redis import RedisServerArgs
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.runtime.redis_model import OOM_ERROR

from .base import RootCause, SimScenario
from .blind import rollback_repairs

if TYPE_CHECKING:
    from sre_env.sim.model import ModelBackend

__all__ = ["CacheMemoryExhausted"]

#: redis -> maxmemory values that fill within the first minutes at the baseline write rate
_TARGETS: dict[str, tuple[str, ...]] = {
    "home-timeline-redis": ("3mb", "4mb", "5mb"),
    "user-timeline-redis": ("1mb",),
}
#: a limit with noeviction must leave at least this much time before it fills again
_HEADROOM_S = 3600.0


class CacheMemoryExhausted(SimScenario):
    family = "CacheMemoryExhausted"
    app = SOCIAL_NETWORK
    layer = "application"
    difficulty = "medium"
    summary = "Posting on the social network fails while timelines still load."
    description = (
        "Users of the social network cannot publish posts: the compose button spins and returns an error, "
        "for everyone, while home and user timelines keep loading. No pod is crash-looping and the error "
        "rate on reads is normal. A platform-wide resource tuning change was rolled out this morning."
    )
    accepted_blind = rollback_repairs("this morning's tuning of the cache's memory settings")
    mechanism = Mechanism(
        "cache_memory_exhausted",
        "application",
        "a cache hit its memory limit with an eviction policy that cannot evict, so writes are refused",
        (
            r"\bmaxmemory\b",
            r"\bno-?eviction\b",
            r"\bevict(?:ion)?[ -]polic(?:y|ies)\b",
            r"\bOOM command not allowed\b",
            r"\b(?:redis|cache)\b[^.;\n]{0,40}?\b(?:memory|maxmemory)\b[^.;\n]{0,30}?\b(?:full|exhausted|limit|reached|hit|cap)\w*\b",
            r"\b(?:redis|cache)\b[^.;\n]{0,40}?\b(?:refus|reject)\w* (?:all )?writes\b",
        ),
        detail_keys=("redis", "maxmemory", "policy"),
        compatible=("resource_exhaustion",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        redis = str(rng.choice(sorted(_TARGETS)))
        maxmemory = str(rng.choice(_TARGETS[redis]))
        policy = str(rng.choice(("noeviction", "volatile-lru")))
        comp = self.app.component(redis)
        dep = backend.api.get("Deployment", redis, self.namespace)
        ctr = next(c for c in dep["spec"]["template"]["spec"]["containers"] if c["name"] == comp.container)
        callers = sorted(c.name for c in self.app.components if any(d.service == redis for d in c.dependencies))
        return {
            "redis": redis,
            "container": comp.container,
            "maxmemory": maxmemory,
            "policy": policy,
            "original_args": tuple(ctr.get("args") or ()),
            "callers": tuple(callers),
        }

    def _fault(self) -> RedisServerArgs:
        v = self.variant
        return RedisServerArgs(self.namespace, v["redis"], v["container"], ("--maxmemory", v["maxmemory"], "--maxmemory-policy", v["policy"]), tuple(v["original_args"]))

    def inject(self, backend: "ModelBackend") -> None:
        self._fault().inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        why = "noeviction never evicts" if v["policy"] == "noeviction" else f"{v['policy']} only evicts keys with a TTL and the timeline keys have none"
        return RootCause(
            component=f"deployment/{v['redis']}",
            namespace=self.namespace,
            layer="application",
            mechanism="redis maxmemory reached with a non-evicting maxmemory-policy",
            summary=(
                f"deployment/{v['redis']} runs redis with --maxmemory {v['maxmemory']} --maxmemory-policy {v['policy']}; "
                f"used_memory reached maxmemory and, since {why}, redis refuses every write ({OOM_ERROR}) while reads still work. "
                + f"Impact: posting fails with HTTP 500 for users of {self.app.name}; timelines still load."
            ),
            details={"redis": v["redis"], "maxmemory": v["maxmemory"], "policy": v["policy"], "error": OOM_ERROR},
            affected=tuple([f"deployment/{v['redis']}"] + [f"deployment/{c}" for c in v["callers"]] + [f"deployment/{self.app.entrypoint}"]),
        )

    def brief(self) -> str:
        # only writes fail: name the feature that writes, not every reader of this redis
        reads = (
            "while home timelines still load and most user timelines too (a few return HTTP 500)"
            if self.variant["redis"] == "user-timeline-redis"
            else "while reading timelines still works"
        )
        return (
            f"PAGE: users of the {self.app.name} site (namespace {self.namespace}) report that posting fails "
            f"for most users (HTTP 500 on compose), {reads}. The problem started a few minutes ago. "
            "Find the root cause, repair it durably, and submit your diagnosis."
        )

    def _args_patch(self, args: list[str]) -> str:
        import json

        v = self.variant
        return (
            f"kubectl patch deployment {v['redis']} -n {self.namespace} --type=json "
            f"-p '{json.dumps([{'op': 'replace', 'path': '/spec/template/spec/containers/0/args', 'value': args}])}'"
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl logs deployment/nginx-thrift -n {ns} --tail=20",
            f"kubectl exec -n {ns} deploy/{v['redis']} -- redis-cli INFO memory",
            f"kubectl exec -n {ns} deploy/{v['redis']} -- redis-cli CONFIG GET maxmemory*",
            f"kubectl get deployment {v['redis']} -n {ns} -o jsonpath='{{.spec.template.spec.containers[0].args}}'",
            # drop the cap that was pushed: back to the chart's redis.conf
            self._args_patch(list(v["original_args"])),
            f"kubectl rollout status deployment/{v['redis']} -n {ns}",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        exec_ = f"kubectl exec -n {ns} deploy/{v['redis']} -- redis-cli"
        return {
            "rollout_restart_redis": [f"kubectl rollout restart deployment/{v['redis']} -n {ns}"],
            "delete_redis_pod": [f"kubectl delete pod -n {ns} -l {self.app.label_key}={v['redis']}"],
            "flushall": [f"{exec_} FLUSHALL"],
            "volatile_policy": [self._args_patch([*v["original_args"], "--maxmemory", v["maxmemory"], "--maxmemory-policy", "volatile-lfu"])],
            "restart_callers": [f"kubectl rollout restart deployment/{c} -n {ns}" for c in v["callers"]],
            "scale_redis_to_zero": [f"kubectl scale deployment/{v['redis']} -n {ns} --replicas=0"],
        }

    def runtime_only_fix(self) -> list[str]:
        """A repair made only in the running process: passes *immediate*, lost on the next restart."""
        return [f"kubectl exec -n {self.namespace} deploy/{self.variant['redis']} -- redis-cli CONFIG SET maxmemory-policy allkeys-lru"]

    def allowed_changes(self) -> list[AllowedChange]:
        # an eviction policy or a larger limit in the redis Deployment is a correct repair too
        return [AllowedChange("Deployment", self.namespace, self.variant["redis"], "modified")]

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        key = self.app.label_key
        pods = [p for p in backend.api.list("Pod", self.namespace) if (p["metadata"].get("labels") or {}).get(key) == v["redis"] and not p["metadata"].get("deletionTimestamp")]
        states = [s for s in (backend.model.redis_state(p) for p in pods) if s is not None]
        if not states:
            return [Check("redis_accepts_writes", False, f"no running {v['redis']} process")]
        res = backend.model.traffic(self.app.name)
        rate = 0.0
        if res is not None:
            for call in (c for rt in self.app.requests for c in rt.calls):
                if call.callee == v["redis"] and call.payload_bytes:
                    rate += res.op_rps.get((call.callee, call.operation), 0.0) * call.payload_bytes
        bad = []
        for st in states:
            limit = st.maxmemory
            headroom = (limit - st.used_memory) / rate if rate > 0 else float("inf")
            if st.refusing:
                bad.append(f"refusing writes at used_memory {int(st.used_memory)} >= maxmemory {limit} ({st.policy})")
            elif limit and not st.evicts() and headroom < _HEADROOM_S:
                bad.append(f"maxmemory {limit} with {st.policy} fills again in {max(headroom, 0):.0f}s")
        detail = "; ".join(bad) if bad else f"{v['redis']} accepts writes (maxmemory {states[0].maxmemory}, policy {states[0].policy})"
        return [Check("redis_accepts_writes", not bad, detail)]

