"""Reading a ``submit`` argument: free prose, optionally with a structured JSON object.

The grader must grade whatever it is given, so parsing never raises: malformed
JSON, a non-object or fields of the wrong type fall back to free text with a
note saying what was ignored.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Mapping

__all__ = ["Submission", "parse_submission"]


@dataclass(frozen=True)
class Submission:
    """What the agent submitted: free text plus the optional structured fields.

    ``text`` is exactly what was submitted (the cache key of the LLM judge);
    ``free_text`` is the prose without the JSON object. Structured fields are
    ``None``/empty when absent or unusable, and ``notes`` say why.
    """

    text: str
    free_text: str
    component: str | None = None
    namespace: str | None = None
    layer: str | None = None
    mechanism: str | None = None
    details: Mapping[str, Any] | str | None = None
    affected: tuple[str, ...] = ()
    extra_text: str = ""
    structured: bool = False
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "free_text": self.free_text,
            "structured": self.structured,
            "component": self.component,
            "namespace": self.namespace,
            "layer": self.layer,
            "mechanism": self.mechanism,
            "details": dict(self.details) if isinstance(self.details, Mapping) else self.details,
            "affected": list(self.affected),
            "notes": list(self.notes),
        }

    def details_text(self) -> str:
        """The structured details as prose lines ("key: value"), for matching."""
        if isinstance(self.details, Mapping):
            return "\n".join(f"{k}: {_render_value(v)}" for k, v in self.details.items())
        return self.details or ""


def _render_value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(_render_value(v) for v in value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_render_value(v)}" for k, v in value.items())
    return str(value)


_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n(.*?)```", re.S)
_KNOWN_KEYS = ("component", "namespace", "layer", "mechanism", "details", "affected")
_TEXT_KEYS = ("summary", "impact", "diagnosis", "description")


def _find_json(text: str) -> tuple[Any, str, bool, str]:
    """Locate the JSON object: (value or None, text without it, looked like JSON, error)."""
    stripped = text.strip()
    decoder = json.JSONDecoder()
    if stripped.startswith("{"):
        try:
            return json.loads(stripped), "", True, ""
        except ValueError as exc:
            err = str(exc)
            # a JSON object followed by prose is still the whole-text form
            try:
                value, end = decoder.raw_decode(stripped)
                return value, stripped[end:].strip(), True, ""
            except ValueError:
                return None, text, True, err
    if stripped.startswith("["):
        try:
            return json.loads(stripped), "", True, ""
        except ValueError:
            pass
    fence = _FENCE.search(text)
    if fence:
        try:
            return json.loads(fence.group(1)), (text[: fence.start()] + text[fence.end() :]).strip(), True, ""
        except ValueError as exc:
            return None, text, True, str(exc)
    if stripped.endswith("}"):
        # right to left: the shortest suffix that is a whole object is the trailing one,
        # however many braces the prose before it holds
        starts = [m.start() for m in re.finditer(r"\{", stripped)][-256:]
        for i in reversed(starts):
            try:
                value, end = decoder.raw_decode(stripped, i)
            except ValueError:
                continue
            if end == len(stripped):
                return value, stripped[:i].strip(), True, ""
        return None, text, True, "no complete JSON object at the end of the text"
    return None, text, False, ""


def parse_submission(text: str | None) -> Submission:
    """Split a ``submit`` argument into prose and structured fields; never raises.

    The JSON object may be the whole text, a fenced ```json block, or a trailing
    ``{...}``. Malformed JSON, a non-object, or fields of the wrong type fall back
    to free text with a note, because a grader must grade whatever it is given.
    """
    if text is None:
        return Submission("", "", notes=("no diagnosis was submitted",))
    if not isinstance(text, str):
        text = str(text)
    value, free, looked, error = _find_json(text)
    notes: list[str] = []
    if value is None:
        if looked:
            notes.append(f"malformed JSON ignored, graded as free text ({error})")
        return Submission(text, text.strip(), notes=tuple(notes))
    if not isinstance(value, dict):
        notes.append(f"JSON {type(value).__name__} is not an object; graded as free text")
        return Submission(text, text.strip(), notes=tuple(notes))

    def as_str(key: str) -> str | None:
        v = value.get(key)
        if v is None:
            return None
        if isinstance(v, (str, int, float)) and not isinstance(v, bool):
            return str(v).strip() or None
        notes.append(f"field {key!r} should be a string; ignored")
        return None

    details: Mapping[str, Any] | str | None = None
    raw_details = value.get("details")
    if isinstance(raw_details, dict):
        details = raw_details
    elif isinstance(raw_details, (str, int, float)) and not isinstance(raw_details, bool):
        details = str(raw_details)
    elif isinstance(raw_details, list):
        details = _render_value(raw_details)
    elif raw_details is not None:
        notes.append("field 'details' should be an object or a string; ignored")

    affected: tuple[str, ...] = ()
    raw_affected = value.get("affected")
    if isinstance(raw_affected, list):
        affected = tuple(str(a).strip() for a in raw_affected if isinstance(a, (str, int)) and str(a).strip())
        if len(affected) != len(raw_affected):
            notes.append("non-string entries of 'affected' ignored")
    elif isinstance(raw_affected, str):
        affected = tuple(a.strip() for a in re.split(r"[,\n]", raw_affected) if a.strip())
    elif raw_affected is not None:
        notes.append("field 'affected' should be a list of strings; ignored")

    extra = "\n".join(str(value[k]) for k in _TEXT_KEYS if isinstance(value.get(k), str))
    unknown = sorted(set(value) - set(_KNOWN_KEYS) - set(_TEXT_KEYS))
    if unknown:
        notes.append(f"unknown fields ignored: {', '.join(map(str, unknown))}")
    return Submission(
        text=text,
        free_text=free,
        component=as_str("component"),
        namespace=as_str("namespace"),
        layer=as_str("layer"),
        mechanism=as_str("mechanism"),
        details=details,
        affected=affected,
        extra_text=extra,
        structured=True,
        notes=tuple(notes),
    )
