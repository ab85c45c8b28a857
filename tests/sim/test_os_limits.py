"""Per-container kernel limits: ephemeral ports held by TIME_WAIT sockets, and RLIMIT_NOFILE.

The model's claims, checked through the agent's surface: a client that reconnects
per call keeps ~rate x 60 s sockets in TIME_WAIT; a pod's port range is its own
network namespace's (the node's sysctl does not reach it, tcp_fin_timeout does
not shorten TIME_WAIT); a start wrapper's ``ulimit -n`` is PID 1's limit, not the
limit of what ``kubectl exec`` starts; a Go server at its limit logs its failed
accepts and its clients time out.
"""

from __future__ import annotations

import json

import sre_env
from sre_env.sim.runtime.oslimits import DEFAULT_NOFILE, exec_target, nofile_limit
from sre_env.telemetry.metrics_store import client_error_ratio

NS = "astronomy-shop"
SHIP = "deployment/shipping"


def _env(env_id: str) -> sre_env.SREEnv:
    env = sre_env.SREEnv(env_id)
    env.reset(seed=0)
    return env


def _out(env: sre_env.SREEnv, cmd: str) -> str:
    return env.step(cmd)[0]["output"]


def _sysctls(env: sre_env.SREEnv, items: list[dict[str, str]]) -> None:
    body = json.dumps({"spec": {"template": {"spec": {"securityContext": {"sysctls": items}}}}})
    assert "patched" in _out(env, f"kubectl patch {SHIP} -n {NS} -p '{body}'")
    env.step("sleep 90")


def _tw(env: sre_env.SREEnv) -> int:
    sockstat = _out(env, f"kubectl exec {SHIP} -n {NS} -- cat /proc/net/sockstat")
    line = next(ln for ln in sockstat.splitlines() if ln.startswith("TCP:"))
    return int(line.split()[line.split().index("tw") + 1])


def test_a_per_call_client_keeps_its_time_wait_sockets_on_a_healthy_pod() -> None:
    env = _env("EphemeralPortExhaustion")
    _out(env, f"kubectl patch {SHIP} -n {NS} --type=json -p '[{{\"op\":\"remove\",\"path\":\"/spec/template/spec/securityContext/sysctls\"}}]'")
    env.step("sleep 90")
    assert _out(env, f"kubectl exec {SHIP} -n {NS} -- cat /proc/sys/net/ipv4/ip_local_port_range") == "32768\t60999\n"
    # ~8.6 quotes/s, each a new connection closed by the client: ~514 sockets wait out 60 s
    assert 480 <= _tw(env) <= 560
    quote_ip = env.backend.api.get("Service", "quote", NS)["spec"]["clusterIP"]
    assert _out(env, f"kubectl exec {SHIP} -n {NS} -- netstat -tan | grep -c TIME_WAIT").strip() == str(_tw(env))
    rows = _out(env, f"kubectl exec {SHIP} -n {NS} -- netstat -tan | grep TIME_WAIT | head -50").splitlines()
    assert len(rows) == 50 and all(ln.split()[4] == f"{quote_ip}:8080" and ln.split()[5] == "TIME_WAIT" for ln in rows)
    local_ports = {int(ln.split()[3].rsplit(":", 1)[1]) for ln in rows}
    assert len(local_ports) == len(rows) and min(local_ports) >= 32768 and max(local_ports) <= 60999
    logs = _out(env, f"kubectl logs {SHIP} -n {NS} --since=60s")
    assert "Cannot assign requested address" not in logs
    assert client_error_ratio(env.backend.world, "astronomy-shop") < 0.01


def test_a_narrow_port_range_fails_connects_with_eaddrnotavail() -> None:
    env = _env("EphemeralPortExhaustion")
    lo, hi = (int(x) for x in env.scenario.variant["range"].split())
    assert _out(env, f"kubectl exec {SHIP} -n {NS} -- cat /proc/sys/net/ipv4/ip_local_port_range") == f"{lo}\t{hi}\n"
    # every port of the range is held by a socket in TIME_WAIT
    assert _tw(env) == hi - lo + 1
    logs = _out(env, f"kubectl logs {SHIP} -n {NS} --tail=20")
    assert "Failed to connect to host: Cannot assign requested address (os error 99)" in logs
    assert client_error_ratio(env.backend.world, "astronomy-shop") > 0.03
    proxy = _out(env, f"kubectl logs deployment/frontend-proxy -n {NS} --tail=50")
    assert '"POST /api/checkout HTTP/1.1" 500' in proxy


def test_the_nodes_sysctl_is_not_the_pods_and_fin_timeout_does_not_shorten_time_wait() -> None:
    env = _env("EphemeralPortExhaustion")
    rng = env.scenario.variant["range"]
    node = env.backend.api.list("Pod", NS, "opentelemetry.io/name=shipping")[0]["spec"]["nodeName"]
    assert _out(env, f"ssh {node} sysctl net.ipv4.ip_local_port_range") == "net.ipv4.ip_local_port_range = 32768\t60999\n"
    _out(env, f"ssh {node} sysctl -w net.ipv4.ip_local_port_range='1024 65535'")
    _out(env, f"kubectl rollout restart {SHIP} -n {NS}")
    env.step("sleep 90")
    assert "Cannot assign requested address" in _out(env, f"kubectl logs {SHIP} -n {NS} --tail=5")
    _sysctls(env, [{"name": "net.ipv4.ip_local_port_range", "value": rng}, {"name": "net.ipv4.tcp_fin_timeout", "value": "10"}])
    assert "Cannot assign requested address" in _out(env, f"kubectl logs {SHIP} -n {NS} --tail=5")
    assert client_error_ratio(env.backend.world, "astronomy-shop") > 0.03


def test_widening_the_pods_range_restores_checkout() -> None:
    env = _env("EphemeralPortExhaustion")
    _sysctls(env, [{"name": "net.ipv4.ip_local_port_range", "value": "1024 65000"}])
    assert _out(env, f"kubectl exec {SHIP} -n {NS} -- cat /proc/sys/net/ipv4/ip_local_port_range") == "1024\t65000\n"
    assert 480 <= _tw(env) <= 560
    env.step("sleep 60")
    assert client_error_ratio(env.backend.world, "astronomy-shop") < 0.01


# ------------------------------------------------------------------ open files
FE = "deployment/frontend"
HR = "hotel-reservation"


def test_the_start_wrapper_parses_like_the_shell() -> None:
    wrapped = {"command": ["sh", "-c", "ulimit -c unlimited && ulimit -n 1024 && exec frontend --port 5000"]}
    assert exec_target(wrapped) == ["frontend", "--port", "5000"]
    assert nofile_limit(wrapped) == 1024
    assert exec_target({"command": ["frontend"]}) is None and nofile_limit({"command": ["frontend"]}) == DEFAULT_NOFILE
    assert exec_target({"command": ["sh", "-c", "ulimit -n 64; frontend"]}) is None, "no exec: the shell stays PID 1"
    assert nofile_limit({"command": ["/bin/sh", "-c", "ulimit -n unlimited; exec frontend"]}) == DEFAULT_NOFILE


def test_pid1_has_the_wrappers_limit_and_exec_gets_the_runtime_default() -> None:
    env = _env("FileDescriptorExhaustion")
    limit = env.scenario.variant["limit"]
    pods = _out(env, f"kubectl get pods -n {HR} -l io.kompose.service=frontend")
    assert "Running" in pods and "1/1" in pods, "the wrapper execs the real binary"
    limits = _out(env, f"kubectl exec {FE} -n {HR} -- cat /proc/1/limits")
    assert f"Max open files            {limit:<21}{limit:<21}files" in limits
    assert _out(env, f"kubectl exec {FE} -n {HR} -- sh -c 'ulimit -n'") == f"{DEFAULT_NOFILE}\n"
    assert _out(env, f"kubectl exec {FE} -n {HR} -- sh -c 'ls /proc/1/fd | wc -l'").strip() == str(limit)
    logs = _out(env, f"kubectl logs {FE} -n {HR} --tail=30")
    assert "http: Accept error: accept tcp [::]:5000: accept4: too many open files; retrying in" in logs
    assert client_error_ratio(env.backend.world, "hotel-reservation") > 0.2


def test_a_limit_above_the_demand_serves_and_holds_what_it_needs() -> None:
    env = _env("FileDescriptorExhaustion")
    patch = json.dumps([{"op": "replace", "path": "/spec/template/spec/containers/0/command", "value": ["sh", "-c", "ulimit -n 65536 && exec frontend"]}])
    assert "patched" in _out(env, f"kubectl patch {FE} -n {HR} --type=json -p '{patch}'")
    env.step("sleep 90")
    fds = int(_out(env, f"kubectl exec {FE} -n {HR} -- sh -c 'ls /proc/1/fd | wc -l'").strip())
    assert env.scenario.variant["limit"] < fds < 65536
    assert "Max open files            65536" in _out(env, f"kubectl exec {FE} -n {HR} -- cat /proc/1/limits")
    assert "too many open files" not in _out(env, f"kubectl logs {FE} -n {HR} --since=30s")
    env.step("sleep 60")
    assert client_error_ratio(env.backend.world, "hotel-reservation") < 0.01


# ------------------------------------------------------------------ /dev/shm
PG = "deployment/postgresql"


def _shm_patch(size: str, memory: str | None) -> str:
    ops = [
        {"op": "add", "path": "/spec/template/spec/volumes", "value": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": size}}]},
        {"op": "add", "path": "/spec/template/spec/containers/0/volumeMounts", "value": [{"name": "dshm", "mountPath": "/dev/shm"}]},
    ]
    if memory:
        ops.append({"op": "replace", "path": "/spec/template/spec/containers/0/resources/limits/memory", "value": memory})
    return f"kubectl patch {PG} -n {NS} --type=json -p '{json.dumps(ops)}'"


def test_parallel_hash_join_shared_memory_follows_the_settings() -> None:
    from sre_env.sim.runtime.pg_reports import DEFAULTS, dsm_bytes, pg_settings

    mib = 2**20
    assert dsm_bytes(dict(DEFAULTS)) == 4 * mib * 2 * 3 + mib, "work_mem x hash_mem_multiplier x (2 workers + leader)"
    tuned = pg_settings({"args": ["-c", "work_mem=32MB", "-c", "max_parallel_workers_per_gather=4"]})
    assert tuned["work_mem"] == "32MB" and dsm_bytes(tuned) == 32 * mib * 2 * 5 + mib
    assert dsm_bytes({**tuned, "max_parallel_workers_per_gather": "0"}) == 0, "a serial plan uses private memory"
    assert dsm_bytes(pg_settings({"args": ["-c", "work_mem=32MB", "--dynamic_shared_memory_type=mmap"]})) == 0, "mmap DSM lives under PGDATA"


def test_reports_fail_on_the_default_shm_and_a_restart_does_not_help() -> None:
    env = _env("DevShmExhaustion")
    shm = _out(env, f"kubectl exec {PG} -n {NS} -- df -h /dev/shm").splitlines()
    assert len(shm) == 2 and shm[1].split()[0] == "shm" and shm[1].split()[1] == "64.0M" and "100%" in shm[1]
    logs = _out(env, f"kubectl logs {PG} -n {NS} --tail=6")
    assert 'ERROR:  could not resize shared memory segment "/PostgreSQL.' in logs and "bytes: No space left on device" in logs
    assert 'background worker "parallel worker"' in logs
    activity = _out(env, f"kubectl exec {PG} -n {NS} -- psql -U root -d otel -c 'select pid, application_name, client_addr from pg_stat_activity'")
    assert "Metabase v0.50.30" in activity and "172.18.0.1" in activity
    _out(env, f"kubectl rollout restart {PG} -n {NS}")
    env.step("sleep 150")
    assert "could not resize shared memory segment" in _out(env, f"kubectl logs {PG} -n {NS} --since=60s")
    # the shop's own traffic never touches the reports
    assert client_error_ratio(env.backend.world, "astronomy-shop") < 0.01


def test_a_big_shm_under_the_old_memory_limit_gets_oom_killed() -> None:
    env = _env("DevShmExhaustion")
    assert "patched" in _out(env, _shm_patch("512Mi", None))
    env.step("sleep 200")
    described = _out(env, f"kubectl describe pod -n {NS} -l opentelemetry.io/name=postgresql")
    assert "OOMKilled" in described
    assert "could not resize shared memory segment" not in _out(env, f"kubectl logs {PG} -n {NS} --since=60s")


def test_a_sized_memory_backed_shm_serves_the_reports() -> None:
    env = _env("DevShmExhaustion")
    need = env.scenario.variant["need_mib"]
    assert "patched" in _out(env, _shm_patch("512Mi", "1Gi"))
    env.step("sleep 150")
    row = _out(env, f"kubectl exec {PG} -n {NS} -- df -h /dev/shm").splitlines()[1].split()
    assert row[0] == "tmpfs" and row[1] == "512.0M" and row[2] == f"{need}.0M"
    assert "could not resize" not in _out(env, f"kubectl logs {PG} -n {NS} --since=100s")
    assert "OOMKilled" not in _out(env, f"kubectl describe pod -n {NS} -l opentelemetry.io/name=postgresql")


def test_lowering_the_servers_shared_memory_use_also_fits_64_mib() -> None:
    env = _env("DevShmExhaustion")
    ops = json.dumps([{"op": "remove", "path": "/spec/template/spec/containers/0/args"}])
    assert "patched" in _out(env, f"kubectl patch {PG} -n {NS} --type=json -p '{ops}'")
    env.step("sleep 150")
    row = _out(env, f"kubectl exec {PG} -n {NS} -- df -h /dev/shm").splitlines()[1].split()
    assert row[0] == "shm" and row[2] == "25.0M", "the defaults' hash join: 4MB x 2 x 3 + 1 MiB"
    assert "could not resize" not in _out(env, f"kubectl logs {PG} -n {NS} --since=100s")
    assert all(c.passed for c in env.scenario.cause_checks(env.backend))
