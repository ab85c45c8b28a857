"""RBAC: whether the bindings and roles among a cluster's objects allow a request.

A request (user, verb, resource, API group, namespace, name) is allowed when a
ClusterRoleBinding -- or a RoleBinding in the request's namespace -- binds the
user (a User, a ServiceAccount, or a group it belongs to:
``system:serviceaccounts[:ns]``, ``system:authenticated``) to a role with a
rule that covers it, as the apiserver's RBAC authorizer decides. A denial is
worded as the apiserver words it (:func:`forbidden_message`).

The objects come from whoever asks: the simulator's store, or a cluster read
through the Backend's API (``kubectl auth can-i --as``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from sre_env.errors import ApiError

if TYPE_CHECKING:
    from sre_env.backend import ClusterAPI

__all__ = ["RbacObjects", "ApiRbacObjects", "StaticRbacObjects", "allows", "forbidden_message", "service_account_user"]

Obj = dict[str, Any]


class RbacObjects(Protocol):
    """Where the Roles, ClusterRoles and their bindings are read from."""

    def find(self, kind: str, name: str, namespace: str | None = None) -> Obj | None: ...

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]: ...


def service_account_user(namespace: str, name: str) -> str:
    return f"system:serviceaccount:{namespace}:{name}"


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


def _role(objects: RbacObjects, ref: Obj, binding_ns: str) -> Obj | None:
    kind = ref.get("kind")
    if kind == "ClusterRole":
        return objects.find("ClusterRole", ref.get("name", ""))
    if kind == "Role":
        return objects.find("Role", ref.get("name", ""), binding_ns)
    return None


def _binding_allows(objects: RbacObjects, binding: Obj, binding_ns: str, user: str, verb: str, resource: str, group: str, name: str | None) -> bool:
    if not any(_subject_matches(s, user, binding_ns) for s in binding.get("subjects") or ()):
        return False
    role = _role(objects, binding.get("roleRef") or {}, binding_ns)
    return role is not None and any(_rule_allows(r, verb, resource, group, name) for r in role.get("rules") or ())


def allows(objects: RbacObjects, user: str, verb: str, resource: str, group: str = "", namespace: str | None = None, name: str | None = None) -> bool:
    """Whether RBAC allows ``user`` to ``verb`` ``resource`` (cluster-wide when ``namespace`` is None)."""
    if any(_binding_allows(objects, b, "", user, verb, resource, group, name) for b in objects.list("ClusterRoleBinding")):
        return True
    return namespace is not None and any(_binding_allows(objects, b, namespace, user, verb, resource, group, name) for b in objects.list("RoleBinding", namespace))


def forbidden_message(user: str, verb: str, resource: str, group: str = "", namespace: str | None = None) -> str:
    qualified = f"{resource}.{group}" if group else resource
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    return f'{qualified} is forbidden: User "{user}" cannot {verb} resource "{resource}" in API group "{group}" {scope}'


class ApiRbacObjects:
    """The cluster's Roles, ClusterRoles and bindings, read through its API (``kube.rbac.RbacObjects``)."""

    def __init__(self, api: "ClusterAPI") -> None:
        self.api = api

    def find(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        try:
            return self.api.get(kind, name, namespace)
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        return self.api.list(kind, namespace)


class StaticRbacObjects:
    """Roles and bindings held in a list (``kube.rbac.RbacObjects``): a policy decided before it exists in a cluster."""

    def __init__(self, objects: list[Obj]) -> None:
        self.objects = objects

    def find(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        return next((o for o in self.list(kind, namespace) if o["metadata"].get("name") == name), None)

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        return [o for o in self.objects if o.get("kind") == kind and (namespace is None or o["metadata"].get("namespace") == namespace)]
