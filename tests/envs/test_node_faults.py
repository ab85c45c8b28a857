"""OS and hardware faults: the evidence is reachable from the agent's surface, and absent when healthy.

Each test walks the investigation an SRE would run (node status, kernel log,
unit status, sysctls, link counters) and checks that the fault shows where it
would on a real node — and that the same commands on a healthy node do not.
"""

from __future__ import annotations

import pytest

import sre_env
from sre_env.sim.engine import reboot_node


def investigate(env_id: str, seed: int, commands: list[str]) -> tuple[str, object]:
    env = sre_env.SREEnv(env_id)
    env.reset(seed=seed)
    node = env.scenario.variant["node"]
    out = []
    for cmd in commands:
        obs, *_ = env.step(cmd.format(node=node, ns=env.scenario.namespace))
        out.append(obs["output"])
    return "\n".join(out), env.scenario


def healthy_output(commands: list[str], node: str) -> str:
    env = sre_env.SREEnv("MissingEnvVar")
    env.reset(seed=0)
    return "\n".join(env.step(c.format(node=node, ns="hotel-reservation"))[0]["output"] for c in commands)


CASES = {
    "KubeletDown": (
        ["kubectl get nodes", "kubectl describe node {node}", "ssh {node} systemctl is-enabled kubelet", "ssh {node} systemctl status kubelet", "kubectl get pods -n {ns} -o wide"],
        ["NotReady", "Kubelet stopped posting node status.", "disabled", "inactive", "node.kubernetes.io/unreachable"],
    ),
    "NodeClockDrift": (
        ["kubectl get nodes", "ssh {node} journalctl -u kubelet --no-pager | tail -3", "ssh {node} chronyc tracking", "ssh {node} systemctl is-enabled chrony"],
        ["NotReady", "x509: certificate has expired or is not yet valid", "506 Cannot talk to daemon", "disabled"],
    ),
    "ConntrackExhaustion": (
        ["ssh {node} dmesg | tail -5", "ssh {node} sysctl net.netfilter.nf_conntrack_max", "ssh {node} grep -r nf_conntrack_max /etc/sysctl.d/"],
        ["nf_conntrack: table full, dropping packet", "/etc/sysctl.d/90-net-tuning.conf:net.netfilter.nf_conntrack_max"],
    ),
    "NicPacketCorruption": (
        ["ssh {node} ip -s link show eth0", "ssh {node} dmesg | tail -20"],
        ["bad frame checksum"],
    ),
    "NicLinkFlap": (
        ["ssh {node} dmesg | grep -i link | tail -6"],
        ["Link is Down", "Link is Up"],
    ),
    "MemoryEccErrors": (
        ["sleep 300", "ssh {node} dmesg | grep -i -e edac -e sigbus | tail -8", "kubectl get pods -n {ns} -o wide"],
        ["EDAC MC0", "SIGBUS"],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_scripted_investigation_finds_the_evidence(name: str) -> None:
    commands, expected = CASES[name]
    text, scenario = investigate(name, 0, commands)
    for needle in expected:
        assert needle in text, f"{name}: {needle!r} not found by the investigation"
    control = healthy_output(commands, scenario.variant["node"])
    for needle in expected:
        assert needle not in control, f"{name}: {needle!r} also shows on a healthy cluster"


def test_crc_errors_count_up_in_link_statistics() -> None:
    env = sre_env.SREEnv("NicPacketCorruption")
    env.reset(seed=0)
    node = env.scenario.variant["node"]
    first = env.step(f"ssh {node} ip -s link show eth0")[0]["output"]
    env.step("sleep 60")
    second = env.step(f"ssh {node} ip -s link show eth0")[0]["output"]
    assert "cni0" not in first and first.startswith("2: eth0:")
    errors = [int(out.splitlines()[out.splitlines().index(next(l for l in out.splitlines() if "RX:" in l)) + 1].split()[2]) for out in (first, second)]
    assert 0 < errors[0] < errors[1]


def test_node_files_persist_and_apply_on_reboot() -> None:
    env = sre_env.SREEnv("MissingEnvVar")
    env.reset(seed=0)
    world = env.backend.world
    env.step("ssh worker-1 'echo net.netfilter.nf_conntrack_max = 100000 > /etc/sysctl.d/80-test.conf'")
    assert world.hosts["worker-1"].sysctls["net.netfilter.nf_conntrack_max"] == "262144", "writing the file alone changes nothing"
    reboot_node(world, "worker-1")
    assert world.hosts["worker-1"].sysctls["net.netfilter.nf_conntrack_max"] == "100000"
    out = env.step("ssh worker-1 rm /etc/sysctl.d/80-test.conf")[0]["output"]
    assert out == ""
    out = env.step("ssh worker-1 rm /etc/hostname")[0]["output"]
    assert "Read-only file system" in out


def test_kubelet_outage_evicts_after_the_toleration_and_recovers() -> None:
    env = sre_env.SREEnv("KubeletDown")
    env.reset(seed=0)
    node = env.scenario.variant["node"]
    env.step("sleep 300")
    pods = env.step(f"kubectl get pods -n hotel-reservation -o wide --field-selector spec.nodeName={node}")[0]["output"]
    assert "Terminating" in pods, "pods on an unreachable node are evicted after 300 s"
    env.step(f"ssh {node} systemctl enable --now kubelet")
    env.step("sleep 60")
    nodes = env.step("kubectl get nodes")[0]["output"]
    assert "NotReady" not in nodes
    pods = env.step(f"kubectl get pods -n hotel-reservation -o wide --field-selector spec.nodeName={node}")[0]["output"]
    assert "Terminating" not in pods


def test_silent_corruption_shows_only_in_the_database_logs() -> None:
    env = sre_env.SREEnv("SilentDataCorruption")
    env.reset(seed=0)
    v = env.scenario.variant
    logs = env.step(f"kubectl logs deployment/{v['database']} -n hotel-reservation --previous --tail=20")[0]["output"]
    assert "read checksum error" in logs and "doesn't match expected checksum" in logs
    assert "Input/output error" not in logs
    dmesg = env.step(f"ssh {v['node']} dmesg | tail -40")[0]["output"]
    assert "I/O error" not in dmesg and "critical medium error" not in dmesg
    smart = env.step(f"ssh {v['node']} smartctl -H /dev/{v['device']}")[0]["output"]
    assert "PASSED" in smart


def test_cpu_throttling_shows_in_cadvisor_metrics_and_top() -> None:
    env = sre_env.SREEnv("CfsThrottling")
    env.reset(seed=0)
    v = env.scenario.variant
    out = env.step("promql 'topk(1, sum by (pod) (rate(container_cpu_cfs_throttled_periods_total{namespace=\"hotel-reservation\"}[5m])))'")[0]["output"]
    assert f'pod="{v["service"]}-' in out
    top = env.step("kubectl top pods -n hotel-reservation")[0]["output"]
    row = next(line for line in top.splitlines() if line.startswith(v["service"] + "-"))
    assert row.split()[1] == v["limit"], row


def test_unstable_tsc_is_in_dmesg_and_sysfs_and_slows_the_node() -> None:
    env = sre_env.SREEnv("ClocksourceUnstable")
    env.reset(seed=0)
    node = env.scenario.variant["node"]
    dmesg = env.step(f"ssh {node} dmesg | grep -i clocksource")[0]["output"]
    assert "Marking clocksource 'tsc' as unstable" in dmesg and "Switched to clocksource hpet" in dmesg
    current = env.step(f"ssh {node} cat /sys/devices/system/clocksource/clocksource0/current_clocksource")[0]["output"]
    assert current.strip() == "hpet"
    healthy = [n for n in ("worker-1", "worker-2", "worker-3") if n != node][0]
    assert env.step(f"ssh {healthy} cat /sys/devices/system/clocksource/clocksource0/current_clocksource")[0]["output"].strip() == "tsc"
    assert env.backend.world.last_traffic["hotel-reservation"].client_success < 0.95
