"""Files a container sees from its ConfigMap and Secret volumes.

A volume mounted as a directory follows later edits of its ConfigMap (the
kubelet refreshes it); a key mounted with ``subPath`` is copied when the
container starts and never changes afterwards — the classic reason a fixed
ConfigMap "does not apply" until the pod restarts. :func:`snapshot_at_start`
records the ``subPath`` files when a container starts, and readers get those
contents for as long as that container runs.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["mounted_file", "mounted_files", "snapshot_at_start"]

Obj = dict[str, Any]


def _source(world: World, vol: Obj, ns: str) -> dict[str, str] | None:
    if "configMap" in vol:
        cm = world.store.find("ConfigMap", vol["configMap"].get("name", ""), ns)
        return None if cm is None else {k: str(v) for k, v in (cm.get("data") or {}).items()}
    if "secret" in vol:
        sec = world.store.find("Secret", vol["secret"].get("secretName", ""), ns)
        if sec is None:
            return None
        out = {k: str(v) for k, v in (sec.get("stringData") or {}).items()}
        for k, v in (sec.get("data") or {}).items():
            try:
                out.setdefault(k, base64.b64decode(str(v)).decode("utf-8", "replace"))
            except ValueError:
                out.setdefault(k, str(v))
        return out
    return None


def _files(world: World, pod: Obj, spec: Obj, subpath_only: bool) -> dict[str, str]:
    ns = pod["metadata"]["namespace"]
    vols = {v.get("name"): v for v in pod["spec"].get("volumes") or ()}
    out: dict[str, str] = {}
    for m in spec.get("volumeMounts") or ():
        vol = vols.get(m.get("name"))
        if vol is None:
            continue
        sub = m.get("subPath")
        if subpath_only and not sub:
            continue
        data = _source(world, vol, ns)
        if data is None:
            continue
        mount = str(m.get("mountPath", "")).rstrip("/")
        items = (vol.get("configMap") or vol.get("secret") or {}).get("items")
        named = {it["key"]: it.get("path", it["key"]) for it in items or () if "key" in it} if items else {k: k for k in data}
        if sub:
            key = next((k for k, p in named.items() if p == sub), None)
            if key is not None and key in data:
                out[mount] = data[key]
        else:
            for key, path in named.items():
                if key in data:
                    out[f"{mount}/{path}"] = data[key]
    return out


@dataclass
class _SubPathSnapshots:
    """``subPath`` mounts are copies made when the container started (they never see updates)."""

    #: (pod uid, container) -> (the start they were copied at, path -> content)
    files: dict[tuple[str, str], tuple[float | None, dict[str, str]]] = field(default_factory=dict)


def snapshot_at_start(world: World, pod: Obj, ctr: Any) -> None:
    """Copy the container's ``subPath`` files as they are now (it is starting)."""
    spec = next((c for c in pod["spec"].get("containers") or () if c.get("name") == ctr.name), None)
    if spec is None or not any(m.get("subPath") for m in spec.get("volumeMounts") or ()):
        return
    world.slot(_SubPathSnapshots).files[(pod["metadata"]["uid"], ctr.name)] = (ctr.started_at, _files(world, pod, spec, subpath_only=True))


def mounted_files(world: World, pod: Obj, spec: Obj) -> dict[str, str]:
    """path -> content of every ConfigMap/Secret file the running container sees."""
    out = _files(world, pod, spec, subpath_only=False)
    rt = world.runtimes.get(pod["metadata"]["uid"])
    ctr = rt.containers.get(spec.get("name")) if rt else None
    snapshots = world.peek(_SubPathSnapshots)
    snap = snapshots.files.get((pod["metadata"]["uid"], spec.get("name"))) if snapshots is not None else None
    if ctr is not None and snap is not None and snap[0] == ctr.started_at:
        subpaths = {str(m.get("mountPath", "")).rstrip("/") for m in spec.get("volumeMounts") or () if m.get("subPath")}
        for path in subpaths:
            out.pop(path, None)
        out.update(snap[1])
    return out


def mounted_file(world: World, pod: Obj | None, spec: Obj | None, path: str) -> str | None:
    """Content of ``path`` in the container, or None when no ConfigMap/Secret provides it."""
    if pod is None or spec is None:
        return None
    return mounted_files(world, pod, spec).get(path.rstrip("/"))
