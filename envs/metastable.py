"""RetryStorm: a metastable failure that outlives the load spike that started it.

The frontend retries failed upstream calls (``RETRY_MAX``); one upstream runs
with a sensible but not lavish CPU limit. A short load spike overloads that
upstream, its queue grows past the clients' timeout, every call fails, and the
frontend's retries multiply the load by ``RETRY_MAX + 1``. When the spike is
gone the retried load alone still exceeds the upstream's capacity, so the
queue never drains: the system stays down with no trigger in sight.

A repair removes the sustaining loop — no retry amplification, or enough
capacity for the amplified load — and the live gate checks it by replaying the
spike: the system must come back on its own afterwards. Restarting the
overloaded pods only empties the queue for a few seconds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.control_plane import LaterRollout
from sre_env.kube.quantity import CPU_MS_PER_REQUEST_MS, requests_within_limits
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.traffic.triggers import CacheRestart, LoadSpike

from .base import RootCause, SimScenario
from .briefs import impact, user_report
from .service_fault import ServiceFault

if TYPE_CHECKING:
    from sre_env.sim.model import ModelBackend

__all__ = ["RetryStorm", "CacheFlushStampede", "GcDegradation"]

#: the trigger: seconds after injection that the spike starts, and how long it lasts
SPIKE_AT_S = 30.0
SPIKE_S = 90.0



def _with_cpu_limit(backend: "ModelBackend", namespace: str, deployment: str, container: str, limit: str) -> dict[str, Any]:
    """The container's resources with its CPU limit set to ``limit`` (as a strategic patch): a request above the
    new limit would be refused by the API server, so it comes down with the limit, as an operator's change must."""
    ctr = next(c for c in backend.api.get("Deployment", deployment, namespace)["spec"]["template"]["spec"]["containers"] if c["name"] == container)
    return requests_within_limits({"requests": (ctr.get("resources") or {}).get("requests") or {}, "limits": {"cpu": limit}})


class RetryStorm(SimScenario):
    family = "RetryStorm"
    app = HOTEL_RESERVATION
    layer = "compound"
    difficulty = "hard"
    summary = "hotel-reservation went down during a traffic peak and has not come back since."
    description = (
        "A newsletter went out and traffic to hotel-reservation briefly doubled. The site started failing "
        "during the peak, which is over now, but most requests still fail. Nothing was deployed today "
        "apart from a routine client-library upgrade in the frontend last week."
    )
    mechanism = Mechanism(
        "retry_storm",
        "application",
        "a metastable retry storm: client retries keep an upstream overloaded after the trigger is gone",
        (
            r"\bretry storm\b",
            r"\bmetastab\w*\b",
            r"\bretr(?:y|ies|ied)\b[^.;\n]{0,50}?\b(?:amplif\w*|storm|overload\w*|feedback|multipl\w*|keeps?)\b",
            r"\b(?:amplif\w*|multipl\w*)\b[^.;\n]{0,40}?\bretr(?:y|ies)\b",
            r"\bretry_max\b",
        ),
        detail_keys=("retries", "upstream", "variable"),
        compatible=("resource_exhaustion",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        model = backend.model
        front = self.app.component(self.app.entrypoint)
        upstreams = sorted({d.service for d in front.dependencies if self.app.component(d.service).role == "service" and model.load(d.service) >= 90.0})
        upstream = upstreams[int(rng.integers(0, len(upstreams)))]
        comp = self.app.component(upstream)
        load = model.load(upstream)
        retries = int(rng.choice((3, 4)))
        # the upstream's CPU limit leaves 60-80 % headroom over normal peak: fine without retries
        headroom = float(rng.choice((1.6, 1.8)))
        limit_m = int(1 + headroom * load * comp.latency_ms * CPU_MS_PER_REQUEST_MS)
        return {
            "upstream": upstream,
            "container": comp.container,
            "limit": f"{limit_m}m",
            "load": float(load),
            "retries": retries,
            "spike": float(rng.choice((2.0, 2.5))),
            "frontend": front.name,
            "frontend_container": front.container,
        }

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        ns = self.namespace
        # latent conditions: last week's client upgrade turned on retries; the upstream was right-sized
        backend.api.patch("Deployment", v["frontend"], ns, {"spec": {"template": {"spec": {"containers": [{"name": v["frontend_container"], "env": [{"name": "RETRY_MAX", "value": str(v["retries"])}]}]}}}}, "strategic")
        resources = _with_cpu_limit(backend, ns, v["upstream"], v["container"], v["limit"])
        backend.api.patch("Deployment", v["upstream"], ns, {"spec": {"template": {"spec": {"containers": [{"name": v["container"], "resources": resources}]}}}}, "strategic")
        # both have been rolled out again since: the settings are long-standing, no `rollout undo` removes them
        LaterRollout(ns, v["frontend"]).inject(backend)
        LaterRollout(ns, v["upstream"]).inject(backend)
        self._spike(backend, SPIKE_AT_S)

    def replay_trigger(self, backend: "ModelBackend") -> str:
        return self._spike(backend, 1.0)

    def _spike(self, backend: "ModelBackend", delay_s: float) -> str:
        v = self.variant
        start = backend.now + delay_s
        backend.model.schedule(start, LoadSpike(self.app.name, v["spike"]))
        backend.model.schedule(start + SPIKE_S, LoadSpike(self.app.name, 1.0))
        return f"load x{v['spike']} for {SPIKE_S:.0f}s"

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"deployment/{v['frontend']}",
            namespace=self.namespace,
            layer="application",
            mechanism="metastable retry storm: client retries amplify load on an overloaded upstream",
            summary=(
                f"Metastable retry storm: deployment/{v['frontend']} retries failed calls up to {v['retries']} times (RETRY_MAX={v['retries']}), "
                f"so when a x{v['spike']} load spike overloaded deployment/{v['upstream']} (CPU limit {v['limit']}), its queue passed the clients' timeout, "
                f"every call failed and the retries multiplied the load by {v['retries'] + 1}. After the spike the retried load alone keeps "
                f"{v['upstream']} overloaded. " + impact(self.app, v["upstream"])
            ),
            details={"retries": v["retries"], "upstream": v["upstream"], "variable": "RETRY_MAX", "limit": v["limit"]},
            affected=(f"deployment/{v['frontend']}", f"deployment/{v['upstream']}"),
        )

    def brief(self) -> str:
        return user_report(self.app, self.variant["upstream"], intermittent=False, since_min=2)

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl top pods -n {ns}",
            f"kubectl get deployment {v['frontend']} -n {ns} -o yaml | grep -A1 RETRY",
            # stop the amplification: no blind retries against an overloaded upstream
            f"kubectl set env deployment/{v['frontend']} -n {ns} RETRY_MAX=0",
            "sleep 60",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return {
            # an empty queue refills from the retried load within seconds
            "restart_upstream": [f"kubectl rollout restart deployment/{v['upstream']} -n {ns}"],
            "restart_frontend": [f"kubectl rollout restart deployment/{v['frontend']} -n {ns}"],
            # still amplifies x2: the retried load alone exceeds the upstream's capacity
            "fewer_retries": [f"kubectl set env deployment/{v['frontend']} -n {ns} RETRY_MAX=1"],
            "scale_upstream_to_zero": [f"kubectl scale deployment/{v['upstream']} -n {ns} --replicas=0"],
        }

    def allowed_changes(self) -> list[AllowedChange]:
        ns = self.namespace
        v = self.variant
        # fewer retries, or more capacity for the upstream (a higher limit or more replicas)
        return [AllowedChange("Deployment", ns, v["frontend"], "modified"), AllowedChange("Deployment", ns, v["upstream"], "modified")]

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        """No self-sustaining overload at normal load: the retried load fits the upstream."""
        v = self.variant
        model = backend.model
        serving = model.serving(self.namespace)
        front_pods = serving.get(v["frontend"], ())
        up_pods = serving.get(v["upstream"], ())
        retries = model.retry_limit(self.app.component(v["frontend"]), front_pods) if front_pods else 0
        capacity = model.serving_capacity(self.app.component(v["upstream"]), up_pods) if up_pods else 0.0
        sustained = (retries + 1) * v["load"]
        ok = capacity > sustained
        return [Check("no_sustaining_retry_loop", ok, f"{v['upstream']} capacity ~{capacity:.0f}/s vs {sustained:.0f}/s of fully retried load (RETRY_MAX={retries})")]


class CacheFlushStampede(SimScenario):
    """A cache restarts empty; the reads that now miss it overwhelm the database behind it.

    The database's CPU limit fits the warm-cache load with room to spare, not the
    cold one. Once its queue passes the clients' timeout no read succeeds, so no
    key is written back and the cache never warms: the stampede sustains itself.
    The repair gives the database the capacity a cold cache needs; the live gate
    empties the cache again to check it.
    """

    family = "CacheFlushStampede"
    app = HOTEL_RESERVATION
    layer = "compound"
    difficulty = "hard"
    summary = "hotel-reservation broke after a routine node maintenance and did not recover."
    description = (
        "Some hotel-reservation pages fail for most users since a short node maintenance earlier; the maintenance "
        "finished long ago and every pod is Running again. Nothing was deployed."
    )
    mechanism = Mechanism(
        "cache_stampede",
        "application",
        "a cache stampede: a cold (flushed/restarted) cache sends every read to a database that cannot take them",
        (
            r"\b(?:cache )?stampede\b",
            r"\bthundering herd\b",
            r"\bcold cache\b",
            r"\bcache\b[^.;\n]{0,40}?\b(?:flush\w*|cold|empty|restart\w*|wiped)\b",
            r"\b(?:flush\w*|cold|empty|restarted|wiped)\b[^.;\n]{0,30}?\bcache\b",
            r"\bmetastab\w*\b",
        ),
        detail_keys=("database", "cache", "limit"),
        compatible=("resource_exhaustion", "cfs_throttling"),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        model = backend.model
        pairs = []
        for comp in self.app.components:
            caches = [d.service for d in comp.dependencies if self.app.component(d.service).role == "cache"]
            dbs = [d.service for d in comp.dependencies if self.app.component(d.service).role == "database" and model.load(d.service) > 10.0]
            if caches and dbs:
                pairs.append((dbs[0], caches[0], comp.name))
        db, cache, caller = pairs[int(rng.integers(0, len(pairs)))]
        spec = self.app.component(db)
        load = model.load(db)
        headroom = float(rng.choice((2.5, 3.0)))
        limit_m = int(1 + headroom * load * spec.latency_ms * CPU_MS_PER_REQUEST_MS)
        return {"database": db, "cache": cache, "caller": caller, "container": spec.container, "limit": f"{limit_m}m", "load": float(load)}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        resources = _with_cpu_limit(backend, self.namespace, v["database"], v["container"], v["limit"])
        backend.api.patch("Deployment", v["database"], self.namespace, {"spec": {"template": {"spec": {"containers": [{"name": v["container"], "resources": resources}]}}}}, "strategic")
        # the database has run (and been rolled out again) with that limit for a long time
        LaterRollout(self.namespace, v["database"]).inject(backend)
        backend.model.schedule(backend.now + SPIKE_AT_S, CacheRestart(self.namespace, v["cache"]))

    def replay_trigger(self, backend: "ModelBackend") -> str:
        backend.model.schedule(backend.now + 1.0, CacheRestart(self.namespace, self.variant["cache"]))
        return f"restarted {self.variant['cache']} (empty cache)"

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"deployment/{v['database']}",
            namespace=self.namespace,
            layer="application",
            mechanism="cache stampede: a cold cache sends every read to a database sized for a warm one",
            summary=(
                f"Cache stampede: {v['cache']} restarted during the maintenance and came back empty, so every read of {v['caller']} missed it and went "
                f"to deployment/{v['database']}, whose CPU limit ({v['limit']}) only covers warm-cache load. Its queue passed the clients' timeout, no read "
                f"succeeds, no key is written back, and the cold cache never warms: a self-sustaining (metastable) overload. " + impact(self.app, v["database"])
            ),
            details={"database": v["database"], "cache": v["cache"], "limit": v["limit"]},
            affected=(f"deployment/{v['cache']}", f"deployment/{v['caller']}"),
        )

    def brief(self) -> str:
        return user_report(self.app, self.variant["caller"], intermittent=False, since_min=8)

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl top pods -n {ns}",
            f"kubectl get pods -n {ns} -l io.kompose.service={v['cache']}",
            # capacity for a cold cache, so the misses drain and the cache can fill again
            f"kubectl set resources deployment/{v['database']} -n {ns} -c {v['container']} --limits=cpu=1",
            "sleep 120",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return {
            "restart_database": [f"kubectl rollout restart deployment/{v['database']} -n {ns}"],
            "restart_cache": [f"kubectl delete pod -n {ns} -l io.kompose.service={v['cache']}"],
            "restart_caller": [f"kubectl rollout restart deployment/{v['caller']} -n {ns}"],
            "scale_caller": [f"kubectl scale deployment/{v['caller']} -n {ns} --replicas=3"],
        }

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("Deployment", self.namespace, self.variant["database"], "modified")]

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        """The database can take the cold-cache load: every read the cache would have served."""
        v = self.variant
        pods = backend.model.serving(self.namespace).get(v["database"], ())
        capacity = backend.model.serving_capacity(self.app.component(v["database"]), pods) if pods else 0.0
        cold_load = v["load"] * 10.0  # the callers' reads behind a cache miss 1 in 10
        return [Check("database_survives_a_cold_cache", capacity > cold_load, f"{v['database']} capacity ~{capacity:.0f}/s vs ~{cold_load:.0f}/s with a cold cache")]


class GcDegradation(ServiceFault, SimScenario):
    """A Go service with a tight ``GOMEMLIMIT`` falls into a GC death spiral under a burst.

    Queued requests are live heap; near the soft limit the Go runtime collects
    continuously and leaves little CPU for work; less work done means a longer
    queue and more heap. The burst that started it is long gone; the spiral is
    not. Restarting empties the queue until the next burst; the repair gives the
    runtime room (raise or drop the limit), and the live gate replays a burst.
    """

    family = "GcDegradation"
    app = HOTEL_RESERVATION
    layer = "compound"
    difficulty = "hard"
    summary = "A hotel-reservation feature slowed to a crawl during a traffic burst and stayed slow."
    description = (
        "During a short traffic burst one hotel-reservation feature became very slow and started timing out. The "
        "burst is over, traffic is back to normal, pods are Running and not restarting, but the feature is still "
        "failing. A memory-tuning change to the Go services was rolled out last week."
    )
    mechanism = Mechanism(
        "gc_death_spiral",
        "application",
        "a GC death spiral: the Go heap sits at GOMEMLIMIT and the garbage collector eats the CPU",
        (
            r"\bgomemlimit\b",
            r"\b(?:gc|garbage[- ]collect\w*)\b[^.;\n]{0,40}?\b(?:spiral|thrash\w*|pressure|overhead|storm|constantly|cpu)\b",
            r"\bdeath spiral\b",
            r"\b(?:soft )?memory limit\b[^.;\n]{0,40}?\b(?:gc|garbage)\b",
            r"\bmetastab\w*\b",
        ),
        detail_keys=("limit", "service"),
        compatible=("resource_exhaustion", "cfs_throttling"),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        model = backend.model
        options = [c for c in self.app.components if c.role in ("service", "frontend") and c.kind == "Deployment" and model.load(c.name) >= 90.0]
        comp = options[int(rng.integers(0, len(options)))]
        load = model.load(comp.name)
        headroom = float(rng.choice((1.5, 1.7)))
        # a soft limit a little above the steady heap: fine until a backlog has to live in it
        memlimit = int(comp.memory_mib * float(rng.choice((1.3, 1.4))))
        return {
            "service": comp.name,
            "container": comp.container,
            "cpu_limit": f"{int(1 + headroom * load * comp.latency_ms * CPU_MS_PER_REQUEST_MS)}m",
            "gomemlimit": f"{memlimit}MiB",
            "spike": 2.0,
        }

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        resources = _with_cpu_limit(backend, self.namespace, v["service"], v["container"], v["cpu_limit"])
        patch = {"spec": {"template": {"spec": {"containers": [{"name": v["container"], "env": [{"name": "GOMEMLIMIT", "value": v["gomemlimit"]}], "resources": resources}]}}}}
        backend.api.patch("Deployment", v["service"], self.namespace, patch, "strategic")
        # last week's tuning, rolled out again since: `rollout undo` keeps the soft limit
        LaterRollout(self.namespace, v["service"]).inject(backend)
        self._spike(backend, SPIKE_AT_S)

    def replay_trigger(self, backend: "ModelBackend") -> str:
        return self._spike(backend, 1.0)

    def _spike(self, backend: "ModelBackend", delay_s: float) -> str:
        start = backend.now + delay_s
        backend.model.schedule(start, LoadSpike(self.app.name, self.variant["spike"]))
        backend.model.schedule(start + SPIKE_S, LoadSpike(self.app.name, 1.0))
        return f"load x{self.variant['spike']} for {SPIKE_S:.0f}s"

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.service_cause(
            "GC death spiral: the heap is pinned at GOMEMLIMIT and garbage collection eats the CPU",
            f"GC death spiral in deployment/{v['service']}: its GOMEMLIMIT={v['gomemlimit']} (limit {v['gomemlimit']}) sits just above the steady heap. "
            f"A x{v['spike']} traffic burst queued requests, the queued requests grew the heap to the limit, and the Go garbage collector now runs "
            f"constantly, leaving too little CPU to drain the queue, so the spiral sustains itself after the burst. ",
            {"limit": v["gomemlimit"], "service": v["service"], "variable": "GOMEMLIMIT"},
            layer="application",
        )

    def brief(self) -> str:
        return user_report(self.app, self.variant["service"], intermittent=False, since_min=6)

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl top pods -n {ns}",
            f"kubectl set env deployment/{v['service']} -n {ns} -c {v['container']} GOMEMLIMIT-",
            "sleep 60",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return {**self.blind_fixes(v["service"]), "restart_frontend": [f"kubectl rollout restart deployment/{self.app.entrypoint} -n {ns}"]}

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        """The runtime has room for a backlog: the soft limit leaves headroom over the steady heap."""
        v = self.variant
        comp = self.app.component(v["service"])
        pods = backend.model.serving(self.namespace).get(v["service"], ())
        limit = backend.model.go_memory_limit_mib(comp, pods) if pods else 0.0
        ok = bool(pods) and (limit == 0.0 or limit >= 3.0 * comp.memory_mib)
        return [Check("gc_headroom", ok, f"GOMEMLIMIT {'unset' if not limit else f'{limit:.0f}MiB'} vs steady heap ~{comp.memory_mib:.0f}MiB")]
