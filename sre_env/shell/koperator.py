"""kubectl get columns for the custom resources of modelled operators.

``TidbCluster`` prints the additionalPrinterColumns of tidb-operator's CRD:
``READY`` (the Ready condition), then per component its image, storage,
ready and desired replicas, and ``AGE``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["OPERATOR_COLUMNS", "OPERATOR_DESCRIBERS", "describe_custom"]

Obj = dict[str, Any]


def _tc(o: Obj, now: float, wide: bool) -> list[str]:
    from .printers import age

    spec, status = o.get("spec") or {}, o.get("status") or {}
    ready = next((c.get("status", "") for c in status.get("conditions") or () if c.get("type") == "Ready"), "")
    cells = [ready]
    for comp in ("pd", "tikv", "tidb"):
        cs, st = spec.get(comp) or {}, status.get(comp) or {}
        cells.append(str(st.get("image", "")))
        if comp != "tidb":
            cells.append(str((cs.get("requests") or {}).get("storage", "")))
        cells.append(str((st.get("statefulSet") or {}).get("readyReplicas", 0) or 0))
        cells.append(str(cs.get("replicas", "")))
    cells.append(age(o["metadata"].get("creationTimestamp"), now))
    if wide:
        cond = next((c for c in status.get("conditions") or () if c.get("type") == "Ready"), {})
        cells.append(str(cond.get("message", "")))
    return cells


OPERATOR_COLUMNS: dict[str, tuple[list[str], list[str], Callable[[Obj, float, bool], list[str]]]] = {
    "TidbCluster": (
        ["READY", "PD", "STORAGE", "READY", "DESIRE", "TIKV", "STORAGE", "READY", "DESIRE", "TIDB", "READY", "DESIRE", "AGE"],
        ["MESSAGE"],
        _tc,
    ),
}


_ACRONYMS = {"api": "API", "uid": "UID", "id": "ID", "ip": "IP", "url": "URL", "tls": "TLS"}


def _label(key: str) -> str:
    """kubectl's smart label for an unstructured field: ``pvReclaimPolicy`` -> ``Pv Reclaim Policy``."""
    words, cur = [], ""
    for ch in key:
        if ch.isupper() and cur and not cur[-1].isupper():
            words.append(cur)
            cur = ch
        else:
            cur += ch
    if cur:
        words.append(cur)
    return " ".join(_ACRONYMS.get(w.lower(), w[:1].upper() + w[1:]) for w in words)


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _fields(obj: Obj, indent: int, out: list[str]) -> None:
    """Nested maps indented two spaces a level; each level's values aligned, as kubectl does."""
    pad = " " * indent
    width = max((len(_label(k)) for k, v in obj.items() if not isinstance(v, (dict, list)) or not v), default=0) + 3
    for key in sorted(obj):
        val = obj[key]
        label = _label(key) + ":"
        if isinstance(val, dict) and val:
            out.append(pad + label)
            _fields(val, indent + 2, out)
        elif isinstance(val, list) and val:
            out.append(pad + label)
            for item in val:
                if isinstance(item, dict):
                    _fields(item, indent + 2, out)
                else:
                    out.append(pad + "  " + _scalar(item))
        else:
            out.append(pad + label.ljust(width) + ("" if isinstance(val, (dict, list)) else _scalar(val)))


def describe_custom(k: Any, obj: Obj) -> str:
    """``kubectl describe`` of a custom resource (kubectl's generic unstructured describer)."""
    from .kdescribe import _events_block

    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    annotations = meta.get("annotations") or {}
    lines = [
        f"Name:         {meta.get('name', '')}",
        f"Namespace:    {meta.get('namespace', '')}",
        "Labels:       " + ("\n              ".join(f"{a}={b}" for a, b in sorted(labels.items())) or "<none>"),
        "Annotations:  " + ("\n              ".join(f"{a}: {b}" for a, b in sorted(annotations.items())) or "<none>"),
        f"API Version:  {obj.get('apiVersion', '')}",
        f"Kind:         {obj.get('kind', '')}",
    ]
    rest = {k2: v for k2, v in meta.items() if k2 not in ("name", "namespace", "labels", "annotations")}
    body: list[str] = []
    _fields({"metadata": rest, **{k2: v for k2, v in obj.items() if k2 not in ("apiVersion", "kind", "metadata")}}, 0, body)
    ev = _events_block(k, obj).replace("Events:\t<none>", "Events:  <none>")
    return "\n".join(lines + body) + "\n" + ev + "\n"


OPERATOR_DESCRIBERS: dict[str, Callable[[Any, Obj], str]] = {"TidbCluster": describe_custom}
