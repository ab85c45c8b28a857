"""DeathStarBench social-network: manifests, healthy warm-up, call graph, redis memory, the edge filter model."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import sre_env  # noqa: F401 - registers the environments
from sre_env.apps.social_network import SOCIAL_NETWORK as APP
from sre_env.shell import ShellContext, run_command
from sre_env.sim.backend import SimBackend
from sre_env.sim.episodes import healthy_world
from sre_env.sim.logs import render as logs
from sre_env.sim.runtime.edge_filter import (
    is_catastrophic,
    regex_rules,
    request_cost_ms,
)
from sre_env.sim.runtime.redis_model import (
    OOM_ERROR,
    format_memory,
    parse_memory,
    state_for_pod,
)
from sre_env.telemetry.alerting import alerts_of

NS = APP.namespace
RPS = APP.rps
THRIFT = ("compose-post", "post-storage", "user-timeline", "home-timeline", "social-graph", "user", "url-shorten", "media", "text", "unique-id", "user-mention")


@pytest.fixture()
def backend() -> SimBackend:
    return SimBackend(healthy_world(APP))


def _sh(b: SimBackend, cmd: str) -> str:
    return run_command(ShellContext(b, NS), cmd).output


def _pod(b: SimBackend, comp: str) -> dict:
    return next(p for p in b.api.list("Pod", NS) if p["metadata"]["labels"].get("service") == comp and not p["metadata"].get("deletionTimestamp"))


def _redis(b: SimBackend, comp: str):
    return state_for_pod(b.world, _pod(b, comp))


def _cap_redis(b: SimBackend, comp: str, maxmemory: str, policy: str) -> None:
    dep = b.api.get("Deployment", comp, NS)
    args = list(dep["spec"]["template"]["spec"]["containers"][0]["args"])
    b.api.patch("Deployment", comp, NS, [{"op": "replace", "path": "/spec/template/spec/containers/0/args", "value": args + ["--maxmemory", maxmemory, "--maxmemory-policy", policy]}], "json")


# --------------------------------------------------------------------------- the spec and its manifests
def test_components_names_ports_images() -> None:
    names = {c.name for c in APP.components}
    for s in THRIFT:
        comp = APP.component(f"{s}-service")
        assert comp.listen_port == 9090 and comp.service_ports == (("9090", 9090, 9090, "TCP"),)
        assert comp.image == "docker.io/deathstarbench/social-network-microservices:latest"
        assert comp.command[0].endswith("Service")
    for db in ("post-storage", "user-timeline", "social-graph", "user", "url-shorten", "media"):
        assert APP.component(f"{db}-mongodb").image == "docker.io/library/mongo:4.4.6"
    for r in ("home-timeline", "user-timeline", "social-graph"):
        assert APP.component(f"{r}-redis").image == "docker.io/library/redis:6.2.4"
    assert {"nginx-thrift", "media-frontend", "jaeger"} <= names and len(names) == len(APP.components)
    assert APP.component("media-frontend").service_ports == (("8081", 8081, 8080, "TCP"),)
    assert (APP.entrypoint, APP.entry_port) == ("nginx-thrift", 8080)
    assert sorted(rt.weight for rt in APP.requests) == [0.1, 0.3, 0.6]
    assert {rt.feature for rt in APP.requests} == {"home timeline", "user timelines", "posting"}
    for comp in APP.components:
        for dep in comp.dependencies:
            assert dep.service in names, (comp.name, dep.service)


def test_helm_shaped_objects(backend: SimBackend) -> None:
    dep = backend.api.get("Deployment", "compose-post-service", NS)
    assert dep["metadata"]["labels"] == {"service": "compose-post-service"}
    assert dep["spec"]["selector"]["matchLabels"] == {"service": "compose-post-service"}
    tpl = dep["spec"]["template"]
    assert tpl["metadata"]["labels"] == {"service": "compose-post-service", "app": "compose-post-service"}
    assert tpl["spec"]["hostname"] == "compose-post-service"
    ctr = tpl["spec"]["containers"][0]
    assert ctr["command"] == ["ComposePostService"]
    assert ctr["resources"] == {"limits": {"cpu": "100m", "memory": "128Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}}
    mounts = {m["mountPath"]: m["subPath"] for m in ctr["volumeMounts"]}
    assert mounts["/social-network-microservices/config/service-config.json"] == "service-config.json"
    svc = backend.api.get("Service", "compose-post-service", NS)
    assert svc["spec"]["selector"] == {"service": "compose-post-service"} and "labels" not in svc["metadata"]
    cfg = json.loads(backend.api.get("ConfigMap", "compose-post-service", NS)["data"]["service-config.json"])
    assert cfg["home-timeline-redis"] == {"addr": "home-timeline-redis", "port": 6379, "connections": 512, "timeout_ms": 10000, "keepalive_ms": 10000, "use_cluster": 0, "use_replica": 0}
    redis = backend.api.get("Deployment", "home-timeline-redis", NS)["spec"]["template"]["spec"]["containers"][0]
    assert redis["args"] == ["/social-network-microservices/config/redis.conf"]


# --------------------------------------------------------------------------- healthy warm-up and the call graph
def test_warms_up_healthy(backend: SimBackend) -> None:
    world = backend.world
    res = world.last_traffic[APP.name]
    assert res.client_success > 0.999 and not res.failed_edges
    for pod in backend.api.list("Pod", NS):
        assert pod["status"]["phase"] == "Running", pod["metadata"]["name"]
        assert all(c["ready"] for c in pod["status"]["containerStatuses"]), pod["metadata"]["name"]
    firing = [a.line() for a in alerts_of(world).firing(world.clock.now) if ("namespace", NS) in a.labels]
    assert not firing
    assert "Running" in _sh(backend, "kubectl get pods") and "CrashLoopBackOff" not in _sh(backend, "kubectl get pods")


def test_call_graph_serves_the_mixed_workload(backend: SimBackend) -> None:
    rps = backend.world.last_traffic[APP.name].rps
    assert rps["nginx-thrift"] == pytest.approx(RPS)
    # compose-post fans out to every service of a post, once per post
    for s in ("compose-post", "unique-id", "text", "media", "user", "url-shorten", "user-mention", "social-graph"):
        assert rps[f"{s}-service"] == pytest.approx(0.1 * RPS), s
    # every timeline read and every post touch post-storage; home-timeline: reads plus fan-out writes
    assert rps["post-storage-service"] == pytest.approx(RPS)
    assert rps["home-timeline-service"] == pytest.approx(0.7 * RPS)
    assert rps["home-timeline-redis"] == pytest.approx(0.7 * RPS)
    assert rps["user-timeline-service"] == pytest.approx(0.4 * RPS)
    assert rps["post-storage-memcached"] == pytest.approx(0.9 * RPS)
    assert rps["post-storage-mongodb"] == pytest.approx(0.09 * RPS + 0.1 * RPS)
    assert "media-frontend" not in rps and "media-mongodb" not in rps


def test_process_logs_in_their_own_formats(backend: SimBackend) -> None:
    thrift = _sh(backend, "kubectl logs deploy/home-timeline-service").splitlines()
    assert any(l.endswith("<info>: (HomeTimelineService.cpp:" + l.split("HomeTimelineService.cpp:")[1].split(")")[0] + ") Starting the home-timeline-service server...") for l in thrift if "Starting" in l)
    redis = _sh(backend, "kubectl logs deploy/home-timeline-redis")
    assert "# oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo" in redis and "* Ready to accept connections" in redis
    assert "\n\n" not in redis.strip("\n")
    mongo = _sh(backend, "kubectl logs deploy/user-mongodb --tail=3")
    assert mongo.startswith('{"t":{"$date"')
    for dialect in ("cpp-thrift", "openresty", "redis"):
        for event in logs.EVENTS:
            line = logs.render(dialect, event, 100.0, {"service": "user-service", "target": "user-mongodb:27017", "error": "connection refused"}, 7)
            assert "\n" not in line


def test_redis_cli_and_config_files_in_containers(backend: SimBackend) -> None:
    info = _sh(backend, "kubectl exec deploy/home-timeline-redis -- redis-cli INFO memory")
    used = int(next(l for l in info.splitlines() if l.startswith("used_memory:")).split(":")[1])
    assert used > 10 * 1024 * 1024  # fifteen minutes of posts fanned out to followers
    assert "maxmemory:0" in info and "maxmemory_policy:noeviction" in info
    assert _sh(backend, "kubectl exec deploy/home-timeline-redis -- redis-cli CONFIG GET maxmemory") == '1) "maxmemory"\n2) "0"\n'
    assert _sh(backend, "kubectl exec deploy/home-timeline-redis -- redis-cli PING") == "PONG\n"
    assert "Read-only file system" in _sh(backend, "kubectl exec deploy/home-timeline-redis -- redis-cli CONFIG REWRITE")
    # -h reaches another redis through its Service
    other = _sh(backend, "kubectl exec deploy/home-timeline-redis -- redis-cli -h user-timeline-redis INFO memory")
    assert other.startswith("# Memory\nused_memory:") and f"used_memory:{int(_redis(backend, 'user-timeline-redis').used_memory)}\n" in other
    assert "Could not connect to Redis at nowhere:6379" in _sh(backend, "kubectl exec deploy/home-timeline-redis -- redis-cli -h nowhere PING")
    conf = _sh(backend, "kubectl get configmap home-timeline-redis -o yaml")
    assert "io-threads 8" in conf and "port 6379" in conf


# --------------------------------------------------------------------------- redis memory
def test_redis_memory_units() -> None:
    assert parse_memory("4mb") == 4 * 1024 * 1024 and parse_memory("4m") == 4_000_000
    assert parse_memory("1gb") == 1024**3 and parse_memory("100") == 100 and parse_memory("lots") is None
    assert format_memory(0) == "0B" and format_memory(874_312) == "853.82K"


def test_startup_config_reads_conf_file_then_args(backend: SimBackend) -> None:
    st = _redis(backend, "home-timeline-redis")
    assert st.config["io-threads"] == "8" and st.config_file.endswith("redis.conf")
    assert st.maxmemory == 0 and st.policy == "noeviction"


def test_noeviction_limit_refuses_writes_but_serves_reads(backend: SimBackend) -> None:
    _cap_redis(backend, "home-timeline-redis", "4mb", "noeviction")
    backend.advance(200)
    world = backend.world
    st = _redis(backend, "home-timeline-redis")
    assert st.refusing and st.used_memory >= 4 * 1024 * 1024
    res = world.last_traffic[APP.name]
    assert res.client_success == pytest.approx(0.9, abs=0.005)  # every post fails, every read works
    assert set(res.failed_requests) == {"compose_post"}
    assert any(e[:2] == ("home-timeline-service", "home-timeline-redis") and e[3] == OOM_ERROR for e in res.failed_edges)
    assert OOM_ERROR in _sh(backend, "kubectl logs deploy/home-timeline-service --tail=3")
    gw = _sh(backend, "kubectl logs deploy/nginx-thrift --tail=2")
    assert "ComposePost(): compose_post failure: " + OOM_ERROR in gw and 'request: "POST /wrk2-api/post/compose HTTP/1.1"' in gw
    assert _sh(backend, "kubectl exec deploy/home-timeline-redis -- redis-cli SET k v") == f"(error) {OOM_ERROR}\n"
    info = _sh(backend, "kubectl exec deploy/home-timeline-redis -- redis-cli INFO")
    assert "maxmemory:4194304" in info and "maxmemory_human:4.00M" in info and "total_error_replies:" in info
    # redis itself logs nothing about refused writes
    assert "OOM" not in _sh(backend, "kubectl logs deploy/home-timeline-redis")


def test_volatile_policy_cannot_evict_timelines(backend: SimBackend) -> None:
    _cap_redis(backend, "home-timeline-redis", "3mb", "volatile-lru")
    backend.advance(150)
    assert _redis(backend, "home-timeline-redis").refusing
    assert backend.world.last_traffic[APP.name].client_success < 0.95


def test_config_set_fixes_the_process_until_it_restarts(backend: SimBackend) -> None:
    _cap_redis(backend, "home-timeline-redis", "3mb", "noeviction")
    backend.advance(150)
    assert _sh(backend, "kubectl exec deploy/home-timeline-redis -- redis-cli CONFIG SET maxmemory-policy allkeys-lru") == "OK\n"
    assert "(error) ERR Invalid argument 'nope'" in _sh(backend, "kubectl exec deploy/home-timeline-redis -- redis-cli CONFIG SET maxmemory-policy nope")
    backend.advance(60)
    st = _redis(backend, "home-timeline-redis")
    assert not st.refusing and st.evicted_keys > 0 and st.used_memory <= 3 * 1024 * 1024
    assert backend.world.last_traffic[APP.name].client_success > 0.999
    # a new container starts from the pod spec again: empty, capped, and soon full
    _sh(backend, "kubectl delete pod -l service=home-timeline-redis")
    backend.advance(200)
    st = _redis(backend, "home-timeline-redis")
    assert st.policy == "noeviction" and st.refusing and not st.runtime_changes


def test_cache_memory_runtime_only_fix_passes_immediate_fails_durability() -> None:
    env = gym.make("SREGym/CacheMemoryExhausted-v0")
    env.reset(seed=0)
    scenario = env.unwrapped.scenario
    for cmd in scenario.runtime_only_fix():
        env.step(cmd)
    _, _, term, _, info = env.step("submit " + scenario.root_cause().summary)
    env.close()
    assert term
    assert info["oracles"]["immediate"]["passed"]
    assert not info["oracles"]["durability"]["passed"]
    assert not info["is_success"]


# --------------------------------------------------------------------------- the edge filter model
def test_regex_cost_model() -> None:
    assert is_catastrophic(r"^(\w+\s?)*(bot|crawl)$") and is_catastrophic(r"(.*=.*)*x") and is_catastrophic(r"^(/[a-z]+)+/\.\./")
    assert not is_catastrophic(r"(bot|crawl|spider)") and not is_catastrophic(r"^/wrk2-api/(.*)$") and not is_catastrophic(r"([a-z]{1,3})+")
    conf = 'server {\n  # if ($x ~ "(a+)+") {}\n  if ($http_user_agent ~* "^(\\w+\\s?)*bot$") { return 403; }\n  location ~* \\.(php)$ { return 404; }\n}\n'
    rules = regex_rules(conf)
    assert [(r.subject, r.catastrophic) for r in rules] == [("$http_user_agent", True), ("location", False)]
    assert request_cost_ms(conf) > 10 and request_cost_ms("server { listen 8080; }") == 0


def test_backtracking_rule_saturates_the_gateway_until_rolled(backend: SimBackend) -> None:
    cm = backend.api.get("ConfigMap", "nginx-thrift", NS)
    good = cm["data"]["nginx.conf"]
    bad = good.replace("    lua_need_request_body on;\n", '    lua_need_request_body on;\n    if ($args ~* "(.*=.*)*(union|select)\\(") {\n      return 403;\n    }\n')
    backend.api.patch("ConfigMap", "nginx-thrift", NS, {"data": {"nginx.conf": bad}}, "merge")
    backend.advance(30)
    # a subPath mount never sees the edit: the running workers keep the old file
    assert backend.world.last_traffic[APP.name].client_success > 0.999
    in_pod = _sh(backend, "kubectl exec deploy/nginx-thrift -- cat /usr/local/openresty/nginx/conf/nginx.conf")
    assert "union|select" not in in_pod and "listen       8080 reuseport;" in in_pod
    _sh(backend, "kubectl rollout restart deployment/nginx-thrift")
    backend.advance(120)
    assert "union|select" in _sh(backend, "kubectl exec deploy/nginx-thrift -- cat /usr/local/openresty/nginx/conf/nginx.conf")
    dump = _sh(backend, "kubectl exec deploy/nginx-thrift -- nginx -T")
    assert "test is successful" in dump and "union|select" in dump  # valid syntax, just slow
    res = backend.world.last_traffic[APP.name]
    assert res.client_success < 0.5 and res.latency_ms["nginx-thrift"] > 25 * APP.component("nginx-thrift").latency_ms
    assert res.latency_ms["home-timeline-service"] < 5  # the back ends stay fast
    top = _sh(backend, "kubectl top pods")
    assert next(l for l in top.splitlines() if l.startswith("nginx-thrift")).split()[1] == "100m"
    backend.api.patch("ConfigMap", "nginx-thrift", NS, {"data": {"nginx.conf": good}}, "merge")
    _sh(backend, "kubectl rollout restart deployment/nginx-thrift")
    backend.advance(120)
    assert backend.world.last_traffic[APP.name].client_success > 0.999


# --------------------------------------------------------------------------- addresses from service-config.json
def test_services_dial_what_their_config_file_says_after_a_restart(backend: SimBackend) -> None:
    cm = backend.api.get("ConfigMap", "home-timeline-service", NS)
    cfg = json.loads(cm["data"]["service-config.json"])
    cfg["home-timeline-redis"]["port"] = 6380
    backend.api.patch("ConfigMap", "home-timeline-service", NS, {"data": {"service-config.json": json.dumps(cfg, indent=4)}}, "merge")
    backend.advance(30)
    # the running process read the file when it started
    assert backend.world.last_traffic[APP.name].client_success > 0.999
    _sh(backend, "kubectl rollout restart deployment/home-timeline-service")
    backend.advance(60)
    res = backend.world.last_traffic[APP.name]
    assert res.client_success < 0.35  # home timeline reads and posts both need home-timeline-redis
    edge = next(e for e in res.failed_edges if e[:2] == ("home-timeline-service", "home-timeline-redis"))
    assert edge[2] == "home-timeline-redis:6380" and ("i/o timeout" in edge[3] or "refused" in edge[3])
    assert "Failed to connect to Redis (" in _sh(backend, "kubectl logs deploy/home-timeline-service --tail=2")


# --------------------------------------------------------------------------- configuration the processes refuse
def test_redis_refuses_a_bad_directive_and_crash_loops(backend: SimBackend) -> None:
    _cap_redis(backend, "home-timeline-redis", "4mb", "allkeys_lru")
    backend.advance(90)
    assert "CrashLoopBackOff" in _sh(backend, "kubectl get pods -l service=home-timeline-redis")
    log = _sh(backend, "kubectl logs -l service=home-timeline-redis --tail=4")
    assert log.splitlines() == [
        "*** FATAL CONFIG FILE ERROR (Redis 6.2.4) ***",
        "Reading the configuration file, at line 11",  # 9 lines of redis.conf, then --maxmemory, then this
        ">>> 'maxmemory-policy \"allkeys_lru\"'",
        "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction",
    ]


def test_nginx_refuses_unbalanced_braces(backend: SimBackend) -> None:
    conf = backend.api.get("ConfigMap", "nginx-thrift", NS)["data"]["nginx.conf"]
    backend.api.patch("ConfigMap", "nginx-thrift", NS, {"data": {"nginx.conf": conf.replace("    location / {", "    location / ", 1)}}, "merge")
    _sh(backend, "kubectl rollout restart deployment/nginx-thrift")
    backend.advance(90)
    new = [p for p in backend.api.list("Pod", NS) if p["metadata"]["labels"].get("service") == "nginx-thrift"]
    logs_ = " ".join(_sh(backend, f"kubectl logs {p['metadata']['name']} --tail=1") for p in new)
    assert 'nginx: [emerg] unexpected "}" in /usr/local/openresty/nginx/conf/nginx.conf:' in logs_
    # no readiness probe: the new pod counted as available for an instant, the old one was scaled away
    assert "CrashLoopBackOff" in _sh(backend, "kubectl get pods -l service=nginx-thrift")
    assert backend.world.last_traffic[APP.name].client_success == 0.0
