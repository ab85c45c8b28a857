"""The simulated API server's object store: Kubernetes-shaped dicts, deterministic.

Objects are plain JSON-shaped dicts exactly as the real API serves them, so
``-o yaml``, patches, ``apply`` and the HTTP server need no translation layer.
Listing is always sorted by (namespace, name): nothing that reaches an
observation depends on dict or set iteration order.
"""

from __future__ import annotations

import copy
from typing import Any, Iterator

from sre_env.errors import ApiError
from sre_env.kube.kinds import KINDS, kind_info
from sre_env.kube.patching import PatchError, json_merge, json_patch, strategic_merge
from sre_env.kube.probe_defaults import DEFAULTED_KINDS, default_probes
from sre_env.kube.selectors import parse_field_selector, parse_label_selector
from sre_env.kube.timefmt import iso
from sre_env.sim.kernel.clock import SimClock

__all__ = ["ObjectStore", "prepare_update"]

Obj = dict[str, Any]


class ObjectStore:
    """Holds every API object; the single source of truth for controllers and the shell."""

    def __init__(self, clock: SimClock) -> None:
        self.clock = clock
        self._objs: dict[str, dict[tuple[str, str], Obj]] = {}
        self._counter = 0
        #: bumped on every write; controllers skip work when it has not moved.
        self.revision = 0
        #: per-kind write counters, so a consumer can watch only the kinds it reads
        self.kind_revision: dict[str, int] = {}
        #: (kind, namespace, name) written since the controllers last looked (insertion-ordered)
        self.dirty: dict[tuple[str, str, str], None] = {}
        #: per-kind counters of creations and removals only
        self.membership_revision: dict[str, int] = {}

    def _mark(self, kind: str, namespace: str | None, name: str) -> None:
        self.revision += 1
        self.kind_revision[kind] = self.kind_revision.get(kind, 0) + 1
        self.dirty[(kind, namespace or "", name)] = None

    def take_dirty(self) -> dict[tuple[str, str, str], None]:
        dirty, self.dirty = self.dirty, {}
        return dirty

    # ------------------------------------------------------------------ helpers
    def _next(self) -> int:
        self._counter += 1
        return self._counter

    def _bucket(self, kind: str) -> dict[tuple[str, str], Obj]:
        b = self._objs.get(kind)
        if b is None:
            b = self._objs[kind] = {}
        return b

    @staticmethod
    def _key(kind: str, namespace: str | None, name: str) -> tuple[str, str]:
        namespaced = _NAMESPACED.get(kind)
        if namespaced is None:
            namespaced = kind_info(kind).namespaced
        return ((namespace or "default") if namespaced else "", name)

    def touch(self, obj: Obj) -> None:
        """Record an in-place status change made by a controller."""
        meta = obj["metadata"]
        self._mark(obj["kind"], meta.get("namespace"), meta["name"])
        meta["resourceVersion"] = str(self._next())

    # ------------------------------------------------------------------ reads
    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj:
        obj = self._bucket(kind).get(self._key(kind, namespace, name))
        if obj is None:
            raise ApiError.not_found(kind_info(kind).resource, name)
        return obj

    def find(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        bucket = self._objs.get(kind)
        if bucket is None:
            return None
        return bucket.get(((namespace or "default") if _NAMESPACED.get(kind, True) else "", name))

    def list(
        self,
        kind: str,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> list[Obj]:
        bucket = self._bucket(kind)
        keys = sorted(bucket)
        if namespace is not None and kind_info(kind).namespaced:
            keys = [k for k in keys if k[0] == namespace]
        objs = [bucket[k] for k in keys]
        if label_selector:
            pred = parse_label_selector(label_selector)
            objs = [o for o in objs if pred(o["metadata"].get("labels") or {})]
        if field_selector:
            fpred = parse_field_selector(field_selector)
            objs = [o for o in objs if fpred(o)]
        return objs

    def iter(self, kind: str) -> Iterator[Obj]:
        bucket = self._bucket(kind)
        for k in sorted(bucket):
            yield bucket[k]

    def kinds(self) -> list[str]:
        return sorted(k for k, v in self._objs.items() if v)

    # ------------------------------------------------------------------ writes
    def create(self, obj: Obj, *, copy_in: bool = True) -> Obj:
        obj = copy.deepcopy(obj) if copy_in else obj
        kind = obj.get("kind")
        info = kind_info(kind)
        if kind in DEFAULTED_KINDS:
            default_probes(obj)  # the API server's probe defaults (sre_env.kube.probe_defaults)
        obj.setdefault("apiVersion", info.api_version)
        meta = obj.setdefault("metadata", {})
        if not meta.get("name"):
            if meta.get("generateName"):
                meta["name"] = meta["generateName"] + _suffix(self._counter + 1)
            else:
                raise ApiError.invalid(info.resource, "", "metadata.name: Required value: name or generateName is required")
        if info.namespaced:
            meta["namespace"] = meta.get("namespace") or "default"
            if kind != "Event" and self.find("Namespace", meta["namespace"]) is None:
                raise ApiError.not_found("namespaces", meta["namespace"])
        else:
            meta.pop("namespace", None)
        key = self._key(kind, meta.get("namespace"), meta["name"])
        bucket = self._bucket(kind)
        if key in bucket:
            raise ApiError.already_exists(info.resource, meta["name"])
        n = self._next()
        meta["uid"] = f"{n:08x}-5e1f-4c0d-9a7b-{(n * 2654435761) % 16**12:012x}"
        meta["resourceVersion"] = str(n)
        meta["creationTimestamp"] = iso(self.clock.now)
        if "spec" in obj:
            meta["generation"] = 1
        bucket[key] = obj
        self._mark(kind, meta.get("namespace"), meta["name"])
        self.membership_revision[kind] = self.membership_revision.get(kind, 0) + 1
        return obj

    def replace(self, obj: Obj) -> Obj:
        kind = obj["kind"]
        meta = obj["metadata"]
        old = self.get(kind, meta["name"], meta.get("namespace"))
        new = copy.deepcopy(obj)
        if kind in DEFAULTED_KINDS and kind != "Pod":  # a pod's probes are immutable: defaulted at create
            default_probes(new)
        prepare_update(kind, old, new)
        nmeta = new["metadata"]
        for keep in ("uid", "creationTimestamp", "namespace", "ownerReferences", "deletionTimestamp"):
            if keep in old["metadata"] and keep not in nmeta:
                nmeta[keep] = old["metadata"][keep]
        nmeta["uid"] = old["metadata"]["uid"]
        nmeta["creationTimestamp"] = old["metadata"]["creationTimestamp"]
        if "status" not in new and "status" in old:
            new["status"] = old["status"]
        gen = old["metadata"].get("generation", 1)
        nmeta["generation"] = gen + 1 if new.get("spec") != old.get("spec") else gen
        nmeta["resourceVersion"] = str(self._next())
        new.setdefault("apiVersion", old.get("apiVersion"))
        self._bucket(kind)[self._key(kind, nmeta.get("namespace"), nmeta["name"])] = new
        self._mark(kind, nmeta.get("namespace"), nmeta["name"])
        return new

    def patch(self, kind: str, name: str, namespace: str | None, patch: Any, patch_type: str = "strategic") -> Obj:
        old = self.get(kind, name, namespace)
        info = kind_info(kind)
        try:
            if patch_type == "json":
                new = json_patch(old, patch)
            elif patch_type == "merge":
                new = json_merge(old, patch)
            elif patch_type == "strategic":
                new = strategic_merge(old, patch)
            else:
                raise ApiError.bad_request(f"unknown patch type {patch_type!r}")
        except PatchError as exc:
            raise ApiError(422, "Invalid", f'{info.resource} "{name}" is invalid: {exc}') from None
        if not isinstance(new, dict) or new.get("kind") != kind or new.get("metadata", {}).get("name") != name:
            raise ApiError.invalid(info.resource, name, "metadata.name: Invalid value: field is immutable")
        return self.replace(new)

    def delete(self, kind: str, name: str, namespace: str | None = None, *, force: bool = False) -> Obj:
        obj = self.get(kind, name, namespace)
        meta = obj["metadata"]
        if (meta.get("finalizers") or (kind == "Pod" and not force and _is_running(obj))) and not meta.get("deletionTimestamp"):
            meta["deletionTimestamp"] = iso(self.clock.now)
            self.touch(obj)
            return obj
        if meta.get("finalizers") and not force:
            return obj
        self.remove(kind, name, namespace)
        return obj

    def remove(self, kind: str, name: str, namespace: str | None = None) -> None:
        """Drop an object immediately (garbage collector, kubelet after termination)."""
        if self._bucket(kind).pop(self._key(kind, namespace, name), None) is not None:
            self._mark(kind, namespace if kind_info(kind).namespaced else "", name)
            self.membership_revision[kind] = self.membership_revision.get(kind, 0) + 1

    # ------------------------------------------------------------------ events
    def record_event(self, obj: Obj, type_: str, reason: str, message: str, source: str) -> None:
        """Emit an Event, folding repeats into ``count`` the way the event recorder does."""
        meta = obj["metadata"]
        ns = meta.get("namespace") or "default"
        involved_uid = meta.get("uid")
        for ev in self._bucket("Event").values():
            if (
                ev["involvedObject"].get("uid") == involved_uid
                and ev["reason"] == reason
                and ev["message"] == message
            ):
                ev["count"] += 1
                ev["lastTimestamp"] = iso(self.clock.now)
                self.touch(ev)
                return
        name = f"{meta['name']}.{_suffix(self._counter + 1, 16)}"
        self.create(
            {
                "kind": "Event",
                "apiVersion": "v1",
                "metadata": {"name": name, "namespace": ns},
                "involvedObject": {
                    "kind": obj["kind"],
                    "name": meta["name"],
                    "namespace": ns,
                    "uid": involved_uid,
                    "apiVersion": obj.get("apiVersion", "v1"),
                },
                "type": type_,
                "reason": reason,
                "message": message,
                "source": {"component": source},
                "count": 1,
                "firstTimestamp": iso(self.clock.now),
                "lastTimestamp": iso(self.clock.now),
            },
            copy_in=False,
        )

    def prune_events(self, max_events: int = 400) -> None:
        bucket = self._bucket("Event")
        if len(bucket) <= max_events:
            return
        ordered = sorted(bucket.items(), key=lambda kv: (kv[1]["lastTimestamp"], int(kv[1]["metadata"]["resourceVersion"])))
        for key, _ in ordered[: len(bucket) - max_events]:
            del bucket[key]


_NAMESPACED = {k.kind: k.namespaced for k in KINDS}


def prepare_update(kind: str, old: Obj, new: Obj) -> None:
    """The update strategies' carry-overs (``PrepareForUpdate``), before an update is validated and stored.

    A Namespace's ``spec.finalizers`` change only through the finalize
    subresource, so an update keeps the old spec; a Service keeps its allocated
    cluster IP when the update leaves it out, and a bound claim its volume.
    What an update may not change is refused by admission (``sre_env.kube.validation``).
    """
    old_spec = old.get("spec") if isinstance(old.get("spec"), dict) else {}
    new_spec = new.get("spec") if isinstance(new.get("spec"), dict) else None
    if kind == "Namespace" and "spec" in old:
        new["spec"] = copy.deepcopy(old["spec"])
    if kind == "Service" and old_spec.get("clusterIP") and not (new_spec or {}).get("clusterIP"):
        spec = new.setdefault("spec", {}) if new_spec is None else new_spec
        spec["clusterIP"] = old_spec["clusterIP"]
        spec.setdefault("clusterIPs", old_spec.get("clusterIPs", [old_spec["clusterIP"]]))
    if kind == "PersistentVolumeClaim" and old_spec.get("volumeName") and not (new_spec or {}).get("volumeName"):
        spec = new.setdefault("spec", {}) if new_spec is None else new_spec
        spec["volumeName"] = old_spec["volumeName"]


_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def _suffix(n: int, length: int = 5) -> str:
    """Deterministic name suffix in the alphabet Kubernetes uses for generated names."""
    x = (n * 2654435761 + 0x9E3779B9) & 0xFFFFFFFFFFFF
    out = []
    for _ in range(length):
        x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        out.append(_ALPHABET[(x >> 33) % len(_ALPHABET)])
    return "".join(out)


def _is_running(pod: Obj) -> bool:
    return pod.get("status", {}).get("phase") in ("Running", "Pending") and bool(pod.get("spec", {}).get("nodeName"))
