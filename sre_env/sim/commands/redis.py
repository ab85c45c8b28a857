"""``redis-cli`` inside a container: PING, INFO, CONFIG GET/SET/REWRITE, DBSIZE, writes and flushes.

It talks to the live redis process state (:mod:`sre_env.sim.runtime.redis_model`), so
``CONFIG SET`` changes the running server — and only it: the next container
start reads the pod spec and the mounted config file again. ``CONFIG REWRITE``
fails as it does on a ConfigMap mounted with ``subPath`` (read-only). Output
follows redis-cli's interactive formatting (``(integer) 3``, ``(error) ERR ...``,
numbered multi-bulk lines).
"""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING, Any

from sre_env.sim.runtime.redis_model import (
    OOM_ERROR,
    POLICIES,
    RSS_OVERHEAD,
    RedisState,
    format_memory,
    parse_memory,
)

if TYPE_CHECKING:
    from sre_env.sim.commands.container import ExecResult
    from sre_env.sim.commands.views import ContainerView

__all__ = ["redis_cli"]

_WRITE_COMMANDS = frozenset({"SET", "ZADD", "HSET", "LPUSH", "RPUSH", "SADD", "INCR", "APPEND", "MSET", "SETEX", "HMSET"})
_USAGE = "redis-cli 6.2.4\n\nUsage: redis-cli [OPTIONS] [cmd [arg [arg ...]]]\n"


def _result(text: str, code: int = 0) -> ExecResult:
    from sre_env.sim.commands.container import ExecResult

    return ExecResult(text, code)


def _info(st: RedisState, section: str, now: float) -> str:
    uptime = max(0, int(now - st.started_at))
    used = int(st.used_memory)
    maxmem = st.maxmemory
    sections: dict[str, list[tuple[str, object]]] = {
        "server": [
            ("redis_version", "6.2.4"), ("redis_git_sha1", "00000000"), ("redis_git_dirty", 0), ("redis_build_id", "a2f3e1c4b8d6e201"),
            ("redis_mode", "standalone"), ("os", "Linux 6.1.0-27-amd64 x86_64"), ("arch_bits", 64), ("multiplexing_api", "epoll"),
            ("gcc_version", "10.2.1"), ("process_id", 1), ("tcp_port", st.config.get("port", "6379")),
            ("uptime_in_seconds", uptime), ("uptime_in_days", uptime // 86400), ("hz", 10), ("configured_hz", 10),
            ("executable", "/data/redis-server"), ("config_file", st.config_file),
            ("io_threads_active", 0),
        ],
        "clients": [("connected_clients", 3 + min(512, int(st.commands // 50_000) + 5)), ("cluster_connections", 0), ("maxclients", 10000), ("blocked_clients", 0)],
        "memory": [
            ("used_memory", used), ("used_memory_human", format_memory(used)), ("used_memory_rss", used + RSS_OVERHEAD),
            ("used_memory_rss_human", format_memory(used + RSS_OVERHEAD)), ("used_memory_peak", used), ("used_memory_peak_human", format_memory(used)),
            ("used_memory_peak_perc", "100.00%"), ("used_memory_overhead", 863_448), ("used_memory_startup", 809_880),
            ("used_memory_dataset", max(0, used - 863_448)), ("total_system_memory", 16_717_361_152), ("total_system_memory_human", "15.57G"),
            ("used_memory_lua", 37_888), ("used_memory_lua_human", "37.00K"), ("maxmemory", maxmem), ("maxmemory_human", format_memory(maxmem)),
            ("maxmemory_policy", st.policy), ("allocator_frag_ratio", "1.02"), ("mem_fragmentation_ratio", f"{(used + RSS_OVERHEAD) / max(used, 1):.2f}"),
            ("mem_allocator", "jemalloc-5.1.0"), ("active_defrag_running", 0), ("lazyfree_pending_objects", 0),
        ],
        "stats": [
            ("total_connections_received", 6 + int(st.commands // 100_000)), ("total_commands_processed", int(st.commands)),
            ("instantaneous_ops_per_sec", int(st.commands / max(uptime, 1))), ("rejected_connections", 0),
            ("expired_keys", 0), ("evicted_keys", int(st.evicted_keys)), ("keyspace_hits", int(st.commands * 0.9)), ("keyspace_misses", int(st.commands * 0.1)),
            ("total_error_replies", int(st.rejected_writes)),
        ],
        "persistence": [("loading", 0), ("rdb_changes_since_last_save", int(st.writes)), ("rdb_bgsave_in_progress", 0), ("rdb_last_bgsave_status", "ok"), ("aof_enabled", 1 if st.config.get("appendonly") == "yes" else 0)],
        "replication": [("role", "master"), ("connected_slaves", 0), ("master_repl_offset", 0)],
        "keyspace": [("db0", f"keys={st.keys},expires=0,avg_ttl=0")] if st.keys else [],
    }
    sec = section.lower()
    if sec in ("", "default", "all", "everything"):
        names = list(sections)
    elif sec in sections:
        names = [sec]
    else:
        return ""
    out = []
    for name in names:
        out.append(f"# {name.capitalize()}")
        out.extend(f"{k}:{v}" for k, v in sections[name])
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _config_value(st: RedisState, name: str) -> str:
    if name == "maxmemory":
        return str(st.maxmemory)
    return st.config.get(name, "")


def _command(st: RedisState, argv: list[str], now: float) -> str:
    if not argv:
        return ""
    cmd = argv[0].upper()
    args = argv[1:]
    if cmd == "PING":
        return "PONG\n" if not args else f'"{args[0]}"\n'
    if cmd == "INFO":
        return _info(st, args[0] if args else "", now)
    if cmd == "DBSIZE":
        return f"(integer) {st.keys}\n"
    if cmd in ("FLUSHALL", "FLUSHDB"):
        st.dataset_bytes = 0.0
        return "OK\n"
    if cmd == "CONFIG":
        if not args:
            return "(error) ERR wrong number of arguments for 'config' command\n"
        sub = args[0].upper()
        if sub == "GET":
            if len(args) != 2:
                return "(error) ERR wrong number of arguments for 'config|get' command\n"
            names = sorted(k for k in set(st.config) | {"maxmemory"} if fnmatch.fnmatchcase(k, args[1].lower()))
            lines = []
            for i, k in enumerate(names):
                lines.append(f'{2 * i + 1}) "{k}"')
                lines.append(f'{2 * i + 2}) "{_config_value(st, k)}"')
            return ("\n".join(lines) + "\n") if lines else "(empty array)\n"
        if sub == "SET":
            if len(args) != 3:
                return "(error) ERR wrong number of arguments for 'config|set' command\n"
            name, value = args[1].lower(), args[2]
            if name == "maxmemory":
                if parse_memory(value) is None:
                    return f"(error) ERR Invalid argument '{value}' for CONFIG SET 'maxmemory' - argument couldn't be parsed into an integer\n"
            elif name == "maxmemory-policy":
                if value.lower() not in POLICIES:
                    return f"(error) ERR Invalid argument '{value}' for CONFIG SET 'maxmemory-policy'\n"
                value = value.lower()
            elif name not in st.config:
                return f"(error) ERR Unsupported CONFIG parameter: {name}\n"
            st.config[name] = value
            st.runtime_changes.append((now, name, value))
            return "OK\n"
        if sub == "REWRITE":
            if not st.config_file:
                return "(error) ERR The server is running without a config file\n"
            return "(error) ERR Rewriting config file: Read-only file system\n"
        if sub == "RESETSTAT":
            st.rejected_writes = 0.0
            st.evicted_keys = 0.0
            return "OK\n"
        return f"(error) ERR Unknown subcommand or wrong number of arguments for '{args[0]}'. Try CONFIG HELP.\n"
    if cmd in _WRITE_COMMANDS:
        if st.refusing:
            st.rejected_writes += 1
            return f"(error) {OOM_ERROR}\n"
        return "OK\n" if cmd in ("SET", "MSET", "SETEX", "HMSET") else "(integer) 1\n"
    if cmd in ("GET", "HGET"):
        return "(nil)\n"
    if cmd in ("ZCARD", "SCARD", "LLEN", "EXISTS", "DEL", "TTL"):
        return "(integer) -1\n" if cmd == "TTL" else "(integer) 0\n"
    if cmd in ("KEYS", "ZRANGE", "ZREVRANGE", "SCAN"):
        if cmd == "SCAN":
            return '1) "0"\n2) (empty array)\n'
        return "(empty array)\n"
    if cmd == "MEMORY" and args and args[0].upper() == "DOCTOR":
        return "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n"
    if cmd in ("SHUTDOWN", "DEBUG", "SLAVEOF", "REPLICAOF", "MONITOR"):
        return f"(error) ERR command '{argv[0]}' is not allowed here\n"
    return f"(error) ERR unknown command `{argv[0]}`, with args beginning with: {' '.join(f'`{a}`,' for a in args)}\n"


def redis_cli(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    host, port = "127.0.0.1", 6379
    rest: list[str] = []
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "-p", "-a", "-n", "--user", "--pass", "-u") and i + 1 < len(argv):
            if a == "-h":
                host = argv[i + 1]
            elif a == "-p":
                try:
                    port = int(argv[i + 1])
                except ValueError:
                    return _result(f"Invalid port: {argv[i + 1]}\n", 1)
            i += 2
            continue
        if a in ("--raw", "--no-raw", "-c", "--no-auth-warning", "-e"):
            i += 1
            continue
        if a in ("--version", "-v"):
            return _result("redis-cli 6.2.4\n")
        if a == "--help":
            return _result(_USAGE)
        rest = argv[i:]
        break
    state: Any = None
    if host in ("127.0.0.1", "localhost", "::1") and port == 6379:
        state = view.redis
    elif view.redis_at is not None:
        state = view.redis_at(host, port)
    if state is None:
        return _result(f"Could not connect to Redis at {host}:{port}: Connection refused\n", 1)
    if not rest:
        if stdin:
            out = "".join(_command(state, line.split(), view.now) for line in stdin.splitlines() if line.strip())
            return _result(out)
        return _result("")
    return _result(_command(state, rest, view.now))
