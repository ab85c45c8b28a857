"""The kernel log of a simulated node, rendered on demand.

The node model only records, per tick, how many reads failed on each disk
(``Disk.error_ticks``). This module turns that into what Linux 6.1 would have
printed: the libata error-handler block, the SCSI sense lines, the block
layer's ``critical medium error`` line and the occasional ``Buffer I/O
error``, all behind the kernel's printk rate limit (10 messages per 5 s, then
``<func>: N callbacks suppressed``). Rendering is lazy so a failing disk costs
nothing until someone runs ``dmesg`` or ``journalctl -k``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Iterable

from sre_env.kube.timefmt import parse_iso_safe
from sre_env.sim.kernel.hashing import stable_hash
from sre_env.sim.kernel.hosts import Disk, HostNode
from sre_env.sim.node.stats import partition

__all__ = ["KLine", "kernel_log", "LEVELS", "ata_port", "scsi_host", "PART_START"]

#: (uptime seconds, syslog level 0..7, text); text may hold ``\n`` continuation lines
KLine = tuple[float, int, str]

LEVELS = ("emerg", "alert", "crit", "err", "warn", "notice", "info", "debug")
ERR, WARN, NOTICE, INFO = 3, 4, 5, 6

#: the kernel's DEFAULT_RATELIMIT_INTERVAL / DEFAULT_RATELIMIT_BURST
RL_INTERVAL_S = 5.0
RL_BURST = 10
#: keep at most this many lines in total (the ring buffer is finite, and so is a reader's patience)
MAX_LINES = 500
#: first sector of partition 1 (GPT default alignment)
PART_START = 2048


def ata_port(index: int) -> int:
    return index + 1


def scsi_host(index: int) -> int:
    return index


def _disk_sectors(d: Disk) -> int:
    return max(int(d.size_bytes) // 512, 1)


def _cap_decimal(nbytes: int) -> str:
    """``(2.00 TB/1.82 TiB)`` as sd prints capacities."""
    def three(v: float, units: tuple[str, ...], base: float) -> str:
        i = 0
        while v >= base and i < len(units) - 1:
            v /= base
            i += 1
        s = f"{v:.3g}" if v < 100 else f"{v:.0f}"
        if "." not in s and v < 100 and len(s) < 3:
            s = f"{v:.{3 - len(s)}f}"
        return f"{s} {units[i]}"

    return f"{three(nbytes, ('B', 'kB', 'MB', 'GB', 'TB', 'PB'), 1000.0)}/{three(nbytes, ('B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'), 1024.0)}"


@lru_cache(maxsize=64)
def _boot_lines(name: str, kernel: str, cores: int, mem: int, disks: tuple[tuple[str, str, int, str, bool], ...]) -> tuple[KLine, ...]:
    """Boot messages: deterministic per node, so cached on the node's identity."""
    h = stable_hash(name)
    deb = "6.1.115-1 (2024-11-01)" if kernel == "6.1.0-27-amd64" else "6.1.119-1 (2024-11-22)"
    mem_k = mem // 1024
    lines: list[KLine] = [
        (0.0, NOTICE, f"Linux version {kernel} (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian {deb}"),
        (0.0, INFO, f"Command line: BOOT_IMAGE=/boot/vmlinuz-{kernel} root=UUID={h:08x}-3f2c-4b8e-9a41-{h * 7 % 16**12:012x} ro console=tty0 console=ttyS0,115200 earlyprintk=ttyS0,115200 consoleblank=0"),
        (0.0, INFO, "BIOS-provided physical RAM map:"),
        (0.0, INFO, "NX (Execute Disable) protection: active"),
        (0.0, INFO, "SMBIOS 2.8 present."),
        (0.0, INFO, "DMI: QEMU Standard PC (Q35 + ICH9, 2009), BIOS 1.16.2-debian-1.16.2-1 04/01/2014"),
        (0.0, INFO, "Hypervisor detected: KVM"),
        (0.000002, INFO, "kvm-clock: using sched offset of 5021351733 cycles"),
        (0.004812, INFO, "tsc: Detected 2799.998 MHz processor"),
        (0.021034, INFO, f"Memory: {mem_k - 412_316}K/{mem_k}K available (14336K kernel code, 2362K rwdata, 8632K rodata, 2768K init, 4376K bss, 412316K reserved, 0K cma-reserved)"),
        (0.081226, INFO, f"smp: Brought up 1 node, {cores} CPUs"),
        (0.081226, INFO, "smpboot: Max logical packages: 1"),
        (0.312877, INFO, "ACPI: Interpreter enabled"),
        (0.624518, INFO, "Freeing unused kernel image (initmem) memory: 2768K"),
        (0.624788, INFO, "Run /init as init process"),
        (0.893112, INFO, "ahci 0000:00:1f.2: AHCI 0001.0000 32 slots 6 ports 1.5 Gbps 0x3f impl SATA mode"),
        (0.893140, INFO, "scsi host0: ahci"),
    ]
    t = 1.0
    for i, (dev, model, size, mnt, rot) in enumerate(disks):
        p, host = ata_port(i), scsi_host(i)
        fw = f"{(h + i) % 900 + 100:X}Q"
        sectors = size // 512
        t += 0.011
        lines.append((t, INFO, f"ata{p}: SATA link up 6.0 Gbps (SStatus 133 SControl 300)"))
        lines.append((t + 0.0004, INFO, f"ata{p}.00: ATA-{10 if rot else 11}: {model}, {fw}, max UDMA/133"))
        lines.append((t + 0.0005, INFO, f"ata{p}.00: {sectors} sectors, multi 16: LBA48 NCQ (depth 32)"))
        lines.append((t + 0.0008, INFO, f"ata{p}.00: configured for UDMA/133"))
        lines.append((t + 0.0011, NOTICE, f"scsi {host}:0:0:0: Direct-Access     ATA      {model[:16]:<16} {fw:<4} PQ: 0 ANSI: 5"))
        lines.append((t + 0.0031, NOTICE, f"sd {host}:0:0:0: [{dev}] {sectors} 512-byte logical blocks: ({_cap_decimal(size)})"))
        if rot:
            lines.append((t + 0.0031, NOTICE, f"sd {host}:0:0:0: [{dev}] 4096-byte physical blocks"))
        lines.append((t + 0.0032, NOTICE, f"sd {host}:0:0:0: [{dev}] Write Protect is off"))
        lines.append((t + 0.0033, NOTICE, f"sd {host}:0:0:0: [{dev}] Write cache: enabled, read cache: enabled, doesn't support DPO or FUA"))
        parts = f" {dev}: {dev}1 {dev}14 {dev}15" if i == 0 else f" {dev}: {dev}1"
        lines.append((t + 0.0061, INFO, parts))
        lines.append((t + 0.0063, NOTICE, f"sd {host}:0:0:0: [{dev}] Attached SCSI disk"))
    root_part = f"{disks[0][0]}1" if disks else "sda1"
    lines += [
        (1.482114, INFO, f"EXT4-fs ({root_part}): mounted filesystem with ordered data mode. Quota mode: none."),
        (2.071350, INFO, "systemd[1]: systemd 252.30-1~deb12u2 running in system mode (+PAM +AUDIT +SELINUX +APPARMOR +IMA +SMACK +SECCOMP +GCRYPT -GNUTLS +OPENSSL +ACL +BLKID +CURL +ELFUTILS +FIDO2 +IDN2 -IDN +IPTC +KMOD +LIBCRYPTSETUP +LIBFDISK +PCRE2 -PWQUALITY +P11KIT +QRENCODE +TPM2 +BZIP2 +LZ4 +XZ +ZLIB +ZSTD -BPF_FRAMEWORK -XKBCOMMON +UTMP +SYSVINIT default-hierarchy=unified)"),
        (2.071774, INFO, "systemd[1]: Detected virtualization kvm."),
        (2.071781, INFO, "systemd[1]: Detected architecture x86-64."),
        (2.083505, INFO, f"systemd[1]: Hostname set to <{name}>."),
        (2.712331, INFO, f"EXT4-fs ({root_part}): re-mounted. Quota mode: none."),
    ]
    t = 3.1
    for i, (dev, _model, _size, mnt, _rot) in enumerate(disks):
        if i == 0 or not mnt:
            continue
        t += 0.0431
        lines.append((t, INFO, f"EXT4-fs ({dev}1): mounted filesystem with ordered data mode. Quota mode: none."))
    lines += [
        (4.216305, INFO, "audit: type=1400 audit(1772254051.312:2): apparmor=\"STATUS\" operation=\"profile_load\" profile=\"unconfined\" name=\"lsb_release\" pid=512 comm=\"apparmor_parser\""),
        (5.880172, INFO, "bridge: filtering via arp/ip/ip6tables is no longer available by default. Update your scripts to load br_netfilter if you need this."),
        (5.884017, INFO, "Bridge firewalling registered"),
        (6.409281, INFO, "Initializing XFRM netlink socket"),
        (9.117733, INFO, "IPv6: ADDRCONF(NETDEV_CHANGE): cni0: link becomes ready"),
    ]
    return tuple(lines)


def _node_key(node: HostNode) -> tuple[tuple[str, str, int, str, bool], ...]:
    return tuple((d.device, d.model, int(d.size_bytes), d.mountpoint, bool(d.rotational)) for d in node.disks)


def _pod_lines(node: HostNode, pods: Iterable[dict[str, Any]]) -> list[KLine]:
    """veth/bridge messages the CNI plugin causes when each pod sandbox starts."""
    out: list[KLine] = []
    port = 0
    starts = []
    for pod in pods:
        if not isinstance(pod, dict):
            continue
        st = parse_iso_safe((pod.get("status") or {}).get("startTime"))
        if st is None or (pod.get("spec") or {}).get("hostNetwork"):
            continue
        starts.append((st, str((pod.get("metadata") or {}).get("name", ""))))
    for st, name in sorted(starts):
        port += 1
        veth = f"veth{stable_hash(node.name, name) & 0xFFFFFFFF:08x}"
        up = node.uptime(st)
        out.append((up, INFO, f"cni0: port {port}({veth}) entered blocking state"))
        out.append((up, INFO, f"cni0: port {port}({veth}) entered disabled state"))
        out.append((up + 0.000012, INFO, f"device {veth} entered promiscuous mode"))
        out.append((up + 0.004219, INFO, f"cni0: port {port}({veth}) entered forwarding state"))
    return out


def _tick_len(ticks: Any) -> float:
    """The model's tick length, read from the spacing of consecutive error ticks."""
    best = 0.0
    prev = None
    for t, _n in ticks:
        if prev is not None and t > prev:
            d = t - prev
            if best == 0.0 or d < best:
                best = d
        prev = t
    return min(max(best or 1.0, 0.1), 10.0)


_EVENT_CACHE: dict[tuple, list[tuple[float, int, int, int]]] = {}


def _error_events(node: HostNode) -> list[tuple[float, int, int, int]]:
    """Error events that got past printk's rate limit: (sim time, disk index, seq, suppressed before).

    Failed reads of one tick are spread evenly over the tick; one ratelimit
    state is shared by all disks, as the kernel's is per call site. The result
    is memoised on the identity and ends of each disk's tick deque, which
    change whenever a tick is appended.
    """
    key = tuple(
        (id(d.error_ticks), len(d.error_ticks), d.error_ticks[0], d.error_ticks[-1]) if d.error_ticks else None for d in node.disks
    )
    if not any(key):
        return []
    hit = _EVENT_CACHE.get(key)
    if hit is not None:
        return hit
    out = _compute_events(node)
    if len(_EVENT_CACHE) > 64:
        _EVENT_CACHE.clear()
    _EVENT_CACHE[key] = out
    return out


def _compute_events(node: HostNode) -> list[tuple[float, int, int, int]]:
    ticks: list[tuple[float, float, int, int, int]] = []
    for i, d in enumerate(node.disks):
        if not d.error_ticks:
            continue
        dt = _tick_len(d.error_ticks)
        for j, (t, n) in enumerate(d.error_ticks):
            try:
                cnt = int(round(float(n)))
            except (TypeError, ValueError):
                continue
            if cnt > 0:
                ticks.append((float(t), dt, i, j, cnt))
    ticks.sort()
    out: list[tuple[float, int, int, int]] = []
    win = -math.inf
    printed = missed = 0
    for t, dt, i, j, n in ticks:
        t0 = t - dt
        sp = dt / n
        k = 0
        while k < n:
            tk = t0 + (k + 0.5) * sp
            pending = 0
            if tk >= win + RL_INTERVAL_S:
                pending, missed, printed, win = missed, 0, 0, tk
            x = (win + RL_INTERVAL_S - t0) / sp
            end = min(n, max(math.ceil(x - 0.5), k + 1))
            can = min(end - k, RL_BURST - printed)
            for m in range(can):
                out.append((t0 + (k + m + 0.5) * sp, i, j * 7919 + k + m, pending if m == 0 else 0))
            if can <= 0 and pending:
                # the suppressed count is printed only together with a message that gets through
                missed += pending
            printed += max(can, 0)
            missed += (end - k) - max(can, 0)
            k = end
    return out


def _event_lines(node: HostNode, idx: int, t: float, seq: int, suppressed: int, variant: int) -> list[KLine]:
    d = node.disks[idx]
    up = node.uptime(t)
    p, host = ata_port(idx), scsi_host(idx)
    dev = d.device
    if d.bad_sectors:
        sector = int(d.bad_sectors[(seq * 2654435761 + variant) % len(d.bad_sectors)])
    else:
        sector = PART_START + (stable_hash(dev, seq, variant) % max(_disk_sectors(d) - PART_START, 1))
    start = sector & ~7
    tag = (seq * 13 + variant) % 32
    lb = [(start >> s) & 0xFF for s in (0, 8, 16, 24, 32, 40)]
    rb = [(sector >> s) & 0xFF for s in (0, 8, 16, 24, 32, 40)]
    age = (seq % 3)
    sd = f"sd {host}:0:0:0: [{dev}] tag#{tag}"
    lines: list[KLine] = []
    if suppressed:
        lines.append((up, WARN, f"scsi_io_completion_action: {suppressed} callbacks suppressed"))
    lines += [
        (up, ERR, f"ata{p}.00: exception Emask 0x0 SAct 0x{1 << tag:x} SErr 0x0 action 0x0"),
        (up, ERR, f"ata{p}.00: irq_stat 0x40000008"),
        (up, ERR, f"ata{p}.00: failed command: READ FPDMA QUEUED"),
        (
            up,
            ERR,
            f"ata{p}.00: cmd 60/08:{(tag << 3) & 0xFF:02x}:{lb[0]:02x}:{lb[1]:02x}:{lb[2]:02x}/00:00:{lb[3]:02x}:{lb[4]:02x}:{lb[5]:02x}/40 tag {tag} ncq dma 4096 in\n"
            f"         res 41/40:00:{rb[0]:02x}:{rb[1]:02x}:{rb[2]:02x}/00:00:{rb[3]:02x}:{rb[4]:02x}:{rb[5]:02x}/00 Emask 0x409 (media error) <F>",
        ),
        (up, ERR, f"ata{p}.00: status: {{ DRDY ERR }}"),
        (up, ERR, f"ata{p}.00: error: {{ UNC }}"),
        (up + 0.002918, INFO, f"ata{p}.00: configured for UDMA/133"),
        (up + 0.002951, INFO, f"{sd} FAILED Result: hostbyte=DID_OK driverbyte=DRIVER_OK cmd_age={age}s"),
        (up + 0.002953, INFO, f"{sd} Sense Key : Medium Error [current]"),
        (up + 0.002955, INFO, f"{sd} Add. Sense: Unrecovered read error - auto reallocate failed"),
        (up + 0.002957, INFO, f"{sd} CDB: Read(10) 28 00 {lb[3]:02x} {lb[2]:02x} {lb[1]:02x} {lb[0]:02x} 00 00 08 00"),
    ]
    if suppressed:
        lines.append((up + 0.002959, WARN, f"blk_print_req_error: {suppressed} callbacks suppressed"))
    lines.append((up + 0.002960, ERR, f"critical medium error, dev {dev}, sector {sector} op 0x0:(READ) flags 0x80700 phys_seg 1 prio class 2"))
    if seq % 3 == 0 and sector >= PART_START:
        lines.append((up + 0.002981, ERR, f"Buffer I/O error on dev {partition(d)}, logical block {(sector - PART_START) // 8}, async page read"))
    lines.append((up + 0.003012, INFO, f"ata{p}: EH complete"))
    return lines


def kernel_log(node: HostNode, now: float, pods: Iterable[dict[str, Any]] = (), variant: int = 0) -> list[KLine]:
    """Everything ``dmesg`` would show at ``now``, sorted by time and capped at :data:`MAX_LINES`."""
    boot = list(_boot_lines(node.name, node.kernel, int(node.cpu_cores), int(node.memory_bytes), _node_key(node)))
    extra = [ln for ln in _pod_lines(node, pods) if ln[0] <= node.uptime(now)]
    # messages node faults logged (conntrack, NIC, memory errors), newest kept
    extra += [(node.uptime(t), level, text) for t, level, text in node.kmsg if t <= now]
    errs: list[KLine] = []
    events = [e for e in _error_events(node) if e[0] <= now]
    budget = MAX_LINES - len(boot) - len(extra)
    # render newest first until the budget is used: the ring buffer keeps the latest
    used = 0
    for t, idx, seq, sup in reversed(events):
        ev = _event_lines(node, idx, t, seq, sup, variant)
        n = len(ev) + sum(1 for ln in ev if "\n" in ln[2])  # continuation lines count too
        if used + n > budget:
            break
        used += n
        errs.extend(ev)
    lines = boot + extra + errs
    lines.sort(key=lambda x: x[0])
    return lines
