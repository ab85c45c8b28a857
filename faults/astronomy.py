"""Faults of the astronomy shop's back ends: flags, the orders queue, the accounting DB, the cart cache.

Each changes what an operator or a broken client would change: the flag file
in ConfigMap ``flagd-config`` (then flagd is restarted to pick it up, as the
demo's init container only copies the file at start), a record written into
Kafka with the console producer inside the broker pod, a transaction a client
opened and left idle in PostgreSQL, the password Valkey's server Secret holds.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .base import Fault

if TYPE_CHECKING:
    from sre_env.backend import Backend
    from sre_env.sim.model import ModelBackend

__all__ = ["SetFeatureFlag", "KafkaPoisonRecord", "IdleTransactionLock", "RotateServerPassword", "EnvoyConfigChange", "set_flag_json"]

RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"


def set_flag_json(text: str, flag: str, variant: str) -> str:
    """The flag file with ``flag``'s defaultVariant set (the demo's 2-space JSON layout)."""
    doc = json.loads(text)
    doc["flags"][flag]["defaultVariant"] = variant
    return json.dumps(doc, indent=2) + "\n"


def _restart(backend: "Backend", namespace: str, deployment: str, stamp: str) -> None:
    backend.api.patch("Deployment", deployment, namespace, {"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: stamp}}}}}, "strategic")


@dataclass(frozen=True)
class SetFeatureFlag(Fault):
    """A flag's default variant changed in ``flagd-config``, and flagd restarted to serve it."""

    namespace: str
    flag: str
    variant: str
    restore_variant: str = "off"

    def _set(self, backend: "Backend", variant: str) -> None:
        cm = backend.api.get("ConfigMap", "flagd-config", self.namespace)
        text = set_flag_json(cm["data"]["demo.flagd.json"], self.flag, variant)
        backend.api.patch("ConfigMap", "flagd-config", self.namespace, {"data": {"demo.flagd.json": text}}, "merge")
        _restart(backend, self.namespace, "flagd", f"flag-{self.flag}-{variant}")

    def inject(self, backend: "Backend") -> None:
        self._set(backend, self.variant)

    def recover(self, backend: "Backend") -> None:
        self._set(backend, self.restore_variant)


@dataclass(frozen=True)
class KafkaPoisonRecord(Fault):
    """A malformed record (not an OrderResult protobuf) written to topic ``orders``."""

    namespace: str
    payload: str

    def inject(self, backend: "Backend") -> None:
        pod = next(p for p in backend.api.list("Pod", self.namespace, "opentelemetry.io/name=kafka") if not p["metadata"].get("deletionTimestamp"))
        script = f"echo '{self.payload}' | /opt/kafka/bin/kafka-console-producer.sh --bootstrap-server localhost:9092 --topic orders"
        backend.api.exec(pod["metadata"]["name"], self.namespace, "kafka", ["sh", "-c", script])

    def recover(self, backend: "Backend") -> None:
        """Nothing to undo in the log: the consumers must move past the record."""


@dataclass(frozen=True)
class IdleTransactionLock(Fault):
    """A maintenance session took a table lock in a transaction and went idle (never committed).

    The session lives in the database server (it is a backend process of postgres), so the fault
    opens it there, as a client connecting from ``client_addr`` would: in the simulator's database
    model (a live cluster would need a client that keeps the transaction open).
    """

    namespace: str
    app_name: str
    table: str
    mode: str
    statement: str
    client_addr: str
    pid: int | None = None
    user: str = "root"

    def inject(self, backend: "ModelBackend") -> None:
        pg = backend.model.app_model(self.app_name).pg
        now = backend.now
        s = pg.connect(self.user, "psql", self.client_addr, now, pid=self.pid)
        s.state, s.query, s.query_start, s.xact_start = "idle in transaction", self.statement, now, now
        s.holds[self.table] = self.mode

    def recover(self, backend: "ModelBackend") -> None:
        pg = backend.model.app_model(self.app_name).pg
        for pid in [p for p, s in pg.sessions.items() if s.holds.get(self.table) == self.mode and s.state == "idle in transaction"]:
            pg.terminate(pid)


@dataclass(frozen=True)
class RotateServerPassword(Fault):
    """The cache server's password rotated in its own Secret and the server restarted with it."""

    namespace: str
    secret: str
    key: str
    deployment: str
    new_password: str
    old_password: str

    def _set(self, backend: "Backend", password: str) -> None:
        backend.api.patch("Secret", self.secret, self.namespace, {"data": {self.key: base64.b64encode(password.encode()).decode()}}, "merge")
        _restart(backend, self.namespace, self.deployment, f"rotate-{password[:4]}")

    def inject(self, backend: "Backend") -> None:
        self._set(backend, self.new_password)

    def recover(self, backend: "Backend") -> None:
        self._set(backend, self.old_password)


@dataclass(frozen=True)
class EnvoyConfigChange(Fault):
    """frontend-proxy's envoy.yaml replaced in its ConfigMap, and the proxy rolled to load it."""

    namespace: str
    new_config: str
    old_config: str

    def _set(self, backend: "Backend", text: str) -> None:
        backend.api.patch("ConfigMap", "frontend-proxy-config", self.namespace, {"data": {"envoy.yaml": text}}, "merge")
        _restart(backend, self.namespace, "frontend-proxy", f"envoy-{len(text)}")

    def inject(self, backend: "Backend") -> None:
        self._set(backend, self.new_config)

    def recover(self, backend: "Backend") -> None:
        self._set(backend, self.old_config)
