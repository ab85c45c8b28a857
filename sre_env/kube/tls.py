"""Certificates as the simulator keeps them: PEM blocks with a known subject, issuer and validity.

The simulator does no cryptography, but a certificate's bytes are shaped like
DER: the subject and issuer common names and the validity window sit in the
body as the ASN.1 strings and UTCTimes a real certificate carries, so the same
certificate always has the same bytes, two different ones never match, and
:func:`parse_certificate` (and ``openssl x509`` in the shell) can read
``notBefore``/``notAfter`` back and compare them with the simulated clock.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = ["CertInfo", "b64", "parse_certificate", "pem_certificate", "pem_private_key", "unb64", "x509_time_error"]


def _filler(seed: str, n: int) -> bytes:
    out = b""
    i = 0
    while len(out) < n:
        out += hashlib.blake2b(f"{seed}/{i}".encode(), digest_size=64).digest()
        i += 1
    return out[:n]


def _wrap(raw: bytes) -> str:
    text = base64.b64encode(raw).decode()
    return "\n".join(text[i : i + 64] for i in range(0, len(text), 64))


def _utctime(iso_ts: str) -> bytes:
    dt = datetime.strptime(iso_ts, "%Y-%m-%dT%H:%M:%SZ")
    return b"\x17\x0d" + dt.strftime("%y%m%d%H%M%SZ").encode()


def _cn(name: str) -> bytes:
    value = name.split("CN=", 1)[-1].split(",", 1)[0].encode()
    return b"\x06\x03\x55\x04\x03\x0c" + bytes((len(value),)) + value


def pem_certificate(subject: str, issuer: str, serial: int, not_before: str, not_after: str) -> str:
    """A PEM CERTIFICATE block, a pure function of the certificate's identity."""
    seed = f"cert/{subject}/{issuer}/{serial}/{not_before}/{not_after}"
    body = (
        b"\xa0\x03\x02\x01\x02\x02\x08" + serial.to_bytes(8, "big")
        + b"\x30\x0d\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01\x0b\x05\x00"
        + _cn(issuer)
        + b"\x30\x1e" + _utctime(not_before) + _utctime(not_after)
        + _cn(subject)
        + _filler(seed, 560)
    )
    der = b"\x30\x82" + len(body).to_bytes(2, "big") + body
    return f"-----BEGIN CERTIFICATE-----\n{_wrap(der)}\n-----END CERTIFICATE-----\n"


def pem_private_key(owner: str) -> str:
    raw = b"0\x82\x04\xa4\x02\x01\x00" + _filler(f"key/{owner}", 1185)
    return "-----BEGIN RSA PRIVATE KEY-----\n" + _wrap(raw) + "\n-----END RSA PRIVATE KEY-----\n"


@dataclass(frozen=True)
class CertInfo:
    subject: str
    issuer: str
    serial: int
    not_before: datetime
    not_after: datetime


_PEM = re.compile(r"-----BEGIN CERTIFICATE-----\s*(.*?)\s*-----END CERTIFICATE-----", re.DOTALL)
_CN = re.compile(rb"\x06\x03\x55\x04\x03\x0c(.)", re.DOTALL)
_TIME = re.compile(rb"\x17\x0d(\d{12})Z")


def parse_certificate(pem: str) -> CertInfo | None:
    """The first certificate of a PEM bundle, or None if it is not one (memoised for
    certificate-sized texts: admission checks a webhook's serving certificate on every pod create)."""
    if isinstance(pem, str) and len(pem) <= 16384:
        return _parse_certificate(pem)
    return _parse_certificate.__wrapped__(pem)


@functools.lru_cache(maxsize=64)
def _parse_certificate(pem: str) -> CertInfo | None:
    m = _PEM.search(pem or "")
    if not m:
        return None
    try:
        der = base64.b64decode("".join(m.group(1).split()))
    except (ValueError, TypeError):
        return None
    names = []
    for cm in _CN.finditer(der):
        n = cm.group(1)[0]
        names.append(der[cm.end() : cm.end() + n].decode("ascii", "replace"))
    times = [datetime.strptime(t.decode(), "%y%m%d%H%M%S").replace(tzinfo=UTC) for t in _TIME.findall(der)]
    if len(names) < 2 or len(times) < 2 or len(der) < 15:
        return None
    return CertInfo(subject=f"CN={names[1]}", issuer=f"CN={names[0]}", serial=int.from_bytes(der[11:19], "big"), not_before=times[0], not_after=times[1])


def x509_time_error(info: CertInfo, now: datetime) -> str | None:
    """Go's crypto/x509 message for a certificate used outside its validity window."""
    fmt = "%Y-%m-%dT%H:%M:%SZ"
    if now > info.not_after:
        return f"x509: certificate has expired or is not yet valid: current time {now.strftime(fmt)} is after {info.not_after.strftime(fmt)}"
    if now < info.not_before:
        return f"x509: certificate has expired or is not yet valid: current time {now.strftime(fmt)} is before {info.not_before.strftime(fmt)}"
    return None


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def unb64(data: str) -> str:
    try:
        return base64.b64decode(data or "").decode("ascii", "replace")
    except (ValueError, TypeError):
        return ""
