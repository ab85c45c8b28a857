"""What is inside each container image: binaries, default process, user, OS.

Real images differ in what an engineer can run inside them (``curl`` is in
the consul image but not in the Go service image; the memcached image has no
``ps``), and those differences shape an investigation, so the interpreters
consult this table instead of pretending every image is a full distro.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sre_env.sim.kernel.images import split_image
from sre_env.sim.runtime.oslimits import exec_target

__all__ = ["ImageInfo", "image_info", "process_cmdline"]

_BUSYBOX = frozenset(
    "sh ash env printenv cat ls ps hostname id whoami date uptime df echo true false sleep head tail grep egrep wc "
    "pwd uname mount free kill nslookup wget nc netstat cut sort uniq tr sed awk find du stat test [ which ulimit "
    "ping top touch mkdir rm cp mv ln basename dirname getent tee xargs seq expr printf timeout".split()
)
_COREUTILS = frozenset(
    "sh bash dash env printenv cat ls hostname id whoami date uptime df echo true false sleep head tail grep egrep wc "
    "pwd uname mount kill cut sort uniq tr sed awk find du stat test [ which ulimit touch mkdir rm cp mv ln basename "
    "dirname getent tee xargs seq expr printf timeout".split()
)
_NET_FULL = frozenset("curl wget nc nslookup dig host ping ss netstat ip ps free top tcpdump iperf3 getent".split())


@dataclass(frozen=True)
class ImageInfo:
    family: str
    #: applet wording (``wget: bad address``) rather than GNU/Debian tool wording
    busybox: bool
    bins: frozenset[str]
    uid: int
    user: str
    group: str
    #: the user name ``ps`` on the *host* shows for that uid (host passwd, truncated to 8)
    host_user: str
    default_cmd: tuple[str, ...]
    pretty_name: str
    os_id: str
    home: str = "/root"
    path: str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    image_env: tuple[tuple[str, str], ...] = ()


def _alpine(family: str, extra: str = "", cmd: tuple[str, ...] = ("sh",), uid: int = 0, user: str = "root", host_user: str = "root", env: tuple[tuple[str, str], ...] = ()) -> ImageInfo:
    return ImageInfo(family, True, _BUSYBOX | frozenset(extra.split()), uid, user, user, host_user, cmd, "Alpine Linux v3.19", "alpine", image_env=env)


@lru_cache(maxsize=256)
def image_info(image: str) -> ImageInfo:
    repo, tag = split_image(image or "")
    base = repo.rsplit("/", 1)[-1]
    if base == "mongo":
        major = int(tag.split(".")[0]) if tag.split(".")[0].isdigit() else 7
        shells = "mongo" if major < 5 else ("mongo mongosh" if major < 6 else "mongosh")
        return ImageInfo(
            "mongo", False, _COREUTILS | frozenset(f"{shells} mongod mongos numactl jq gosu ps".split()), 0, "root", "root", "systemd+",
            ("mongod", "--bind_ip_all"), "Ubuntu 20.04.2 LTS" if major < 6 else "Ubuntu 22.04.4 LTS", "ubuntu",
            image_env=(("GOSU_VERSION", "1.12"), ("JSYAML_VERSION", "3.13.1"), ("MONGO_PACKAGE", "mongodb-org"), ("MONGO_REPO", "repo.mongodb.org"), ("MONGO_MAJOR", f"{major}.{tag.split('.')[1] if '.' in tag else '0'}"), ("MONGO_VERSION", tag if tag[:1].isdigit() else "7.0.12"), ("HOME", "/data/db")),
            home="/data/db",
        )
    if base == "redis":
        if "alpine" in tag:
            return _alpine("redis", "redis-server redis-cli redis-benchmark su-exec", ("redis-server",), 999, "redis", "999")
        return ImageInfo(
            "redis", False, _COREUTILS | frozenset("redis-server redis-cli redis-benchmark redis-check-aof redis-check-rdb redis-sentinel gosu".split()), 999, "redis", "redis", "999",
            ("redis-server",), "Debian GNU/Linux 11 (bullseye)", "debian", home="/data",
            image_env=(("GOSU_VERSION", "1.12"), ("REDIS_VERSION", tag if tag[:1].isdigit() else "7.2.5"), ("REDIS_DOWNLOAD_URL", f"http://download.redis.io/releases/redis-{tag if tag[:1].isdigit() else '7.2.5'}.tar.gz")),
        )
    if base == "social-network-microservices":
        bins = "ComposePostService HomeTimelineService MediaService PostStorageService SocialGraphService TextService UniqueIdService UrlShortenService UserMentionService UserService UserTimelineService ps"
        return ImageInfo("social-network-microservices", False, _COREUTILS | frozenset(bins.split()), 0, "root", "root", "root", ("bash",), "Ubuntu 16.04.7 LTS", "ubuntu", path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
    if base in ("openresty-thrift", "media-frontend"):
        return ImageInfo(base, False, _COREUTILS | frozenset(["openresty", "nginx", "curl", "ps", "luajit"]), 0, "root", "root", "root", ("/usr/local/openresty/bin/openresty", "-g", "daemon off;"), "Ubuntu 16.04.7 LTS", "ubuntu", path="/usr/local/openresty/luajit/bin:/usr/local/openresty/nginx/sbin:/usr/local/openresty/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
    if base == "memcached":
        if "alpine" in tag:
            return _alpine("memcached", "memcached", ("memcached",), 11211, "memcache", "11211")
        return ImageInfo(
            "memcached", False, (_COREUTILS - {"awk"}) | frozenset(["memcached"]), 11211, "memcache", "memcache", "11211",
            ("memcached",), "Debian GNU/Linux 12 (bookworm)", "debian", home="/home/memcache",
            image_env=(("MEMCACHED_VERSION", "1.6.29"),),
        )
    if base == "consul":
        return _alpine("consul", "consul curl jq su-exec iptables", ("consul", "agent", "-data-dir=/consul/data", "-config-dir=/consul/config", "-dev", "-client", "0.0.0.0"), 100, "consul", "_apt", (("HASHICORP_RELEASES", "https://releases.hashicorp.com"),))
    if base == "all-in-one" or "jaeger" in repo:
        return _alpine("jaeger", "all-in-one-linux", ("/go/bin/all-in-one-linux",), 10001, "10001", "10001", (("SAMPLING_STRATEGIES_FILE", "/etc/jaeger/sampling_strategies.json"),))
    if base in ("busybox",):
        return ImageInfo("busybox", True, _BUSYBOX, 0, "root", "root", "root", ("sh",), "BusyBox", "busybox", path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
    if base == "alpine":
        return _alpine("alpine")
    if base == "curl":
        return _alpine("curl", "curl", ("curl",), 100, "curl_user", "_apt")
    if base == "netshoot":
        return _alpine("netshoot", " ".join(_NET_FULL) + " bash zsh", ("zsh",))
    if base == "pause":
        return ImageInfo("pause", False, frozenset(), 65535, "65535", "65535", "65535", ("/pause",), "", "")
    if base == "nginx":
        return ImageInfo("nginx", False, _COREUTILS | frozenset(["curl", "nginx"]), 0, "root", "root", "root", ("nginx", "-g", "daemon off;"), "Debian GNU/Linux 12 (bookworm)", "debian")
    if base in ("ubuntu", "debian"):
        return ImageInfo(base, False, _COREUTILS | frozenset(["ps"]) if base == "debian" else _COREUTILS, 0, "root", "root", "root", ("bash",), "Ubuntu 22.04.4 LTS" if base == "ubuntu" else "Debian GNU/Linux 12 (bookworm)", base)
    # the application images (one Go binary on a small busybox base)
    return _alpine("go", "", ("sh",))


def process_cmdline(container: dict[str, Any], info: ImageInfo | None = None) -> list[str]:
    """The argv the container's PID 1 runs: spec command/args over the image's ENTRYPOINT/CMD."""
    info = info or image_info(str(container.get("image", "")))
    command = [str(x) for x in container.get("command") or ()]
    args = [str(x) for x in container.get("args") or ()]
    wrapped = exec_target(container)
    if wrapped is not None:
        return wrapped  # ``sh -c '...; exec PROG'``: the shell replaced itself with PROG
    if command:
        return command + args
    if info.family == "mongo":
        if args and args[0].startswith("-"):
            return ["mongod", *args, "--bind_ip_all"] if "--bind_ip" not in " ".join(args) else ["mongod", *args]
        return args or list(info.default_cmd)
    if info.family == "memcached":
        if args and args[0].startswith("-"):
            return ["memcached", *args]
        return args or list(info.default_cmd)
    if info.family == "redis":
        # docker-entrypoint.sh: a first argument that is a flag or a .conf file runs redis-server with it
        if args and (args[0].startswith("-") or args[0].endswith(".conf")):
            return ["redis-server", *args]
        return args or list(info.default_cmd)
    if args:
        return args
    return list(info.default_cmd)
