"""Regenerate ``sre_env/kube/api_types.py``: the field names, types and required fields of the served kinds.

The served OpenAPI documents, the decoding of request bodies and admission
(``sre_env.kube.decoding``, ``sre_env.kube.validation``) need the built-in
types' fields (names, JSON types, which the OpenAPI marks required). They are
API facts kept in the Kubernetes vocabulary layer; this script
reads them from the official ``kubernetes`` Python client's models (the
``[k8s]`` extra), which are generated from the API server's own OpenAPI, and
writes them as a plain table so ``sre-env serve`` does not need the client at
run time::

    python -m sre_env.serve.kube_types_gen > sre_env/kube/api_types.py

Only names, types and required flags are taken (no descriptions). It lives
with the server because the derived kinds it covers are listed there (``kube_virtual``). Custom resources
(``CUSTOM_KINDS``) and kinds the client lacks are left out: they are served
with ``x-kubernetes-preserve-unknown-fields``.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from sre_env.kube.kinds import KINDS

#: apimachinery's meta/v1 types: their own package in the API's definition names
_META = {"ObjectMeta", "ListMeta", "LabelSelector", "LabelSelectorRequirement", "ManagedFieldsEntry", "OwnerReference", "Condition", "Time", "MicroTime"}
_PKG = {"coordination.k8s.io": "coordination", "discovery.k8s.io": "discovery", "": "core", "apps": "apps", "batch": "batch", "networking.k8s.io": "networking", "storage.k8s.io": "storage", "rbac.authorization.k8s.io": "rbac", "admissionregistration.k8s.io": "admissionregistration", "scheduling.k8s.io": "scheduling", "autoscaling": "autoscaling"}
_SCALAR = {"str": "string", "int": "integer", "bool": "boolean", "float": "number", "datetime": "date-time", "date": "date", "object": "any", "bytearray": "string", "bytes": "string"}
#: resource.Quantity fields (a string or a number on the wire; the client's models say ``str``)
_QUANTITY = {"limits", "requests", "capacity", "allocatable", "hard", "used", "sizeLimit", "overhead", "allocatedResources", "averageValue"}
_QUANTITY_IN = {("V2MetricTarget", "value"), ("V2MetricValueStatus", "value")}
#: intstr.IntOrString fields (the client's models say ``object``)
_INT_OR_STRING = {"targetPort", "port", "maxSurge", "maxUnavailable"}
_PREFIX = re.compile(r"^(?:[A-Z][a-z]+)?V\d+(?:alpha\d+|beta\d+)?(?=[A-Z])")


def _root_class(kind: str, api_version: str) -> str:
    ver = api_version.rsplit("/", 1)[-1]
    return ("CoreV1" if kind == "Event" else ver[0].upper() + ver[1:]) + kind


def _definition(cls: str, kind_group: str, kind_version: str) -> str:
    name = _PREFIX.sub("", cls)
    if name in _META:
        return f"io.k8s.apimachinery.pkg.apis.meta.v1.{name}"
    if kind_group == "apiregistration.k8s.io":
        return f"io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.{name}"
    ver = re.match(r"^(?:[A-Z][a-z]+)?(V\d+(?:alpha\d+|beta\d+)?)", cls)
    return f"io.k8s.api.{_PKG.get(kind_group, 'core')}.{(ver.group(1).lower() if ver else kind_version)}.{name}"


def generate() -> tuple[dict[str, dict[str, str]], dict[str, str], dict[str, tuple[str, ...]]]:
    """({definition: {jsonField: type}}, {Kind: definition of its root}, {definition: required jsonFields})."""
    from kubernetes.client import models

    types: dict[str, dict[str, str]] = {}
    roots: dict[str, str] = {}
    required: dict[str, tuple[str, ...]] = {}
    names: dict[str, str] = {}

    def encode(t: str, group: str, version: str, queue: list[tuple[str, str, str]]) -> str:
        m = re.fullmatch(r"List\[(.+)\]", t)
        if m:
            return "[" + encode(m.group(1), group, version, queue) + "]"
        m = re.fullmatch(r"Dict\[str, (.+)\]", t)
        if m:
            return "{" + encode(m.group(1), group, version, queue) + "}"
        if t in _SCALAR:
            return _SCALAR[t]
        if t not in names:
            names[t] = _definition(t, group, version)
            queue.append((t, group, version))
        return names[t]

    # core kinds first (with PodTemplate, not served but holding the workloads' pod template):
    # the types they reach belong to core/v1, as in the API's own definitions
    from sre_env.serve.kube_virtual import VIRTUAL

    served = [*((k.kind, k.api_version) for k in KINDS), *((v.kind, v.api_version) for v in VIRTUAL)]
    core_first = [("PodTemplate", "v1"), *sorted(served, key=lambda kv: ("/" in kv[1], kv[1]))]
    for kind, api_version in core_first:
        group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
        cls = _root_class(kind, api_version)
        model: Any = getattr(models, cls, None)
        if model is None:
            continue
        queue = [(cls, group, api_version.rsplit("/", 1)[-1])]
        names.setdefault(cls, _definition(cls, group, queue[0][2]))
        if kind != "PodTemplate":
            roots[kind] = names[cls]
        while queue:
            c, group, version = queue.pop(0)
            if names[c] in types:
                continue
            m_cls = getattr(models, c)
            fields: dict[str, str] = {}
            types[names[c]] = fields
            for attr, t in m_cls.openapi_types.items():
                name = m_cls.attribute_map[attr]
                encoded = encode(t, group, version, queue)
                if name in _QUANTITY or (c, name) in _QUANTITY_IN:
                    encoded = encoded.replace("string", "quantity")
                elif name in _INT_OR_STRING and encoded == "any":
                    encoded = "int-or-string"
                fields[name] = encoded
            must = tuple(sorted(m_cls.attribute_map[a] for a, f in m_cls.model_fields.items() if f.is_required() and a in m_cls.attribute_map))
            if must:
                required[names[c]] = must
    return types, roots, required


def render(types: dict[str, dict[str, str]], roots: dict[str, str], required: dict[str, tuple[str, ...]]) -> str:
    out = [
        '"""Fields of the served built-in kinds: ``{definition: {jsonField: type}}`` (generated; do not edit).',
        "",
        "Regenerate with ``python -m sre_env.serve.kube_types_gen`` (see there). A type is",
        "``string``/``integer``/``boolean``/``number``/``date-time``/``quantity``/``int-or-string``/",
        "``any``, a definition name, ``[T]`` (a list of T) or ``{T}`` (a map to T). ``REQUIRED``",
        "lists the fields the API's OpenAPI marks required in each definition.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "#: the definition of each served kind's object",
        "ROOTS: dict[str, str] = {",
        *(f"    {k!r}: {v!r}," for k, v in sorted(roots.items())),
        "}",
        "",
        "TYPES: dict[str, dict[str, str]] = {",
    ]
    for name in sorted(types):
        out.append(f"    {name!r}: {{{', '.join(f'{k!r}: {v!r}' for k, v in types[name].items())}}},")
    out.append("}")
    out += ["", "REQUIRED: dict[str, tuple[str, ...]] = {"]
    out += [f"    {name!r}: {required[name]!r}," for name in sorted(required)]
    out.append("}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render(*generate()))
