"""The astronomy shop (OpenTelemetry demo) and its runtime model: flags, Kafka, PostgreSQL, Valkey.

Behaviour is asserted through what an operator sees: kubectl objects and logs,
the broker and database tools inside their pods, the metrics and alerts.
"""

from __future__ import annotations

import base64
import json

import pytest

from sre_env.apps.astronomy_shop import ASTRONOMY_SHOP as APP
from sre_env.apps.astronomy_shop import FLAGS, VALKEY_PASSWORD, flagd_json
from sre_env.faults.astronomy import (
    IdleTransactionLock,
    KafkaPoisonRecord,
    RotateServerPassword,
    SetFeatureFlag,
)
from sre_env.sim.backend import SimBackend
from sre_env.sim.episodes import healthy_world
from sre_env.sim.logs import render as logs
from sre_env.sim.runtime.flagd import parse_flags
from sre_env.sim.runtime.kafka import ConsumerGroup, KafkaBroker, kafka_cli
from sre_env.sim.runtime.postgres import PostgresServer, psql
from sre_env.telemetry.alerting import alerts_of

NS = APP.namespace
KCG = "/opt/kafka/bin/kafka-consumer-groups.sh"


@pytest.fixture
def backend() -> SimBackend:
    return SimBackend(healthy_world(APP))


def _pod(backend: SimBackend, name: str) -> str:
    pods = [p for p in backend.api.list("Pod", NS, f"opentelemetry.io/name={name}") if not p["metadata"].get("deletionTimestamp")]
    return pods[0]["metadata"]["name"]


def _exec(backend: SimBackend, comp: str, argv: list[str]) -> str:
    return backend.api.exec(_pod(backend, comp), NS, comp, argv).output


def _model(backend: SimBackend):
    return backend.world.app_models[APP.name]


# ------------------------------------------------------------------------------------- the app


def test_components_match_the_demo():
    names = {c.name for c in APP.components}
    assert names == {
        "frontend", "frontend-proxy", "ad", "cart", "checkout", "currency", "email", "payment", "product-catalog", "quote",
        "recommendation", "shipping", "fraud-detection", "accounting", "image-provider", "flagd", "kafka", "valkey-cart",
        "postgresql", "load-generator",
    }
    checkout = APP.component("checkout")
    env = dict(checkout.env)
    assert env["CART_ADDR"] == "cart:8080" and env["EMAIL_ADDR"] == "http://email:8080" and env["KAFKA_ADDR"] == "kafka:9092"
    assert env["FLAGD_HOST"] == "flagd" and env["FLAGD_PORT"] == "8013"
    assert checkout.image == "ghcr.io/open-telemetry/demo:2.1.3-checkout"
    assert dict(APP.component("accounting").env)["DB_CONNECTION_STRING"] == "Host=postgresql;Username=otelu;Password=otelp;Database=otel"
    assert all(rt.feature for rt in APP.requests)
    for comp in APP.components:
        assert comp.log_format in logs.APP_DIALECTS, comp.name


def test_manifests_have_the_demo_shape(backend):
    api = backend.api
    dep = api.get("Deployment", "checkout", NS)
    assert dep["spec"]["selector"] == {"matchLabels": {"opentelemetry.io/name": "checkout"}}
    assert dep["metadata"]["labels"]["app.kubernetes.io/part-of"] == "opentelemetry-demo"
    assert "io.kompose.service" not in dep["spec"]["template"]["metadata"]["labels"]
    assert [c["name"] for c in dep["spec"]["template"]["spec"]["initContainers"]] == ["wait-for-kafka"]
    svc = api.get("Service", "flagd", NS)
    assert [(p["name"], p["port"]) for p in svc["spec"]["ports"]] == [("rpc", 8013), ("ofrep", 8016)]
    assert api.get("Service", "cart", NS)["spec"]["ports"][0]["name"] == "tcp-service"
    flags = json.loads(api.get("ConfigMap", "flagd-config", NS)["data"]["demo.flagd.json"])["flags"]
    assert set(flags) == set(FLAGS) and all(f["defaultVariant"] == "off" for f in flags.values())
    flagd = api.get("Deployment", "flagd", NS)["spec"]["template"]["spec"]
    assert flagd["initContainers"][0]["name"] == "init-config"
    assert {"name": "config-ro", "configMap": {"name": "flagd-config"}} in flagd["volumes"]


def test_warms_up_healthy(backend):
    world = backend.world
    res = world.last_traffic[APP.name]
    assert res.client_success > 0.999
    for dep in backend.api.list("Deployment", NS):
        assert dep["status"].get("availableReplicas") == 1, dep["metadata"]["name"]
    assert not [a for a in alerts_of(world).firing(world.clock.now) if ("namespace", NS) in a.labels]
    model = _model(backend)
    assert model.flags.values["paymentFailure"] == 0 and not any(model.flags.values[f] for f in ("cartFailure", "adFailure"))
    for group in ("accounting", "fraud-detection"):
        assert model.kafka.lag(group) < 50
    assert model.pg.rows["order"] > 1000
    # the payment service logs in pino JSON, the checkout in slog JSON
    pay = backend.api.logs(_pod(backend, "payment"), NS, tail=5)
    assert '"msg":"Transaction complete."' in pay
    assert backend.api.logs(_pod(backend, "postgresql"), NS).count("database system is ready to accept connections") == 1


# ------------------------------------------------------------------------------------- flagd


def test_parse_flags_evaluates_default_variants():
    text = flagd_json({"paymentFailure": "50%", "imageSlowLoad": "10sec"})
    flags = parse_flags(text)
    assert flags.value("paymentFailure") == 0.5 and flags.value("imageSlowLoad") == 10000 and flags.value("cartFailure") is False
    assert parse_flags("{not json").error and parse_flags("{not json").values == {}


def test_flag_only_takes_effect_when_flagd_restarts(backend):
    cm = backend.api.get("ConfigMap", "flagd-config", NS)
    doc = json.loads(cm["data"]["demo.flagd.json"])
    doc["flags"]["paymentFailure"]["defaultVariant"] = "100%"
    backend.api.patch("ConfigMap", "flagd-config", NS, {"data": {"demo.flagd.json": json.dumps(doc)}}, "merge")
    backend.advance(60)
    assert _model(backend).flags.value("paymentFailure") == 0  # flagd serves the copy it made at start
    assert backend.world.last_traffic[APP.name].client_success > 0.99
    backend.api.patch("Deployment", "flagd", NS, {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": "x"}}}}}, "strategic")
    backend.advance(90)
    assert _model(backend).flags.value("paymentFailure") == 1


def test_payment_failure_flag_fails_checkouts(backend):
    SetFeatureFlag(NS, "paymentFailure", "100%").inject(backend)
    backend.advance(120)
    res = backend.world.last_traffic[APP.name]
    assert res.errors["checkout"] / res.rps["checkout"] > 0.95
    assert 0.85 < res.client_success < 0.97  # checkout is a small share of the locust mix
    assert "Payment request failed. Invalid token. app.loyalty.level=gold" in backend.api.logs(_pod(backend, "payment"), NS, tail=20)
    assert "failed to charge card: could not charge the card" in backend.api.logs(_pod(backend, "checkout"), NS, tail=20)
    SetFeatureFlag(NS, "paymentFailure", "off").recover(backend)
    backend.advance(120)
    assert backend.world.last_traffic[APP.name].client_success > 0.999


def test_ad_high_cpu_shows_in_kubectl_top_and_latency(backend):
    before = dict((name, cpu) for _, name, cpu, _ in backend.api.top_pods(NS))
    SetFeatureFlag(NS, "adHighCpu", "on").inject(backend)
    backend.advance(120)
    after = dict((name, cpu) for _, name, cpu, _ in backend.api.top_pods(NS))
    ad = _pod(backend, "ad")
    assert after[ad] > 5 * max(before.get(ad, 1), 1)
    res = backend.world.last_traffic[APP.name]
    assert res.latency_ms["ad"] > 100


def test_product_catalog_failure_fails_one_product(backend):
    SetFeatureFlag(NS, "productCatalogFailure", "on").inject(backend)
    backend.advance(120)
    res = backend.world.last_traffic[APP.name]
    share = res.errors["product-catalog"] / res.rps["product-catalog"]
    assert 0.05 < share < 0.12
    assert "Product Catalog Fail Feature Flag Enabled" in backend.api.logs(_pod(backend, "product-catalog"), NS, tail=50)


def test_flood_overloads_the_frontend(backend):
    SetFeatureFlag(NS, "loadGeneratorFloodHomepage", "on").inject(backend)
    backend.advance(120)
    res = backend.world.last_traffic[APP.name]
    assert res.client_rps > 10 * APP.rps
    assert res.client_success < 0.8


def test_recommendation_cache_failure_leaks_until_oomkilled(backend):
    SetFeatureFlag(NS, "recommendationCacheFailure", "on").inject(backend)
    backend.advance(900)
    pod = backend.api.get("Pod", _pod(backend, "recommendation"), NS)
    status = pod["status"]["containerStatuses"][0]
    assert status["restartCount"] >= 1
    assert status["lastState"]["terminated"]["reason"] == "OOMKilled"


def test_kafka_queue_problems_flag_grows_fraud_detection_lag(backend):
    SetFeatureFlag(NS, "kafkaQueueProblems", "on").inject(backend)
    backend.advance(180)
    out = _exec(backend, "kafka", [KCG, "--bootstrap-server", "localhost:9092", "--describe", "--group", "fraud-detection"])
    row = out.strip().splitlines()[-1].split()
    assert row[0] == "fraud-detection" and int(row[5]) > 10_000


# ------------------------------------------------------------------------------------- kafka


def test_kafka_cli_describe_and_reset_shapes():
    broker = KafkaBroker(produced=120.0, groups={"accounting": ConsumerGroup("accounting", "orders", "rdkafka", committed=100, member="rdkafka-1", member_host="10.244.1.5")})
    out = kafka_cli(broker, [KCG, "--bootstrap-server", "localhost:9092", "--describe", "--group", "accounting"], None, 0.0).output
    assert "CURRENT-OFFSET" in out and "LOG-END-OFFSET" in out and "rdkafka-1" in out and " 20 " in out
    refused = kafka_cli(broker, [KCG, "--bootstrap-server", "localhost:9092", "--group", "accounting", "--topic", "orders", "--reset-offsets", "--to-offset", "110", "--execute"], None, 0.0)
    assert refused.exit_code == 1 and "current state is Stable" in refused.output
    broker.leave("accounting", 0.0, clean=True)
    dry = kafka_cli(broker, [KCG, "--bootstrap-server", "localhost:9092", "--group", "accounting", "--topic", "orders", "--reset-offsets", "--to-offset", "110"], None, 0.0)
    assert dry.output.startswith("WARN: No action will be performed") and broker.groups["accounting"].committed == 100
    kafka_cli(broker, [KCG, "--bootstrap-server", "localhost:9092", "--group", "accounting", "--topic", "orders", "--reset-offsets", "--to-offset", "110", "--execute"], None, 0.0)
    assert broker.groups["accounting"].committed == 110 and broker.groups["accounting"].skipped == 10
    assert "Missing required argument" in kafka_cli(broker, [KCG, "--describe"], None, 0.0).output


def test_poison_pill_crash_loops_both_consumers_at_its_offset(backend):
    offset = _model(backend).kafka.end_offset
    KafkaPoisonRecord(NS, "not a protobuf").inject(backend)
    backend.advance(240)
    for group in ("accounting", "fraud-detection"):
        pod = backend.api.get("Pod", _pod(backend, group), NS)
        assert pod["status"]["containerStatuses"][0]["restartCount"] >= 2, group
        assert _model(backend).kafka.groups[group].committed == offset
    prev = backend.api.logs(_pod(backend, "accounting"), NS, previous=True)
    assert "InvalidProtocolBufferException: Protocol message contained an invalid tag (zero)" in prev and f"offset {offset}" in prev
    out = _exec(backend, "kafka", [KCG, "--bootstrap-server", "localhost:9092", "--describe", "--group", "fraud-detection"])
    assert "has no active members" in out and f" {offset} " in out


def test_skipping_the_poison_pill_lets_consumers_catch_up(backend):
    offset = _model(backend).kafka.end_offset
    KafkaPoisonRecord(NS, "garbage").inject(backend)
    backend.advance(300)
    for group in ("accounting", "fraud-detection"):
        backend.api.scale("Deployment", group, NS, 0)
    backend.advance(60)
    for group in ("accounting", "fraud-detection"):
        res = backend.api.exec(_pod(backend, "kafka"), NS, "kafka", [KCG, "--bootstrap-server", "localhost:9092", "--group", group, "--topic", "orders", "--reset-offsets", "--to-offset", str(offset + 1), "--execute"])
        assert res.exit_code == 0, res.output
        backend.api.scale("Deployment", group, NS, 1)
    backend.advance(120)
    for group in ("accounting", "fraud-detection"):
        g = _model(backend).kafka.groups[group]
        assert g.committed > offset + 100 and g.skipped == 0 and _model(backend).kafka.lag(group) < 100


# ------------------------------------------------------------------------------------- postgres


def test_psql_activity_locks_and_terminate():
    pg = PostgresServer()
    pg.restart(0.0)
    acct = pg.connect("otelu", "", "10.244.1.7", 0.0)
    blocker = pg.connect("root", "psql", "127.0.0.1", 0.0, pid=2222)
    blocker.state, blocker.query, blocker.xact_start = "idle in transaction", 'LOCK TABLE "order" IN ACCESS EXCLUSIVE MODE;', 0.0
    blocker.holds["order"] = "AccessExclusiveLock"
    assert not pg.insert_order(acct, 5.0)
    env = {"POSTGRES_USER": "root"}
    out = psql(pg, ["psql", "-U", "root", "-d", "otel", "-c", "SELECT pid, state, wait_event_type, pg_blocking_pids(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"], None, 10.0, env).output
    assert "{2222}" in out and "(1 row)" in out
    locks = psql(pg, ["psql", "-U", "root", "-d", "otel", "-c", "select pid, mode, granted from pg_locks where not granted"], None, 10.0, env).output
    assert "RowExclusiveLock" in locks and " f" in locks
    # without -d, psql connects to the database named after the user, which the demo does not create
    assert 'database "root" does not exist' in psql(pg, ["psql", "-c", "select 1"], None, 10.0, env).output
    cancel = psql(pg, ["psql", "-d", "otel", "-c", "SELECT pg_cancel_backend(2222)"], None, 10.0, env).output
    assert cancel.splitlines()[2].strip() == "t"
    assert 2222 in pg.sessions  # cancelling does nothing to an idle transaction
    psql(pg, ["psql", "-d", "otel", "-c", "SELECT pg_terminate_backend(2222)"], None, 10.0, env)
    assert 2222 not in pg.sessions and pg.insert_order(acct, 11.0)
    assert 'relation "orders" does not exist' in psql(pg, ["psql", "-d", "otel", "-c", "select count(*) from orders"], None, 10.0, env).output
    assert 'role "postgres" does not exist' in psql(pg, ["psql", "-U", "postgres", "-c", "select 1"], None, 10.0, env).output


def test_idle_transaction_stalls_accounting(backend):
    IdleTransactionLock(NS, APP.name, "order", "AccessExclusiveLock", 'LOCK TABLE "order" IN ACCESS EXCLUSIVE MODE;', "127.0.0.1", pid=2500).inject(backend)
    backend.advance(120)
    model = _model(backend)
    assert model.kafka.lag("accounting") > 500 and model.kafka.lag("fraud-detection") < 50
    assert "Timeout during reading attempt" in backend.api.logs(_pod(backend, "accounting"), NS, tail=10)
    out = _exec(backend, "postgresql", ["psql", "-U", "root", "-d", "otel", "-c", "SELECT pid, state FROM pg_stat_activity WHERE state = 'idle in transaction'"])
    assert "2500" in out
    _exec(backend, "postgresql", ["psql", "-U", "root", "-d", "otel", "-c", "SELECT pg_terminate_backend(2500)"])
    backend.advance(60)
    assert model.kafka.lag("accounting") < 50


# ------------------------------------------------------------------------------------- valkey


def test_server_side_password_change_breaks_the_cart_until_aligned(backend):
    RotateServerPassword(NS, "valkey-cart-server", "requirepass", "valkey-cart", "n3w-pass", VALKEY_PASSWORD).inject(backend)
    backend.advance(120)
    res = backend.world.last_traffic[APP.name]
    assert res.errors["cart"] / res.rps["cart"] > 0.9
    assert "WRONGPASS invalid username-password pair" in backend.api.logs(_pod(backend, "cart"), NS, tail=5)
    cli = _exec(backend, "valkey-cart", ["valkey-cli", "-a", VALKEY_PASSWORD, "PING"])
    assert "AUTH failed: WRONGPASS" in cli
    assert "PONG" in _exec(backend, "valkey-cart", ["valkey-cli", "-a", "n3w-pass", "--no-auth-warning", "PING"])
    # the Secret alone changes nothing: the cart read VALKEY_PASSWORD when it started
    backend.api.patch("Secret", "valkey-cart-auth", NS, {"data": {"password": base64.b64encode(b"n3w-pass").decode()}}, "merge")
    backend.advance(60)
    assert backend.world.last_traffic[APP.name].errors["cart"] > 0
    backend.api.patch("Deployment", "cart", NS, {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": "now"}}}}}, "strategic")
    backend.advance(90)
    assert backend.world.last_traffic[APP.name].client_success > 0.999


def test_config_set_on_the_server_is_lost_on_restart(backend):
    RotateServerPassword(NS, "valkey-cart-server", "requirepass", "valkey-cart", "n3w-pass", VALKEY_PASSWORD).inject(backend)
    backend.advance(60)
    out = _exec(backend, "valkey-cart", ["valkey-cli", "-a", "n3w-pass", "--no-auth-warning", "CONFIG", "SET", "requirepass", VALKEY_PASSWORD])
    assert out == "OK\n"
    assert "ERR The server is running without a config file" in _exec(backend, "valkey-cart", ["valkey-cli", "-a", VALKEY_PASSWORD, "--no-auth-warning", "CONFIG", "REWRITE"])
    backend.advance(30)
    assert backend.world.last_traffic[APP.name].client_success > 0.999  # fixed, but only in the running server
    backend.api.delete("Pod", _pod(backend, "valkey-cart"), NS)
    backend.advance(90)
    res = backend.world.last_traffic[APP.name]
    assert res.errors["cart"] / res.rps["cart"] > 0.9


def test_old_chart_port_in_an_addr_times_out_the_edge(backend):
    from sre_env.faults.app_config import SetContainerEnv

    SetContainerEnv(NS, "checkout", "checkout", "PAYMENT_ADDR", "payment:50051", "payment:8080").inject(backend)
    backend.advance(120)
    res = backend.world.last_traffic[APP.name]
    assert res.errors["checkout"] / res.rps["checkout"] > 0.99
    assert any(c == "checkout" and callee == "payment" and "i/o timeout" in err for c, callee, _, err, _ in res.failed_edges)
    assert ":50051: i/o timeout" in backend.api.logs(_pod(backend, "checkout"), NS, tail=30)


# ------------------------------------------------------------------------------------- envoy


def test_re2_program_size_and_the_error_level():
    from sre_env.apps.astronomy_shop import ENVOY_CONFIG
    from sre_env.sim.runtime.envoy import parse_envoy, re2_program_size, request_cost_ms

    assert re2_program_size("^/api/") < 20
    assert re2_program_size(r"^(?:(?:[a-z ]{1,64}){1,32}\s?){1,12}bot") > 20_000
    healthy = parse_envoy(ENVOY_CONFIG)
    assert not healthy.error and request_cost_ms(healthy) == 0.0
    from envs.edge_proxy import _RULES, with_rule

    ticket, header, pattern = _RULES[0]
    costly = parse_envoy(with_rule(ticket, header, pattern))
    assert not costly.error and request_cost_ms(costly) > 50
    rejected = parse_envoy(with_rule(ticket, header, pattern, runtime=False))
    assert "RE2 program size of" in rejected.error and "max program size of 100" in rejected.error


def test_expensive_edge_regex_saturates_the_proxy(backend):
    from envs.edge_proxy import _RULES, with_rule
    from sre_env.apps.astronomy_shop import ENVOY_CONFIG
    from sre_env.faults.astronomy import EnvoyConfigChange

    ticket, header, pattern = _RULES[1]
    EnvoyConfigChange(NS, with_rule(ticket, header, pattern), ENVOY_CONFIG).inject(backend)
    backend.advance(180)
    res = backend.world.last_traffic[APP.name]
    assert res.client_success < 0.5
    top = {name: cpu for _, name, cpu, _ in backend.api.top_pods(NS)}
    assert top[_pod(backend, "frontend-proxy")] > 1000  # a saturated core, while the back ends idle
    assert top[_pod(backend, "checkout")] < 50
    # without the raised limit envoy refuses the file and crash-loops
    EnvoyConfigChange(NS, with_rule(ticket, header, pattern, runtime=False), ENVOY_CONFIG).inject(backend)
    backend.advance(120)
    pods = [p for p in backend.api.list("Pod", NS, "opentelemetry.io/name=frontend-proxy") if not p["metadata"].get("deletionTimestamp")]
    assert any(p["status"]["containerStatuses"][0]["restartCount"] >= 1 for p in pods)
    assert "RE2 program size of" in backend.api.logs(pods[0]["metadata"]["name"], NS, previous=True)
