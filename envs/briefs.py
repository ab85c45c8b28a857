"""Incident briefs: what users and dashboards report, derived from the call graph.

A brief names user-visible features (from the request types whose call tree
reaches the broken component) and never the component or the cause.
"""

from __future__ import annotations

from sre_env.apps.base import AppSpec

__all__ = ["affected_requests", "user_report", "impact"]



def _feature(app: AppSpec, name: str) -> str:
    for rt in app.requests:
        if rt.name == name and rt.feature:
            return rt.feature
    return name.replace("_", " ")


def affected_requests(app: AppSpec, component: str) -> list[str]:
    out = []
    for rt in app.requests:
        touched = {app.entrypoint} | {c.callee for c in rt.calls} | {c.caller for c in rt.calls}
        if component in touched:
            out.append(rt.name)
    return out


def user_report(app: AppSpec, component: str, *, intermittent: bool, since_min: int = 3) -> str:
    names = affected_requests(app, component) or [rt.name for rt in app.requests]
    features = [_feature(app, n) for n in names]
    if len(features) > 1:
        listed = ", ".join(features[:-1]) + " and " + features[-1]
    else:
        listed = features[0]
    how = "intermittently fail (some page loads return HTTP 500)" if intermittent else "fail for most users (HTTP 500 / timeouts)"
    return (
        f"PAGE: users of the {app.name} site (namespace {app.namespace}) report that requests for {listed} {how}. "
        f"The problem started about {since_min} minutes ago. Find the root cause, repair it durably, "
        "and submit your diagnosis."
    )


def impact(app: AppSpec, component: str) -> str:
    """One sentence on what users lose, for ground-truth summaries."""
    names = affected_requests(app, component) or [rt.name for rt in app.requests]
    features = [_feature(app, n) for n in names]
    listed = ", ".join(features[:-1]) + " and " + features[-1] if len(features) > 1 else features[0]
    return f"Impact: requests for {listed} fail with HTTP 500 for users of {app.name}."
