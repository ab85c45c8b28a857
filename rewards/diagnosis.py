"""The diagnosis oracle: a 9-question yes/no checklist, answered deterministically.

SREGym grades a submitted diagnosis with an LLM judge answering nine questions in
three dimensions (localization, characterization, scope; weights 0.33/0.33/0.34,
pass at 0.70). Training needs the same grade thousands of times a second and
bit-for-bit reproducible, so this module answers the same checklist without a
model: it recognises which cluster components a text names (``worker-2``,
``node/worker-2``, ``deploy/mongodb-rate``, a pod name, a DNS name, a PVC or a
container name), what role the text gives each (cause, impact, ruled out), which
fault mechanisms it claims (from a vocabulary keyed by mechanism id, not by
scenario) and which concrete values it quotes, and compares all of it with the
scenario's :class:`~sre_env.envs.base.RootCause`. Every answer carries its
evidence, so a grade can be audited and disputed. :mod:`.llm_judge` asks the same
questions of a model for evaluation runs.

Design choices worth knowing:

* The three "avoids X" questions (L3, C3, S1) need a claim to credit: a
  submission that names nothing is not rewarded for blaming nothing, so an empty
  or vague ``submit`` scores 0, not 0.33.
* Component names that are ordinary words (``rate``, ``search``, ``user``) count
  as *blame* only with a Kubernetes cue (``deploy/rate``, ``the rate service``,
  a pod name, backticks); bare, they still earn credit for naming the right
  thing. "error rate" therefore never blames the ``rate`` service.
* Components on the failing request path (callers of the affected ones, and the
  nodes hosting affected pods) are *symptomatic*: mentioning them is not blaming
  a bystander, because they really do show errors.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from .base import Check, Mechanism, OracleResult

if TYPE_CHECKING:
    from sre_env.envs.base import RootCause, Scenario

__all__ = [
    "WEIGHTS",
    "PASS_THRESHOLD",
    "MAX_GRADED_CHARS",
    "COMMON_WORDS",
    "LAYER_ALIASES",
    "Question",
    "QUESTIONS",
    "MECHANISMS",
    "FAMILY_MECHANISMS",
    "register_mechanism",
    "Submission",
    "DiagnosisContext",
    "parse_submission",
    "mechanism_id_for",
    "diagnosis_context_for",
    "grade_diagnosis",
    "named_entities",
    "result_from_answers",
]

#: dimension -> weight (SREGym's diagnosis oracle)
WEIGHTS: Mapping[str, float] = {"localization": 0.33, "characterization": 0.33, "scope": 0.34}
PASS_THRESHOLD = 0.70
#: a diagnosis is a paragraph; the grader reads this much of it (bounds the cost of a stuffed submit)
MAX_GRADED_CHARS = 20_000


@dataclass(frozen=True)
class Question:
    id: str
    dimension: str
    text: str
    slug: str


#: The checklist, shared verbatim by the deterministic grader and the LLM judge.
QUESTIONS: tuple[Question, ...] = (
    Question("L1", "localization", "Does the diagnosis name the component where the fault is (the root cause's location)?", "right_component"),
    Question("L2", "localization", "Does it identify that component as the origin of the incident, rather than blaming a component that only fails as a consequence (the cascade)?", "origin_not_cascade"),
    Question("L3", "localization", "Does it avoid blaming a healthy component as the cause?", "no_healthy_component_blamed"),
    Question("C1", "characterization", "Does it name the right fault mechanism?", "right_mechanism"),
    Question("C2", "characterization", "Does it give concrete details of the fault (such as the key, variable, port, device, sector, value or tag)?", "concrete_details"),
    Question("C3", "characterization", "Does it avoid claiming a wrong fault type or layer?", "no_wrong_fault_type"),
    Question("S1", "scope", "Does it avoid implicating bystanders (components the incident does not affect)?", "no_bystanders"),
    Question("S2", "scope", "Does it name all the components the incident affects?", "all_affected_named"),
    Question("S3", "scope", "Does it describe the impact (what fails, and for whom)?", "impact_described"),
)
_QUESTION_BY_ID = {q.id: q for q in QUESTIONS}


# --------------------------------------------------------------------------- vocabulary
_GONE = r"(?:missing|removed|deleted|dropped|unset|absent|not set|not defined|undefined|lost|gone|empty)"
_ENV = r"(?:env|environment)(?:[ _-]?var(?:iable)?s?)?"

#: mechanism id -> vocabulary. Rivals with no scenario yet are here so that a
#: diagnosis claiming them is recognised as a wrong fault type.
MECHANISMS: dict[str, Mechanism] = {
    m.id: m
    for m in (
        Mechanism(
            "latent_sector_errors",
            "hardware",
            "latent sector errors (disk reads fail with EIO)",
            (
                r"\blatent sector errors?\b",
                r"\bsector (?:read )?errors?\b",
                r"\bbad (?:disk )?(?:sectors?|blocks?)\b",
                r"\bunreadable (?:sectors?|blocks?)\b",
                r"\bmedi(?:um|a) errors?\b",
                r"\b(?:disk|drive|block device|device|storage) (?:read |i/?o )?errors?\b",
                r"\bread errors?\b",
                r"\bi/?o errors?\b",
                r"\binput/output errors?\b",
                r"\beio\b",
                r"\b(?:failing|faulty|failed|bad|broken|dying|defective|degraded) (?:data )?(?:disk|drive|hdd|ssd)s?\b",
                r"\b(?:disk|drive)s? (?:is |are )?(?:failing|faulty|dying|defective)\b",
                r"\b(?:disk|drive) failures?\b",
                r"\b(?:uncorrectable|unrecovered|unrecoverable) (?:read )?errors?\b",
                r"\b(?:pending|reallocated|uncorrectable) sectors?\b",
                r"\bsmart (?:errors?|failures?)\b",
            ),
            # which volume sits on the bad disk is part of the fault, as the device is
            detail_keys=("device", "sectors", "database", "pvc"),
        ),
        Mechanism(
            "missing_env_var",
            "application",
            "a required environment variable is missing",
            (
                rf"\b(?:missing|removed|deleted|dropped|unset|absent|undefined|lost) (?:a |an |the )?(?:required )?{_ENV}\b",
                rf"\b{_ENV}\b(?:\s+[\w./:-]+){{0,3}}\s+(?:is |was |were |got |has been |have been )?{_GONE}\b",
                rf"\b{{variable}}\b[^.;\n]{{0,40}}?\b{_GONE}\b",
                r"\b(?:missing|removed|deleted|dropped|unset|without|lacks?|lacking|no longer (?:has|sets?|defines?|contains?|includes?))\b[^.;\n]{0,40}?\b{variable}\b",
            ),
            detail_keys=("variable", "expected_value"),
        ),
        Mechanism(
            "service_target_port",
            "kubernetes",
            "a Service's targetPort points where no process listens",
            (
                r"\btarget[ _-]?ports?\b",
                r"\b(?:service|svc) port (?:mismatch|misconfig\w*|is wrong)\b",
                r"\bports? (?:mismatch\w*|misconfig\w*)\b",
                r"\b(?:wrong|incorrect|bad|mismatched|misconfigured) (?:service |target |container )?port\b",
                r"\bports? (?:do(?:es)? not|don't|doesn't) match\b",
                r"\b(?:service|svc) (?:points?|routes?|forwards?|sends?) (?:traffic )?to (?:the |a )?(?:wrong|incorrect|unused) port\b",
                r"\bnothing (?:is )?listening on (?:port )?\d+",
                r"\bno (?:process|container|pod) (?:is )?listening on\b",
            ),
            detail_keys=("targetPort", "expected_targetPort"),
        ),
        # ---- rivals (no scenario yet): recognised so a wrong claim costs C3
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
}

#: scenario family -> mechanism id, for scenarios whose RootCause does not say.
FAMILY_MECHANISMS: dict[str, str] = {
    "DiskSector": "latent_sector_errors",
    "MissingEnvVar": "missing_env_var",
    "TargetPortMisconfig": "service_target_port",
}


def register_mechanism(mechanism: Mechanism, family: str | None = None) -> None:
    """Add a scenario family's vocabulary (the registry calls this for each scenario class).

    Keeping the vocabulary beside the scenario that needs it lets a family be added
    in one module; re-registering the same mechanism is a no-op, a different one
    under a taken id is a programming error.
    """
    known = MECHANISMS.get(mechanism.id)
    if known is not None and known != mechanism:
        raise ValueError(f"mechanism id {mechanism.id!r} is already registered with a different vocabulary")
    MECHANISMS[mechanism.id] = mechanism
    if family is not None:
        FAMILY_MECHANISMS.setdefault(family, mechanism.id)

#: layer -> words that name it (for the structured ``layer`` field)
LAYER_ALIASES: Mapping[str, tuple[str, ...]] = {
    "hardware": ("hardware", "hw", "disk", "storage", "physical", "device"),
    "application": ("application", "app", "code", "software", "config", "configuration"),
    "kubernetes": ("kubernetes", "k8s", "kube", "orchestration", "service", "manifest"),
    "network": ("network", "networking", "dns"),
    "os": ("os", "kernel", "operating system", "node os", "system"),
    "operator": ("operator", "human", "operator error"),
}

#: component names that are also ordinary words in incident prose; bare, they
#: earn credit but never blame (see module docstring).
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
_NODE_PREFIXES = frozenset({"node", "nodes", "no"})
_HASH = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' pod-template-hash alphabet (no vowels)
_POD_SUFFIX = re.compile(rf"^(?:[{_HASH}]{{5,10}}(?:-[{_HASH}]{{5}})?|\d+)$")

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


# --------------------------------------------------------------------------- submission
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


# --------------------------------------------------------------------------- context
@dataclass(frozen=True)
class DiagnosisContext:
    """What the grader knows beyond the root cause: the cluster's names and the cascade.

    ``affected`` must all be named for S2 (defaults to ``RootCause.affected``);
    ``symptomatic`` may be mentioned without counting as bystanders (the request
    path upstream of the fault, nodes hosting affected pods). ``aliases`` maps
    other names (container, PVC) to the component they belong to. References are
    ``kind/name`` or bare names; kinds other than ``node`` only say "component".
    """

    namespace: str
    components: tuple[str, ...]
    nodes: tuple[str, ...] = ()
    affected: tuple[str, ...] = ()
    symptomatic: tuple[str, ...] = ()
    aliases: Mapping[str, str] = field(default_factory=dict)
    mechanism_id: str = ""

    def key(self, ref: str) -> str | None:
        """``node/worker-1`` -> ``node:worker-1``; ``deployment/geo`` -> ``component:geo``."""
        ref = ref.strip()
        kind, _, name = ref.rpartition("/")
        kind = kind.lower()
        name = name.lower()
        if kind in _NODE_PREFIXES or (not kind and name in self._node_set):
            return f"node:{name}" if name in self._node_set else None
        if name in self._component_set:
            return f"component:{name}"
        if name in self._alias_map:
            return f"component:{self._alias_map[name]}"
        return None

    # computed once per context (cached_property writes the instance dict, which a
    # frozen dataclass allows); equality and repr still see only the fields
    @cached_property
    def _node_set(self) -> frozenset[str]:
        return frozenset(n.lower() for n in self.nodes)

    @cached_property
    def _component_set(self) -> frozenset[str]:
        return frozenset(c.lower() for c in self.components)

    @cached_property
    def _alias_map(self) -> dict[str, str]:
        return {k.lower(): v.lower() for k, v in self.aliases.items()}


def mechanism_id_for(root_cause: "RootCause") -> str:
    """The vocabulary entry that describes a root cause: declared, else matched by its words."""
    declared = (root_cause.details or {}).get("mechanism_id")
    if isinstance(declared, str) and declared in MECHANISMS:
        return declared
    text = f"{root_cause.mechanism}\n{root_cause.summary}"
    best, best_hits = "", 0
    for mech in MECHANISMS.values():
        if mech.layer != root_cause.layer:
            continue
        hits = sum(1 for p in _compile_terms(mech, root_cause.details) if p.search(text))
        if hits > best_hits:
            best, best_hits = mech.id, hits
    return best


def diagnosis_context_for(scenario: "Scenario", backend: Any = None) -> DiagnosisContext:
    """Build the grading context from a live scenario (after ``setup``) and its backend.

    The symptomatic set is the affected components, everything that calls them
    (transitively: the request path up to the entrypoint) and the nodes hosting
    their pods, read from the backend when one is given.
    """
    root = scenario.root_cause()
    app = scenario.app
    # cluster components outside the app a scenario involves (a policy engine, a system controller)
    extra = tuple(getattr(scenario, "extra_components", lambda: ())())
    components = tuple(c.name for c in app.components) + tuple(n for n in extra if n not in {c.name for c in app.components})
    aliases: dict[str, str] = {}
    for c in app.components:
        if c.container and c.container != c.name:
            aliases[c.container] = c.name
        if c.volume_claim:
            aliases[c.volume_claim] = c.name
    nodes: tuple[str, ...] = ()
    if backend is not None:
        try:
            nodes = tuple(backend.nodes.names())
        except Exception:  # a backend without node access still gets a context
            nodes = ()
    root_name = root.component.rpartition("/")[2]
    if root.component.startswith("node/") and root_name not in nodes:
        nodes = (*nodes, root_name)

    affected_names = _dedupe(ref.rpartition("/")[2] for ref in root.affected)
    # everything upstream of an affected component sees its errors
    callers: dict[str, set[str]] = {}
    for c in app.components:
        for d in c.dependencies:
            callers.setdefault(d.service, set()).add(c.name)
    seeds = [n for n in (*affected_names, root_name) if n in components]
    upstream: set[str] = set(seeds)
    frontier = list(seeds)
    while frontier:
        for caller in callers.get(frontier.pop(), ()):
            if caller not in upstream:
                upstream.add(caller)
                frontier.append(caller)
    hosting: set[str] = set()
    if backend is not None:
        try:
            pods = backend.api.list("Pod", root.namespace)
        except Exception:
            pods = []
        wanted = set(affected_names) | ({root_name} if root_name in components else set())
        for pod in pods:
            owner = _pod_owner(pod.get("metadata", {}).get("name", ""), components)
            node = (pod.get("spec") or {}).get("nodeName")
            if owner in wanted and node:
                hosting.add(node)
    affected_keys = {n for n in affected_names}
    symptomatic = _dedupe(
        [*_dedupe(root.affected), *(n for n in sorted(upstream) if n not in affected_keys), *(f"node/{n}" for n in sorted(hosting))]
    )
    mech = FAMILY_MECHANISMS.get(getattr(scenario, "family", ""), "") or mechanism_id_for(root)
    return DiagnosisContext(
        namespace=root.namespace,
        components=components,
        nodes=nodes,
        affected=_dedupe(root.affected),
        symptomatic=symptomatic,
        aliases=aliases,
        mechanism_id=mech,
    )


def _dedupe(items: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return tuple(seen)


def _pod_owner(name: str, components: Iterable[str]) -> str | None:
    """The component a pod (or ReplicaSet) name belongs to, by Kubernetes' naming scheme."""
    name = name.lower()
    best = None
    for comp in components:
        c = comp.lower()
        if name.startswith(c + "-") and _POD_SUFFIX.match(name[len(c) + 1 :]) and (best is None or len(c) > len(best)):
            best = comp
    return best


# --------------------------------------------------------------------------- analysis
@dataclass
class _Mention:
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
class _Claim:
    mechanism: str
    surface: str
    negated: bool
    sentence: int


@dataclass
class _Analysis:
    mentions: list[_Mention] = field(default_factory=list)
    claims: list[_Claim] = field(default_factory=list)
    impact_sentences: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


_TERM_CACHE: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[re.Pattern[str], ...]] = {}


def _compile_terms(mech: Mechanism, details: Mapping[str, Any] | None) -> tuple[re.Pattern[str], ...]:
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
        cue = prefix in _KIND_PREFIXES or prefix in _NODE_PREFIXES
        if "." in name and not name.startswith("."):
            name = name.split(".", 1)[0]
        if prefix not in _KIND_PREFIXES and name in self.nodes:
            return f"node:{name}", True
        if prefix in _NODE_PREFIXES:
            return None
        if name in self.components:
            return f"component:{name}", cue or not _is_common(name)
        if name in self.aliases:
            return f"component:{self.aliases[name].lower()}", True
        owner = _pod_owner(name, self.components)
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
    for mech in MECHANISMS.values():
        for pattern in _compile_terms(mech, details):
            for m in pattern.finditer(text):
                negated = bool(_NEGATION_BEFORE.search(text[max(0, m.start() - 40) : m.start()]))
                out.append((mech.id, m.group(0), negated, m.start(), m.end()))
    return out


def _analyse(sub: Submission, ctx: DiagnosisContext, details: Mapping[str, Any]) -> _Analysis:
    resolver = _Resolver(ctx)
    an = _Analysis()
    if len(sub.free_text) + len(sub.extra_text) > MAX_GRADED_CHARS:
        an.notes.append(f"only the first {MAX_GRADED_CHARS} characters of the prose were graded")
    symptomatic_keys = _keys(ctx, ctx.symptomatic + ctx.affected)
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
            an.claims.append(_Claim(mech, surface, negated or bool(clause and clause["exonerated"]), idx))
        orphan_cause = any(c["cause"] and not c["entities"] for c in clauses)
        orphan_impact = any(c["impact"] and not c["entities"] for c in clauses)
        for clause in clauses:
            for key, surface, strong, offset in clause["entities"]:
                quoted = surface.lower() in quoted_values
                an.mentions.append(
                    _Mention(
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
            an.mentions.append(_Mention(key, sub.component, True, "component", idx, cause=True, designated=True))
        else:
            an.notes.append(f"structured component {sub.component!r} names nothing in the cluster")
    for ref in sub.affected:
        key = _structured_key(ref, ctx, resolver)
        if key:
            an.mentions.append(_Mention(key, ref, True, "affected", idx, impact=True))
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
    out = [_fmt(key) for key, _, strong, _ in _find_mentions(text, _Resolver(context)) if strong]
    return list(_dedupe(out))


def _keys(ctx: DiagnosisContext, refs: Iterable[str]) -> set[str]:
    return {k for k in (ctx.key(r) for r in refs) if k}


def _fmt(key: str) -> str:
    kind, _, name = key.partition(":")
    return f"node/{name}" if kind == "node" else name


def _layer_of(text: str) -> str | None:
    t = text.strip().lower()
    for layer, words in LAYER_ALIASES.items():
        if t == layer or t in words:
            return layer
    return None


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


# --------------------------------------------------------------------------- grading
def result_from_answers(name: str, answers: Mapping[str, tuple[bool, str]], **details: Any) -> OracleResult:
    """Score a filled checklist: each dimension is its share of "yes", weighted.

    Shared with the LLM judge so both graders score and report identically.
    Questions missing from ``answers`` count as "no".
    """
    questions = []
    checks = []
    dims: dict[str, list[bool]] = {d: [] for d in WEIGHTS}
    for q in QUESTIONS:
        answer, evidence = answers.get(q.id, (False, "not answered"))
        dims[q.dimension].append(bool(answer))
        questions.append({"id": q.id, "dimension": q.dimension, "question": q.text, "answer": bool(answer), "evidence": evidence})
        checks.append(Check(f"{q.id}_{q.slug}", bool(answer), evidence))
    dim_scores = {d: (sum(v) / len(v) if v else 0.0) for d, v in dims.items()}
    score = min(1.0, max(0.0, sum(WEIGHTS[d] * s for d, s in dim_scores.items())))
    # four places, as OracleResult.as_dict reports it: the reward equals the reported score
    score = round(score, 4)
    return OracleResult(
        name,
        score >= PASS_THRESHOLD,
        score,
        tuple(checks),
        {"questions": questions, "dimensions": {d: round(s, 4) for d, s in dim_scores.items()}, "threshold": PASS_THRESHOLD, **details},
    )


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
    mech = MECHANISMS.get(mech_id)
    an = _analyse(sub, context, details)

    root_key = context.key(root_cause.component)
    affected = _keys(context, context.affected or root_cause.affected)
    cascade = affected - {root_key}
    symptomatic = affected | _keys(context, context.symptomatic) | ({root_key} if root_key else set())
    live = [m for m in an.mentions if not m.exonerated]
    ruled_out = sorted({_fmt(m.key) for m in an.mentions if m.exonerated})

    def blame_worthy(m: _Mention) -> bool:
        # a bare common word ("rate") only counts when it is someone who is involved
        return m.strong or m.key in symptomatic

    answers: dict[str, tuple[bool, str]] = {}

    # ---- localization
    root_mentions = [m for m in live if m.key == root_key]
    # "worker-1 or worker-2 or worker-3" is a guess, not a localization
    kind = (root_key or ":").partition(":")[0]
    alternatives = sorted(
        _fmt(m.key) for m in live
        if m.hedged and m.cause and m.key.startswith(kind + ":") and m.key != root_key and blame_worthy(m)
    )
    hedge_only = list(_dedupe(alternatives)) if root_mentions and all(m.hedged for m in root_mentions) else []
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
        answers["L1"] = (False, f"hedges: {root_cause.component} only as one of {', '.join([_fmt(root_key), *hedge_only])}")
    elif root_mentions:
        answers["L1"] = (True, f"names {root_cause.component} as {_surfaces(root_mentions)}")
    else:
        named = sorted({_fmt(m.key) for m in live})
        answers["L1"] = (False, f"{root_cause.component} is never named" + (f" (names: {', '.join(named)})" if named else " (no cluster component named)"))

    designated = {m.key for m in live if m.designated and blame_worthy(m)}
    root_as_cause = [m for m in root_mentions if m.cause]
    wrong_origin = sorted(_fmt(k) for k in designated & cascade) if root_key not in designated else []
    if not root_as_cause:
        answers["L2"] = (False, f"{root_cause.component} is not presented as the cause" + (f" ({_fmt(root_key)} is only mentioned as affected)" if root_mentions else ""))
    elif wrong_origin:
        answers["L2"] = (False, f"names {', '.join(wrong_origin)} (a cascade component) as the origin instead of {root_cause.component}")
    else:
        answers["L2"] = (True, f"{root_cause.component} is given as the cause ({_surfaces(root_as_cause)})" + (f"; cascade {', '.join(sorted(_fmt(k) for k in cascade))} not made the origin" if cascade else ""))

    blamed = {m.key for m in live if m.cause and blame_worthy(m)}
    healthy_blamed = sorted(_fmt(k) for k in blamed - symptomatic)
    if not blamed:
        answers["L3"] = (False, "blames no component, so there is nothing to credit")
    elif healthy_blamed:
        answers["L3"] = (False, f"blames healthy {', '.join(healthy_blamed)}")
    else:
        answers["L3"] = (True, f"blames only {', '.join(sorted(_fmt(k) for k in blamed))}, all involved in the incident")

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
    layer_claim = _layer_of(sub.layer) if sub.layer else None
    also_layers = {MECHANISMS[m].layer for m in also if m in MECHANISMS}
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
    bystanders = sorted(_fmt(k) for k in implicated - symptomatic)
    if not implicated:
        answers["S1"] = (False, "implicates no component, so there is nothing to credit")
    elif bystanders:
        answers["S1"] = (False, f"implicates bystanders {', '.join(bystanders)}")
    else:
        answers["S1"] = (True, f"implicates only {', '.join(sorted(_fmt(k) for k in implicated))}")

    named = {m.key for m in live}
    missing = sorted(_fmt(k) for k in affected - named)
    if not affected:
        answers["S2"] = (False, "the ground truth lists no affected component")
    elif missing:
        answers["S2"] = (False, f"does not name affected {', '.join(missing)}")
    else:
        answers["S2"] = (True, f"names every affected component: {', '.join(sorted(_fmt(k) for k in affected))}")

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
            {"entity": _fmt(m.key), "text": m.surface, "source": m.source, "strong": m.strong, "cause": m.cause, "impact": m.impact, "origin": m.designated, "ruled_out": m.exonerated}
            for m in an.mentions
        ],
        claims=[{"mechanism": c.mechanism, "text": c.surface, "negated": c.negated} for c in an.claims],
        ruled_out=ruled_out,
        notes=list(sub.notes) + an.notes,
    )


def _surfaces(mentions: Sequence[_Mention]) -> str:
    return _quote(m.surface for m in mentions)


def _quote(items: Iterable[str]) -> str:
    seen = _dedupe(items)
    return ", ".join(repr(s if len(s) <= 120 else s[:117] + "...") for s in seen[:4])
