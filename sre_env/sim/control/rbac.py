"""RBAC authorization for service accounts, as the apiserver's RBAC authorizer decides it.

A request (user, verb, resource, API group, namespace) is allowed when a
ClusterRoleBinding — or a RoleBinding in the request's namespace — binds the
user (a ServiceAccount subject, or ``system:serviceaccounts[:ns]`` groups) to a
role with a matching rule. A denial is worded as the apiserver words it:
``deployments.apps is forbidden: User "system:serviceaccount:kube-system:kube-state-metrics"
cannot list resource "deployments" in API group "apps" at the cluster scope``.

Decisions are cached per RBAC revision, so in-process clients (kube-state-metrics)
can ask every scrape at no cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sre_env.sim.kernel.store import ObjectStore

__all__ = ["authorize", "forbidden_message", "rbac_revision", "service_account_user"]

Obj = dict[str, Any]
_RBAC_KINDS = ("Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")


def service_account_user(namespace: str, name: str) -> str:
    return f"system:serviceaccount:{namespace}:{name}"


def rbac_revision(store: ObjectStore) -> tuple[int, int, int, int]:
    kr = store.kind_revision
    return (kr.get("Role", 0), kr.get("RoleBinding", 0), kr.get("ClusterRole", 0), kr.get("ClusterRoleBinding", 0))


def _subject_matches(subject: Obj, user: str, binding_ns: str) -> bool:
    kind = subject.get("kind")
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or binding_ns
        return user == service_account_user(ns, subject.get("name", ""))
    if kind == "User":
        return subject.get("name") == user
    if kind == "Group":
        group = subject.get("name", "")
        if user.startswith("system:serviceaccount:"):
            ns = user.split(":")[2]
            return group in ("system:serviceaccounts", f"system:serviceaccounts:{ns}", "system:authenticated")
        return group == "system:authenticated"
    return False


def _rule_allows(rule: Obj, verb: str, resource: str, group: str, name: str | None) -> bool:
    verbs = rule.get("verbs") or ()
    groups = rule.get("apiGroups") or ()
    resources = rule.get("resources") or ()
    names = rule.get("resourceNames") or ()
    if not ("*" in verbs or verb in verbs):
        return False
    if not ("*" in groups or group in groups):
        return False
    if not ("*" in resources or resource in resources):
        return False
    return not names or (name is not None and name in names)


def _role(store: ObjectStore, ref: Obj, binding_ns: str) -> Obj | None:
    kind = ref.get("kind")
    if kind == "ClusterRole":
        return store.find("ClusterRole", ref.get("name", ""))
    if kind == "Role":
        return store.find("Role", ref.get("name", ""), binding_ns)
    return None


def authorize(store: ObjectStore, user: str, verb: str, resource: str, group: str = "", namespace: str | None = None, name: str | None = None) -> bool:
    """Whether RBAC allows ``user`` to ``verb`` ``resource`` (cluster-wide when ``namespace`` is None)."""
    cache: dict = store.__dict__.setdefault("_rbac_cache", {})
    rev = rbac_revision(store)
    if cache.get("rev") != rev:
        cache.clear()
        cache["rev"] = rev
    key = (user, verb, resource, group, namespace, name)
    hit = cache.get(key)
    if hit is not None:
        return hit
    allowed = False
    for binding in store.iter("ClusterRoleBinding"):
        if any(_subject_matches(s, user, "") for s in binding.get("subjects") or ()):
            role = _role(store, binding.get("roleRef") or {}, "")
            if role is not None and any(_rule_allows(r, verb, resource, group, name) for r in role.get("rules") or ()):
                allowed = True
                break
    if not allowed and namespace is not None:
        for binding in store.list("RoleBinding", namespace):
            if any(_subject_matches(s, user, namespace) for s in binding.get("subjects") or ()):
                role = _role(store, binding.get("roleRef") or {}, namespace)
                if role is not None and any(_rule_allows(r, verb, resource, group, name) for r in role.get("rules") or ()):
                    allowed = True
                    break
    cache[key] = allowed
    return allowed


def forbidden_message(user: str, verb: str, resource: str, group: str = "", namespace: str | None = None) -> str:
    qualified = f"{resource}.{group}" if group else resource
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    return f'{qualified} is forbidden: User "{user}" cannot {verb} resource "{resource}" in API group "{group}" {scope}'
