"""One incident, one story: every surface an agent can look at agrees on what happened."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import sre_env  # noqa: F401

NS = "hotel-reservation"


def _env(env_id: str, seed: int = 0):
    env = gym.make(env_id)
    obs, info = env.reset(seed=seed)
    return env.unwrapped, obs, info


def _run(core, command: str) -> str:
    obs, *_ = core.step(command)
    return obs["output"]


def test_metric_names_come_with_reset_only() -> None:
    core, obs, info = _env("SREGym/TargetPortMisconfig-v0")
    assert info["metric_names"] == sre_env.env.metric_names(core.scenario_cls)
    assert len(info["metric_names"]) == obs["metrics"].shape[1]
    assert any(n.startswith("cpu_cores{") for n in info["metric_names"])
    *_, step_info = core.step("kubectl get nodes")
    assert "metric_names" not in step_info


def test_crash_loop_story() -> None:
    core, obs, _ = _env("SREGym/MissingEnvVar-v0", seed=0)
    v = core.scenario.variant
    core.step("sleep 60")
    pods = _run(core, f"kubectl get pods -n {NS} -l io.kompose.service={v['service']}")
    assert "CrashLoopBackOff" in pods or "Error" in pods or "Running" in pods
    restarts = _run(core, f"promql 'sum(kube_pod_container_status_restarts_total{{namespace=\"{NS}\",container=\"{v['container']}\"}})' -o json")
    value = float(json.loads(restarts)["data"]["result"][0]["value"][1])
    assert value >= 2
    events = _run(core, f"kubectl get events -n {NS}")
    assert "BackOff" in events
    previous = _run(core, f"kubectl logs deploy/{v['service']} -n {NS} --previous")
    assert v["var"] in previous
    core.step("sleep 60")
    alerts = _run(core, "alerts")
    assert "KubePodCrashLooping" in alerts


def test_port_misconfig_story() -> None:
    core, obs, _ = _env("SREGym/TargetPortMisconfig-v0", seed=0)
    v = core.scenario.variant
    svc = v["service"]
    # the callee's pods are healthy ...
    pods = _run(core, f"kubectl get pods -n {NS} -l io.kompose.service={svc}")
    assert "Running" in pods and "1/1" in pods
    # ... its endpoints point at the wrong port ...
    assert f":{v['wrong']}" in _run(core, f"kubectl get endpoints {svc} -n {NS}")
    # ... the callers' spans fail on that edge with the network's error ...
    callers = sorted(c.name for c in core.scenario.app.components if any(d.service == svc for d in c.dependencies))
    found = _run(core, f"traces find --service {callers[0]} --tags error=true --limit 3")
    assert "ERRORS" in found or "error" in found.lower()
    assert "connection refused" in obs["traces"]
    # ... the entrypoint's metrics show the 5xx, while the callee reports no server errors ...
    err = json.loads(_run(core, f"promql 'sum(rate(http_requests_total{{namespace=\"{NS}\",code=~\"5..\"}}[1m]))' -o json"))
    assert float(err["data"]["result"][0]["value"][1]) > 0
    if svc != "frontend" and not svc.startswith("mongodb"):
        own = json.loads(_run(core, f"promql 'sum(rate(grpc_server_handled_total{{namespace=\"{NS}\",service=\"{svc}\",grpc_code!=\"OK\"}}[1m]))' -o json"))
        assert all(float(r["value"][1]) == 0 for r in own["data"]["result"])
    # ... and nothing looks like a pod problem
    assert "KubePodCrashLooping" not in _run(core, "alerts --all")


@pytest.mark.parametrize("seed", [0, 1])
def test_disk_sector_story(seed: int) -> None:
    core, obs, _ = _env("SREGym/DiskSector-v0", seed=seed)
    v = core.scenario.variant
    node, dev = v["node"], v["device"]
    core.step("sleep 30")
    dmesg = _run(core, f"ssh {node} dmesg | grep -i 'medium error' | tail -3")
    assert f"dev {dev}" in dmesg
    smart = _run(core, f"ssh {node} smartctl -A /dev/{dev}")
    pending = next(line for line in smart.splitlines() if "Current_Pending_Sector" in line)
    assert int(pending.split()[-1]) > 0
    db_logs = _run(core, f"kubectl logs deploy/{v['database']} -n {NS} --previous --tail=40")
    assert "Input/output error" in db_logs or "WiredTiger" in db_logs
    io = _run(core, f"promql 'rate(node_disk_io_time_seconds_total{{node=\"{node}\",device=\"{dev}\"}}[2m])' -o json")
    assert json.loads(io)["data"]["result"], "node-exporter reports the disk"
    # there is no tidy 'disk error' metric, as on a real node: the evidence is on the host
    assert json.loads(_run(core, "promql 'node_disk_read_errors_total' -o json"))["data"]["result"] == []
    # the application code paths only see a failing database
    other = sorted(c.name for c in core.scenario.app.components if c.role == "service" and c.name not in v["callers"])[0]
    assert "Input/output error" not in _run(core, f"kubectl logs deploy/{other} -n {NS} --tail=50")
