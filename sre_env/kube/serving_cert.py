"""A throwaway certificate authority and serving certificate for a loopback API server.

``kubectl`` sends a kubeconfig's credentials only to a server it reaches over
TLS (client-go's ``ClientConfig`` reads the user's token "only if we are
secure"), so a server that wants a bearer token must speak HTTPS, as every real
apiserver does. ``sre-env serve`` and the namespace guard each make a fresh
CA and a certificate for the addresses they listen on (and ``localhost``,
``127.0.0.1``, ``::1``) when they start, and put the CA into the kubeconfigs
they write (``certificate-authority-data``). Nothing is written to disk but a
private temporary file the ``ssl`` module reads the key from, removed at once.

The keys are ECDSA P-256 from the operating system's random source; the
certificates last a week. ``cryptography`` comes with the ``[serve]`` and
``[k8s]`` extras.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass

from sre_env.errors import MissingExtraError

__all__ = ["ServingCert", "serving_cert"]


@dataclass(frozen=True)
class ServingCert:
    """PEM bytes of the CA, and of the serving certificate and its key."""

    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes

    @property
    def ca_data(self) -> str:
        """The CA as a kubeconfig's ``certificate-authority-data`` (base64 of the PEM)."""
        return base64.b64encode(self.ca_pem).decode()

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        with tempfile.TemporaryDirectory(prefix="sre-env-tls-") as tmp:  # ``load_cert_chain`` reads files only
            path = os.path.join(tmp, "serving.pem")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(self.cert_pem + self.key_pem)
            ctx.load_cert_chain(path)
        return ctx

    def client_context(self) -> ssl.SSLContext:
        """A client context that trusts this CA only."""
        return ssl.create_default_context(cadata=self.ca_pem.decode())


def serving_cert(hosts: list[str] | tuple[str, ...] = ()) -> ServingCert:
    """A new CA and a serving certificate valid for ``hosts`` (names or addresses) and the loopback names."""
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise MissingExtraError("cryptography", "serve") from exc

    now = datetime.datetime.now(datetime.UTC)
    valid = (now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=7))

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder().subject_name(name("sre-env-ca")).issuer_name(name("sre-env-ca"))
        .public_key(ca_key.public_key()).serial_number(x509.random_serial_number()).not_valid_before(valid[0]).not_valid_after(valid[1])
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False, key_encipherment=False, data_encipherment=False, key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    sans: list[x509.GeneralName] = []
    for host in dict.fromkeys(["localhost", "127.0.0.1", "::1", *hosts]):
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder().subject_name(name("sre-env")).issuer_name(ca.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number()).not_valid_before(valid[0]).not_valid_after(valid[1])
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    key_pem = key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return ServingCert(ca.public_bytes(pem), cert.public_bytes(pem), key_pem)
