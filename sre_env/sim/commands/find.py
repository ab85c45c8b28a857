"""``find`` on a node: walk the modelled tree, print matches, or ``-delete`` them.

The textbook way out of an inode exhaustion is ``find DIR -type f -delete``
(``rm DIR/*`` fails: the glob is longer than ARG_MAX). Files cron programs
wrote (:mod:`sre_env.sim.node.diskfill`) are deleted for real, freeing their blocks
and inodes; everything else on the node is read-only to this model, so
``-delete`` there reports what ``rm`` would. Directories holding millions of
files print a sample of their names (the listing the model keeps).
"""

from __future__ import annotations

import fnmatch

from sre_env.backend import ExecResult
from sre_env.sim.commands.host_files import fs_dirs, host_path
from sre_env.sim.commands.views import HostView
from sre_env.sim.kernel.hosts import FileRun
from sre_env.sim.node import diskfill
from sre_env.sim.node import files as hostfiles

__all__ = ["find"]

_MAX_LINES = 5000
#: predicates that take one argument and that this model accepts without filtering on them
_IGNORED_WITH_ARG = ("-mtime", "-mmin", "-atime", "-ctime", "-size", "-newer", "-user", "-group", "-perm")
_IGNORED = ("-xdev", "-mount", "-depth", "-print", "-print0", "-ls", "-follow", "-L", "-P", "-H", "-noleaf")


def find(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    args = argv[1:]
    roots: list[str] = []
    while args and not args[0].startswith(("-", "(", "!")):
        roots.append(args.pop(0))
    kind = name = None
    mindepth, maxdepth = 0, 1 << 30
    delete = False
    i = 0
    while i < len(args):
        a = args[i]
        nxt = args[i + 1] if i + 1 < len(args) else None
        if a in ("-type", "-name", "-iname", "-mindepth", "-maxdepth", *_IGNORED_WITH_ARG):
            if nxt is None:
                return ExecResult(f"find: missing argument to `{a}'\n", 1)
            if a == "-type":
                if nxt not in ("f", "d", "l"):
                    return ExecResult(f"find: Unknown argument to -type: {nxt}\n", 1)
                kind = nxt
            elif a in ("-name", "-iname"):
                name = nxt
            elif a in ("-mindepth", "-maxdepth"):
                if not nxt.isdigit():
                    return ExecResult(f"find: Expected a positive decimal integer argument to {a}, but got `{nxt}'\n", 1)
                if a == "-mindepth":
                    mindepth = int(nxt)
                else:
                    maxdepth = int(nxt)
            i += 2
            continue
        if a == "-delete":
            delete = True
        elif a in ("-exec", "-execdir"):
            rest = args[i + 1 :]
            end = next((k for k, w in enumerate(rest) if w in (";", "\\;", "+")), None)
            if end is None:
                return ExecResult(f"find: missing argument to `{a}'\n", 1)
            if rest and rest[0].rsplit("/", 1)[-1] == "rm":
                delete = True
            i += end + 2
            continue
        elif a not in _IGNORED:
            return ExecResult(f"find: unknown predicate `{a}'\n", 1)
        i += 1
    dirs = fs_dirs(view)
    out: list[str] = []
    err: list[str] = []
    for root in roots or ["."]:
        start = host_path(root)
        if start not in dirs:
            err.append(f"find: '{root}': No such file or directory\n")
            continue
        stack = [(start, 0)]
        while stack:
            d, depth = stack.pop()
            if depth >= mindepth and kind in (None, "d") and (name is None or fnmatch.fnmatchcase(d.rsplit("/", 1)[-1] or "/", name)) and not delete:
                out.append(d + "\n")
            if depth >= maxdepth:
                continue
            fd = diskfill.fill_dirs(view.node).get(d)
            if fd is not None and depth + 1 >= mindepth and kind in (None, "f"):
                if delete:
                    for run in list(fd.runs):
                        if name is None or any(fnmatch.fnmatchcase(n, name) for n in run.names):
                            _drop_run(view, d, run)
                    continue
                for run in fd.runs:
                    out.extend(f"{d}/{n}\n" for n in run.names if name is None or fnmatch.fnmatchcase(n, name))
            for e in reversed(dirs.get(d, [])):
                child = f"{d.rstrip('/')}/{e.rstrip('/')}"
                if e.endswith("/"):
                    if child not in ("/proc", "/sys"):
                        stack.append((child, depth + 1))
                elif fd is None and depth + 1 >= mindepth and kind in (None, "f") and (name is None or fnmatch.fnmatchcase(e, name)):
                    if delete:
                        if not hostfiles.remove(view.node, child):
                            err.append(f"find: cannot delete '{child}': Read-only file system\n")
                    else:
                        out.append(child + "\n")
            if len(out) > _MAX_LINES:
                break
    return ExecResult("".join(out[:_MAX_LINES]) + "".join(err), 1 if err else 0)


def _drop_run(view: HostView, directory: str, run: FileRun) -> None:
    fd = diskfill.fill_dirs(view.node)[directory]
    root = view.node.disks[0]
    root.used_bytes = max(int(root.used_bytes) - run.blocks_bytes, 0)
    root.inodes_used = max(int(root.inodes_used) - run.count, 0)
    fd.runs.remove(run)
