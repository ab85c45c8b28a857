"""Back-end incidents of the astronomy shop: the orders queue, the accounting DB, the cart cache.

* KafkaPoisonPill — a record that is not an ``OrderResult`` protobuf lands in
  topic ``orders``; both consumers (accounting, fraud-detection) crash on it
  and, resuming from their committed offset, crash on it again after every
  restart. The fix is to stop the consumers, move each group's offset one past
  the record, and start them again; resetting to the latest offset would drop
  every order queued behind it.
* DBLockContention — a port-forwarded ``psql`` session took an exclusive lock
  on a table of the accounting database inside a transaction and went idle;
  accounting's inserts wait behind it and its consumer stops. The fix is
  ``pg_terminate_backend`` on the blocking session (cancelling it does nothing
  to an idle transaction; killing the waiting session just makes accounting
  reconnect and wait again).
* CacheAuthChanged — the Valkey server's password was rotated in its own
  Secret and the server restarted with it; the cart still authenticates with
  the old one and every cart operation gets ``WRONGPASS``. The fix aligns the
  cart's Secret with the server and rolls the cart pods (env is read at start).
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.astronomy_shop import ASTRONOMY_SHOP, VALKEY_PASSWORD
from sre_env.faults.astronomy import (
    IdleTransactionLock,
    KafkaPoisonRecord,
    RotateServerPassword,
)
from sre_env.rewards.base import AllowedChange, Check, Mechanism

from .base import RootCause, SimScenario
from .blind import restart_repairs
from .briefs import impact, user_report

if TYPE_CHECKING:
    from sre_env.sim.model import ModelBackend

__all__ = ["KafkaPoisonPill", "DBLockContention", "CacheAuthChanged"]

_GROUPS = ("accounting", "fraud-detection")
_KCG = "/opt/kafka/bin/kafka-consumer-groups.sh --bootstrap-server localhost:9092"


class KafkaPoisonPill(SimScenario):
    family = "KafkaPoisonPill"
    app = ASTRONOMY_SHOP
    layer = "application"
    difficulty = "hard"
    develop_s = 300.0
    summary = "Order post-processing of the astronomy shop stopped; two back-office services keep restarting."
    description = (
        "The finance and fraud teams report that no new orders have reached them for several minutes, and their "
        "services restart over and over. Customers can still place orders. A load test was run against the shop's "
        "back end earlier today."
    )
    mechanism = Mechanism(
        "kafka_poison_pill",
        "application",
        "a malformed record (poison pill) blocks Kafka consumers at its offset",
        (
            r"\bpoison(?:ed)?[ -]?(?:pill|message|record)s?\b",
            r"\b(?:malformed|corrupt(?:ed)?|invalid|bad|undeserializable|unparseable)\s+(?:kafka\s+)?(?:record|message|event|payload)s?\b",
            r"\binvalid tag \(zero\)",
            r"\bInvalidProtocolBufferException\b",
            r"\b(?:deserializ|pars)(?:e|ing|ation)\s+(?:error|failure|exception)s?\b",
            r"\boffset\s+{offset}\b",
        ),
        detail_keys=("offset", "topic"),
        compatible=("crash_loop",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        model = backend.model.app_model(self.app.name)
        payload = str(rng.choice(("test order 42", "{\"orderId\": \"load-test\", \"items\": []}", "hello", "ping from loadtest")))
        return {"offset": model.kafka.end_offset, "payload": payload, "topic": "orders"}

    def inject(self, backend: "ModelBackend") -> None:
        KafkaPoisonRecord(self.namespace, self.variant["payload"]).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component="deployment/kafka",
            namespace=self.namespace,
            layer="application",
            mechanism="poison pill record in a Kafka topic",
            summary=(
                f"A malformed record (a poison pill, not an OrderResult protobuf) at offset {v['offset']} of Kafka topic {v['topic']} "
                "makes the accounting and fraud-detection consumers crash with InvalidProtocolBufferException; they resume from their "
                "committed offset and crash on it again, so both crash-loop and consumer lag grows. Orders are no longer recorded "
                "by accounting or checked by fraud-detection."
            ),
            details={"offset": v["offset"], "topic": v["topic"], "groups": list(_GROUPS)},
            affected=("deployment/accounting", "deployment/fraud-detection"),
        )

    def brief(self) -> str:
        return (
            f"PAGE: the back-office teams of the {self.app.name} site (namespace {self.namespace}) report that no new orders have "
            "reached order accounting or fraud checks for several minutes, and their services keep restarting. Customers can "
            "still check out. Find the root cause, repair it without losing orders, and submit your diagnosis."
        )

    def reference_solution(self) -> list[str]:
        ns = self.namespace
        nxt = self.variant["offset"] + 1
        steps = [
            f"kubectl get pods -n {ns}",
            f"kubectl logs deployment/accounting -n {ns} --previous --tail=5",
            f"kubectl exec deploy/kafka -n {ns} -- {_KCG} --describe --group accounting",
        ]
        steps += [f"kubectl exec deploy/kafka -n {ns} -- {_KCG} --group {g} --topic orders --reset-offsets --to-offset {nxt} --execute" for g in _GROUPS]
        steps += [f"kubectl rollout restart deployment/{g} -n {ns}" for g in _GROUPS]
        steps += ["sleep 30", f"kubectl exec deploy/kafka -n {ns} -- {_KCG} --describe --all-groups"]
        return steps

    def wrong_fixes(self) -> dict[str, list[str]]:
        ns = self.namespace
        return {
            "restart_consumers": [f"kubectl rollout restart deployment/{g} -n {ns}" for g in _GROUPS],
            "delete_consumer_pods": [f"kubectl delete pod -n {ns} -l opentelemetry.io/name={g}" for g in _GROUPS],
            "restart_kafka": [f"kubectl rollout restart deployment/kafka -n {ns}"],
            "reset_to_latest": [f"kubectl exec deploy/kafka -n {ns} -- {_KCG} --group {g} --topic orders --reset-offsets --to-latest --execute" for g in _GROUPS]
            + [f"kubectl rollout restart deployment/{g} -n {ns}" for g in _GROUPS],
            "scale_consumers_to_zero": [f"kubectl scale deployment/{g} -n {ns} --replicas=0" for g in _GROUPS],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        broker = backend.model.app_model(self.app.name).kafka
        off = self.variant["offset"]
        checks = []
        for g in _GROUPS:
            grp = broker.groups[g]
            past = grp.committed > off
            checks.append(Check(f"{g}_past_poison_pill", past, f"group {g} committed offset {grp.committed} (poison pill at {off}), lag {broker.lag(g)}"))
            checks.append(Check(f"{g}_no_orders_skipped", grp.skipped == 0, f"group {g} skipped {grp.skipped} valid records" if grp.skipped else f"group {g} skipped no valid record"))
            checks.append(Check(f"{g}_caught_up", broker.lag(g) < 500, f"group {g} lag {broker.lag(g)}"))
        return checks


class DBLockContention(SimScenario):
    family = "DBLockContention"
    app = ASTRONOMY_SHOP
    layer = "application"
    difficulty = "hard"
    summary = "Order accounting in the astronomy shop stalled; the shop itself works."
    description = (
        "Finance reports that no orders have been booked for a while, and the accounting service's logs are full of "
        "database timeouts. Checkout works for customers. A developer was investigating the accounting database "
        "earlier today."
    )
    #: the idle transaction is a backend of the postgresql server, not of a client that reconnects
    accepted_blind = restart_repairs(
        "the idle transaction is held by a backend process of postgresql; a new postgresql pod starts without it "
        "(its transaction is rolled back, its lock released, the port-forwarded psql client that opened it is gone)"
    )
    mechanism = Mechanism(
        "db_lock_contention",
        "application",
        "a long-running/idle transaction holds a lock that blocks other sessions",
        (
            r"\block(?:s|ed|ing)?\b[^.;\n]{0,60}\b(?:contention|held|holds|holding|blocks|blocking|waits?|waiting)\b",
            r"\b(?:blocking|blocked) (?:session|transaction|query|backend|pid)s?\b",
            r"\bidle in transaction\b",
            r"\bAccessExclusiveLock\b",
            r"\b(?:long[- ]running|open|uncommitted|idle|stuck) transactions?\b",
            r"\bpg_terminate_backend\b",
            r"\bpid\s*{pid}\b",
        ),
        detail_keys=("pid", "table", "mode"),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        table = str(rng.choice(("order", "orderitem")))
        quoted = '"order"' if table == "order" else table
        statement = str(rng.choice((
            f"LOCK TABLE {quoted} IN ACCESS EXCLUSIVE MODE;",
            f"ALTER TABLE {quoted} ADD COLUMN notes text;",
        )))
        pid = 2100 + int(rng.integers(0, 800))
        return {"table": table, "statement": statement, "mode": "AccessExclusiveLock", "pid": pid, "client_addr": "127.0.0.1"}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        IdleTransactionLock(self.namespace, self.app.name, v["table"], v["mode"], v["statement"], v["client_addr"], pid=v["pid"]).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component="deployment/postgresql",
            namespace=self.namespace,
            layer="application",
            mechanism="lock contention from an idle-in-transaction session",
            summary=(
                f"A psql session (pid {v['pid']}, user root, from 127.0.0.1 through a port-forward) ran `{v['statement']}` inside a transaction "
                f"and stays idle in transaction, holding {v['mode']} on table {v['table']} of the accounting database in postgresql. "
                "Accounting's inserts wait on that lock (blocked session, lock contention), so accounting fails with timeouts on every insert "
                "and stops consuming orders; its consumer lag grows and orders are not booked."
            ),
            details={"pid": v["pid"], "table": v["table"], "mode": v["mode"], "statement": v["statement"]},
            affected=("deployment/postgresql", "deployment/accounting"),
        )

    def brief(self) -> str:
        return (
            f"PAGE: finance reports that the {self.app.name} site (namespace {self.namespace}) has booked no orders in accounting "
            "for several minutes, although customers can still check out. Find the root cause, repair it without losing data, "
            "and submit your diagnosis."
        )

    def reference_solution(self) -> list[str]:
        ns = self.namespace
        pid = self.variant["pid"]
        return [
            f"kubectl logs deployment/accounting -n {ns} --tail=5",
            f"kubectl exec deploy/postgresql -n {ns} -- psql -U root -d otel -c \"SELECT pid, state, wait_event_type, pg_blocking_pids(pid), query FROM pg_stat_activity WHERE datname = 'otel'\"",
            f"kubectl exec deploy/postgresql -n {ns} -- psql -U root -d otel -c \"SELECT pg_terminate_backend({pid})\"",
            "sleep 20",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        ns = self.namespace
        pid = self.variant["pid"]
        psql = f"kubectl exec deploy/postgresql -n {ns} -- psql -U root -d otel -c"
        return {
            "restart_accounting": [f"kubectl rollout restart deployment/accounting -n {ns}"],
            "scale_up_accounting": [f"kubectl scale deployment/accounting -n {ns} --replicas=3"],
            "kill_waiting_session": [f"{psql} \"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock'\""],
            "cancel_blocker": [f"{psql} \"SELECT pg_cancel_backend({pid})\""],
            "scale_accounting_to_zero": [f"kubectl scale deployment/accounting -n {ns} --replicas=0"],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        model = backend.model.app_model(self.app.name)
        pg = model.pg
        now = backend.now
        waiting = [s for s in pg.sessions.values() if s.waits is not None and now - s.query_start > 30]
        blocker = self.variant["pid"] in pg.sessions
        lag = model.kafka.lag("accounting")
        return [
            Check("blocking_session_gone", not blocker, f"session {self.variant['pid']} still holds {self.variant['mode']} on {self.variant['table']}" if blocker else "the idle transaction is gone"),
            Check("no_lock_waits", not waiting, "; ".join(f"pid {s.pid} waits for {s.waits[1]} on {s.waits[0]}" for s in waiting) or "no session waits on a lock"),
            Check("accounting_caught_up", lag < 500, f"accounting lag {lag}"),
        ]


class CacheAuthChanged(SimScenario):
    family = "CacheAuthChanged"
    app = ASTRONOMY_SHOP
    layer = "application"
    difficulty = "medium"
    summary = "The astronomy shop's cart stopped working after a security change."
    description = (
        "After the security team's credential rotation this morning, customers of the astronomy shop cannot view "
        "their carts, add items or check out; browsing works. The cart pods are Running and were not touched."
    )
    mechanism = Mechanism(
        "cache_auth_changed",
        "application",
        "the cache's password changed server-side; clients use a stale password",
        (
            r"\bWRONGPASS\b",
            r"\bNOAUTH\b",
            r"\brequirepass\b",
            r"\b(?:password|credentials?|auth(?:entication)?)\b[^.;\n]{0,60}\b(?:mismatch|changed|rotated|wrong|stale|old|invalid|differ)",
            r"\b(?:mismatch|changed|rotated|wrong|stale|old|invalid)\b[^.;\n]{0,40}\b(?:password|credentials?)\b",
            r"\bauth(?:entication)? (?:fail(?:s|ed|ure)?|error)s?\b",
        ),
        detail_keys=("secret", "server_secret"),
        # the client's copy of the password is stale: the same story told from the client's side
        compatible=("stale_secret_env",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
        new = "".join(alphabet[int(i)] for i in rng.integers(0, len(alphabet), size=16))
        return {"new_password": new, "old_password": VALKEY_PASSWORD, "secret": "valkey-cart-auth", "server_secret": "valkey-cart-server"}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        RotateServerPassword(self.namespace, v["server_secret"], "requirepass", "valkey-cart", v["new_password"], v["old_password"]).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component="deployment/valkey-cart",
            namespace=self.namespace,
            layer="application",
            mechanism="cache password changed server-side",
            summary=(
                f"The Valkey password was rotated server-side: valkey-cart now runs with the requirepass from Secret {v['server_secret']}, "
                f"but the cart still authenticates with the old password from Secret {v['secret']}, so every cart operation fails with "
                "WRONGPASS (password mismatch). " + impact(self.app, "cart")
            ),
            details={"secret": v["secret"], "server_secret": v["server_secret"]},
            affected=("deployment/valkey-cart", "deployment/cart"),
        )

    def brief(self) -> str:
        return user_report(self.app, "cart", intermittent=False)

    def _patch_secret(self, password: str) -> str:
        b64 = base64.b64encode(password.encode()).decode()
        return f"kubectl patch secret {self.variant['secret']} -n {self.namespace} -p '{{\"data\":{{\"password\":\"{b64}\"}}}}'"

    def reference_solution(self) -> list[str]:
        ns = self.namespace
        return [
            f"kubectl logs deployment/cart -n {ns} --tail=5",
            f"kubectl get secret {self.variant['server_secret']} -n {ns} -o jsonpath='{{.data.requirepass}}'",
            self._patch_secret(self.variant["new_password"]),
            f"kubectl rollout restart deployment/cart -n {ns}",
            "sleep 30",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        ns = self.namespace
        return {
            "restart_cart": [f"kubectl rollout restart deployment/cart -n {ns}"],
            "restart_valkey": [f"kubectl rollout restart deployment/valkey-cart -n {ns}"],
            "patch_secret_without_roll": [self._patch_secret(self.variant["new_password"])],
            "delete_cart_pods": [f"kubectl delete pod -n {ns} -l opentelemetry.io/name=cart"],
            "scale_cart_to_zero": [f"kubectl scale deployment/cart -n {ns} --replicas=0"],
        }

    def non_durable_fixes(self) -> dict[str, list[str]]:
        """Putting the old password back into the running server: lost when valkey-cart restarts."""
        v = self.variant
        return {
            "config_set_in_server": [
                f"kubectl exec deploy/valkey-cart -n {self.namespace} -- valkey-cli -a {v['new_password']} --no-auth-warning CONFIG SET requirepass {v['old_password']}",
                "sleep 20",
            ],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        oks = backend.model.cart_passwords_ok(self.app.name, self.namespace)
        ok = bool(oks) and all(oks)
        return [Check("cart_authenticates", ok, "every cart pod authenticates to valkey-cart" if ok else f"{oks.count(False)} of {len(oks)} cart pods use a password valkey-cart rejects")]

    def allowed_changes(self) -> list[AllowedChange]:
        v = self.variant
        return [AllowedChange("Secret", self.namespace, v["secret"], "modified"), AllowedChange("Secret", self.namespace, v["server_secret"], "modified")]
