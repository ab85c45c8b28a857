"""``base64`` and ``openssl x509`` as pipeline filters, for reading certificates out of Secrets.

``kubectl get secret S -o jsonpath='{.data.tls\\.crt}' | base64 -d | openssl x509 -noout -enddate``
is how people check a certificate on a cluster; the certificates the simulator
stores carry their subject, issuer and validity the way DER does
(:mod:`sre_env.kube.tls`), so the output is what OpenSSL 3 prints.
"""

from __future__ import annotations

import base64
import binascii

from sre_env.kube.tls import parse_certificate

__all__ = ["TLS_FILTERS"]

Result = tuple[str, str, int]


def base64_filter(argv: list[str], stdin: str | None) -> Result:
    decode = any(a in ("-d", "--decode", "-D") for a in argv)
    files = [a for a in argv if not a.startswith("-")]
    if files:
        return "", f"base64: {files[0]}: No such file or directory\n", 1
    data = stdin or ""
    if decode:
        try:
            return base64.b64decode("".join(data.split()), validate=True).decode("utf-8", "replace"), "", 0
        except (binascii.Error, ValueError):
            return "", "base64: invalid input\n", 1
    text = base64.b64encode(data.encode()).decode()
    return "\n".join(text[i : i + 76] for i in range(0, len(text), 76)) + "\n", "", 0


def _openssl_date(dt) -> str:
    return f"{dt.strftime('%b')} {dt.day:2d} {dt.strftime('%H:%M:%S %Y')} GMT"


def openssl_filter(argv: list[str], stdin: str | None) -> Result:
    if not argv:
        return "", "", 0
    if argv[0] != "x509":
        return "", f'Invalid command \'{argv[0]}\'; type "help" for a list.\n', 1
    opts = argv[1:]
    if "-in" in opts:
        i = opts.index("-in")
        name = opts[i + 1] if i + 1 < len(opts) else ""
        return "", f"Could not open file or uri for loading certificate from {name}\n", 1
    info = parse_certificate(stdin or "")
    if info is None:
        return "", "Could not read certificate from <stdin>\nUnable to load certificate\n", 1
    out: list[str] = []
    known = {"-noout", "-dates", "-enddate", "-startdate", "-subject", "-issuer", "-serial", "-text", "-nameopt", "RFC2253", "-inform", "pem", "PEM"}
    for o in opts:
        if o.startswith("-") and o not in known:
            return "", f"x509: Unknown option or message digest: {o.lstrip('-')}\nx509: Use -help for summary.\n", 1
    for o in opts:
        if o in ("-dates", "-startdate"):
            out.append(f"notBefore={_openssl_date(info.not_before)}")
        if o in ("-dates", "-enddate"):
            out.append(f"notAfter={_openssl_date(info.not_after)}")
        if o == "-subject":
            out.append(f"subject={info.subject.replace('CN=', 'CN = ')}")
        if o == "-issuer":
            out.append(f"issuer={info.issuer.replace('CN=', 'CN = ')}")
        if o == "-serial":
            out.append(f"serial={info.serial:016X}")
        if o == "-text":
            out += [
                "Certificate:",
                "    Data:",
                "        Version: 3 (0x2)",
                f"        Serial Number: {info.serial} (0x{info.serial:x})",
                "        Signature Algorithm: sha256WithRSAEncryption",
                f"        Issuer: {info.issuer.replace('CN=', 'CN = ')}",
                "        Validity",
                f"            Not Before: {_openssl_date(info.not_before)}",
                f"            Not After : {_openssl_date(info.not_after)}",
                f"        Subject: {info.subject.replace('CN=', 'CN = ')}",
                "        Subject Public Key Info:",
                "            Public Key Algorithm: rsaEncryption",
                "                Public-Key: (2048 bit)",
            ]
    if "-noout" not in opts:
        out.append((stdin or "").strip())
    return ("\n".join(out) + "\n") if out else "", "", 0


TLS_FILTERS = {"base64": base64_filter, "openssl": openssl_filter}
