"""Privileged-pod node access: the pod spec and the commands it runs (a real cluster is needed to run them)."""

from __future__ import annotations

import pytest

from sre_env.backend import ExecResult, NodeAccess
from sre_env.errors import ApiError
from sre_env.k8s.nodes import (
    MANAGED_BY,
    NodeFaultUnsupported,
    PrivilegedPodNodes,
    eio_program,
    flakey_table,
    node_pod_spec,
)


class FakeCluster:
    """Objects in a dict; exec answers from a table of (argv substring -> output, code)."""

    def __init__(self, answers: dict[str, tuple[str, int]] | None = None) -> None:
        self.objects: dict[tuple[str, str, str], dict] = {("Node", "", "worker-1"): {"metadata": {"name": "worker-1"}}}
        self.execs: list[tuple[str, str, str | None, list[str]]] = []
        self.answers = answers or {}

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict:
        obj = self.objects.get((kind, namespace or "", name))
        if obj is None:
            raise ApiError.not_found(kind.lower() + "s", name)
        return obj

    def list(self, kind: str, namespace: str | None = None, label_selector: str | None = None, field_selector: str | None = None) -> list[dict]:
        return [o for (k, ns, _), o in sorted(self.objects.items()) if k == kind and (namespace is None or ns == namespace)]

    def create(self, obj: dict) -> dict:
        key = (obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        if key in self.objects:
            raise ApiError.already_exists(obj["kind"].lower() + "s", obj["metadata"]["name"])
        if obj["kind"] == "Pod":
            obj = {**obj, "status": {"phase": "Running"}}
        self.objects[key] = obj
        return obj

    def delete(self, kind: str, name: str, namespace: str | None = None, *, force: bool = False) -> dict:
        return self.objects.pop((kind, namespace or "", name))

    def exec(self, name: str, namespace: str, container: str | None, argv: list[str]) -> ExecResult:
        self.execs.append((name, namespace, container, list(argv)))
        line = " ".join(argv)
        for needle, (out, code) in self.answers.items():
            if needle in line:
                return ExecResult(out, code)
        return ExecResult("", 0)


def test_the_node_pod_is_privileged_and_pinned() -> None:
    pod = node_pod_spec("worker-2", image="example/bpftrace:1")
    spec = pod["spec"]
    assert spec["nodeName"] == "worker-2" and spec["hostPID"] and spec["hostNetwork"] and spec["hostIPC"]
    assert spec["tolerations"] == [{"operator": "Exists"}]  # reaches cordoned and tainted nodes too
    ctr = spec["containers"][0]
    assert ctr["securityContext"] == {"privileged": True} and ctr["image"] == "example/bpftrace:1"
    mounts = {m["mountPath"] for m in ctr["volumeMounts"]}
    assert {"/host", "/sys/kernel/debug", "/lib/modules", "/dev"} <= mounts
    assert pod["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "sre-env"


def test_the_eio_program_targets_reads_of_the_chosen_sectors() -> None:
    prog = eio_program(8, 16, (2048, 4096), 25)
    assert "kprobe:should_fail_bio" in prog and "override(-5)" in prog
    assert f"bd_dev != {(8 << 20) | 16}" in prog  # MKDEV(8, 16)
    assert "($s >= 2048 && $s < 2056)" in prog and "($s >= 4096 && $s < 4104)" in prog
    assert "(bi_opf & 0xff) != 0" in prog.replace("$b->", "")  # REQ_OP_READ is 0: writes pass
    assert "rand % 1000 < 25" in prog


def test_the_flakey_table_corrupts_reads() -> None:
    assert flakey_table("/dev/sdb", 2097152, up_s=7, down_s=3) == "0 2097152 flakey /dev/sdb 0 7 3 5 corrupt_bio_byte 224 r 1 0"


def test_host_commands_run_through_nsenter_in_the_nodes_pod() -> None:
    cluster = FakeCluster({"sysctl -n net.netfilter.nf_conntrack_max": ("262144\n", 0)})
    nodes = PrivilegedPodNodes(cluster)  # type: ignore[arg-type]
    assert isinstance(nodes, NodeAccess)
    assert nodes.exec("worker-9", ["uptime"]).exit_code == 255  # unknown node: what ssh says
    nodes.set_sysctl("worker-1", "net.netfilter.nf_conntrack_max", "1024")
    ns = cluster.objects[("Namespace", "", "sre-env-system")]
    assert ns["metadata"]["labels"] == MANAGED_BY
    pod, namespace, container, argv = cluster.execs[-1]
    assert (pod, namespace, container) == ("sre-env-node-worker-1", "sre-env-system", "node")
    assert argv[:3] == ["nsenter", "--target", "1"] and argv[-3:] == ["sysctl", "-w", "net.netfilter.nf_conntrack_max=1024"]
    nodes.recover_all()
    assert cluster.execs[-1][3][-3:] == ["sysctl", "-w", "net.netfilter.nf_conntrack_max=262144"]
    assert not nodes.saved


def test_read_errors_need_a_kernel_that_allows_override() -> None:
    cluster = FakeCluster({"bpftrace --info": ("  override: no\n", 1)})
    with pytest.raises(NodeFaultUnsupported, match="bpf_override_return"):
        PrivilegedPodNodes(cluster).inject_read_errors("worker-1", "sdb", fraction=0.1, sectors=(2048,))  # type: ignore[arg-type]


def test_read_errors_start_and_stop_bpftrace() -> None:
    cluster = FakeCluster({"bpftrace --info": ("  override: yes\n", 0), "/sys/class/block/sdb/dev": ("8:16\n", 0)})
    nodes = PrivilegedPodNodes(cluster)  # type: ignore[arg-type]
    nodes.inject_read_errors("worker-1", "sdb", fraction=0.05, sectors=(2048,))
    start = cluster.execs[-1][3]
    assert start[0] == "/bin/sh" and "bpftrace --unsafe -e" in start[2] and f"bd_dev != {(8 << 20) | 16}" in start[2]
    nodes.clear_read_errors("worker-1", "sdb")
    stop = cluster.execs[-1][3]
    assert stop[:2] == ["nsenter", "--target"] and "kill $(cat /run/sre-env-eio-sdb.pid)" in stop[-1]


def test_silent_corruption_remounts_through_dm_flakey_and_back() -> None:
    cluster = FakeCluster({"TARGET --target /data": ("/mnt/disks/ssd0\n", 0), "SOURCE --target /mnt/disks/ssd0": ("/dev/sdb\n", 0), "blockdev --getsz": ("2097152\n", 0)})
    nodes = PrivilegedPodNodes(cluster)  # type: ignore[arg-type]
    nodes.inject_silent_corruption("worker-1", "sdb", fraction=0.3, paths=("/data/db",))
    script = cluster.execs[-1][3][-1]
    assert script.startswith("umount /mnt/disks/ssd0 && dmsetup create sre-env-flakey-sdb --table")
    assert "flakey /dev/sdb 0 7 3 5 corrupt_bio_byte" in script and script.endswith("mount /dev/mapper/sre-env-flakey-sdb /mnt/disks/ssd0")
    nodes.clear_silent_corruption("worker-1", "sdb")
    assert cluster.execs[-1][3][-1] == "umount /mnt/disks/ssd0 && dmsetup remove sre-env-flakey-sdb && mount /dev/sdb /mnt/disks/ssd0"


def test_unit_limits_are_systemd_drop_ins() -> None:
    cluster = FakeCluster()
    nodes = PrivilegedPodNodes(cluster)  # type: ignore[arg-type]
    nodes.set_unit_limit("worker-1", "containerd.service", "LimitNOFILE", "1024")
    script = cluster.execs[-1][3][-1]
    assert "/etc/systemd/system/containerd.service.d/99-sre-env.conf" in script and "LimitNOFILE=1024" in script and "systemctl restart containerd.service" in script
    nodes.clear_unit_limit("worker-1", "containerd.service")
    assert cluster.execs[-1][3][-1].startswith("rm -f /etc/systemd/system/containerd.service.d/99-sre-env.conf")
    nodes.remove_pods()
    assert ("Pod", "sre-env-system", "sre-env-node-worker-1") not in cluster.objects


def test_hardware_faults_are_emulated_where_software_can() -> None:
    cluster = FakeCluster({"ip route show default": ("default via 10.0.0.1 dev ens5 proto dhcp\n", 0), "systemctl stop $u": ("chronyd\n", 0)})
    nodes = PrivilegedPodNodes(cluster)  # type: ignore[arg-type]
    nodes.inject_hardware_fault("worker-1", "nic_crc", fraction=0.02)
    assert cluster.execs[-1][3][-9:] == ["tc", "qdisc", "replace", "dev", "ens5", "root", "netem", "corrupt", "2%"]
    nodes.inject_hardware_fault("worker-1", "clock", offset_s=-420.0)
    assert "date -s @$(( $(date +%s) + -420 ))" in cluster.execs[-1][3][-1]
    nodes.inject_hardware_fault("worker-1", "nic_flap", down_s_per_min=6)
    assert "ip link set ens5 down; sleep 6; ip link set ens5 up; sleep 54" in cluster.execs[-1][3][-1]
    with pytest.raises(NodeFaultUnsupported, match="hardware"):
        nodes.inject_hardware_fault("worker-1", "ecc", per_hour=3)
    nodes.recover_all()
    undo = [" ".join(e[3][-9:]) for e in cluster.execs[-3:]]
    assert any("tc qdisc del dev ens5 root" in u for u in undo)
    assert any("date -s @$(( $(date +%s) - -420 ))" in u and "systemctl start chronyd" in u for u in undo)
    assert any("kill $(cat /run/sre-env-flap.pid)" in u and "ip link set ens5 up" in u for u in undo)
    assert not nodes.saved
