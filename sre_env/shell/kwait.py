"""``kubectl wait``: block until a condition holds, in simulated time.

An agent's command is one step, so the wait is honest rather than instant: the
condition is checked now and, while it does not hold, the cluster is advanced a
tick at a time (``backend.advance``) until it does or ``--timeout`` runs out.
The time spent is thereby already on the clock when the command returns, so the
command's own cost stays small. Waits longer than ``MAX_WAIT_S`` are cut there
(an agent step that blocks for hours would stall an episode).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sre_env.kube.kinds import KindInfo

from ..errors import ApiError
from . import jsonpath as jp
from .kctx import K, kind_label, resource_args
from .kmisc import parse_duration
from .spec import KubectlError, UsageError

__all__ = ["MAX_WAIT_S", "cmd_wait"]

Obj = dict[str, Any]
MAX_WAIT_S = 600.0
_STEP_S = 5.0
Check = Callable[[Obj | None], bool]


def _condition_check(name: str, value: str) -> Check:
    def check(obj: Obj | None) -> bool:
        if obj is None:
            return False
        gen = (obj.get("metadata") or {}).get("generation")
        for c in (obj.get("status") or {}).get("conditions") or []:
            if str(c.get("type", "")).casefold() != name.casefold() or "status" not in c:
                continue
            observed = c.get("observedGeneration", (obj.get("status") or {}).get("observedGeneration"))
            if gen is not None and observed is not None and observed < gen:
                return False
            return str(c["status"]).casefold() == value.casefold()
        return False

    return check


def _split_jsonpath(spec: str) -> tuple[str, str | None]:
    """``{.status.phase}=Running`` -> (expression, value); the value is optional."""
    close = spec.rfind("}")
    eq = spec.find("=", close + 1 if close >= 0 else 0)
    if eq < 0:
        return spec, None
    return spec[:eq], spec[eq + 1 :]


def _jsonpath_check(spec: str) -> Check:
    expr, value = _split_jsonpath(spec)
    if not expr.strip():
        raise KubectlError("jsonpath expression cannot be empty")
    if value is not None:
        value = value.strip("'\"")
        if value == "":
            raise KubectlError("jsonpath wait value cannot be empty")
    try:
        jp.evaluate_path({}, expr)
    except (jp.JSONPathError, ValueError, IndexError) as exc:  # a malformed expression: kubectl reports the parser's words
        raise KubectlError(str(exc)) from None

    def check(obj: Obj | None) -> bool:
        if obj is None:
            return False
        found = [v for v in jp.evaluate_path(obj, expr) if v is not None]
        if not found:
            return False
        if len(found) > 1:
            raise KubectlError("given jsonpath expression matches more than one value")
        if value is None:
            return True
        if isinstance(found[0], (dict, list)):
            raise KubectlError("jsonpath leads to a nested object or list which is not supported")
        return jp.format_value(found[0]) == value

    return check


def _parse_for(cond: str) -> tuple[str, Check]:
    if cond.lower() == "delete":
        return "delete", lambda obj: obj is None
    if cond.lower() == "create":
        return "create", lambda obj: obj is not None
    if cond.startswith("condition="):
        name, _, value = cond[len("condition="):].partition("=")
        return "condition", _condition_check(name, value or "true")
    if cond.startswith("jsonpath="):
        return "jsonpath", _jsonpath_check(cond[len("jsonpath="):])
    raise KubectlError(f'unrecognized condition: "{cond}"')


def _fetch(k: K, info: KindInfo, name: str, ns: str | None) -> Obj | None:
    try:
        return k.api.get(info.kind, name, ns)
    except ApiError as exc:
        if exc.reason == "NotFound":
            return None
        raise


def cmd_wait(k: K) -> None:
    assert k.p is not None
    o = k.opts
    mode, check = _parse_for(str(o.get("for") or ""))
    raw_timeout = str(o.get("timeout") or "30s")
    neg = raw_timeout.startswith("-")
    try:
        timeout = parse_duration(raw_timeout.lstrip("-"), "--timeout")
    except KubectlError as exc:  # a pflag Duration error: cobra adds the usage hint
        raise UsageError(exc.message.replace(raw_timeout.lstrip("-"), raw_timeout), "wait") from None
    if neg and timeout > 0:
        timeout = MAX_WAIT_S
    timeout = min(timeout, MAX_WAIT_S)
    if not k.p.args:
        raise KubectlError("You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'")
    targets: list[tuple[KindInfo, str, str | None, str | None]] = []  # (info, name, namespace, uid seen at start)
    selector, everything = o.get("selector"), bool(o.get("all"))
    for kinds, names in resource_args(k.p.args):
        for info in kinds:
            ns = k.namespace if info.namespaced else None
            if names:
                for n in names:
                    obj = _fetch(k, info, n, ns)
                    if obj is None and mode != "delete" and mode != "create":
                        k.fail(str(ApiError.not_found(info.resource, n)))  # reported; the others are still waited on
                        continue
                    targets.append((info, n, ns, (obj or {}).get("metadata", {}).get("uid")))
            elif selector or everything or o.get("field-selector"):
                for obj in k.api.list(info.kind, None if o.get("all-namespaces") else ns, selector or None, o.get("field-selector") or None):
                    targets.append((info, obj["metadata"]["name"], obj["metadata"].get("namespace"), obj["metadata"].get("uid")))
            else:
                raise KubectlError("resource(s) were provided, but no name was specified")
    if not targets and mode != "delete":
        if k.code:
            return
        raise KubectlError("no matching resources found")
    waited = 0.0  # simulated seconds already advanced (the backend's clock moves in whole ticks)
    k.cost = 1.0
    for info, name, ns, uid in targets:
        while True:
            obj = _fetch(k, info, name, ns)
            if mode == "delete" and obj is not None and uid and obj["metadata"].get("uid") != uid:
                obj = None  # deleted and recreated under the same name: the one we watched is gone
            if mode == "delete" and obj is None and uid is None:
                break  # never existed: nothing to wait for, nothing printed
            if mode in ("condition", "jsonpath") and obj is None and waited > 0:
                raise ApiError.not_found(info.resource, name)
            if check(obj):
                k.line(f"{kind_label(info)}/{name} condition met")
                break
            if timeout == 0:
                raise KubectlError(f"condition not met for {info.plural}/{name}")
            left = timeout - waited
            if left <= 1e-9:
                raise KubectlError(f"timed out waiting for the condition on {info.plural}/{name}")
            step = min(_STEP_S, left)
            k.backend.advance(step)
            waited += step
