"""OS resource exhaustion on a node: the evidence is reachable from the agent's surface, absent when healthy,
and the node's cron/disk model behaves as the real tools do (refills, ENOSPC, rm, du)."""

from __future__ import annotations

import pytest

import sre_env

CASES = {
    "DiskFull": (
        [
            "kubectl describe node {node}",
            "kubectl get events -n {ns} | grep Evicted | tail -3",
            "ssh {node} df -h /",
            "ssh {node} du -sh /var/*",
            "ssh {node} du -sh /var/tmp/*",
            "ssh {node} ls /etc/cron.d",
            "ssh {node} cat /etc/cron.d/netcapture",
            "ssh {node} journalctl -u kubelet --no-pager | grep eviction_manager | tail -3",
        ],
        ["KubeletHasDiskPressure", "node.kubernetes.io/disk-pressure:NoSchedule", "The node was low on resource: ephemeral-storage", " 100% /", "/var/tmp/netcapture", "tcpdump -i any", 'resourceName="ephemeral-storage"'],
    ),
    "InodeExhaustion": (
        [
            "kubectl describe node {node}",
            "kubectl get events -n {ns} | grep Evicted | tail -3",
            "ssh {node} df -i /",
            "ssh {node} du --inodes -s /var/tmp/*",
            "ssh {node} cat /etc/cron.d/journal-export",
            "ssh {node} journalctl -u kubelet --no-pager | grep eviction_manager | tail -3",
        ],
        ["KubeletHasDiskPressure", "The node was low on resource: inodes", "     0  100% /", "/var/tmp/journal-export", "split -l 1", 'resourceName="inodes"'],
    ),
}


def investigate(env_id: str, seed: int, commands: list[str]) -> tuple[str, object]:
    env = sre_env.SREEnv(env_id)
    env.reset(seed=seed)
    node = env.scenario.variant["node"]
    return "\n".join(env.step(c.format(node=node, ns=env.scenario.namespace))[0]["output"] for c in commands), env.scenario


@pytest.mark.parametrize("name", sorted(CASES))
def test_scripted_investigation_finds_the_evidence(name: str) -> None:
    commands, expected = CASES[name]
    text, scenario = investigate(name, 0, commands)
    for needle in expected:
        assert needle in text, f"{name}: {needle!r} not found by the investigation"
    env = sre_env.SREEnv("MissingEnvVar")
    env.reset(seed=0)
    control = "\n".join(env.step(c.format(node=scenario.variant["node"], ns="hotel-reservation"))[0]["output"] for c in commands)
    for needle in expected:
        assert needle not in control, f"{name}: {needle!r} also shows on a healthy cluster"


def test_inode_exhaustion_leaves_space_free() -> None:
    env = sre_env.SREEnv("InodeExhaustion")
    env.reset(seed=0)
    node = env.scenario.variant["node"]
    row = env.step(f"ssh {node} df -h /")[0]["output"].splitlines()[1].split()
    assert int(row[4].rstrip("%")) < 50, "space is plentiful: only the inodes are gone"


def _root(env: sre_env.SREEnv) -> tuple[int, int]:
    d = env.backend.world.hosts[env.scenario.variant["node"]].disks[0]
    return int(d.used_bytes), int(d.inodes_used)


def test_freeing_space_without_stopping_the_writer_refills() -> None:
    env = sre_env.SREEnv("DiskFull")
    env.reset(seed=0)
    node = env.scenario.variant["node"]
    full = _root(env)[0]
    assert env.step(f"ssh {node} rm /var/tmp/netcapture")[0]["output"] == "rm: cannot remove '/var/tmp/netcapture': Is a directory\n"
    assert env.step(f"ssh {node} rm -rf /var/tmp/netcapture")[0]["output"] == ""
    freed = _root(env)[0]
    assert full - freed > 100 * 2**30
    env.step("sleep 300")
    assert _root(env)[0] - freed > 5 * 2**30, "the cron job recreated its directory and writes a capture every minute"
    listing = env.step(f"ssh {node} ls -l /var/tmp/netcapture")[0]["output"]
    sizes = [int(line.split()[4]) for line in listing.splitlines() if line.endswith(".pcap")]
    assert len(sizes) >= 4 and min(sizes) > 2**30, listing


def test_removing_the_cron_line_stops_the_writer_and_rm_glob_frees() -> None:
    env = sre_env.SREEnv("DiskFull")
    env.reset(seed=0)
    node = env.scenario.variant["node"]
    env.step(f"ssh {node} \"sed -i '/tcpdump/d' /etc/cron.d/netcapture\"")
    env.step(f"ssh {node} rm -f '/var/tmp/netcapture/*'")
    after = _root(env)
    env.step("sleep 300")
    assert _root(env) == after, "no cron job writes any more"
    du = env.step(f"ssh {node} du -sh /var/tmp/netcapture")[0]["output"]
    assert du.split()[0] in ("4.0K", "8.0K"), du
    env.step("sleep 60")
    described = env.step(f"kubectl describe node {node}")[0]["output"]
    assert "KubeletHasNoDiskPressure" in described, "pressure clears after the transition period"


def test_cron_schedule_is_honoured() -> None:
    from datetime import datetime, timezone

    from sre_env.sim.node.diskfill import schedule_matches

    t = datetime(2026, 3, 2, 9, 15, tzinfo=timezone.utc)  # a Monday
    assert schedule_matches("*/15 * * * *", t)
    assert not schedule_matches("*/10 * * * *", t)
    assert schedule_matches("15 9 * * 1", t)
    assert not schedule_matches("15 9 * * 0,6", t)
    assert schedule_matches("0-20/5 8-10 2 3 *", t)
    assert not schedule_matches("bogus * * * *", t)


def test_cron_files_with_dots_are_ignored_like_cron_does() -> None:
    env = sre_env.SREEnv("MissingEnvVar")
    env.reset(seed=0)
    host = env.backend.world.hosts["worker-2"]
    before = int(host.disks[0].used_bytes)
    env.step("ssh worker-2 \"echo '* * * * * root mkdir -p /var/tmp/cap && tcpdump -i any -G 60 -W 1 -w /var/tmp/cap/x.pcap' > /etc/cron.d/cap.disabled\"")
    env.step("sleep 180")
    assert int(host.disks[0].used_bytes) == before
    env.step("ssh worker-2 \"echo '* * * * * root mkdir -p /var/tmp/cap && tcpdump -i any -G 60 -W 1 -w /var/tmp/cap/x-\\%H\\%M.pcap' > /etc/cron.d/cap\"")
    env.step("sleep 180")
    assert int(host.disks[0].used_bytes) - before > 2 * 2**30
    assert "/var/tmp/cap" in env.step("ssh worker-2 du -sh /var/tmp/*")[0]["output"]


def test_a_glob_over_millions_of_files_is_too_long_for_rm() -> None:
    env = sre_env.SREEnv("InodeExhaustion")
    env.reset(seed=0)
    node = env.scenario.variant["node"]
    before = _root(env)
    out = env.step(f"ssh {node} rm -f '/var/tmp/journal-export/*'")[0]["output"]
    assert out == "bash: /usr/bin/rm: Argument list too long\n"
    assert _root(env) == before
    env.step(f"ssh {node} rm -rf /var/tmp/journal-export")
    assert before[1] - _root(env)[1] > 6_000_000
    assert "100%" not in env.step(f"ssh {node} df -i /")[0]["output"]


def test_find_delete_clears_the_inodes_and_find_lists_files() -> None:
    env = sre_env.SREEnv("InodeExhaustion")
    env.reset(seed=0)
    node = env.scenario.variant["node"]
    sample = env.step(f"ssh {node} find /var/tmp/journal-export -type f -name '*-aa' | head -3")[0]["output"].splitlines()
    assert len(sample) == 3 and all(line.startswith("/var/tmp/journal-export/") and line.endswith("-aa") for line in sample)
    assert env.step(f"ssh {node} find /var/tmp/journal-export -type f -delete")[0]["output"] == ""
    assert _root(env)[1] < 100_000
    assert env.step(f"ssh {node} find /var/tmp/journal-export -type f")[0]["output"] == ""
    assert "unknown predicate" in env.step(f"ssh {node} find / -frobnicate")[0]["output"]
