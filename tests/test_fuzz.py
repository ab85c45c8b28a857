"""Grammar fuzzing of ``env.step``: nothing an agent types may raise or leave the observation space.

The commands come from tests/fuzz_grammar.py (kubectl, shell pipelines, ssh, PromQL,
LogQL, traces, hostile input). Step times and memory are printed, never asserted
(machines are noisy); benchmarks/fuzz.py reports the same figures for long runs.
"""

from __future__ import annotations

import statistics

import pytest

from fuzz_grammar import FuzzStats, pick_ids, rss_bytes, run_fuzz


def _report(stats: FuzzStats) -> str:
    times = sorted(t for t, _, _ in stats.times)
    slow = stats.slowest()
    med = statistics.median(times) if times else 0.0
    return f"{stats.commands} commands, {stats.resets} resets, median {med * 1000:.1f} ms, max {slow[0] * 1000:.0f} ms ({slow[1]}: {slow[2]})" if slow else "no commands"


def _check(stats: FuzzStats) -> None:
    assert not stats.exceptions, "\n\n".join(f"{i}: {cmd!r}\n{tb}" for i, cmd, tb in stats.exceptions[:5])
    assert not stats.out_of_space, stats.out_of_space[:10]


@pytest.mark.parametrize("env_id", pick_ids(3))
def test_fuzz_fast(env_id: str) -> None:
    stats = run_fuzz(env_id, 120, seed=7)
    print(_report(stats))
    _check(stats)
    assert stats.commands == 120


#: the slow run: at least 200,000 commands over 12 ids in every layer, in chunks xdist can spread over the cores
#: (each well inside the per-test timeout); one truncated episode in ten is graded
LONG_IDS = pick_ids(12)
LONG_CHUNKS = 2
LONG_COMMANDS = -(-200_000 // (len(LONG_IDS) * LONG_CHUNKS))


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(LONG_CHUNKS))
@pytest.mark.parametrize("env_id", LONG_IDS)
def test_fuzz_long(env_id: str, chunk: int) -> None:
    stats = run_fuzz(env_id, LONG_COMMANDS, seed=1000 * (chunk + 1), grade_every=10)
    print(_report(stats))
    _check(stats)
    assert stats.commands == LONG_COMMANDS


def test_the_long_run_has_200000_commands_over_10_ids() -> None:
    assert len(set(LONG_IDS)) >= 10 and len(LONG_IDS) * LONG_CHUNKS * LONG_COMMANDS >= 200_000


@pytest.mark.slow
def test_fuzz_memory_over_a_long_episode() -> None:
    """RSS at the start and end of a 2,000-step episode (printed: memory should stay flat)."""
    start: list[int] = []

    def on_step(i: int, _env: object) -> None:
        if i == 100:  # after the first caches filled
            start.append(rss_bytes())

    stats = run_fuzz(pick_ids(1)[0], 2000, seed=3, max_steps=2000, safe=True, on_step=on_step)
    end = rss_bytes()
    print(f"RSS at step 100: {start[0] / 2**20:.0f} MiB, at step 2000: {end / 2**20:.0f} MiB; {_report(stats)}")
    _check(stats)
