"""``KubeApi``: the ClusterAPI seam over the official ``kubernetes`` client.

Canonical kinds (``Deployment``, ``Pod``) are resolved to API paths by the
dynamic client's discovery, with the simulator's kind table as the hint for the
group/version, so custom resources the cluster serves work too. Every failure
becomes an :class:`~sre_env.errors.ApiError` carrying the server's own Status
(code, reason, message), which is what faults and oracles already handle on the
simulator.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from sre_env.backend import ExecResult
from sre_env.errors import ApiError
from sre_env.kube.kinds import KINDS
from sre_env.kube.quantity import cpu_millicores, memory_bytes

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

__all__ = ["KubeApi", "api_error"]

Obj = dict[str, Any]

_HINTS = {k.kind: k.api_version for k in KINDS}
_PATCH_TYPES = {
    "strategic": "application/strategic-merge-patch+json",
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
}
_SCALABLE = {"Deployment": "deployment", "StatefulSet": "stateful_set", "ReplicaSet": "replica_set"}


def api_error(exc: BaseException) -> ApiError:
    """The server's Status as an ApiError (or the closest shape when the body is not a Status)."""
    status = int(getattr(exc, "status", 0) or 500)
    body = getattr(exc, "body", None)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    reason_text = str(getattr(exc, "reason", "") or "")
    handshake = re.match(r"Handshake status (\d+)", reason_text)
    if body is None and handshake:
        # a refused websocket upgrade (exec): "Handshake status 404 ... -+-+- <headers> -+-+- <body>"
        status, body = int(handshake.group(1)), reason_text.rsplit("-+-+-", 1)[-1].strip()
    if isinstance(body, str) and body.strip().startswith("{"):
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("kind") == "Status":
            return ApiError(int(parsed.get("code") or status), str(parsed.get("reason") or "Unknown"), str(parsed.get("message") or ""))
    reason = str(getattr(exc, "reason", "") or "InternalError")
    return ApiError(status, reason.replace(" ", ""), body if isinstance(body, str) and body else reason)


class KubeApi:
    """The Kubernetes API of a real (or served) cluster, behind the ClusterAPI protocol."""

    def __init__(self, api_client: "ApiClient") -> None:
        from kubernetes import client, dynamic

        self.client = api_client
        self._dyn = dynamic.DynamicClient(api_client)
        self._core = client.CoreV1Api(api_client)
        self._apps = client.AppsV1Api(api_client)
        self._custom = client.CustomObjectsApi(api_client)
        self._resources: dict[str, Any] = {}
        self._missing: set[str] = set()

    # -- discovery -------------------------------------------------------------
    def _resource(self, kind: str, api_version: str | None = None) -> Any:
        res = self._resources.get(kind)
        if res is not None:
            return res
        from kubernetes.dynamic.exceptions import ResourceNotFoundError

        missing = ApiError(404, "NotFound", f'the server doesn\'t have a resource type "{kind.lower()}"')
        if kind in self._missing:
            raise missing  # a miss makes the discoverer refetch every group: remember it
        hint = api_version or _HINTS.get(kind)
        try:
            res = self._dyn.resources.get(api_version=hint, kind=kind) if hint else self._dyn.resources.get(kind=kind)
        except ResourceNotFoundError:
            self._missing.add(kind)
            raise missing from None
        self._resources[kind] = res
        return res

    def serves(self, kind: str, api_version: str | None = None) -> bool:
        """Whether the cluster serves ``kind`` (in ``api_version``) at all (a CRD that is not installed does not)."""
        try:
            self._resource(kind, api_version)
        except ApiError:
            return False
        return True

    def serves_token_requests(self) -> bool:
        """Whether the server mints ServiceAccount tokens (``serviceaccounts/token`` among its core resources)."""
        try:
            found = self._call(self._core.get_api_resources)
        except ApiError:
            return False
        return any(r.name == "serviceaccounts/token" for r in found.resources or ())

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        from kubernetes.client.exceptions import ApiException

        try:
            return fn(*args, **kwargs)
        except ApiException as exc:
            raise api_error(exc) from None

    @staticmethod
    def _dict(result: Any, kind: str | None = None, api_version: str | None = None) -> Obj:
        obj = result.to_dict() if hasattr(result, "to_dict") else dict(result)
        if kind and not obj.get("kind"):
            obj["kind"] = kind
        if api_version and not obj.get("apiVersion"):
            obj["apiVersion"] = api_version
        return obj

    # -- reads -------------------------------------------------------------------
    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj:
        res = self._resource(kind)
        return self._dict(self._call(res.get, name=name, namespace=namespace if res.namespaced else None), kind, res.group_version)

    def list(self, kind: str, namespace: str | None = None, label_selector: str | None = None, field_selector: str | None = None) -> list[Obj]:
        res = self._resource(kind)
        kwargs: dict[str, Any] = {}
        if label_selector:
            kwargs["label_selector"] = label_selector
        if field_selector:
            kwargs["field_selector"] = field_selector
        out = self._call(res.get, namespace=namespace if res.namespaced else None, **kwargs)
        # list items come without kind/apiVersion on the wire; the seam's objects always carry them
        return [dict(item, kind=kind, apiVersion=res.group_version) for item in self._dict(out).get("items") or []]

    # -- writes ------------------------------------------------------------------
    def create(self, obj: Obj) -> Obj:
        if not isinstance(obj, dict) or not obj.get("kind"):
            raise ApiError.bad_request("Object 'Kind' is missing in the request")
        res = self._resource(obj["kind"], obj.get("apiVersion"))
        ns = (obj.get("metadata") or {}).get("namespace") if res.namespaced else None
        return self._dict(self._call(res.create, body=obj, namespace=ns), obj["kind"], res.group_version)

    def replace(self, obj: Obj) -> Obj:
        res = self._resource(obj["kind"])
        meta = obj.get("metadata") or {}
        return self._dict(self._call(res.replace, body=obj, name=meta.get("name"), namespace=meta.get("namespace") if res.namespaced else None), obj["kind"], res.group_version)

    def patch(self, kind: str, name: str, namespace: str | None, patch: Any, patch_type: str = "strategic") -> Obj:
        res = self._resource(kind)
        ctype = _PATCH_TYPES.get(patch_type)
        if ctype is None:
            raise ApiError(415, "UnsupportedMediaType", f"unknown patch type {patch_type!r}")
        ns = namespace if res.namespaced else None
        return self._dict(self._call(res.patch, body=patch, name=name, namespace=ns, content_type=ctype), kind, res.group_version)

    def delete(self, kind: str, name: str, namespace: str | None = None, *, force: bool = False) -> Obj:
        res = self._resource(kind)
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0} if force else None
        ns = namespace if res.namespaced else None
        return self._dict(self._call(res.delete, name=name, namespace=ns, body=body))

    def scale(self, kind: str, name: str, namespace: str, replicas: int) -> Obj:
        which = _SCALABLE.get(kind)
        if which is None:
            raise ApiError(404, "NotFound", f"the server could not find the requested resource (patch {kind.lower()}s.scale {name})")
        fn = getattr(self._apps, f"patch_namespaced_{which}_scale")
        self._call(fn, name, namespace, {"spec": {"replicas": int(replicas)}})
        return self.get(kind, name, namespace)

    def evict(self, name: str, namespace: str) -> None:
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": namespace}}
        self._call(self._core.create_namespaced_pod_eviction, name, namespace, body)

    # -- subresources --------------------------------------------------------------
    def logs(self, name: str, namespace: str, container: str | None = None, *, previous: bool = False, tail: int | None = None, since_seconds: float | None = None, timestamps: bool = False) -> str:
        kwargs: dict[str, Any] = {"previous": previous, "timestamps": timestamps}
        if container:
            kwargs["container"] = container
        if tail is not None:
            kwargs["tail_lines"] = int(tail)
        if since_seconds is not None:
            kwargs["since_seconds"] = max(int(since_seconds), 1)
        return str(self._call(self._core.read_namespaced_pod_log, name, namespace, **kwargs))

    def exec(self, name: str, namespace: str, container: str | None, argv: list[str]) -> ExecResult:
        """``kubectl exec`` over the API's websocket (the exit code comes from its status channel)."""
        from kubernetes.stream import stream

        kwargs: dict[str, Any] = {"command": list(argv), "stderr": True, "stdin": False, "stdout": True, "tty": False, "_preload_content": False}
        if container:
            kwargs["container"] = container
        resp = self._call(stream, self._core.connect_get_namespaced_pod_exec, name, namespace, **kwargs)
        chunks: list[str] = []
        try:
            while resp.is_open():
                resp.update(timeout=1)
                if resp.peek_stdout():
                    chunks.append(resp.read_stdout())
                if resp.peek_stderr():
                    chunks.append(resp.read_stderr())
            code = resp.returncode
        finally:
            resp.close()
            sock = getattr(resp, "sock", None)
            if sock is not None:
                # after the server's close frame websocket-client skips its own shutdown: close the socket here
                sock.shutdown()
        return ExecResult("".join(chunks), int(code) if code is not None else 0)

    def service_account_token(self, name: str, namespace: str, seconds: int) -> str:
        """A short-lived token for a ServiceAccount (the TokenRequest API)."""
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": int(seconds)}}
        result = self._call(self._core.create_namespaced_service_account_token, name, namespace, body)
        return str(result.status.token)

    def top_pods(self, namespace: str | None) -> list[tuple[str, str, int, int]]:
        if namespace:
            data = self._call(self._custom.list_namespaced_custom_object, "metrics.k8s.io", "v1beta1", namespace, "pods")
        else:
            data = self._call(self._custom.list_cluster_custom_object, "metrics.k8s.io", "v1beta1", "pods")
        out = []
        for item in data.get("items") or []:
            cpu = sum(cpu_millicores(c["usage"].get("cpu", "0")) for c in item.get("containers") or ())
            mem = sum(memory_bytes(c["usage"].get("memory", "0")) for c in item.get("containers") or ())
            out.append((item["metadata"]["namespace"], item["metadata"]["name"], cpu, mem))
        return out

    def top_nodes(self) -> list[tuple[str, int, int, int, int]]:
        data = self._call(self._custom.list_cluster_custom_object, "metrics.k8s.io", "v1beta1", "nodes")
        capacity = {n["metadata"]["name"]: (n.get("status") or {}).get("capacity") or {} for n in self.list("Node")}
        out = []
        for item in data.get("items") or []:
            name = item["metadata"]["name"]
            cap = capacity.get(name, {})
            out.append((name, cpu_millicores(item["usage"].get("cpu", "0")), cpu_millicores(cap.get("cpu", "0")), memory_bytes(item["usage"].get("memory", "0")), memory_bytes(cap.get("memory", "0"))))
        return out
