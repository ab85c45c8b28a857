"""Node access on a real cluster: one privileged pod per node, driven through ``exec``.

What ``ssh`` gives on the simulator, a real cluster gives through a pod with the
host's PID, network and IPC namespaces, ``privileged: true`` and the host's root
filesystem at ``/host``: host commands run through ``nsenter`` into PID 1's
namespaces (the node's own ``sysctl``, ``dmsetup``, ``systemctl``), and bpftrace
runs from the pod's image against the host kernel.

Node faults:

* read errors (DiskSector): a bpftrace program overrides ``should_fail_bio`` (a
  function the kernel marks for error injection) with ``-EIO`` for reads of the
  chosen sectors of the device, and for a share of its other reads. This needs
  ``CONFIG_BPF_KPROBE_OVERRIDE`` and ``CONFIG_FAIL_MAKE_REQUEST``-style error
  injection; :meth:`PrivilegedPodNodes.inject_read_errors` checks and refuses
  clearly on kernels without it;
* silent corruption: the filesystem is re-mounted through a ``dm-flakey``
  mapping whose ``corrupt_bio_byte`` feature flips a byte in reads;
* sysctls and unit limits (``LimitNOFILE`` drop-ins), recorded so recovery puts
  the old value back;
* hardware faults software can emulate: packet corruption (``tc netem``), a
  flapping link, a stepped clock with time sync stopped.

Nothing here can run without a real cluster; the generated pod spec and every
command are unit-tested (tests/k8s/test_nodes.py) and the rest is documented as
real-cluster only in docs/kubernetes.md.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sre_env.backend import ExecResult
from sre_env.errors import ApiError

if TYPE_CHECKING:
    from .api import KubeApi

__all__ = ["MANAGED_BY", "NodeFaultUnsupported", "PrivilegedPodNodes", "eio_program", "flakey_table", "node_pod_spec"]

#: label every object the harness creates carries (cleanup ignores them; reset removes them)
MANAGED_BY = {"app.kubernetes.io/managed-by": "sre-env"}
NODE_NAMESPACE = "sre-env-system"
DEFAULT_IMAGE = "quay.io/iovisor/bpftrace:latest"
_NSENTER = ("nsenter", "--target", "1", "--mount", "--uts", "--ipc", "--net", "--pid", "--")


class NodeFaultUnsupported(RuntimeError):
    """The node's kernel or tools cannot host this fault (the message says what is missing)."""


def node_pod_name(node: str) -> str:
    return f"sre-env-node-{node}"[:63].rstrip("-.")


def node_pod_spec(node: str, *, namespace: str = NODE_NAMESPACE, image: str = DEFAULT_IMAGE) -> dict[str, Any]:
    """The privileged pod pinned to ``node`` (what ``kubectl debug node/... --profile=sysadmin`` makes, kept running)."""
    host_dirs = (("host-root", "/", "/host"), ("sys", "/sys", "/sys"), ("debugfs", "/sys/kernel/debug", "/sys/kernel/debug"), ("modules", "/lib/modules", "/lib/modules"), ("dev", "/dev", "/dev"))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": node_pod_name(node), "namespace": namespace, "labels": {**MANAGED_BY, "sre-env/role": "node-access"}},
        "spec": {
            "nodeName": node,
            "hostPID": True,
            "hostNetwork": True,
            "hostIPC": True,
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 0,
            "tolerations": [{"operator": "Exists"}],
            "containers": [
                {
                    "name": "node",
                    "image": image,
                    "command": ["/bin/sh", "-c", "trap 'exit 0' TERM; sleep infinity & wait"],
                    "securityContext": {"privileged": True},
                    "volumeMounts": [{"name": n, "mountPath": m} for n, _, m in host_dirs],
                }
            ],
            "volumes": [{"name": n, "hostPath": {"path": p}} for n, p, _ in host_dirs],
        },
    }


def host_argv(argv: list[str]) -> list[str]:
    """``argv`` run in the host's namespaces (the node's own binaries and mounts)."""
    return [*_NSENTER, *argv]


def eio_program(major: int, minor: int, sectors: tuple[int, ...], permille: int, *, sectors_per_range: int = 8) -> str:
    """A bpftrace program: reads on ``major:minor`` fail with EIO at ``sectors`` (and ``permille``/1000 of the rest)."""
    dev = (major << 20) | minor  # the kernel's internal dev_t (MKDEV)
    hit = " || ".join(f"($s >= {s} && $s < {s + sectors_per_range})" for s in sorted(set(sectors))) or "0"
    return (
        "kprobe:should_fail_bio {\n"
        "  $b = (struct bio *)arg0;\n"
        f"  if ($b->bi_bdev->bd_dev != {dev} || ($b->bi_opf & 0xff) != 0) {{ return; }}\n"
        "  $s = $b->bi_iter.bi_sector;\n"
        f"  if ({hit} || rand % 1000 < {int(permille)}) {{ override(-5); }}\n"
        "}\n"
    )


def flakey_table(device_path: str, sectors: int, *, corrupt_byte: int = 224, up_s: int = 0, down_s: int = 1) -> str:
    """A dm-flakey table that corrupts byte ``corrupt_byte`` of every read while "down" (``up_s`` up, ``down_s`` down)."""
    return f"0 {int(sectors)} flakey {device_path} 0 {int(up_s)} {int(down_s)} 5 corrupt_bio_byte {int(corrupt_byte)} r 1 0"


@dataclass
class PrivilegedPodNodes:
    """NodeAccess for a real cluster (see the module docstring)."""

    api: "KubeApi"
    namespace: str = NODE_NAMESPACE
    image: str = DEFAULT_IMAGE
    ready_timeout_s: float = 180.0
    #: what was changed, so recover()/reset can put it back: key -> previous value
    saved: dict[str, str] = field(default_factory=dict)
    _ready: set[str] = field(default_factory=set)

    # -- the pods -----------------------------------------------------------------
    def names(self) -> list[str]:
        return sorted(n["metadata"]["name"] for n in self.api.list("Node"))

    def ensure_pod(self, node: str) -> str:
        """Create (once) the node's access pod and wait until it runs; returns its name."""
        name = node_pod_name(node)
        if node in self._ready:
            return name
        try:
            self.api.get("Namespace", self.namespace)
        except ApiError as err:
            if err.code != 404:
                raise
            self.api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace, "labels": dict(MANAGED_BY)}})
        try:
            self.api.create(node_pod_spec(node, namespace=self.namespace, image=self.image))
        except ApiError as err:
            if err.code != 409:
                raise
        deadline = time.monotonic() + self.ready_timeout_s
        while time.monotonic() < deadline:
            pod = self.api.get("Pod", name, self.namespace)
            if (pod.get("status") or {}).get("phase") == "Running":
                self._ready.add(node)
                return name
            time.sleep(1.0)
        raise TimeoutError(f"node access pod {self.namespace}/{name} did not start on {node} within {self.ready_timeout_s:.0f}s")

    def remove_pods(self) -> None:
        """Delete the access pods (the namespace stays: it may hold another episode's pods)."""
        for pod in self.api.list("Pod", self.namespace, "sre-env/role=node-access"):
            try:
                self.api.delete("Pod", pod["metadata"]["name"], self.namespace, force=True)
            except ApiError:
                pass
        self._ready.clear()

    def _run(self, node: str, argv: list[str], *, host: bool = True) -> ExecResult:
        pod = self.ensure_pod(node)
        return self.api.exec(pod, self.namespace, "node", host_argv(argv) if host else list(argv))

    def _check(self, node: str, argv: list[str], *, host: bool = True) -> str:
        res = self._run(node, argv, host=host)
        if res.exit_code != 0:
            raise RuntimeError(f"{' '.join(argv)} on {node} failed ({res.exit_code}): {res.output.strip()}")
        return res.output

    # -- NodeAccess -------------------------------------------------------------------
    def exec(self, node: str, argv: list[str]) -> ExecResult:
        if node not in self.names():
            return ExecResult(f"ssh: Could not resolve hostname {node}: Name or service not known\n", 255)
        return self._run(node, argv)

    def device_for_path(self, node: str, path: str) -> str:
        source = self._check(node, ["findmnt", "-n", "-o", "SOURCE", "--target", path]).strip()
        parent = self._check(node, ["lsblk", "-n", "-o", "PKNAME", source]).strip()
        return parent or source.rsplit("/", 1)[-1]

    def _major_minor(self, node: str, device: str) -> tuple[int, int]:
        text = self._check(node, ["cat", f"/sys/class/block/{device}/dev"]).strip()
        major, minor = text.split(":")
        return int(major), int(minor)

    def inject_read_errors(self, node: str, device: str, *, fraction: float, sectors: tuple[int, ...], paths: tuple[str, ...] = ()) -> None:
        """EIO on reads of ``sectors`` of ``device`` (and a ``fraction`` of its other reads), via bpftrace.

        ``paths`` narrows nothing here: at the block layer a read has a device and a
        sector, not a file; the data disk holding ``paths`` is the device.
        """
        probe = self._run(node, ["/bin/sh", "-c", "bpftrace --info 2>&1 | grep -i 'override' ; test -e /sys/kernel/debug/fail_function"], host=False)
        if probe.exit_code != 0 or "yes" not in probe.output.lower():
            raise NodeFaultUnsupported(f"node {node}: the kernel does not allow bpf_override_return (CONFIG_BPF_KPROBE_OVERRIDE / function error injection); DiskSector cannot run there")
        major, minor = self._major_minor(node, device)
        prog = eio_program(major, minor, sectors, int(round(1000 * fraction)))
        pidfile = f"/run/sre-env-eio-{device}.pid"
        script = f"nohup bpftrace --unsafe -e {shlex.quote(prog)} >/tmp/sre-env-eio-{device}.log 2>&1 & echo $! > /host{pidfile}"
        self._check(node, ["/bin/sh", "-c", script], host=False)
        self.saved[f"eio:{node}:{device}"] = pidfile

    def clear_read_errors(self, node: str, device: str) -> None:
        pidfile = self.saved.pop(f"eio:{node}:{device}", f"/run/sre-env-eio-{device}.pid")
        self._run(node, ["/bin/sh", "-c", f"test -f {pidfile} && kill $(cat {pidfile}) && rm -f {pidfile}; true"])

    def inject_silent_corruption(self, node: str, device: str, *, fraction: float, paths: tuple[str, ...] = ()) -> None:
        """Re-mount the filesystem holding ``paths[0]`` through a dm-flakey mapping that corrupts reads.

        ``fraction`` sets the down share of each 10 s cycle (reads corrupt while down).
        """
        mountpoint = self._check(node, ["findmnt", "-n", "-o", "TARGET", "--target", paths[0] if paths else f"/dev/{device}"]).strip()
        source = self._check(node, ["findmnt", "-n", "-o", "SOURCE", "--target", mountpoint]).strip()
        size = int(self._check(node, ["blockdev", "--getsz", source]).strip())
        down = max(1, min(9, int(round(10 * fraction))))
        mapper = f"sre-env-flakey-{device}"
        table = flakey_table(source, size, up_s=10 - down, down_s=down)
        script = f"umount {shlex.quote(mountpoint)} && dmsetup create {mapper} --table {shlex.quote(table)} && mount /dev/mapper/{mapper} {shlex.quote(mountpoint)}"
        self._check(node, ["/bin/sh", "-c", script])
        self.saved[f"flakey:{node}:{device}"] = f"{source} {mountpoint}"

    def clear_silent_corruption(self, node: str, device: str) -> None:
        entry = self.saved.pop(f"flakey:{node}:{device}", None)
        if entry is None:
            return
        source, mountpoint = entry.split(" ", 1)
        mapper = f"sre-env-flakey-{device}"
        self._check(node, ["/bin/sh", "-c", f"umount {shlex.quote(mountpoint)} && dmsetup remove {mapper} && mount {shlex.quote(source)} {shlex.quote(mountpoint)}"])

    def set_sysctl(self, node: str, key: str, value: str) -> str:
        """``sysctl -w key=value`` on the node; returns (and records) the previous value."""
        previous = self._check(node, ["sysctl", "-n", key]).strip()
        self._check(node, ["sysctl", "-w", f"{key}={value}"])
        self.saved.setdefault(f"sysctl:{node}:{key}", previous)
        return previous

    def restore_sysctl(self, node: str, key: str) -> None:
        previous = self.saved.pop(f"sysctl:{node}:{key}", None)
        if previous is not None:
            self._check(node, ["sysctl", "-w", f"{key}={previous}"])

    def set_unit_limit(self, node: str, unit: str, limit: str, value: str) -> None:
        """A systemd drop-in (``LimitNOFILE=1024`` on containerd, say), then restart the unit."""
        dropin = f"/etc/systemd/system/{unit}.d/99-sre-env.conf"
        script = f"mkdir -p /etc/systemd/system/{unit}.d && printf '[Service]\\n{limit}={value}\\n' > {dropin} && systemctl daemon-reload && systemctl restart {unit}"
        self._check(node, ["/bin/sh", "-c", script])
        self.saved[f"limit:{node}:{unit}"] = dropin

    def clear_unit_limit(self, node: str, unit: str) -> None:
        dropin = self.saved.pop(f"limit:{node}:{unit}", None)
        if dropin is not None:
            self._check(node, ["/bin/sh", "-c", f"rm -f {dropin} && systemctl daemon-reload && systemctl restart {unit}"])

    def _default_interface(self, node: str) -> str:
        route = self._check(node, ["ip", "route", "show", "default"]).split()
        if "dev" not in route:
            raise NodeFaultUnsupported(f"node {node} has no default route to find its network interface")
        return route[route.index("dev") + 1]

    def inject_hardware_fault(self, node: str, kind: str, **params: Any) -> None:
        """What a broken part does, emulated where software can: ``nic_crc`` (netem corrupts a
        ``fraction`` of packets), ``nic_flap`` (the link goes down ``down_s_per_min`` each minute),
        ``clock`` (time sync stopped, the clock stepped by ``offset_s``). ``ecc`` and
        ``tsc_unstable`` need the hardware itself: refused."""
        if kind == "nic_crc":
            iface = self._default_interface(node)
            self._check(node, ["tc", "qdisc", "replace", "dev", iface, "root", "netem", "corrupt", f"{100 * float(params['fraction']):g}%"])
            self.saved[f"hw:{node}:nic_crc"] = iface
        elif kind == "nic_flap":
            iface = self._default_interface(node)
            down = max(1, min(59, int(round(float(params["down_s_per_min"])))))
            loop = f"while true; do ip link set {iface} down; sleep {down}; ip link set {iface} up; sleep {60 - down}; done"
            self._check(node, ["/bin/sh", "-c", f"nohup sh -c {shlex.quote(loop)} >/dev/null 2>&1 & echo $! > /run/sre-env-flap.pid"])
            self.saved[f"hw:{node}:nic_flap"] = iface
        elif kind == "clock":
            offset = int(round(float(params["offset_s"])))
            stop = "for u in chronyd chrony systemd-timesyncd ntp ntpd; do systemctl stop $u 2>/dev/null && echo $u; done; true"
            stopped = self._check(node, ["/bin/sh", "-c", stop]).split()
            self._check(node, ["/bin/sh", "-c", f"date -s @$(( $(date +%s) + {offset} )) >/dev/null && hwclock --systohc 2>/dev/null; true"])
            self.saved[f"hw:{node}:clock"] = f"{offset} {' '.join(stopped)}".strip()
        else:
            raise NodeFaultUnsupported(f"{kind} needs the faulty hardware itself; it cannot be emulated on node {node}")

    def clear_hardware_fault(self, node: str, kind: str) -> None:
        entry = self.saved.pop(f"hw:{node}:{kind}", None)
        if entry is None:
            return
        if kind == "nic_crc":
            self._run(node, ["tc", "qdisc", "del", "dev", entry, "root"])
        elif kind == "nic_flap":
            self._run(node, ["/bin/sh", "-c", f"test -f /run/sre-env-flap.pid && kill $(cat /run/sre-env-flap.pid); rm -f /run/sre-env-flap.pid; ip link set {entry} up"])
        elif kind == "clock":
            offset, *units = entry.split()
            start = "; ".join(f"systemctl start {u}" for u in units) or "true"
            self._run(node, ["/bin/sh", "-c", f"date -s @$(( $(date +%s) - {int(offset)} )) >/dev/null; hwclock --systohc 2>/dev/null; {start}"])

    def recover_all(self) -> None:
        """Undo every node change still recorded (reset calls this before reconciling)."""
        for key in list(self.saved):
            kind, node, what = key.split(":", 2)
            if kind == "eio":
                self.clear_read_errors(node, what)
            elif kind == "flakey":
                self.clear_silent_corruption(node, what)
            elif kind == "sysctl":
                self.restore_sysctl(node, what)
            elif kind == "limit":
                self.clear_unit_limit(node, what)
            elif kind == "hw":
                self.clear_hardware_fault(node, what)
