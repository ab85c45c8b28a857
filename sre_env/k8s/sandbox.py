"""Where an agent's commands run on a real cluster: the real ``kubectl``, scoped to the app namespace.

Two parts:

* :func:`scoped_kubeconfig` writes a kubeconfig that can only touch the app's
  namespace. On a cluster that mints ServiceAccount tokens it creates the
  agent's ServiceAccount, Role and bindings (what they allow:
  ``agent_access.py``), the admission policy for the agent's own pods, labels
  the namespace for Pod Security, and asks the TokenRequest API for a
  short-lived token, so the API server enforces the scope. A server that cannot
  scope a token (``sre-env serve``: one bearer token for everything, or none
  with ``--no-auth``) gets mode ``guard``: the agent's kubeconfig carries a
  token of its own, for the namespace guard the backend starts in front of the
  server (``guard.py``), which alone holds the server's token.
* A sandbox runs one command string. ``docker``: a locked-down container (no
  capabilities, read-only root, a non-root user, only the scoped kubeconfig
  mounted, a bridge network of its own without inter-container traffic
  (:func:`create_network`) -- never the host's, so ``kubectl --server`` reaches
  no loopback port of the host; a loopback API server is reached through the
  guard or a relay listening on that network's gateway).
  ``none``: ``/bin/sh -c`` on this machine, as this user, with a scrubbed
  environment (``PATH``, ``HOME`` in a private temporary directory,
  ``KUBECONFIG``): no harness variable reaches the agent, but its files do
  (the admin kubeconfig among them), so it is never chosen silently.
  ``auto`` is ``docker``, and a clear error where no Docker engine answers.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
import tempfile
import time
import uuid
import warnings
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import yaml

from sre_env.errors import ApiError, SREEnvError
from sre_env.kube.authn import new_token

from .agent_access import AGENT_NAME, POD_SECURITY_LABELS, agent_role, pod_policy

if TYPE_CHECKING:
    from .api import KubeApi

__all__ = [
    "AGENT_NAME",
    "SANDBOX_MODES",
    "AgentOutput",
    "DockerSandbox",
    "HostShell",
    "Sandbox",
    "SandboxUnavailable",
    "ScopedCredentials",
    "UnsandboxedWarning",
    "create_network",
    "docker_available",
    "docker_gateway",
    "is_mutating",
    "make_sandbox",
    "remove_network",
    "resolve_sandbox_mode",
    "scoped_kubeconfig",
]

#: ``auto``: docker, or an error without an engine; ``docker``; ``none``: unsandboxed (warns)
SANDBOX_MODES = ("auto", "docker", "none")
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
@dataclass
class ScopedCredentials:
    """The agent's kubeconfig and what was made for it (undone by :meth:`revoke`)."""

    kubeconfig: Path
    namespace: str
    #: "token" (the API server scopes a ServiceAccount token) or "guard" (the namespace guard scopes the agent)
    mode: str
    #: (kind, name) of the objects created, in creation order
    created: list[tuple[str, str]] = field(default_factory=list)
    #: the namespace's Pod Security labels before they were set (label -> value, None: absent); None: left alone
    labels_before: dict[str, str | None] | None = None
    #: guard mode: the server's own token (the guard's upstream credential; never in the agent's kubeconfig)
    upstream_token: str | None = field(default=None, repr=False)
    #: guard mode: the token the agent's kubeconfig carries, which the guard checks
    guard_token: str | None = field(default=None, repr=False)

    def revoke(self, api: "KubeApi") -> None:
        for kind, name in reversed(self.created):
            try:
                api.delete(kind, name, self.namespace)
            except ApiError:
                pass
        self.created.clear()
        if self.labels_before is not None:
            try:
                api.patch("Namespace", self.namespace, None, {"metadata": {"labels": self.labels_before}}, "merge")
            except ApiError:
                pass
            self.labels_before = None


def enforce_pod_security(api: "KubeApi", namespace: str) -> dict[str, str | None] | None:
    """Label ``namespace`` with :data:`POD_SECURITY_LABELS` unless it already enforces ``baseline`` or
    ``restricted``; returns the labels to put back (None: nothing was changed)."""
    labels = (api.get("Namespace", namespace).get("metadata") or {}).get("labels") or {}
    if labels.get("pod-security.kubernetes.io/enforce") in ("baseline", "restricted"):
        return None
    before = {k: labels.get(k) for k in POD_SECURITY_LABELS}
    api.patch("Namespace", namespace, None, {"metadata": {"labels": dict(POD_SECURITY_LABELS)}}, "merge")
    return before


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


_CREDENTIAL_KEYS = ("token", "tokenFile", "client-certificate", "client-certificate-data", "exec", "auth-provider", "username")


def scoped_kubeconfig(api: "KubeApi", source: str | Path, namespace: str, dest: str | Path, *, token_seconds: int = 7200) -> ScopedCredentials:
    """Write the agent's namespace-scoped kubeconfig to ``dest`` (see the module docstring)."""
    src = Path(source)
    _, cluster, user = _current(yaml.safe_load(src.read_text()) or {})
    entry = _cluster_entry(cluster, src.parent)
    dest = Path(dest)
    held = [k for k in _CREDENTIAL_KEYS if user.get(k)]
    if not held or not api.serves_token_requests():
        # nothing to scope a token to (sre-env serve): the guard scopes the agent, holding the server's token
        if held and held != ["token"]:
            raise ValueError(f"the API server cannot mint ServiceAccount tokens and the kubeconfig authenticates with {held[0]!r}: the namespace guard forwards a bearer token only")
        guard_token = new_token()
        creds = ScopedCredentials(_write(dest, entry, namespace, {"token": guard_token}), namespace, "guard", upstream_token=user.get("token"), guard_token=guard_token)
        # the label says what the guard enforces in the server's place (no Pod Security admission there)
        creds.labels_before = enforce_pod_security(api, namespace)
        return creds
    creds = ScopedCredentials(dest, namespace, "token")
    create_pods = api.serves("ValidatingAdmissionPolicy", "admissionregistration.k8s.io/v1")  # else nothing holds the agent's own pods to restricted
    try:
        for obj in agent_role(namespace, create_pods=create_pods) + (pod_policy(namespace) if create_pods else []):
            try:
                api.create(obj)
                creds.created.append((obj["kind"], obj["metadata"]["name"]))
            except ApiError as err:
                if err.code != 409:
                    raise
        creds.labels_before = enforce_pod_security(api, namespace)
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


class SandboxUnavailable(SREEnvError, RuntimeError):
    """The sandbox asked for cannot run here (no Docker engine); the message says what to do."""


class UnsandboxedWarning(UserWarning):
    """The agent's commands run on this machine as this user (``sandbox="none"``)."""


class HostShell:
    """``sandbox="none"``: ``/bin/sh -c`` on this machine, as this user, with only PATH, HOME (a private temp dir)
    and KUBECONFIG in its environment. Not a sandbox: the agent's commands can read this user's files."""

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

    On ``network`` (the backend makes one per sandbox, :func:`create_network`;
    Docker's default bridge otherwise), never the host's network: the API server
    is reached at the address the kubeconfig names (a loopback server through
    the guard or relay on the network's gateway, :func:`docker_gateway`).
    No capabilities, no privilege escalation, read-only root filesystem, a
    non-root user, and nothing mounted but the scoped kubeconfig.
    """

    #: any image with /bin/sh and kubectl works (``sandbox_image=``); alpine/k8s adds jq, curl and friends
    DEFAULT_IMAGE = "docker.io/alpine/k8s:1.32.4"

    def __init__(self, kubeconfig: str | Path, *, image: str = DEFAULT_IMAGE, docker: str = "docker", network: str = "bridge", start: bool = True) -> None:
        self.docker = docker
        self.image = image
        self.network = network
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
            "--network", self.network, "--read-only", "--tmpfs", "/tmp:rw,size=64m", "--tmpfs", "/home/agent:rw,size=16m",
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


def create_network(docker: str = "docker") -> str:
    """A bridge network of the sandbox's own (named ``sre-env-agent-<hex>``), without inter-container traffic: the
    container reaches the host's gateway address (the guard or relay) and what the host routes to, and no other
    container. Remove it with :func:`remove_network`."""
    name = f"sre-env-agent-{uuid.uuid4().hex[:10]}"
    argv = [docker, "network", "create", "--driver", "bridge", "-o", "com.docker.network.bridge.enable_icc=false", "--label", "app.kubernetes.io/managed-by=sre-env", name]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"could not create the sandbox's Docker network: {exc}") from None
    if proc.returncode != 0:
        raise SandboxUnavailable(f"could not create the sandbox's Docker network: {proc.stderr.strip()}")
    return name


def remove_network(name: str, docker: str = "docker") -> None:
    """Remove a network made by :func:`create_network` (after its container is gone)."""
    try:
        subprocess.run([docker, "network", "rm", name], capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        pass


def docker_gateway(docker: str = "docker", network: str = "bridge") -> str:
    """The host's address on a Docker network (where the guard or relay listens for the sandbox)."""
    try:
        proc = subprocess.run([docker, "network", "inspect", network, "--format", "{{range .IPAM.Config}}{{.Gateway}} {{end}}"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"could not ask Docker for the {network!r} network's gateway: {exc}") from None
    found = [a for a in proc.stdout.split() if "." in a]  # the IPv4 gateway
    if proc.returncode != 0 or not found:
        raise SandboxUnavailable(f"Docker's {network!r} network has no IPv4 gateway ({(proc.stderr or proc.stdout).strip() or 'none configured'})")
    return found[0]


def resolve_sandbox_mode(mode: str, *, docker: str = "docker") -> str:
    """``docker`` or ``none`` for a requested mode: ``auto`` needs a Docker engine (a clear error without one,
    never a silent fallback to running on this machine), and ``none`` warns."""
    if mode not in SANDBOX_MODES:
        raise ValueError(f"sandbox must be one of {', '.join(repr(m) for m in SANDBOX_MODES)}, got {mode!r}")
    if mode == "auto":
        if not docker_available(docker):
            raise SandboxUnavailable(
                "sandbox='auto' found no Docker engine (`docker info` failed), so there is nowhere to confine the agent's "
                "commands. Start Docker, or pass sandbox='none' to run them on this machine as this user, where they can "
                "read this user's files (the admin kubeconfig among them)."
            )
        return "docker"
    if mode == "none":
        warnings.warn(
            "sandbox='none': the agent's commands run on this machine as this user, with a scrubbed environment but this "
            "user's files readable (the admin kubeconfig among them); use sandbox='docker' to confine them",
            UnsandboxedWarning,
            stacklevel=3,
        )
    return mode


def make_sandbox(kubeconfig: str | Path, mode: str, *, image: str | None = None, network: str = "bridge") -> Sandbox:
    """The sandbox of a resolved mode (:func:`resolve_sandbox_mode`; ``auto`` is resolved here too)."""
    if mode == "auto":
        mode = resolve_sandbox_mode(mode)
    if mode == "docker":
        return DockerSandbox(kubeconfig, image=image or DockerSandbox.DEFAULT_IMAGE, network=network)
    if mode == "none":
        return HostShell(kubeconfig)
    raise ValueError(f"sandbox must be one of {', '.join(repr(m) for m in SANDBOX_MODES)}, got {mode!r}")
