"""Files an operator writes on a node: an overlay over the generated host filesystem.

Node configuration that survives a reboot lives in files (``/etc/sysctl.d``,
kubelet and chrony configs). Faults write them the way configuration
management would, and agents repair them with the usual tools (``tee``,
``echo >``, ``sed -i``, ``rm``); ``sysctl --system`` and a reboot read them
back. Only this overlay is writable; generated files (``/proc``, logs) are not.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sre_env.sim.kernel.hosts import HostNode

__all__ = ["read", "write", "remove", "entries", "sed_apply", "sysctl_files", "parse_sysctl_conf", "MAX_FILE_BYTES", "DEFAULT_KUBELET_CONFIG"]

MAX_FILE_BYTES = 64 * 1024
#: /var/lib/kubelet/config.yaml as kubeadm wrote it (before anyone edits it)
DEFAULT_KUBELET_CONFIG = (
    "apiVersion: kubelet.config.k8s.io/v1beta1\nauthentication:\n  anonymous:\n    enabled: false\n  webhook:\n    cacheTTL: 0s\n    enabled: true\n"
    "  x509:\n    clientCAFile: /etc/kubernetes/pki/ca.crt\nauthorization:\n  mode: Webhook\ncgroupDriver: systemd\nclusterDNS:\n- 10.96.0.10\n"
    "clusterDomain: cluster.local\ncontainerRuntimeEndpoint: \"\"\nevictionHard:\n  imagefs.available: 15%\n  memory.available: 100Mi\n"
    "  nodefs.available: 10%\n  nodefs.inodesFree: 5%\nhealthzBindAddress: 127.0.0.1\nhealthzPort: 10248\nkind: KubeletConfiguration\n"
    "logging:\n  flushFrequency: 0\n  options:\n    json:\n      infoBufferSize: \"0\"\n  verbosity: 0\nmemorySwap: {}\nnodeStatusReportFrequency: 0s\n"
    "nodeStatusUpdateFrequency: 0s\nrotateCertificates: true\nruntimeRequestTimeout: 0s\nshutdownGracePeriod: 0s\nshutdownGracePeriodCriticalPods: 0s\n"
    "staticPodPath: /etc/kubernetes/manifests\nstreamingConnectionIdleTimeout: 0s\nsyncFrequency: 0s\nvolumeStatsAggPeriod: 0s\n"
)
#: files that a node holds nowhere else (the overlay is the only copy): writable roots
_WRITABLE = ("/etc/", "/root/", "/tmp/", "/home/", "/var/lib/kubelet/config.yaml", "/usr/local/", "/var/lib/cni/networks/")


def read(node: "HostNode", path: str) -> str | None:
    return node.files.get(path)


def writable(path: str) -> bool:
    return path.startswith(_WRITABLE) and not path.endswith("/") and ".." not in path


def write(node: "HostNode", path: str, text: str, *, append: bool = False) -> str | None:
    """Write (or append to) ``path``; returns an error message in the shell's words, or None."""
    if not writable(path):
        return f"{path}: Read-only file system"
    old = node.files.get(path, "") if append else ""
    new = (old + text)[:MAX_FILE_BYTES]
    node.files[path] = new
    return None


def remove(node: "HostNode", path: str) -> bool:
    return node.files.pop(path, None) is not None


def entries(node: "HostNode", directory: str) -> list[str]:
    """Names the overlay adds to ``directory`` (sorted)."""
    prefix = directory.rstrip("/") + "/"
    return sorted({p[len(prefix):].split("/", 1)[0] for p in node.files if p.startswith(prefix)})


def sed_apply(script: str, text: str) -> tuple[str, str | None]:
    """``sed`` with the common one-command scripts: ``s/re/repl/[g]`` and ``/re/d``; (new text, error)."""
    m = re.fullmatch(r"s(.)(.*?)\1(.*?)\1(g?)", script)
    lines = text.splitlines(keepends=True)
    try:
        if m:
            pattern, repl, glob = _bre(m.group(2)), re.sub(r"\\(\d)", r"\\\1", m.group(3)).replace("&", r"\g<0>"), m.group(4)
            out = [re.sub(pattern, repl, ln.rstrip("\n"), count=0 if glob else 1) + ("\n" if ln.endswith("\n") else "") for ln in lines]
        else:
            d = re.fullmatch(r"/(.*)/d", script)
            if not d:
                return text, f"sed: -e expression #1, char {len(script)}: unknown command: `{script[-1:]}'"
            pattern = _bre(d.group(1))
            out = [ln for ln in lines if not re.search(pattern, ln)]
    except re.error:
        return text, "sed: -e expression #1, char 1: unterminated `s' command"
    return "".join(out), None


def _bre(expr: str) -> str:
    """POSIX basic regex -> Python: ``\\(``/``\\)`` group, bare parentheses are literal."""
    out, i = [], 0
    while i < len(expr):
        c = expr[i]
        if c == "\\" and i + 1 < len(expr):
            nxt = expr[i + 1]
            out.append(nxt if nxt in "()|{}+?" else "\\" + nxt)
            i += 2
            continue
        out.append("\\" + c if c in "()|{}+?" else c)
        i += 1
    return "".join(out)


def parse_sysctl_conf(text: str) -> dict[str, str]:
    vals: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")) or "=" not in line:
            continue
        k, v = line.split("=", 1)
        vals[k.strip().lstrip("-").replace("/", ".")] = " ".join(v.split())
    return vals


def sysctl_files(node: "HostNode") -> dict[str, str]:
    """Settings from ``/etc/sysctl.d/*.conf`` (in name order) then ``/etc/sysctl.conf``, as ``sysctl --system`` applies them."""
    vals: dict[str, str] = {}
    for name in entries(node, "/etc/sysctl.d"):
        if name.endswith(".conf"):
            vals.update(parse_sysctl_conf(node.files.get(f"/etc/sysctl.d/{name}", "")))
    vals.update(parse_sysctl_conf(node.files.get("/etc/sysctl.conf", "")))
    return vals
