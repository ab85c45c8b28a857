"""The astronomy shop's runtime: feature flags, the orders queue, the accounting database, the cart cache.

One object per world (``world.app_models["astronomy-shop"]``), advanced once per
tick after the traffic step. It reads only causes — the flag file the serving
flagd started with, the records in Kafka, the sessions in PostgreSQL, the
password Valkey runs with, the pods that are running — and turns them into
behaviour:

* flags become per-operation failures of the serving pods (``world.op_errors``:
  payment's ``Charge``, ad's ``GetAds``, cart's ``EmptyCart``, product-catalog's
  ``GetProduct``), capacity and latency changes (ad's CPU burn and GC pauses,
  image delays), extra load (the load generator's home-page flood), extra
  records and a slow consumer (the Kafka queue flag) and a memory leak
  (recommendation's cache);
* the consumers (accounting, fraud-detection) commit offsets as they process
  orders; a record that does not deserialize crashes the consumer at its
  offset, again after every restart;
* accounting inserts every order into PostgreSQL; a session that holds a
  conflicting lock makes those inserts wait, so accounting stops consuming.

Everything that changes traffic is recomputed only when its inputs change (a
flag, the set of serving pods), so a healthy tick costs a few dict lookups.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from sre_env.apps.astronomy_shop import FLOOD_TASK_SHARE
from sre_env.backend import ExecResult
from sre_env.kube.quantity import memory_bytes
from sre_env.sim.kernel.pods import StartOutcome
from sre_env.sim.logs.streams import container_log
from sre_env.sim.runtime.envoy import EnvoyConfig, parse_envoy, request_cost_ms
from sre_env.sim.runtime.flagd import FlagSet, parse_flags, truthy
from sre_env.sim.runtime.kafka import ConsumerGroup, KafkaBroker, kafka_cli
from sre_env.sim.runtime.podenv import pod_env
from sre_env.sim.runtime.postgres import PostgresServer, psql
from sre_env.sim.runtime.valkey import ValkeyServer, valkey_cli

if TYPE_CHECKING:
    from sre_env.apps.base import AppSpec
    from sre_env.sim.kernel.flows import TickResult, TrafficPlan
    from sre_env.sim.kernel.world import World

__all__ = ["AstronomyModel", "TrafficMods", "FLAG_EFFECTS"]

Obj = dict[str, Any]

_QUIET = frozenset({"kafka", "valkey-cart", "postgresql", "flagd"})
_NO_FLAGS = FlagSet({})
#: orders/s one consumer replica processes
CONSUMER_RATE = {"accounting": 150.0, "fraud-detection": 150.0}
#: what the services say when a flag makes them fail (the demo's own messages)
PAYMENT_FAILED = "Payment request failed. Invalid token. app.loyalty.level=gold"
AD_FAILED = "io.grpc.StatusRuntimeException: UNAVAILABLE"
CART_FAILED = "Can't access cart storage. System.ApplicationException: Wasn't able to connect to redis ---> StackExchange.Redis.RedisConnectionException: It was not possible to connect to the redis server(s). UnableToConnect on badhost:1234/Interactive"
PRODUCT_FAILED = "Error: Product Catalog Fail Feature Flag Enabled"
PAYMENT_UNREACHABLE = 'failed to charge card: could not charge the card: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp: lookup badAddress on 10.96.0.10:53: no such host"'
VALKEY_WRONGPASS = "StackExchange.Redis.RedisServerException: WRONGPASS invalid username-password pair or user is disabled."

#: flag -> the components whose behaviour it changes (for briefs and root causes)
FLAG_EFFECTS: dict[str, tuple[str, ...]] = {
    "paymentFailure": ("payment",),
    "paymentUnreachable": ("checkout",),
    "adFailure": ("ad",),
    "adHighCpu": ("ad",),
    "adManualGc": ("ad",),
    "cartFailure": ("cart",),
    "productCatalogFailure": ("product-catalog",),
    "imageSlowLoad": ("image-provider",),
    "kafkaQueueProblems": ("checkout", "fraud-detection"),
    "recommendationCacheFailure": ("recommendation",),
    "loadGeneratorFloodHomepage": ("load-generator", "frontend"),
}


@dataclass
class TrafficMods:
    """What the model changes in the traffic step (read by sre_env.sim.traffic.flow)."""

    capacity: dict[str, float] = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)
    extra_rps: dict[str, float] = field(default_factory=dict)
    #: component -> CPU ms burnt per request on top of its service time (``kubectl top``, cAdvisor)
    cpu_ms: dict[str, float] = field(default_factory=dict)


class AstronomyModel:
    def __init__(self, app: "AppSpec") -> None:
        self.app_name = app.name
        self.ns = app.namespace
        self.mods = TrafficMods()
        #: flagd pod uid -> (container start time, the flags it read then)
        self.flag_files: dict[str, tuple[float, FlagSet]] = {}
        self.flags = _NO_FLAGS
        self._flags_rev = 0
        self.kafka = KafkaBroker(groups={
            "accounting": ConsumerGroup("accounting", "orders", "rdkafka"),
            "fraud-detection": ConsumerGroup("fraud-detection", "orders", "consumer-fraud-detection-1"),
        })
        self.pg = PostgresServer()
        self.valkey = ValkeyServer()
        #: (container start) of the postgres / valkey process the state belongs to
        self._pg_started: float | None = None
        self._valkey_started: float | None = None
        #: consumer group -> (pod uid, container start) of its joined member
        self._members: dict[str, tuple[str, float]] = {}
        #: accounting pod uid -> its pooled session pid
        self._acct_sessions: dict[str, int] = {}
        #: frontend-proxy pod uid -> (container start, the envoy config it loaded)
        self.edge_configs: dict[str, tuple[float, EnvoyConfig]] = {}
        self.edge_cost_ms = 0.0
        self._sig: Any = None
        self._auth_cache: tuple[Any, list[bool]] = (None, [])
        self._op_keys: list[tuple[str, str]] = []
        self.error_text: dict[str, str] = {}
        self._next_log: dict[str, float] = {}
        self.ops_by_comp: dict[str, tuple[str, ...]] = {}
        for rt in app.requests:
            for call in rt.calls:
                ops = self.ops_by_comp.setdefault(call.callee, ())
                if call.operation and call.operation not in ops:
                    self.ops_by_comp[call.callee] = ops + (call.operation,)

    # ------------------------------------------------------------------ the tick
    def tick(self, world: "World", app: "AppSpec", plan: "TrafficPlan", res: "TickResult", dt: float) -> None:
        now = world.clock.now
        serving = plan.serving
        self._read_flags(world, serving.get("flagd", ()))
        self._sync_stores(world, serving)
        self._edge(world, serving.get("frontend-proxy", ()))
        sig = (self._flags_rev, self.edge_cost_ms, self.valkey.password, tuple(self.cart_password_ok(world, serving)),
               tuple((c, serving.get(c, ())) for c in ("payment", "ad", "cart", "product-catalog", "checkout")))
        if sig != self._sig:
            self._sig = sig
            self._apply_flags(world, app, serving)
        self._queues(world, serving, res, dt, now)
        if truthy(self.flags.value("recommendationCacheFailure")):
            self._leak(world, serving.get("recommendation", ()), res, dt, now)

    # ------------------------------------------------------------------ flags
    def _read_flags(self, world: "World", flagd_uids: tuple[str, ...]) -> None:
        current: FlagSet | None = None
        for uid in sorted(flagd_uids):
            rt = world.runtimes.get(uid)
            ctr = rt.containers.get("flagd") if rt else None
            if ctr is None or ctr.started_at is None:
                continue
            seen = self.flag_files.get(uid)
            if seen is None or seen[0] != ctr.started_at:
                cm = world.store.find("ConfigMap", "flagd-config", self.ns)
                flags = parse_flags(((cm or {}).get("data") or {}).get("demo.flagd.json"))
                self.flag_files[uid] = (ctr.started_at, flags)
                pod = world.pod_by_uid(uid)
                if pod is not None:
                    if flags.error:
                        container_log(world, pod, ctr, "flag_error", world.clock.now, {"error": flags.error})
                    else:
                        container_log(world, pod, ctr, "flags_loaded", world.clock.now, {"count": len(flags.values)})
            if current is None:
                current = self.flag_files[uid][1]
        if len(self.flag_files) > 8:
            self.flag_files = {k: v for k, v in self.flag_files.items() if k in flagd_uids}
        # with no flagd serving, every OpenFeature client falls back to the code default: off
        current = current if current is not None else _NO_FLAGS
        if current is not self.flags:
            self.flags = current
            self._flags_rev += 1

    def _apply_flags(self, world: "World", app: "AppSpec", serving: dict[str, tuple[str, ...]]) -> None:
        f = self.flags
        for key in self._op_keys:
            world.op_errors.pop(key, None)
        self._op_keys = []
        self.error_text = {}

        def fail(comp: str, op: str, frac: float, text: str) -> None:
            if frac <= 0:
                return
            self.error_text[comp] = text
            for uid in serving.get(comp, ()):
                world.op_errors[(uid, op)] = (min(frac, 1.0), text)
                self._op_keys.append((uid, op))

        fail("payment", "Charge", truthy(f.value("paymentFailure")), PAYMENT_FAILED)
        fail("checkout", "PlaceOrder", truthy(f.value("paymentUnreachable")), PAYMENT_UNREACHABLE)
        # AdService: fails one request in ten while adFailure is on
        fail("ad", "GetAds", 0.1 * truthy(f.value("adFailure")), AD_FAILED)
        fail("cart", "EmptyCart", truthy(f.value("cartFailure")), CART_FAILED)
        # GetProduct fails for one product of the catalogue's ten
        fail("product-catalog", "GetProduct", 0.1 * truthy(f.value("productCatalogFailure")), PRODUCT_FAILED)
        # the cart's own credentials against the cache (not a flag, but the same path)
        bad = [ok for ok in self.cart_password_ok(world, serving) if not ok]
        if bad:
            share = len(bad) / max(1, len(serving.get("cart", ())))
            for op in ("GetCart", "AddItem", "EmptyCart"):
                fail("cart", op, share, VALKEY_WRONGPASS)
        mods = TrafficMods()
        if truthy(f.value("adHighCpu")):
            mods.capacity["ad"] = 0.12
            mods.latency_ms["ad"] = 140.0
            mods.cpu_ms["ad"] = 250.0
        if truthy(f.value("adManualGc")):
            mods.latency_ms["ad"] = mods.latency_ms.get("ad", 0.0) + 420.0
            mods.cpu_ms["ad"] = mods.cpu_ms.get("ad", 0.0) + 60.0
        delay = truthy(f.value("imageSlowLoad"))
        if delay:
            mods.latency_ms["image-provider"] = delay
        if truthy(f.value("recommendationCacheFailure")):
            mods.latency_ms["recommendation"] = 45.0
        if self.edge_cost_ms > 0:
            base = app.component("frontend-proxy").latency_ms
            mods.capacity["frontend-proxy"] = base / (base + self.edge_cost_ms)
            mods.latency_ms["frontend-proxy"] = self.edge_cost_ms
            mods.cpu_ms["frontend-proxy"] = self.edge_cost_ms
        flood = truthy(f.value("loadGeneratorFloodHomepage"))
        if flood and serving.get("load-generator"):
            mods.extra_rps["flood_home"] = app.rps * FLOOD_TASK_SHARE * flood
        self.mods = mods
        world.flow_inputs_changed(app.name)

    # ------------------------------------------------------------------ the edge proxy
    def _edge(self, world: "World", uids: tuple[str, ...]) -> None:
        """envoy reads /etc/envoy/envoy.yaml (ConfigMap frontend-proxy-config) once, at start."""
        costs = []
        for uid in uids:
            rt = world.runtimes.get(uid)
            ctr = rt.containers.get("frontend-proxy") if rt else None
            if ctr is None or ctr.started_at is None:
                continue
            seen = self.edge_configs.get(uid)
            if seen is None or seen[0] != ctr.started_at:
                cm = world.store.find("ConfigMap", "frontend-proxy-config", self.ns)
                seen = self.edge_configs[uid] = (ctr.started_at, parse_envoy(((cm or {}).get("data") or {}).get("envoy.yaml")))
                if seen[1].error:
                    self._crash(world, uid, "frontend-proxy", 1, "envoy_config_error", {"error": seen[1].error})
            costs.append(request_cost_ms(seen[1]))
        if len(self.edge_configs) > 8:
            self.edge_configs = {k: v for k, v in self.edge_configs.items() if k in uids}
        self.edge_cost_ms = round(sum(costs) / len(costs), 3) if costs else 0.0

    def _crash(self, world: "World", uid: str, container: str, code: int, event: str, fields: Obj) -> None:
        rt = world.runtimes.get(uid)
        ctr = rt.containers.get(container) if rt else None
        if ctr is None or ctr.state != "running" or ctr.exit_at is not None:
            return
        now = world.clock.now
        ctr.outcome = StartOutcome(exit_after=0.0, exit_code=code, reason="Error")
        ctr.exit_at = now + 0.5
        ctr.serve_at = None
        ctr.pending_logs = sorted(ctr.pending_logs + [(now + 0.2, event, fields)], key=lambda e: e[0])
        rt.wake_at = min(rt.wake_at, now + 0.2)
        world.kubelet_wake = min(world.kubelet_wake, rt.wake_at)
        world.runtime_epoch += 1

    # ------------------------------------------------------------------ stores (postgres, valkey)
    def _started(self, world: "World", uids: tuple[str, ...], container: str) -> tuple[str, float] | None:
        for uid in sorted(uids):
            rt = world.runtimes.get(uid)
            ctr = rt.containers.get(container) if rt else None
            if ctr is not None and ctr.started_at is not None:
                return uid, ctr.started_at
        return None

    def _sync_stores(self, world: "World", serving: dict[str, tuple[str, ...]]) -> None:
        now = world.clock.now
        pg = self._started(world, serving.get("postgresql", ()), "postgresql")
        if pg is None:
            if self._pg_started is not None:
                self.pg.started_at = -1.0
                self.pg.sessions.clear()
                self._pg_started = None
                self._acct_sessions.clear()
        elif pg[1] != self._pg_started:
            self._pg_started = pg[1]
            self.pg.restart(now)
            self._acct_sessions.clear()
        vk = self._started(world, serving.get("valkey-cart", ()), "valkey-cart")
        if vk is None:
            self._valkey_started = None
        elif vk[1] != self._valkey_started:
            self._valkey_started = vk[1]
            pod = world.pod_by_uid(vk[0])
            env = pod_env(world, vk[0], "valkey-cart") if pod is not None else {}
            self.valkey.start(env.get("VALKEY_PASSWORD", ""))

    def cart_password_ok(self, world: "World", serving: dict[str, tuple[str, ...]]) -> list[bool]:
        """Per serving cart pod, whether the password its process started with opens valkey-cart."""
        if self._valkey_started is None:
            return []
        # a cart process keeps the password it started with: the answer changes only with the pods or the server
        key = (serving.get("cart", ()), self.valkey.password, self._valkey_started)
        if self._auth_cache[0] == key:
            return self._auth_cache[1]
        out = []
        for uid in serving.get("cart", ()):
            rt = world.runtimes.get(uid)
            ctr = rt.containers.get("cart") if rt else None
            env = (ctr.started_env if ctr is not None and ctr.started_env is not None else pod_env(world, uid, "cart"))
            out.append(self.valkey.auth_ok(env.get("VALKEY_PASSWORD", "")))
        self._auth_cache = (key, out)
        return out

    # ------------------------------------------------------------------ kafka and the consumers
    def _queues(self, world: "World", serving: dict[str, tuple[str, ...]], res: "TickResult", dt: float, now: float) -> None:
        kq = truthy(self.flags.value("kafkaQueueProblems"))
        if serving.get("kafka"):
            self.kafka.produced += res.rps.get("kafka", 0.0) * dt * (1.0 + kq)
        for group in ("accounting", "fraud-detection"):
            uids = serving.get(group, ()) if serving.get("kafka") else ()
            member = self._members.get(group)
            started = self._started(world, uids, group)
            if started is None:
                if member is not None:
                    pod = world.pod_by_uid(member[0])
                    gone = pod is None or bool(pod["metadata"].get("deletionTimestamp"))
                    # fraud-detection's Kotlin loop runs inside consumer.use {}, which closes the consumer
                    # (LeaveGroup) as the exception unwinds; accounting's .NET consumer is only disposed,
                    # so its group keeps the dead member until the session times out
                    self.kafka.leave(group, now, clean=gone or group == "fraud-detection")
                    del self._members[group]
                continue
            uid, since = started
            if member != (uid, since):
                self._members[group] = (uid, since)
                rt = world.runtimes[uid]
                self.kafka.join(group, _consumer_id(group, uid, since), rt.ip)
            capacity = CONSUMER_RATE[group] * len(uids) * dt
            if group == "fraud-detection" and kq:
                capacity = 1.0 * dt  # the flag sleeps one second per record
            if group == "accounting":
                capacity = self._accounting_capacity(world, uids, capacity, now)
            before = self.kafka.groups[group].committed
            pill = self.kafka.consume(group, capacity)
            if group == "accounting":
                done = self.kafka.groups[group].committed - before
                for table in self.pg.rows:
                    self.pg.rows[table] += done
            if pill is not None:
                self._crash_consumer(world, group, uid, pill, now)

    def _accounting_capacity(self, world: "World", uids: tuple[str, ...], capacity: float, now: float) -> float:
        if self.pg.started_at < 0:
            self._every(world, "accounting", uids, now, 30.0, "db_error", {"error": "Npgsql.NpgsqlException (0x80004005): Failed to connect to postgresql:5432 ---> System.Net.Sockets.SocketException (111): Connection refused"})
            return 0.0
        blocked = False
        for uid in uids:
            pid = self._acct_sessions.get(uid)
            if pid is None or pid not in self.pg.sessions:
                rt = world.runtimes.get(uid)
                s = self.pg.connect("otelu", "", rt.ip if rt else None, now, owner=f"accounting:{uid}")
                self._acct_sessions[uid] = s.pid
                pid = s.pid
            sess = self.pg.sessions[pid]
            if (sess.waits is not None or self.pg.locks_held()) and not self.pg.insert_order(sess, now):
                blocked = True
        for uid in [u for u in self._acct_sessions if u not in uids]:
            self.pg.sessions.pop(self._acct_sessions.pop(uid), None)
        if blocked:
            self._every(world, "accounting", uids, now, 30.0, "db_error", {"error": "Npgsql.NpgsqlException (0x80004005): Exception while reading from stream ---> System.TimeoutException: Timeout during reading attempt"})
            return 0.0
        return capacity

    def _crash_consumer(self, world: "World", group: str, uid: str, offset: int, now: float) -> None:
        rt = world.runtimes.get(uid)
        ctr = rt.containers.get(group) if rt else None
        pod = world.pod_by_uid(uid)
        if ctr is None or pod is None or ctr.state != "running" or ctr.exit_at is not None:
            return
        crash = now + 1.0
        code = 134 if group == "accounting" else 1
        ctr.outcome = StartOutcome(exit_after=0.0, exit_code=code, reason="Error")
        ctr.exit_at = crash
        ctr.pending_logs = sorted(ctr.pending_logs + [(crash - 0.5, "poison_pill", {"offset": offset, "topic": self.kafka.topic})], key=lambda e: e[0])
        rt.wake_at = min(rt.wake_at, crash - 0.5)
        world.kubelet_wake = min(world.kubelet_wake, rt.wake_at)

    def _leak(self, world: "World", uids: tuple[str, ...], res: "TickResult", dt: float, now: float) -> None:
        """recommendationCacheFailure: the product cache grows with every request and is never freed."""
        share = res.rps.get("recommendation", 0.0) / max(1, len(uids))
        for uid in uids:
            rt = world.runtimes.get(uid)
            ctr = rt.containers.get("recommendation") if rt else None
            pod = world.pod_by_uid(uid)
            if ctr is None or pod is None or ctr.state != "running" or ctr.exit_at is not None:
                continue
            ctr.memory_mib += share * dt * 0.12
            spec = next((c for c in pod["spec"]["containers"] if c["name"] == "recommendation"), {})
            limit = (spec.get("resources") or {}).get("limits", {}).get("memory")
            try:
                limit_mib = memory_bytes(limit) / 2**20 if limit else None
            except ValueError:
                limit_mib = None
            if limit_mib is not None and ctr.memory_mib >= limit_mib:
                ctr.memory_mib = limit_mib
                ctr.outcome = StartOutcome(exit_after=0.0, exit_code=137, reason="OOMKilled")
                ctr.exit_at = now + 0.5
                rt.wake_at = min(rt.wake_at, now + 0.5)
                world.kubelet_wake = min(world.kubelet_wake, rt.wake_at)
            elif self._due(f"leak/{uid}", now, 60.0):
                container_log(world, pod, ctr, "cache_miss", now, {"size": int(ctr.memory_mib * 48)})

    # ------------------------------------------------------------------ logging helpers
    def _due(self, key: str, now: float, every: float) -> bool:
        if now >= self._next_log.get(key, -1.0):
            self._next_log[key] = now + every
            return True
        return False

    def _every(self, world: "World", comp: str, uids: tuple[str, ...], now: float, every: float, event: str, fields: Obj) -> None:
        for uid in uids[:1]:
            if not self._due(f"{comp}/{event}/{uid}", now, every):
                continue
            rt = world.runtimes.get(uid)
            ctr = rt.containers.get(comp) if rt else None
            pod = world.pod_by_uid(uid)
            if ctr is not None and pod is not None and ctr.state == "running":
                container_log(world, pod, ctr, event, now, fields)

    # ------------------------------------------------------------------ hooks for telemetry and the shell
    def request_log_fields(self, world: "World", comp: str, failed: bool, latency: float, variant: int) -> Obj | None:
        ops = self.ops_by_comp.get(comp)
        # the broker, the cache, the database and flagd log nothing per request at their default levels;
        # the Next.js frontend only logs the errors it hands back
        if not ops or comp in _QUIET or (comp == "frontend" and not failed):
            return None
        return {"service": comp, "op": ops[variant % len(ops)], "failed": failed, "latency_ms": round(latency, 2), "error": self.error_text.get(comp, "")}

    def container_tool(self, world: "World", pod: Obj, spec: Obj, env: dict[str, str]) -> Callable[[list[str], str | None], ExecResult | None] | None:
        comp = world.component_for(pod)
        name = comp.name if comp is not None else ""
        if name not in ("kafka", "postgresql", "valkey-cart"):
            return None

        def tool(argv: list[str], stdin: str | None) -> ExecResult | None:
            base = argv[0].rsplit("/", 1)[-1] if argv else ""
            now = world.clock.now
            if name == "kafka" and base in ("kafka-consumer-groups.sh", "kafka-topics.sh", "kafka-console-producer.sh"):
                return kafka_cli(self.kafka, argv, stdin, now)
            if name == "postgresql" and base == "psql":
                return psql(self.pg if self._pg_started is not None else None, argv, stdin, now, env)
            if name == "valkey-cart" and base == "valkey-cli":
                return valkey_cli(self.valkey if self._valkey_started is not None else None, argv, stdin)
            return None

        return tool


def _consumer_id(group: str, uid: str, since: float) -> str:
    h = zlib.crc32(f"{uid}/{since}".encode())
    u = f"{h:08x}-{(h >> 4) & 0xFFFF:04x}-4{(h >> 8) & 0xFFF:03x}-a{(h >> 12) & 0xFFF:03x}-{(h * 2654435761) & 0xFFFFFFFFFFFF:012x}"
    return f"rdkafka-{u}" if group == "accounting" else f"consumer-{group}-1-{u}"
