"""Exceptions raised by sre-env.

Agent mistakes are never exceptions: a bad command becomes the text a real tool
prints plus an exit code. Exceptions here are for library misuse and for the
Kubernetes-shaped API, whose callers (the shell, faults, oracles) turn them into
the messages ``kubectl`` would print.

    SREEnvError
    ├── UnknownEnvironmentError   an id that is not registered ("did you mean ...")
    ├── ScenarioError             a scenario definition that cannot work
    ├── MissingExtraError         an optional extra (ray, kubernetes, ...) is not installed
    ├── LLMError                  a language model gave no completion (unreachable, HTTP error, bad reply)
    └── ApiError                  a Kubernetes API status (NotFound, AlreadyExists, ...)
"""

from __future__ import annotations

from typing import Any

__all__ = ["SREEnvError", "UnknownEnvironmentError", "ScenarioError", "MissingExtraError", "LLMError", "ApiError"]


class SREEnvError(Exception):
    """Base class of every exception sre-env raises on purpose."""


class UnknownEnvironmentError(SREEnvError):
    """An environment or scenario id that is not registered."""


class ScenarioError(SREEnvError):
    """A scenario that is misconfigured (bad parameters, impossible variant)."""


class MissingExtraError(SREEnvError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(
            f"{package!r} is not installed; install it with: pip install 'sre-env[{extra}]'"
        )
        self.package = package
        self.extra = extra


class LLMError(SREEnvError):
    """A language model gave no completion: never a model answer, always a reason.

    Raised by the LLM clients (``sre_env.agents.llm_client``) and caught by whoever
    must not mistake a failure for a reply, like the LLM diagnosis judge. Context:
    ``url`` is the endpoint asked (``None`` for a local model), ``status`` the last
    HTTP status the server answered (``None`` when it was never reached or the
    reply was not HTTP's fault), ``attempts`` how many requests were made.
    """

    def __init__(self, message: str, *, url: str | None = None, status: int | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.url = url
        self.status = status
        self.attempts = attempts


class ApiError(SREEnvError):
    """A Kubernetes API failure, shaped like the server's Status object.

    ``str(err)`` is exactly what kubectl prints, e.g.
    ``Error from server (NotFound): pods "geo-1" not found``, or for a write the
    server refused as invalid, from its ``details``: ``The Deployment "web" is
    invalid: spec.template.spec.containers: Required value``.
    """

    def __init__(self, code: int, reason: str, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        #: the Status's ``details`` (kind, group, name and, for ``Invalid``, the causes), when the server sends them
        self.details = details

    def __str__(self) -> str:
        causes = (self.details or {}).get("causes")
        if self.reason == "Invalid" and causes:
            # kubectl prints a refused write from its details, one cause per line when there are several
            d = self.details or {}
            head = f'The {d.get("kind", "")} "{d.get("name", "")}" is invalid: ' if d.get("kind") or d.get("name") else "The request is invalid: "
            lines = list(dict.fromkeys(f"{c['field']}: {c['message']}" for c in causes))
            return head + lines[0] if len(lines) == 1 else head + "\n" + "".join(f"* {line}\n" for line in lines).rstrip("\n")
        if not self.reason:  # a failure the server could not classify (reason Unknown)
            return f"Error from server: {self.message}"
        return f"Error from server ({self.reason}): {self.message}"

    @classmethod
    def not_found(cls, resource: str, name: str) -> "ApiError":
        return cls(404, "NotFound", f'{resource} "{name}" not found')

    @classmethod
    def already_exists(cls, resource: str, name: str) -> "ApiError":
        return cls(409, "AlreadyExists", f'{resource} "{name}" already exists')

    @classmethod
    def invalid(cls, resource: str, name: str, detail: str) -> "ApiError":
        return cls(422, "Invalid", f'{resource} "{name}" is invalid: {detail}')

    @classmethod
    def bad_request(cls, message: str) -> "ApiError":
        return cls(400, "BadRequest", message)

    @classmethod
    def forbidden(cls, message: str) -> "ApiError":
        return cls(403, "Forbidden", message)
