"""Node-level faults and what they do to the pods on the node.

Faults set host state (a sysctl, a NIC's error rate, a DIMM's ECC error rate);
this module turns that state into consequences: the share of requests that
pods on the node fail (and the error their callers see), kernel messages for
``dmesg``, and processes killed by uncorrectable memory errors. Everything is a
function of host state and the simulated clock, so forks and snapshots agree.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING, Any

from sre_env.sim.kernel.hosts import HostNode
from sre_env.sim.kernel.pods import kill_container

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["conntrack_demand", "conntrack_limit", "conntrack_count", "node_request_failure", "host_fault_key", "host_faults_tick", "NIC"]

#: the nodes' network interface (virtio on these VMs)
NIC = "eth0"
_DEFAULT_CONNTRACK_MAX = 262_144


def _stable(name: str, salt: int) -> int:
    return zlib.crc32(f"{name}/{salt}".encode())


def conntrack_demand(node: str, now: float, n_pods: int) -> int:
    """Connections the node tracks: system flows plus, per pod, its service and probe traffic."""
    return 800 + _stable(node, int(now // 10)) % 400 + 40 * n_pods


def conntrack_limit(host: HostNode) -> int:
    raw = str((host.sysctls or {}).get("net.netfilter.nf_conntrack_max", _DEFAULT_CONNTRACK_MAX)).split()
    try:
        return max(int(raw[0]), 1)
    except (ValueError, IndexError):
        return _DEFAULT_CONNTRACK_MAX


def conntrack_count(host: HostNode, now: float, n_pods: int) -> int:
    """``nf_conntrack_count``: the table never holds more than its limit."""
    return min(conntrack_demand(host.name, now, n_pods), conntrack_limit(host))


def node_request_failure(host: HostNode, now: float, n_pods: int) -> tuple[float, str]:
    """Share of requests to or from pods on this node that fail, and the error callers see.

    A full conntrack table drops the first packet of new flows (callers time out
    dialling); CRC errors on the NIC drop frames, and retransmissions push calls
    past their deadlines; a flapping link drops everything while it is down.
    """
    frac, text = 0.0, ""
    demand = conntrack_demand(host.name, now, n_pods)
    limit = conntrack_limit(host)
    if demand > limit:
        # established (long-lived gRPC) connections keep working; new ones are dropped
        frac += 0.5 * (1.0 - limit / demand)
        text = "dial tcp: i/o timeout"
    if host.nic_crc_error_fraction > 0:
        frac += min(0.6, host.nic_crc_error_fraction * 12.0)
        text = text or "context deadline exceeded"
    if host.nic_flap_down_s_per_min > 0:
        frac += host.nic_flap_down_s_per_min / 60.0
        text = text or "read: connection reset by peer"
    return min(frac, 0.95), text


def host_fault_key(world: "World") -> tuple:
    """Changes whenever the failure shares above may change (cheap: read every tick)."""
    key: list[Any] = []
    for host in world.hosts.values():
        limit = conntrack_limit(host)
        active = limit < 20_000 or host.nic_crc_error_fraction > 0 or host.nic_flap_down_s_per_min > 0
        key.append((limit, host.nic_crc_error_fraction, host.nic_flap_down_s_per_min, int(world.clock.now // 10) if active else 0))
    return tuple(key)


# ---------------------------------------------------------------- per-tick effects
def host_faults_tick(world: "World") -> None:
    """Kernel messages and memory-error kills for hosts with an active fault (a no-op otherwise)."""
    now = world.clock.now
    for host in world.hosts.values():
        busy = host.ecc_uncorrectable_per_hour > 0 or host.nic_crc_error_fraction > 0 or host.nic_flap_down_s_per_min > 0
        full = conntrack_limit(host) < 20_000
        if not (busy or full):
            continue
        slot = int(now // 5)
        h = _stable(host.name, slot)
        if full:
            n_pods = sum(1 for p in world.store.iter("Pod") if p["spec"].get("nodeName") == host.name)
            if conntrack_demand(host.name, now, n_pods) > conntrack_limit(host):
                if h % 3 == 0:
                    host.kmsg.append((now, 4, f"net_ratelimit: {40 + h % 900} callbacks suppressed"))
                host.kmsg.append((now, 4, "nf_conntrack: nf_conntrack: table full, dropping packet"))
        if host.nic_crc_error_fraction > 0 and h % 4 == 0:
            host.kmsg.append((now, 4, f"virtio_net virtio0 {NIC}: rx error: bad frame checksum (len {60 + h % 1400})"))
        if host.nic_flap_down_s_per_min > 0 and slot % 12 == h % 12:
            host.kmsg.append((now, 6, f"virtio_net virtio0 {NIC}: Link is Down"))
            host.kmsg.append((now + host.nic_flap_down_s_per_min, 6, f"virtio_net virtio0 {NIC}: Link is Up - 10Gbps/Full - flow control off"))
        if host.ecc_uncorrectable_per_hour > 0:
            _ecc_tick(world, host, now, h)


def _ecc_tick(world: "World", host: HostNode, now: float, h: int) -> None:
    # corrected errors are frequent and harmless on their own; they announce the DIMM is going
    if h % 6 == 0:
        host.kmsg.append((now, 3, f"EDAC MC0: 1 CE memory read error on {host.ecc_dimm} (channel:1 slot:0 page:0x{(h >> 4) % 0x3fffff:x} offset:0x{(h % 64) * 64:x} grain:32 syndrome:0x0 - err_code:0x0000:0x009f socket:0 ha:0 channel_mask:2 rank:1)"))
    # an uncorrectable error kills whichever process owns the page (SIGBUS)
    per_tick = host.ecc_uncorrectable_per_hour * 5.0 / 3600.0
    if (h % 10_000) / 10_000.0 >= per_tick:
        return
    victims = [p for p in world.store.list("Pod") if p["spec"].get("nodeName") == host.name and not p["metadata"].get("deletionTimestamp")]
    if not victims:
        return
    pod = victims[(h >> 8) % len(victims)]
    rt = world.runtimes.get(pod["metadata"]["uid"])
    if rt is None:
        return
    for ctr in rt.containers.values():
        if ctr.state != "running" or ctr.exit_at is not None:
            continue
        page = 0x100000 + (h % 0x2FFFFF)
        pid = 2000 + h % 30000
        host.kmsg.append((now, 0, f"mce: [Hardware Error]: CPU {h % host.cpu_cores}: Machine Check Exception: 0 Bank 7: bd80000000100134"))
        host.kmsg.append((now, 0, f"EDAC MC0: 1 UE memory read error on {host.ecc_dimm} (channel:1 slot:0 page:0x{page:x} offset:0x0 grain:32 - OVERFLOW err_code:0x0000:0x0090)"))
        host.kmsg.append((now, 3, f"Memory failure: 0x{page:x}: Sending SIGBUS to {ctr.name}:{pid} due to hardware memory corruption"))
        host.kmsg.append((now, 3, f"Memory failure: 0x{page:x}: recovery action for dirty LRU page: Recovered"))
        kill_container(world, pod, rt, ctr, exit_code=135, reason="Error")
        break
