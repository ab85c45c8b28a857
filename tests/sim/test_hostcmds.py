"""Behaviour of the node-level command interpreter (``ssh node CMD``)."""

from __future__ import annotations

import random
import re

import pytest

from sre_env.sim.commands.host import HOST_BINARIES, run_host_command
from sre_env.sim.commands.views import HostView
from sre_env.sim.kernel.hosts import Disk, HostNode, default_sysctls
from sre_env.sim.scripts import SIM_SHELL

BAD_SECTORS = (1_234_567, 7_812_345, 99_887_766)


def _node() -> HostNode:
    root = Disk(device="sda", model="QEMU HARDDISK", serial="QM00001", size_bytes=100 * 1024**3, mountpoint="/", used_bytes=12 * 1024**3)
    data = Disk(
        device="sdb", model="WDC WD20EFZX-68AWUN0", serial="WD-WX12D81ABCDE", size_bytes=2_000_398_934_016,
        mountpoint="/mnt/disks/ssd0", used_bytes=3 * 1024**3, rotational=True,
    )
    return HostNode(name="worker-2", index=2, cpu_cores=8, memory_bytes=16 * 1024**3, internal_ip="10.0.0.12", disks=[root, data], sysctls=default_sysctls())


def _pods() -> list[dict]:
    return [
        {
            "metadata": {"name": "mongodb-geo-5d8f7c9b4-x2x9k", "namespace": "hotel-reservation", "uid": "1b2c3d4e-0000-4000-8000-000000000001"},
            "spec": {"containers": [{"name": "hotel-reserv-geo-mongo", "image": "mongo:4.4.6"}], "volumes": [{"name": "geo", "persistentVolumeClaim": {"claimName": "geo-pvc"}}]},
            "status": {"podIP": "10.244.2.14", "startTime": "2026-03-02T08:50:00Z", "containerStatuses": [{"name": "hotel-reserv-geo-mongo", "restartCount": 0, "state": {"running": {"startedAt": "2026-03-02T08:50:03Z"}}}]},
        },
        {
            "metadata": {"name": "geo-7c9b4d8f5-abcde", "namespace": "hotel-reservation", "uid": "1b2c3d4e-0000-4000-8000-000000000002"},
            "spec": {"containers": [{"name": "hotel-reserv-geo", "image": "yinfangchen/hotelreservation:latest", "command": ["geo"]}]},
            "status": {"podIP": "10.244.2.15", "startTime": "2026-03-02T08:50:00Z", "containerStatuses": [{"name": "hotel-reserv-geo", "restartCount": 1, "state": {"running": {"startedAt": "2026-03-02T08:51:03Z"}}}]},
        },
    ]


def _view(node: HostNode | None = None, now: float = 900.0, **kw) -> HostView:
    return HostView(node=node or _node(), now=now, pods=_pods(), shell=SIM_SHELL, local_volumes={"/mnt/disks/ssd0/geo-pv": "local-pv-1"}, **kw)


def _fail_disk(node: HostNode, ticks: range = range(600, 900), per_tick: int = 20) -> Disk:
    d = node.disks[1]
    d.bad_read_fraction = 0.05
    d.bad_sectors = BAD_SECTORS
    d.reads_total = 120_000.0
    d.read_errors_total = float(len(ticks) * per_tick)
    d.last_reads_per_s = 400.0
    for t in ticks:
        d.error_ticks.append((float(t), per_tick))
    return d


def run(view: HostView, cmd: str):
    import shlex

    return run_host_command(view, shlex.split(cmd))


# --------------------------------------------------------------------------- dmesg

def test_dmesg_healthy_disk_has_no_io_errors():
    r = run(_view(), "dmesg")
    assert r.exit_code == 0
    assert "Linux version 6.1.0-27-amd64" in r.output
    assert re.search(r"^\[    0\.000000\] ", r.output, re.M)
    assert "I/O error" not in r.output and "medium error" not in r.output.lower()
    assert run(_view(), "dmesg --level=err,warn").output == ""


def test_dmesg_shows_medium_errors_with_device_and_bad_sectors():
    node = _node()
    _fail_disk(node)
    out = run(_view(node), "dmesg").output
    assert "critical medium error, dev sdb, sector" in out
    assert "op 0x0:(READ) flags 0x80700 phys_seg 1 prio class 2" in out
    assert "Sense Key : Medium Error [current]" in out
    assert "Add. Sense: Unrecovered read error - auto reallocate failed" in out
    assert "Buffer I/O error on dev sdb1, logical block" in out
    sectors = {int(s) for s in re.findall(r"critical medium error, dev sdb, sector (\d+)", out)}
    assert sectors and sectors <= set(BAD_SECTORS)
    assert "dev sda," not in out
    # timestamps are uptimes and the output is sorted
    stamps = [float(m) for m in re.findall(r"^\[\s*(\d+\.\d+)\]", out, re.M)]
    assert stamps == sorted(stamps)
    assert stamps[-1] <= node.uptime(900.0)


def test_dmesg_rate_limits_and_bounds_output():
    node = _node()
    _fail_disk(node, range(0, 720), per_tick=500)
    out = run(_view(node, now=720.0), "dmesg").output
    assert re.search(r"blk_print_req_error: \d+ callbacks suppressed", out)
    assert re.search(r"scsi_io_completion_action: \d+ callbacks suppressed", out)
    assert len(out.splitlines()) <= 520
    # no more than the burst (10) error reports in any 5 s window
    times = [float(m) for m in re.findall(r"^\[\s*(\d+\.\d+)\] critical medium error", out, re.M)]
    for i, t in enumerate(times):
        assert sum(1 for u in times[i:] if u < t + 5.0) <= 10


def test_dmesg_errors_only_up_to_now():
    node = _node()
    _fail_disk(node, range(600, 900))
    early = run(_view(node, now=500.0), "dmesg").output
    assert "medium error" not in early


def test_dmesg_level_filter_and_ctime():
    node = _node()
    _fail_disk(node)
    out = run(_view(node), "dmesg -T --level=err").output
    assert out.startswith("[Mon Mar  2 ")
    assert "Linux version" not in out and "critical medium error" in out
    assert run(_view(node), "dmesg -l err,warn").exit_code == 0
    bad = run(_view(node), "dmesg --level=bogus")
    assert bad.exit_code == 1 and "unknown level 'bogus'" in bad.output
    bad = run(_view(node), "dmesg -Q")
    assert bad.exit_code == 1 and "invalid option -- 'Q'" in bad.output


# --------------------------------------------------------------------------- smartctl

def test_smartctl_healthy_disk():
    r = run(_view(), "smartctl -a /dev/sdb")
    assert r.exit_code == 0
    assert "smartctl 7.3 2022-02-28 r5338" in r.output
    assert "SMART overall-health self-assessment test result: PASSED" in r.output
    assert "No Errors Logged" in r.output
    assert re.search(r"^197 Current_Pending_Sector .* 0$", r.output, re.M)
    assert re.search(r"^  9 Power_On_Hours .* 14873$", r.output, re.M)


def test_smartctl_counters_reflect_latent_sector_errors_but_health_passes():
    node = _node()
    d = _fail_disk(node)
    d.pending_sectors = 8
    d.offline_uncorrectable = 8
    d.reallocated_sectors = 3
    r = run(_view(node), "smartctl -a /dev/sdb")
    assert "test result: PASSED" in r.output
    assert re.search(r"^197 Current_Pending_Sector .* 8$", r.output, re.M)
    assert re.search(r"^198 Offline_Uncorrectable .* 8$", r.output, re.M)
    assert re.search(r"^  5 Reallocated_Sector_Ct .* 3$", r.output, re.M)
    assert re.search(rf"^187 Reported_Uncorrect .* {int(d.read_errors_total)}$", r.output, re.M)
    assert f"ATA Error Count: {int(d.read_errors_total)}" in r.output
    assert "Error: UNC at LBA" in r.output
    assert r.exit_code & 64  # error log has entries
    h = run(_view(node), "smartctl -H /dev/sdb")
    assert h.exit_code == 0 and "PASSED" in h.output and "Reallocated" not in h.output
    x = run(_view(node), "smartctl -x /dev/sdb")
    assert "SMART Extended Comprehensive Error Log" in x.output and "FLAGS    VALUE WORST THRESH FAIL RAW_VALUE" in x.output


def test_smartctl_errors():
    v = _view()
    r = run(v, "smartctl -a /dev/sdz")
    assert r.exit_code == 2 and "Smartctl open device: /dev/sdz failed" in r.output
    r = run(v, "smartctl")
    assert r.exit_code == 1 and "requires a device name" in r.output
    r = run(v, "smartctl -z /dev/sda")
    assert r.exit_code == 1 and "UNRECOGNIZED OPTION" in r.output
    assert run(v, "smartctl --scan").output.startswith("/dev/sda -d sat")


# --------------------------------------------------------------------------- sysctl

def test_sysctl_read_write_and_errors():
    node = _node()
    v = _view(node)
    assert run(v, "sysctl net.core.somaxconn").output == "net.core.somaxconn = 4096\n"
    r = run(v, "sysctl -w net.core.somaxconn=1024")
    assert r.exit_code == 0 and r.output == "net.core.somaxconn = 1024\n"
    assert node.sysctls["net.core.somaxconn"] == "1024"
    assert run(v, "cat /proc/sys/net/core/somaxconn").output == "1024\n"
    assert run(v, "sysctl -n net.core.somaxconn").output == "1024\n"
    r = run(v, "sysctl -w no.such.key=1")
    assert r.exit_code == 255 and "cannot stat /proc/sys/no/such/key" in r.output
    assert "no.such.key" not in node.sysctls
    r = run(v, "sysctl -w vm.swappiness=abc")
    assert r.exit_code == 255 and "Invalid argument" in r.output
    assert run(v, "sysctl net.ipv4.ip_local_port_range").output == "net.ipv4.ip_local_port_range = 32768\t60999\n"
    assert "vm.max_map_count = 262144" in run(v, "sysctl -a").output


# --------------------------------------------------------------------------- everything else

HEALTHY = [
    "dmesg", "dmesg -T", "dmesg -l err", "smartctl -a /dev/sda", "smartctl -H /dev/sdb", "smartctl -A /dev/sdb", "smartctl -x /dev/sdb",
    "smartctl -i /dev/sdb", "smartctl --scan", "df", "df -h", "df -i", "df -T", "df -hT", "lsblk", "iostat", "iostat -x", "iostat -d",
    "iostat -x 1 2", "cat /proc/diskstats", "cat /proc/loadavg", "cat /proc/meminfo", "free -m", "free -h", "uptime", "hostname", "date",
    "uname -a", "uname -r", "ps aux", "ps -ef", "ps -eo pid,stat,comm", "systemctl status kubelet", "systemctl status containerd",
    "systemctl is-active kubelet", "journalctl -u kubelet", "journalctl -k", "journalctl -n 20 --no-pager", "journalctl --since '10 min ago'",
    "sysctl -a", "sysctl vm.swappiness", "ls /mnt/disks", "ls /var/log", "ls -la /var/lib/kubelet/pods", "mount", "ip addr", "ip route",
    "chronyc tracking", "crictl ps", "crictl pods", "timedatectl", "top -b -n 1", "cat /etc/os-release", "cat /var/lib/kubelet/config.yaml",
    "sh -c 'dmesg | grep -i error | wc -l'", "systemctl restart kubelet",
]


@pytest.mark.parametrize("cmd", HEALTHY)
def test_supported_commands_succeed_on_healthy_node(cmd):
    r = run(_view(), cmd)
    assert r.exit_code == 0, r.output
    assert "internal error" not in r.output


def test_outputs_look_like_the_real_tools():
    v = _view()
    assert run(v, "df -h").output.startswith("Filesystem      Size  Used Avail Use% Mounted on\n")
    assert "/dev/sdb1       1.8T" in run(v, "df -h").output
    assert run(v, "lsblk").output.splitlines()[0] == "NAME    MAJ:MIN RM  SIZE RO TYPE MOUNTPOINTS"
    assert run(v, "free -m").output.splitlines()[0] == "               total        used        free      shared  buff/cache   available"
    assert run(v, "ps aux").output.splitlines()[0] == "USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND"
    assert run(v, "uname -a").output == "Linux worker-2 6.1.0-27-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.115-1 (2024-11-01) x86_64 GNU/Linux\n"
    assert run(v, "date").output == "Mon Mar  2 09:15:00 UTC 2026\n"
    assert re.match(r"^ 09:15:00 up 3 days,  1:25,  1 user,  load average: [\d.]+, [\d.]+, [\d.]+\n$", run(v, "uptime").output)
    iox = run(v, "iostat -x").output
    assert "Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz" in iox
    assert re.search(r"^sdb +\d", iox, re.M)
    ps = run(v, "ps aux").output
    assert "/usr/bin/kubelet" in ps and "mongod --bind_ip_all" in ps and re.search(r" geo$", ps, re.M)
    assert "/usr/bin/containerd" in ps


def test_failing_disk_shows_in_iostat_ps_and_load():
    node = _node()
    _fail_disk(node)
    v = _view(node)
    healthy = _view()
    ps = run(v, "ps aux").output
    assert re.search(r"^systemd\+ .* Dsl .* mongod", ps, re.M)
    assert not re.search(r" D(sl)? ", run(healthy, "ps aux").output)
    load = float(run(v, "cat /proc/loadavg").output.split()[0])
    assert load > float(run(healthy, "cat /proc/loadavg").output.split()[0])
    rep = run(v, "iostat -x 1 2").output.strip().split("\n\n")[-1]
    sdb = next(ln for ln in rep.splitlines() if ln.startswith("sdb"))
    assert float(sdb.split()[5]) > 100.0  # r_await in ms


def test_kubelet_stopped():
    node = _node()
    node.kubelet_running = False
    v = _view(node)
    r = run(v, "systemctl status kubelet")
    assert r.exit_code == 3 and "Active: inactive (dead)" in r.output
    r = run(v, "systemctl is-active kubelet")
    assert r.exit_code == 3 and r.output == "inactive\n"
    assert "/usr/bin/kubelet" not in run(v, "ps aux").output


def test_systemctl_restart_calls_hook():
    calls: list[str] = []
    v = _view(restart_unit=lambda u: calls.append(u) or True)
    assert run(v, "systemctl restart kubelet").exit_code == 0
    assert run(v, "systemctl restart containerd.service").exit_code == 0
    assert calls == ["kubelet", "containerd"]
    r = run(v, "systemctl restart nosuch")
    assert r.exit_code == 5 and "Unit nosuch.service not found." in r.output
    r = run(v, "systemctl status nosuch")
    assert r.exit_code == 4 and "could not be found" in r.output


def test_journalctl_merges_model_journal():
    node = _node()
    node.journal.append((850.0, "kubelet", 'E0302 09:14:10.000000     845 kubelet.go:2000] "Error syncing pod"'))
    v = _view(node)
    out = run(v, "journalctl -u kubelet --no-pager").output
    assert re.search(r"^Mar 02 09:14:10 worker-2 kubelet\[\d+\]: E0302 09:14:10.000000 .*Error syncing pod", out, re.M)
    assert "Error syncing pod" in run(v, "journalctl -p err --since '5 min ago'").output
    assert "Error syncing pod" not in run(v, "journalctl -u containerd").output
    assert run(v, "journalctl -u nosuch").output == "-- No entries --\n"
    r = run(v, "journalctl --since garbage")
    assert r.exit_code == 1 and "Failed to parse timestamp: garbage" in r.output
    assert len(run(v, "journalctl -n 3").output.splitlines()) == 3


def test_journalctl_kernel_matches_dmesg():
    node = _node()
    _fail_disk(node)
    out = run(_view(node), "journalctl -k --no-pager").output
    assert re.search(r"^Mar 02 09:1\d:\d\d worker-2 kernel: critical medium error, dev sdb", out, re.M)


def test_chronyc_reports_clock_offset():
    node = _node()
    node.clock_offset_s = 42.5
    out = run(_view(node), "chronyc tracking").output
    assert "System time     : 42.500000000 seconds fast of NTP time" in out
    assert "Leap status     : Not synchronised" in out
    assert run(_view(node), "date").output == "Mon Mar  2 09:15:42 UTC 2026\n"


def test_unknown_commands_and_flags():
    v = _view()
    r = run(v, "foo --bar")
    assert r.exit_code == 127 and r.output == "bash: foo: command not found\n"
    for cmd, code, text in [
        ("df --bogus", 1, "df: unrecognized option '--bogus'"),
        ("df -Z", 1, "df: invalid option -- 'Z'"),
        ("uname -Z", 1, "uname: invalid option -- 'Z'"),
        ("free -Z", 1, "free: invalid option -- 'Z'"),
        ("journalctl --bogus", 1, "journalctl: unrecognized option '--bogus'"),
        ("ls /nonexistent", 2, "ls: cannot access '/nonexistent': No such file or directory"),
        ("cat /nonexistent", 1, "cat: /nonexistent: No such file or directory"),
        ("systemctl frobnicate", 1, "Unknown command verb frobnicate."),
        ("ip foo", 1, 'Object "foo" is unknown'),
        ("sysctl -Z", 255, "sysctl: invalid option -- 'Z'"),
    ]:
        r = run(v, cmd)
        assert r.exit_code == code, (cmd, r)
        assert text in r.output, (cmd, r.output)


def test_determinism():
    cmds = ["dmesg", "smartctl -x /dev/sdb", "ps aux", "iostat -x", "journalctl --no-pager", "df -h", "crictl ps"]
    outs = []
    for _ in range(2):
        node = _node()
        _fail_disk(node)
        v = _view(node, variant=3)
        outs.append([run(v, c).output for c in cmds])
    assert outs[0] == outs[1]


def test_fuzz_never_raises():
    rng = random.Random(1234)
    words = sorted(HOST_BINARIES) + ["", "-", "--", "-a", "-x", "--level", "=", "/dev/sdb", "/proc", "-n", "5", "|", "'", '"', "-w", "a=b", "\x00", "sdb", "-l", "--since", "é"]
    node = _node()
    _fail_disk(node)
    v = _view(node)
    for _ in range(3000):
        argv = [rng.choice(words) for _ in range(rng.randint(0, 5))]
        r = run_host_command(v, argv)
        assert isinstance(r.output, str) and isinstance(r.exit_code, int)
        assert "internal error" not in r.output, argv


def test_every_binary_is_declared_once_with_a_summary():
    for name, binary in HOST_BINARIES.items():
        assert binary.where == "host" and binary.summary and name in (binary.name, *binary.aliases)
    r = run(_view(), "which smartctl ls nosuch")
    assert (r.output, r.exit_code) == ("/usr/sbin/smartctl\n/usr/bin/ls\n", 1)


def test_text_tools_read_files_or_stdin():
    v = _view()
    assert run(v, "wc -l /etc/hostname").output == "1\n"
    assert run(v, "grep -ci kubelet /var/lib/kubelet/kubeadm-flags.env").output == "1\n"
    assert run_host_command(v, ["grep", "-c", "x"], stdin="x\ny\nx\n").output == "2\n"
    assert run(v, "sh -c 'cat /etc/hostname | tee /tmp/name | wc -c'").output == "9\n"
    assert v.node.files["/tmp/name"] == "worker-2\n"
    r = run(v, "head -n 1 /nope")
    assert (r.output, r.exit_code) == ("head: cannot open '/nope' for reading: No such file or directory\n", 1)
