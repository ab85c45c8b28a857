"""Reading a diagnosis: which cluster entities it names, in what role, and which mechanisms it claims.

A text is cut into sentences and clauses ("X fails | because Y is broken"). Each
token that names a component, node, pod, container or volume claim becomes a
:class:`Mention` with the role of its clause (cause, impact, ruled out, the
designated origin, hedged); each vocabulary term becomes a :class:`Claim`,
negated when a "not"/"rather than" precedes it. The grader answers its
questions from these.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from .context import NODE_PREFIXES, DiagnosisContext, dedupe, pod_owner
from .submission import Submission
from .vocabulary import compile_terms, vocabulary

__all__ = ["MAX_GRADED_CHARS", "COMMON_WORDS", "Mention", "Claim", "Analysis", "analyse", "named_entities", "entity_keys", "display_name"]

#: a diagnosis is a paragraph; the grader reads this much of it (bounds the cost of a stuffed submit)
MAX_GRADED_CHARS = 20_000


#: component names that are also ordinary words in incident prose; bare, they
#: earn credit but never blame (see the package docstring, :mod:`sre_env.rewards.diagnosis`).
COMMON_WORDS: frozenset[str] = frozenset(
    {
        "rate", "search", "user", "profile", "reservation", "recommendation", "order", "orders", "cart",
        "payment", "checkout", "email", "ad", "ads", "shipping", "currency", "quote", "product", "catalog",
        "home", "media", "text", "post", "review", "storage", "cache", "auth", "login", "config", "web",
        "api", "gateway", "database", "queue", "worker", "compose", "timeline", "social", "url",
    }
)

_KIND_PREFIXES = frozenset(
    {
        "deploy", "deployment", "deployments", "deployment.apps", "svc", "service", "services", "sts",
        "statefulset", "statefulsets", "statefulset.apps", "pod", "pods", "po", "rs", "replicaset",
        "replicasets", "replicaset.apps", "ep", "endpoints", "endpointslice", "cm", "configmap", "pvc",
        "persistentvolumeclaim",
    }
)

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./:-]*[A-Za-z0-9]|[A-Za-z0-9]")
_CUE_BEFORE = re.compile(r"\b(?:service|svc|deployment|deploy|pods?|containers?|microservices?|component|workload|app)\s+$", re.I)
_CUE_AFTER = re.compile(r"^(?:'s)?\s*(?:service|services|svc|deployment|deploy|pods?|containers?|microservices?|component|workload|app|replicas?|server|backend|process)\b", re.I)
_WEAK_STOP_BEFORE = re.compile(r"\b(?:error|success|failure|request|hit|miss|retry|drop|sampling|sample|bit|data|high|low|elevated|increased|reduced|end|response|heart|exchange|interest)\s+$", re.I)
_WEAK_STOP_AFTER = re.compile(r"^\s*(?:limit\w*|of)\b", re.I)

_SENTENCE_SPLIT = re.compile(r"(?:[.!?](?=\s|$)|;|\n)+")
_CLAUSE_SPLIT = re.compile(
    r",?\s+(?=(?:because|since|due to|caused by|as a result|leading to|resulting in|which (?:causes|caused|makes|made|leads|led)|so that|but|however|whereas|although|thus|therefore|hence)\b)"
    r"|\s+(?:-{1,2}>|=>|→)\s+",
    re.I,
)
_EXONERATE = re.compile(
    r"\b(?:is|are|was|were|looks?|seems?|stays?|remains?)\s+(?:fine|healthy|ok|okay|normal|unaffected|working)\b"
    r"|\bnot (?:the )?(?:cause|culprit|problem|issue|root cause|responsible|involved|affected|related|at fault)\b"
    r"|\bunaffected\b|\bruled out\b|\bred herring\b|\bunrelated\b|\bnothing wrong\b|\bno (?:issues?|problems?)\b"
    r"|\bworks? (?:fine|normally)\b|(?<!not )(?<!n't )\bhealthy\b",
    re.I,
)
_NEGATION_BEFORE = re.compile(
    r"(?:\b(?:not|no|never|nor|rather than|instead of|ruled out|rule out|excluded?|without)\b|n't\b)(?:[ \t]+[\w'-]+){0,3}[ \t]*$",
    re.I,
)
_HEDGE = re.compile(r"\b(?:or|either|maybe|possibly|perhaps|might|could be)\b", re.I)
_DESIGNATION = re.compile(
    r"\b(?:root[- ]?causes?|culprit|origin(?:al|ates?|ated)?|underlying cause|primary cause|source of|the cause|is causing|caused by|due to|because)\b",
    re.I,
)
_CAUSE_MARKERS = re.compile(
    r"\b(?:misconfigur\w*|wrong|incorrect|faulty|fault|broken|defect\w*|removed|deleted|unset|mismatch\w*|points? to)\b",
    re.I,
)
_IMPACT = re.compile(
    r"\b(?:crash\w*|restart\w*|fail\w*|errors?|5\d\d|unavailable|down|outage|timeouts?|timed out|time out|refused|"
    r"degraded|slow\w*|latency|cannot|can't|unable|unreachable|not ready|notready|backoff|abort\w*|exit\w*|panic\w*|"
    r"affect\w*|impact\w*|broken|lost|drop\w*|rejected|unhealthy|"
    r"not (?:healthy|running|ready|responding|starting|serving|working|reachable|available))\b",
    re.I,
)
_USER_FACING = re.compile(
    r"\b(?:users?|clients?|customers?|requests?|traffic|endpoints?|api|http|calls?|callers?|pages?|site|bookings?|searches|logins?)\b|\s/[a-z]",
    re.I,
)


@dataclass
class Mention:
    key: str
    surface: str
    strong: bool
    source: str  # text | component | affected | mechanism | details
    sentence: int
    exonerated: bool = False
    cause: bool = False
    impact: bool = False
    designated: bool = False
    hedged: bool = False


@dataclass
class Claim:
    mechanism: str
    surface: str
    negated: bool
    sentence: int


@dataclass
class Analysis:
    mentions: list[Mention] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    impact_sentences: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class _Resolver:
    """Maps tokens of a text to the cluster entities they name."""

    def __init__(self, ctx: DiagnosisContext) -> None:
        self.ctx = ctx
        self.nodes = {n.lower(): n for n in ctx.nodes}
        self.components = {c.lower(): c for c in ctx.components}
        self.aliases = {k.lower(): v for k, v in ctx.aliases.items()}

    def resolve(self, token: str) -> tuple[str, bool] | None:
        """(entity key, has an explicit cue) for one token, or None."""
        t = token.lower().rstrip("'")
        head = t.split(":", 1)[0] if ":" in t else t
        if not head:
            return None
        prefix, _, name = head.rpartition("/")
        prefix = prefix.rpartition("/")[2]
        cue = prefix in _KIND_PREFIXES or prefix in NODE_PREFIXES
        if "." in name and not name.startswith("."):
            name = name.split(".", 1)[0]
        if prefix not in _KIND_PREFIXES and name in self.nodes:
            return f"node:{name}", True
        if prefix in NODE_PREFIXES:
            return None
        if name in self.components:
            return f"component:{name}", cue or not _is_common(name)
        if name in self.aliases:
            return f"component:{self.aliases[name].lower()}", True
        owner = pod_owner(name, self.components)
        if owner is not None:
            return f"component:{owner.lower()}", True
        return None


def _is_common(name: str) -> bool:
    return name in COMMON_WORDS


def _find_mentions(text: str, resolver: _Resolver) -> list[tuple[str, str, bool, int]]:
    """(key, surface, strong, offset) for every entity named in ``text``."""
    out = []
    for m in _TOKEN.finditer(text):
        res = resolver.resolve(m.group(0))
        if res is None:
            continue
        key, strong = res
        before = text[max(0, m.start() - 24) : m.start()]
        after = text[m.end() : m.end() + 24]
        if not strong:
            quoted = before[-1:] in "`'\"" and before[-1:] != "" and after[:1] == before[-1:]
            if quoted or _CUE_BEFORE.search(before) or _CUE_AFTER.match(after):
                strong = True
            elif _WEAK_STOP_BEFORE.search(before) or _WEAK_STOP_AFTER.match(after):
                continue
        out.append((key, m.group(0), strong, m.start()))
    return out


def _mechanism_claims(text: str, details: Mapping[str, Any] | None) -> list[tuple[str, str, bool, int, int]]:
    """(mechanism id, surface, negated, start, end) for every mechanism term in ``text``."""
    out = []
    for mech in vocabulary().values():
        for pattern in compile_terms(mech, details):
            for m in pattern.finditer(text):
                negated = bool(_NEGATION_BEFORE.search(text[max(0, m.start() - 40) : m.start()]))
                out.append((mech.id, m.group(0), negated, m.start(), m.end()))
    return out


def analyse(sub: Submission, ctx: DiagnosisContext, details: Mapping[str, Any]) -> Analysis:
    resolver = _Resolver(ctx)
    an = Analysis()
    if len(sub.free_text) + len(sub.extra_text) > MAX_GRADED_CHARS:
        an.notes.append(f"only the first {MAX_GRADED_CHARS} characters of the prose were graded")
    symptomatic_keys = entity_keys(ctx, ctx.symptomatic + ctx.affected)
    # "CONSUL_ADDRESS (= consul:8500) was removed" quotes a value; it does not blame consul
    quoted_values = {str(v).lower() for v in details.values() if isinstance(v, str) and (":" in v or "." in v)}
    prose = "\n".join(t for t in (sub.free_text, sub.extra_text) if t)[:MAX_GRADED_CHARS]
    sentences = [s for s in (x.strip() for x in _SENTENCE_SPLIT.split(prose)) if s]
    # structured fields are sentences with a known role
    structured: list[tuple[str, str]] = []
    if sub.mechanism:
        structured.append(("mechanism", sub.mechanism))
    if sub.details:
        structured.append(("details", sub.details_text()))

    def analyse_sentence(idx: int, sentence: str, source: str) -> None:
        """Roles come from the clause an entity sits in ("X fails | because Y is broken").

        A cause (or impact) clause that names no entity of its own ("... because of
        bad sectors") lends its role to every entity of the sentence.
        """
        an.texts.append(sentence)
        claims = _mechanism_claims(sentence, details)
        masked = sentence
        for _, _, _, start, end in claims:
            masked = masked[:start] + " " * (end - start) + masked[end:]
        bounds: list[tuple[int, int]] = []
        pos = 0
        for m in _CLAUSE_SPLIT.finditer(sentence):
            bounds.append((pos, m.start()))
            pos = m.end()
        bounds.append((pos, len(sentence)))
        mentions = _find_mentions(sentence, resolver)
        clauses = []
        for s, e in bounds:
            text = sentence[s:e]
            exonerated = bool(_EXONERATE.search(text))
            live = [c for c in claims if s <= c[3] < e and not c[2]] if not exonerated else []
            clauses.append(
                {
                    "span": (s, e),
                    "exonerated": exonerated,
                    "cause": not exonerated and (source in ("mechanism", "details") or bool(live) or bool(_CAUSE_MARKERS.search(text)) or bool(_DESIGNATION.search(text))),
                    "impact": not exonerated and bool(_IMPACT.search(masked[s:e])),
                    "designating": not exonerated and bool(_DESIGNATION.search(text)),
                    "hedged": bool(_HEDGE.search(text)),
                    "entities": [mt for mt in mentions if s <= mt[3] < e],
                }
            )
        for mech, surface, negated, start, _ in claims:
            clause = next(c for c in clauses if c["span"][0] <= start < max(c["span"][1], c["span"][0] + 1)) if clauses else None
            an.claims.append(Claim(mech, surface, negated or bool(clause and clause["exonerated"]), idx))
        orphan_cause = any(c["cause"] and not c["entities"] for c in clauses)
        orphan_impact = any(c["impact"] and not c["entities"] for c in clauses)
        for clause in clauses:
            for key, surface, strong, offset in clause["entities"]:
                quoted = surface.lower() in quoted_values
                an.mentions.append(
                    Mention(
                        key,
                        surface,
                        strong,
                        source,
                        idx,
                        exonerated=clause["exonerated"],
                        cause=not quoted and (clause["cause"] or (orphan_cause and not clause["exonerated"])),
                        impact=not quoted and (clause["impact"] or (orphan_impact and not clause["exonerated"])),
                        designated=not quoted and clause["designating"],
                        hedged=clause["hedged"],
                    )
                )
        impact_clauses = [c for c in clauses if c["impact"]]
        if impact_clauses:
            symptomatic_named = any(k in symptomatic_keys for c in clauses if not c["exonerated"] for k, _, _, _ in c["entities"])
            user_facing = any(_USER_FACING.search(masked[c["span"][0] : c["span"][1]]) for c in impact_clauses)
            if symptomatic_named or user_facing:
                an.impact_sentences.append(sentence)

    idx = 0
    for sentence in sentences:
        analyse_sentence(idx, sentence, "text")
        idx += 1
    for source, text in structured:
        for sentence in (x.strip() for x in _SENTENCE_SPLIT.split(text)):
            if sentence:
                analyse_sentence(idx, sentence, source)
                idx += 1
    if sub.component:
        key = _structured_key(sub.component, ctx, resolver)
        if key:
            an.mentions.append(Mention(key, sub.component, True, "component", idx, cause=True, designated=True))
        else:
            an.notes.append(f"structured component {sub.component!r} names nothing in the cluster")
    for ref in sub.affected:
        key = _structured_key(ref, ctx, resolver)
        if key:
            an.mentions.append(Mention(key, ref, True, "affected", idx, impact=True))
        else:
            an.notes.append(f"affected entry {ref!r} names nothing in the cluster")
    return an


def _structured_key(ref: str, ctx: DiagnosisContext, resolver: "_Resolver") -> str | None:
    """A structured field's reference: ``kind/name`` exactly, else its first recognisable token."""
    key = ctx.key(ref)
    if key:
        return key
    for m in _TOKEN.finditer(ref):
        res = resolver.resolve(m.group(0))
        if res:
            return res[0]
    return None


def named_entities(text: str, context: DiagnosisContext) -> list[str]:
    """The cluster entities a text names, in order (``node/worker-1``, ``mongodb-rate``).

    Bare common words ("rate") are included only with a cue, as for blame.
    """
    out = [display_name(key) for key, _, strong, _ in _find_mentions(text, _Resolver(context)) if strong]
    return list(dedupe(out))


def entity_keys(ctx: DiagnosisContext, refs: Iterable[str]) -> set[str]:
    return {k for k in (ctx.key(r) for r in refs) if k}


def display_name(key: str) -> str:
    kind, _, name = key.partition(":")
    return f"node/{name}" if kind == "node" else name
