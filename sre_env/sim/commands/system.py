"""Host system tools: ``ps``, ``systemctl``, ``sysctl``, memory/uptime, ``ip``, ``chronyc``, ``crictl``.

The process table is assembled from the node (daemons, kubelet if running)
and the pods bound to it (a shim, a pause process and each running
container's PID 1). A process whose data lives on a disk that is failing
shows state ``D`` (uninterruptible I/O wait), a classic clue on real machines.
"""

from __future__ import annotations

from typing import Any

from sre_env.backend import ExecResult
from sre_env.kube.timefmt import parse_iso_safe
from sre_env.sim.commands.common import (
    go_human_duration,
    human_free,
    running_containers,
)
from sre_env.sim.commands.journal import journal_entries, norm_unit, unit_pid
from sre_env.sim.commands.views import ContainerView, HostView
from sre_env.sim.kernel.hashing import stable_hash
from sre_env.sim.kernel.hosts import HostNode
from sre_env.sim.node import files as hostfiles
from sre_env.sim.node.containerd import container_id, sandbox_id
from sre_env.sim.node.faults import conntrack_count
from sre_env.sim.node.stats import load_average
from sre_env.sim.node.wallclock import wall
from sre_env.sim.runtime.image_contents import image_info, process_cmdline

__all__ = [
    "host_processes",
    "ps",
    "systemctl",
    "sysctl",
    "all_sysctls",
    "free",
    "meminfo",
    "uptime",
    "loadavg",
    "ip",
    "chronyc",
    "timedatectl",
    "crictl",
    "failing_data_disk",
    "format_ps",
]

#: (user, pid, ppid, %cpu, %mem, vsz KiB, rss KiB, tty, stat, start sim-time, cpu seconds, command, wchan)
Proc = tuple[str, int, int, float, float, int, int, str, str, float, float, str, str]


def failing_data_disk(node: HostNode, now: float):
    """The local-PV disk currently returning read errors, if any (approximates which PV a pod uses)."""
    for d in node.disks[1:]:
        if d.bad_read_fraction > 0 and d.mountpoint != "/":
            return d
    return None


def _uses_pvc(pod: dict[str, Any]) -> bool:
    return any(isinstance(v, dict) and "persistentVolumeClaim" in v for v in (pod.get("spec") or {}).get("volumes") or ())


def host_processes(node: HostNode, now: float, pods: list[dict[str, Any]], self_cmd: str = "ps aux") -> list[Proc]:
    boot = now - node.uptime(now)
    up = node.uptime(now)
    mem_k = max(int(node.memory_bytes) // 1024, 1)

    def pm(rss: int) -> float:
        return round(rss * 100.0 / mem_k, 1)

    procs: list[Proc] = [
        ("root", 1, 0, 0.0, pm(13_104), 168_096, 13_104, "?", "Ss", boot, up * 0.00012, "/sbin/init", "ep_poll"),
        ("root", 2, 0, 0.0, 0.0, 0, 0, "?", "S", boot, 0.02, "[kthreadd]", "kthreadd"),
        ("root", 3, 2, 0.0, 0.0, 0, 0, "?", "I<", boot, 0.0, "[rcu_gp]", "rescuer_thread"),
        ("root", 4, 2, 0.0, 0.0, 0, 0, "?", "I<", boot, 0.0, "[rcu_par_gp]", "rescuer_thread"),
        ("root", 14, 2, 0.0, 0.0, 0, 0, "?", "S", boot, up * 0.00002, "[ksoftirqd/0]", "smpboot_thread_fn"),
        ("root", 15, 2, 0.0, 0.0, 0, 0, "?", "I", boot, up * 0.0003, "[rcu_preempt]", "rcu_gp_kthread"),
        ("root", 62, 2, 0.0, 0.0, 0, 0, "?", "S", boot, 0.0, "[kswapd0]", "kswapd"),
    ]
    pid = 190
    for i, d in enumerate(node.disks):
        if not d.mountpoint:
            continue
        pid += 3 + i
        stuck = d.bad_read_fraction > 0 and bool(d.error_ticks) and now - float(d.error_ticks[-1][0]) < 120
        procs.append(("root", pid, 2, 0.0, 0.0, 0, 0, "?", "D" if stuck else "S", boot + 1.4, up * 0.00001, f"[jbd2/{d.device}1-8]", "io_schedule" if stuck else "kjournald2"))
        if stuck:
            procs.append(("root", 9_000 + stable_hash(d.device, int(now // 30)) % 900, 2, 0.3, 0.0, 0, 0, "?", "D", now - 30 - now % 30, 1.2, f"[kworker/u{2 * node.cpu_cores}:{stable_hash(d.device) % 9}+flush-8:{16 * i}]", "io_schedule"))
    procs += [
        ("root", 231 + stable_hash(node.name, "systemd-journald") % 40, 1, 0.0, pm(41_212), 48_412, 41_212, "?", "Ss", boot + 1.9, up * 0.00004, "/lib/systemd/systemd-journald", "ep_poll"),
        ("root", 262, 1, 0.0, pm(6_320), 26_128, 6_320, "?", "Ss", boot + 2.0, 0.9, "/lib/systemd/systemd-udevd", "ep_poll"),
        ("root", 455 + stable_hash(node.name, "cron") % 40, 1, 0.0, pm(2_612), 6_608, 2_612, "?", "Ss", boot + 3.0, 0.4, "/usr/sbin/cron -f", "hrtimer_nanosleep"),
        ("message+", 458, 1, 0.0, pm(4_780), 9_124, 4_780, "?", "Ss", boot + 3.0, 0.3, "/usr/bin/dbus-daemon --system --address=systemd: --nofork --nopidfile --systemd-activation --syslog-only", "ep_poll"),
        ("_chrony", unit_pid(node, "chronyd"), 1, 0.0, pm(3_512), 18_956, 3_512, "?", "S", boot + 3.1, 1.1, "/usr/sbin/chronyd -F 1", "do_select"),
        ("root", 512, 1, 0.0, pm(7_904), 16_412, 7_904, "?", "Ss", boot + 3.1, 0.1, "/lib/systemd/systemd-logind", "ep_poll"),
        ("root", 530, 1, 0.0, 0.0, 5_868, 1_056, "ttyS0", "Ss+", boot + 3.2, 0.0, "/sbin/agetty -o -p -- \\u --keep-baud 115200,57600,38400,9600 - vt220", "do_select"),
        ("root", 531, 1, 0.0, 0.0, 5_868, 992, "tty1", "Ss+", boot + 3.2, 0.0, "/sbin/agetty -o -p -- \\u --noclear - linux", "do_select"),
        ("root", unit_pid(node, "sshd"), 1, 0.0, pm(9_344), 15_432, 9_344, "?", "Ss", boot + 3.3, 0.2, "sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups", "do_sys_poll"),
        ("root", unit_pid(node, "containerd"), 1, 0.6, pm(61_220), 2_061_412, 61_220, "?", "Ssl", boot + 3.3, up * 0.006, "/usr/bin/containerd", "futex_wait_queue"),
    ]
    if node.kubelet_running:
        kstart = _kubelet_since(node, now)
        procs.append(
            (
                "root", unit_pid(node, "kubelet"), 1, 1.6, pm(98_416), 2_117_360, 98_416, "?", "Ssl", kstart, (now - kstart) * 0.016,
                "/usr/bin/kubelet --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf "
                "--config=/var/lib/kubelet/config.yaml --container-runtime-endpoint=unix:///run/containerd/containerd.sock "
                f"--node-ip={node.internal_ip or '10.0.0.' + str(10 + node.index)} --pod-infra-container-image=registry.k8s.io/pause:3.10",
                "futex_wait_queue",
            )
        )
    bad = failing_data_disk(node, now)
    stuck_disk = bad is not None and bool(bad.error_ticks) and now - float(bad.error_ticks[-1][0]) < 120
    pid = 1_100 + stable_hash(node.name) % 300
    seen_pods: set[str] = set()
    items = running_containers(pods)
    items.sort(key=lambda x: (parse_iso_safe(((x[2].get("state") or {}).get("running") or {}).get("startedAt")) or 0.0, str((x[0].get("metadata") or {}).get("name"))))
    for pod, spec, st in items:
        meta = pod.get("metadata") or {}
        key = str(meta.get("uid") or meta.get("name"))
        started = parse_iso_safe(((st.get("state") or {}).get("running") or {}).get("startedAt"))
        if started is None:
            started = parse_iso_safe((pod.get("status") or {}).get("startTime")) or now - 600
        if key not in seen_pods:
            seen_pods.add(key)
            sid = sandbox_id(pod)
            pid += 7 + stable_hash(key) % 20
            procs.append(("root", pid, 1, 0.0, pm(12_004), 1_238_216, 12_004, "?", "Sl", started - 1.2, max(now - started, 0) * 0.0004, f"/usr/bin/containerd-shim-runc-v2 -namespace k8s.io -id {sid} -address /run/containerd/containerd.sock", "futex_wait_queue"))
            shim = pid
            pid += 20
            procs.append(("65535", pid, shim, 0.0, 0.0, 1_020, 4, "?", "Ss", started - 1.0, 0.0, "/pause", "do_sys_poll"))
        pid += 12 + stable_hash(key, st.get("name"), st.get("restartCount", 0)) % 30
        info = image_info(str(spec.get("image") or st.get("image") or ""))
        cmd = " ".join(process_cmdline(spec or {"image": st.get("image", "")}, info))
        on_bad = stuck_disk and _uses_pvc(pod)
        rss = 20_000 + stable_hash(key, "rss") % 60_000 if info.family != "mongo" else 160_000 + stable_hash(key) % 40_000
        cpu = 0.1 + (stable_hash(key, "cpu") % 30) / 10.0
        stat = "Dsl" if on_bad else "Ssl"
        user = info.host_user
        procs.append((user, pid, shim, cpu, pm(rss), rss * 6 + 700_000, rss, "?", stat, started, max(now - started, 0) * cpu / 100, cmd, "folio_wait_bit_common" if on_bad else "futex_wait_queue"))
    procs.sort(key=lambda p: p[1])
    procs.append(("root", max(pid, procs[-1][1]) + 4_000 + int(now) % 3_000, 1, 0.0, 0.0, 11_084, 4_448, "pts/0", "R+", now, 0.0, self_cmd, "-"))
    return procs


def _start_col(node: HostNode, t: float, now: float) -> str:
    dt = wall(node, t)
    if now - t < 86_400:
        return f"{dt:%H:%M}"
    return f"{dt:%b%d}"


def _time_col(s: float) -> str:
    s = int(s)
    return f"{s // 60}:{s % 60:02d}"


def format_ps(node: HostNode, now: float, procs: list[Proc], style: str, columns: list[str] | None = None) -> str:
    """``aux`` (BSD), ``ef`` (System V) or ``-o`` custom columns, procps-ng 4 widths."""
    out = []
    if style == "aux":
        out.append("USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND")
        for u, pid, _pp, cpu, mem, vsz, rss, tty, stat, start, cs, cmd, _w in procs:
            out.append(f"{u[:8]:<8} {pid:>7} {cpu:>4.1f} {mem:>4.1f} {vsz:>6} {rss:>5} {tty:<8} {stat:<4} {_start_col(node, start, now):>5} {_time_col(cs):>6} {cmd}")
    elif style == "ef":
        out.append("UID          PID    PPID  C STIME TTY          TIME CMD")
        for u, pid, pp, cpu, _m, _v, _r, tty, _s, start, cs, cmd, _w in procs:
            c = int(cpu)
            t = int(cs)
            out.append(f"{u[:8]:<8} {pid:>7} {pp:>7} {c:>2} {_start_col(node, start, now):<5} {tty:<8} {t // 3600:02d}:{t % 3600 // 60:02d}:{t % 60:02d} {cmd}")
    else:
        cols = columns or ["pid", "tty", "time", "cmd"]
        heads = {"pid": ("PID", 7), "ppid": ("PPID", 7), "user": ("USER", -8), "uid": ("UID", 5), "stat": ("STAT", -4), "state": ("S", -1),
                 "comm": ("COMMAND", -15), "cmd": ("CMD", 0), "args": ("COMMAND", 0), "command": ("COMMAND", 0), "%cpu": ("%CPU", 4),
                 "pcpu": ("%CPU", 4), "%mem": ("%MEM", 4), "pmem": ("%MEM", 4), "rss": ("RSS", 5), "vsz": ("VSZ", 6), "etime": ("ELAPSED", 11),
                 "time": ("TIME", 8), "wchan": ("WCHAN", -6), "tty": ("TT", -8), "lstart": ("STARTED", 24)}
        for c in cols:
            if c not in heads:
                return ""
        def cell(c: str, p: Proc) -> str:
            u, pid, pp, cpu, mem, vsz, rss, tty, stat, start, cs, cmd, wchan = p
            return {
                "pid": str(pid), "ppid": str(pp), "user": u[:8], "uid": "0" if u == "root" else u, "stat": stat, "state": stat[0],
                "comm": (cmd.split()[0].rsplit("/", 1)[-1].rstrip(":") if not cmd.startswith("[") else cmd.strip("[]"))[:15], "cmd": cmd, "args": cmd, "command": cmd,
                "%cpu": f"{cpu:.1f}", "pcpu": f"{cpu:.1f}", "%mem": f"{mem:.1f}", "pmem": f"{mem:.1f}", "rss": str(rss), "vsz": str(vsz),
                "etime": _etime(now - start), "time": f"{int(cs) // 3600:02d}:{int(cs) % 3600 // 60:02d}:{int(cs) % 60:02d}", "wchan": wchan, "tty": tty,
                "lstart": f"{wall(node, start):%a %b %d %H:%M:%S %Y}",
            }[c]
        rows = [[cell(c, p) for c in cols] for p in procs]
        widths = [max(abs(heads[c][1]), len(heads[c][0]), *(len(r[k]) for r in rows)) if heads[c][1] else 0 for k, c in enumerate(cols)]
        def line(vals: list[str]) -> str:
            parts = []
            for k, c in enumerate(cols):
                w = widths[k]
                v = vals[k]
                if k == len(cols) - 1 and heads[c][1] <= 0:
                    parts.append(v)
                elif heads[c][1] < 0 or heads[c][1] == 0:
                    parts.append(v.ljust(w))
                else:
                    parts.append(v.rjust(w))
            return " ".join(parts).rstrip()
        out.append(line([heads[c][0] for c in cols]))
        out += [line(r) for r in rows]
    return "\n".join(out) + "\n"


def _etime(s: float) -> str:
    s = int(max(s, 0))
    d, rem = divmod(s, 86_400)
    h, rem = divmod(rem, 3600)
    m, sec = divmod(rem, 60)
    if d:
        return f"{d}-{h:02d}:{m:02d}:{sec:02d}"
    if h:
        return f"{h:02d}:{m:02d}:{sec:02d}"
    return f"{m:02d}:{sec:02d}"


def ps(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    node, now, pods = view.node, view.now, view.pods
    args = argv[1:]
    self_cmd = " ".join(argv)
    procs = host_processes(node, now, pods, self_cmd)
    if not args:
        return ExecResult("    PID TTY          TIME CMD\n" + f"{procs[-1][1] - 2:>7} pts/0    00:00:00 bash\n{procs[-1][1]:>7} pts/0    00:00:00 ps\n", 0)
    joined = " ".join(args)
    if args[0] in ("aux", "-aux", "auxf", "auxww", "auxw", "axu", "-ax", "ax", "aux --sort=-%cpu", "aux --sort=-%mem") or joined.startswith("aux "):
        return ExecResult(format_ps(node, now, procs, "aux"), 0)
    if args[0] in ("-ef", "-e", "-A", "-efww", "-eF", "-elf", "-efH") and len(args) == 1:
        return ExecResult(format_ps(node, now, procs, "ef"), 0)
    cols: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-e", "-A", "ax", "-ax"):
            i += 1
            continue
        if a in ("-o", "o") or a.startswith("-o") or a in ("-eo",):
            spec = a[2:] if a.startswith("-o") and len(a) > 2 else (args[i + 1] if i + 1 < len(args) else "")
            if a == "-eo":
                spec = args[i + 1] if i + 1 < len(args) else ""
            if not spec:
                return ExecResult("error: list of process IDs must follow -p\n" if a == "-p" else "error: improper list\n\nUsage:\n ps [options]\n\n Try 'ps --help <simple|list|output|threads|misc|all>'\n  or 'ps --help <s|l|o|t|m|a>'\n for additional help text.\n\nFor more details see ps(1).\n", 1)
            cols += [c.split("=")[0].strip().lower() for c in spec.split(",") if c.strip()]
            i += 1 if (a.startswith("-o") and len(a) > 2 and a != "-eo") else 2
            continue
        if a.startswith("--sort"):
            i += 1 if "=" in a else 2
            continue
        if a in ("-p", "--pid"):
            i += 2
            continue
        return ExecResult(
            "error: unsupported option (BSD syntax)\n\nUsage:\n ps [options]\n\n Try 'ps --help <simple|list|output|threads|misc|all>'\n  or 'ps --help <s|l|o|t|m|a>'\n for additional help text.\n\nFor more details see ps(1).\n"
            if not a.startswith("-") else
            "error: unsupported SysV option\n\nUsage:\n ps [options]\n\n Try 'ps --help <simple|list|output|threads|misc|all>'\n  or 'ps --help <s|l|o|t|m|a>'\n for additional help text.\n\nFor more details see ps(1).\n",
            1,
        )
    if not cols:
        return ExecResult(format_ps(node, now, procs, "ef"), 0)
    text = format_ps(node, now, procs, "o", cols)
    if not text:
        bad = next(c for c in cols if c not in ("pid", "ppid", "user", "uid", "stat", "state", "comm", "cmd", "args", "command", "%cpu", "pcpu", "%mem", "pmem", "rss", "vsz", "etime", "time", "wchan", "tty", "lstart"))
        return ExecResult(f"error: unknown user-defined format specifier \"{bad}\"\n\nUsage:\n ps [options]\n\n Try 'ps --help <simple|list|output|threads|misc|all>'\n  or 'ps --help <s|l|o|t|m|a>'\n for additional help text.\n\nFor more details see ps(1).\n", 1)
    return ExecResult(text, 0)


# --------------------------------------------------------------------------- systemctl

_UNITS = {
    "kubelet": ("kubelet: The Kubernetes Node Agent", "/lib/systemd/system/kubelet.service", "https://kubernetes.io/docs/"),
    "containerd": ("containerd container runtime", "/lib/systemd/system/containerd.service", "https://containerd.io"),
    "chrony": ("chrony, an NTP client/server", "/lib/systemd/system/chrony.service", "man:chronyd(8) man:chronyc(1) man:chrony.conf(5)"),
    "ssh": ("OpenBSD Secure Shell server", "/lib/systemd/system/ssh.service", "man:sshd(8) man:sshd_config(5)"),
    "cron": ("Regular background program processing daemon", "/lib/systemd/system/cron.service", "man:cron(8)"),
    "systemd-journald": ("Journal Service", "/lib/systemd/system/systemd-journald.service", "man:systemd-journald.service(8) man:journald.conf(5)"),
}
#: units an operator may stop or disable on these hosts
_STOPPABLE = ("kubelet", "chrony")
_ALIASES = {"chronyd": "chrony", "sshd": "ssh", "journald": "systemd-journald", "docker": "", "crio": ""}


def _ago(s: float) -> str:
    s = int(max(s, 0))
    if s < 60:
        return f"{s}s ago"
    if s < 3600:
        return f"{s // 60}min ago"
    if s < 86_400:
        h, m = divmod(s // 60, 60)
        return f"{h}h {m}min ago" if m else f"{h}h ago"
    d = s // 86_400
    return f"{d} day{'s' if d != 1 else ''} ago" if d < 14 else f"{d // 7} weeks ago"


def _kubelet_since(node: HostNode, now: float) -> float:
    """When the kubelet (re)started, or stopped: the latest kubelet start/stop mention in the journal."""
    boot = now - node.uptime(now)
    last = boot + 3.5
    for item in node.journal:
        try:
            t, unit, text = item
        except (TypeError, ValueError):
            continue
        u = norm_unit(str(unit))
        txt = str(text)
        if float(t) <= now and (u == "systemd" and "kubelet" in txt or u == "kubelet" and ("Started kubelet" in txt or "Stopp" in txt or "Kubelet version" in txt)):
            last = float(t)
    return last


def _is_active(node: HostNode, unit: str) -> bool:
    if unit == "kubelet":
        return bool(node.kubelet_running)
    if unit == "chrony":
        return bool(node.chrony_running)
    return unit in _UNITS


def systemctl(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    node, now, pods, restart_unit, variant = view.node, view.now, view.pods, view.restart_unit, view.variant
    args = [a for a in argv[1:] if a not in ("--no-pager", "-l", "--full", "--quiet", "-q", "--no-legend", "--plain")]
    quiet = "-q" in argv or "--quiet" in argv
    if not args:
        args = ["list-units"]
    verb = args[0]
    names = [norm_unit(_ALIASES.get(norm_unit(a), norm_unit(a))) for a in args[1:] if not a.startswith("-")]
    if verb.startswith("-"):
        return ExecResult(f"systemctl: unrecognized option '{verb}'\n" if verb.startswith("--") else f"systemctl: invalid option -- '{verb[1:2]}'\n", 1)
    if verb == "is-active":
        if not names:
            return ExecResult("Too few arguments.\n", 1)
        outs = ["active" if _is_active(node, n) else "inactive" for n in names]
        code = 0 if all(o == "active" for o in outs) else 3
        return ExecResult("" if quiet else "\n".join(outs) + "\n", code)
    if verb == "is-enabled":
        if not names:
            return ExecResult("Too few arguments.\n", 1)
        for n in names:
            if n not in _UNITS:
                return ExecResult(f"Failed to get unit file state for {n}.service: No such file or directory\n", 1)
        states = ["disabled" if n in node.disabled_units else "enabled" for n in names]
        return ExecResult("" if quiet else "\n".join(states) + "\n", 0 if all(st == "enabled" for st in states) else 1)
    if verb == "is-failed":
        return ExecResult("" if quiet else "active\n" * max(len(names), 1), 1)
    if verb in ("restart", "start", "reload-or-restart", "try-restart", "reload"):
        if not names:
            return ExecResult("Too few arguments.\n", 1)
        for n in names:
            if n not in _UNITS:
                return ExecResult(f"Failed to {verb} {n}.service: Unit {n}.service not found.\n", 5)
            if verb == "start" and _is_active(node, n):
                continue
            if verb == "reload" and n == "kubelet":
                return ExecResult("Failed to reload kubelet.service: Job type reload is not applicable for unit kubelet.service.\n", 1)
            if n in ("kubelet", "containerd") and restart_unit is not None:
                if not restart_unit(n):
                    return ExecResult(f"Job for {n}.service failed because the control process exited with error code.\nSee \"systemctl status {n}.service\" and \"journalctl -xeu {n}.service\" for details.\n", 1)
        return ExecResult("", 0)
    if verb in ("stop", "kill", "disable", "mask", "enable", "unmask"):
        if not names:
            return ExecResult("Too few arguments.\n", 1)
        for n in names:
            if n not in _UNITS:
                return ExecResult(f"Failed to {verb} unit: Unit file {n}.service does not exist.\n" if verb in ("disable", "enable", "mask") else f"Failed to {verb} {n}.service: Unit {n}.service not loaded.\n", 5)
        now_too = "--now" in argv
        out = ""
        if verb in ("enable", "disable"):
            for n in names:
                link = f"/etc/systemd/system/multi-user.target.wants/{n}.service"
                if verb == "enable" and n in node.disabled_units:
                    node.disabled_units.discard(n)
                    out += f"Created symlink {link} \u2192 {_UNITS[n][1]}.\n"
                elif verb == "disable" and n not in node.disabled_units and n in _STOPPABLE:
                    node.disabled_units.add(n)
                    out += f"Removed \"{link}\".\n"
            if verb == "enable" and now_too:
                for n in names:
                    if not _is_active(node, n) and restart_unit is not None and not restart_unit(n):
                        return ExecResult(out + f"Job for {n}.service failed because the control process exited with error code.\n", 1)
            if verb == "enable" or not now_too:
                return ExecResult(out, 0)
        if verb == "unmask":
            return ExecResult("", 0)
        if verb in ("stop", "disable") and all(n in _STOPPABLE for n in names):
            for n in names:
                if n == "kubelet" and node.kubelet_running:
                    node.kubelet_running = False
                    node.journal.append((now, "systemd", "Stopping kubelet.service - kubelet: The Kubernetes Node Agent..."))
                    node.journal.append((now, "systemd", "kubelet.service: Deactivated successfully."))
                    node.journal.append((now, "systemd", "Stopped kubelet.service - kubelet: The Kubernetes Node Agent."))
                elif n == "chrony" and node.chrony_running:
                    node.chrony_running = False
                    node.journal.append((now, "chronyd", "chronyd exiting"))
                    node.journal.append((now, "systemd", "Stopped chrony.service - chrony, an NTP client/server."))
            return ExecResult(out, 0)
        # other node daemons: this host's policy refuses to stop them
        return ExecResult(f"Failed to {verb} {names[0]}.service: Access denied\nSee system logs and 'systemctl status {names[0]}.service' for details.\n", 1)
    if verb == "daemon-reload":
        return ExecResult("", 0)
    if verb in ("list-units", "list-unit-files", "--failed", "list-timers"):
        failed = "--failed" in argv or "--state=failed" in argv
        rows = []
        for n, (desc, _p, _d) in sorted(_UNITS.items()):
            act = _is_active(node, n)
            if failed:
                continue
            rows.append(f"  {n + '.service':<32} loaded {'active  ' if act else 'inactive'} {'running' if act else 'dead   '} {desc}")
        head = "  UNIT                             LOAD   ACTIVE   SUB     DESCRIPTION"
        tail = f"\nLOAD   = Reflects whether the unit definition was properly loaded.\nACTIVE = The high-level unit activation state, i.e. generalization of SUB.\nSUB    = The low-level unit activation state, values depend on unit type.\n{len(rows)} loaded units listed.\n"
        return ExecResult(head + "\n" + "\n".join(rows) + ("\n" if rows else "") + tail, 0)
    if verb == "status":
        if not names:
            names = []
            return ExecResult(f"● {node.name}\n    State: running\n    Units: 231 loaded (incl. loaded aliases)\n     Jobs: 0 queued\n   Failed: 0 units\n    Since: {_since_str(node, now - node.uptime(now))}; {_ago(node.uptime(now))}\n  systemd: 252.30-1~deb12u2\n   CGroup: /\n", 0)
        out = []
        code = 0
        for n in names:
            if n not in _UNITS:
                out.append(f"Unit {n}.service could not be found.")
                code = 4
                continue
            text, c = _status_one(node, now, pods, n, variant)
            out.append(text)
            code = max(code, c)
        return ExecResult("\n".join(out) + "\n", code)
    if verb == "show":
        if not names:
            return ExecResult("", 0)
        n = names[0]
        act = _is_active(node, n)
        return ExecResult(f"Id={n}.service\nActiveState={'active' if act else 'inactive'}\nSubState={'running' if act else 'dead'}\nMainPID={unit_pid(node, n) if act else 0}\nLoadState={'loaded' if n in _UNITS else 'not-found'}\n", 0)
    return ExecResult(f'Unknown command verb {verb}.\n', 1)


def _since_str(node: HostNode, t: float) -> str:
    dt = wall(node, t)
    return f"{dt:%a %Y-%m-%d %H:%M:%S} UTC"


def _status_one(node: HostNode, now: float, pods: list[dict[str, Any]], n: str, variant: int) -> tuple[str, int]:
    desc, path, docs = _UNITS[n]
    act = _is_active(node, n)
    boot = now - node.uptime(now)
    since = _kubelet_since(node, now) if n == "kubelet" else boot + 3.3
    pid = unit_pid(node, n)
    lines = [f"{'●' if act else '○'} {n}.service - {desc}", f"     Loaded: loaded ({path}; enabled; preset: enabled)"]
    if n == "kubelet":
        lines += ["    Drop-In: /usr/lib/systemd/system/kubelet.service.d", "             └─10-kubeadm.conf"]
    if act:
        lines.append(f"     Active: active (running) since {_since_str(node, since)}; {_ago(now - since)}")
    else:
        lines.append(f"     Active: inactive (dead) since {_since_str(node, since)}; {_ago(now - since)}")
    lines.append(f"       Docs: {docs}")
    if act:
        mem = {"kubelet": "96.1M", "containerd": "59.8M"}.get(n, "3.4M")
        cpu_s = (now - since) * (0.016 if n == "kubelet" else 0.006 if n == "containerd" else 0.0001)
        exe = {"kubelet": "/usr/bin/kubelet --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf --config=/var/lib/kubelet/config.yaml --container-runtime-endpoint=unix:///run/containerd/containerd.sock",
               "containerd": "/usr/bin/containerd", "chrony": "/usr/sbin/chronyd -F 1", "ssh": '"sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups"',
               "cron": "/usr/sbin/cron -f", "systemd-journald": "/lib/systemd/systemd-journald"}[n]
        lines += [
            f"   Main PID: {pid} ({exe.split()[0].strip(chr(34)).rsplit('/', 1)[-1].rstrip(':')})",
            f"      Tasks: {18 if n == 'kubelet' else 14 if n == 'containerd' else 1} (limit: {max(int(node.memory_bytes) // 880_000, 1000)})",
            f"     Memory: {mem}",
            f"        CPU: {_cpu_span(cpu_s)}",
            f"     CGroup: /system.slice/{n}.service",
            f"             └─{pid} {exe}",
        ]
    else:
        lines += [
            f"    Process: {pid} ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS (code=exited, status=0/SUCCESS)",
            f"   Main PID: {pid} (code=exited, status=0/SUCCESS)",
            f"        CPU: {_cpu_span(node.uptime(now) * 0.016)}",
        ]
    tail = [e for e in journal_entries(node, now, pods, variant, kernel=False) if e[1] == n or (e[1] == "systemd" and f"{n}.service" in e[3])][-10:]
    if tail:
        lines.append("")
        for t, u, _p, text in tail:
            dt = wall(node, t)
            ident = "systemd[1]" if u == "systemd" else f"{u}[{unit_pid(node, u)}]"
            lines.append(f"{dt:%b %d %H:%M:%S} {node.name} {ident}: {text}")
    return "\n".join(lines), 0 if act else 3


def _cpu_span(s: float) -> str:
    s = max(s, 0.001)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    parts = []
    if h >= 1:
        parts.append(f"{int(h)}h")
    if m >= 1 or h >= 1:
        parts.append(f"{int(m)}min")
    parts.append(f"{sec:.3f}s")
    return " ".join(parts)


# --------------------------------------------------------------------------- sysctl

_SYSCTL_DEFAULTS: dict[str, str] = {
    "fs.aio-max-nr": "65536",
    "fs.file-max": "9223372036854775807",
    "fs.file-nr": "4224\t0\t9223372036854775807",
    "fs.inotify.max_user_instances": "128",
    "fs.inotify.max_user_watches": "124560",
    "fs.nr_open": "1048576",
    "kernel.hostname": "",
    "kernel.osrelease": "",
    "kernel.panic": "10",
    "kernel.panic_on_oops": "1",
    "kernel.pid_max": "4194304",
    "kernel.printk": "4\t4\t1\t7",
    "kernel.printk_ratelimit": "5",
    "kernel.printk_ratelimit_burst": "10",
    "kernel.randomize_va_space": "2",
    "kernel.sched_autogroup_enabled": "1",
    "kernel.threads-max": "126906",
    "net.bridge.bridge-nf-call-arptables": "1",
    "net.bridge.bridge-nf-call-ip6tables": "1",
    "net.bridge.bridge-nf-call-iptables": "1",
    "net.core.netdev_max_backlog": "1000",
    "net.core.rmem_default": "212992",
    "net.core.rmem_max": "212992",
    "net.core.somaxconn": "4096",
    "net.core.wmem_default": "212992",
    "net.core.wmem_max": "212992",
    "net.ipv4.conf.all.forwarding": "1",
    "net.ipv4.conf.all.rp_filter": "0",
    "net.ipv4.conf.default.rp_filter": "0",
    "net.ipv4.icmp_echo_ignore_all": "0",
    "net.ipv4.ip_forward": "1",
    "net.ipv4.ip_local_port_range": "32768\t60999",
    "net.ipv4.tcp_fin_timeout": "60",
    "net.ipv4.tcp_keepalive_intvl": "75",
    "net.ipv4.tcp_keepalive_probes": "9",
    "net.ipv4.tcp_keepalive_time": "7200",
    "net.ipv4.tcp_max_syn_backlog": "1024",
    "net.ipv4.tcp_rmem": "4096\t131072\t6291456",
    "net.ipv4.tcp_syncookies": "1",
    "net.ipv4.tcp_tw_reuse": "2",
    "net.ipv4.tcp_wmem": "4096\t16384\t4194304",
    "net.ipv6.conf.all.disable_ipv6": "0",
    "net.ipv6.conf.all.forwarding": "1",
    "net.netfilter.nf_conntrack_buckets": "65536",
    "net.netfilter.nf_conntrack_count": "",
    "net.netfilter.nf_conntrack_max": "262144",
    "net.netfilter.nf_conntrack_tcp_timeout_established": "86400",
    "net.netfilter.nf_conntrack_tcp_timeout_close_wait": "3600",
    "vm.dirty_background_ratio": "10",
    "vm.dirty_ratio": "20",
    "vm.max_map_count": "262144",
    "vm.min_free_kbytes": "67584",
    "vm.overcommit_memory": "1",
    "vm.overcommit_ratio": "50",
    "vm.panic_on_oom": "0",
    "vm.swappiness": "60",
    "vm.vfs_cache_pressure": "100",
}
#: keys the kernel exposes read-only
_READ_ONLY = {"fs.file-nr", "kernel.osrelease", "net.netfilter.nf_conntrack_count"}


def all_sysctls(node: HostNode, now: float, pods: list[dict[str, Any]] | None = None) -> dict[str, str]:
    vals = dict(_SYSCTL_DEFAULTS)
    vals["kernel.hostname"] = node.name
    vals["kernel.osrelease"] = node.kernel
    vals["net.netfilter.nf_conntrack_count"] = str(conntrack_count(node, now, len(pods or ())))
    for k, v in (node.sysctls or {}).items():
        vals[str(k)] = str(v)
    return vals


def _sysctl_key(a: str) -> str:
    a = a.strip()
    if a.startswith("/proc/sys/"):
        a = a[len("/proc/sys/"):]
    return a.replace("/", ".")


def _valid_value(old: str, new: str) -> bool:
    """Numeric sysctls reject non-numbers (EINVAL), as the kernel's proc handlers do."""
    olds = old.split()
    news = new.replace(",", " ").split()
    if not olds or not all(p.lstrip("-").isdigit() for p in olds):
        return True
    return bool(news) and all(p.lstrip("-").isdigit() for p in news) and len(news) <= len(olds)


def _sysctl_load(node: HostNode, now: float, pods: list[dict[str, Any]] | None, flag: str, files: list[str]) -> ExecResult:
    """``sysctl --system`` (every sysctl.d file, then sysctl.conf) or ``sysctl -p [FILE]``."""
    if flag == "--system":
        names = [f"/etc/sysctl.d/{n}" for n in hostfiles.entries(node, "/etc/sysctl.d") if n.endswith(".conf")]
        header = "* Applying /usr/lib/sysctl.d/50-pid-max.conf ...\n"
        paths = [*names, "/etc/sysctl.conf"]
    else:
        paths = files or ["/etc/sysctl.conf"]
        header = ""
    vals = all_sysctls(node, now, pods)
    out = [header]
    for path in paths:
        text = hostfiles.read(node, path)
        if text is None:
            if flag != "--system":
                return ExecResult("".join(out) + f"sysctl: cannot open \"{path}\": No such file or directory\n", 255)
            text = ""
        if flag == "--system":
            out.append(f"* Applying {path} ...\n")
        for k, v in hostfiles.parse_sysctl_conf(text).items():
            k = _sysctl_key(k)
            if k in vals and k not in _READ_ONLY:
                norm = "\t".join(v.split()) if "\t" in vals[k] else v
                node.sysctls[k] = norm
                out.append(f"{k} = {norm}\n")
    return ExecResult("".join(out), 0)


def sysctl(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    node, now, pods = view.node, view.now, view.pods
    write = value_only = quiet = show_all = False
    keys: list[str] = []
    for a in argv[1:]:
        if a in ("-w", "--write"):
            write = True
        elif a in ("-n", "--values"):
            value_only = True
        elif a in ("-q", "--quiet"):
            quiet = True
        elif a in ("-a", "-A", "-X", "--all"):
            show_all = True
        elif a in ("-e", "--ignore", "-N", "--names", "-b", "--binary"):
            continue
        elif a in ("-p", "--load", "--system"):
            return _sysctl_load(node, now, pods, a, [x for x in argv[argv.index(a) + 1 :] if not x.startswith("-")])
        elif a.startswith("-") and len(a) > 1:
            if all(c in "wnqaAXeN" for c in a[1:]):
                write |= "w" in a
                value_only |= "n" in a
                quiet |= "q" in a
                show_all |= any(c in a for c in "aAX")
                continue
            bad = a[2:] if a.startswith("--") else a[1:2]
            msg = f"sysctl: unrecognized option '{a}'" if a.startswith("--") else f"sysctl: invalid option -- '{bad}'"
            return ExecResult(f"{msg}\n\nUsage:\n sysctl [options] [variable[=value] ...]\n\nOptions:\n  -a, --all            display all variables\n  -A                   alias of -a\n  -X                   alias of -a\n  -n, --values         print only values of the given variable(s)\n  -w, --write          enable writing a value to variable\n\nFor more details see sysctl(8).\n", 255)
        else:
            keys.append(a)
    vals = all_sysctls(node, now, pods)
    if show_all or not keys:
        if not keys and not show_all:
            return ExecResult("\nUsage:\n sysctl [options] [variable[=value] ...]\n\nOptions:\n  -a, --all            display all variables\n  -A                   alias of -a\n  -X                   alias of -a\n  -n, --values         print only values of the given variable(s)\n  -w, --write          enable writing a value to variable\n\nFor more details see sysctl(8).\n", 255)
        return ExecResult("".join(f"{v}\n" if value_only else f"{k} = {v}\n" for k, v in sorted(vals.items())), 0)
    out: list[str] = []
    code = 0
    for raw in keys:
        if write or "=" in raw:
            if "=" not in raw:
                out.append(f'sysctl: "{raw}" must be of the form name=value')
                code = 255
                continue
            k, v = raw.split("=", 1)
            k = _sysctl_key(k)
            v = v.strip()
            if not k:
                out.append(f'sysctl: malformed setting "{raw}"')
                code = 255
                continue
            if k not in vals:
                out.append(f"sysctl: cannot stat /proc/sys/{k.replace('.', '/')}: No such file or directory")
                code = 255
                continue
            if k in _READ_ONLY:
                out.append(f'sysctl: setting key "{k}": Operation not permitted')
                code = 255
                continue
            if not _valid_value(vals[k], v):
                out.append(f'sysctl: setting key "{k}": Invalid argument')
                code = 255
                continue
            norm = "\t".join(v.replace(",", " ").split()) if "\t" in vals[k] or " " in v else v
            node.sysctls[k] = norm
            if not quiet:
                out.append(norm if value_only else f"{k} = {norm}")
            continue
        k = _sysctl_key(raw)
        if k not in vals:
            out.append(f"sysctl: cannot stat /proc/sys/{k.replace('.', '/')}: No such file or directory")
            code = 255
            continue
        out.append(vals[k] if value_only else f"{k} = {vals[k]}")
    return ExecResult("\n".join(out) + ("\n" if out else ""), code)


# --------------------------------------------------------------------------- memory, load, uptime

def _mem(node: HostNode) -> tuple[int, int, int, int, int, int]:
    """(total, used, free, shared, buff/cache, available) in KiB."""
    total = max(int(node.memory_bytes) // 1024, 1)
    used = int(max(node.memory_used_bytes, 0)) // 1024 + 1_150_000
    used = min(used, total - 65_536)
    cache = min(int(total * 0.22), max(total - used - 65_536, 0))
    free_ = max(total - used - cache, 0)
    shared = 4_196 + total // 2000
    avail = free_ + int(cache * 0.85)
    return total, used, free_, shared, cache, avail


def free(view: HostView | ContainerView, argv: list[str], stdin: str | None = None) -> ExecResult:
    node = view.node
    unit = "k"
    for a in argv[1:]:
        if a in ("-m", "--mebi", "--mega"):
            unit = "m"
        elif a in ("-g", "--gibi", "--giga"):
            unit = "g"
        elif a in ("-h", "--human"):
            unit = "h"
        elif a in ("-b", "--bytes"):
            unit = "b"
        elif a in ("-k", "--kibi", "--kilo", "-w", "--wide", "-t", "--total", "-l", "--lohi"):
            continue
        else:
            msg = f"free: unrecognized option '{a}'" if a.startswith("--") else f"free: invalid option -- '{a.lstrip('-')[:1]}'"
            return ExecResult(f"{msg}\n\nUsage:\n free [options]\n\nOptions:\n -b, --bytes         show output in bytes\n -k, --kibi          show output in kibibytes\n -m, --mebi          show output in mebibytes\n -g, --gibi          show output in gibibytes\n -h, --human         show human-readable output\n\nFor more details see free(1).\n", 1)
    vals = _mem(node)

    def f(v: int) -> str:
        if unit == "m":
            return str(v // 1024)
        if unit == "g":
            return str(v // 1048576)
        if unit == "b":
            return str(v * 1024)
        if unit == "h":
            return human_free(v * 1024)
        return str(v)

    head = " " * 8 + "".join(f"{h:>12}" for h in ("total", "used", "free", "shared", "buff/cache", "available"))
    mem = f"{'Mem:':<8}" + "".join(f"{f(v):>12}" for v in vals)
    swap = f"{'Swap:':<8}" + "".join(f"{f(0) if unit != 'h' else '0B':>12}" for _ in range(3))
    return ExecResult(f"{head}\n{mem}\n{swap}\n", 0)


def meminfo(node: HostNode) -> str:
    total, used, free_, shared, cache, avail = _mem(node)
    rows = [
        ("MemTotal", total), ("MemFree", free_), ("MemAvailable", avail), ("Buffers", cache // 14), ("Cached", cache - cache // 14),
        ("SwapCached", 0), ("Active", used // 2 + cache // 3), ("Inactive", cache // 2), ("Active(anon)", used // 2), ("Inactive(anon)", 2_316),
        ("Active(file)", cache // 3), ("Inactive(file)", cache // 2), ("Unevictable", 0), ("Mlocked", 0), ("SwapTotal", 0), ("SwapFree", 0),
        ("Zswap", 0), ("Zswapped", 0), ("Dirty", 412), ("Writeback", 0), ("AnonPages", used // 2), ("Mapped", used // 6), ("Shmem", shared),
        ("KReclaimable", 98_412), ("Slab", 184_320), ("SReclaimable", 98_412), ("SUnreclaim", 85_908), ("KernelStack", 9_312),
        ("PageTables", 12_604), ("CommitLimit", total // 2), ("Committed_AS", used * 2), ("VmallocTotal", 34_359_738_367),
        ("VmallocUsed", 28_412), ("HugePages_Total", 0), ("HugePages_Free", 0), ("Hugepagesize", 2048),
    ]
    out = []
    for k, v in rows:
        if k.startswith("HugePages"):
            out.append(f"{k + ':':<16}{v:>8}")
        else:
            out.append(f"{k + ':':<16}{v:>8} kB")
    return "\n".join(out) + "\n"


def loadavg(node: HostNode, now: float, pods: list[dict[str, Any]]) -> str:
    one, five, fifteen = load_average(node, now)
    running = 1 + int(one)
    tasks = 180 + 12 * len(pods)
    return f"{one:.2f} {five:.2f} {fifteen:.2f} {running}/{tasks} {(40_000 + int(now * 3)) % 4_194_304}\n"


def uptime(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    node, now = view.node, view.now
    up = int(node.uptime(now))
    args = argv[1:]
    if args and args[0] in ("-p", "--pretty"):
        d, rem = divmod(up, 86_400)
        h, rem = divmod(rem, 3600)
        m = rem // 60
        parts = []
        if d:
            parts.append(f"{d} day{'s' if d != 1 else ''}")
        if h:
            parts.append(f"{h} hour{'s' if h != 1 else ''}")
        parts.append(f"{m} minute{'s' if m != 1 else ''}")
        return ExecResult("up " + ", ".join(parts) + "\n", 0)
    if args and args[0] in ("-s", "--since"):
        dt = wall(node, now - up)
        return ExecResult(f"{dt:%Y-%m-%d %H:%M:%S}\n", 0)
    if args:
        a = args[0]
        msg = f"uptime: unrecognized option '{a}'" if a.startswith("--") else f"uptime: invalid option -- '{a.lstrip('-')[:1]}'"
        return ExecResult(f"{msg}\n\nUsage:\n uptime [options]\n\nOptions:\n -p, --pretty   show uptime in pretty format\n -h, --help     display this help and exit\n -s, --since    system up since\n -V, --version  output version information and exit\n\nFor more details see uptime(1).\n", 1)
    return ExecResult(uptime_line(node, now, users=1) + "\n", 0)


def uptime_line(node: HostNode, now: float, users: int = 1) -> str:
    up = int(node.uptime(now))
    dt = wall(node, now)
    d, rem = divmod(up, 86_400)
    h, rem = divmod(rem, 3600)
    m = rem // 60
    s = f" {dt:%H:%M:%S} up "
    if d:
        s += f"{d} day{'s' if d != 1 else ''}, "
    s += f"{h:2d}:{m:02d}, " if h else f"{m} min, "
    one, five, fifteen = load_average(node, now)
    s += f" {users} user{'s' if users != 1 else ''},  load average: {one:.2f}, {five:.2f}, {fifteen:.2f}"
    return s


# --------------------------------------------------------------------------- network, time

def _pod_cidr(node: HostNode, pods: list[dict[str, Any]]) -> str:
    for p in pods:
        ip = str((p.get("status") or {}).get("podIP") or "")
        if ip.count(".") == 3 and not (p.get("spec") or {}).get("hostNetwork"):
            a, b, c, _ = ip.split(".")
            return f"{a}.{b}.{c}"
    return f"10.244.{node.index + 1}"


def _node_ip(node: HostNode) -> str:
    return node.internal_ip or f"10.0.0.{10 + node.index}"


def _mac(node: HostNode, dev: str) -> str:
    h = stable_hash(node.name, dev)
    return f"52:54:00:{(h >> 16) & 0xFF:02x}:{(h >> 8) & 0xFF:02x}:{h & 0xFF:02x}"


def _link_stats(node: HostNode, now: float, dev: str) -> list[str]:
    """``ip -s link`` counters: steady traffic since boot, plus the errors a bad NIC adds."""
    up = node.uptime(now)
    rate = 18_000.0 if dev == "eth0" else 9_000.0
    rx_pk, tx_pk = int(up * rate), int(up * rate * 0.93)
    rx_b, tx_b = rx_pk * 712, tx_pk * 655
    errs = crc = 0
    if dev == "eth0" and node.nic_crc_error_fraction > 0:
        crc = int(max(now - node.nic_fault_since, 0.0) * rate * node.nic_crc_error_fraction)
        errs = crc
    carrier = 0
    if dev == "eth0" and node.nic_flap_down_s_per_min > 0:
        carrier = 2 * int(max(now - node.nic_fault_since, 0.0) // 60)
    return [
        "    RX:  bytes packets errors dropped  missed   mcast           ",
        f"    {rx_b:>10} {rx_pk:>7} {errs:>6} {errs // 7:>7} {0:>7} {0:>7} ",
        "    TX:  bytes packets errors dropped carrier collsns           ",
        f"    {tx_b:>10} {tx_pk:>7} {0:>6} {0:>7} {carrier:>7} {0:>7} ",
    ]


def ip(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    node, pods, now = view.node, view.pods, view.now
    stats = "-s" in argv[1:] or "-stats" in argv[1:] or "-statistics" in argv[1:]
    args = [a for a in argv[1:] if a not in ("-4", "-6", "-c", "-color", "--color", "-d", "-s", "-stats", "-statistics")]
    brief = False
    if args and args[0] in ("-br", "-brief", "--brief"):
        brief = True
        args = args[1:]
    if not args:
        return ExecResult("Usage: ip [ OPTIONS ] OBJECT { COMMAND | help }\n       ip [ -force ] -batch filename\nwhere  OBJECT := { address | addrlabel | amt | fou | help | ila | ioam | l2tp | link |\n                   macsec | maddress | monitor | mptcp | mroute | mrule |\n                   neighbor | neighbour | netconf | netns | nexthop | ntable |\n                   ntbl | route | rule | sr | tap | tcpmetrics |\n                   token | tunnel | tuntap | vrf | xfrm }\n", 255)
    obj = args[0]
    ipaddr = _node_ip(node)
    pfx = _pod_cidr(node, pods)
    gw = ".".join(ipaddr.split(".")[:3]) + ".1"
    if "address".startswith(obj) or obj == "addr" or "link".startswith(obj):
        link = "link".startswith(obj) and obj not in ("a", "addr")
        e0, c0 = _mac(node, "eth0"), _mac(node, "cni0")
        if brief:
            return ExecResult(f"lo               UNKNOWN        127.0.0.1/8 ::1/128 \neth0             UP             {ipaddr}/24 \ncni0             UP             {pfx}.1/24 \n", 0)
        out = ["1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000" if link else "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1000",
               "    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00"]
        if not link:
            out += ["    inet 127.0.0.1/8 scope host lo", "       valid_lft forever preferred_lft forever", "    inet6 ::1/128 scope host noprefixroute ", "       valid_lft forever preferred_lft forever"]
        out += [f"2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP {'mode DEFAULT ' if link else ''}group default qlen 1000", f"    link/ether {e0} brd ff:ff:ff:ff:ff:ff", "    altname enp0s3"]
        if stats and link:
            out += _link_stats(node, now, "eth0")
        if not link:
            out += [f"    inet {ipaddr}/24 brd {'.'.join(ipaddr.split('.')[:3])}.255 scope global dynamic eth0", "       valid_lft 84612sec preferred_lft 84612sec",
                    f"    inet6 fe80::5054:ff:fe{e0[9:11]}:{e0[12:14]}{e0[15:17]}/64 scope link ", "       valid_lft forever preferred_lft forever"]
        out += [f"3: cni0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450 qdisc noqueue state UP {'mode DEFAULT ' if link else ''}group default qlen 1000", f"    link/ether {c0} brd ff:ff:ff:ff:ff:ff"]
        if not link:
            out += [f"    inet {pfx}.1/24 brd {pfx}.255 scope global cni0", "       valid_lft forever preferred_lft forever"]
        wanted = [a for a in args[1:] if a not in ("show", "list", "ls", "lst", "sh", "dev", "up")]
        if wanted:
            blocks: dict[str, list[str]] = {}
            current = ""
            for line in out:
                if line[:1].isdigit():
                    current = line.split(": ", 2)[1]
                blocks.setdefault(current, []).append(line)
            if wanted[0] not in blocks:
                return ExecResult(f'Device "{wanted[0]}" does not exist.\n', 1)
            out = blocks[wanted[0]]
        return ExecResult("\n".join(out) + "\n", 0)
    if "route".startswith(obj) or obj == "r":
        return ExecResult(f"default via {gw} dev eth0 \n{'.'.join(ipaddr.split('.')[:3])}.0/24 dev eth0 proto kernel scope link src {ipaddr} \n{pfx}.0/24 dev cni0 proto kernel scope link src {pfx}.1 \n", 0)
    if obj in ("neigh", "neighbor", "neighbour", "n"):
        return ExecResult(f"{gw} dev eth0 lladdr {_mac(node, 'gw')} REACHABLE\n", 0)
    return ExecResult(f'Object "{obj}" is unknown, try "ip help".\n', 1)


def chronyc(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    node, now = view.node, view.now
    args = [a for a in argv[1:] if a not in ("-n", "-a", "-c")]
    sub = args[0] if args else "tracking"
    if not node.chrony_running:
        return ExecResult("506 Cannot talk to daemon\n", 1)
    if sub == "makestep":
        if abs(node.clock_offset_s) > 0:
            node.journal.append((now, "chronyd", f"System clock was stepped by {-node.clock_offset_s:.6f} seconds"))
        node.clock_offset_s = 0.0
        return ExecResult("200 OK\n", 0)
    off = float(node.clock_offset_s)
    synced = abs(off) < 1.0
    if sub == "tracking":
        ref = wall(node, now - 37)
        fast = "fast" if off >= 0 else "slow"
        sys_off = abs(off) if not synced else 0.000012 + abs(off)
        return ExecResult(
            ("Reference ID    : A9FEA9FE (169.254.169.254)\nStratum         : 3\n" if synced else "Reference ID    : 00000000 ()\nStratum         : 0\n")
            + (f"Ref time (UTC)  : {ref:%a %b %d %H:%M:%S %Y}\n" if synced else "Ref time (UTC)  : Thu Jan 01 00:00:00 1970\n")
            + f"System time     : {sys_off:.9f} seconds {fast} of NTP time\n"
            + f"Last offset     : {'+' if off >= 0 else '-'}{min(abs(off), 0.0005) if synced else 0:.9f} seconds\n"
            + f"RMS offset      : {0.000021 if synced else 0:.9f} seconds\n"
            + "Frequency       : 11.834 ppm slow\n"
            + f"Residual freq   : {'+0.001' if synced else '+0.000'} ppm\n"
            + f"Skew            : {'0.027' if synced else '0.000'} ppm\n"
            + f"Root delay      : {0.000412311 if synced else 1:.9f} seconds\n"
            + f"Root dispersion : {0.000223108 if synced else 1:.9f} seconds\n"
            + f"Update interval : {64.2 if synced else 0:.1f} seconds\n"
            + f"Leap status     : {'Normal' if synced else 'Not synchronised'}\n",
            0,
        )
    if sub in ("sources", "sourcestats"):
        state = "^*" if synced else "^?"
        return ExecResult(
            "MS Name/IP address         Stratum Poll Reach LastRx Last sample               \n"
            "===============================================================================\n"
            f"{state} 169.254.169.254               2   6   {'377' if synced else '  0'}    {'37' if synced else ' -'}    {'+12us[  +15us] +/-  388us' if synced else '+0ns[   +0ns] +/-    0ns'}\n",
            0,
        )
    if sub in ("makestep", "burst", "online", "offline"):
        return ExecResult("200 OK\n", 0)
    return ExecResult("Unrecognized command\n", 1)


def timedatectl(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    node, now = view.node, view.now
    dt = wall(node, now)
    synced = abs(node.clock_offset_s) < 1.0
    return ExecResult(
        f"               Local time: {dt:%a %Y-%m-%d %H:%M:%S} UTC\n"
        f"           Universal time: {dt:%a %Y-%m-%d %H:%M:%S} UTC\n"
        f"                 RTC time: {wall(node, now - node.clock_offset_s):%a %Y-%m-%d %H:%M:%S}\n"
        "                Time zone: Etc/UTC (UTC, +0000)\n"
        f"System clock synchronized: {'yes' if synced else 'no'}\n"
        "              NTP service: active\n"
        "          RTC in local TZ: no\n",
        0,
    )


# --------------------------------------------------------------------------- crictl

def tabwrite(text: str, minwidth: int, padding: int) -> str:
    """Go tabwriter alignment for one block of tab-separated rows (crictl: minwidth 20, padding 3)."""
    rows = [ln.split("\t") for ln in text.split("\n")]
    ncol = max(len(r) for r in rows)
    widths = [max(minwidth, max((len(r[k]) for r in rows if k < len(r) - 1), default=0) + padding) for k in range(ncol)]
    return "\n".join("".join(c.ljust(widths[k]) if k < len(r) - 1 else c for k, c in enumerate(r)) for r in rows)


def crictl(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    node, now, pods = view.node, view.now, view.pods
    args = argv[1:]
    if not args:
        return ExecResult("NAME:\n   crictl - client for CRI\n\nUSAGE:\n   crictl [global options] command [command options]\n\nCOMMANDS:\n   ps        List containers\n   pods      List pods\n   images    List images\n   logs      Fetch the logs of a container\n", 0)
    sub = args[0]
    flags = args[1:]
    if sub == "ps":
        show_all = any(f in ("-a", "--all") for f in flags)
        quiet = any(f in ("-q", "--quiet") for f in flags)
        bad = next((f for f in flags if f.startswith("-") and f not in ("-a", "--all", "-q", "--quiet", "--no-trunc", "-v", "--verbose", "--name", "--pod", "--state", "-s", "-p")), None)
        if bad:
            return ExecResult(f"Incorrect Usage: flag provided but not defined: -{bad.lstrip('-')}\n\nNAME:\n   crictl ps - List containers\n\nUSAGE:\n   crictl ps [command options] [arguments...]\n", 1)
        rows = ["CONTAINER\tIMAGE\tCREATED\tSTATE\tNAME\tATTEMPT\tPOD ID\tPOD\tNAMESPACE"]
        ids = []
        for pod, spec, st in running_containers(pods, include_exited=show_all):
            meta = pod.get("metadata") or {}
            state = st.get("state") or {}
            running = "running" in state
            started = parse_iso_safe((state.get("running") or state.get("terminated") or state.get("waiting") or {}).get("startedAt")) or parse_iso_safe((pod.get("status") or {}).get("startTime")) or now
            cid = container_id(pod, st)
            ids.append(cid)
            img = str(st.get("imageID") or "")
            img_id = img.split(":")[-1][:13] if "sha256:" in img else f"{stable_hash(spec.get('image', st.get('image', ''))):08x}{stable_hash('i', spec.get('image', '')):08x}"[:13]
            rows.append(
                f"{cid[:13]}\t{img_id}\t{go_human_duration(now - started)} ago\t{'Running' if running else 'Exited'}\t{st.get('name', '')}\t{st.get('restartCount', 0)}\t{sandbox_id(pod)[:13]}\t{meta.get('name', '')}\t{meta.get('namespace', '')}"
            )
        if quiet:
            return ExecResult("".join(c + "\n" for c in ids), 0)
        return ExecResult(tabwrite("\n".join(rows), 20, 3) + "\n", 0)
    if sub == "pods":
        rows = ["POD ID\tCREATED\tSTATE\tNAME\tNAMESPACE\tATTEMPT\tRUNTIME"]
        for pod in pods:
            meta = pod.get("metadata") or {}
            st = parse_iso_safe((pod.get("status") or {}).get("startTime")) or now
            rows.append(f"{sandbox_id(pod)[:13]}\t{go_human_duration(now - st)} ago\tReady\t{meta.get('name', '')}\t{meta.get('namespace', '')}\t0\t(default)")
        return ExecResult(tabwrite("\n".join(rows), 20, 3) + "\n", 0)
    if sub == "images":
        seen = sorted(set(node.image_cache) | {"registry.k8s.io/pause:3.10"})
        rows = ["IMAGE\tTAG\tIMAGE ID\tSIZE"]
        for ref in seen:
            repo, _, tag = ref.rpartition(":") if ":" in ref.rsplit("/", 1)[-1] else (ref, "", "latest")
            if "/" not in repo:
                repo = f"docker.io/library/{repo}"
            elif "." not in repo.split("/")[0]:
                repo = f"docker.io/{repo}"
            rows.append(f"{repo}\t{tag}\t{stable_hash(ref):08x}{stable_hash('x', ref) % 0xFFFFF:05x}\t{20 + stable_hash(ref) % 300}MB")
        return ExecResult(tabwrite("\n".join(rows), 20, 3) + "\n", 0)
    if sub in ("version",):
        return ExecResult("Version:  0.1.0\nRuntimeName:  containerd\nRuntimeVersion:  v1.7.24\nRuntimeApiVersion:  v1\n", 0)
    if sub in ("info", "inspect", "inspectp", "logs", "stats", "exec"):
        ids = [a for a in args[1:] if not a.startswith("-")]
        if not ids:
            return ExecResult(f"FATA[0000] {sub}: ID cannot be empty\n", 1)
        match = next(((p, st) for p, _s, st in running_containers(pods, include_exited=True) if container_id(p, st).startswith(ids[0])), None)
        if match is None:
            return ExecResult(f'FATA[0000] getting the status of the container "{ids[0]}": rpc error: code = NotFound desc = an error occurred when try to find container "{ids[0]}": not found\n', 1)
        p, st = match
        meta = p.get("metadata") or {}
        cid = container_id(p, st)
        if sub == "logs":
            # the log files live with the API server's log model, not on this simulated disk
            path = f"/var/log/pods/{meta.get('namespace', '')}_{meta.get('name', '')}_{meta.get('uid', '')}/{st.get('name', '')}/{st.get('restartCount', 0)}.log"
            return ExecResult(f'FATA[0000] failed to try resolving symlinks in path "{path}": lstat {path}: no such file or directory\n', 1)
        state = "CONTAINER_RUNNING" if "running" in (st.get("state") or {}) else "CONTAINER_EXITED"
        return ExecResult(f'{{\n  "status": {{\n    "id": "{cid}",\n    "metadata": {{\n      "attempt": {st.get("restartCount", 0)},\n      "name": "{st.get("name", "")}"\n    }},\n    "state": "{state}",\n    "image": {{\n      "image": "{st.get("image", "")}"\n    }}\n  }}\n}}\n', 0)
    return ExecResult(f"No help topic for '{sub}'\n", 3)
