"""The environment a container's process really sees: env, envFrom and valueFrom.

Later entries win over earlier ones, and ``env`` wins over ``envFrom``, as in
the kubelet. A missing ConfigMap/Secret/key yields the kubelet's
CreateContainerConfigError message instead of an environment.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from sre_env.sim.kernel.store import ObjectStore

if TYPE_CHECKING:
    from sre_env.apps.base import Component
    from sre_env.sim.kernel.world import World

__all__ = ["resolve_env", "pod_env", "retry_limit", "go_memory_limit_mib"]


def _decode(value: str) -> str:
    try:
        return base64.b64decode(value).decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - malformed data in a secret reads as garbage, as it would
        return value


def resolve_env(store: ObjectStore, pod: dict[str, Any], container: dict[str, Any]) -> tuple[dict[str, str], str | None]:
    ns = pod["metadata"]["namespace"]
    env: dict[str, str] = {}
    for src in container.get("envFrom") or ():
        prefix = src.get("prefix", "")
        if "configMapRef" in src:
            ref = src["configMapRef"]
            cm = store.find("ConfigMap", ref.get("name", ""), ns)
            if cm is None:
                if ref.get("optional"):
                    continue
                return {}, f'configmap "{ref.get("name")}" not found'
            for k, v in sorted((cm.get("data") or {}).items()):
                env[prefix + k] = str(v)
        elif "secretRef" in src:
            ref = src["secretRef"]
            sec = store.find("Secret", ref.get("name", ""), ns)
            if sec is None:
                if ref.get("optional"):
                    continue
                return {}, f'secret "{ref.get("name")}" not found'
            for k, v in sorted((sec.get("data") or {}).items()):
                env[prefix + k] = _decode(v)
            for k, v in sorted((sec.get("stringData") or {}).items()):
                env[prefix + k] = str(v)
    for item in container.get("env") or ():
        name = item.get("name", "")
        if "value" in item:
            env[name] = "" if item["value"] is None else str(item["value"])
            continue
        vf = item.get("valueFrom") or {}
        if "configMapKeyRef" in vf:
            ref = vf["configMapKeyRef"]
            cm = store.find("ConfigMap", ref.get("name", ""), ns)
            if cm is None:
                if ref.get("optional"):
                    continue
                return {}, f'configmap "{ref.get("name")}" not found'
            data = cm.get("data") or {}
            if ref.get("key") not in data:
                if ref.get("optional"):
                    continue
                return {}, f'couldn\'t find key {ref.get("key")} in ConfigMap {ns}/{ref.get("name")}'
            env[name] = str(data[ref["key"]])
        elif "secretKeyRef" in vf:
            ref = vf["secretKeyRef"]
            sec = store.find("Secret", ref.get("name", ""), ns)
            if sec is None:
                if ref.get("optional"):
                    continue
                return {}, f'secret "{ref.get("name")}" not found'
            data = sec.get("data") or {}
            if ref.get("key") not in data:
                if ref.get("optional"):
                    continue
                return {}, f'couldn\'t find key {ref.get("key")} in Secret {ns}/{ref.get("name")}'
            env[name] = _decode(data[ref["key"]])
        elif "fieldRef" in vf:
            path = vf["fieldRef"].get("fieldPath", "")
            env[name] = {
                "metadata.name": pod["metadata"]["name"],
                "metadata.namespace": ns,
                "spec.nodeName": pod["spec"].get("nodeName", ""),
                "status.podIP": pod.get("status", {}).get("podIP", ""),
                "status.hostIP": pod.get("status", {}).get("hostIP", ""),
            }.get(path, "")
        else:
            env[name] = ""
    return env, None


def pod_env(world: "World", uid: str, container: str) -> dict[str, str]:
    rt = world.runtimes.get(uid)
    ctr = rt.containers.get(container) if rt is not None else None
    if ctr is not None and ctr.state == "running" and ctr.started_env is not None:
        # a running process keeps the environment it started with
        return ctr.started_env
    pod = world.pod_by_uid(uid)
    if pod is None:
        return {}
    spec = next((c for c in pod["spec"].get("containers", []) if c["name"] == container), None)
    if spec is None:
        spec = pod["spec"]["containers"][0]
    env, _ = resolve_env(world.store, pod, spec)
    return env


def retry_limit(world: "World", comp: Component, uids: tuple[str, ...]) -> int:
    """Client retries of failed upstream calls, from the process's environment (``RETRY_MAX``).

    A modelling convention of sre-env's apps: their clients honour ``RETRY_MAX``
    (absent: no retries), as gRPC retry policies or HTTP client settings would.
    """
    for uid in uids[:1]:
        raw = pod_env(world, uid, comp.container).get("RETRY_MAX", "")
        try:
            return max(0, min(int(raw), 20))
        except ValueError:
            return 0
    return 0


def go_memory_limit_mib(world: "World", comp: Component, uids: tuple[str, ...]) -> float:
    """The Go runtime's soft memory limit from ``GOMEMLIMIT`` (e.g. ``96MiB``), MiB; 0 when unset."""
    for uid in uids[:1]:
        raw = pod_env(world, uid, comp.container).get("GOMEMLIMIT", "").strip()
        units = {"B": 1 / 2**20, "KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0, "TiB": 1024.0**2}
        for unit in ("KiB", "MiB", "GiB", "TiB", "B"):
            if raw.endswith(unit):
                try:
                    return max(float(raw[: -len(unit)]) * units[unit], 0.0)
                except ValueError:
                    return 0.0
        return 0.0
    return 0.0
