"""``smartctl`` (smartmontools 7.3) for the simulated ATA disks.

What matters for diagnosis is reproduced faithfully: latent sector errors
leave the overall-health verdict at PASSED while Current_Pending_Sector,
Offline_Uncorrectable, Reported_Uncorrect and the ATA error log tell the real
story, and the exit status carries smartctl's bit mask (64: errors in the
device error log).
"""

from __future__ import annotations

from sre_env.backend import ExecResult
from sre_env.sim.commands.views import HostView
from sre_env.sim.kernel.hashing import stable_hash
from sre_env.sim.kernel.hosts import Disk, HostNode
from sre_env.sim.node.wallclock import wall

__all__ = ["smartctl"]


def _banner(node: HostNode) -> str:
    return (
        f"smartctl 7.3 2022-02-28 r5338 [x86_64-linux-{node.kernel}] (local build)\n"
        "Copyright (C) 2002-22, Bruce Allen, Christian Franke, www.smartmontools.org\n"
    )


def _usage_error(node: HostNode, what: str) -> ExecResult:
    return ExecResult(
        _banner(node) + f"\n=======> {what}\nUse smartctl -h to get a usage summary\n", 1
    )


def _capacity(n: int) -> str:
    """``2,000,398,934,016 bytes [2.00 TB]``: three significant digits, decimal units."""
    units = ("bytes", "KB", "MB", "GB", "TB", "PB")
    v = float(n)
    i = 0
    while v >= 1000 and i < len(units) - 1:
        v /= 1000
        i += 1
    s = f"{v:.2f}" if v < 10 else f"{v:.1f}" if v < 100 else f"{v:.0f}"
    return f"{n:,} bytes [{s} {units[i]}]"


def _counters(d: Disk) -> dict[str, int]:
    """Raw SMART counters; the drive logs an UNC for each read it could not recover."""
    unc = max(int(d.reported_uncorrect), int(d.read_errors_total))
    pending = int(d.pending_sectors)
    if pending == 0 and d.read_errors_total > 0:
        pending = len(d.bad_sectors) or 1
    return {
        "realloc": int(d.reallocated_sectors),
        "pending": pending,
        "offline": max(int(d.offline_uncorrectable), 0),
        "unc": unc,
    }


def _attributes(node: HostNode, d: Disk, now: float) -> list[tuple[int, str, int, int, int, int, str, str]]:
    """(id, name, flags, value, worst, thresh, updated, raw) in smartctl's default naming."""
    h = stable_hash(d.serial)
    c = _counters(d)
    poh = int(d.power_on_hours + now / 3600.0)
    cycles = 20 + h % 60
    temp = 30 + h % 9
    realloc_val = max(1, 100 - c["realloc"] * 100 // 2048)
    rows: list[tuple[int, str, int, int, int, int, str, str]] = []
    if d.rotational:
        rows += [
            (1, "Raw_Read_Error_Rate", 0x000F, 82 - min(c["unc"], 30), min(64, 82 - min(c["unc"], 30)), 44, "Always", str(h % 200_000_000 + c["unc"] * 131)),
            (3, "Spin_Up_Time", 0x0003, 96, 96, 0, "Always", "0"),
            (4, "Start_Stop_Count", 0x0032, 100, 100, 20, "Always", str(cycles)),
            (5, "Reallocated_Sector_Ct", 0x0033, realloc_val, realloc_val, 10, "Always", str(c["realloc"])),
            (7, "Seek_Error_Rate", 0x000F, 88, 60, 45, "Always", str(600_000_000 + stable_hash(d.serial, 7) % 90_000_000)),
            (9, "Power_On_Hours", 0x0032, max(1, 100 - poh // 1000), max(1, 100 - poh // 1000), 0, "Always", str(poh)),
            (10, "Spin_Retry_Count", 0x0013, 100, 100, 97, "Always", "0"),
            (12, "Power_Cycle_Count", 0x0032, 100, 100, 20, "Always", str(cycles)),
            (187, "Reported_Uncorrect", 0x0032, max(1, 100 - c["unc"]), max(1, 100 - c["unc"]), 0, "Always", str(c["unc"])),
            (188, "Command_Timeout", 0x0032, 100, 100, 0, "Always", "0 0 0"),
            (190, "Airflow_Temperature_Cel", 0x0022, 100 - temp, 55, 40, "Always", f"{temp} (Min/Max {temp - 8}/{temp + 6})"),
            (192, "Power-Off_Retract_Count", 0x0032, 100, 100, 0, "Always", str(cycles - 3)),
            (193, "Load_Cycle_Count", 0x0032, 99, 99, 0, "Always", str(1800 + h % 900)),
            (194, "Temperature_Celsius", 0x0022, temp, 45, 0, "Always", f"{temp} (0 18 0 0 0)"),
            (197, "Current_Pending_Sector", 0x0012, 100, 100, 0, "Always", str(c["pending"])),
            (198, "Offline_Uncorrectable", 0x0010, 100, 100, 0, "Offline", str(c["offline"])),
            (199, "UDMA_CRC_Error_Count", 0x003E, 200, 200, 0, "Always", "0"),
            (240, "Head_Flying_Hours", 0x0000, 100, 253, 0, "Offline", str(max(poh - 40, 0))),
            (241, "Total_LBAs_Written", 0x0000, 100, 253, 0, "Offline", str(int(d.writes_total * 32) + stable_hash(d.serial, 241) % 9_000_000_000)),
            (242, "Total_LBAs_Read", 0x0000, 100, 253, 0, "Offline", str(int(d.read_bytes_total // 512) + stable_hash(d.serial, 242) % 19_000_000_000)),
        ]
    else:
        rows += [
            (1, "Raw_Read_Error_Rate", 0x002F, 100, 100, 0, "Always", str(c["unc"])),
            (5, "Reallocated_Sector_Ct", 0x0033, realloc_val, realloc_val, 10, "Always", str(c["realloc"])),
            (9, "Power_On_Hours", 0x0032, 98, 98, 0, "Always", str(poh)),
            (12, "Power_Cycle_Count", 0x0032, 99, 99, 0, "Always", str(cycles)),
            (177, "Wear_Leveling_Count", 0x0013, 97, 97, 0, "Always", str(40 + h % 30)),
            (179, "Used_Rsvd_Blk_Cnt_Tot", 0x0013, realloc_val, realloc_val, 10, "Always", str(c["realloc"])),
            (181, "Program_Fail_Cnt_Total", 0x0032, 100, 100, 10, "Always", "0"),
            (182, "Erase_Fail_Count_Total", 0x0032, 100, 100, 10, "Always", "0"),
            (187, "Reported_Uncorrect", 0x0032, max(1, 100 - c["unc"]), max(1, 100 - c["unc"]), 0, "Always", str(c["unc"])),
            (194, "Temperature_Celsius", 0x0022, 100 - temp, 52, 0, "Always", f"{temp} (Min/Max 21/{temp + 11})"),
            (195, "Hardware_ECC_Recovered", 0x001A, 200, 200, 0, "Always", str(c["unc"] * 3)),
            (197, "Current_Pending_Sector", 0x0012, 100, 100, 0, "Always", str(c["pending"])),
            (198, "Offline_Uncorrectable", 0x0010, 100, 100, 0, "Offline", str(c["offline"])),
            (199, "UDMA_CRC_Error_Count", 0x003E, 100, 100, 0, "Always", "0"),
            (235, "Unknown_Attribute", 0x0012, 99, 99, 0, "Always", str(cycles - 2)),
            (241, "Total_LBAs_Written", 0x0032, 99, 99, 0, "Always", str(int(d.writes_total * 32) + h % 40_000_000_000)),
        ]
    return rows


def _failing(rows: list[tuple[int, str, int, int, int, int, str, str]]) -> bool:
    return any(flags & 1 and thresh and val <= thresh for _id, _n, flags, val, _w, thresh, _u, _r in rows)


def _attr_table(rows: list[tuple[int, str, int, int, int, int, str, str]]) -> str:
    out = [
        "SMART Attributes Data Structure revision number: 1",
        "Vendor Specific SMART Attributes with Thresholds:",
        "ID# ATTRIBUTE_NAME          FLAG     VALUE WORST THRESH TYPE      UPDATED  WHEN_FAILED RAW_VALUE",
    ]
    for aid, name, flags, val, worst, thresh, upd, raw in rows:
        typ = "Pre-fail" if flags & 1 else "Old_age"
        wf = "FAILING_NOW" if thresh and val <= thresh else "    -"
        out.append(f"{aid:3d} {name:<24}0x{flags:04x}   {val:03d}   {worst:03d}   {thresh:03d}    {typ:<10}{upd:<9}{wf:<12}{raw}")
    return "\n".join(out) + "\n"


def _attr_brief(rows: list[tuple[int, str, int, int, int, int, str, str]]) -> str:
    out = [
        "SMART Attributes Data Structure revision number: 1",
        "Vendor Specific SMART Attributes with Thresholds:",
        "ID# ATTRIBUTE_NAME          FLAGS    VALUE WORST THRESH FAIL RAW_VALUE",
    ]
    for aid, name, flags, val, worst, thresh, _upd, raw in rows:
        fl = "".join(ch if flags & bit else "-" for ch, bit in zip("POSRCK", (1, 2, 4, 8, 16, 32)))
        fail = "NOW" if thresh and val <= thresh else "-"
        out.append(f"{aid:3d} {name:<24}{fl}   {val:03d}   {worst:03d}   {thresh:03d}    {fail:<4} {raw}")
    out += [
        "                            ||||||_ K auto-keep",
        "                            |||||__ C event count",
        "                            ||||___ R error rate",
        "                            |||____ S speed/performance",
        "                            ||_____ O updated online",
        "                            |______ P prefailure warning",
    ]
    return "\n".join(out) + "\n"


def _info(node: HostNode, d: Disk, now: float, extended: bool) -> str:
    h = stable_hash(d.serial)
    dt = wall(node, now)
    rot = "7200 rpm" if d.rotational else "Solid State Device"
    lines = [
        "=== START OF INFORMATION SECTION ===",
        f"Device Model:     {d.model}",
        f"Serial Number:    {d.serial}",
        f"LU WWN Device Id: 5 00{h % 0xFFFFF:05x} {h * 2654435761 % 16**9:09x}",
        f"Firmware Version: {(h >> 4) % 900 + 100:X}Q",
        f"User Capacity:    {_capacity(int(d.size_bytes))}",
        "Sector Sizes:     512 bytes logical, 4096 bytes physical" if d.rotational else "Sector Size:      512 bytes logical/physical",
        f"Rotation Rate:    {rot}",
        f"Form Factor:      {'3.5' if d.rotational else '2.5'} inches",
    ]
    if not d.rotational:
        lines.append("TRIM Command:     Available, deterministic, zeroed")
    lines += [
        "Device is:        Not in smartctl database 7.3/5319",
        f"ATA Version is:   ACS-{3 if d.rotational else 4} T13/{'2161-D revision 5' if d.rotational else 'BSR INCITS 529 revision 5'}",
        "SATA Version is:  SATA 3.3, 6.0 Gb/s (current: 6.0 Gb/s)",
        f"Local Time is:    {dt:%a %b} {dt.day:2d} {dt:%H:%M:%S %Y} UTC",
        "SMART support is: Available - device has SMART capability.",
        "SMART support is: Enabled",
    ]
    if extended:
        lines += [
            "AAM feature is:   Unavailable",
            "APM feature is:   Unavailable",
            "Rd look-ahead is: Enabled",
            "Write cache is:   Enabled",
            "DSN feature is:   Unavailable",
            "ATA Security is:  Disabled, NOT FROZEN [SEC1]",
            "Wt Cache Reorder: Enabled",
        ]
    return "\n".join(lines) + "\n"


_GENERAL = """General SMART Values:
Offline data collection status:  (0x82)	Offline data collection activity
					was completed without error.
					Auto Offline Data Collection: Enabled.
Self-test execution status:      (   0)	The previous self-test routine completed
					without error or no self-test has ever 
					been run.
Total time to complete Offline 
data collection: 		(  {off}) seconds.
Offline data collection
capabilities: 			 (0x7b) SMART execute Offline immediate.
					Auto Offline data collection on/off support.
					Suspend Offline collection upon new
					command.
					Offline surface scan supported.
					Self-test supported.
					Conveyance Self-test supported.
					Selective Self-test supported.
SMART capabilities:            (0x0003)	Saves SMART data before entering
					power-saving mode.
					Supports SMART auto save timer.
Error logging capability:        (0x01)	Error logging supported.
					General Purpose Logging supported.
Short self-test routine 
recommended polling time: 	 (   1) minutes.
Extended self-test routine
recommended polling time: 	 ({ext:4d}) minutes.
Conveyance self-test routine
recommended polling time: 	 (   2) minutes.
SCT capabilities: 	       (0x50bd)	SCT Status supported.
					SCT Error Recovery Control supported.
					SCT Feature Control supported.
					SCT Data Table supported.
"""


def _health(rows: list) -> str:
    if _failing(rows):
        return (
            "SMART overall-health self-assessment test result: FAILED!\n"
            "Drive failure expected in less than 24 hours. SAVE ALL DATA.\n"
            "See vendor-specific Attribute list for failed Attributes.\n"
        )
    return "SMART overall-health self-assessment test result: PASSED\n"


def _pup(up: float) -> str:
    """Powered_Up_Time ``DDd+hh:mm:SS.sss`` (wraps after 49.710 days, as the field does)."""
    ms = int(up * 1000) % 4_294_967_296
    d, rem = divmod(ms, 86_400_000)
    hh, rem = divmod(rem, 3_600_000)
    mm, rem = divmod(rem, 60_000)
    ss, msr = divmod(rem, 1000)
    head = f"{d}d+" if d else ""
    return f"{head}{hh:02d}:{mm:02d}:{ss:02d}.{msr:03d}"


def _error_entries(node: HostNode, d: Disk, now: float, count: int) -> list[tuple[int, float, int]]:
    """The most recent (error number, sim time, LBA) entries, newest first (the log keeps five)."""
    ticks = [(float(t), n) for t, n in d.error_ticks if float(t) <= now]
    sectors = list(d.bad_sectors) or [2048 + stable_hash(d.serial) % max(int(d.size_bytes) // 512 - 4096, 1)]
    out = []
    num = count
    for k in range(min(5, count)):
        t = ticks[-1 - k // 2][0] - 0.37 * k if ticks else now - 60.0 * (k + 1)
        out.append((num, t, int(sectors[(num * 7) % len(sectors)])))
        num -= 1
    return out


_REG_LEGEND = """	CR = Command Register [HEX]
	FR = Features Register [HEX]
	SC = Sector Count Register [HEX]
	SN = Sector Number Register [HEX]
	CL = Cylinder Low Register [HEX]
	CH = Cylinder High Register [HEX]
	DH = Device/Head Register [HEX]
	DC = Device Command Register [HEX]
	ER = Error register [HEX]
	ST = Status register [HEX]
Powered_Up_Time is measured from power on, and printed as
DDd+hh:mm:SS.sss where DD=days, hh=hours, mm=minutes,
SS=sec, and sss=millisec. It "wraps" after 49.710 days.
"""

_REG_LEGEND_X = """	CR     = Command Register
	FEATR  = Features Register
	COUNT  = Count (was: Sector Count) Register
	LBA_48 = Upper bytes of LBA High/Mid/Low Registers ]  ATA-8
	LH     = LBA High (was: Cylinder High) Register    ]   LBA
	LM     = LBA Mid (was: Cylinder Low) Register      ] Register
	LL     = LBA Low (was: Sector Number) Register     ]
	DV     = Device (was: Device/Head) Register
	DC     = Device Control Register
	ER     = Error register
	ST     = Status register
Powered_Up_Time is measured from power on, and printed as
DDd+hh:mm:SS.sss where DD=days, hh=hours, mm=minutes,
SS=sec, and sss=millisec. It "wraps" after 49.710 days.
"""


def _hours(node: HostNode, d: Disk, t: float) -> str:
    h = int(d.power_on_hours + max(t, 0.0) / 3600.0)
    return f"{h} hours ({h // 24} days + {h % 24} hours)"


def _error_log(node: HostNode, d: Disk, now: float) -> str:
    count = _counters(d)["unc"]
    if count <= 0:
        return "SMART Error Log Version: 1\nNo Errors Logged\n"
    shown = count & 0xFFFF
    head = f"ATA Error Count: {shown}" + (" (device log contains only the most recent five errors)" if shown > 5 else "")
    out = ["SMART Error Log Version: 1", head, _REG_LEGEND]
    for num, t, lba in _error_entries(node, d, now, shown):
        up = node.uptime(t)
        ll, lm, lh, top = lba & 0xFF, (lba >> 8) & 0xFF, (lba >> 16) & 0xFF, (lba >> 24) & 0x0F
        st = lba & ~7
        sl, sm, sh, stop = st & 0xFF, (st >> 8) & 0xFF, (st >> 16) & 0xFF, (st >> 24) & 0x0F
        out.append(
            f"Error {num} occurred at disk power-on lifetime: {_hours(node, d, t)}\n"
            "  When the command that caused the error occurred, the device was active or idle.\n\n"
            "  After command completion occurred, registers were:\n"
            "  ER ST SC SN CL CH DH\n"
            "  -- -- -- -- -- -- --\n"
            f"  40 51 00 {ll:02x} {lm:02x} {lh:02x} {0xE0 | top:02x}  Error: UNC at LBA = 0x{lba & 0x0FFFFFFF:08x} = {lba & 0x0FFFFFFF}\n\n"
            "  Commands leading to the command that caused the error were:\n"
            "  CR FR SC SN CL CH DH DC   Powered_Up_Time  Command/Feature_Name\n"
            "  -- -- -- -- -- -- -- --  ----------------  --------------------\n"
            f"  60 08 {(num * 8) & 0xFF:02x} {sl:02x} {sm:02x} {sh:02x} {0x40 | stop:02x} 00  {_pup(up):>16}  READ FPDMA QUEUED\n"
            f"  60 08 {(num * 8 + 8) & 0xFF:02x} {(sl + 64) & 0xFF:02x} {sm:02x} {sh:02x} {0x40 | stop:02x} 00  {_pup(up - 0.003):>16}  READ FPDMA QUEUED\n"
            f"  ef 10 02 00 00 00 a0 00  {_pup(up - 0.021):>16}  SET FEATURES [Enable SATA feature]\n"
            f"  27 00 00 00 00 00 e0 00  {_pup(up - 0.022):>16}  READ NATIVE MAX ADDRESS EXT [OBS-ACS-3]\n"
            f"  ec 00 00 00 00 00 a0 00  {_pup(up - 0.023):>16}  IDENTIFY DEVICE\n"
        )
    return "\n".join(out)


def _error_log_x(node: HostNode, d: Disk, now: float) -> str:
    count = _counters(d)["unc"]
    if count <= 0:
        return "SMART Extended Comprehensive Error Log Version: 1 (5 sectors)\nNo Errors Logged\n"
    out = ["SMART Extended Comprehensive Error Log Version: 1 (5 sectors)", f"Device Error Count: {count}", _REG_LEGEND_X]
    for num, t, lba in _error_entries(node, d, now, count):
        up = node.uptime(t)
        b = [(lba >> s) & 0xFF for s in (40, 32, 24, 16, 8, 0)]
        st = lba & ~7
        c = [(st >> s) & 0xFF for s in (40, 32, 24, 16, 8, 0)]
        slot = (num - 1) % 20
        out.append(
            f"Error {num} [{slot}] occurred at disk power-on lifetime: {_hours(node, d, t)}\n"
            "  When the command that caused the error occurred, the device was active or idle.\n\n"
            "  After command completion occurred, registers were:\n"
            "  ER -- ST COUNT  LBA_48  LH LM LL DV DC\n"
            "  -- -- -- == -- == == == -- -- -- -- --\n"
            f"  40 -- 51 00 00 {b[0]:02x} {b[1]:02x} {b[2]:02x} {b[3]:02x} {b[4]:02x} {b[5]:02x} 40 00  Error: UNC at LBA = 0x{lba:08x} = {lba}\n\n"
            "  Commands leading to the command that caused the error were:\n"
            "  CR FEATR COUNT  LBA_48  LH LM LL DV DC  Powered_Up_Time  Command/Feature_Name\n"
            "  -- == -- == -- == == == -- -- -- -- --  ---------------  --------------------\n"
            f"  60 00 08 00 {(num * 8) & 0xFF:02x} {c[0]:02x} {c[1]:02x} {c[2]:02x} {c[3]:02x} {c[4]:02x} {c[5]:02x} 40 00 {_pup(up):>16}  READ FPDMA QUEUED\n"
            f"  60 00 08 00 {(num * 8 + 8) & 0xFF:02x} 00 00 00 {(c[3] + 1) & 0xFF:02x} {c[4]:02x} {c[5]:02x} 40 00 {_pup(up - 0.003):>16}  READ FPDMA QUEUED\n"
            f"  ef 00 10 00 02 00 00 00 00 00 00 a0 00 {_pup(up - 0.021):>16}  SET FEATURES [Enable SATA feature]\n"
            f"  27 00 00 00 00 00 00 00 00 00 00 e0 00 {_pup(up - 0.022):>16}  READ NATIVE MAX ADDRESS EXT [OBS-ACS-3]\n"
            f"  ec 00 00 00 00 00 00 00 00 00 00 a0 00 {_pup(up - 0.023):>16}  IDENTIFY DEVICE\n"
        )
    return "\n".join(out)


_SELFTEST = "SMART Self-test log structure revision number 1\nNo self-tests have been logged.  [To run self-tests, use: smartctl -t]\n"
_SELFTEST_X = "SMART Extended Self-test Log Version: 1 (1 sectors)\nNo self-tests have been logged.  [To run self-tests, use: smartctl -t]\n"
_SELECTIVE = """SMART Selective self-test log data structure revision number 1
 SPAN  MIN_LBA  MAX_LBA  CURRENT_TEST_STATUS
    1        0        0  Not_testing
    2        0        0  Not_testing
    3        0        0  Not_testing
    4        0        0  Not_testing
    5        0        0  Not_testing
Selective self-test flags (0x0):
  After scanning selected spans, do NOT read-scan remainder of disk.
If Selective self-test is pending on power-up, resume after 0 minute delay.
"""


def _scan(node: HostNode) -> ExecResult:
    return ExecResult("".join(f"/dev/{d.device} -d sat # /dev/{d.device} [SAT], ATA device\n" for d in node.disks), 0)


_SHORT_FLAGS = {"a", "H", "A", "x", "i", "c", "l", "d", "t", "q", "T", "s", "o", "n", "j", "h", "V", "X"}
_ARG_FLAGS = {"l", "d", "t", "q", "T", "s", "o", "n", "f", "F", "b", "r", "v", "P", "S", "B", "C", "g"}
_LONG = {
    "--all": "a", "--health": "H", "--attributes": "A", "--xall": "x", "--info": "i", "--capabilities": "c",
    "--scan": "scan", "--scan-open": "scan", "--help": "h", "--usage": "h", "--version": "V", "--abort": "X", "--json": "j",
}
_LONG_ARG = {"--log": "l", "--device": "d", "--test": "t", "--quietmode": "q", "--tolerance": "T", "--smart": "s", "--offlineauto": "o", "--nocheck": "n", "--format": "f", "--badsum": "b", "--report": "r", "--attribute": "v", "--presets": "P", "--saveauto": "S", "--drivedb": "B", "--get": "g", "--set": "s"}


def smartctl(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    node, now = view.node, view.now
    """smartctl with smartctl's own option errors, exit bits and output sections."""
    want: set[str] = set()
    logs: list[str] = []
    test = None
    devices: list[str] = []
    i = 1
    while i < len(argv):
        a = argv[i]
        i += 1
        if a.startswith("--"):
            name, eq, val = a.partition("=")
            if name in _LONG:
                want.add(_LONG[name])
                continue
            if name in _LONG_ARG:
                if not eq:
                    if i >= len(argv):
                        return _usage_error(node, f"INVALID ARGUMENT TO {name}: (missing)")
                    val = argv[i]
                    i += 1
                key = _LONG_ARG[name]
                if key == "l":
                    logs.append(val)
                elif key == "t":
                    test = val
                continue
            return _usage_error(node, f"UNRECOGNIZED OPTION: {a[2:]}")
        if a.startswith("-") and len(a) > 1:
            j = 1
            while j < len(a):
                ch = a[j]
                j += 1
                if ch in _ARG_FLAGS:
                    val = a[j:]
                    if not val:
                        if i >= len(argv):
                            return _usage_error(node, f"INVALID ARGUMENT TO -{ch}: (missing)")
                        val = argv[i]
                        i += 1
                    if ch == "l":
                        logs.append(val)
                    elif ch == "t":
                        test = val
                    break
                if ch in _SHORT_FLAGS:
                    want.add(ch)
                    continue
                return ExecResult(
                    f"smartctl: invalid option -- '{ch}'\n" + _banner(node) + f"\n=======> UNRECOGNIZED OPTION: {ch}\nUse smartctl -h to get a usage summary\n",
                    1,
                )
            continue
        devices.append(a)
    if "V" in want:
        return ExecResult(_banner(node) + "\nsmartctl comes with ABSOLUTELY NO WARRANTY. This is free\nsoftware, and you are welcome to redistribute it under\nthe terms of the GNU General Public License; either\nversion 2, or (at your option) any later version.\nSee https://www.gnu.org for further details.\n\nsmartmontools release 7.3 dated 2022-02-28 at 16:33:40 UTC\n", 0)
    if "h" in want:
        return ExecResult(_banner(node) + "\nUsage: smartctl [options] device\n\n============================================ SHOW INFORMATION OPTIONS =====\n\n  -h, --help, --usage\n         Display this help and exit\n\n  -i, --info\n         Show identity information for device\n\n  -H, --health\n         Show device SMART health status\n\n  -a, --all\n         Show all SMART information for device\n\n  -x, --xall\n         Show all information for device\n\n  --scan\n         Scan for devices\n", 0)
    if "scan" in want:
        return _scan(node)
    if not devices:
        return ExecResult(
            _banner(node) + "\nERROR: smartctl requires a device name as the final command-line argument.\n\n\nUse smartctl -h to get a usage summary\n\n", 1
        )
    if len(devices) > 1:
        return ExecResult(
            _banner(node) + f"\nERROR: smartctl takes ONE device name as the final command-line argument.\nYou have provided 2 device names:\n{devices[0]}\n{devices[1]}\n\nUse smartctl -h to get a usage summary\n\n", 1
        )
    dev = devices[0]
    path = dev if dev.startswith("/") else f"/dev/{dev}"
    disk = node.disk(path) if path.startswith("/dev/sd") or path.startswith("/dev/nvme") else None
    if disk is None:
        why = "No such device" if path.startswith(("/dev/sd", "/dev/nvme")) else "No such file or directory"
        return ExecResult(_banner(node) + f"\nSmartctl open device: {path} failed: {why}\n", 2)
    for lg in logs:
        if lg.split(",")[0] not in {"error", "xerror", "selftest", "xselftest", "selective", "directory", "scttemp", "sctstatus", "devstat", "sataphy", "background", "ssd"}:
            return _usage_error(node, f'INVALID ARGUMENT TO -l: {lg}\n=======> VALID ARGUMENTS ARE: error, selftest, selective, directory[,g|s], xerror[,N][,error], xselftest[,N][,selftest], background, sasphy[,reset], sataphy[,reset], scttemp[sts,hist], scttempint,N[,p], scterc[,N,M][,p|reset], devstat[,N], defects[,N], ssd, gplog,N[,RANGE], smartlog,N[,RANGE], nvmelog,N,SIZE\n')
    rows = _attributes(node, disk, now)
    failing = _failing(rows)
    status = 8 if failing else 0
    out = [_banner(node)]
    if "x" in want or "a" in want or "i" in want:
        out.append(_info(node, disk, now, "x" in want))
    if test is not None:
        if test not in {"short", "long", "conveyance", "offline", "select"} and not test.startswith("select,"):
            return _usage_error(node, f"INVALID ARGUMENT TO -t: {test}\n=======> VALID ARGUMENTS ARE: offline, short, long, conveyance, force, vendor,N, select,M-N, pending,N, afterselect,[on|off]")
        kind = {"short": "Short", "long": "Extended", "conveyance": "Conveyance"}.get(test, "Offline")
        mins = {"Short": 1, "Extended": 212 if disk.rotational else 85, "Conveyance": 2}.get(kind, 0)
        dt = wall(node, now + mins * 60)
        out.append(
            "=== START OF OFFLINE IMMEDIATE AND SELF-TEST SECTION ===\n"
            f'Sending command: "Execute SMART {kind} self-test routine immediately in off-line mode".\n'
            f'Drive command "Execute SMART {kind} self-test routine immediately in off-line mode" successful.\n'
            "Testing has begun.\n"
            f"Please wait {mins} minutes for test to complete.\n"
            f"Test will complete after {dt:%a %b} {dt.day:2d} {dt:%H:%M:%S %Y} UTC\n"
            "Use smartctl -X to abort test.\n"
        )
        return ExecResult("\n".join(out), status)
    section = "x" in want or "a" in want or "H" in want or "A" in want or "c" in want
    if section or logs:
        out.append("=== START OF READ SMART DATA SECTION ===\n" + (_health(rows) if ("x" in want or "a" in want or "H" in want) else ""))
    if "x" in want or "a" in want or "c" in want:
        out.append(_GENERAL.format(off=600 if disk.rotational else 0, ext=212 if disk.rotational else 85))
    if "x" in want:
        out.append(_attr_brief(rows))
    elif "a" in want or "A" in want:
        out.append(_attr_table(rows))
    had_errors = _counters(disk)["unc"] > 0
    read_log = False
    if "x" in want:
        out.append(_error_log_x(node, disk, now))
        out.append(_SELFTEST_X)
        out.append(_SELECTIVE)
        read_log = True
    elif "a" in want:
        out.append(_error_log(node, disk, now))
        out.append(_SELFTEST)
        out.append(_SELECTIVE)
        read_log = True
    for lg in logs:
        base = lg.split(",")[0]
        if base == "error":
            out.append(_error_log(node, disk, now))
            read_log = True
        elif base == "xerror":
            out.append(_error_log_x(node, disk, now))
            read_log = True
        elif base in ("selftest", "xselftest"):
            out.append(_SELFTEST if base == "selftest" else _SELFTEST_X)
        elif base == "selective":
            out.append(_SELECTIVE)
        else:
            out.append(f"SMART {base} log not supported by this device\n")
    if read_log and had_errors:
        status |= 64
    return ExecResult("\n".join(out), status)
