"""``kubectl get``: listing, naming, output formats (-o wide|yaml|json|name|jsonpath|custom-columns)."""

from __future__ import annotations

from typing import Any

from sre_env.kube.kinds import KindInfo

from ..errors import ApiError
from . import jsonpath as jp
from .kctx import K, resource_args
from .printers import COLUMNS, qualified, table, to_json, to_yaml
from .spec import KubectlError, UsageError
from .tabwriter import tabwrite

__all__ = ["cmd_get", "render_output", "OUTPUT_FORMATS"]

Obj = dict[str, Any]

OUTPUT_FORMATS = "custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml"

_NO_TYPE = (
    'You must specify the type of resource to get. Use "kubectl api-resources" for a complete list of supported resources.\n\n'
    "error: Required resource not specified.\n"
    'Use "kubectl explain <resource>" for a detailed description of that resource (e.g. kubectl explain pods).\n'
    "See 'kubectl get -h' for help and examples"
)


def _as_list(objs: list[Obj]) -> Obj:
    return {"apiVersion": "v1", "items": objs, "kind": "List", "metadata": {"resourceVersion": ""}}


def _sort_key(expr: str) -> Any:
    nodes = jp.compile_template(expr if expr.startswith("{") else "{" + expr + "}")
    path = [n for n in nodes if n[0] == "expr"]
    if not path:
        raise KubectlError(f"couldn't find any field with path \"{expr}\" in the list of objects")

    def key(o: Obj) -> tuple[int, float, str]:
        vals = jp._walk([o], path[0][1])
        if not vals:
            return (0, 0.0, "")
        v = vals[0]
        if isinstance(v, bool):
            return (1, float(v), "")
        if isinstance(v, (int, float)):
            return (1, float(v), "")
        return (2, 0.0, jp.format_value(v))

    return key


def render_output(k: K, fmt: str, objs: list[Obj], single: bool) -> str | None:
    """Render non-table formats; None means "use the table printer"."""
    if fmt in ("", "wide"):
        return None
    if fmt == "yaml":
        return to_yaml(objs[0] if single else _as_list(objs))
    if fmt == "json":
        return to_json(objs[0] if single else _as_list(objs)) + "\n"
    if fmt == "name":
        return "".join(f"{qualified(_info(o))}/{o['metadata']['name']}\n" for o in objs)
    name, eq, arg = fmt.partition("=")
    if name in ("jsonpath", "jsonpath-as-json"):
        if not arg:
            raise KubectlError("template format specified but no template given")
        try:
            nodes = jp.compile_template(arg)
            root = objs[0] if single else _as_list(objs)
            if name == "jsonpath-as-json":
                vals = [v for n in nodes if n[0] == "expr" for v in jp._walk([root], n[1])]
                return to_json(vals) + "\n"
            return jp.render(nodes, root)
        except jp.JSONPathError as exc:
            raise KubectlError(f"error parsing jsonpath {arg}, {exc}") from None
    if name == "custom-columns":
        if not arg:
            raise KubectlError("custom-columns format specified but no custom columns given")
        cols = []
        for spec in arg.split(","):
            head, colon, path = spec.partition(":")
            if not colon or not path:
                raise KubectlError(f'unexpected custom-columns spec: {spec}, expected <header>:<json-path-expr>')
            try:
                cols.append((head, jp.compile_template(path if path.startswith("{") else "{" + path + "}")))
            except jp.JSONPathError as exc:
                raise KubectlError(f"error parsing jsonpath {path}, {exc}") from None
        rows = [] if k.opts.get("no-headers") else ["\t".join(h for h, _ in cols)]
        for o in objs:
            cells = []
            for _, nodes in cols:
                vals = [v for n in nodes if n[0] == "expr" for v in jp._walk([o], n[1])]
                cells.append(",".join(jp.format_value(v) for v in vals) if vals else "<none>")
            rows.append("\t".join(cells))
        return tabwrite("\n".join(rows), 6, 3) + "\n"
    if name in ("go-template", "go-template-file", "template", "templatefile", "jsonpath-file", "custom-columns-file"):
        raise KubectlError(f'output format "{name}" is not supported in this environment; use -o jsonpath=... or -o custom-columns=...')
    raise KubectlError(f'unable to match a printer suitable for the output format "{fmt}", allowed formats are: {OUTPUT_FORMATS}')


def _info(o: Obj) -> KindInfo:
    from sre_env.kube.kinds import kind_info

    return kind_info(o.get("kind", ""))


def cmd_get(k: K) -> None:
    p = k.p
    assert p is not None
    o = p.opts
    if o.get("watch") or o.get("watch-only"):
        raise KubectlError("watch (-w) is not supported: this session is not interactive; re-run the command to see the current state")
    if not p.args:
        raise KubectlError(_NO_TYPE, raw=True)
    groups = resource_args(p.args, allow_all=True)
    fmt = o.get("output") or ""
    all_ns = bool(o.get("all-namespaces"))
    label_sel = o.get("selector")
    field_sel = o.get("field-selector")
    wide = fmt == "wide"
    kinds_total = sum(len(g[0]) for g in groups)
    any_named = any(g[1] for g in groups)
    multi_kind = kinds_total > 1 or p.args[0].lower() in ("all",) and True
    if fmt and fmt not in ("wide",):
        # validate the format before touching the API, as kubectl does
        name = fmt.partition("=")[0]
        if name not in OUTPUT_FORMATS.split(","):
            raise KubectlError(f'unable to match a printer suitable for the output format "{fmt}", allowed formats are: {OUTPUT_FORMATS}')
    collected: list[tuple[KindInfo, list[Obj]]] = []
    errors: list[str] = []
    for kinds, names in groups:
        for info in kinds:
            ns = None if (all_ns and not names) or not info.namespaced else k.namespace
            if names:
                found = []
                for n in names:
                    try:
                        found.append(k.api.get(info.kind, n, ns))
                    except ApiError as exc:
                        if exc.reason == "NotFound" and o.get("ignore-not-found"):
                            continue
                        errors.append(str(exc))
                collected.append((info, found))
            else:
                try:
                    items = k.api.list(info.kind, ns, label_sel or None, field_sel or None)
                except ValueError as exc:
                    raise KubectlError(str(exc)) from None
                except ApiError as exc:
                    if exc.reason == "BadRequest" and (label_sel or field_sel):
                        # kubectl's resource builder names the list that failed, keeping the server's reason
                        gvr = f"{info.api_version.rpartition('/')[0]}/{info.api_version.rpartition('/')[2]}, Resource={info.plural}"
                        raise ApiError(exc.code, exc.reason, f'Unable to find "{gvr}" that match label selector "{label_sel or ""}", field selector "{field_sel or ""}": {exc.message}') from None
                    raise
                collected.append((info, list(items)))
    sort_by = o.get("sort-by")
    if sort_by:
        keyfn = _sort_key(sort_by)
        collected = [(info, sorted(objs, key=keyfn)) for info, objs in collected]
    all_objs = [x for _, objs in collected for x in objs]
    if not all_objs:
        if not errors and not any_named:
            scope_ns = any(info.namespaced for info, _ in collected) and not all_ns
            k.err.append(f"No resources found in {k.namespace} namespace.\n" if scope_ns else "No resources found\n")
        for e in errors:
            k.fail(e)
        if fmt in ("json", "yaml") and not errors:
            k.out.append(render_output(k, fmt, [], False) or "")
        return
    single = kinds_total == 1 and any_named and len(all_objs) == 1 and sum(len(g[1]) for g in groups) == 1
    rendered = render_output(k, fmt, all_objs, single)
    if rendered is not None:
        k.out.append(rendered)
    else:
        blocks = []
        show_kind = multi_kind or bool(o.get("show-kind"))
        for info, objs in collected:
            if not objs:
                continue
            if info.kind not in COLUMNS and info.kind != "Event":
                continue
            ns_col = all_ns and info.namespaced and not any_named
            blocks.append(
                table(
                    info.kind,
                    objs,
                    k.now,
                    wide=wide,
                    namespace_col=ns_col,
                    show_labels=bool(o.get("show-labels")),
                    headers=not o.get("no-headers"),
                    name_prefix=qualified(info) + "/" if show_kind else "",
                )
            )
        k.out.append("\n\n".join(blocks) + "\n")
    for e in errors:
        k.fail(e)


def check_no_extra(k: K, n: int) -> None:
    assert k.p is not None
    if len(k.p.args) > n:
        raise UsageError(f"unexpected args: {k.p.args[n:]}", k.path, flag_error=False)
