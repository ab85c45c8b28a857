"""The diagnosis oracle: a 9-question yes/no checklist, answered deterministically.

SREGym grades a submitted diagnosis with an LLM judge answering nine questions in
three dimensions (localization, characterization, scope; weights 0.33/0.33/0.34,
pass at 0.70). Training needs the same grade thousands of times a second and
bit-for-bit reproducible, so this package answers the same checklist without a
model: it recognises which cluster components a text names (``worker-2``,
``node/worker-2``, ``deploy/mongodb-rate``, a pod name, a DNS name, a PVC or a
container name), what role the text gives each (cause, impact, ruled out), which
fault mechanisms it claims (from a vocabulary keyed by mechanism id: each
family's, declared with its scenario, and the shared rivals) and which concrete
values it quotes, and compares all of it with the scenario's
:class:`~sre_env.envs.base.RootCause`. Every answer carries its evidence, so a
grade can be audited and disputed. :mod:`sre_env.rewards.llm_judge` asks the
same questions of a model for evaluation runs.

One job per module: :mod:`.checklist` (the questions and their score),
:mod:`.submission` (reading the ``submit`` text), :mod:`.vocabulary` (fault
mechanisms and layers), :mod:`.context` (what the grader knows of the incident),
:mod:`.analysis` (mentions and claims in the text) and :mod:`.grader` (the
answers).

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

from .analysis import COMMON_WORDS, MAX_GRADED_CHARS, named_entities
from .checklist import PASS_THRESHOLD, QUESTIONS, WEIGHTS, Question, result_from_answers
from .context import DiagnosisContext, diagnosis_context_for
from .grader import grade_diagnosis
from .submission import Submission, parse_submission
from .vocabulary import LAYER_ALIASES, SHARED_MECHANISMS, mechanism_id_for, vocabulary

__all__ = [
    "WEIGHTS",
    "PASS_THRESHOLD",
    "MAX_GRADED_CHARS",
    "COMMON_WORDS",
    "LAYER_ALIASES",
    "Question",
    "QUESTIONS",
    "SHARED_MECHANISMS",
    "vocabulary",
    "Submission",
    "DiagnosisContext",
    "parse_submission",
    "mechanism_id_for",
    "diagnosis_context_for",
    "grade_diagnosis",
    "named_entities",
    "result_from_answers",
]
