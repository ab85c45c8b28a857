"""The API's name and key formats, with apimachinery's messages (``util/validation``).

Each check returns the list of problems, worded as the API server words them
(empty when the value is fine): object names (DNS-1123 subdomains and labels,
DNS-1035 labels for Services, path segments for RBAC objects), label keys and
values, ConfigMap/Secret keys, port names and percentages. Which rule names
which kind is data in :data:`NAME_RULES`.
"""

from __future__ import annotations

import re

__all__ = [
    "NAME_RULES", "is_api_service_name", "is_config_map_key", "is_dns1035_label", "is_dns1123_label", "is_dns1123_subdomain",
    "is_label_value", "is_path_segment", "is_percent", "is_port_name", "is_qualified_name", "name_problems",
]

_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QNAME_FMT + ")?"
_CM_KEY_FMT = "[-._a-zA-Z0-9]+"
_PERCENT_FMT = "[0-9]+%"

_LABEL = re.compile(f"^{_LABEL_FMT}$")
_SUBDOMAIN = re.compile(f"^{_SUBDOMAIN_FMT}$")
_DNS1035 = re.compile(f"^{_DNS1035_FMT}$")
_QNAME = re.compile(f"^{_QNAME_FMT}$")
_LABEL_VALUE = re.compile(f"^{_LABEL_VALUE_FMT}$")
_CM_KEY = re.compile(f"^{_CM_KEY_FMT}$")
_PERCENT = re.compile(f"^{_PERCENT_FMT}$")
_PORT_CHARS = re.compile("^[-a-z0-9]+$")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``RegexError``: the message, examples, and the regex (with the API's own punctuation)."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    return msg + " (e.g. " + " or ".join(f"'{e}', " for e in examples) + f"regex used for validation is '{fmt}')"


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


def is_dns1123_label(value: str) -> list[str]:
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _LABEL.match(value):
        if _SUBDOMAIN.match(value):
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", _LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    errs = [_max_len(253)] if len(value) > 253 else []
    if not _SUBDOMAIN.match(value):
        errs.append(_regex_error("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", _SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _DNS1035.match(value):
        errs.append(_regex_error("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character", _DNS1035_FMT, "my-name", "abc-123"))
    return errs


def is_path_segment(value: str) -> list[str]:
    """``path.IsValidPathSegmentName``: the names of RBAC objects."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


_QNAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"


def is_qualified_name(value: str) -> list[str]:
    """A label key, annotation key or finalizer: an optional DNS subdomain prefix and ``/``, then a name."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in is_dns1123_subdomain(prefix)]
    else:
        return ["a qualified name " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc") + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len(63))
    if not _QNAME.match(name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_label_value(value: str) -> list[str]:
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _LABEL_VALUE.match(value):
        errs.append(_regex_error("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_config_map_key(value: str) -> list[str]:
    errs = [_max_len(253)] if len(value) > 253 else []
    if not _CM_KEY.match(value):
        errs.append(_regex_error("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", _CM_KEY_FMT, "key.name", "KEY_NAME", "key-name"))
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def is_port_name(value: str) -> list[str]:
    errs = [_max_len(15)] if len(value) > 15 else []
    if not _PORT_CHARS.match(value):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", value):
        errs.append("must contain at least one letter (a-z)")
    if "--" in value:
        errs.append("must not contain consecutive hyphens")
    if value and (value[0] == "-" or value[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def is_percent(value: str) -> list[str]:
    if _PERCENT.match(value):
        return []
    return [_regex_error("a valid percent string must be a numeric string followed by an ending '%'", _PERCENT_FMT, "1%", "93%")]


def is_api_service_name(value: str) -> list[str]:
    """An APIService is named ``<version>.<group>`` (``v1.`` for the core group)."""
    version, dot, group = value.partition(".")
    if not dot:
        return ["must be in the form: <version>.<group>"]
    return is_dns1035_label(version) + (is_dns1123_subdomain(group) if group else [])


_RULES = {"subdomain": is_dns1123_subdomain, "label": is_dns1123_label, "dns1035": is_dns1035_label, "segment": is_path_segment, "apiservice": is_api_service_name}

#: which name rule each kind's ``metadata.name`` follows (a kind not listed: a DNS-1123 subdomain)
NAME_RULES: dict[str, str] = {
    "Namespace": "label",
    "StatefulSet": "label",
    "Service": "dns1035",
    "Role": "segment",
    "RoleBinding": "segment",
    "ClusterRole": "segment",
    "ClusterRoleBinding": "segment",
    "APIService": "apiservice",
}


def name_problems(kind: str, name: str, *, prefix: bool = False) -> list[str]:
    """What is wrong with ``name`` for ``kind`` (``prefix``: a ``generateName``, which may end in ``-``)."""
    rule = NAME_RULES.get(kind, "subdomain")
    if prefix and rule != "segment" and name.endswith("-"):
        name = name[:-1] + "a"  # maskTrailingDash: the generated suffix follows the dash
    return _RULES[rule](name)
