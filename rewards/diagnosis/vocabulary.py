"""The mechanism vocabulary: how people describe fault mechanisms, and which one a root cause is.

Each scenario family declares its own :class:`~sre_env.rewards.base.Mechanism`
beside its scenario (the scenario's ``mechanism``); the scenario registry
collects them. This module keeps only what no family owns — the generic rival
mechanisms a diagnosis may wrongly claim and the words that name each layer —
and merges the two into the grader's :func:`vocabulary`, read from the registry
whenever the grader asks, so it never depends on what was imported first.
"""

from __future__ import annotations

import re
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping

from sre_env.envs import registry
from sre_env.rewards.base import Mechanism

if TYPE_CHECKING:
    from sre_env.envs.base import RootCause

__all__ = ["SHARED_MECHANISMS", "LAYER_ALIASES", "vocabulary", "mechanism_id_for", "compile_terms", "layer_of"]

#: Mechanisms no scenario family owns: the generic rivals a diagnosis may claim (a bug, resource
#: exhaustion, "the network"), recognised so that a wrong claim costs C3. Each family's own
#: mechanism is its scenario's ``mechanism`` (see :func:`vocabulary`).
SHARED_MECHANISMS: tuple[Mechanism, ...] = (
    Mechanism(
        "application_bug",
        "application",
        "a bug in the application code",
        (
            r"\bbug(?:s|gy)?\b",
            r"\bcode (?:defect|regression|error|issue)s?\b",
            r"\bsoftware (?:defect|fault|error)s?\b",
            r"\bregression\b",
            r"\bmemory leak\w*\b",
            r"\bnull pointer\b|\bnil pointer\b|\bsegfault\w*\b",
        ),
    ),
    Mechanism(
        "resource_exhaustion",
        "os",
        "resource exhaustion (memory, CPU, disk space, file descriptors)",
        (
            r"\bout of memory\b",
            r"\boom[- ]?kill\w*\b|\boom\b",
            r"\bmemory (?:limit|pressure|exhaustion)\b",
            r"\bcpu (?:throttl\w*|starvation|limits?|exhaustion)\b",
            r"\bno space left\b|\bdisk (?:is )?full\b|\bfull disk\b",
            r"\bresource (?:exhaustion|starvation)\b",
            r"\btoo many open files\b|\bfile descriptor (?:limit|exhaustion)\b",
        ),
    ),
    Mechanism(
        "network_fault",
        "network",
        "a network fault (partition, loss, delay, DNS)",
        (
            r"\bnetwork (?:partition|issue|problem|failure|outage|policy|fault|delay)s?\b",
            r"\bpacket (?:loss|drops?)\b",
            r"\bdns (?:failure|issue|problem|resolution|misconfig\w*|error)s?\b",
            r"\bfirewall\b",
        ),
    ),
    Mechanism(
        "node_failure",
        "kubernetes",
        "a node or its kubelet is down",
        (
            r"\bnode (?:is |went )?(?:down|notready|not ready|offline|unreachable)\b",
            r"\bkubelet (?:is )?(?:down|stopped|crash\w*|not running|dead)\b",
        ),
    ),
    Mechanism(
        "image_error",
        "kubernetes",
        "a wrong or unpullable container image",
        (r"\bimage ?pull\w*\b", r"\b(?:wrong|bad|missing|broken) (?:container )?image\b", r"\berrimagepull\b"),
    ),
    Mechanism(
        "probe_misconfig",
        "kubernetes",
        "a misconfigured liveness/readiness probe",
        (r"\b(?:liveness|readiness|startup) probes?\b",),
    ),
    Mechanism(
        "selector_mismatch",
        "kubernetes",
        "a Service selector that matches no pods",
        (r"\b(?:label )?selectors? (?:mismatch|is wrong|misconfigured)\b", r"\bwrong (?:label )?selector\b", r"\blabel mismatch\b"),
    ),
)


@cache
def vocabulary() -> Mapping[str, Mechanism]:
    """Every mechanism the grader recognises, by id: the shared rivals, then each family's in catalog order.

    One vocabulary per id: a family that reuses a shared id must reuse its vocabulary too.
    """
    merged = {m.id: m for m in SHARED_MECHANISMS}
    for mech in registry.mechanisms().values():
        if merged.setdefault(mech.id, mech) != mech:
            raise ValueError(f"mechanism id {mech.id!r} is a shared mechanism with a different vocabulary")
    return MappingProxyType(merged)


#: layer -> words that name it (for the structured ``layer`` field)
LAYER_ALIASES: Mapping[str, tuple[str, ...]] = {
    "hardware": ("hardware", "hw", "disk", "storage", "physical", "device"),
    "application": ("application", "app", "code", "software", "config", "configuration"),
    "kubernetes": ("kubernetes", "k8s", "kube", "orchestration", "service", "manifest"),
    "network": ("network", "networking", "dns"),
    "os": ("os", "kernel", "operating system", "node os", "system"),
    "operator": ("operator", "human", "operator error"),
}


def mechanism_id_for(root_cause: "RootCause") -> str:
    """The vocabulary entry that describes a root cause: declared, else matched by its words."""
    declared = (root_cause.details or {}).get("mechanism_id")
    if isinstance(declared, str) and declared in vocabulary():
        return declared
    text = f"{root_cause.mechanism}\n{root_cause.summary}"
    best, best_hits = "", 0
    for mech in vocabulary().values():
        if mech.layer != root_cause.layer:
            continue
        hits = sum(1 for p in compile_terms(mech, root_cause.details) if p.search(text))
        if hits > best_hits:
            best, best_hits = mech.id, hits
    return best


_TERM_CACHE: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[re.Pattern[str], ...]] = {}


def compile_terms(mech: Mechanism, details: Mapping[str, Any] | None) -> tuple[re.Pattern[str], ...]:
    """A mechanism's terms as patterns, their ``{key}`` slots filled from a root cause's details (cached)."""
    slots = tuple(sorted((k, str(v)) for k, v in (details or {}).items() if isinstance(v, (str, int)) and not isinstance(v, bool)))
    key = (mech.id, slots)
    cached = _TERM_CACHE.get(key)
    if cached is not None:
        return cached
    values = dict(slots)
    out = []
    for term in mech.terms:
        needed = re.findall(r"\{([A-Za-z_]\w*)\}", term)
        if any(n not in values for n in needed):
            continue
        filled = term
        for n in needed:
            filled = filled.replace("{" + n + "}", re.escape(values[n]))
        out.append(re.compile(filled, re.I))
    if len(_TERM_CACHE) > 4096:
        _TERM_CACHE.clear()
    _TERM_CACHE[key] = tuple(out)
    return _TERM_CACHE[key]


def layer_of(text: str) -> str | None:
    """The layer a structured ``layer`` field names ("k8s" -> "kubernetes"), or None."""
    t = text.strip().lower()
    for layer, words in LAYER_ALIASES.items():
        if t == layer or t in words:
            return layer
    return None
