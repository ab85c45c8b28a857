"""DeathStarBench social-network, as data.

What is taken from the real application (DeathStarBench ``socialNetwork``, its
Helm chart ``socialNetwork/helm-chart/socialnetwork`` and the C++ sources):

* the components and their Deployment/Service/container names: eleven Thrift
  services ``<name>-service`` (compose-post, post-storage, user-timeline,
  home-timeline, social-graph, user, url-shorten, media, text, unique-id,
  user-mention), the OpenResty gateway ``nginx-thrift`` and ``media-frontend``,
  MongoDBs ``<svc>-mongodb``, memcacheds ``<svc>-memcached``, redis
  ``home-timeline-redis``, ``user-timeline-redis``, ``social-graph-redis``, and
  ``jaeger``;
* the chart's labels (Deployment and selector ``service: <name>``, pod template
  ``service`` + ``app``), ``replicas: 1``, ``hostname: <name>``, and the global
  resources every container gets (100m CPU, 128Mi memory, requests = limits);
* images: ``docker.io/deathstarbench/social-network-microservices:latest``
  started with ``command: [<ServiceBinary>]``, ``docker.io/library/mongo:4.4.6``
  with ``--config .../mongod.conf``, ``docker.io/library/redis:6.2.4`` with
  ``.../redis.conf`` as its only argument, ``docker.io/library/memcached:1.6.7``,
  ``docker.io/yg397/openresty-thrift:xenial`` and ``yg397/media-frontend:xenial``;
* ports: Thrift services 9090, nginx-thrift 8080, media-frontend Service
  8081 -> 8080 (its container declares 8081 but nginx listens on 8080), MongoDB
  27017, memcached 11211, redis 6379; Service port names are the port numbers;
* every component's own ConfigMap (named after it) mounted with ``subPath``:
  ``service-config.json`` (every address, port 9090/27017/11211/6379,
  ``connections: 512``, ``timeout_ms: 10000``) and ``jaeger-config.yml``
  (``localAgentHostPort: jaeger:6831``, probabilistic sampler 0.1),
  ``mongod.conf`` for MongoDB, ``redis.conf`` for redis (``io-threads 8``,
  ``port 6379``, ``tls-port 0``), ``nginx.conf`` and ``jaeger-config.json`` for
  nginx-thrift, whose Lua scripts build addresses from ``fqdn_suffix``;
* the call graph of the handlers: ComposePost fans out to unique-id, text
  (-> url-shorten, user-mention), media, user, post-storage, user-timeline and
  home-timeline; WriteHomeTimeline asks social-graph for the followers and
  ZADDs the post to each follower's sorted set in home-timeline-redis;
  ReadHomeTimeline is a ZREVRANGE on home-timeline-redis plus post-storage's
  ReadPosts (memcached, then MongoDB); ReadUserTimeline reads user-timeline-redis,
  falls back to user-timeline-mongodb and refills redis;
* the wrk2 ``mixed-workload.lua`` mix: read home timeline 0.60
  (``GET /wrk2-api/home-timeline/read``), read user timeline 0.30
  (``GET /wrk2-api/user-timeline/read``), compose post 0.10
  (``POST /wrk2-api/post/compose``).

Our modelling choices (not in the real app):

* nginx-thrift's Lua scripts compile the Thrift addresses in; the C++ services
  read theirs from the mounted ``service-config.json`` when they start
  (``Dependency.config_key``, :mod:`sre_env.sim.runtime.appconfig`). No address is
  carried in env.
* Bytes a write adds to a redis dataset (``payload_bytes``): a post ZADDed to
  about 39 followers' home timelines (the socfb-Reed98 graph DeathStarBench
  loads) is ~1.9 kB; a user-timeline ZADD (one post, or a refill of a few) ~200 B.
* Capacities and service times are plausible figures, not measurements.
"""

from __future__ import annotations

import json

from sre_env.apps.base import AppSpec, Call, Component, Dependency, RequestType

__all__ = ["NAMESPACE", "SOCIAL_NETWORK"]

NAMESPACE = "social-network"

SN_IMAGE = "docker.io/deathstarbench/social-network-microservices:latest"
MONGO_IMAGE = "docker.io/library/mongo:4.4.6"
REDIS_IMAGE = "docker.io/library/redis:6.2.4"
MEMCACHED_IMAGE = "docker.io/library/memcached:1.6.7"
NGINX_IMAGE = "docker.io/yg397/openresty-thrift:xenial"
MEDIA_FRONTEND_IMAGE = "docker.io/yg397/media-frontend:xenial"
JAEGER_IMAGE = "docker.io/jaegertracing/all-in-one:latest"

_CPU = "100m"
_MEM = "128Mi"
CONFIG_DIR = "/social-network-microservices/config"

# --------------------------------------------------------------------------- config files

_THRIFT = ("social-graph", "compose-post", "user-timeline", "post-storage", "unique-id", "media", "text", "user-mention", "url-shorten", "user", "home-timeline")
_MONGO = ("social-graph", "user-timeline", "post-storage", "media", "url-shorten", "user")
_MEMC = ("post-storage", "media", "url-shorten", "user")
_REDIS = ("social-graph", "home-timeline", "user-timeline")


def _service_config() -> str:
    entry = {"connections": 512, "timeout_ms": 10000, "keepalive_ms": 10000}
    cfg: dict[str, object] = {"secret": "secret"}
    for s in _THRIFT:
        cfg[f"{s}-service"] = {"addr": f"{s}-service", "port": 9090, **entry, **({"netif": "eth0"} if s in ("unique-id", "user") else {})}
    for s in _MONGO:
        cfg[f"{s}-mongodb"] = {"addr": f"{s}-mongodb", "port": 27017, **entry}
    for s in _MEMC:
        cfg[f"{s}-memcached"] = {"addr": f"{s}-memcached", "port": 11211, **entry, "binary_protocol": 1}
    for s in _REDIS:
        cfg[f"{s}-redis"] = {"addr": f"{s}-redis", "port": 6379, **entry, "use_cluster": 0, "use_replica": 0}
    cfg["media-frontend"] = {"addr": "media-frontend", "port": 8081, **entry}
    cfg["ssl"] = {"enabled": False, "caPath": "/keys/CA.pem", "ciphers": "ALL:!ADH:!LOW:!EXP:!MD5:@STRENGTH", "serverKeyPath": "/keys/server.key", "serverCertPath": "/keys/server.crt"}
    cfg["redis-primary"] = {"keepalive_ms": 10000, "addr": "redis-master", "timeout_ms": 10000, "port": 6379, "connections": 512}
    cfg["redis-replica"] = {"keepalive_ms": 10000, "addr": "redis-replicas", "timeout_ms": 10000, "port": 6379, "connections": 512}
    return json.dumps(cfg, indent=4) + "\n"


SERVICE_CONFIG = _service_config()
JAEGER_CONFIG_YML = (
    "disabled: false\n"
    "reporter:\n"
    "  logSpans: false\n"
    '  localAgentHostPort: "jaeger:6831"\n'
    "  queueSize: 1000000\n"
    "  bufferFlushInterval: 10\n"
    "sampler:\n"
    '  type: "probabilistic"\n'
    "  param: 0.1\n"
)
JAEGER_CONFIG_JSON = (
    "{\n"
    '  "service_name": "nginx-web-server",\n'
    '  "disabled": false,\n'
    '  "reporter": {\n'
    '    "logSpans": false,\n'
    '    "localAgentHostPort": "jaeger:6831",\n'
    '    "queueSize": 1000000,\n'
    '    "bufferFlushInterval": 10\n'
    "  },\n"
    '  "sampler": {\n'
    '    "type": "probabilistic",\n'
    '    "param": 0.1\n'
    "  }\n"
    "}\n"
)
MONGOD_CONF = "net:\n  tls:\n    mode: disabled\n"
REDIS_CONF = (
    "io-threads 8\n"
    "io-threads-do-reads yes\n"
    "port 6379\n"
    "tls-port 0\n"
    "\n"
    "tls-cert-file /keys/server.crt\n"
    "tls-key-file /keys/server.key\n"
    "\n"
    "tls-auth-clients no\n"
)
_WRK2_LOCATIONS = (
    ("/wrk2-api/home-timeline/read", "wrk2-api/home-timeline/read", "ReadHomeTimeline"),
    ("/wrk2-api/user-timeline/read", "wrk2-api/user-timeline/read", "ReadUserTimeline"),
    ("/wrk2-api/post/compose", "wrk2-api/post/compose", "ComposePost"),
    ("/wrk2-api/user/register", "wrk2-api/user/register", "RegisterUser"),
    ("/wrk2-api/user/follow", "wrk2-api/user/follow", "Follow"),
)
NGINX_CONF = (
    "# Load the OpenTracing dynamic module.\n"
    "load_module modules/ngx_http_opentracing_module.so;\n\n"
    "worker_processes  auto;\n\n"
    "events {\n  use epoll;\n  worker_connections  1024;\n}\n\n"
    "env fqdn_suffix;\n\n"
    "http {\n"
    "  opentracing on;\n"
    "  opentracing_load_tracer /usr/local/lib/libjaegertracing_plugin.so /usr/local/openresty/nginx/jaeger-config.json;\n\n"
    "  include       mime.types;\n"
    "  default_type  application/octet-stream;\n\n"
    "  proxy_read_timeout 5000;\n  proxy_connect_timeout 5000;\n  proxy_send_timeout 5000;\n\n"
    "  sendfile        on;\n  tcp_nopush      on;\n  tcp_nodelay     on;\n\n"
    "  keepalive_timeout  120s;\n  keepalive_requests 100000;\n\n"
    "  resolver kube-dns.kube-system.svc.cluster.local valid=10s ipv6=off;\n\n"
    "  lua_package_path '/usr/local/openresty/nginx/lua-scripts/?.lua;/usr/local/openresty/luajit/share/lua/5.1/?.lua;;';\n\n"
    "  lua_shared_dict config 32k;\n\n"
    "  server {\n"
    "    listen       8080 reuseport;\n"
    "    server_name  localhost;\n\n"
    "    access_log  off;\n\n"
    "    lua_need_request_body on;\n\n"
    + "".join(
        f"    location {loc} {{\n      content_by_lua '\n          local client = require \"{mod}\"\n          client.{fn}();\n      ';\n    }}\n\n"
        for loc, mod, fn in _WRK2_LOCATIONS
    )
    + "    location / {\n      root pages;\n    }\n  }\n}\n"
)


def _sn_files() -> tuple[tuple[str, str, str], ...]:
    return (
        ("jaeger-config.yml", f"{CONFIG_DIR}/jaeger-config.yml", JAEGER_CONFIG_YML),
        ("service-config.json", f"{CONFIG_DIR}/service-config.json", SERVICE_CONFIG),
    )


# --------------------------------------------------------------------------- components

_JAEGER = Dependency("jaeger", 6831, address_env=None, protocol="thrift", critical=False)


def _thrift(name: str, *, from_config: bool = True) -> Dependency:
    svc = f"{name}-service"
    return Dependency(svc, 9090, address_env=None, protocol="thrift", critical=True, config_key=svc if from_config else None)


def _mongo_dep(svc: str, *, from_config: bool = True) -> Dependency:
    name = f"{svc}-mongodb"
    return Dependency(name, 27017, address_env=None, protocol="mongodb", critical=True, config_key=name if from_config else None)


def _memc_dep(svc: str) -> Dependency:
    # libmemcached errors are treated as misses: the service falls through to MongoDB
    name = f"{svc}-memcached"
    return Dependency(name, 11211, address_env=None, protocol="memcached", critical=False, config_key=name)


def _redis_dep(svc: str) -> Dependency:
    name = f"{svc}-redis"
    return Dependency(name, 6379, address_env=None, protocol="redis", critical=True, config_key=name)


def _common(name: str, container: str, image: str, port: int, **kw: object) -> Component:
    return Component(
        name=name,
        image=image,
        container=container,
        container_ports=kw.pop("container_ports", (("", port, "TCP"),)),  # type: ignore[arg-type]
        service_ports=kw.pop("service_ports", ((str(port), port, port, "TCP"),)),  # type: ignore[arg-type]
        listen_port=port,
        cpu_request=_CPU,
        cpu_limit=_CPU,
        memory_request=_MEM,
        memory_limit=_MEM,
        template_labels=(("app", name),),
        **kw,  # type: ignore[arg-type]
    )


def _service(short: str, binary: str, deps: tuple[Dependency, ...] = (), *, capacity_rps: float, latency_ms: float, memory_mib: float = 18.0) -> Component:
    name = f"{short}-service"
    return _common(
        name,
        name,
        SN_IMAGE,
        9090,
        command=(binary,),
        role="service",
        dependencies=deps + (_JAEGER,),
        memory_mib=memory_mib,
        capacity_rps=capacity_rps,
        latency_ms=latency_ms,
        startup_s=2.0,
        log_format="cpp-thrift",
        config_files=_sn_files(),
        address_file=f"{CONFIG_DIR}/service-config.json",
    )


def _mongodb(short: str) -> Component:
    name = f"{short}-mongodb"
    return _common(
        name,
        name,
        MONGO_IMAGE,
        27017,
        args=("--config", f"{CONFIG_DIR}/mongod.conf"),
        role="database",
        memory_mib=96.0,
        capacity_rps=3000.0,
        latency_ms=1.2,
        startup_s=4.0,
        log_format="mongodb",
        config_files=(("mongod.conf", f"{CONFIG_DIR}/mongod.conf", MONGOD_CONF),),
    )


def _memcached(short: str) -> Component:
    name = f"{short}-memcached"
    return _common(
        name,
        name,
        MEMCACHED_IMAGE,
        11211,
        role="cache",
        memory_mib=10.0,
        capacity_rps=30000.0,
        latency_ms=0.2,
        startup_s=1.0,
        log_format="memcached",
        config_files=_sn_files(),
    )


def _redis(short: str) -> Component:
    name = f"{short}-redis"
    return _common(
        name,
        name,
        REDIS_IMAGE,
        6379,
        args=(f"{CONFIG_DIR}/redis.conf",),
        role="cache",
        memory_mib=9.0,
        capacity_rps=40000.0,
        latency_ms=0.15,
        startup_s=1.0,
        log_format="redis",
        config_files=(("redis.conf", f"{CONFIG_DIR}/redis.conf", REDIS_CONF),),
    )


NGINX_THRIFT = _common(
    "nginx-thrift",
    "nginx-thrift",
    NGINX_IMAGE,
    8080,
    env=(("fqdn_suffix", f".{NAMESPACE}.svc.cluster.local"),),
    role="frontend",
    # the Lua scripts build "<name>" .. fqdn_suffix and dial port 9090: compiled in, not from a file
    dependencies=tuple(_thrift(s, from_config=False) for s in ("compose-post", "home-timeline", "user-timeline", "user", "social-graph")) + (_JAEGER,),
    memory_mib=24.0,
    capacity_rps=3000.0,
    latency_ms=0.6,
    startup_s=2.0,
    log_format="openresty",
    config_files=(
        ("jaeger-config.json", "/usr/local/openresty/nginx/jaeger-config.json", JAEGER_CONFIG_JSON),
        ("nginx.conf", "/usr/local/openresty/nginx/conf/nginx.conf", NGINX_CONF),
    ),
)
MEDIA_FRONTEND = _common(
    "media-frontend",
    "media-frontend",
    MEDIA_FRONTEND_IMAGE,
    8080,
    container_ports=(("", 8081, "TCP"),),
    service_ports=(("8081", 8081, 8080, "TCP"),),
    env=(("fqdn_suffix", f".{NAMESPACE}.svc.cluster.local"),),
    role="frontend",
    dependencies=(_mongo_dep("media", from_config=False), _JAEGER),
    memory_mib=20.0,
    capacity_rps=2000.0,
    latency_ms=1.0,
    startup_s=2.0,
    log_format="openresty",
    config_files=_sn_files(),
)

COMPOSE_POST = _service(
    "compose-post",
    "ComposePostService",
    tuple(_thrift(s) for s in ("text", "unique-id", "media", "user", "post-storage", "user-timeline", "home-timeline")),
    capacity_rps=1500.0,
    latency_ms=0.8,
)
TEXT = _service("text", "TextService", (_thrift("url-shorten"), _thrift("user-mention")), capacity_rps=2500.0, latency_ms=0.5)
URL_SHORTEN = _service("url-shorten", "UrlShortenService", (_memc_dep("url-shorten"), _mongo_dep("url-shorten")), capacity_rps=2500.0, latency_ms=0.5)
USER_MENTION = _service("user-mention", "UserMentionService", (_memc_dep("user"), _mongo_dep("user")), capacity_rps=2500.0, latency_ms=0.5)
MEDIA = _service("media", "MediaService", (), capacity_rps=4000.0, latency_ms=0.2)
UNIQUE_ID = _service("unique-id", "UniqueIdService", (), capacity_rps=5000.0, latency_ms=0.1)
USER = _service("user", "UserService", (_memc_dep("user"), _mongo_dep("user"), _thrift("social-graph")), capacity_rps=2500.0, latency_ms=0.5)
POST_STORAGE = _service("post-storage", "PostStorageService", (_memc_dep("post-storage"), _mongo_dep("post-storage")), capacity_rps=2500.0, latency_ms=0.9, memory_mib=26.0)
USER_TIMELINE = _service(
    "user-timeline",
    "UserTimelineService",
    (_redis_dep("user-timeline"), _mongo_dep("user-timeline"), _thrift("post-storage")),
    capacity_rps=2500.0,
    latency_ms=0.8,
)
HOME_TIMELINE = _service(
    "home-timeline",
    "HomeTimelineService",
    (_redis_dep("home-timeline"), _thrift("post-storage"), _thrift("social-graph")),
    capacity_rps=2500.0,
    latency_ms=0.7,
)
SOCIAL_GRAPH = _service(
    "social-graph",
    "SocialGraphService",
    (_redis_dep("social-graph"), _mongo_dep("social-graph"), _thrift("user")),
    capacity_rps=2500.0,
    latency_ms=0.5,
)

_JAEGER_PORTS = ((5775, "UDP"), (6831, "UDP"), (6832, "UDP"), (5778, "TCP"), (16686, "TCP"), (14268, "TCP"), (9411, "TCP"))
JAEGER = _common(
    "jaeger",
    "jaeger",
    JAEGER_IMAGE,
    6831,
    container_ports=tuple(("", p, proto) for p, proto in _JAEGER_PORTS),
    service_ports=tuple((str(p), p, p, proto) for p, proto in _JAEGER_PORTS),
    env=(("COLLECTOR_ZIPKIN_HTTP_PORT", "9411"),),
    role="infra",
    memory_mib=60.0,
    capacity_rps=20000.0,
    latency_ms=0.1,
    startup_s=3.0,
    log_format="jaeger",
)

COMPONENTS: tuple[Component, ...] = (
    NGINX_THRIFT,
    MEDIA_FRONTEND,
    COMPOSE_POST,
    TEXT,
    URL_SHORTEN,
    USER_MENTION,
    MEDIA,
    UNIQUE_ID,
    USER,
    POST_STORAGE,
    USER_TIMELINE,
    HOME_TIMELINE,
    SOCIAL_GRAPH,
    *(_mongodb(s) for s in ("post-storage", "user-timeline", "social-graph", "user", "url-shorten", "media")),
    *(_memcached(s) for s in ("post-storage", "user", "url-shorten", "media")),
    *(_redis(s) for s in ("home-timeline", "user-timeline", "social-graph")),
    JAEGER,
)

#: bytes a post adds to home-timeline-redis: ZADD to ~39 followers' sorted sets
HOME_TIMELINE_ZADD_BYTES = 1900.0
USER_TIMELINE_ZADD_BYTES = 200.0

_READ_POSTS = (
    Call("post-storage-service", "post-storage-memcached", 1.0, "get_multi"),
    Call("post-storage-service", "post-storage-mongodb", 1.0, "find post", miss_ratio=0.1),
)
_FOLLOWERS = (
    Call("home-timeline-service", "social-graph-service", 1.0, "GetFollowers"),
    Call("social-graph-service", "social-graph-redis", 1.0, "ZRANGE"),
    Call("social-graph-service", "social-graph-mongodb", 1.0, "find social-graph", miss_ratio=0.02),
    Call("social-graph-service", "social-graph-redis", 1.0, "ZADD", miss_ratio=0.02, payload_bytes=900.0),
)

REQUESTS: tuple[RequestType, ...] = (
    RequestType(
        "read_home_timeline",
        "GET",
        "/wrk2-api/home-timeline/read",
        0.6,
        (
            Call("nginx-thrift", "home-timeline-service", 1.0, "ReadHomeTimeline"),
            Call("home-timeline-service", "home-timeline-redis", 1.0, "ZREVRANGE"),
            Call("home-timeline-service", "post-storage-service", 1.0, "ReadPosts"),
        )
        + _READ_POSTS,
        feature="home timeline",
    ),
    RequestType(
        "read_user_timeline",
        "GET",
        "/wrk2-api/user-timeline/read",
        0.3,
        (
            Call("nginx-thrift", "user-timeline-service", 1.0, "ReadUserTimeline"),
            Call("user-timeline-service", "user-timeline-redis", 1.0, "ZREVRANGE"),
            Call("user-timeline-service", "user-timeline-mongodb", 1.0, "find user-timeline", miss_ratio=0.1),
            Call("user-timeline-service", "user-timeline-redis", 1.0, "ZADD", miss_ratio=0.1, payload_bytes=USER_TIMELINE_ZADD_BYTES),
            Call("user-timeline-service", "post-storage-service", 1.0, "ReadPosts"),
        )
        + _READ_POSTS,
        feature="user timelines",
    ),
    RequestType(
        "compose_post",
        "POST",
        "/wrk2-api/post/compose",
        0.1,
        (
            Call("nginx-thrift", "compose-post-service", 1.0, "ComposePost"),
            Call("compose-post-service", "unique-id-service", 1.0, "ComposeUniqueId"),
            Call("compose-post-service", "text-service", 1.0, "ComposeText"),
            Call("text-service", "url-shorten-service", 1.0, "ComposeUrls"),
            Call("url-shorten-service", "url-shorten-mongodb", 1.0, "insert url-shorten"),
            Call("text-service", "user-mention-service", 1.0, "ComposeUserMentions"),
            Call("user-mention-service", "user-memcached", 1.0, "get_multi"),
            Call("user-mention-service", "user-mongodb", 1.0, "find user", miss_ratio=0.2),
            Call("compose-post-service", "media-service", 1.0, "ComposeMedia"),
            Call("compose-post-service", "user-service", 1.0, "ComposeCreatorWithUserId"),
            Call("compose-post-service", "post-storage-service", 1.0, "StorePost"),
            Call("post-storage-service", "post-storage-mongodb", 1.0, "insert post"),
            Call("compose-post-service", "user-timeline-service", 1.0, "WriteUserTimeline"),
            Call("user-timeline-service", "user-timeline-mongodb", 1.0, "update user-timeline"),
            Call("user-timeline-service", "user-timeline-redis", 1.0, "ZADD", payload_bytes=USER_TIMELINE_ZADD_BYTES),
            Call("compose-post-service", "home-timeline-service", 1.0, "WriteHomeTimeline"),
        )
        + _FOLLOWERS
        + (Call("home-timeline-service", "home-timeline-redis", 1.0, "ZADD", payload_bytes=HOME_TIMELINE_ZADD_BYTES),),
        feature="posting",
    ),
)

SOCIAL_NETWORK = AppSpec(
    name="social-network",
    namespace=NAMESPACE,
    components=COMPONENTS,
    requests=REQUESTS,
    entrypoint="nginx-thrift",
    entry_port=8080,
    rps=200.0,
    client_timeout_s=10.0,
    description=(
        "DeathStarBench social network: an OpenResty gateway (nginx-thrift) in front of eleven C++ Thrift "
        "services (compose-post, post-storage, user-timeline, home-timeline, social-graph, user, url-shorten, "
        "media, text, unique-id, user-mention) backed by MongoDB, memcached and redis, traced by jaeger."
    ),
    extra_images=(
        "docker.io/deathstarbench/social-network-microservices:0.1.0",
        "deathstarbench/social-network-microservices:latest",
        "docker.io/library/redis:6.2",
        "docker.io/library/redis:7.2",
        "redis:6.2.4",
        "docker.io/library/mongo:4.4",
        "docker.io/library/memcached:1.6",
        "docker.io/jaegertracing/all-in-one:1.57",
    ),
    label_key="service",
    manifest_style="helm",
    model="social-network",
)
