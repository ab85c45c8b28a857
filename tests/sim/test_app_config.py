"""Application configuration in the model: env resolution, MongoDB access control, images, releases.

Every test forks one warmed-up hotel-reservation cluster, applies a cause the
way an operator would (kubectl, the mongo shell inside the database pod) and
asserts on what an engineer would then see: kubectl output, container logs,
the load generator's success rate.
"""

from __future__ import annotations

import base64

import pytest

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION as APP
from sre_env.shell import ShellContext, run_command
from sre_env.sim.backend import SimBackend
from sre_env.sim.engine import advance
from sre_env.sim.episodes import healthy_world
from sre_env.sim.kernel.world import World
from sre_env.sim.runtime.podenv import pod_env

NS = APP.namespace
ROOT = "r00t-Kq4vHx7w"  # mongodb-rate's root password, from its credentials Secret


@pytest.fixture(scope="module")
def base() -> World:
    return healthy_world(APP)


@pytest.fixture
def world(base: World) -> World:
    return base.fork()


@pytest.fixture
def sh(world: World):
    ctx = ShellContext(backend=SimBackend(world), namespace=NS)

    def run(cmd: str) -> str:
        return run_command(ctx, cmd).output

    return run


def success(world: World, window_s: float = 60.0) -> float:
    hist = [s for t, s, _ in world.client_history[APP.name] if t > world.clock.now - window_s]
    return sum(hist) / len(hist)


def mongo(sh, statement: str, *, db: str = "admin", user: str = "admin", password: str = ROOT, target: str = "mongodb-rate") -> str:
    return sh(f"kubectl exec deployment/{target} -- mongo {db} -u {user} -p {password} --authenticationDatabase admin --quiet --eval '{statement}'")


# --------------------------------------------------------------------------- baseline wiring


def test_database_clients_get_credentials_from_a_secret_and_settings_from_a_configmap(world: World, sh) -> None:
    api = SimBackend(world).api
    dep = api.get("Deployment", "rate", NS)
    ctr = dep["spec"]["template"]["spec"]["containers"][0]
    assert ctr["envFrom"] == [{"configMapRef": {"name": "rate-mongo-config"}}]
    assert {"name": "MONGO_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "mongodb-rate-credentials", "key": "password"}}} in ctr["env"]
    db = api.get("Deployment", "mongodb-rate", NS)["spec"]["template"]["spec"]["containers"][0]
    assert db["args"] == ["--auth"]
    assert "--auth" not in str(api.get("Deployment", "mongodb-geo", NS)["spec"]["template"]["spec"]["containers"][0])
    env = sh("kubectl exec deployment/rate -- printenv")
    assert "MONGO_DATABASE=rate-db\n" in env and "MONGO_USERNAME=rate\n" in env and "MONGO_PASSWORD=rate-T9mZc2Lp\n" in env
    assert success(world) > 0.999
    # mongod started with --auth does not warn that access control is off
    assert "Access control is not enabled" not in sh("kubectl logs deployment/mongodb-rate")
    assert "Access control is not enabled" in sh("kubectl logs deployment/mongodb-geo")


def test_env_entry_shadows_envfrom_and_a_running_process_keeps_its_environment(world: World, sh) -> None:
    api = SimBackend(world).api
    pod = next(p for p in api.list("Pod", NS, "io.kompose.service=rate"))
    uid = pod["metadata"]["uid"]
    # a ConfigMap edit does not reach a process that is already running
    sh("kubectl patch configmap rate-mongo-config --type=merge -p '{\"data\":{\"MONGO_DATABASE\":\"other\"}}'")
    advance(world, 30)
    assert pod_env(world, uid, "hotel-reserv-rate")["MONGO_DATABASE"] == "rate-db"
    sh("kubectl patch configmap rate-mongo-config --type=merge -p '{\"data\":{\"MONGO_DATABASE\":\"rate-db\"}}'")
    # an explicit env entry wins over the envFrom value in the new pods
    sh("kubectl set env deployment/rate MONGO_DATABASE=rate")
    advance(world, 60)
    new = [p for p in api.list("Pod", NS, "io.kompose.service=rate") if not p["metadata"].get("deletionTimestamp")]
    assert new and all(pod_env(world, p["metadata"]["uid"], "hotel-reserv-rate")["MONGO_DATABASE"] == "rate" for p in new)
    logs = sh("kubectl logs deployment/rate --previous")
    assert 'not authorized on rate to execute command { count: "inventory"' in logs


# --------------------------------------------------------------------------- mongo access control


def test_mongo_shell_requires_authentication_and_lists_users(sh) -> None:
    out = sh("kubectl exec deployment/mongodb-rate -- mongo --quiet --eval 'db.getUsers()'")
    assert "Error: command usersInfo requires authentication" in out
    out = sh("kubectl exec deployment/mongodb-rate -- mongo admin -u admin -p wrong --eval 'db.getUsers()'")
    assert "Error: Authentication failed." in out and "exception: connect failed" in out
    out = mongo(sh, "db.getUsers()")
    assert '"_id" : "admin.rate"' in out and '{ "role" : "readWrite", "db" : "rate-db" }' in out
    assert '"roles" : [' in out and "SCRAM-SHA-256" in out
    # a service user may not manage users
    out = mongo(sh, 'db.createUser({user: "x", pwd: "y", roles: []})', user="rate", password="rate-T9mZc2Lp")
    assert "not authorized on admin to execute command { createUser" in out
    out = mongo(sh, 'db.createUser({user: "rate", pwd: "y", roles: []})')
    assert 'couldn\'t add user: User "rate@admin" already exists' in out
    # credentials in the connection string (mongo:4.4 ships the legacy shell only)
    out = sh("kubectl exec deployment/mongodb-rate -- mongo mongodb://admin:" + ROOT + "@localhost:27017/admin --quiet --eval 'db.getUser(\"rate\")'")
    assert '"user" : "rate"' in out and "readWrite" in out
    assert "mongosh: not found" in sh("kubectl exec deployment/mongodb-rate -- mongosh --eval 1")


def test_revoked_roles_fail_queries_then_restarts_and_grants(world: World, sh) -> None:
    mongo(sh, 'db.revokeRolesFromUser("rate", [{role: "readWrite", db: "rate-db"}])')
    advance(world, 60)
    logs = sh("kubectl logs deployment/rate --tail=50")
    assert 'but got error: not authorized on rate-db to execute command { find: "inventory"' in logs
    assert success(world) < 0.97
    # a restart does not help: initializeDatabase dies on the same error
    sh("kubectl rollout restart deployment/rate")
    advance(world, 90)
    assert "PNC cmd/rate/db.go:26 > not authorized on rate-db to execute command { count:" in sh("kubectl logs deployment/rate --previous")
    assert "CrashLoopBackOff" in sh("kubectl get pods -l io.kompose.service=rate") or "Error" in sh("kubectl get pods -l io.kompose.service=rate")
    # the grant lives in the database's data: it survives the database pod's restart
    mongo(sh, 'db.grantRolesToUser("rate", [{role: "readWrite", db: "rate-db"}])')
    sh("kubectl delete pod -l io.kompose.service=mongodb-rate")
    advance(world, 30)
    assert '{ "role" : "readWrite", "db" : "rate-db" }' in mongo(sh, 'db.getUser("rate")')
    sh("kubectl rollout restart deployment/rate")
    advance(world, 240)
    assert success(world) > 0.999


def test_dropped_user_gives_authentication_failed(world: World, sh) -> None:
    assert mongo(sh, 'db.dropUser("rate")') == "true\n"
    advance(world, 60)
    assert "but got error: server returned error on SASL authentication step: Authentication failed." in sh("kubectl logs deployment/rate --tail=40")
    server = sh("kubectl logs deployment/mongodb-rate --tail=5")
    assert '"c":"ACCESS",   "id":20249,' in server and '"error":"UserNotFound: Could not find user \\"rate\\" for db \\"admin\\""' in server
    out = sh("kubectl exec deployment/mongodb-rate -- mongo admin -u rate -p rate-T9mZc2Lp --quiet --eval 'db.stats()'")
    assert "Authentication failed." in out
    mongo(sh, 'db.createUser({user: "rate", pwd: "rate-T9mZc2Lp", roles: [{role: "readWrite", db: "rate-db"}]})')
    advance(world, 60)
    assert success(world, 30) > 0.999


def test_rotated_password_leaves_running_pods_with_the_old_one(world: World, sh) -> None:
    mongo(sh, 'db.changeUserPassword("rate", "rotated-1")')
    new = base64.b64encode(b"rotated-1").decode()
    sh(f"kubectl patch secret mongodb-rate-credentials --type=merge -p '{{\"data\":{{\"password\":\"{new}\"}}}}'")
    advance(world, 60)
    assert sh("kubectl exec deployment/rate -- printenv MONGO_PASSWORD") == "rate-T9mZc2Lp\n"
    assert "Authentication failed." in sh("kubectl logs deployment/rate --tail=40")
    assert "SCRAM authentication failed, storedKey mismatch" in sh("kubectl logs deployment/mongodb-rate --tail=5")
    assert success(world) < 0.97
    sh("kubectl rollout restart deployment/rate")
    advance(world, 120)
    assert sh("kubectl exec deployment/rate -- printenv MONGO_PASSWORD") == "rotated-1\n"
    assert success(world) > 0.999


def test_missing_configmap_blocks_container_creation(world: World, sh) -> None:
    sh("kubectl delete configmap rate-mongo-config")
    advance(world, 10)
    assert success(world, 10) > 0.999  # running pods keep their environment
    sh("kubectl delete pod -l io.kompose.service=rate")
    advance(world, 60)
    assert "CreateContainerConfigError" in sh("kubectl get pods -l io.kompose.service=rate")
    assert 'Error: configmap "rate-mongo-config" not found' in sh("kubectl describe pod -l io.kompose.service=rate")


# --------------------------------------------------------------------------- images, commands, releases


def test_nonexistent_tag_on_a_recreate_database_is_image_pull_back_off(world: World, sh) -> None:
    sh("kubectl set image deployment/mongodb-rate hotel-reserv-rate-mongo=mongo:4.4.66")
    advance(world, 60)
    out = sh("kubectl describe pod -l io.kompose.service=mongodb-rate")
    assert "Reason:       ImagePullBackOff" in out or "ImagePullBackOff" in out
    assert 'Failed to pull image "mongo:4.4.66": rpc error: code = NotFound' in out
    assert 'Back-off pulling image "mongo:4.4.66"' in out
    assert success(world) < 0.99


def test_wrong_binary_runs_as_that_program(world: World, sh) -> None:
    sh("kubectl patch deployment profile --type=json -p '[{\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/0/command\", \"value\": [\"geo\"]}]'")
    advance(world, 60)
    logs = sh("kubectl logs deployment/profile --previous")
    assert "FTL cmd/geo/main.go:31 > " in logs and "GEO_MONGO_ADDRESS" in logs
    # a binary whose configuration is satisfied serves its own API on its own port
    sh("kubectl patch deployment rate --type=json -p '[{\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/0/command\", \"value\": [\"search\"]}]'")
    advance(world, 60)
    api = SimBackend(world).api
    pod = next(p for p in api.list("Pod", NS, "io.kompose.service=rate") if not p["metadata"].get("deletionTimestamp"))
    rt = world.runtimes[pod["metadata"]["uid"]]
    assert rt.containers["hotel-reserv-rate"].listen_port == 8082
    assert success(world) < 0.5


def test_buggy_release_fails_one_endpoint_until_rolled_back(world: World, sh) -> None:
    sh("kubectl set image deployment/recommendation hotel-reserv-recommendation=yinfangchen/hotelreservation:0.9.2")
    advance(world, 120)
    rate = success(world)
    assert 0.8 < rate < 0.95, rate  # one request mode of one page: 0.39 x 0.34 of all requests
    assert 'recommendHandler GetRecommendations failed: rpc error: code = Unknown desc = recommendation: invalid require parameter "price"' in sh("kubectl logs deployment/frontend --tail=200")
    assert "Running" in sh("kubectl get pods -l io.kompose.service=recommendation")
    sh("kubectl rollout restart deployment/recommendation")
    advance(world, 90)
    assert success(world) < 0.95  # the bug ships with the version
    # undo goes back one revision: to the restart's predecessor, the same buggy version
    sh("kubectl rollout undo deployment/recommendation")
    advance(world, 90)
    assert success(world) < 0.95
    sh("kubectl rollout undo deployment/recommendation --to-revision=1")
    advance(world, 120)
    assert success(world) > 0.999


def test_reverting_the_rotation_inside_the_database_only_lasts_until_a_restart() -> None:
    """StaleSecretCredentials: putting the old password back into MongoDB heals the running pods
    (immediate, live) but not the next restart, when the pods read the rotated Secret (durability)."""
    import gymnasium as gym

    import sre_env  # noqa: F401

    env = gym.make("SREGym/StaleSecretCredentials-v0")
    env.reset(seed=0)
    v = env.unwrapped.scenario.variant
    statement = f'db.changeUserPassword("{v["user"]}", "{v["password"]}")'
    env.step(f"kubectl exec deployment/{v['database']} -n {NS} -- mongo admin -u {v['root_user']} -p {v['root_password']} --quiet --eval '{statement}'")
    *_, info = env.step("submit the database password was reverted")
    oracles = info["oracles"]
    assert oracles["immediate"]["passed"] and oracles["live"]["passed"]
    assert not oracles["durability"]["passed"] and not info["is_success"]
    env.close()


def test_read_only_role_reads_but_cannot_insert(world: World, sh) -> None:
    """Authorization is per command: with ``read`` only, searches work and new reservations fail."""
    statement = 'db.revokeRolesFromUser("reservation", [{role: "readWrite", db: "reservation-db"}]); db.grantRolesToUser("reservation", [{role: "read", db: "reservation-db"}])'
    mongo(sh, statement, user="admin", password="r00t-Pz2gUa9c", target="mongodb-reservation")
    advance(world, 60)
    res = world.last_traffic[APP.name]
    edges = {(c, e): err for c, e, _, err, _ in res.failed_edges}
    assert edges.get(("reservation", "mongodb-reservation"), "").startswith('not authorized on reservation-db to execute command { insert: "reservation"')
    assert success(world) > 0.99  # reservations are 0.5% of the traffic; search reads still work
