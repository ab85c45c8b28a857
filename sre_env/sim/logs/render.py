"""Log lines in each component's own format, from template tables.

Pure and deterministic: the line depends only on ``(dialect, event, t, fields,
variant)``; ``t`` is simulated seconds since :data:`sre_env.sim.kernel.clock.EPOCH` and
``variant`` (any int, chosen by the caller from its seeded RNG) picks among
alternative phrasings and incidental values (connection ids, offsets, remote
ports). Unknown events give a generic line, never an exception.

Dialects:

``go-service`` / ``frontend``
    hotel-reservation's zerolog ConsoleWriter (RFC 3339 time, level, caller,
    ``>``, message), e.g. ``2026-03-02T09:00:05Z INF cmd/geo/main.go:23 >
    Reading config...``; the first three start-up lines are zerolog JSON, as
    the real image prints them before the console writer is installed.
``mongodb``
    MongoDB 4.4 structured JSON (``{"t":{"$date":...},"s":"I",  "c":...``,
    with mongod's own padding), one object per line.
``memcached``
    memcached's ``-vv`` text (no timestamps; a default memcached prints
    nothing at start, see :func:`component_startup_lines`).
``consul``
    hclog text: ``2026-03-02T09:00:05.123Z [INFO]  agent: ...``.
``jaeger``
    zap JSON of jaeger all-in-one: ``{"level":"info","ts":1772442005.123,...}``.

:data:`QUIET` lists (dialect, event) pairs the real process only prints at a
raised verbosity (trace/debug); callers that mimic default settings skip them.

The other apps' dialects live in their own modules (:mod:`~sre_env.sim.logs.otel` for the
astronomy shop, :mod:`~sre_env.sim.logs.social`, :mod:`~sre_env.sim.logs.tidb`) and are
listed in :data:`APP_DIALECTS`, imported here, so a component's ``log_format`` resolves
whatever was imported first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache

from sre_env.kube.timefmt import EPOCH, iso
from sre_env.sim.logs import otel, social, tidb

__all__ = ["APP_DIALECTS", "DIALECTS", "EVENTS", "QUIET", "render", "component_startup_lines"]

DIALECTS: frozenset[str] = frozenset({"go-service", "frontend", "mongodb", "memcached", "consul", "jaeger"})

EVENTS: frozenset[str] = frozenset(
    {
        "startup",
        "config",
        "listening",
        "ready",
        "request",
        "dependency_error",
        "missing_env",
        "disk_read_error",
        "checksum_error",
        "fatal_assertion",
        "abort",
        "wt_panic",
        "slow_query",
        "shutdown",
        "connection_accepted",
        "connection_ended",
        "cache_miss",
        "auth_failed",
    }
)

#: (dialect, event) pairs the real process prints only at trace/debug verbosity
#: (or, for go-service shutdown, not at all); render() still returns a line.
QUIET: frozenset[tuple[str, str]] = frozenset(
    {
        ("go-service", "request"),
        ("go-service", "cache_miss"),
        ("go-service", "shutdown"),
        ("frontend", "request"),
        ("frontend", "cache_miss"),
        ("frontend", "shutdown"),
        ("mongodb", "request"),
        ("memcached", "request"),
        ("memcached", "startup"),
        ("memcached", "listening"),
        ("memcached", "connection_accepted"),
        ("memcached", "connection_ended"),
        ("consul", "request"),
        ("jaeger", "request"),
    }
)

_EPOCH_S = EPOCH.timestamp()

# --------------------------------------------------------------------------- helpers


@lru_cache(maxsize=4096)
def _iso_s(sec: int) -> str:
    return iso(sec)


def _split(t: float) -> tuple[int, int]:
    sec = int(t)
    ms = int((t - sec) * 1000.0)
    if ms < 0:
        ms = 0
    elif ms > 999:
        ms = 999
    return sec, ms


def _iso_ms(t: float, suffix: str) -> str:
    """``2026-03-02T09:00:05.123`` + suffix."""
    sec, ms = _split(t)
    return f"{_iso_s(sec)[:-1]}.{ms:03d}{suffix}"


_NEEDS_ESCAPE = frozenset('"\\\n\r\t\b\f')


def _js(value: object) -> str:
    """``value`` as the inside of a JSON string."""
    s = value if isinstance(value, str) else str(value)
    for ch in s:
        if ch in _NEEDS_ESCAPE or ch < " ":
            return json.dumps(s)[1:-1]
    return s


class _Ctx(dict):
    """Fields plus defaults; a missing key formats as ``-`` rather than raising."""

    __slots__ = ()

    def __missing__(self, key: str) -> str:
        return "-"


class _JsCtx(_Ctx):
    """Like :class:`_Ctx` but values are JSON-string-escaped (for JSON dialects)."""

    __slots__ = ()

    def __getitem__(self, key: str) -> str:
        try:
            v = dict.__getitem__(self, key)
        except KeyError:
            return "-"
        if isinstance(v, str):
            return _js(v)
        return v


def _brace(s: str) -> str:
    return s.replace("{", "{{").replace("}", "}}")


def _pick(options: tuple, variant: int):
    return options[variant % len(options)]


def _target_parts(target: object) -> tuple[str, str]:
    s = str(target)
    host, _, port = s.rpartition(":")
    if not host:
        return s, ""
    return host, port


def _go_dial_error(target: str, kind: str, variant: int) -> str:
    """The error text Go's net package produces for a failed dial."""
    host, port = _target_parts(target)
    k = kind.lower()
    if "no such host" in k or "dns" in k:
        return f"dial tcp: lookup {host} on 10.96.0.10:53: no such host"
    if "timeout" in k:
        return f"dial tcp {_fake_ip(host, variant)}:{port}: i/o timeout"
    if "reset" in k:
        return f"read tcp {_pod_ip(variant)}:{40000 + variant % 20000}->{_fake_ip(host, variant)}:{port}: read: connection reset by peer"
    return f"dial tcp {_fake_ip(host, variant)}:{port}: connect: connection refused"


def _fake_ip(host: str, variant: int) -> str:
    h = 0
    for ch in host:
        h = (h * 31 + ord(ch)) & 0xFFFF
    return f"10.96.{(h >> 8) % 250 + 1}.{h % 250 + 1}"


def _pod_ip(variant: int) -> str:
    return f"10.244.{(variant >> 8) % 3}.{(variant % 240) + 10}"


# --------------------------------------------------------------------------- go-service / frontend

# (level, caller, message) templates; fields: service, db_addr, memc_addr, port,
# consul_addr, jaeger_addr, sample_ratio, var, method, path, status, latency_ms, ...
_GO: dict[str, tuple[tuple[str, str, str], ...]] = {
    "startup": (("INF", "cmd/{service}/main.go:23", "Reading config..."),),
    "config": (
        ("INF", "cmd/{service}/main.go:36", "Read database URL: {db_addr}"),
        ("INF", "cmd/{service}/main.go:45", "Read target port: {port}"),
        ("INF", "cmd/{service}/main.go:46", "Read consul address: {consul_addr}"),
        ("INF", "cmd/{service}/main.go:47", "Read jaeger address: {jaeger_addr}"),
    ),
    "listening": (("INF", "cmd/{service}/main.go:79", "Starting server..."),),
    "ready": (("INF", "services/{service}/server.go:110", "Successfully registered in consul"),),
    "request": (
        ("TRC", "services/{service}/server.go:{line}", "{op} {method} {path} status={status} latency={latency_ms}ms"),
    ),
    "missing_env": (
        ("FTL", "cmd/{service}/main.go:31", "Missing required environment variable {var}"),
        ("FTL", "cmd/{service}/main.go:31", "Got error while reading config: env {var} is not set"),
    ),
    "disk_read_error": (("ERR", "services/{service}/server.go:{line}", "read error: {error}"),),
    "fatal_assertion": (("PNC", "services/{service}/server.go:{line}", "{error}"),),
    "slow_query": (("WRN", "services/{service}/server.go:{line}", "slow query on {db_addr}: {latency_ms}ms"),),
    "shutdown": (("INF", "cmd/{service}/main.go:80", "Shutting down"),),
    "connection_accepted": (("DBG", "services/{service}/server.go:{line}", "accepted connection from {remote}"),),
    "connection_ended": (("DBG", "services/{service}/server.go:{line}", "connection from {remote} closed"),),
    "cache_miss": (
        ("TRC", "services/{service}/server.go:{line}", "memc miss, hotelId = {hotel_id}"),
        ("TRC", "services/{service}/server.go:{line}", "memcached miss, set up mongo connection"),
    ),
}

_FRONTEND_OVERRIDES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "startup": (("INF", "cmd/frontend/main.go:23", "Reading config..."),),
    "config": (
        ("INF", "cmd/frontend/main.go:38", "Read target port: {port}"),
        ("INF", "cmd/frontend/main.go:39", "Read consul address: {consul_addr}"),
        ("INF", "cmd/frontend/main.go:40", "Read jaeger address: {jaeger_addr}"),
    ),
    "listening": (("INF", "services/frontend/server.go:48", "Initializing gRPC clients..."),),
    "ready": (("INF", "services/frontend/server.go:100", "Serving http"),),
    "missing_env": (
        ("FTL", "cmd/frontend/main.go:31", "Missing required environment variable {var}"),
        ("FTL", "cmd/frontend/main.go:31", "Got error while reading config: env {var} is not set"),
    ),
    "shutdown": (("INF", "cmd/frontend/main.go:72", "Shutting down"),),
}

# real handler messages of services/frontend/server.go, by path
_FRONTEND_OK = {
    "/hotels": ("TRC", "services/frontend/server.go:139", "starts searchHandler"),
    "/recommendations": ("TRC", "services/frontend/server.go:214", "starts recommendHandler"),
    "/user": ("TRC", "services/frontend/server.go:262", "starts userHandler"),
    "/reservation": ("TRC", "services/frontend/server.go:294", "starts reservationHandler"),
}
_FRONTEND_FAIL = {
    "/hotels": (
        ("ERR", "services/frontend/server.go:183", "SearchHandler CheckAvailability failed"),
        ("ERR", "services/frontend/server.go:199", "SearchHandler GetProfiles failed"),
        ("ERR", "services/frontend/server.go:166", "SearchHandler Nearby failed: {grpc_error}"),
    ),
    "/recommendations": (("ERR", "services/frontend/server.go:236", "recommendHandler GetRecommendations failed: {grpc_error}"),),
    "/user": (("ERR", "services/frontend/server.go:275", "userHandler CheckUser failed: {grpc_error}"),),
    "/reservation": (("ERR", "services/frontend/server.go:340", "reservationHandler MakeReservation failed: {grpc_error}"),),
}

_GO_DEFAULTS = {
    "service": "geo",
    "consul_addr": "consul:8500",
    "jaeger_addr": "jaeger:6831",
    "sample_ratio": 1.0,
    "line": 0,
    "op": "handled",
    "method": "GET",
    "path": "/",
    "status": 200,
    "latency_ms": 1,
    "hotel_id": "1",
    "remote": "10.244.0.12:41234",
    "error": "input/output error",
    "target": "mongodb-geo:27017",
}


def _go_ctx(fields: Mapping[str, object], variant: int, service: str | None = None) -> _Ctx:
    ctx = _Ctx(_GO_DEFAULTS)
    ctx.update(fields)
    if service is not None:
        ctx["service"] = service
    svc = ctx["service"]
    if "db_addr" not in ctx:
        ctx["db_addr"] = f"mongodb-{svc}:27017"
    if "memc_addr" not in ctx:
        ctx["memc_addr"] = f"memcached-{svc}:11211"
    if "port" not in ctx:
        ctx["port"] = _GO_PORTS.get(svc, 8080)  # type: ignore[arg-type]
    if not ctx["line"]:
        ctx["line"] = 60 + variant % 140
    lat = ctx["latency_ms"]
    if isinstance(lat, float):
        ctx["latency_ms"] = f"{lat:.2f}"
    return ctx


_GO_PORTS = {
    "frontend": 5000,
    "profile": 8081,
    "search": 8082,
    "geo": 8083,
    "rate": 8084,
    "recommendation": 8085,
    "user": 8086,
    "reservation": 8087,
}


_NETWORK_MARKERS = ("dial", "refused", "timeout", "no such host", "reset", "server error", "unreachable", "eof", "no route", "input/output")


def _is_server_reply(kind: str) -> bool:
    """An error the server sent back over a working connection (not a network or I/O failure)."""
    k = kind.lower()
    return bool(k) and not any(m in k for m in _NETWORK_MARKERS)


def _go_dependency_error(ctx: _Ctx, variant: int) -> tuple[str, str, str]:
    target = str(ctx["target"])
    kind = str(ctx.get("error", "connection refused"))
    host, port = _target_parts(target)
    svc = ctx["service"]
    dial = str(ctx["dial"]) if ctx.get("dial") else _go_dial_error(target, kind, variant)
    if _is_server_reply(kind):
        # the connection worked; the server answered with an error (auth, a bug in its code)
        if port == "27017" or host.startswith("mongodb"):
            if ctx.get("phase") == "request":
                return ("ERR", f"services/{svc}/server.go:{ctx['line']}", f"Tried to find hotelId [{variant % 80 + 1}], but got error: {kind}")
            return ("PNC", f"cmd/{svc}/db.go:26", kind)
        return ("ERR", f"services/{svc}/server.go:{ctx['line']}", f"rpc error: code = Unknown desc = {kind}")
    if port == "27017" or host.startswith("mongodb"):
        if ctx.get("phase") == "request":
            # a query on an established session: mgo surfaces the socket error
            err = "EOF" if "server error" in kind else dial
            return ("ERR", f"services/{svc}/server.go:{ctx['line']}", f"Tried to find hotelId [{variant % 80 + 1}], but got error: {err}")
        # mgo gives the same text whatever went wrong underneath
        return ("PNC", f"cmd/{svc}/db.go:26", "no reachable servers")
    if port == "11211" or host.startswith("memcached"):
        return (
            "PNC",
            f"services/{svc}/server.go:{ctx['line']}",
            f"Memmcached error while trying to get hotel [id: [{variant % 80 + 1}]]= {dial}",
        )
    if port == "8500" or host == "consul":
        return ("FTL", f"cmd/{svc}/main.go:80", f'failed register: Put "http://{target}/v1/agent/service/register": {dial}')
    if port == "6831" or host == "jaeger":
        return ("ERR", "jaeger-client-go/reporter.go:134", f"error reporting Jaeger span: {dial}")
    if "timeout" in kind.lower():
        msg = "rpc error: code = DeadlineExceeded desc = context deadline exceeded"
    else:
        msg = f'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing {dial}"'
    return ("ERR", f"services/{svc}/server.go:{ctx['line']}", msg)


def _go_render(dialect: str, event: str, t: float, fields: Mapping[str, object], variant: int) -> str:
    ctx = _go_ctx(fields, variant, "frontend" if dialect == "frontend" else None)
    ts = _iso_s(int(t))
    if event == "dependency_error":
        lvl, caller, msg = _go_dependency_error(ctx, variant)
        return f"{ts} {lvl} {caller} > {msg}"
    if dialect == "frontend" and event == "request":
        path = str(ctx["path"]).split("?", 1)[0]
        status = ctx["status"]
        try:
            failed = int(status) >= 500  # type: ignore[call-overload]
        except (TypeError, ValueError):
            failed = False
        if failed:
            if "grpc_error" not in ctx:
                ctx["grpc_error"] = _go_dependency_error(
                    _Ctx(ctx, target=ctx.get("upstream", "search:8082"), error=ctx.get("error_kind", "connection refused")),
                    variant,
                )[2]
            opts = _FRONTEND_FAIL.get(path)
            if opts:
                lvl, caller, tmpl = _pick(opts, variant)
                return f"{ts} {lvl} {caller} > {tmpl.format_map(ctx)}"
        else:
            spec = _FRONTEND_OK.get(path)
            if spec:
                return f"{ts} {spec[0]} {spec[1]} > {spec[2]}"
    table = _FRONTEND_OVERRIDES if dialect == "frontend" else None
    opts = (table.get(event) if table else None) or _GO.get(event)
    if opts is None:
        return f"{ts} INF {_generic_caller(ctx)} > {event} {_kv(fields)}".rstrip()
    lvl, caller, tmpl = _pick(opts, variant)
    return f"{ts} {lvl} {caller.format_map(ctx)} > {tmpl.format_map(ctx)}"


def _generic_caller(ctx: _Ctx) -> str:
    return f"services/{ctx['service']}/server.go:{ctx['line']}"


def _kv(fields: Mapping[str, object]) -> str:
    return " ".join(f"{k}={v}" for k, v in fields.items())


def _go_startup(dialect: str, t: float, fields: Mapping[str, object], variant: int) -> list[str]:
    ctx = _go_ctx(fields, variant, "frontend" if dialect == "frontend" else None)
    svc = str(ctx["service"])
    ts = _iso_s(int(t))
    ratio = ctx["sample_ratio"]
    try:
        ratio_s = f"{min(float(ratio), 1.0):f}"  # type: ignore[arg-type]
    except (TypeError, ValueError):
        ratio_s = "0.000000"
    js = f'{{"level":"info","time":"{ts}","message":'
    out = [js + '"TLS disabled."}', js + '"Set global log level: info"}', js + '"Tune: setGCPercent to 100"}']
    m = f"cmd/{svc}/main.go"
    lines: list[tuple[str, str]] = [(f"{m}:23", "Reading config...")]
    has_db = svc not in ("frontend", "search") and bool(fields.get("db_addr", True))
    has_memc = "memc_addr" in fields or svc in ("rate", "profile", "reservation")
    if has_db:
        lines += [
            (f"{m}:36", f"Read database URL: {ctx['db_addr']}"),
            (f"{m}:37", "Initializing DB connection..."),
            (f"cmd/{svc}/db.go:29", "New session successfull..."),
            (f"cmd/{svc}/db.go:31", "Generating test data..."),
            (f"{m}:40", "Successfull"),
        ]
    off = 0
    if has_memc:
        lines += [
            (f"{m}:43", f"Read memcashed address: {ctx['memc_addr']}"),
            (f"{m}:44", "Initializing Memcashed client..."),
            (f"{m}:47", "Successfull"),
        ]
        off = 6
    lines += [
        (f"{m}:{45 + off}", f"Read target port: {ctx['port']}"),
        (f"{m}:{46 + off}", f"Read consul address: {ctx['consul_addr']}"),
        (f"{m}:{47 + off}", f"Read jaeger address: {ctx['jaeger_addr']}"),
        (f"{m}:{55 + off}", "Initializing jaeger agent..."),
        ("tracing/tracer.go:26", f"Jaeger client: adjusted sample ratio {ratio_s}"),
        (f"{m}:{61 + off}", "Jaeger agent initialized"),
        (f"{m}:{63 + off}", "Initializing consul agent..."),
        (f"{m}:{68 + off}", "Consul agent initialized"),
        (f"{m}:{79 + off}", "Starting server..."),
    ]
    if svc == "frontend":
        lines += [
            ("services/frontend/server.go:48", "Initializing gRPC clients..."),
            ("services/frontend/server.go:73", "Successfull"),
            ("services/frontend/server.go:100", "Serving http"),
        ]
    else:
        lines += [
            ("registry/registry.go:91", "Trying to register service"),
            (f"services/{svc}/server.go:110", "Successfully registered in consul"),
        ]
    out.extend(f"{ts} INF {c} > {msg}" for c, msg in lines)
    return out


# --------------------------------------------------------------------------- mongodb

# (severity, component, id, ctx, msg, attr-template or "") ; attr templates are JSON
# with {placeholders} filled from JSON-escaped fields.
_MONGO: dict[str, tuple[tuple[str, str, int, str, str, str], ...]] = {
    "startup": (
        ("I", "STORAGE", 4615611, "initandlisten", "MongoDB starting",
         '{{"pid":1,"port":{port},"dbPath":"{db_path}","architecture":"64-bit","host":"{host}"}}'),
    ),
    "config": (
        ("I", "CONTROL", 21951, "initandlisten", "Options set by command line",
         '{{"options":{{"net":{{"bindIp":"*"}}}}}}'),
        ("I", "STORAGE", 22315, "initandlisten", "Opening WiredTiger",
         '{{"config":"create,cache_size=256M,session_max=33000,eviction=(threads_min=4,threads_max=4),'
         'config_base=false,statistics=(fast),log=(enabled=true,archive=true,path=journal,compressor=snappy),'
         'file_manager=(close_idle_time=100000,close_scan_interval=10,close_handle_minimum=250),'
         'statistics_log=(wait=0),verbose=[recovery_progress,checkpoint_progress,compact_progress],"}}'),
    ),
    "listening": (
        ("I", "NETWORK", 23015, "listener", "Listening on", '{{"address":"0.0.0.0"}}'),
        ("I", "NETWORK", 23015, "listener", "Listening on", '{{"address":"/tmp/mongodb-{port}.sock"}}'),
    ),
    "ready": (("I", "NETWORK", 23016, "listener", "Waiting for connections", '{{"port":{port},"ssl":"off"}}'),),
    "request": (
        ("D1", "COMMAND", 21965, "conn{conn}", "About to run the command",
         '{{"db":"{db}","commandArgs":{{"{op}":"{coll}","$db":"{db}"}}}}'),
    ),
    "auth_failed": (
        ("I", "ACCESS", 20249, "conn{conn}", "Authentication failed",
         '{{"mechanism":"SCRAM-SHA-256","speculative":false,"principalName":"{user}","authenticationDatabase":"{auth_db}",'
         '"remote":"{remote}","extraInfo":{{}},"error":"{error}"}}'),
    ),
    "dependency_error": (
        ("W", "NETWORK", 4615610, "conn{conn}", "Failed to check socket connectivity",
         '{{"error":{{"code":6,"codeName":"HostUnreachable","errmsg":"{target}: {error}"}}}}'),
    ),
    "missing_env": (
        ("E", "CONTROL", 20557, "initandlisten", "DBException in initAndListen, terminating",
         '{{"error":"BadValue: missing required setting {var}"}}'),
    ),
    "disk_read_error": (
        ("E", "STORAGE", 22435, "conn{conn}", "WiredTiger error",
         '{{"error":5,"message":"[{wt_ts}][1:0x7f{thread}], file:{file}, WT_CURSOR.search: __posix_file_read, 431: '
         '{db_path}/{file}: handle-read: pread: failed to read 4096 bytes at offset {offset}: Input/output error"}}'),
        ("E", "STORAGE", 22435, "conn{conn}", "WiredTiger error",
         '{{"error":5,"message":"[{wt_ts}][1:0x7f{thread}], file:{file}, WT_CURSOR.next: __wt_block_read_off, 283: '
         '{file}: read error: failed to read 4096 bytes at offset {offset}: Input/output error"}}'),
    ),
    "checksum_error": (
        ("E", "STORAGE", 22435, "conn{conn}", "WiredTiger error",
         '{{"error":-31802,"message":"[{wt_ts}][1:0x7f{thread}], file:{file}, WT_CURSOR.search: __wt_block_read_off, 226: '
         '{file}: read checksum error for 4096B block at offset {offset}: block header checksum of 0x{got} doesn\'t match expected checksum of 0x{want}"}}'),
    ),
    "wt_panic": (
        ("E", "STORAGE", 22435, "conn{conn}", "WiredTiger error",
         '{{"error":-31804,"message":"[{wt_ts}][1:0x7f{thread}], file:{file}, WT_CURSOR.search: __wt_block_read_off, 283: '
         'the process must exit and restart: WT_PANIC: WiredTiger library panic"}}'),
    ),
    "fatal_assertion": (
        ("F", "-", 23089, "conn{conn}", "Fatal assertion",
         '{{"msgid":50853,"file":"src/mongo/db/storage/wiredtiger/wiredtiger_util.cpp","line":521}}'),
    ),
    "abort": (("F", "-", 23090, "conn{conn}", "\\n\\n***aborting after fassert() failure\\n\\n", ""),),
    "slow_query": (
        ("I", "COMMAND", 51803, "conn{conn}", "Slow query",
         '{{"type":"command","ns":"{db}.{coll}","command":{{"find":"{coll}","filter":{{"hotelId":"{hotel_id}"}},'
         '"lsid":{{"id":{{"$uuid":"{uuid}"}}}},"$db":"{db}"}},"planSummary":"COLLSCAN","keysExamined":0,'
         '"docsExamined":{docs},"cursorExhausted":true,"numYields":{yields},"nreturned":1,"reslen":{reslen},'
         '"locks":{{"ReplicationStateTransition":{{"acquireCount":{{"w":1}}}},"Global":{{"acquireCount":{{"r":1}}}},'
         '"Database":{{"acquireCount":{{"r":1}}}},"Collection":{{"acquireCount":{{"r":1}}}},"Mutex":{{"acquireCount":{{"r":1}}}}}},'
         '"storage":{{}},"protocol":"op_msg","durationMillis":{duration}}}'),
    ),
    "shutdown": (
        ("I", "CONTROL", 23377, "SignalHandler", "Received signal", '{{"signal":15,"error":"Terminated"}}'),
    ),
    "connection_accepted": (
        ("I", "NETWORK", 22943, "listener", "Connection accepted",
         '{{"remote":"{remote}","connectionId":{conn},"connectionCount":{count}}}'),
    ),
    "connection_ended": (
        ("I", "NETWORK", 22944, "conn{conn}", "Connection ended",
         '{{"remote":"{remote}","connectionId":{conn},"connectionCount":{count}}}'),
    ),
}

_MONGO_DEFAULTS = {
    "port": 27017,
    "db_path": "/data/db",
    "host": "mongodb",
    "db": "geo-db",
    "coll": "geo",
    "op": "find",
    "target": "mongodb:27017",
    "error": "Connection refused",
    "var": "-",
    "hotel_id": "1",
}


def _pad(prefix: str, width: int) -> str:
    n = width - len(prefix)
    return prefix + " " * n if n > 0 else prefix + " "


@lru_cache(maxsize=512)
def _mongo_head(sev: str, comp: str, mid: int) -> str:
    return _pad(f'"s":"{sev}",', 10) + _pad(f'"c":"{comp}",', 16) + _pad(f'"id":{mid},', 14)


def _uuid(v: int) -> str:
    return f"{v * 2654435761 & 0xFFFFFFFF:08x}-5f1c-4e2a-9b7d-{v * 40503 & 0xFFFFFFFFFFFF:012x}"


# incidental values derived from (variant, t) only when a template asks for them
_MONGO_DERIVED = {
    "conn": lambda v, t: 1 + v % 97,
    "count": lambda v, t: 1 + (v >> 3) % 23,
    "remote": lambda v, t: f"{_pod_ip(v)}:{32768 + (v * 7919) % 28000}",
    "thread": lambda v, t: f"{(0x1a2b3c4d5e + v * 0x1f3d) & 0xFFFFFFFFFF:010x}",
    "file": lambda v, t: f"collection-{2 * (v % 9)}-{4168324323017494102 + (v % 1000) * 7919}.wt",
    "offset": lambda v, t: 4096 * (3 + v % 4093),
    "duration": lambda v, t: 100 + v % 900,
    "docs": lambda v, t: 80 + v % 400,
    "yields": lambda v, t: v % 3,
    "reslen": lambda v, t: 230 + v % 300,
    "uuid": lambda v, t: _uuid(v),
    "wt_ts": lambda v, t: f"{int(_EPOCH_S) + _split(t)[0]}:{_split(t)[1] * 1000 + v % 1000}",
}


class _MongoCtx(dict):
    """Fields over defaults; derived incidental values computed on first use, JSON-escaped."""

    __slots__ = ("v", "t")

    def __getitem__(self, key: str):
        try:
            val = dict.__getitem__(self, key)
        except KeyError:
            fn = _MONGO_DERIVED.get(key)
            if fn is None:
                val = _MONGO_DEFAULTS.get(key, "-")
            else:
                val = fn(self.v, self.t)
            self[key] = val
        if isinstance(val, str):
            return _js(val)
        return val


def _mongo_ctx(t: float, fields: Mapping[str, object], variant: int) -> _MongoCtx:
    ctx = _MongoCtx(fields)
    ctx.v = variant & 0x7FFFFFFF
    ctx.t = t
    if "duration" not in fields and "latency_ms" in fields:
        try:
            ctx["duration"] = int(float(fields["latency_ms"]))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            pass
    if "connection_id" in fields:
        ctx["conn"] = fields["connection_id"]
    return ctx


def _mongo_line(t: float, spec: tuple[str, str, int, str, str, str], ctx: _MongoCtx) -> str:
    sev, comp, mid, cctx, msg, attr = spec
    head = f'{{"t":{{"$date":"{_iso_ms(t, "+00:00")}"}},' + _mongo_head(sev, comp, mid)
    body = f'"ctx":"{cctx.format_map(ctx)}","msg":"{msg}"'
    if attr:
        return f"{head}{body},\"attr\":{attr.format_map(ctx)}}}"
    return f"{head}{body}}}"


def _mongo_render(event: str, t: float, fields: Mapping[str, object], variant: int) -> str:
    ctx = _mongo_ctx(t, fields, variant)
    opts = _MONGO.get(event)
    if opts is None:
        spec = ("I", "-", 20000, "conn{conn}", _js(event), '{{"fields":"' + _brace(_js(_kv(fields))) + '"}}')
        return _mongo_line(t, spec, ctx)
    return _mongo_line(t, _pick(opts, variant), ctx)


_MONGO_STARTUP = (
    ("I", "CONTROL", 23285, "main", "Automatically disabling TLS 1.0, to force-enable TLS 1.0 specify --sslDisabledProtocols 'none'", ""),
    ("W", "ASIO", 22601, "main", "No TransportLayer configured during NetworkInterface startup", ""),
    ("I", "NETWORK", 4648601, "main", "Implicit TCP FastOpen unavailable. If TCP FastOpen is required, set tcpFastOpenServer, tcpFastOpenClient, and tcpFastOpenQueueSize.", ""),
    _MONGO["startup"][0],
    ("I", "CONTROL", 23403, "initandlisten", "Build Info",
     '{{"buildInfo":{{"version":"4.4.6","openSSLVersion":"OpenSSL 1.1.1  11 Sep 2018","modules":[],"allocator":"tcmalloc",'
     '"environment":{{"distmod":"ubuntu1804","distarch":"x86_64","target_arch":"x86_64"}}}}}}'),
    ("I", "CONTROL", 51765, "initandlisten", "Operating System", '{{"os":{{"name":"Ubuntu","version":"18.04"}}}}'),
    _MONGO["config"][0],
    _MONGO["config"][1],
    ("I", "STORAGE", 22430, "initandlisten", "WiredTiger message",
     '{{"message":"[{wt_ts}][1:0x7f{thread}], txn-recover: Set global recovery timestamp: (0, 0)"}}'),
    ("W", "CONTROL", 22120, "initandlisten", "Access control is not enabled for the database. Read and write access to data and configuration is unrestricted", '{{"tags":["startupWarnings"]}}'),
    ("I", "STORAGE", 20320, "initandlisten", "createCollection",
     '{{"namespace":"admin.system.version","uuidDisposition":"provided","uuid":{{"uuid":{{"$uuid":"{uuid}"}}}},"options":{{"uuid":{{"$uuid":"{uuid}"}}}}}}'),
    ("I", "FTDC", 20625, "initandlisten", "Initializing full-time diagnostic data capture", '{{"dataDirectory":"{db_path}/diagnostic.data"}}'),
    _MONGO["listening"][1],
    _MONGO["listening"][0],
    _MONGO["ready"][0],
)


# --------------------------------------------------------------------------- memcached (-vv text)

_MEMCACHED: dict[str, tuple[str, ...]] = {
    "startup": ("slab class   1: chunk size        96 perslab   10922",),
    "config": ("slab class   2: chunk size       120 perslab    8738", "slab class   3: chunk size       152 perslab    6898"),
    "listening": ("<26 server listening (auto-negotiate)", "<27 server listening (udp)"),
    "ready": ("<26 server listening (auto-negotiate)",),
    "request": ("<{fd} get {key}", ">{fd} sending key {key}", ">{fd} END", "<{fd} set {key} 0 0 {size}", ">{fd} STORED"),
    "cache_miss": (">{fd} END",),
    "connection_accepted": ("<{fd} new auto-negotiating client connection",),
    "connection_ended": ("<{fd} connection closed.",),
    "shutdown": ("Signal handled: Terminated.",),
    "missing_env": ("failed to parse {var}: expected a number",),
    "dependency_error": ("Failed to connect to {target}: {error}",),
}


def _mem_render(event: str, t: float, fields: Mapping[str, object], variant: int) -> str:
    opts = _MEMCACHED.get(event)
    v = variant & 0x7FFFFFFF
    ctx = _Ctx(fd=28 + v % 64, key=f"{1 + v % 80}", size=120 + v % 600, target="-", error="-", var="-")
    ctx.update(fields)
    if opts is None:
        return f"<{ctx['fd']} {event} {_kv(fields)}".rstrip()
    return _pick(opts, variant).format_map(ctx)


# --------------------------------------------------------------------------- consul (hclog)

_CONSUL: dict[str, tuple[tuple[str, str], ...]] = {
    "startup": (("INFO", "agent: Starting Consul agent..."),),
    "config": (("INFO", "agent.server.raft: initial configuration: index=1 servers=\"[{{Suffrage:Voter ID:{node_id} Address:127.0.0.1:8300}}]\""),),
    "listening": (("INFO", "agent: Started HTTP server: address=[::]:{port} network=tcp"),),
    "ready": (("INFO", "agent: Consul agent running!"), ("INFO", "agent: Synced node info")),
    "request": (("DEBUG", "agent.http: Request finished: method={method} url={path} from={remote} latency={latency_us}µs"),),
    "dependency_error": (("ERROR", "agent: Coordinate update error: error=\"{target}: {error}\""),),
    "missing_env": (("ERROR", "agent: Error parsing configuration: missing required setting {var}"),),
    "shutdown": (("INFO", "agent: Caught: signal=terminated"), ("INFO", "agent: Graceful shutdown disabled. Exiting")),
    "connection_accepted": (("DEBUG", "agent.http: Request finished: method=PUT url=/v1/agent/service/register from={remote} latency={latency_us}µs"),),
    "connection_ended": (("INFO", "agent: Deregistered service: service={service}"),),
}

_CONSUL_DEFAULTS = {"port": 8500, "method": "GET", "path": "/v1/health/service/srv-rate?passing=1", "target": "-", "error": "-", "var": "-", "service": "srv-geo"}


def _consul_ts(t: float) -> str:
    return _iso_ms(t, "Z")


def _consul_render(event: str, t: float, fields: Mapping[str, object], variant: int) -> str:
    v = variant & 0x7FFFFFFF
    ctx = _Ctx(_CONSUL_DEFAULTS)
    ctx["remote"] = f"{_pod_ip(v)}:{32768 + (v * 7919) % 28000}"
    ctx["latency_us"] = f"{60 + v % 400}.{v % 10}"
    ctx["node_id"] = f"{v * 2654435761 & 0xFFFFFFFF:08x}-1c2d-3e4f-5a6b-7c8d9e0f1a2b"
    ctx.update(fields)
    if "latency_ms" in fields:
        try:
            ctx["latency_us"] = f"{float(fields['latency_ms']) * 1000:.1f}"  # type: ignore[arg-type]
        except (TypeError, ValueError):
            pass
    opts = _CONSUL.get(event)
    if opts is None:
        lvl, msg = "INFO", f"agent: {event} {_kv(fields)}".rstrip()
    else:
        lvl, tmpl = _pick(opts, variant)
        msg = tmpl.format_map(ctx)
    return f"{_consul_ts(t)} [{lvl}]{' ' * (6 - len(lvl))}{msg}"


_CONSUL_STARTUP = (
    "==> Starting Consul agent...",
    "               Version: '1.19.1'",
    "            Build Date: '2024-07-11 14:49:14 +0000 UTC'",
    "               Node ID: '{node_id}'",
    "             Node name: '{host}'",
    "            Datacenter: 'dc1' (Segment: '<all>')",
    "                Server: true (Bootstrap: false)",
    "           Client Addr: [0.0.0.0] (HTTP: 8500, HTTPS: -1, gRPC: 8502, gRPC-TLS: 8503, DNS: 8600)",
    "          Cluster Addr: 127.0.0.1 (LAN: 8301, WAN: 8302)",
    "     Gossip Encryption: false",
    "      Auto-Encrypt-TLS: false",
    "           ACL Enabled: false",
    "    ACL Default Policy: allow",
    "             HTTPS TLS: Verify Incoming: false, Verify Outgoing: false, Min Version: TLSv1_2",
    "              gRPC TLS: Verify Incoming: false, Min Version: TLSv1_2",
    "      Internal RPC TLS: Verify Incoming: false, Verify Outgoing: false (Verify Hostname: false), Min Version: TLSv1_2",
    "",
    "==> Log data will now stream in as it occurs:",
)
_CONSUL_STARTUP_LOG = (
    ("INFO", "agent.server.raft: initial configuration: index=1 servers=\"[{{Suffrage:Voter ID:{node_id} Address:127.0.0.1:8300}}]\""),
    ("INFO", "agent.server.raft: entering follower state: follower=\"Node at 127.0.0.1:8300 [Follower]\" leader-address= leader-id="),
    ("INFO", "agent.server.serf.wan: serf: EventMemberJoin: {host}.dc1 127.0.0.1"),
    ("INFO", "agent.server.serf.lan: serf: EventMemberJoin: {host} 127.0.0.1"),
    ("INFO", "agent: Started DNS server: address=0.0.0.0:8600 network=udp"),
    ("INFO", "agent: Started HTTP server: address=[::]:8500 network=tcp"),
    ("INFO", "agent: started state syncer"),
    ("INFO", "agent: Consul agent running!"),
    ("WARN", "agent.server.raft: heartbeat timeout reached, starting election: last-leader-addr= last-leader-id="),
    ("INFO", "agent.server.raft: entering candidate state: node=\"Node at 127.0.0.1:8300 [Candidate]\" term=2"),
    ("INFO", "agent.server.raft: election won: term=2 tally=1"),
    ("INFO", "agent.server.raft: entering leader state: leader=\"Node at 127.0.0.1:8300 [Leader]\""),
    ("INFO", "agent.server: cluster leadership acquired"),
    ("INFO", "agent.server: New leader elected: payload={host}"),
    ("INFO", "agent: Synced node info"),
)


# --------------------------------------------------------------------------- jaeger (zap JSON)

_JAEGER: dict[str, tuple[tuple[str, str, str, str], ...]] = {
    # (level, caller, msg, extra JSON members or "")
    "startup": (("info", "flags/service.go:110", "Mounting metrics handler on admin server", '"route":"/metrics"'),),
    "config": (("info", "flags/admin.go:130", "Mounting health check on admin server", '"route":"/"'),),
    "listening": (
        ("info", "app/server.go:289", "Starting HTTP server", '"port":16686,"addr":":16686"'),
        ("info", "server/http.go:48", "Starting jaeger-collector HTTP server", '"http host-port":":14268"'),
    ),
    "ready": (("info", "healthcheck/handler.go:129", "Health Check state change", '"status":"ready"'),),
    "request": (("debug", "processors/thrift_processor.go:122", "Span batch processed", '"service":"{service}","spans":{spans}'),),
    "dependency_error": (("error", "app/agent.go:68", "Failed to connect", '"target":"{target}","error":"{error}"'),),
    "missing_env": (("fatal", "all-in-one/main.go:111", "Failed to init storage factory", '"error":"unknown storage type {var}"'),),
    "shutdown": (
        ("info", "flags/service.go:142", "Shutting down", ""),
        ("info", "healthcheck/handler.go:129", "Health Check state change", '"status":"unavailable"'),
    ),
}


def _zap_ts(t: float, variant: int) -> str:
    us = int(round(t * 1_000_000))
    return f"{int(_EPOCH_S) + us // 1_000_000}.{us % 1_000_000:06d}{variant % 10}"


def _jaeger_render(event: str, t: float, fields: Mapping[str, object], variant: int) -> str:
    ctx = _JsCtx(service="frontend", spans=1 + variant % 20, target="-", error="-", var="-")
    ctx.update(fields)
    ts = _zap_ts(t, variant)
    opts = _JAEGER.get(event)
    if opts is None:
        spec = ("info", "app/server.go:300", _js(event), '"fields":"' + _brace(_js(_kv(fields))) + '"')
    else:
        spec = _pick(opts, variant)
    lvl, caller, msg, extra = spec
    extra_s = "," + extra.format_map(ctx) if extra else ""
    return f'{{"level":"{lvl}","ts":{ts},"caller":"{caller}","msg":"{msg}"{extra_s}}}'


_JAEGER_STARTUP = (
    _JAEGER["startup"][0],
    ("info", "flags/service.go:116", "Mounting expvar handler on admin server", '"route":"/debug/vars"'),
    ("info", "flags/admin.go:130", "Mounting health check on admin server", '"route":"/"'),
    ("info", "flags/admin.go:144", "Starting admin HTTP server", '"http-addr":":14269"'),
    ("info", "flags/admin.go:122", "Admin server started", '"http.host-port":"[::]:14269","health-status":"unavailable"'),
    ("info", "memory/factory.go:85", "Memory storage initialized", '"configuration":{"MaxTraces":0}'),
    ("info", "server/grpc.go:104", "Starting jaeger-collector gRPC server", '"grpc.host-port":"[::]:14250"'),
    ("info", "server/http.go:48", "Starting jaeger-collector HTTP server", '"http host-port":":14268"'),
    ("info", "app/agent.go:69", "Starting jaeger-agent HTTP server", '"http-port":5778'),
    ("info", "app/server.go:215", "Query server started", '"http_addr":"[::]:16686","grpc_addr":"[::]:16685"'),
    ("info", "healthcheck/handler.go:129", "Health Check state change", '"status":"ready"'),
    ("info", "app/server.go:289", "Starting HTTP server", '"port":16686,"addr":":16686"'),
)


# --------------------------------------------------------------------------- public API


#: the dialects of the other apps, one module each: name -> (render, start-up lines), with the
#: signatures of :func:`render` and :func:`component_startup_lines` minus the dialect argument
APP_DIALECTS: dict[str, tuple] = {**otel.DIALECTS, **social.DIALECTS, **tidb.DIALECTS}


def render(dialect: str, event: str, t: float, fields: Mapping[str, object], variant: int) -> str:
    """One log line of ``dialect`` for ``event`` at simulated second ``t``."""
    plugin = APP_DIALECTS.get(dialect)
    if plugin is not None:
        try:
            return plugin[0](event, t, fields, variant).replace("\r", "\\r").replace("\n", "\\n")
        except (ValueError, TypeError, KeyError, IndexError, AttributeError):
            return f"{_iso_s(int(t))} {dialect} {event} {_kv(fields)}".rstrip()
    try:
        if dialect == "go-service" or dialect == "frontend":
            line = _go_render(dialect, event, t, fields, variant)
        elif dialect == "mongodb":
            return _mongo_render(event, t, fields, variant)
        elif dialect == "memcached":
            line = _mem_render(event, t, fields, variant)
        elif dialect == "consul":
            line = _consul_render(event, t, fields, variant)
        elif dialect == "jaeger":
            return _jaeger_render(event, t, fields, variant)
        else:
            line = f"{_iso_s(int(t))} {event} {_kv(fields)}".rstrip()
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        # a field of an unexpected type or shape: fall back to a plain line
        if dialect == "mongodb" or dialect == "jaeger":
            return json.dumps({"t": {"$date": _iso_ms(t, "+00:00")}, "msg": event, "attr": {k: str(v) for k, v in fields.items()}})
        line = f"{_iso_s(int(t))} {dialect} {event} {_kv(fields)}".rstrip()
    if "\n" in line or "\r" in line:
        line = line.replace("\r", "\\r").replace("\n", "\\n")
    return line


def component_startup_lines(dialect: str, t: float, fields: Mapping[str, object], variant: int) -> list[str]:
    """The lines a freshly started container of this dialect prints (all at ``t``).

    A default memcached prints nothing, so its list is empty unless
    ``fields["verbose"]`` is true.
    """
    plugin = APP_DIALECTS.get(dialect)
    if plugin is not None and plugin[1] is not None:
        return list(plugin[1](t, fields, variant))
    if dialect == "go-service" or dialect == "frontend":
        return _go_startup(dialect, t, fields, variant)
    if dialect == "mongodb":
        ctx = _mongo_ctx(t, fields, variant)
        out = []
        for i, spec in enumerate(_MONGO_STARTUP):
            if fields.get("auth") and spec[2] == 22120:
                continue  # mongod --auth: no "Access control is not enabled" warning
            out.append(_mongo_line(t + i * 0.004, spec, ctx))
        return out
    if dialect == "memcached":
        if not fields.get("verbose"):
            return []
        return [
            _MEMCACHED["startup"][0],
            *_MEMCACHED["config"],
            *_MEMCACHED["listening"],
        ]
    if dialect == "consul":
        v = variant & 0x7FFFFFFF
        ctx = _Ctx(host=fields.get("host", "consul"), node_id=f"{v * 2654435761 & 0xFFFFFFFF:08x}-1c2d-3e4f-5a6b-7c8d9e0f1a2b")
        out = [line.format_map(ctx) for line in _CONSUL_STARTUP]
        for i, (lvl, tmpl) in enumerate(_CONSUL_STARTUP_LOG):
            out.append(f"{_consul_ts(t + 0.05 + i * 0.01)} [{lvl}]{' ' * (6 - len(lvl))}{tmpl.format_map(ctx)}")
        return out
    if dialect == "jaeger":
        out = []
        for i, (lvl, caller, msg, extra) in enumerate(_JAEGER_STARTUP):
            extra_s = "," + extra if extra else ""
            out.append(f'{{"level":"{lvl}","ts":{_zap_ts(t + i * 0.001, variant + i)},"caller":"{caller}","msg":"{msg}"{extra_s}}}')
        return out
    return [render(dialect, "startup", t, fields, variant)]
