"""Log dialects of the social-network processes: C++ Thrift services, OpenResty, redis.

Same contract as :mod:`sre_env.sim.logs.render` (pure, deterministic, never raises on
odd fields); an empty string means the process prints nothing for that event.

``cpp-thrift``
    DeathStarBench's Boost.Log console format, info level and up:
    ``[2026-03-02 09:00:05.123456] <error>: (HomeTimelineHandler.h:125:WriteHomeTimeline) ...``.
``openresty``
    nginx's error log (access_log is off in the chart's nginx.conf), with the
    Lua handler's ``ngx.log(ngx.ERR, ...)`` lines:
    ``2026/03/02 09:00:05 [error] 7#7: *1234 [lua] compose.lua:63: ComposePost(): ...``.
``redis``
    redis-server 6.2's log: ``1:M 02 Mar 2026 09:00:05.123 * Ready to accept connections``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

from sre_env.kube.timefmt import EPOCH

__all__ = ["DIALECTS", "SOCIAL_DIALECTS", "render_social", "social_startup_lines"]

SOCIAL_DIALECTS = frozenset({"cpp-thrift", "openresty", "redis"})

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

#: thrift service -> (handler header, main source file, binary's server name)
_HANDLERS = {
    "compose-post-service": "ComposePostHandler.h",
    "home-timeline-service": "HomeTimelineHandler.h",
    "user-timeline-service": "UserTimelineHandler.h",
    "post-storage-service": "PostStorageHandler.h",
    "social-graph-service": "SocialGraphHandler.h",
    "user-service": "UserHandler.h",
    "url-shorten-service": "UrlShortenHandler.h",
    "user-mention-service": "UserMentionHandler.h",
    "text-service": "TextHandler.h",
    "media-service": "MediaHandler.h",
    "unique-id-service": "UniqueIdHandler.h",
}
#: (caller, callee operation) -> the handler function that issues it
_FUNCTIONS = {
    ("home-timeline-service", "6379"): ("WriteHomeTimeline", 125),
    ("user-timeline-service", "6379"): ("WriteUserTimeline", 137),
    ("social-graph-service", "6379"): ("GetFollowers", 318),
}
#: nginx-thrift Lua handler per wrk2 path: (script, line, function, failure prefix)
_LUA = {
    "/wrk2-api/post/compose": ("compose.lua", 63, "ComposePost", "compose_post failure: "),
    "/wrk2-api/home-timeline/read": ("read.lua", 54, "ReadHomeTimeline", "Get home-timeline failure: "),
    "/wrk2-api/user-timeline/read": ("read.lua", 54, "ReadUserTimeline", "Get user-timeline failure: "),
}


def _dt(t: float):
    return EPOCH + timedelta(seconds=t)


def _boost_ts(t: float) -> str:
    d = _dt(t)
    return f"{d:%Y-%m-%d %H:%M:%S}.{d.microsecond:06d}"


def _nginx_ts(t: float) -> str:
    return f"{_dt(t):%Y/%m/%d %H:%M:%S}"


def _redis_ts(t: float) -> str:
    d = _dt(t)
    return f"{d.day:02d} {_MONTHS[d.month - 1]} {d.year} {d:%H:%M:%S}.{d.microsecond // 1000:03d}"


def _host_port(target: object) -> tuple[str, str]:
    s = str(target or "")
    host, _, port = s.rpartition(":")
    return (host or s), port


def _dependency_text(target: object, error: object) -> str:
    """The client library's own words for a failed call to ``target``."""
    host, port = _host_port(target)
    err = str(error or "connection refused")
    refused = "refused" in err or "dial tcp" in err or "no such host" in err or "timeout" in err
    reason = "Connection refused" if "refused" in err else ("Connection timed out" if "timeout" in err else "Name or service not known" if "no such host" in err else err)
    # which client library dialled: the peer's name says it (the port may be misconfigured)
    short = host.split(".")[0]
    if short.endswith("-redis") or (port == "6379" and not short.endswith(("-mongodb", "-memcached", "-service"))):
        return f"Failed to connect to Redis ({host}:{port}): {reason}" if refused else err
    if short.endswith("-mongodb") or port == "27017":
        return f"mongoc error: No suitable servers found (`serverSelectionTryOnce` set): [connection refused calling ismaster on '{host}:{port}']" if refused else "mongoc error: socket error or timeout"
    if short.endswith("-memcached") or port == "11211":
        return "memcached_mget error: CONNECTION FAILURE" if refused else "memcached error: SERVER ERROR"
    if refused:
        return f"TSocket::open() connect() <Host: {host} Port: {port or 9090}>: {reason}"
    return err


def _cpp(t: float, level: str, source: str, message: str) -> str:
    return f"[{_boost_ts(t)}] <{level}>: ({source}) {message}"


def _render_cpp(event: str, t: float, f: Mapping[str, object], variant: int) -> str:
    svc = str(f.get("service", "unique-id-service"))
    header = _HANDLERS.get(svc, "ThriftClient.h")
    main = "".join(p.capitalize() for p in svc.removesuffix("-service").split("-")) + "Service.cpp"
    if event == "ready":
        return _cpp(t, "info", f"{main}:{60 + variant % 40}:main", f"Starting the {svc} server...")
    if event == "dependency_error":
        _, port = _host_port(f.get("target"))
        fn, line = _FUNCTIONS.get((svc, port), ("", 0))
        if not fn:
            fn, line = ("main", 40 + variant % 30) if f.get("phase") != "request" else ("Handler", 80 + variant % 120)
        return _cpp(t, "error", f"{header if fn != 'main' else main}:{line}:{fn}", _dependency_text(f.get("target"), f.get("error")))
    if event == "fatal_assertion":
        return _cpp(t, "error", f"{main}:{50 + variant % 20}:main", f"Failed to create mongodb index, try again: {f.get('error', '-')}")
    if event == "missing_env":
        return _cpp(t, "error", f"{main}:{30 + variant % 10}:main", f"Missing environment variable {f.get('var', '-')}")
    if event == "shutdown":
        return ""
    if event in ("startup", "config", "listening", "request", "connection_accepted", "connection_ended", "cache_miss"):
        return ""
    return _cpp(t, "info", f"{header}:{60 + variant % 140}:{event}", " ".join(f"{k}={v}" for k, v in f.items() if k not in ("service", "port")))


def _lua_message(f: Mapping[str, object]) -> str:
    """The Thrift exception text the Lua handler prints for a failed request."""
    raw = str(f.get("grpc_error") or f.get("error") or "")
    if "Error while dialing" in raw:
        # the gateway's own connection to the Thrift service failed
        dial = raw.split("dial tcp ", 1)[-1]
        host, _, rest = dial.partition(":")
        port = rest.split(":", 1)[0] or "9090"
        return f"Could not connect to {host}:{port} (Connection refused)"
    if "desc = " in raw:
        raw = raw.split("desc = ", 1)[1]
        head, sep, rest = raw.partition(": ")
        if sep and head.endswith(("-service", "-redis", "-mongodb", "-memcached")):
            raw = rest
    if raw.startswith("dial tcp "):
        # a service further down could not reach its own back end: its ServiceException says so
        addr = raw[len("dial tcp "):].split(": ", 1)[0]
        return _dependency_text(addr, raw)
    return raw or "TTransportException: connection closed"


def _render_openresty(event: str, t: float, f: Mapping[str, object], variant: int) -> str:
    v = variant & 0x7FFFFFFF
    pid = 7 + v % 8
    if event == "request":
        try:
            failed = int(f.get("status", 200)) >= 500  # type: ignore[call-overload]
        except (TypeError, ValueError):
            failed = False
        if not failed:
            return ""
        path = str(f.get("path", "/wrk2-api/post/compose")).split("?", 1)[0]
        script, line, fn, prefix = _LUA.get(path, ("compose.lua", 63, "ComposePost", "compose_post failure: "))
        method = str(f.get("method", "GET"))
        client = f"10.244.{(v >> 8) % 3 + 1}.{v % 240 + 10}"
        return (
            f"{_nginx_ts(t)} [error] {pid}#{pid}: *{1000 + v % 900000} [lua] {script}:{line}: {fn}(): {prefix}{_lua_message(f)}, "
            f'client: {client}, server: localhost, request: "{method} {path} HTTP/1.1", host: "nginx-thrift:8080"'
        )
    if event == "dependency_error":
        target = str(f.get("target", "-"))
        return f"{_nginx_ts(t)} [error] {pid}#{pid}: *{1000 + v % 900000} [lua] GenericObjectPool.lua:{30 + v % 20}: connection(): {_dependency_text(target, f.get('error'))}"
    if event == "missing_env":
        return f'nginx: [emerg] unknown "{f.get("var", "-")}" variable'
    return ""


def _redis_line(t: float, role: str, mark: str, message: str) -> str:
    return f"1:{role} {_redis_ts(t)} {mark} {message}"


def _render_redis(event: str, t: float, f: Mapping[str, object], variant: int) -> str:
    if event == "ready":
        return _redis_line(t, "M", "*", "Ready to accept connections")
    if event == "listening":
        return _redis_line(t, "M", "*", f"Running mode=standalone, port={f.get('port', 6379)}.")
    if event == "shutdown":
        return _redis_line(t, "M", "#", "User requested shutdown...")
    if event == "dependency_error":
        return ""
    return ""


def render_social(dialect: str, event: str, t: float, fields: Mapping[str, object], variant: int) -> str:
    if event == "raw":
        return str(fields.get("line", ""))  # a line the process printed verbatim (config errors)
    if dialect == "cpp-thrift":
        return _render_cpp(event, t, fields, variant)
    if dialect == "openresty":
        return _render_openresty(event, t, fields, variant)
    return _render_redis(event, t, fields, variant)


def social_startup_lines(dialect: str, t: float, fields: Mapping[str, object], variant: int) -> list[str]:
    """What the process prints when it starts (before it listens)."""
    if dialect == "redis":
        maxmem = fields.get("maxmemory_bytes")
        lines = [
            _redis_line(t, "C", "#", "oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo"),
            _redis_line(t, "C", "#", "Redis version=6.2.4, bits=64, commit=00000000, modified=0, pid=1, just started"),
            _redis_line(t, "C", "#", "Configuration loaded"),
            _redis_line(t + 0.001, "M", "*", "monotonic clock: POSIX clock_gettime"),
        ]
        if isinstance(maxmem, int) and 0 < maxmem < 1024 * 1024:
            lines.append(_redis_line(t + 0.001, "M", "#", f"WARNING: You specified a maxmemory value that is less than 1MB (current value is {maxmem} bytes). Are you sure this is what you really want?"))
        lines += [
            _redis_line(t + 0.002, "M", "#", "Server initialized"),
            _redis_line(
                t + 0.002,
                "M",
                "#",
                "WARNING overcommit_memory is set to 0! Background save may fail under low memory condition. To fix this issue add "
                "'vm.overcommit_memory = 1' to /etc/sysctl.conf and then reboot or run the command 'sysctl vm.overcommit_memory=1' for this to take effect.",
            ),
        ]
        return lines
    return []


def _dialect(name: str) -> tuple:
    return (
        lambda event, t, fields, variant: render_social(name, event, t, fields, variant),
        lambda t, fields, variant: social_startup_lines(name, t, fields, variant),
    )


#: dialect -> (render, start-up lines), with the signatures of sre_env.sim.logs.render's
DIALECTS = {name: _dialect(name) for name in sorted(SOCIAL_DIALECTS)}
