"""The TCP relay a bridged sandbox reaches a loopback API server through."""

from __future__ import annotations

import socket
import threading

from sre_env.k8s.relay import TcpRelay, is_loopback_url


def test_loopback_urls() -> None:
    assert is_loopback_url("https://127.0.0.1:6443") and is_loopback_url("https://localhost:6443") and is_loopback_url("http://[::1]:80")
    assert not is_loopback_url("https://10.0.0.1:6443") and not is_loopback_url("https://api.example.com")


def test_bytes_pass_both_ways() -> None:
    upstream = socket.socket()
    upstream.bind(("127.0.0.1", 0))
    upstream.listen(1)

    def echo() -> None:
        conn, _ = upstream.accept()
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data.upper())

    threading.Thread(target=echo, daemon=True).start()
    relay = TcpRelay("127.0.0.1", upstream.getsockname()[1]).start()
    try:
        with socket.create_connection(("127.0.0.1", relay.port), timeout=10) as client:
            client.sendall(b"hello")
            assert client.recv(5) == b"HELLO"
    finally:
        relay.stop()
        upstream.close()
