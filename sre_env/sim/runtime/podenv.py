"""The environment a container's process really sees: env, envFrom and valueFrom.

Later entries win over earlier ones, and ``env`` wins over ``envFrom``, as in
the kubelet. A missing ConfigMap/Secret/key yields the kubelet's
CreateContainerConfigError message instead of an environment.
"""

from __future__ import annotations

import base64
from typing import Any

from sre_env.sim.kernel.store import ObjectStore

__all__ = ["resolve_env"]


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
