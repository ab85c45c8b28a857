"""Start-up checks the kubelet makes on its configuration beyond parsing it.

The kubelet loads ``/var/lib/kubelet/config.yaml`` and then the files it names;
a file that does not exist stops it with the real error. (Parsing and eviction
thresholds are in ``sre_env.sim.kubelet.eviction``.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sre_env.sim.kernel.hosts import HostNode

__all__ = ["kubelet_start_error", "NODE_PKI_FILES"]

#: files kubeadm put on every node
NODE_PKI_FILES = frozenset({"/etc/kubernetes/pki/ca.crt", "/etc/kubernetes/kubelet.conf", "/etc/kubernetes/bootstrap-kubelet.conf"})


def kubelet_start_error(host: "HostNode", cfg: dict[str, Any]) -> str | None:
    """Why the kubelet cannot start with ``cfg`` (the parsed config file), or None."""
    ca = (((cfg.get("authentication") or {}).get("x509") or {}).get("clientCAFile")) if isinstance(cfg.get("authentication"), dict) else None
    if ca and ca not in NODE_PKI_FILES and ca not in host.files:
        return f"failed to run Kubelet: failed to construct kubelet dependencies: unable to load client CA file {ca}: open {ca}: no such file or directory"
    return None
