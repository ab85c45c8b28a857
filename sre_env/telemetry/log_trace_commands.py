"""Shell commands for logs and traces: ``logql`` (logcli-like) and ``traces`` (Jaeger query).

:func:`log_trace_commands` binds them to one simulated world, as handlers for
``ShellContext.extra_commands`` (a live cluster has the real tools instead).
Usage errors print the command's help in the style of its real counterpart
(kingpin for logcli) and exit 1; nothing raises.
"""

from __future__ import annotations

import json
from functools import partial
from typing import TYPE_CHECKING, Callable

from . import traces as tr
from .logql import QueryOptions, label_names, label_values, parse_duration, run_query

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["log_trace_commands", "logql_command", "traces_command", "LOGQL_HELP", "TRACES_HELP"]

Result = tuple[str, int]

LOGQL_HELP = """usage: logql [<flags>] <query>
       logql labels [<label>]

Run a LogQL query against the cluster's logs (like `logcli query`).

Stream labels: namespace, pod, container, app, node, stream.
Examples:
  logql '{namespace="hotel-reservation", app="profile"} |= "error"'
  logql '{app=~"mongodb-.*"} | json | s="E"' --since 30m
  logql '{app="frontend"} | pattern "<ts> <level> <caller> > <msg>" | level="ERR"'
  logql 'sum by (app) (rate({namespace="hotel-reservation"} |= "refused" [5m]))'

Flags:
  --since=1h        lookback from now (Go duration: 30s, 5m, 1h30m)
  --limit=30        maximum number of log lines
  --forward         oldest lines first (default: newest first)
  --step=DURATION   evaluate a metric query over the range at this step (matrix)
  -o, --output=MODE default | raw | jsonl | json (Loki API) | table (metric queries)
  -q, --quiet       do not print the "Common labels" line
"""

TRACES_HELP = """usage: traces services [-o json]
       traces operations <service> [-o json]
       traces find --service S [--operation O] [--tags error=true] [--min-duration 500ms]
                   [--max-duration 2s] [--lookback 1h] [--limit 20] [-o json]
       traces get <traceID> [-o json]
       traces deps [--lookback 1h] [-o json]
       traces summary [--window 60s]

Query the Jaeger tracing backend of the cluster (like the Jaeger UI / query API).
--tags takes key=value pairs separated by spaces or commas, or a JSON object.
"""


def log_trace_commands(world: "World") -> dict[str, Callable[[object, list[str]], Result]]:
    """The handlers to merge into ``ShellContext.extra_commands``, reading ``world``."""
    return {"logql": partial(logql_command, world), "traces": partial(traces_command, world)}


class _Usage(Exception):
    pass


def _take(argv: list[str], i: int, name: str) -> tuple[str, int]:
    """The value of option ``argv[i]`` (``--x=v`` or ``--x v``) and the next index."""
    arg = argv[i]
    if "=" in arg and arg.startswith("--"):
        return arg.split("=", 1)[1], i + 1
    if len(arg) > 2 and arg.startswith("-") and not arg.startswith("--"):
        return arg[2:], i + 1  # -ojson
    if i + 1 >= len(argv):
        raise _Usage(f"expected argument for flag '{name}'")
    return argv[i + 1], i + 2


def _duration(text: str, flag: str) -> float:
    d = parse_duration(text)
    if d is None:
        raise _Usage(f'invalid value "{text}" for flag \'{flag}\': time: invalid duration "{text}"')
    return d


def _int(text: str, flag: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise _Usage(f"strconv.ParseInt: parsing \"{text}\": invalid syntax for flag '{flag}'") from None


# =========================================================================== logql


def logql_command(world: "World", ctx: object, argv: list[str]) -> Result:
    """``logql [flags] '<query>'`` / ``logql labels [name]``."""
    try:
        return _logql(world, argv)
    except _Usage as exc:
        return f"logql: error: {exc}, try --help\n", 1
    except Exception as exc:  # a bug must not escape into the episode
        return f"logql: error: internal: {type(exc).__name__}: {exc}\n", 1


def _logql(world: "World", argv: list[str]) -> Result:
    opts = QueryOptions()
    positional: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        name = a.split("=", 1)[0]
        if a in ("-h", "--help", "help"):
            return LOGQL_HELP, 0
        if name == "--since":
            v, i = _take(argv, i, "since")
            opts.since_s = _duration(v, "since")
        elif name == "--limit":
            v, i = _take(argv, i, "limit")
            opts.limit = _int(v, "limit")
        elif name == "--step":
            v, i = _take(argv, i, "step")
            opts.step_s = _duration(v, "step")
            if opts.step_s <= 0:
                raise _Usage("step must be positive")
        elif a == "--forward":
            opts.forward = True
            i += 1
        elif a in ("-q", "--quiet"):
            opts.quiet = True
            i += 1
        elif name in ("-o", "--output") or (a.startswith("-o") and not a.startswith("--")):
            v, i = _take(argv, i, "output")
            if v not in ("default", "raw", "jsonl", "json", "table"):
                raise _Usage(f"enum value must be one of default,raw,jsonl,json,table, got '{v}'")
            opts.output = "default" if v == "table" else v
        elif a.startswith("-") and len(a) > 1:
            raise _Usage(f"unknown long flag '{a}'" if a.startswith("--") else f"unknown short flag '{a}'")
        else:
            positional.append(a)
            i += 1
    if positional and positional[0] == "labels":
        if len(positional) > 2:
            raise _Usage(f"unexpected {positional[2]}")
        names = label_values(world, positional[1]) if len(positional) == 2 else label_names(world)
        return "".join(n + "\n" for n in names), 0
    if not positional:
        raise _Usage("required argument 'query' not provided")
    if len(positional) > 1:
        raise _Usage(f"unexpected {positional[1]} (quote the query: logql '{{app=\"x\"}} |= \"y\"')")
    return run_query(world, positional[0], opts)


# =========================================================================== traces


def traces_command(world: "World", ctx: object, argv: list[str]) -> Result:
    """``traces services|operations|find|get|deps|summary ...``."""
    try:
        return _traces(world, argv)
    except _Usage as exc:
        return f"traces: error: {exc}\n\n{TRACES_HELP}", 1
    except Exception as exc:  # a bug must not escape into the episode
        return f"traces: error: internal: {type(exc).__name__}: {exc}\n", 1


def _parse_tags(text: str) -> dict[str, str]:
    text = text.strip()
    if text.startswith("{"):
        try:
            obj = json.loads(text)
        except ValueError:
            raise _Usage(f"malformed 'tags' parameter: {text}") from None
        if not isinstance(obj, dict):
            raise _Usage(f"malformed 'tags' parameter: {text}")
        return {str(k): tr._tag_str(v) for k, v in obj.items()}
    out: dict[str, str] = {}
    for part in text.replace(",", " ").split():
        if "=" not in part and ":" not in part:
            raise _Usage(f"malformed 'tags' parameter, expecting key=value: {part}")
        k, v = part.split("=", 1) if "=" in part else part.split(":", 1)
        out[k.strip()] = v.strip().strip('"')
    return out


def _traces(world: "World", argv: list[str]) -> Result:
    if not argv or argv[0] in ("-h", "--help", "help"):
        return (TRACES_HELP, 0) if argv else (TRACES_HELP, 1)
    sub, rest = argv[0], argv[1:]
    flags: dict[str, str] = {}
    positional: list[str] = []
    known = {"--service", "--operation", "--tags", "--min-duration", "--max-duration", "--lookback", "--limit", "--window", "-o", "--output"}
    i = 0
    while i < len(rest):
        a = rest[i]
        name = a.split("=", 1)[0] if a.startswith("--") else (a[:2] if a.startswith("-o") else a)
        if a in ("-h", "--help"):
            return TRACES_HELP, 0
        if name in known:
            v, i = _take(rest, i, name)
            if name == "--tags" and "--tags" in flags:
                v = flags["--tags"] + " " + v
            flags["--output" if name == "-o" else name] = v
        elif a.startswith("-") and len(a) > 1:
            raise _Usage(f"unknown flag {a}")
        else:
            positional.append(a)
            i += 1
    out_json = flags.get("--output", "text") == "json"
    if flags.get("--output", "text") not in ("text", "json", "table", "default"):
        raise _Usage(f"unknown output format {flags['--output']!r} (text or json)")
    if sub not in ("services", "operations", "find", "search", "get", "trace", "deps", "dependencies", "summary"):
        raise _Usage(f"unknown subcommand {sub!r}")
    if sub == "services":
        names = tr.services(world)
        if out_json:
            return json.dumps({"data": names, "total": len(names), "limit": 0, "offset": 0, "errors": None}) + "\n", 0
        return "".join(n + "\n" for n in names), 0
    if sub == "operations":
        if len(positional) != 1 and "--service" not in flags:
            raise _Usage("operations needs a service name")
        svc = positional[0] if positional else flags["--service"]
        if svc not in tr.services(world):
            if out_json:
                return json.dumps({"data": [], "total": 0, "limit": 0, "offset": 0, "errors": None}) + "\n", 0
            return f"No operations for service {svc!r} (known services: {', '.join(tr.services(world))}).\n", 0
        ops = tr.operations(world, svc)
        if out_json:
            return json.dumps({"data": [{"name": n, "spanKind": k} for n, k in ops], "total": len(ops), "limit": 0, "offset": 0, "errors": None}) + "\n", 0
        w = max(len(n) for n, _ in ops) if ops else 9
        return f"{'OPERATION'.ljust(w)}   SPAN KIND\n" + "".join(f"{n.ljust(w)}   {k}\n" for n, k in ops), 0
    if sub in ("find", "search"):
        svc = flags.get("--service") or (positional[0] if positional else "")
        if not svc:
            raise _Usage("find needs --service")
        lookback = _duration(flags.get("--lookback", "1h"), "lookback")
        limit = _int(flags.get("--limit", "20"), "limit")
        min_d = _duration(flags["--min-duration"], "min-duration") * 1000 if "--min-duration" in flags else None
        max_d = _duration(flags["--max-duration"], "max-duration") * 1000 if "--max-duration" in flags else None
        tags = _parse_tags(flags["--tags"]) if "--tags" in flags else None
        found = tr.find_traces(world, svc, operation=flags.get("--operation"), tags=tags, min_duration_ms=min_d, max_duration_ms=max_d, lookback_s=lookback, limit=limit)
        if out_json:
            return tr.traces_json(found), 0
        if svc not in tr.services(world) and not found:
            return f"No traces found: service {svc!r} reports no spans (known services: {', '.join(tr.services(world))}).\n", 0
        return tr.format_trace_list(found), 0
    if sub in ("get", "trace"):
        if len(positional) != 1:
            raise _Usage("get needs exactly one trace ID")
        found_one = tr.get_trace(world, positional[0])
        if found_one is None:
            if out_json:
                return json.dumps({"data": None, "total": 0, "limit": 0, "offset": 0, "errors": [{"code": 404, "msg": "trace not found"}]}) + "\n", 1
            return f"trace {positional[0]} not found\n", 1
        return (tr.traces_json([found_one]) if out_json else tr.format_trace(found_one)), 0
    if sub in ("deps", "dependencies"):
        deps = tr.dependencies(world, _duration(flags.get("--lookback", "1h"), "lookback"))
        return (tr.dependencies_json(deps) if out_json else tr.format_dependencies(deps)), 0
    window = _duration(flags.get("--window", "60s"), "window")
    return tr.trace_summary(world, None, None, window), 0
