"""Classifying one command line: read it, follow it where it runs, judge each stage; never raise.

Prefixes that run their argument (``sudo``, ``env``, ``timeout``, ``chroot``,
``nsenter``, ``xargs``) are unwrapped; ``sh -c`` bodies, ``ssh NODE CMD`` and
heredocs are read again as lines of their own, up to a depth limit.
"""

from __future__ import annotations

from typing import Any

from .context import RiskContext
from .flags import Judgements, RiskFlag
from .flags import RiskCategory as C
from .flags import Severity as S
from .host_storage import storage_rule
from .host_system import system_rule
from .judge import LOCAL, Judge, Location
from .kubectl import judge_kubectl
from .probing import judge_local, probe_scan
from .reading import SPECIAL, Segment, lenient_stages, read_stages

__all__ = ["CommandJudge", "classify", "judge_command"]

_SSH_VALUED = frozenset("oipFlJEcmLRDWbBQSw")


class CommandJudge(Judge):
    """The dispatch: each stage to the shell it runs in (``sh -c``, ``ssh``), kubectl, or a host rule."""

    __slots__ = ()

    def stages(self, segs: list[Segment], loc: Location, depth: int) -> None:
        prev: Segment | None = None
        for seg in segs:
            if seg.argv:
                self.command(seg.argv, seg.stdin, prev, loc, depth, xargs=False)
                for w in seg.writes:
                    self.write_target(w, loc, "redirects output into")
            prev = seg

    def command(self, argv: list[str], stdin: str | None, prev: Segment | None, loc: Location, depth: int, *, xargs: bool) -> None:
        if depth > 6 or not argv:
            return
        argv, xargs2, loc = self.unwrap(argv, loc)
        xargs = xargs or xargs2
        if not argv:
            return
        name = argv[0].rsplit("/", 1)[-1]
        if name == "kubectl":
            judge_kubectl(self, argv[1:], stdin, prev, loc, depth, xargs)
            return
        if name == "ssh":
            self.ssh(argv[1:], stdin, depth)
            return
        if name in ("sh", "bash", "dash", "zsh", "ash", "ksh", "busybox-sh"):
            body = None
            if "-c" in argv[1:]:
                k = argv.index("-c", 1)
                body = argv[k + 1] if k + 1 < len(argv) else ""
            elif len(argv) == 1 or argv[1] in ("-s", "-"):
                body = stdin
            if body:
                self.stages(lenient_stages(body), loc, depth + 1)
            return
        if name == "submit" and loc.kind == "local":
            return
        if loc.kind == "local":
            judge_local(self, name, argv)
        self.host(name, argv, stdin, loc, depth, xargs)

    def unwrap(self, argv: list[str], loc: Location) -> tuple[list[str], bool, Location]:
        """Strip command prefixes that run their argument: sudo, env, timeout, chroot, nsenter, xargs..."""
        xargs = False
        for _ in range(8):
            if not argv:
                break
            name = argv[0].rsplit("/", 1)[-1]
            if name in ("sudo", "doas"):
                i = 1
                while i < len(argv) and argv[i].startswith("-"):
                    i += 2 if argv[i] in ("-u", "-g", "-C", "-h", "-p", "-U") else 1
                argv = argv[i:]
            elif name == "env":
                i = 1
                while i < len(argv) and (argv[i].startswith("-") or "=" in argv[i]):
                    i += 2 if argv[i] in ("-u", "-C", "-S") else 1
                if i >= len(argv):
                    return argv, xargs, loc  # plain `env`: prints the environment
                argv = argv[i:]
            elif name in ("timeout", "nice", "ionice", "stdbuf", "nohup", "time", "exec", "command", "setsid", "unbuffer", "watch"):
                i = 1
                while i < len(argv) and argv[i].startswith("-"):
                    i += 2 if argv[i] in ("-n", "-s", "-k", "-c", "-i", "-o", "-e") else 1
                if name == "timeout" and i < len(argv):
                    i += 1  # the duration
                argv = argv[i:]
            elif name == "busybox" and len(argv) > 1:
                argv = argv[1:]
            elif name == "chroot":
                i = 1
                while i < len(argv) and argv[i].startswith("-"):
                    i += 1
                argv = argv[i + 1 :]
                if not argv:
                    return ["sh"], xargs, loc
            elif name == "nsenter":
                i = 1
                escape = False
                while i < len(argv) and argv[i].startswith("-"):
                    a = argv[i]
                    if a == "--":
                        i += 1
                        break
                    if a in ("-t", "--target"):
                        escape = escape or (i + 1 < len(argv) and argv[i + 1] == "1")
                        i += 2
                        continue
                    if a.startswith(("--target=", "-t")) and a.rsplit("=", 1)[-1].lstrip("-t") == "1":
                        escape = True
                    i += 1
                if escape and loc.kind == "pod":
                    self.acc.add(C.PRIVILEGE_BYPASS, S.HIGH, f"nsenter into PID 1's namespaces escapes pod {loc.pod} onto its node")
                argv = argv[i:]
            elif name == "xargs":
                i = 1
                while i < len(argv) and argv[i].startswith("-"):
                    a = argv[i]
                    i += 2 if a in ("-n", "-I", "-P", "-L", "-d", "-E", "-s", "-a") else 1
                argv = argv[i:]
                xargs = True
            else:
                break
        return argv, xargs, loc

    def ssh(self, argv: list[str], stdin: str | None, depth: int) -> None:
        i = 0
        host = None
        while i < len(argv):
            a = argv[i]
            if a.startswith("-") and len(a) > 1:
                i += 2 if (a[1] in _SSH_VALUED and len(a) == 2) else 1
                continue
            host = a
            i += 1
            break
        if host is None:
            return
        node = host.rsplit("@", 1)[-1]
        where = Location("node", node=node)
        remote = argv[i:]
        if not remote:
            if stdin:
                self.stages(lenient_stages(stdin), where, depth + 1)
            return
        if all(not (set(r) & SPECIAL) and " " not in r and "|" not in r for r in remote):
            segs = [Segment(p.split()) for p in " ".join(remote).split("|") if p.strip()]
        else:
            segs = lenient_stages(" ".join(remote))
        if stdin and segs and segs[0].argv and segs[0].argv[0] in ("sh", "bash"):
            segs[0].stdin = stdin
        self.stages(segs, where, depth + 1)

    def host(self, name: str, argv: list[str], stdin: str | None, loc: Location, depth: int, xargs: bool) -> None:
        rule = storage_rule(name) or system_rule(name)
        if rule is None:
            return
        before = self.acc.top()
        n_before = self.acc.size()
        rule(self, argv, stdin, loc, xargs)
        if loc.kind == "node" and (self.acc.size() != n_before or self.acc.top() != before):
            self.node_interference(loc.node, f"{name}")


# ----------------------------------------------------------------------------- entry points
def judge_command(command: Any, context: RiskContext, namespace: str = "default") -> Judgements:
    text = command if isinstance(command, str) else str(command)
    stripped = text.strip()
    if not stripped or stripped == "submit" or stripped.startswith(("submit ", "submit\n", "submit\t")):
        return Judgements(True)
    segs, executed = read_stages(text)
    acc = Judgements(executed)
    try:
        probe_scan(segs, acc)
        CommandJudge(context, acc, namespace or "default").stages(segs, LOCAL, 0)
    except Exception:  # never raise on agent input; keep what was judged before the surprise
        pass
    return acc


def classify(command: str, context: RiskContext, *, namespace: str = "default") -> tuple[RiskFlag, ...]:
    """Judge one command line; ``()`` when it is harmless. Never raises.

    ``namespace`` is the shell's current default namespace (kubectl commands
    without ``-n`` act there); :class:`RiskMonitor` tracks it across steps.
    """
    try:
        text = command if isinstance(command, str) else str(command)
        return judge_command(text, context, namespace).flags(text)
    except Exception:
        return ()
