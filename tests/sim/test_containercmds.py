"""Behaviour of the in-container command interpreter (``kubectl exec POD -- CMD``)."""

from __future__ import annotations

import random
import re
import shlex

import pytest

from sre_env.apps.hotel_reservation import COMPONENTS, GEO
from sre_env.sim.commands.container import run_container_command
from sre_env.sim.commands.views import ContainerView
from sre_env.sim.kernel.hosts import Disk, HostNode, default_sysctls
from sre_env.sim.scripts import SIM_SHELL

MONGO_GEO = next(c for c in COMPONENTS if c.name == "mongodb-geo")
MEMC_RATE = next(c for c in COMPONENTS if c.name == "memcached-rate")
SERVICES = {"mongodb-geo": "10.96.5.5", "geo": "10.96.1.2", "memcached-rate": "10.96.7.7", "consul": "10.96.3.3", "frontend": "10.96.9.9"}
OPEN = {("geo", 8083), ("mongodb-geo", 27017), ("memcached-rate", 11211), ("frontend", 5000)}


def _resolve(name: str) -> str | None:
    short = name.split(".")[0]
    if name.count(".") >= 1 and not name.split(".", 1)[1].startswith(("hotel-reservation", "svc")):
        return None
    return SERVICES.get(short)


def _connect(host: str, port: int) -> str | None:
    short = host.split(".")[0]
    if (short, port) in OPEN:
        return None
    if short == "consul":
        return "i/o timeout"
    return "connection refused"


def _node() -> HostNode:
    root = Disk(device="sda", model="QEMU HARDDISK", serial="QM00001", size_bytes=100 * 1024**3, mountpoint="/", used_bytes=12 * 1024**3)
    data = Disk(device="sdb", model="WDC WD20EFZX-68AWUN0", serial="WD-1", size_bytes=2_000_398_934_016, mountpoint="/mnt/disks/ssd0", used_bytes=3 * 1024**3, rotational=True)
    return HostNode(name="worker-2", index=2, cpu_cores=8, memory_bytes=16 * 1024**3, internal_ip="10.0.0.12", disks=[root, data], sysctls=default_sysctls())


def _go(node: HostNode | None = None, running: bool = True) -> ContainerView:
    pod = {
        "metadata": {"name": "geo-7c9b4d8f5-abcde", "namespace": "hotel-reservation", "uid": "u-2"},
        "spec": {"containers": [{"name": "hotel-reserv-geo", "image": "yinfangchen/hotelreservation:latest", "command": ["geo"]}]},
        "status": {"podIP": "10.244.2.15"},
    }
    return ContainerView(
        pod=pod, container=pod["spec"]["containers"][0],
        env={"JAEGER_SAMPLE_RATIO": "1", "CONSUL_ADDRESS": "consul:8500", "GEO_MONGO_ADDRESS": "mongodb-geo:27017"},
        component=GEO, node=node or _node(), now=900.0, process_running=running, listening_ports=(8083,) if running else (),
        uptime_s=540.0, shell=SIM_SHELL, resolve=_resolve, connect=_connect,
        files={"/go/src/github.com/harlow/go-micro-services/config.json": '{"consulAddress": "consul:8500"}\n'},
    )


def _mongo(node: HostNode | None = None, running: bool = True, image: str = "mongo:4.4.6") -> ContainerView:
    pod = {
        "metadata": {"name": "mongodb-geo-5d8f7c9b4-x2x9k", "namespace": "hotel-reservation", "uid": "u-1"},
        "spec": {"containers": [{"name": "hotel-reserv-geo-mongo", "image": image}], "volumes": [{"name": "geo", "persistentVolumeClaim": {"claimName": "geo-pvc"}}]},
        "status": {"podIP": "10.244.2.14"},
    }
    return ContainerView(
        pod=pod, container=pod["spec"]["containers"][0], env={}, component=MONGO_GEO, node=node or _node(), now=900.0,
        process_running=running, listening_ports=(27017,) if running else (), uptime_s=600.0, shell=SIM_SHELL, resolve=_resolve, connect=_connect,
    )


def _memcached() -> ContainerView:
    pod = {
        "metadata": {"name": "memcached-rate-6b9f-abcde", "namespace": "hotel-reservation"},
        "spec": {"containers": [{"name": "hotel-reserv-rate-mmc", "image": "memcached"}]},
        "status": {"podIP": "10.244.2.20"},
    }
    return ContainerView(
        pod=pod, container=pod["spec"]["containers"][0], env={"MEMCACHED_CACHE_SIZE": "128", "MEMCACHED_THREADS": "2"},
        component=MEMC_RATE, node=_node(), now=900.0, process_running=True, listening_ports=(11211,), uptime_s=600.0, shell=SIM_SHELL,
        resolve=_resolve, connect=_connect,
    )


def _fail(node: HostNode, fraction: float = 0.08) -> None:
    d = node.disks[1]
    d.bad_read_fraction = fraction
    d.bad_sectors = (1_234_567,)
    for t in range(600, 900):
        d.error_ticks.append((float(t), 20))


def run(view: ContainerView, cmd: str):
    return run_container_command(view, shlex.split(cmd))


GO_OK = [
    "env", "printenv CONSUL_ADDRESS", "cat /etc/resolv.conf", "cat /etc/hosts", "cat /etc/hostname", "ls", "ls -la /", "ps", "ps aux", "ps -ef",
    "hostname", "id", "whoami", "date", "uptime", "df -h", "cat /proc/1/limits", "ulimit -n", "nslookup mongodb-geo", "getent hosts geo",
    "nc -zv mongodb-geo 27017", "wget -qO- -T 2 http://frontend:5000/", "netstat -tlnp", "sh -c 'echo hi; ulimit -n && env | grep CONSUL'",
    "cat config.json", "wget -qO- http://mongodb-geo:27017/",
]


@pytest.mark.parametrize("cmd", GO_OK)
def test_go_image_commands_succeed(cmd):
    r = run(_go(), cmd)
    assert r.exit_code == 0, r.output
    assert "internal error" not in r.output


MONGO_OK = [
    "env", "cat /etc/resolv.conf", "ls /data/db", "ps aux", "id", "df -h", "getent hosts mongodb-geo",
    "mongo --eval 'db.serverStatus().ok'", "mongo --quiet --eval 'db.adminCommand({ping:1})'", "mongo --quiet --eval 'db.version()'",
    "mongo geo-db --quiet --eval 'db.geo.count()'", "mongo --quiet --eval 'show dbs'", "mongo --quiet --eval 'db.getSiblingDB(\"geo-db\").getCollectionNames()'",
]


@pytest.mark.parametrize("cmd", MONGO_OK)
def test_mongo_image_commands_succeed(cmd):
    r = run(_mongo(), cmd)
    assert r.exit_code == 0, r.output
    assert "internal error" not in r.output


def test_env_has_pod_identity_and_service_links():
    out = run(_go(), "env").output
    lines = out.splitlines()
    assert lines[0].startswith("PATH=") and lines[1] == "HOSTNAME=geo-7c9b4d8f5-abcde"
    assert "CONSUL_ADDRESS=consul:8500" in lines
    assert "KUBERNETES_SERVICE_HOST=10.96.0.1" in lines and lines[-1] == "HOME=/root"
    r = run(_go(), "printenv NOPE")
    assert r.exit_code == 1 and r.output == ""


def test_resolv_conf_and_hosts():
    assert run(_go(), "cat /etc/resolv.conf").output == (
        "search hotel-reservation.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"
    )
    assert "10.244.2.15\tgeo-7c9b4d8f5-abcde" in run(_go(), "cat /etc/hosts").output
    r = run(_go(), "cat /nope")
    assert r.exit_code == 1 and r.output == "cat: can't open '/nope': No such file or directory\n"
    r = run(_mongo(), "cat /nope")
    assert r.output == "cat: /nope: No such file or directory\n"


def test_ps_shows_main_process_only_when_running():
    assert re.search(r"^\s+1 root .* geo$", run(_go(), "ps aux").output, re.M)
    out = run(_go(running=False), "ps aux").output
    assert not re.search(r"^\s+1 ", out, re.M)
    assert re.search(r"^mongodb +1 .* mongod --bind_ip_all$", run(_mongo(), "ps aux").output, re.M)


def test_missing_binaries_per_image():
    for view, cmd in [(_go(), "curl http://geo:8083/"), (_go(), "mongo"), (_go(), "foo"), (_memcached(), "ps aux"), (_memcached(), "nc -z geo 8083"), (_mongo(), "nslookup geo")]:
        r = run(view, cmd)
        name = cmd.split()[0]
        assert r.exit_code == 127 and r.output == f"sh: 1: {name}: not found\n", (cmd, r)
    r = run(_go(), "sh -c 'true && nosuchcmd'")
    assert r.exit_code == 127 and "sh: 1: nosuchcmd: not found" in r.output


def test_dns_and_connectivity_wording():
    v = _go()
    r = run(v, "nslookup mongodb-geo")
    assert r.exit_code == 0 and "Name:\tmongodb-geo.hotel-reservation.svc.cluster.local\nAddress: 10.96.5.5" in r.output
    r = run(v, "nslookup nosuch")
    assert r.exit_code == 1 and "** server can't find nosuch.hotel-reservation.svc.cluster.local: NXDOMAIN" in r.output
    assert run(v, "nc -zv mongodb-geo 27017").output == "mongodb-geo (10.96.5.5:27017) open\n"
    r = run(v, "nc -zv geo 9999")
    assert r.exit_code == 1 and r.output == "nc: geo (10.96.1.2:9999): Connection refused\n"
    r = run(v, "nc -zv consul 8500")
    assert r.exit_code == 1 and "timed out" in r.output
    r = run(v, "nc -zv nosuch 80")
    assert r.exit_code == 1 and r.output == "nc: bad address 'nosuch'\n"
    r = run(v, "wget -qO- -T 2 http://geo:9999/")
    assert r.exit_code == 1 and r.output == "wget: can't connect to remote host (10.96.1.2): Connection refused\n"
    r = run(v, "wget -qO- -T 2 http://consul:8500/v1/status/leader")
    assert r.exit_code == 1 and r.output == "wget: download timed out\n"
    r = run(v, "wget -qO- http://nosuch/")
    assert r.exit_code == 1 and r.output == "wget: bad address 'nosuch'\n"
    assert "MongoDB over HTTP" in run(v, "wget -qO- http://mongodb-geo:27017/").output


def test_curl_where_present():
    v = _go()
    v.container = {"name": "debug", "image": "curlimages/curl:8.5.0"}
    r = run(v, "curl -s http://frontend:5000/hotels")
    assert r.exit_code == 0 and r.output.startswith("{")
    r = run(v, "curl http://geo:9999/")
    assert r.exit_code == 7 and r.output.startswith("curl: (7) Failed to connect to geo port 9999 after ")
    r = run(v, "curl http://nosuch/")
    assert r.exit_code == 6 and r.output == "curl: (6) Could not resolve host: nosuch\n"
    r = run(v, "curl -s -o /dev/null -w '%{http_code}' http://frontend:5000/")
    assert r.output == "200"


def test_netstat_lists_listening_ports():
    out = run(_go(), "netstat -tlnp").output
    assert "tcp        0      0 :::8083                 :::*                    LISTEN      1/geo" in out
    assert ":::8083" not in run(_go(running=False), "netstat -tln").output


def test_sh_c_lists_pipes_and_expansion():
    v = _go()
    r = run(v, "sh -c 'echo $CONSUL_ADDRESS; false || echo fallback && echo ok'")
    assert r.output == "consul:8500\nfallback\nok\n" and r.exit_code == 0
    assert run(v, "sh -c 'env | grep -c KUBERNETES'").output == "8\n"
    assert run(v, "sh -c \"echo stats | nc memcached-rate 11211 | head -2\"").output.startswith("STAT pid 1\r\nSTAT uptime")
    r = run(v, "sh -c 'echo \"unterminated'")
    assert r.exit_code == 2 and "Unterminated quoted string" in r.output


def test_mongo_shell_outputs():
    v = _mongo()
    r = run(v, "mongo --eval 'db.serverStatus().ok'")
    assert r.output.startswith("MongoDB shell version v4.4.6\nconnecting to: mongodb://127.0.0.1:27017/")
    assert r.output.endswith("MongoDB server version: 4.4.6\n1\n")
    assert run(v, "mongo --quiet --eval 'db.adminCommand({ping:1})'").output == '{ "ok" : 1 }\n'
    r = run(_mongo(image="mongo:7.0"), "mongosh --quiet --eval 'db.adminCommand({ping:1})'")
    assert r.output == "{ ok: 1 }\n"
    assert run(_mongo(image="mongo:7.0"), "mongo --eval 1").exit_code == 127
    r = run(v, "mongo --quiet --eval 'nosuchthing'")
    assert r.exit_code == 1 and "ReferenceError: nosuchthing is not defined" in r.output
    down = run(_mongo(running=False), "mongo --eval 'db.adminCommand({ping:1})'")
    assert down.exit_code == 1 and "Connection refused" in down.output and "exception: connect failed" in down.output
    remote = run(v, "mongo --quiet --host nosuch --eval 1")
    assert remote.exit_code == 1


def test_mongo_reads_fail_with_eio_on_failing_disk():
    node = _node()
    _fail(node, fraction=0.08)
    v = _mongo(node)
    fails = 0
    for i in range(40):
        r = run(v, f"mongo geo-db --quiet --eval 'db.geo.find({{hotelId: \"{i}\"}}).toArray()'")
        if r.exit_code:
            fails += 1
            assert "WiredTiger error (5)" in r.output and "Input/output error" in r.output
    assert 10 <= fails <= 39
    # commands that do not read collection data keep working
    assert run(v, "mongo --quiet --eval 'db.adminCommand({ping:1})'").exit_code == 0
    assert "Dsl" in run(v, "ps aux").output
    healthy = _mongo()
    assert all(run(healthy, f"mongo geo-db --quiet --eval 'db.geo.find({{hotelId: \"{i}\"}}).toArray()'").exit_code == 0 for i in range(10))


def test_df_shows_data_volume_on_node_disk():
    out = run(_mongo(), "df -h").output
    assert re.search(r"^/dev/sdb1 +1\.8T .* /data/db$", out, re.M)
    assert "/data/db" not in run(_go(), "df -h").output


def test_identity_and_limits():
    assert run(_memcached(), "id").output == "uid=11211(memcache) gid=11211(memcache) groups=11211(memcache)\n"
    assert run(_go(), "whoami").output == "root\n"
    assert "Max open files            1048576              1048576              files" in run(_go(), "cat /proc/1/limits").output
    assert run(_go(), "hostname").output == "geo-7c9b4d8f5-abcde\n"
    assert run(_go(), "date").output == "Mon Mar  2 09:15:00 UTC 2026\n"


def test_bad_flags_give_tool_errors():
    for view, cmd in [(_go(), "ls -Q"), (_mongo(), "ls -Q"), (_go(), "netstat -Q"), (_go(), "wget --bogus http://geo/"), (_mongo(), "mongo --bogus"), (_mongo(), "ps -Q")]:
        r = run(view, cmd)
        assert r.exit_code != 0 and r.output, cmd


def test_determinism():
    cmds = ["env", "ps aux", "df -h", "mongo --eval 'db.serverStatus()'", "ls -la /data/db", "cat /proc/1/status"]
    a = [run(_mongo(), c).output for c in cmds]
    b = [run(_mongo(), c).output for c in cmds]
    assert a == b


def test_fuzz_never_raises():
    rng = random.Random(99)
    words = ["sh", "-c", "env", "cat", "ls", "ps", "aux", "nc", "-zv", "wget", "-qO-", "curl", "mongo", "mongosh", "--eval", "--quiet", "db.geo.find()",
             "nslookup", "getent", "hosts", "geo", "8083", "http://geo:8083/", "|", ";", "&&", "'", '"', "$X", "-", "--", "", "/", "/proc/1/limits",
             "netstat", "-tlnp", "ss", "df", "-h", "id", "ulimit", "-n", "printenv", "echo", "export", "A=b", "memcached-tool", "x:y", "\x00", "é", "99999"]
    views = [_go(), _mongo(), _memcached(), _go(running=False)]
    node = _node()
    _fail(node)
    views.append(_mongo(node))
    for _ in range(3000):
        argv = [rng.choice(words) for _ in range(rng.randint(0, 6))]
        for v in views:
            r = run_container_command(v, argv)
            assert isinstance(r.output, str) and isinstance(r.exit_code, int)
            assert "internal error" not in r.output, argv


def test_every_binary_is_declared_once_with_a_summary():
    from sre_env.sim.commands.container import CONTAINER_BINARIES

    for name, binary in CONTAINER_BINARIES.items():
        assert binary.where in ("image", "shell") and binary.summary and name in (binary.name, *binary.aliases)


def test_text_tools_over_files_and_stdin():
    v = _go()
    assert run(v, "cut -d: -f1 /etc/passwd").output == "root\n"
    assert run_container_command(v, ["grep", "-c", "a"], "a\nb\na\n").output == "2\n"
    assert run(v, "sh -c 'env | grep ^CONSUL_ | cut -d= -f2'").output == "consul:8500\n"
    r = run(v, "grep x /nope")
    assert r.exit_code == 2 and r.output.startswith("grep: ") and "No such file or directory" in r.output
