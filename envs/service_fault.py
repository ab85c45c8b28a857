"""Scenarios whose cause sits in one Deployment of the app, the one ``variant["service"]`` names.

Most application and Kubernetes incidents break one service: a wrong env var,
probe, port, command, selector or resource setting. They share what follows
from that: users report the features whose requests reach the service, the
ground truth names ``deployment/<service>`` and what users lose, a correct
repair leaves that Deployment modified, and the blind fixes (restart, delete,
scale to zero) target it. Keeping those here means every such scenario words
them the same way.
"""

from __future__ import annotations

from typing import Any, ClassVar, Iterable, Mapping

from sre_env.rewards.base import AllowedChange

from .base import RootCause, Scenario
from .briefs import impact, user_report

__all__ = ["ServiceFault"]


class ServiceFault(Scenario):
    """A fault in ``deployment/<variant["service"]>``; subclasses draw the variant and inject it."""

    #: whether users see the failures come and go (what the brief says)
    intermittent: ClassVar[bool] = False
    #: the kind of the service's object a correct repair leaves changed (None: the repair restores it exactly)
    repaired_kind: ClassVar[str | None] = "Deployment"

    def brief(self) -> str:
        return user_report(self.app, self.variant["service"], intermittent=self.intermittent)

    def allowed_changes(self) -> list[AllowedChange]:
        # the repaired object differs from before the fault (a fixed field, a new revision)
        if self.repaired_kind is None:
            return []
        return [AllowedChange(self.repaired_kind, self.namespace, self.variant["service"], "modified")]

    def service_wrong_fixes(self, **specific: list[str]) -> dict[str, list[str]]:
        """The blind fixes on the service with the scenario's own plausible-but-wrong ones
        listed before the most drastic, scaling to zero."""
        blind = self.blind_fixes(self.variant["service"])
        scale = blind.pop("scale_to_zero")
        return {**blind, **specific, "scale_to_zero": scale}

    def service_cause(
        self,
        mechanism: str,
        summary: str,
        details: Mapping[str, Any],
        *,
        affected: Iterable[str] | None = None,
        layer: str | None = None,
        epilogue: str = "",
        kind: str = "deployment",
        component: str | None = None,
    ) -> RootCause:
        """The ground truth for ``<kind>/<service>`` (or ``component``): ``summary``, the users' impact, then ``epilogue``.

        ``affected`` defaults to the component (when it is not the service), the service and the
        app's entrypoint (what users hit).
        """
        service = self.variant["service"]
        component = component or f"{kind}/{service}"
        if affected is None:
            affected = dict.fromkeys((component, f"deployment/{service}", f"deployment/{self.app.entrypoint}"))
        return RootCause(
            component=component,
            namespace=self.namespace,
            layer=layer or self.layer,
            mechanism=mechanism,
            summary=summary + impact(self.app, service) + epilogue,
            details=details,
            affected=tuple(affected),
        )

    def with_callers(self, callers: Iterable[str], kind: str = "deployment") -> tuple[str, ...]:
        """``affected`` for a service its callers cannot reach: the service, then each caller."""
        return (f"{kind}/{self.variant['service']}", *(f"deployment/{c}" for c in callers))
