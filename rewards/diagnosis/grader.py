"""The deterministic diagnosis grader: the nine questions answered from the analysis, with evidence.

Compares what a submission names and claims (:mod:`.analysis`) with the
scenario's root cause and the incident's context; every answer carries the
evidence it rests on, so a grade can be audited and disputed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from sre_env.rewards.base import OracleResult

from .analysis import Mention, analyse, display_name, entity_keys
from .checklist import result_from_answers
from .context import DiagnosisContext, dedupe
from .submission import Submission, parse_submission
from .vocabulary import layer_of, mechanism_id_for, vocabulary

if TYPE_CHECKING:
    from sre_env.envs.base import RootCause

__all__ = ["grade_diagnosis"]


def grade_diagnosis(submission: Submission | str | None, root_cause: "RootCause", context: DiagnosisContext) -> OracleResult:
    """Answer the 9-question checklist for one submission against the ground truth.

    Returns an :class:`OracleResult` named ``diagnosis``: ``score`` is the
    weighted checklist score, ``passed`` is ``score >= 0.70``, one check per
    question (its evidence in ``detail``), and ``details`` holds the questions,
    per-dimension scores, the parsed submission, the recognised mentions and
    mechanism claims.
    """
    sub = submission if isinstance(submission, Submission) else parse_submission(submission)
    details = dict(root_cause.details or {})
    mech_id = context.mechanism_id or mechanism_id_for(root_cause)
    mech = vocabulary().get(mech_id)
    an = analyse(sub, context, details)

    root_key = context.key(root_cause.component)
    affected = entity_keys(context, context.affected or root_cause.affected)
    cascade = affected - {root_key}
    symptomatic = affected | entity_keys(context, context.symptomatic) | ({root_key} if root_key else set())
    live = [m for m in an.mentions if not m.exonerated]
    ruled_out = sorted({display_name(m.key) for m in an.mentions if m.exonerated})

    def blame_worthy(m: Mention) -> bool:
        # a bare common word ("rate") only counts when it is someone who is involved
        return m.strong or m.key in symptomatic

    answers: dict[str, tuple[bool, str]] = {}

    # ---- localization
    root_mentions = [m for m in live if m.key == root_key]
    # "worker-1 or worker-2 or worker-3" is a guess, not a localization
    kind = (root_key or ":").partition(":")[0]
    alternatives = sorted(
        display_name(m.key) for m in live
        if m.hedged and m.cause and m.key.startswith(kind + ":") and m.key != root_key and blame_worthy(m)
    )
    hedge_only = list(dedupe(alternatives)) if root_mentions and all(m.hedged for m in root_mentions) else []
    ns_wrong = (
        sub.namespace is not None
        and not root_cause.component.startswith("node/")
        and sub.namespace.strip().lower() != root_cause.namespace.lower()
    )
    if root_key is None:
        answers["L1"] = (False, f"root component {root_cause.component} is not a known cluster name")
    elif ns_wrong:
        answers["L1"] = (False, f"structured namespace {sub.namespace!r} is not {root_cause.namespace!r}")
    elif root_mentions and hedge_only:
        answers["L1"] = (False, f"hedges: {root_cause.component} only as one of {', '.join([display_name(root_key), *hedge_only])}")
    elif root_mentions:
        answers["L1"] = (True, f"names {root_cause.component} as {_surfaces(root_mentions)}")
    else:
        named = sorted({display_name(m.key) for m in live})
        answers["L1"] = (False, f"{root_cause.component} is never named" + (f" (names: {', '.join(named)})" if named else " (no cluster component named)"))

    designated = {m.key for m in live if m.designated and blame_worthy(m)}
    root_as_cause = [m for m in root_mentions if m.cause]
    wrong_origin = sorted(display_name(k) for k in designated & cascade) if root_key not in designated else []
    if not root_as_cause:
        answers["L2"] = (False, f"{root_cause.component} is not presented as the cause" + (f" ({display_name(root_key)} is only mentioned as affected)" if root_mentions else ""))
    elif wrong_origin:
        answers["L2"] = (False, f"names {', '.join(wrong_origin)} (a cascade component) as the origin instead of {root_cause.component}")
    else:
        answers["L2"] = (True, f"{root_cause.component} is given as the cause ({_surfaces(root_as_cause)})" + (f"; cascade {', '.join(sorted(display_name(k) for k in cascade))} not made the origin" if cascade else ""))

    blamed = {m.key for m in live if m.cause and blame_worthy(m)}
    healthy_blamed = sorted(display_name(k) for k in blamed - symptomatic)
    if not blamed:
        answers["L3"] = (False, "blames no component, so there is nothing to credit")
    elif healthy_blamed:
        answers["L3"] = (False, f"blames healthy {', '.join(healthy_blamed)}")
    else:
        answers["L3"] = (True, f"blames only {', '.join(sorted(display_name(k) for k in blamed))}, all involved in the incident")

    # ---- characterization
    live_claims = [c for c in an.claims if not c.negated]
    right = [c for c in live_claims if c.mechanism == mech_id]
    if mech is None:
        words = [w for w in re.findall(r"[a-z]{4,}", root_cause.mechanism.lower()) if w not in {"with", "from", "that", "fail", "fails"}]
        joined = "\n".join(an.texts).lower()
        hit = [w for w in words if w in joined]
        ok = bool(words) and len(hit) * 2 >= len(words)
        answers["C1"] = (ok, f"shares {len(hit)}/{len(words)} words of the mechanism {root_cause.mechanism!r}: {', '.join(hit) or 'none'}")
    elif right:
        answers["C1"] = (True, f"describes {mech.title}: {_quote(c.surface for c in right)}")
    else:
        neg = [c for c in an.claims if c.negated and c.mechanism == mech_id]
        answers["C1"] = (False, f"never describes {mech.title}" + (f" (mentioned only negated: {_quote(c.surface for c in neg)})" if neg else ""))

    keys = [k for k in (mech.detail_keys if mech else ()) if k in details] or [
        k for k, v in details.items() if not (isinstance(v, str) and context.key(v))
    ]
    haystack = "\n".join([sub.free_text, sub.extra_text, sub.details_text(), sub.mechanism or ""])
    found = []
    for k in keys:
        for p in _value_patterns(details[k]):
            m = p.search(haystack)
            if m:
                found.append(f"{k}={m.group(0)}")
                break
    if found:
        answers["C2"] = (True, f"quotes {', '.join(found)}")
    else:
        answers["C2"] = (False, f"quotes none of: {', '.join(keys) or 'no concrete values known'}")

    claimed = {c.mechanism for c in live_claims}
    # concurrent faults: the other faults' mechanisms and layers are true claims too
    also = tuple(x for x in (root_cause.details or {}).get("also_mechanisms", ()) if isinstance(x, str))
    allowed = {mech_id, *(mech.compatible if mech else ()), *also}
    wrong = sorted(claimed - allowed)
    layer_claim = layer_of(sub.layer) if sub.layer else None
    also_layers = {vocabulary()[m].layer for m in also if m in vocabulary()}
    layer_wrong = sub.layer is not None and layer_claim != root_cause.layer and layer_claim not in also_layers
    if wrong or layer_wrong:
        parts = [f"claims {m} ({_quote(c.surface for c in live_claims if c.mechanism == m)})" for m in wrong]
        if layer_wrong:
            parts.append(f"layer {sub.layer!r} is not {root_cause.layer!r}")
        answers["C3"] = (False, "; ".join(parts))
    elif not claimed and layer_claim is None:
        answers["C3"] = (False, "claims no fault type, so there is nothing to credit")
    else:
        answers["C3"] = (True, "claims only " + ", ".join(sorted(claimed) + ([f"layer {layer_claim}"] if layer_claim else [])))

    # ---- scope
    implicated = {m.key for m in live if (m.cause or m.impact) and blame_worthy(m)}
    bystanders = sorted(display_name(k) for k in implicated - symptomatic)
    if not implicated:
        answers["S1"] = (False, "implicates no component, so there is nothing to credit")
    elif bystanders:
        answers["S1"] = (False, f"implicates bystanders {', '.join(bystanders)}")
    else:
        answers["S1"] = (True, f"implicates only {', '.join(sorted(display_name(k) for k in implicated))}")

    named = {m.key for m in live}
    missing = sorted(display_name(k) for k in affected - named)
    if not affected:
        answers["S2"] = (False, "the ground truth lists no affected component")
    elif missing:
        answers["S2"] = (False, f"does not name affected {', '.join(missing)}")
    else:
        answers["S2"] = (True, f"names every affected component: {', '.join(sorted(display_name(k) for k in affected))}")

    if an.impact_sentences:
        answers["S3"] = (True, f"describes impact: {_quote(an.impact_sentences[:2])}")
    else:
        answers["S3"] = (False, "describes no impact on the affected components or their users")

    return result_from_answers(
        "diagnosis",
        answers,
        mechanism_id=mech_id,
        submission=sub.as_dict(),
        mentions=[
            {"entity": display_name(m.key), "text": m.surface, "source": m.source, "strong": m.strong, "cause": m.cause, "impact": m.impact, "origin": m.designated, "ruled_out": m.exonerated}
            for m in an.mentions
        ],
        claims=[{"mechanism": c.mechanism, "text": c.surface, "negated": c.negated} for c in an.claims],
        ruled_out=ruled_out,
        notes=list(sub.notes) + an.notes,
    )


def _surfaces(mentions: Sequence[Mention]) -> str:
    return _quote(m.surface for m in mentions)


def _quote(items: Iterable[str]) -> str:
    seen = dedupe(items)
    return ", ".join(repr(s if len(s) <= 120 else s[:117] + "...") for s in seen[:4])


def _value_patterns(value: Any) -> list[re.Pattern[str]]:
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [p for v in value for p in _value_patterns(v)]
    if isinstance(value, int):
        return [re.compile(rf"(?<![\d.]){value}(?!\d)")]
    s = str(value).strip()
    if not s:
        return []
    forms = [s]  # the full form first, so evidence quotes it when both match
    if s.startswith("/dev/"):
        forms.append(s[len("/dev/") :])
    return [re.compile(rf"(?<![A-Za-z0-9_]){re.escape(f)}(?![A-Za-z0-9_])", re.I) for f in forms]
