"""The simulated API server's object store: Kubernetes-shaped dicts, deterministic.

Objects are plain JSON-shaped dicts exactly as the real API serves them, so
``-o yaml``, patches, ``apply`` and the HTTP server need no translation layer.
Listing is always sorted by (namespace, name): nothing that reaches an
observation depends on dict or set iteration order.
"""

from __future__ import annotations

import bisect
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
        #: creations, bindings and removals of pods bound to a node: what routes and scrape targets
        #: can see (a pod that is only Pending changes none of them)
        self.bound_pod_revision = 0
        self._reset_derived()

    # ------------------------------------------------------------------ derived indexes
    def _reset_derived(self) -> None:
        """Indexes derived from the objects, rebuilt on first use (so snapshots do not carry them).

        ``_sorted``: each kind's keys in (namespace, name) order, kept sorted as objects come and
        go, so a listing costs the objects it returns rather than a sort of every key; ``_bound``:
        the keys of pods bound to a node, which the kubelets and the scheduler walk instead of
        every pod (thousands of Pending replicas cost them nothing); ``_event_index``: (involved
        uid, reason, message) -> the Event that repeats fold into (None: rebuilt on next use; an
        Event written by anything but record_event may duplicate a key, and drops it).
        """
        self._sorted: dict[str, list[tuple[str, str]]] = {}
        self._bound: list[tuple[str, str]] | None = None
        self._event_index: dict[tuple[Any, Any, Any], tuple[str, str]] | None = None

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        for k in ("_sorted", "_bound", "_event_index"):
            state.pop(k, None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._reset_derived()

    def _keys(self, kind: str) -> list[tuple[str, str]]:
        keys = self._sorted.get(kind)
        if keys is None:
            keys = self._sorted[kind] = sorted(self._bucket(kind))
        return keys

    def _joined(self, kind: str, key: tuple[str, str], obj: Obj) -> None:
        keys = self._sorted.get(kind)
        if keys is not None:
            bisect.insort(keys, key)
        if kind == "Pod" and _bound(obj):
            self.bound_pod_revision += 1
            if self._bound is not None:
                bisect.insort(self._bound, key)

    def _left(self, kind: str, key: tuple[str, str], obj: Obj) -> None:
        keys = self._sorted.get(kind)
        if keys is not None:
            _discard(keys, key)
        if kind == "Pod" and _bound(obj):
            self.bound_pod_revision += 1
            if self._bound is not None:
                _discard(self._bound, key)

    def bind_pod(self, pod: Obj, node: str) -> None:
        """Set a pod's node (the scheduler's binding); the caller records the write with :meth:`touch`."""
        was = _bound(pod)
        pod["spec"]["nodeName"] = node
        self.bound_pod_revision += 1
        if not was and self._bound is not None:
            bisect.insort(self._bound, self._key("Pod", pod["metadata"].get("namespace"), pod["metadata"]["name"]))

    def bound_pods(self) -> list[Obj]:
        """Pods bound to a node, in (namespace, name) order."""
        if self._bound is None:
            bucket = self._bucket("Pod")
            self._bound = [k for k in self._keys("Pod") if _bound(bucket[k])]
        bucket = self._bucket("Pod")
        return [bucket[k] for k in self._bound]

    def _mark(self, kind: str, namespace: str | None, name: str) -> None:
        self.revision += 1
        self.kind_revision[kind] = self.kind_revision.get(kind, 0) + 1
        self.dirty[(kind, namespace or "", name)] = None

    def requeue(self, obj: Obj) -> None:
        """Have the controllers look at ``obj`` again next tick without writing it (a work-queue re-add)."""
        meta = obj["metadata"]
        self.dirty[(obj["kind"], meta.get("namespace") or "", meta["name"])] = None

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
        keys = self._keys(kind)
        if namespace is not None and kind_info(kind).namespaced:
            # the namespace's keys are one run of the sorted list
            lo = bisect.bisect_left(keys, (namespace, ""))
            hi = bisect.bisect_left(keys, (namespace + "\0", ""))
            keys = keys[lo:hi]
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
        for k in list(self._keys(kind)):
            yield bucket[k]

    def count(self, kind: str) -> int:
        """How many objects of ``kind`` there are."""
        return len(self._objs.get(kind) or ())

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
        self._joined(kind, key, obj)
        self._mark(kind, meta.get("namespace"), meta["name"])
        self.membership_revision[kind] = self.membership_revision.get(kind, 0) + 1
        if kind == "Event":
            self._event_index = None
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
        key = self._key(kind, nmeta.get("namespace"), nmeta["name"])
        self._bucket(kind)[key] = new
        if kind == "Pod" and _bound(old) != _bound(new):
            self._left(kind, key, old)
            self._joined(kind, key, new)
        self._mark(kind, nmeta.get("namespace"), nmeta["name"])
        if kind == "Event":
            self._event_index = None
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
        key = self._key(kind, namespace, name)
        obj = self._bucket(kind).pop(key, None)
        if obj is not None:
            self._mark(kind, namespace if kind_info(kind).namespaced else "", name)
            self.membership_revision[kind] = self.membership_revision.get(kind, 0) + 1
            self._left(kind, key, obj)
            if kind == "Event" and self._event_index is not None and self._event_index.get(_event_key(obj)) == key:
                del self._event_index[_event_key(obj)]

    # ------------------------------------------------------------------ events
    def record_event(self, obj: Obj, type_: str, reason: str, message: str, source: str) -> None:
        """Emit an Event, folding repeats into ``count`` the way the event recorder does.

        A repeat is found through an index rather than a scan of every Event, so a
        controller that emits hundreds of events in a tick pays for each once.
        """
        meta = obj["metadata"]
        ns = meta.get("namespace") or "default"
        involved_uid = meta.get("uid")
        bucket = self._bucket("Event")
        index = self._event_index
        if index is None:
            index = self._event_index = {}
            for k, ev in bucket.items():
                index.setdefault(_event_key(ev), k)
        match = (involved_uid, reason, message)
        at = index.get(match)
        ev = bucket.get(at) if at is not None else None
        if ev is not None and _event_key(ev) == match:
            ev["count"] += 1
            ev["lastTimestamp"] = iso(self.clock.now)
            self.touch(ev)
            return
        name = f"{meta['name']}.{_suffix(self._counter + 1, 16)}"
        created = self.create(
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
        # create() dropped the index as it does for any Event; this one is known to be the only match
        index[match] = self._key("Event", ns, created["metadata"]["name"])
        self._event_index = index

    def prune_events(self, max_events: int = 400) -> None:
        bucket = self._bucket("Event")
        if len(bucket) <= max_events:
            return
        ordered = sorted(bucket.items(), key=lambda kv: (kv[1]["lastTimestamp"], int(kv[1]["metadata"]["resourceVersion"])))
        index = self._event_index
        keys = self._sorted.get("Event")
        for key, ev in ordered[: len(bucket) - max_events]:
            del bucket[key]
            if keys is not None:
                _discard(keys, key)
            if index is not None and index.get(_event_key(ev)) == key:
                del index[_event_key(ev)]


def _event_key(ev: Obj) -> tuple[Any, Any, Any]:
    """What makes two events the same for folding: the involved object's uid, the reason and the message.

    Fields of another type than a string (an Event a user wrote) never match one the recorder emits.
    """
    involved = ev.get("involvedObject")
    uid = involved.get("uid") if isinstance(involved, dict) else None
    return tuple(v if isinstance(v, str) else (None if v is None else "\0") for v in (uid, ev.get("reason"), ev.get("message")))


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


def _discard(keys: list[tuple[str, str]], key: tuple[str, str]) -> None:
    i = bisect.bisect_left(keys, key)
    if i < len(keys) and keys[i] == key:
        del keys[i]


def _bound(pod: Obj) -> bool:
    spec = pod.get("spec")
    return isinstance(spec, dict) and bool(spec.get("nodeName"))


def _is_running(pod: Obj) -> bool:
    return pod.get("status", {}).get("phase") in ("Running", "Pending") and bool(pod.get("spec", {}).get("nodeName"))
