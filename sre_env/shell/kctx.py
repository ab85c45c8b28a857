"""Per-invocation state of one kubectl command, and helpers every verb shares.

Handlers write to ``k.out``/``k.err`` and raise KubectlError/ApiError for
failures; the dispatcher turns those into kubectl's text and exit code. Write
helpers set ``k.mutated`` only after the API accepted the change.
"""

from __future__ import annotations

from typing import Any

from sre_env.kube.kinds import KindInfo, resolve_kind

from ..errors import ApiError
from .spec import KubectlError, Parsed

__all__ = ["K", "resolve_type", "resource_args", "kind_label"]

Obj = dict[str, Any]


class _Stream(list):
    """A buffer that also records, in ``seq``, the order stdout/stderr writes happened (what a terminal shows)."""

    __slots__ = ("seq",)

    def __init__(self, seq: list[str]) -> None:
        super().__init__()
        self.seq = seq

    def append(self, text: str) -> None:  # type: ignore[override]
        super().append(text)
        self.seq.append(text)


class K:
    """What a kubectl handler needs: the API, the effective namespace, output buffers."""

    __slots__ = ("ctx", "backend", "api", "stdin", "out", "err", "seq", "mutated", "code", "cost", "namespace", "now", "p", "path")

    def __init__(self, ctx: Any, stdin: str | None) -> None:
        self.ctx = ctx
        self.backend = ctx.backend
        self.api = ctx.backend.api
        self.stdin = stdin
        self.seq: list[str] = []
        self.out: list[str] = _Stream(self.seq)
        self.err: list[str] = _Stream(self.seq)
        self.mutated = False
        self.code = 0
        self.cost = 2.0
        self.namespace: str = ctx.namespace
        self.now: float = 0.0
        self.p: Parsed | None = None
        self.path = ""

    @property
    def opts(self) -> dict[str, Any]:
        assert self.p is not None
        return self.p.opts

    def line(self, text: str) -> None:
        self.out.append(text + "\n")

    def fail(self, text: str, code: int = 1) -> None:
        """An error printed while the command carries on (kubectl prints it and exits 1 at the end)."""
        self.err.append(text + "\n")
        self.code = code

    # ---------------------------------------------------------------- writes
    def create(self, obj: Obj) -> Obj:
        res = self.api.create(obj)
        self.mutated = True
        return res

    def replace(self, obj: Obj) -> Obj:
        res = self.api.replace(obj)
        self.mutated = True
        return res

    def patch(self, kind: str, name: str, ns: str | None, patch: Any, ptype: str = "strategic") -> Obj:
        res = self.api.patch(kind, name, ns, patch, ptype)
        self.mutated = True
        return res


def resolve_type(word: str) -> KindInfo:
    info = resolve_kind(word)
    if info is None:
        raise KubectlError(f'the server doesn\'t have a resource type "{word}"')
    return info


def kind_label(info: KindInfo) -> str:
    """``deployment.apps``: how kubectl names a kind in success messages."""
    return f"{info.singular}.{info.group}" if info.group else info.singular


def resource_args(args: list[str], allow_all: bool = False) -> list[tuple[list[KindInfo], list[str]]]:
    """kubectl's resource builder: ``TYPE[,TYPE] [NAME...]`` or ``TYPE/NAME...``.

    Returns groups of (kinds, names); names empty means "list".
    """
    if not args:
        return []
    if "/" in args[0]:
        groups: list[tuple[list[KindInfo], list[str]]] = []
        for a in args:
            if "/" not in a:
                raise KubectlError(
                    "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form "
                    "(e.g. 'kubectl get resource/<resource_name>' instead of 'kubectl get resource resource/<resource_name>'"
                )
            t, _, n = a.partition("/")
            if not n:
                raise KubectlError("arguments in resource/name form must have a single resource and name")
            info = resolve_type(t)
            if groups and groups[-1][0] == [info]:
                groups[-1][1].append(n)
            else:
                groups.append(([info], [n]))
        return groups
    kinds: list[KindInfo] = []
    for t in args[0].split(","):
        if not t:
            continue
        if allow_all and t.lower() == "all":
            kinds.extend(resolve_type(x) for x in ("pods", "services", "daemonsets", "deployments", "replicasets", "statefulsets", "horizontalpodautoscalers"))
            continue
        kinds.append(resolve_type(t))
    for a in args[1:]:
        if "/" in a:
            raise KubectlError(
                "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form "
                "(e.g. 'kubectl get resource/<resource_name>' instead of 'kubectl get resource resource/<resource_name>'"
            )
    return [(kinds, list(args[1:]))]


def ns_for(k: K, info: KindInfo) -> str | None:
    return k.namespace if info.namespaced else None


def get_obj(k: K, info: KindInfo, name: str) -> Obj:
    return k.api.get(info.kind, name, ns_for(k, info))


__all__ += ["ns_for", "get_obj", "ApiError"]
