"""``ssh NODE CMD``: run a command on a node's host through Backend.nodes.

The remote command line is re-parsed like the remote shell would (so
``ssh n1 'journalctl -u kubelet | tail -5'`` works): the first stage runs on
the node, later stages are our local filters.
"""

from __future__ import annotations

from typing import Any

from .filters import FILTERS
from .parse import ShellSyntaxError, parse_pipeline

__all__ = ["run_ssh"]

_VALUED = set("oipFlJEcmLRDWbBQSw")
_BOOL = set("tTqvnANfgkKMsxXYy46C")


def run_ssh(ctx: Any, argv: list[str]) -> tuple[str, str, int, float, bool]:
    i = 0
    host = None
    while i < len(argv):
        a = argv[i]
        if a.startswith("-") and len(a) > 1 and host is None:
            ch = a[1]
            if ch in _VALUED:
                i += 1 if len(a) > 2 else 2
                if len(a) == 2 and i > len(argv):
                    return "", f"option requires an argument -- {ch}\n", 255, 1.0, False
                continue
            if all(c in _BOOL for c in a[1:]):
                i += 1
                continue
            return "", f"unknown option -- {ch}\nusage: ssh [-46AaCfGgKkMNnqsTtVvXxYy] destination [command [argument ...]]\n", 255, 1.0, False
        host = a
        i += 1
        break
    if host is None:
        return "", "usage: ssh [-46AaCfGgKkMNnqsTtVvXxYy] destination [command [argument ...]]\n", 255, 1.0, False
    node = host.rsplit("@", 1)[-1]
    remote = argv[i:]
    names = ctx.backend.nodes.names()
    if node not in names:
        return "", f"ssh: Could not resolve hostname {node}: Name or service not known\n", 255, 1.0, False
    if not remote:
        return "", "sre-env shell: interactive ssh sessions are not supported; run: ssh NODE COMMAND [args...]\n", 2, 1.0, False
    line = " ".join(remote)
    try:
        stages = parse_pipeline(line)
    except ShellSyntaxError as exc:
        if "not supported" in exc.message:
            # lists, redirections into files, tee: the node's own shell runs the whole line
            res = ctx.backend.nodes.exec(node, ["bash", "-c", line])
            out = res.output if not res.output or res.output.endswith("\n") else res.output + "\n"
            return out, "", res.exit_code, 5.0, True
        return "", exc.message.replace("sre-env shell", "sre-env shell (remote)") + "\n", exc.code, 1.0, False
    if not stages:
        return "", "", 0, 1.0, False
    res = ctx.backend.nodes.exec(node, stages[0].argv)
    out = res.output
    if out and not out.endswith("\n"):
        out += "\n"
    code = res.exit_code
    errs = []
    for st in stages[1:]:
        f = FILTERS.get(st.argv[0])
        if f is None:
            return "", f"bash: {st.argv[0]}: command not found\n", 127, 5.0, False
        out, err, code = f(st.argv[1:], out)
        errs.append(err)
    return out, "".join(errs), code, 5.0, False
