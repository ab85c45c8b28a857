"""``kubectl diff -f -``: what ``apply`` would change, as kubectl shows it.

kubectl writes the live objects and the server's dry-run result of the apply to
two temporary directories and runs ``diff -u -N`` on them; we build the same
two texts (YAML without managedFields), merge the manifest the way ``apply``
here does, and print GNU diff's unified output with its headers. Exit code 1
when anything differs, 0 when nothing does. Nothing is written.
"""

from __future__ import annotations

import copy
import difflib
import json
import zlib
from typing import Any

from sre_env.kube.patching import strategic_merge

from ..errors import ApiError
from .kctx import K
from .kmutate import _kind_of, _prep, _read_manifests
from .printers import to_yaml
from .spec import KubectlError

__all__ = ["cmd_diff"]

Obj = dict[str, Any]
_LAST = "kubectl.kubernetes.io/last-applied-configuration"


def _file_name(doc: Obj, info: Any) -> str:
    api = str(doc.get("apiVersion") or info.api_version)
    group, _, version = api.rpartition("/")
    ns = doc["metadata"].get("namespace", "") if info.namespaced else ""
    return (f"{group}." if group else "") + f"{version}.{info.kind}.{ns}.{doc['metadata'].get('name', '')}"


def _merged(cur: Obj, doc: Obj, raw: Obj) -> Obj:
    """The object ``apply`` would store: the manifest merged over live, last-applied updated, generation bumped."""
    merged = strategic_merge(cur, {kk: v for kk, v in doc.items() if kk != "metadata"})
    merged["metadata"] = strategic_merge(cur["metadata"], {kk: v for kk, v in doc["metadata"].items() if kk != "annotations"})
    ann = dict(cur["metadata"].get("annotations") or {})
    ann.update(doc["metadata"].get("annotations") or {})
    ann[_LAST] = json.dumps(raw, sort_keys=True, separators=(",", ":")) + "\n"
    merged["metadata"]["annotations"] = ann
    if merged.get("spec") != cur.get("spec") and "generation" in cur["metadata"]:
        merged["metadata"]["generation"] = int(cur["metadata"]["generation"] or 0) + 1
    return merged


def _text(obj: Obj | None) -> list[str]:
    if obj is None:
        return []
    obj = copy.deepcopy(obj)
    obj.get("metadata", {}).pop("managedFields", None)
    return to_yaml(obj).splitlines(keepends=True)


def _stamp(now: float) -> str:
    """The sim clock as GNU diff prints a file's mtime."""
    from sre_env.kube.timefmt import iso

    day, clock = iso(now).rstrip("Z").split("T")
    return f"{day} {clock}.000000000 +0000"


def cmd_diff(k: K) -> None:
    """kubectl diff exits 1 for "differences found", so its errors exit 2 (CheckDiffErr)."""
    try:
        _diff(k)
    except KubectlError as exc:
        exc.code = 2
        raise
    except ApiError as exc:
        raise KubectlError(str(exc), code=2, raw=True) from None


def _diff(k: K) -> None:
    o = k.opts
    if not o.get("filename"):
        raise KubectlError("must specify one of -f and -k")
    docs = _read_manifests(k, o["filename"])
    pairs: list[tuple[str, list[str], list[str]]] = []
    for raw in docs:
        info = _kind_of(raw)
        doc = _prep(k, raw, info)
        name = doc["metadata"].get("name", "")
        try:
            cur: Obj | None = k.api.get(info.kind, name, doc["metadata"].get("namespace"))
        except ApiError as exc:
            if exc.reason != "NotFound":
                raise
            cur = None
        if cur is None:
            new = copy.deepcopy(doc)
            new["metadata"].setdefault("annotations", {})[_LAST] = json.dumps(raw, sort_keys=True, separators=(",", ":")) + "\n"
            merged: Obj = new
        else:
            merged = _merged(cur, doc, raw)
        pairs.append((_file_name(doc, info), _text(cur), _text(merged)))
    seed = zlib.crc32("|".join(p[0] for p in pairs).encode() + str(k.now).encode())
    live_dir = f"/tmp/LIVE-{1000000000 + seed % 3000000000}"
    merged_dir = f"/tmp/MERGED-{1000000000 + (seed * 2654435761) % 3000000000}"
    stamp = _stamp(k.now)
    changed = False
    for fname, a, b in sorted(pairs):
        if a == b:
            continue
        changed = True
        k.line(f"diff -u -N {live_dir}/{fname} {merged_dir}/{fname}")
        k.line(f"--- {live_dir}/{fname}\t{stamp}")  # kubectl writes an empty LIVE file for a new object
        k.line(f"+++ {merged_dir}/{fname}\t{stamp}")
        for line in list(difflib.unified_diff(a, b, n=3))[2:]:
            k.out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    k.cost = 3.0
    if changed:
        k.code = 1


