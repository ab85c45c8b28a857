"""Process limits (ephemeral ports, open files, /dev/shm): a scripted investigation finds the evidence on the
agent's surface, and the same commands show none of it once the cause is undone."""

from __future__ import annotations

import pytest

import sre_env
from sre_env.faults.os_limits import ContainerUlimit, PodSysctl, ReportingDashboards

CASES = {
    "EphemeralPortExhaustion": (
        [
            "kubectl logs deployment/{service} -n {ns} --tail=10",
            "kubectl exec deployment/{service} -n {ns} -- cat /proc/net/sockstat",
            "kubectl exec deployment/{service} -n {ns} -- cat /proc/sys/net/ipv4/ip_local_port_range",
            "kubectl get deployment {service} -n {ns} -o yaml",
        ],
        lambda v: ["Cannot assign requested address (os error 99)", f"tw {v['ports']} ", v["range"].replace(" ", "\t"), "net.ipv4.ip_local_port_range"],
    ),
    "FileDescriptorExhaustion": (
        [
            "kubectl logs deployment/{service} -n {ns} --tail=10",
            "kubectl exec deployment/{service} -n {ns} -- cat /proc/1/limits",
            "kubectl get deployment {service} -n {ns} -o yaml",
        ],
        lambda v: ["accept4: too many open files", f"Max open files            {v['limit']:<21}{v['limit']:<21}files", f"ulimit -n {v['limit']}"],
    ),
    "DevShmExhaustion": (
        [
            "kubectl logs deployment/{service} -n {ns} --tail=10",
            "kubectl exec deployment/{service} -n {ns} -- df -h /dev/shm",
            "kubectl get deployment {service} -n {ns} -o yaml",
        ],
        lambda v: ["could not resize shared memory segment", "No space left on device", "100% /dev/shm", f"work_mem={v['work_mem']}"],
    ),
}


def _run(env: sre_env.SREEnv, commands: list[str]) -> str:
    v, ns = env.scenario.variant, env.scenario.namespace
    return "\n".join(env.step(c.format(service=v["service"], ns=ns))[0]["output"] for c in commands)


def _undo(env: sre_env.SREEnv) -> None:
    s, v = env.scenario, env.scenario.variant
    if s.family == "EphemeralPortExhaustion":
        PodSysctl(s.namespace, v["service"], "net.ipv4.ip_local_port_range", v["range"]).recover(env.backend)
    elif s.family == "DevShmExhaustion":
        ReportingDashboards(s.namespace, s.app.name, v["service"], v["container"], v["work_mem"], v["workers"]).recover(env.backend)
    else:
        ContainerUlimit(s.namespace, v["service"], v["container"], tuple(v["argv"]), v["limit"]).recover(env.backend)
    env.step("sleep 120")


@pytest.mark.parametrize("name", sorted(CASES))
def test_scripted_investigation_finds_the_evidence(name: str) -> None:
    commands, needles = CASES[name]
    env = sre_env.SREEnv(name)
    env.reset(seed=0)
    expected = needles(env.scenario.variant)
    text = _run(env, commands)
    for needle in expected:
        assert needle in text, f"{name}: {needle!r} not found by the investigation"
    _undo(env)
    control = _run(env, commands)
    for needle in expected:
        assert needle not in control, f"{name}: {needle!r} still shows once the cause is undone"
