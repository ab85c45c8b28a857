"""Exceptions raised by sre-env.

Agent mistakes are never exceptions: a bad command becomes the text a real tool
prints plus an exit code. Exceptions here are for library misuse and for the
Kubernetes-shaped API, whose callers (the shell, faults, oracles) turn them into
the messages ``kubectl`` would print.

    SREEnvError
    ├── UnknownEnvironmentError   an id that is not registered ("did you mean ...")
    ├── ScenarioError             a scenario definition that cannot work
    ├── MissingExtraError         an optional extra (ray, kubernetes, ...) is not installed
    └── ApiError                  a Kubernetes API status (NotFound, AlreadyExists, ...)
"""

from __future__ import annotations

__all__ = ["SREEnvError", "UnknownEnvironmentError", "ScenarioError", "MissingExtraError", "ApiError"]


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


class ApiError(SREEnvError):
    """A Kubernetes API failure, shaped like the server's Status object.

    ``str(err)`` is exactly what kubectl prints, e.g.
    ``Error from server (NotFound): pods "geo-1" not found``.
    """

    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message

    def __str__(self) -> str:
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
