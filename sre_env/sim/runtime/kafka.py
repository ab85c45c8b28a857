"""A single-broker Kafka as the astronomy shop uses it: one topic, consumer groups, offsets.

Enough of the broker to make queue incidents real: producers append records
(their count follows the producer's request rate), each consumer group commits
the offset it has processed, lag is log-end minus committed, and a record a
consumer cannot deserialize (a poison pill) stops that consumer at its offset
every time it restarts, because it resumes from the committed offset. A group
whose consumer died stays ``Stable`` until the session timeout expires, which
is why ``--reset-offsets`` is refused right after a crash.

``kafka_cli`` renders the broker tools an operator runs inside the kafka pod
(``kafka-consumer-groups.sh``, ``kafka-topics.sh``, ``kafka-console-producer.sh``)
with their real output shapes and error texts.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

from sre_env.backend import ExecResult

__all__ = ["ConsumerGroup", "KafkaBroker", "kafka_cli", "SESSION_TIMEOUT_S"]

#: session.timeout.ms default (45 s): a dead consumer keeps its group Stable this long
SESSION_TIMEOUT_S = 45.0


@dataclass
class ConsumerGroup:
    name: str
    topic: str
    client_id: str
    #: next offset the group will process (what it committed)
    committed: int = 0
    #: fractional progress towards the next commit
    carry: float = 0.0
    #: consumer id while a member is joined (or until its session times out)
    member: str | None = None
    member_host: str = ""
    member_until: float = 0.0
    #: records moved past without processing by offset resets (poison pills excluded)
    skipped: int = 0

    def state(self, now: float) -> str:
        if self.member and (self.member_until == 0.0 or now < self.member_until):
            return "Stable"
        return "Empty"


@dataclass
class KafkaBroker:
    topic: str = "orders"
    #: records appended so far (log-end offset), fractional between ticks
    produced: float = 0.0
    #: offset -> the record's bytes for records that are not valid OrderResult messages
    poison: dict[int, str] = field(default_factory=dict)
    groups: dict[str, ConsumerGroup] = field(default_factory=dict)

    @property
    def end_offset(self) -> int:
        return int(self.produced)

    def lag(self, group: str) -> int:
        g = self.groups[group]
        return max(0, self.end_offset - g.committed)

    def append_raw(self, value: str) -> int:
        """A record from a console producer: not a protobuf OrderResult, so a poison pill."""
        offset = self.end_offset
        self.poison[offset] = value
        self.produced = float(offset + 1)
        return offset

    def join(self, group: str, member: str, host: str) -> None:
        g = self.groups[group]
        g.member, g.member_host, g.member_until = member, host, 0.0

    def leave(self, group: str, now: float, *, clean: bool) -> None:
        """A consumer stopped: a clean shutdown leaves at once, a crash only after the session timeout."""
        g = self.groups[group]
        if g.member is None:
            return
        if clean:
            g.member = None
        elif g.member_until == 0.0:
            g.member_until = now + SESSION_TIMEOUT_S

    def consume(self, group: str, capacity: float) -> int | None:
        """Process up to ``capacity`` records; stop *at* a poison pill and return its offset."""
        g = self.groups[group]
        end = self.end_offset
        g.carry += capacity
        n = int(g.carry)
        g.carry -= n
        target = min(end, g.committed + n)
        for off in sorted(self.poison):
            if g.committed <= off < end and off < max(target, g.committed + 1):
                g.committed = off
                g.carry = 0.0
                return off
        if target <= g.committed:
            g.carry = min(g.carry, 1.0)
        g.committed = max(g.committed, target)
        return None

    def reset(self, group: str, offset: int) -> int:
        g = self.groups[group]
        offset = max(0, min(offset, self.end_offset))
        if offset > g.committed:
            g.skipped += sum(1 for o in range(g.committed, offset) if o not in self.poison) if offset - g.committed < 100_000 else offset - g.committed
        g.committed = offset
        g.carry = 0.0
        return offset


# ------------------------------------------------------------------------------- the CLI tools

_DRY_RUN_WARN = (
    "WARN: No action will be performed as the --execute option is missing. In a future major release, the default "
    "behavior of this command will be to prompt the user before executing the reset rather than doing a dry run. "
    "You should add the --dry-run option explicitly if you are scripting this command and want to keep the current "
    "default behavior without prompting.\n"
)


def _opt(argv: list[str], name: str) -> str | None:
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def _table(rows: list[list[str]], widths: list[int | None]) -> str:
    cols = len(rows[0])
    w = []
    for c in range(cols):
        fixed = widths[c]
        w.append(fixed if fixed is not None else max(len(r[c]) for r in rows))
    lines = []
    for r in rows:
        lines.append(" ".join(r[c].ljust(w[c]) for c in range(cols - 1)) + " " + r[-1])
    return "\n".join(lines) + "\n"


def _describe(broker: KafkaBroker, name: str, now: float) -> str:
    g = broker.groups.get(name)
    if g is None:
        return f"\nConsumer group '{name}' does not exist.\n"
    active = g.state(now) == "Stable"
    head = "" if active else f"\nConsumer group '{name}' has no active members.\n"
    row = [g.name, broker.topic, "0", str(g.committed), str(broker.end_offset), str(broker.lag(name))]
    row += [g.member, "/" + g.member_host, g.client_id] if active and g.member else ["-", "-", "-"]
    hdr = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"]
    return head + "\n" + _table([hdr, row], [None, None, 10, 15, 15, 15, None, None, None])


def kafka_cli(broker: KafkaBroker, argv: list[str], stdin: str | None, now: float) -> ExecResult:
    """``kafka-consumer-groups.sh`` / ``kafka-topics.sh`` / ``kafka-console-producer.sh`` inside the broker pod."""
    tool = argv[0].rsplit("/", 1)[-1]
    args = argv[1:]
    server = _opt(args, "--bootstrap-server")
    if tool in ("kafka-consumer-groups.sh", "kafka-topics.sh", "kafka-console-producer.sh") and server is None:
        if "--help" in args or not args:
            return ExecResult(f"This tool helps to manage {'consumer groups' if 'groups' in tool else 'topics'}.\nOption                                 Description\n------                                 -----------\n--bootstrap-server <String: server to  REQUIRED: The server(s) to connect to.\n  connect to>\n", 0 if "--help" in args else 1)
        return ExecResult("Missing required argument \"[bootstrap-server]\"\n", 1)
    host = (server or "").split(",")[0].rsplit(":", 1)[0]
    if host not in ("localhost", "127.0.0.1", "kafka", "kafka.astronomy-shop", "kafka.astronomy-shop.svc.cluster.local", "0.0.0.0"):
        return ExecResult("Error while executing consumer group command org.apache.kafka.common.errors.TimeoutException: Timed out waiting for a node assignment. Call: describeGroups\n", 1)
    if tool == "kafka-consumer-groups.sh":
        group = _opt(args, "--group")
        if "--list" in args:
            return ExecResult("".join(g + "\n" for g in sorted(broker.groups)), 0)
        if "--describe" in args:
            if "--all-groups" in args:
                return ExecResult("".join(_describe(broker, g, now) for g in sorted(broker.groups)), 0)
            if group is None:
                return ExecResult("Option [describe] takes one of these options: [all-groups], [group]\n", 1)
            if group not in broker.groups:
                return ExecResult(f"\nConsumer group '{group}' does not exist.\n", 0)
            return ExecResult(_describe(broker, group, now), 0)
        if "--reset-offsets" in args:
            if group is None and "--all-groups" not in args:
                return ExecResult("Option [reset-offsets] takes one of these options: [all-groups], [group]\n", 1)
            topic = _opt(args, "--topic")
            if topic is None and "--all-topics" not in args:
                return ExecResult("Option [reset-offsets] takes one of these options: [all-topics], [topic]\n", 1)
            if topic is not None and topic.split(":")[0] != broker.topic:
                return ExecResult("Error: Executing consumer group command failed due to org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition.\n", 1)
            groups = sorted(broker.groups) if group is None else [group]
            out = []
            for name in groups:
                g = broker.groups.get(name)
                if g is None:
                    g = broker.groups[name] = ConsumerGroup(name, broker.topic, "-")
                if g.state(now) != "Empty":
                    return ExecResult(f"Error: Assignments can only be reset if the group '{name}' is inactive, but the current state is Stable.\n", 1)
                to = _opt(args, "--to-offset")
                shift = _opt(args, "--shift-by")
                if to is not None:
                    if not to.lstrip("-").isdigit():
                        return ExecResult(f"Exception in thread \"main\" joptsimple.OptionArgumentConversionException: Cannot parse argument '{to}' of option to-offset\n", 1)
                    new = int(to)
                elif shift is not None and shift.lstrip("-").isdigit():
                    new = g.committed + int(shift)
                elif "--to-latest" in args:
                    new = broker.end_offset
                elif "--to-earliest" in args:
                    new = 0
                elif "--to-current" in args:
                    new = g.committed
                else:
                    return ExecResult("Option [reset-offsets] takes one of these options: [to-datetime], [by-duration], [to-earliest], [to-latest], [shift-by], [from-file], [to-current], [to-offset]\n", 1)
                new = max(0, min(new, broker.end_offset))
                if "--execute" in args:
                    broker.reset(name, new)
                out.append([name, broker.topic, "0", str(new)])
            body = _table([["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"], *out], [30, 30, 10, 15])
            warn = "" if "--execute" in args or "--dry-run" in args else _DRY_RUN_WARN
            return ExecResult(warn + "\n" + body, 0)
        return ExecResult("Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets\n", 1)
    if tool == "kafka-topics.sh":
        if "--list" in args:
            return ExecResult("__consumer_offsets\n" + broker.topic + "\n", 0)
        if "--describe" in args:
            topic = _opt(args, "--topic") or broker.topic
            if topic != broker.topic:
                return ExecResult(f"Error while executing topic command : Topic '{topic}' does not exist as expected\n", 1)
            tid = f"{zlib.crc32(topic.encode()):08x}"
            return ExecResult(
                f"Topic: {topic}\tTopicId: {tid}Qm1PRjhkTw\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n"
                f"\tTopic: {topic}\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: \tLastKnownElr: \n",
                0,
            )
        return ExecResult("Command must include exactly one action: --list, --describe, --create, --alter or --delete\n", 1)
    if tool == "kafka-console-producer.sh":
        topic = _opt(args, "--topic")
        if topic is None:
            return ExecResult("Missing required argument \"[topic]\"\n", 1)
        if topic != broker.topic:
            return ExecResult(f"[2026-03-02 09:00:00,000] WARN [Producer clientId=console-producer] Error while fetching metadata with correlation id 1 : {{{topic}=UNKNOWN_TOPIC_OR_PARTITION}}\n", 1)
        for line in (stdin or "").splitlines():
            if line.strip():
                broker.append_raw(line)
        return ExecResult("", 0)
    return ExecResult(f"sh: {argv[0]}: not found\n", 127)
