"""``kubectl events`` (the 1.26+ command): a namespace's events, oldest first, in its own layout.

Unlike ``get events`` it prints ``Kind/name`` as the API spells the kind, folds
repeats into ``5m (x4 over 20m)``, filters with ``--for TYPE/NAME`` and
``--types=Warning``, and reports an empty result on stderr.
"""

from __future__ import annotations

from typing import Any

from sre_env.kube.kinds import resolve_kind

from .kctx import K
from .printers import age
from .spec import KubectlError
from .tabwriter import tabwrite

__all__ = ["cmd_events"]

Obj = dict[str, Any]


def _stamp(e: Obj) -> str:
    series = e.get("series") or {}
    return series.get("lastObservedTime") or e.get("lastTimestamp") or e.get("eventTime") or e.get("firstTimestamp") or ""


def _interval(e: Obj, now: float) -> str:
    first = age(e.get("eventTime") or e.get("firstTimestamp"), now)
    series = e.get("series") or {}
    if series:
        return f"{age(series.get('lastObservedTime'), now)} (x{series.get('count', 1)} over {first})"
    if (e.get("count") or 1) > 1:
        return f"{age(e.get('lastTimestamp'), now)} (x{e['count']} over {first})"
    return first


def cmd_events(k: K) -> None:
    o = k.opts
    if o.get("watch"):
        raise KubectlError("watch (-w) is not supported: this session is not interactive; re-run the command to see new events")
    types = [t.strip() for t in str(o.get("types") or "").split(",") if t.strip()]
    for t in types:
        if t.lower() not in ("normal", "warning"):
            raise KubectlError("valid --types are Normal or Warning")
    want_types = {t.lower() for t in types}
    fmt = o.get("output")
    if fmt not in (None, "", "yaml", "json"):
        raise KubectlError(f'unable to match a printer suitable for the output format "{fmt}", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,yaml')
    everywhere = bool(o.get("all-namespaces"))
    ns = None if everywhere else k.namespace
    for_kind = for_name = None
    target = o.get("for")
    if target:
        kind_s, slash, name = str(target).partition("/")
        if not slash or not name:
            raise KubectlError("--for must be in resource/name form")
        info = resolve_kind(kind_s)
        if info is None:
            raise KubectlError(f'the server doesn\'t have a resource type "{kind_s}"', raw=True)
        for_kind, for_name = info.kind, name
    events = [e for e in k.api.list("Event", ns)
              if (not want_types or str(e.get("type", "")).lower() in want_types)
              and (for_name is None or ((e.get("involvedObject") or {}).get("kind") == for_kind and (e.get("involvedObject") or {}).get("name") == for_name))]
    if not events:
        k.err.append("No events found.\n" if everywhere else f"No events found in {k.namespace} namespace.\n")
        return
    events.sort(key=_stamp)
    if fmt in ("yaml", "json"):
        from .printers import to_json, to_yaml

        lst = {"apiVersion": "v1", "items": events, "kind": "List", "metadata": {"resourceVersion": ""}}
        k.out.append(to_yaml(lst) if fmt == "yaml" else to_json(lst) + "\n")
        return
    rows = [] if o.get("no-headers") else [("NAMESPACE\t" if everywhere else "") + "LAST SEEN\tTYPE\tREASON\tOBJECT\tMESSAGE"]
    for e in events:
        inv = e.get("involvedObject") or {}
        row = f"{_interval(e, k.now)}\t{e.get('type', '')}\t{e.get('reason', '')}\t{inv.get('kind', '')}/{inv.get('name', '')}\t{str(e.get('message') or '').strip()}"
        rows.append((f"{e['metadata'].get('namespace', '')}\t" if everywhere else "") + row)
    k.out.append(tabwrite("\n".join(rows), 6, 3) + "\n")
