"""DeathStarBench hotel-reservation, as data.

What is taken from the real application (DeathStarBench ``hotelReservation``
and the AIOpsLab/SREGym copies of its Kubernetes manifests):

* the 19 components and their Deployment/Service/container names
  (``hotel-reserv-<svc>`` for the Go services, ``hotel-reserv-<svc>-mongo``,
  ``hotel-reserv-<svc>-mmc``, ``consul``, ``hotel-reserv-jaeger``), the
  ``io.kompose.service`` label, ``replicas: 1`` everywhere, and the
  ``cpu: 100m`` request / ``cpu: 1000m`` limit every container carries;
* images: one Go image for all eight services, started with ``command: [<svc>]``,
  ``mongo:4.4.6``, ``memcached`` (untagged), ``hashicorp/consul:latest`` and
  ``jaegertracing/all-in-one:1.57``;
* ports: frontend 5000, profile 8081, search 8082, geo 8083, rate 8084,
  recommendation 8085, user 8086, reservation 8087 (Service port names are the
  numbers as strings, as kompose writes them); MongoDB 27017 and memcached 11211
  with the Service port named after the Service; consul 8300/8400/8500 and
  8600/UDP -> 53; jaeger's eight agent/collector/UI ports;
* env: ``JAEGER_SAMPLE_RATIO="1"`` on every Go service,
  ``MEMCACHED_CACHE_SIZE="128"`` and ``MEMCACHED_THREADS="2"`` on the caches;
* MongoDBs are Deployments (strategy Recreate) mounting PVC ``<svc>-pvc``
  (1Gi, ReadWriteOnce) at ``/data/db``;
* the addresses each service reads from ``config.json``: ``consul:8500``,
  ``jaeger:6831``, ``mongodb-<svc>:27017``, ``memcached-<svc>:11211``, and that
  gRPC services find each other through consul (``srv-<name>`` registrations);
* the wrk2 ``mixed-workload_type_1.lua`` mix: search 0.6 ``GET /hotels``,
  recommend 0.39 ``GET /recommendations``, user login 0.005 ``POST /user``,
  reserve 0.005 ``POST /reservation``, and the frontend handlers' call order.

Our modelling choices (not in the real app):

* The real processes read every address from the ``config.json`` baked into
  the image. So that configuration faults can be injected through the pod spec,
  each Go service here also carries its addresses as env vars named after the
  config keys (``CONSUL_ADDRESS`` for ``consulAddress``, ``GEO_MONGO_ADDRESS``
  for ``GeoMongoAddress``, ``RATE_MEMC_ADDRESS`` for ``RateMemcAddress`` ...);
  they are ``required_env``: without one the process exits at start. The real
  ``JAEGER_SAMPLE_RATIO`` is optional (tracing falls back to 0.01), so it is
  not required here either.
* consul is a critical dependency of every Go service (registration at start,
  discovery of ``srv-*`` for the gRPC clients); the direct gRPC edges are listed
  too. jaeger is a non-critical dependency (UDP spans, fire and forget).
* geo, recommendation and user load their collections into memory at start, so
  their MongoDB is dialled at start but sits on no per-request path; rate,
  profile and reservation read through memcached to MongoDB on a miss.
* Capacities and service times are plausible figures, not measurements.
* MongoDB access control (not in the public manifests, common in production
  copies): mongodb-rate, -profile and -reservation run with ``--auth``; each
  has a ``mongodb-<svc>-credentials`` Secret (root and service user) from which
  the database creates its users on first start of an empty volume, and the
  service reads ``MONGO_USERNAME``/``MONGO_PASSWORD`` from the same Secret and
  ``MONGO_DATABASE``/``MONGO_AUTH_SOURCE`` from the ``<svc>-mongo-config``
  ConfigMap through ``envFrom`` (see sre_env.sim.runtime.mongo_auth).
* Later tags of the Go image (``0.9.x``) exist in the registry; some ship a
  bug in one service (sre_env.sim.kernel.images), for release incidents.
"""

from __future__ import annotations

from sre_env.apps.base import AppSpec, Call, Component, Dependency, RequestType

__all__ = ["HOTEL_RESERVATION", "NAMESPACE"]

NAMESPACE = "hotel-reservation"

GO_IMAGE = "yinfangchen/hotelreservation:latest"
MONGO_IMAGE = "mongo:4.4.6"
MEMCACHED_IMAGE = "memcached"
CONSUL_IMAGE = "hashicorp/consul:latest"
JAEGER_IMAGE = "jaegertracing/all-in-one:1.57"

_CPU_REQ = "100m"
_CPU_LIM = "1000m"


def _label(name: str) -> tuple[tuple[str, str], ...]:
    return (("io.kompose.service", name),)


#: databases that run with ``--auth``: one application user per service, created at
#: first start of an empty volume from the ``mongodb-<svc>-credentials`` Secret
AUTH_DATABASES = ("rate", "profile", "reservation")
#: (service, root password, application user's password) -- fixed values, part of the manifests
_CREDENTIALS = {
    "rate": ("r00t-Kq4vHx7w", "rate-T9mZc2Lp"),
    "profile": ("r00t-Wd8sNe3j", "profile-B6yQf5Rk"),
    "reservation": ("r00t-Pz2gUa9c", "reserve-H4tXv8Mn"),
}


def _db_client(svc: str) -> dict:
    """How a Go service with an auth-enabled database gets its DB settings and credentials."""
    return {
        "env_from": (("configMap", f"{svc}-mongo-config"),),
        "secret_env": (
            ("MONGO_USERNAME", f"mongodb-{svc}-credentials", "username"),
            ("MONGO_PASSWORD", f"mongodb-{svc}-credentials", "password"),
        ),
    }


_CONSUL = Dependency("consul", 8500, address_env="CONSUL_ADDRESS", protocol="consul", critical=True)
_JAEGER = Dependency("jaeger", 6831, address_env=None, protocol="thrift", critical=False)


def _go_service(
    name: str,
    port: int,
    *,
    env: tuple[tuple[str, str], ...] = (),
    deps: tuple[Dependency, ...] = (),
    capacity_rps: float,
    latency_ms: float,
    memory_mib: float,
    startup_s: float,
    role: str = "service",
    log_format: str = "go-service",
    env_from: tuple[tuple[str, str], ...] = (),
    secret_env: tuple[tuple[str, str, str], ...] = (),
) -> Component:
    full_env = (("JAEGER_SAMPLE_RATIO", "1"), ("CONSUL_ADDRESS", "consul:8500")) + env
    required = ("CONSUL_ADDRESS",) + tuple(k for k, _ in env)
    return Component(
        name=name,
        image=GO_IMAGE,
        container=f"hotel-reserv-{name}",
        command=(name,),
        role=role,
        container_ports=(("", port, "TCP"),),
        service_ports=((str(port), port, port, "TCP"),),
        listen_port=port,
        env=full_env,
        required_env=required,
        dependencies=(_CONSUL,) + deps + (_JAEGER,),
        labels=_label(name),
        cpu_request=_CPU_REQ,
        cpu_limit=_CPU_LIM,
        memory_mib=memory_mib,
        capacity_rps=capacity_rps,
        latency_ms=latency_ms,
        startup_s=startup_s,
        log_format=log_format,
        env_from=env_from,
        secret_env=secret_env,
    )


def _mongo(svc: str, pvc: str, volume: str) -> Component:
    name = f"mongodb-{svc}"
    auth = svc in AUTH_DATABASES
    return Component(
        name=name,
        image=MONGO_IMAGE,
        container=f"hotel-reserv-{volume}-mongo",
        args=("--auth",) if auth else (),
        env=(("MONGO_INITDB_DATABASE", f"{svc}-db"),) if auth else (),
        secret_env=(
            (
                ("MONGO_INITDB_ROOT_USERNAME", f"{name}-credentials", "root-username"),
                ("MONGO_INITDB_ROOT_PASSWORD", f"{name}-credentials", "root-password"),
                ("MONGO_APP_USERNAME", f"{name}-credentials", "username"),
                ("MONGO_APP_PASSWORD", f"{name}-credentials", "password"),
            )
            if auth
            else ()
        ),
        role="database",
        container_ports=(("", 27017, "TCP"),),
        service_ports=((name, 27017, 27017, "TCP"),),
        listen_port=27017,
        labels=_label(name),
        cpu_request=_CPU_REQ,
        cpu_limit=_CPU_LIM,
        memory_mib=160.0,
        capacity_rps=3000.0,
        latency_ms=1.5,
        startup_s=4.0,
        volume_claim=pvc,
        data_path="/data/db",
        storage="1Gi",
        log_format="mongodb",
    )


def _memcached(name: str, container: str) -> Component:
    return Component(
        name=name,
        image=MEMCACHED_IMAGE,
        container=container,
        role="cache",
        container_ports=(("", 11211, "TCP"),),
        service_ports=((name, 11211, 11211, "TCP"),),
        listen_port=11211,
        env=(("MEMCACHED_CACHE_SIZE", "128"), ("MEMCACHED_THREADS", "2")),
        labels=_label(name),
        cpu_request=_CPU_REQ,
        cpu_limit=_CPU_LIM,
        memory_mib=12.0,
        capacity_rps=30000.0,
        latency_ms=0.2,
        startup_s=1.0,
        log_format="memcached",
    )


def _mongo_dep(svc: str, env: str) -> Dependency:
    return Dependency(f"mongodb-{svc}", 27017, address_env=env, protocol="mongodb", critical=True)


def _memc_dep(name: str, env: str) -> Dependency:
    # a failing cache degrades to MongoDB reads (the Go client treats errors as misses
    # for GetMulti in most handlers), so it is not critical
    return Dependency(name, 11211, address_env=env, protocol="memcached", critical=False)


def _grpc(name: str, port: int) -> Dependency:
    return Dependency(name, port, address_env=None, protocol="grpc", critical=True)


FRONTEND = _go_service(
    "frontend",
    5000,
    deps=(
        _grpc("search", 8082),
        _grpc("profile", 8081),
        _grpc("recommendation", 8085),
        _grpc("user", 8086),
        _grpc("reservation", 8087),
    ),
    role="frontend",
    log_format="frontend",
    capacity_rps=2500.0,
    latency_ms=1.5,
    memory_mib=30.0,
    startup_s=3.0,
)
SEARCH = _go_service(
    "search",
    8082,
    deps=(_grpc("geo", 8083), _grpc("rate", 8084)),
    capacity_rps=3000.0,
    latency_ms=0.8,
    memory_mib=22.0,
    startup_s=3.0,
)
GEO = _go_service(
    "geo",
    8083,
    env=(("GEO_MONGO_ADDRESS", "mongodb-geo:27017"),),
    deps=(_mongo_dep("geo", "GEO_MONGO_ADDRESS"),),
    capacity_rps=3000.0,
    latency_ms=1.0,
    memory_mib=25.0,
    startup_s=4.0,
)
RATE = _go_service(
    "rate",
    8084,
    env=(("RATE_MONGO_ADDRESS", "mongodb-rate:27017"), ("RATE_MEMC_ADDRESS", "memcached-rate:11211")),
    deps=(_memc_dep("memcached-rate", "RATE_MEMC_ADDRESS"), _mongo_dep("rate", "RATE_MONGO_ADDRESS")),
    **_db_client("rate"),
    capacity_rps=2500.0,
    latency_ms=1.2,
    memory_mib=26.0,
    startup_s=4.0,
)
PROFILE = _go_service(
    "profile",
    8081,
    env=(
        ("PROFILE_MONGO_ADDRESS", "mongodb-profile:27017"),
        ("PROFILE_MEMC_ADDRESS", "memcached-profile:11211"),
    ),
    deps=(
        _memc_dep("memcached-profile", "PROFILE_MEMC_ADDRESS"),
        _mongo_dep("profile", "PROFILE_MONGO_ADDRESS"),
    ),
    **_db_client("profile"),
    capacity_rps=2500.0,
    latency_ms=1.2,
    memory_mib=28.0,
    startup_s=4.0,
)
RECOMMENDATION = _go_service(
    "recommendation",
    8085,
    env=(("RECOMMEND_MONGO_ADDRESS", "mongodb-recommendation:27017"),),
    deps=(_mongo_dep("recommendation", "RECOMMEND_MONGO_ADDRESS"),),
    capacity_rps=3000.0,
    latency_ms=1.0,
    memory_mib=24.0,
    startup_s=4.0,
)
USER = _go_service(
    "user",
    8086,
    env=(("USER_MONGO_ADDRESS", "mongodb-user:27017"),),
    deps=(_mongo_dep("user", "USER_MONGO_ADDRESS"),),
    capacity_rps=3000.0,
    latency_ms=0.8,
    memory_mib=24.0,
    startup_s=4.0,
)
RESERVATION = _go_service(
    "reservation",
    8087,
    env=(
        ("RESERVE_MONGO_ADDRESS", "mongodb-reservation:27017"),
        ("RESERVE_MEMC_ADDRESS", "memcached-reserve:11211"),
    ),
    deps=(
        _memc_dep("memcached-reserve", "RESERVE_MEMC_ADDRESS"),
        _mongo_dep("reservation", "RESERVE_MONGO_ADDRESS"),
    ),
    **_db_client("reservation"),
    capacity_rps=2000.0,
    latency_ms=1.5,
    memory_mib=28.0,
    startup_s=4.0,
)

CONSUL = Component(
    name="consul",
    image=CONSUL_IMAGE,
    container="consul",
    role="infra",
    container_ports=(("", 8300, "TCP"), ("", 8400, "TCP"), ("", 8500, "TCP"), ("", 53, "UDP")),
    service_ports=(
        ("8300", 8300, 8300, "TCP"),
        ("8400", 8400, 8400, "TCP"),
        ("8500", 8500, 8500, "TCP"),
        ("8600", 8600, 53, "UDP"),
    ),
    listen_port=8500,
    labels=_label("consul"),
    cpu_request=_CPU_REQ,
    cpu_limit=_CPU_LIM,
    memory_mib=60.0,
    capacity_rps=5000.0,
    latency_ms=0.5,
    startup_s=5.0,
    log_format="consul",
)

_JAEGER_PORTS = (
    (14269, "TCP"),
    (5778, "TCP"),
    (14268, "TCP"),
    (14267, "TCP"),
    (16686, "TCP"),
    (5775, "UDP"),
    (6831, "UDP"),
    (6832, "UDP"),
)
JAEGER = Component(
    name="jaeger",
    image=JAEGER_IMAGE,
    container="hotel-reserv-jaeger",
    role="infra",
    container_ports=tuple(("", p, proto) for p, proto in _JAEGER_PORTS),
    service_ports=tuple((str(p), p, p, proto) for p, proto in _JAEGER_PORTS),
    listen_port=6831,
    labels=_label("jaeger"),
    cpu_request=_CPU_REQ,
    cpu_limit=_CPU_LIM,
    memory_mib=90.0,
    capacity_rps=20000.0,
    latency_ms=0.1,
    startup_s=3.0,
    log_format="jaeger",
)

COMPONENTS: tuple[Component, ...] = (
    FRONTEND,
    SEARCH,
    GEO,
    RATE,
    PROFILE,
    RECOMMENDATION,
    USER,
    RESERVATION,
    _memcached("memcached-rate", "hotel-reserv-rate-mmc"),
    _memcached("memcached-profile", "hotel-reserv-profile-mmc"),
    _memcached("memcached-reserve", "hotel-reserv-reservation-mmc"),
    _mongo("geo", "geo-pvc", "geo"),
    _mongo("rate", "rate-pvc", "rate"),
    _mongo("profile", "profile-pvc", "profile"),
    _mongo("recommendation", "recommendation-pvc", "recommendation"),
    _mongo("reservation", "reservation-pvc", "reservation"),
    _mongo("user", "user-pvc", "user"),
    CONSUL,
    JAEGER,
)

# Sub-trees shared by several request types.
_PROFILES = (
    Call("frontend", "profile", 1.0, "GetProfiles"),
    Call("profile", "memcached-profile", 1.0, "get_multi"),
    Call("profile", "mongodb-profile", 1.0, "find hotels", miss_ratio=0.1),
)
_CHECK_USER = (Call("frontend", "user", 1.0, "CheckUser"),)

REQUESTS: tuple[RequestType, ...] = (
    RequestType(
        "search_hotels",
        "GET",
        "/hotels",
        0.6,
        (
            Call("frontend", "search", 1.0, "Nearby"),
            Call("search", "geo", 1.0, "Nearby"),
            Call("search", "rate", 1.0, "GetRates"),
            Call("rate", "memcached-rate", 1.0, "get_multi"),
            Call("rate", "mongodb-rate", 2.0, "find inventory", miss_ratio=0.1),
            Call("frontend", "reservation", 1.0, "CheckAvailability"),
            Call("reservation", "memcached-reserve", 2.0, "get_multi"),
            Call("reservation", "mongodb-reservation", 2.0, "find reservation", miss_ratio=0.1),
        )
        + _PROFILES,
        feature="hotel search",
    ),
    RequestType(
        "recommend",
        "GET",
        "/recommendations",
        0.39,
        (Call("frontend", "recommendation", 1.0, "GetRecommendations"),) + _PROFILES,
        feature="hotel recommendations",
    ),
    RequestType("user_login", "POST", "/user", 0.005, _CHECK_USER, feature="login"),
    RequestType(
        "reserve",
        "POST",
        "/reservation",
        0.005,
        _CHECK_USER
        + (
            Call("frontend", "reservation", 1.0, "MakeReservation"),
            Call("reservation", "memcached-reserve", 2.0, "get"),
            Call("reservation", "mongodb-reservation", 2.0, "find reservation", miss_ratio=0.2),
            Call("reservation", "mongodb-reservation", 1.0, "insert reservation"),
            Call("reservation", "memcached-reserve", 1.0, "set"),
        ),
        feature="reservations",
    ),
)

HOTEL_RESERVATION = AppSpec(
    name="hotel-reservation",
    namespace=NAMESPACE,
    components=COMPONENTS,
    requests=REQUESTS,
    entrypoint="frontend",
    entry_port=5000,
    rps=250.0,
    client_timeout_s=10.0,
    edge_ingress=True,
    description=(
        "DeathStarBench hotel reservation: a Go/gRPC frontend and seven services "
        "(search, geo, rate, profile, recommendation, user, reservation) backed by "
        "MongoDB and memcached, with consul for service discovery and jaeger for tracing."
    ),
    config_maps=tuple(
        (f"{svc}-mongo-config", (("MONGO_DATABASE", f"{svc}-db"), ("MONGO_AUTH_SOURCE", "admin"))) for svc in AUTH_DATABASES
    ),
    secrets=tuple(
        (
            f"mongodb-{svc}-credentials",
            (("root-username", "admin"), ("root-password", _CREDENTIALS[svc][0]), ("username", svc), ("password", _CREDENTIALS[svc][1])),
        )
        for svc in AUTH_DATABASES
    ),
    extra_images=(
        # later releases of the Go image (sre_env.sim.kernel.images lists the bugs some of them ship)
        "yinfangchen/hotelreservation:0.9.1",
        "yinfangchen/hotelreservation:0.9.2",
        "yinfangchen/hotelreservation:0.9.3",
        "yinfangchen/hotelreservation:0.9.4",
        "deathstarbench/hotel-reservation:latest",
        "ghcr.io/sregym/hotel-reservation:latest",
        "yinfangchen/geo:app3",
        "mongo:4.4",
        "mongo:5.0",
        "memcached:1.6",
        "memcached:latest",
        "hashicorp/consul:1.15",
        "jaegertracing/all-in-one:latest",
    ),
)
