"""Valkey with ``requirepass``: the password the server runs with, and ``valkey-cli``.

The server takes its password from its command line (``--requirepass
$(VALKEY_PASSWORD)``) when the container starts; ``CONFIG SET requirepass``
changes it until the next restart (the server runs without a config file, so
``CONFIG REWRITE`` fails). A client authenticates with the password it was
started with; a mismatch is ``WRONGPASS``.
"""

from __future__ import annotations

from dataclasses import dataclass

from sre_env.backend import ExecResult

__all__ = ["ValkeyServer", "valkey_cli"]

_WARN = "Warning: Using a password with '-a' or '-u' option on the command line interface may not be safe.\n"


@dataclass
class ValkeyServer:
    password: str = ""
    keys: int = 0

    def start(self, password: str) -> None:
        self.password = password

    def auth_ok(self, password: str) -> bool:
        return not self.password or password == self.password


def valkey_cli(server: ValkeyServer | None, argv: list[str], stdin: str | None) -> ExecResult:
    """``valkey-cli [-h host] [-p port] [-a password] [--no-auth-warning] CMD ...`` inside the valkey pod."""
    if server is None:
        return ExecResult("Could not connect to Valkey at 127.0.0.1:6379: Connection refused\n", 1)
    password = None
    warn = True
    cmd: list[str] = []
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("-a", "--pass") and i + 1 < len(argv):
            password, i = argv[i + 1], i + 2
            continue
        if a in ("-h", "-p", "-n", "--user") and i + 1 < len(argv):
            i += 2
            continue
        if a == "--no-auth-warning":
            warn = False
        elif a.startswith("-") and not cmd:
            pass
        else:
            cmd.append(a)
        i += 1
    prefix = _WARN if password is not None and warn else ""
    if not cmd and stdin:
        cmd = stdin.split()
    if not cmd:
        return ExecResult(prefix + "127.0.0.1:6379> \n", 0)
    if password is not None and not server.auth_ok(password):
        return ExecResult(prefix + "AUTH failed: WRONGPASS invalid username-password pair or user is disabled.\n" + _reply(server, cmd, authed=False), 0)
    authed = password is not None and server.auth_ok(password) or not server.password
    if cmd[0].upper() == "AUTH":
        pw = cmd[-1] if len(cmd) > 1 else ""
        return ExecResult(prefix + ("OK\n" if server.auth_ok(pw) else "(error) WRONGPASS invalid username-password pair or user is disabled.\n"), 0)
    return ExecResult(prefix + _reply(server, cmd, authed=authed), 0)


def _reply(server: ValkeyServer, cmd: list[str], *, authed: bool) -> str:
    op = cmd[0].upper()
    if not authed and op not in ("HELLO",):
        return "(error) NOAUTH Authentication required.\n"
    if op == "PING":
        return "PONG\n"
    if op == "DBSIZE":
        return f"(integer) {server.keys}\n"
    if op == "CONFIG" and len(cmd) >= 2:
        sub = cmd[1].upper()
        if sub == "GET" and len(cmd) >= 3:
            if cmd[2].lower() == "requirepass":
                return f'1) "requirepass"\n2) "{server.password}"\n'
            return f'1) "{cmd[2]}"\n2) ""\n'
        if sub == "SET" and len(cmd) >= 4:
            if cmd[2].lower() == "requirepass":
                server.password = cmd[3]
            return "OK\n"
        if sub == "REWRITE":
            return "(error) ERR The server is running without a config file\n"
    if op == "INFO":
        return "# Server\r\nvalkey_version:8.1.3\r\nredis_mode:standalone\r\nos:Linux 6.1.0-27-amd64 x86_64\r\ntcp_port:6379\r\n# Keyspace\r\n" + (f"db0:keys={server.keys},expires={server.keys},avg_ttl=0\r\n" if server.keys else "") + "\n"
    return f"(error) ERR unknown command '{cmd[0]}', with args beginning with: {' '.join(repr(a) for a in cmd[1:3])}\n"
