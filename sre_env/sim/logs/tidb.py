"""The TiDB/PD/TiKV unified log format: the ``tidb`` dialect.

Every PingCAP component writes ``[yyyy/mm/dd hh:mm:ss.mmm +00:00] [LEVEL]
[file:line] ["message"] [key=value]...``. The SQL layer does not log each
statement at INFO, so successful requests print nothing; failed statements,
unreachable peers and start-up do.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["DIALECTS", "render_tidb", "tidb_startup_lines"]


def _ts(t: float, variant: int) -> str:
    from sre_env.kube.timefmt import iso

    stamp = iso(t)  # 2026-03-02T09:14:46Z
    return f"[{stamp[0:4]}/{stamp[5:7]}/{stamp[8:10]} {stamp[11:19]}.{variant % 1000:03d} +00:00]"


def _q(value: object) -> str:
    text = str(value)
    return text if text.replace(".", "").replace(":", "").replace("-", "").replace("/", "").isalnum() else '"' + text.replace('"', '\\"') + '"'


def _line(t: float, variant: int, level: str, where: str, message: str, **kv: object) -> str:
    extra = "".join(f" [{k}={_q(v)}]" for k, v in kv.items())
    return f'{_ts(t, variant)} [{level}] [{where}] ["{message}"]{extra}'


def render_tidb(event: str, t: float, fields: Mapping[str, object], variant: int) -> str:
    svc = str(fields.get("service", "tidb"))
    if event == "request":
        if int(fields.get("status", 200) or 200) < 500:
            return ""
        return _line(t, variant, "WARN", "conn.go:1184", "command dispatched failed", conn=2_097_152 + variant % 4096, connInfo="id:2097153, addr:10.244.0.1:52718 status:10, collation:utf8mb4_0900_ai_ci, user:root", command="Query", status="inTxn:0, autocommit:1", sql=fields.get("path", ""), err=fields.get("grpc_error", ""))
    if event == "dependency_error":
        target = str(fields.get("target", ""))
        err = str(fields.get("error", ""))
        if ":2379" in target:
            return _line(t, variant, "ERROR", "pd_service_discovery.go:284", "[pd] failed to get cluster id", url=f"http://{target}", error=f"[PD:client:ErrClientGetMember]error:rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing: {err}\"")
        return _line(t, variant, "WARN", "region_request.go:1496", "send request failed, err: context deadline exceeded" if "timeout" in err else "send request failed", addr=target, error=err)
    if event == "listening":
        return _line(t, variant, "INFO", "server.go:287" if svc == "tidb" else ("server.rs:281" if svc == "tikv" else "server.go:245"), "server is running" if svc != "tidb" else "server is running MySQL protocol", addr=f"0.0.0.0:{fields.get('port', '')}")
    if event == "shutdown":
        return _line(t, variant, "INFO", "signal_posix.go:54" if svc != "tikv" else "signal_handler.rs:37", "got signal to exit", signal="terminated")
    if event == "missing_env":
        return _line(t, variant, "FATAL", "main.go:269", "invalid config", error=f"env {fields.get('var', '')} is not set")
    return ""


def tidb_startup_lines(t: float, fields: Mapping[str, object], variant: int) -> list[str]:
    svc = str(fields.get("service", "tidb"))
    port = fields.get("port", "")
    if svc == "tikv":
        return [
            _line(t, variant, "INFO", "lib.rs:91", "Welcome to TiKV"),
            _line(t, variant, "INFO", "lib.rs:96", "Release Version:   8.5.2"),
            _line(t, variant, "INFO", "util.rs:612", "connecting to PD endpoint", endpoints="basic-pd:2379"),
            _line(t, variant, "INFO", "server.rs:281", "TiKV is ready to serve"),
        ]
    if svc == "pd":
        return [
            _line(t, variant, "INFO", "util.go:51", "Welcome to Placement Driver (PD)"),
            _line(t, variant, "INFO", "util.go:52", "PD", **{"release-version": "v8.5.2"}),
            _line(t, variant, "INFO", "server.go:245", "server is running", addr=f"0.0.0.0:{port}"),
        ]
    return [
        _line(t, variant, "INFO", "printer.go:47", "Welcome to TiDB.", **{"Release Version": "v8.5.2", "Edition": "Community"}),
        _line(t, variant, "INFO", "main.go:352", "tidb-server", version="8.0.11-TiDB-v8.5.2"),
        _line(t, variant, "INFO", "server.go:287", "server is running MySQL protocol", addr=f"0.0.0.0:{port}"),
    ]


#: dialect -> (render, start-up lines), with the signatures of sre_env.sim.logs.render's
DIALECTS = {"tidb": (render_tidb, tidb_startup_lines)}
