"""A minimal Backend over ObjectStore, for shell tests only (the real one is sre_env.sim.backend)."""

from __future__ import annotations

from typing import Any

from sre_env.backend import ExecResult
from sre_env.errors import ApiError
from sre_env.kube.timefmt import iso
from sre_env.sim.kernel.clock import SimClock
from sre_env.sim.kernel.store import ObjectStore

Obj = dict[str, Any]


class FakeAPI:
    def __init__(self, store: ObjectStore) -> None:
        self.store = store
        self.logs_text: dict[tuple[str, str | None, bool], str] = {}
        self.exec_calls: list[tuple[str, str, str | None, list[str]]] = []
        self.evicted: list[tuple[str, str]] = []
        self.usage: dict[tuple[str, str], tuple[int, int]] = {}
        self.node_usage: dict[str, tuple[int, int, int, int]] = {}
        self.last_logs_call: dict[str, Any] = {}

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj:
        return self.store.get(kind, name, namespace)

    def list(self, kind: str, namespace: str | None = None, label_selector: str | None = None, field_selector: str | None = None) -> list[Obj]:
        return self.store.list(kind, namespace, label_selector, field_selector)

    def create(self, obj: Obj) -> Obj:
        return self.store.create(obj)

    def replace(self, obj: Obj) -> Obj:
        return self.store.replace(obj)

    def patch(self, kind: str, name: str, namespace: str | None, patch: Any, patch_type: str = "strategic") -> Obj:
        return self.store.patch(kind, name, namespace, patch, patch_type)

    def delete(self, kind: str, name: str, namespace: str | None = None, *, force: bool = False) -> Obj:
        return self.store.delete(kind, name, namespace, force=force)

    def scale(self, kind: str, name: str, namespace: str, replicas: int) -> Obj:
        return self.store.patch(kind, name, namespace, {"spec": {"replicas": replicas}}, "merge")

    def evict(self, name: str, namespace: str) -> None:
        self.store.get("Pod", name, namespace)
        self.evicted.append((namespace, name))
        self.store.remove("Pod", name, namespace)

    def logs(self, name: str, namespace: str, container: str | None = None, *, previous: bool = False, tail: int | None = None,
             since_seconds: float | None = None, timestamps: bool = False) -> str:
        pod = self.store.get("Pod", name, namespace)
        self.last_logs_call = dict(name=name, container=container, previous=previous, tail=tail, since=since_seconds, timestamps=timestamps)
        if previous and not (pod.get("status") or {}).get("containerStatuses", [{}])[0].get("lastState"):
            raise ApiError.bad_request(f'previous terminated container "{container}" in pod "{name}" not found')
        text = self.logs_text.get((name, container, previous), self.logs_text.get((name, None, previous), ""))
        lines = text.splitlines()
        if tail is not None:
            lines = lines[-tail:] if tail else []
        if timestamps:
            lines = [f"{iso(0)} {ln}" for ln in lines]
        return "".join(ln + "\n" for ln in lines)

    def exec(self, name: str, namespace: str, container: str | None, argv: list[str]) -> ExecResult:
        self.store.get("Pod", name, namespace)
        self.exec_calls.append((namespace, name, container, argv))
        if argv[:1] == ["false"]:
            return ExecResult("", 1)
        if argv[:1] == ["env"]:
            return ExecResult("PATH=/usr/bin\nMODE=prod\n", 0)
        return ExecResult(" ".join(argv), 0)

    def top_pods(self, namespace: str | None) -> list[tuple[str, str, int, int]]:
        return [(ns, n, c, m) for (ns, n), (c, m) in sorted(self.usage.items()) if namespace is None or ns == namespace]

    def top_nodes(self) -> list[tuple[str, int, int, int, int]]:
        return [(n, *v) for n, v in sorted(self.node_usage.items())]


class FakeNodes:
    def __init__(self, store: ObjectStore) -> None:
        self.store = store
        self.calls: list[tuple[str, list[str]]] = []

    def names(self) -> list[str]:
        return [n["metadata"]["name"] for n in self.store.list("Node")]

    def exec(self, node: str, argv: list[str]) -> ExecResult:
        self.calls.append((node, argv))
        if argv[:2] == ["systemctl", "status"]:
            return ExecResult("● kubelet.service - kubelet\n   Active: active (running)\n", 0)
        if argv[:1] == ["journalctl"]:
            return ExecResult("".join(f"Mar 02 09:00:{i:02d} {node} kubelet[1]: line {i}\n" for i in range(20)), 0)
        return ExecResult(f"{node}$ " + " ".join(argv), 0 if argv[:1] != ["false"] else 1)


class FakeBackend:
    def __init__(self, clock: SimClock | None = None) -> None:
        self.clock = clock or SimClock()
        self.store = ObjectStore(self.clock)
        self.api = FakeAPI(self.store)
        self.nodes = FakeNodes(self.store)

    @property
    def now(self) -> float:
        return self.clock.now

    def advance(self, seconds: float) -> None:
        self.clock.now += seconds
