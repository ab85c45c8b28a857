"""Where an agent's commands run on a real cluster: the real ``kubectl``, scoped to the app namespace.

Two parts:

* :func:`scoped_kubeconfig` writes a kubeconfig that can only touch the app's
  namespace. On a cluster with authentication it creates a ServiceAccount, a
  Role and a RoleBinding in that namespace and asks the TokenRequest API for a
  short-lived token, so the API server's RBAC enforces the scope. A cluster
  without authentication (``sre-env serve`` on loopback) gets a kubeconfig whose
  context is the namespace and which carries no credentials at all (the backend
  then puts ``guard.NamespaceGuard`` in front of it to enforce the same scope).
* A sandbox runs one command string: :class:`DockerSandbox` in a locked-down
  container (no capabilities, read-only root, a non-root user, only the scoped
  kubeconfig mounted) when a Docker engine answers, otherwise
  :class:`SubprocessSandbox`: ``/bin/sh -c`` with a scrubbed environment (only
  ``PATH``, ``HOME`` in a private temporary directory and ``KUBECONFIG``), so no
  harness variable (API keys, the admin kubeconfig) reaches the agent. The
  subprocess still shares the machine's filesystem; use the Docker sandbox where
  that matters.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
import tempfile
import time
import uuid
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import yaml

from sre_env.errors import ApiError

if TYPE_CHECKING:
    from .api import KubeApi

__all__ = [
    "AGENT_NAME",
    "AgentOutput",
    "DockerSandbox",
    "Sandbox",
    "ScopedCredentials",
    "SubprocessSandbox",
    "agent_role",
    "docker_available",
    "is_mutating",
    "make_sandbox",
    "scoped_kubeconfig",
]

#: the ServiceAccount, Role and RoleBinding the agent acts as
AGENT_NAME = "sre-env-agent"
#: output beyond this is cut (the env truncates further for the observation)
OUTPUT_CAP = 1 << 20
_SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
_MUTATING_VERBS = frozenset({"apply", "create", "delete", "patch", "scale", "set", "edit", "label", "annotate", "cordon", "uncordon", "drain", "taint", "replace", "expose", "autoscale", "rollout", "exec", "debug", "cp", "run"})


@dataclass(frozen=True)
class AgentOutput:
    """One command's terminal output (stdout and stderr merged), exit code and wall seconds."""

    output: str
    exit_code: int
    wall_s: float
    mutating: bool


#: kubectl's global flags that take a separate value (``-n ns``)
_VALUE_FLAGS = frozenset({"-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user", "-s", "--server", "--token", "--as", "--as-group", "--request-timeout", "-v"})


def _verb(args: list[str]) -> str:
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a in _VALUE_FLAGS:
            skip = True
        elif not a.startswith("-"):
            return a
    return ""


def is_mutating(command: str) -> bool:
    """Whether a command line may change the cluster (a kubectl write verb in any stage)."""
    from sre_env.shell.parse import ShellSyntaxError, parse_pipeline

    try:
        stages = parse_pipeline(command)
    except ShellSyntaxError:
        return False
    for stage in stages:
        argv = stage.argv
        if argv and argv[0] == "kubectl":
            verb = _verb(argv[1:])
            if verb in _MUTATING_VERBS and not (verb == "rollout" and "status" in argv or verb == "rollout" and "history" in argv):
                return True
    return False


# ---------------------------------------------------------------- scoped credentials
def agent_role(namespace: str) -> list[dict[str, Any]]:
    """The agent's ServiceAccount, Role and RoleBinding (everything an SRE does inside one namespace),
    and a ClusterRole/ClusterRoleBinding that only reads nodes (``kubectl get/describe/top nodes``)."""
    labels = {"app.kubernetes.io/managed-by": "sre-env"}
    meta = {"name": AGENT_NAME, "namespace": namespace, "labels": labels}
    cluster_meta = {"name": f"{AGENT_NAME}-nodes-{namespace}", "labels": labels}
    rules = [
        {"apiGroups": ["", "apps", "batch", "autoscaling", "policy", "networking.k8s.io", "discovery.k8s.io", "events.k8s.io"], "resources": ["*"], "verbs": ["*"]},
        {"apiGroups": ["metrics.k8s.io"], "resources": ["pods"], "verbs": ["get", "list"]},
    ]
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": dict(meta)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": dict(meta), "rules": rules},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": dict(meta),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": AGENT_NAME},
            "subjects": [{"kind": "ServiceAccount", "name": AGENT_NAME, "namespace": namespace}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": dict(cluster_meta),
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}, {"apiGroups": ["metrics.k8s.io"], "resources": ["nodes"], "verbs": ["get", "list"]}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": dict(cluster_meta),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cluster_meta["name"]},
            "subjects": [{"kind": "ServiceAccount", "name": AGENT_NAME, "namespace": namespace}],
        },
    ]


@dataclass
class ScopedCredentials:
    """The agent's kubeconfig and the objects created for it (deleted again by :meth:`revoke`)."""

    kubeconfig: Path
    namespace: str
    #: "token" (RBAC-scoped ServiceAccount) or "namespace" (no-auth server: context namespace only)
    mode: str
    created: list[tuple[str, str]] = field(default_factory=list)

    def revoke(self, api: "KubeApi") -> None:
        for kind, name in reversed(self.created):
            try:
                api.delete(kind, name, self.namespace)
            except ApiError:
                pass
        self.created.clear()


def _current(cfg: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    ctx_name = cfg.get("current-context")
    ctx = next((c["context"] for c in cfg.get("contexts") or () if c.get("name") == ctx_name), None)
    if ctx is None:
        raise ValueError(f"the kubeconfig has no current context ({ctx_name!r})")
    cluster = next((c["cluster"] for c in cfg.get("clusters") or () if c.get("name") == ctx.get("cluster")), None)
    user = next((u.get("user") or {} for u in cfg.get("users") or () if u.get("name") == ctx.get("user")), {})
    if cluster is None:
        raise ValueError(f"the kubeconfig's context names an unknown cluster {ctx.get('cluster')!r}")
    return ctx, cluster, user


def _cluster_entry(cluster: dict[str, Any], base: Path) -> dict[str, Any]:
    """The cluster stanza with its CA inlined (the agent's sandbox cannot see the harness's files)."""
    out = {"server": cluster["server"]}
    if cluster.get("certificate-authority-data"):
        out["certificate-authority-data"] = cluster["certificate-authority-data"]
    elif cluster.get("certificate-authority"):
        ca = Path(cluster["certificate-authority"])
        ca = ca if ca.is_absolute() else base / ca
        out["certificate-authority-data"] = base64.b64encode(ca.read_bytes()).decode()
    if cluster.get("insecure-skip-tls-verify"):
        out["insecure-skip-tls-verify"] = True
    if cluster.get("tls-server-name"):
        out["tls-server-name"] = cluster["tls-server-name"]
    return out


def _write(path: Path, cluster: dict[str, Any], namespace: str, user: dict[str, Any]) -> Path:
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "sre-env", "cluster": cluster}],
        "users": [{"name": AGENT_NAME, "user": user}],
        "contexts": [{"name": "sre-env", "context": {"cluster": "sre-env", "user": AGENT_NAME, "namespace": namespace}}],
        "current-context": "sre-env",
        "preferences": {},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    path.chmod(0o600)
    return path


def scoped_kubeconfig(api: "KubeApi", source: str | Path, namespace: str, dest: str | Path, *, token_seconds: int = 7200) -> ScopedCredentials:
    """Write the agent's namespace-scoped kubeconfig to ``dest`` (see the module docstring)."""
    src = Path(source)
    _, cluster, user = _current(yaml.safe_load(src.read_text()) or {})
    entry = _cluster_entry(cluster, src.parent)
    dest = Path(dest)
    if not any(user.get(k) for k in ("token", "tokenFile", "client-certificate", "client-certificate-data", "exec", "auth-provider", "username")):
        # no authentication at all (the served simulator): nothing to scope a token to
        return ScopedCredentials(_write(dest, entry, namespace, {}), namespace, "namespace")
    creds = ScopedCredentials(dest, namespace, "token")
    try:
        for obj in agent_role(namespace):
            try:
                api.create(obj)
                creds.created.append((obj["kind"], obj["metadata"]["name"]))
            except ApiError as err:
                if err.code != 409:
                    raise
        token = api.service_account_token(AGENT_NAME, namespace, token_seconds)
    except ApiError as err:
        creds.revoke(api)
        raise ApiError(err.code, err.reason, f"could not create the agent's namespace-scoped credentials: {err.message}") from None
    _write(dest, entry, namespace, {"token": token})
    return creds


# ---------------------------------------------------------------- sandboxes
class Sandbox(Protocol):
    kubeconfig: Path

    def run(self, command: str, *, timeout_s: float = 60.0) -> AgentOutput: ...

    def close(self) -> None: ...


def _kubectl_dir(home: Path) -> str:
    """A bin directory holding the kubectl the harness found, first on the agent's PATH."""
    found = shutil.which("kubectl")
    bindir = home / ".sre-env-bin"
    bindir.mkdir(parents=True, exist_ok=True)
    if found and not (bindir / "kubectl").exists():
        (bindir / "kubectl").symlink_to(Path(found).resolve())
    return f"{bindir}:{_SAFE_PATH}"


class SubprocessSandbox:
    """``/bin/sh -c`` with only PATH, HOME (a private temp dir) and KUBECONFIG in its environment."""

    def __init__(self, kubeconfig: str | Path, *, home: str | Path | None = None) -> None:
        self._own_home = home is None
        self.home = Path(home) if home is not None else Path(tempfile.mkdtemp(prefix="sre-env-agent-"))
        if self._own_home:
            weakref.finalize(self, shutil.rmtree, self.home, True)
        self.kubeconfig = self.home / ".kube" / "config"
        self.kubeconfig.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(kubeconfig, self.kubeconfig)
        self.kubeconfig.chmod(0o600)
        self.env = {"PATH": _kubectl_dir(self.home), "HOME": str(self.home), "KUBECONFIG": str(self.kubeconfig)}

    def run(self, command: str, *, timeout_s: float = 60.0) -> AgentOutput:
        t0 = time.monotonic()
        try:
            proc = subprocess.run(["/bin/sh", "-c", command], env=self.env, cwd=self.home, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout_s, check=False)
            out, code = proc.stdout, proc.returncode
        except subprocess.TimeoutExpired as exc:
            out, code = (exc.stdout or b"") + f"\n[command timed out after {timeout_s:.0f}s]\n".encode(), 124
        text = out[:OUTPUT_CAP].decode("utf-8", "replace")
        return AgentOutput(text, code, time.monotonic() - t0, is_mutating(command))

    def close(self) -> None:
        if self._own_home:
            shutil.rmtree(self.home, ignore_errors=True)


def docker_available(docker: str = "docker") -> bool:
    """Whether a Docker engine answers (a client without a daemon does not count)."""
    exe = shutil.which(docker)
    if exe is None:
        return False
    try:
        return subprocess.run([exe, "info", "--format", "{{.ServerVersion}}"], capture_output=True, timeout=10, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


class DockerSandbox:
    """A long-lived, locked-down container with kubectl; each command is one ``docker exec``.

    Host networking, so a loopback API server (kind, ``sre-env serve``) is reachable;
    no capabilities, no privilege escalation, read-only root filesystem, a
    non-root user, and nothing mounted but the scoped kubeconfig.
    """

    #: any image with /bin/sh and kubectl works (``sandbox_image=``); alpine/k8s adds jq, curl and friends
    DEFAULT_IMAGE = "docker.io/alpine/k8s:1.32.4"

    def __init__(self, kubeconfig: str | Path, *, image: str = DEFAULT_IMAGE, docker: str = "docker", start: bool = True) -> None:
        self.docker = docker
        self.image = image
        self.name = f"sre-env-agent-{uuid.uuid4().hex[:10]}"
        self._dir = Path(tempfile.mkdtemp(prefix="sre-env-agent-"))
        weakref.finalize(self, shutil.rmtree, self._dir, True)
        self.kubeconfig = self._dir / "config"
        shutil.copyfile(kubeconfig, self.kubeconfig)
        self.kubeconfig.chmod(0o644)  # read by the container's non-root user
        self._started = False
        if start:
            self.start()

    def run_argv(self) -> list[str]:
        return [
            self.docker, "run", "-d", "--rm", "--name", self.name,
            "--network", "host", "--read-only", "--tmpfs", "/tmp:rw,size=64m", "--tmpfs", "/home/agent:rw,size=16m",
            "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--user", "65532:65532",
            "--pids-limit", "256", "--memory", "512m",
            "-e", "HOME=/home/agent", "-e", "KUBECONFIG=/kube/config",
            "-v", f"{self.kubeconfig}:/kube/config:ro",
            "--entrypoint", "/bin/sh", self.image, "-c", "sleep infinity",
        ]

    def exec_argv(self, command: str) -> list[str]:
        return [self.docker, "exec", "-w", "/home/agent", self.name, "/bin/sh", "-c", command]

    def start(self) -> None:
        proc = subprocess.run(self.run_argv(), capture_output=True, text=True, timeout=300, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"could not start the agent sandbox container ({self.image}): {proc.stderr.strip()}")
        self._started = True

    def run(self, command: str, *, timeout_s: float = 60.0) -> AgentOutput:
        t0 = time.monotonic()
        try:
            proc = subprocess.run(self.exec_argv(command), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout_s, check=False)
            out, code = proc.stdout, proc.returncode
        except subprocess.TimeoutExpired as exc:
            out, code = (exc.stdout or b"") + f"\n[command timed out after {timeout_s:.0f}s]\n".encode(), 124
        return AgentOutput(out[:OUTPUT_CAP].decode("utf-8", "replace"), code, time.monotonic() - t0, is_mutating(command))

    def close(self) -> None:
        if self._started:
            subprocess.run([self.docker, "rm", "-f", self.name], capture_output=True, timeout=60, check=False)
            self._started = False
        shutil.rmtree(self._dir, ignore_errors=True)


def make_sandbox(kubeconfig: str | Path, mode: str = "auto", *, image: str | None = None) -> Sandbox:
    """``docker`` when asked or (``auto``) when an engine answers; ``subprocess`` otherwise."""
    if mode not in ("auto", "docker", "subprocess"):
        raise ValueError(f"sandbox must be 'auto', 'docker' or 'subprocess', got {mode!r}")
    if mode == "docker" or (mode == "auto" and docker_available()):
        return DockerSandbox(kubeconfig, image=image or DockerSandbox.DEFAULT_IMAGE)
    return SubprocessSandbox(kubeconfig)

