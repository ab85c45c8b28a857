"""Quantities: one grammar for the numbers the simulator computes with and the text kubectl prints."""

from __future__ import annotations

import pytest

from sre_env.kube.quantity import (
    canonical,
    cpu_millicores,
    format_bytes,
    format_millicores,
    memory_bytes,
    parse_quantity,
)


@pytest.mark.parametrize(
    ("text", "millicores"),
    [("250m", 250), ("0.5", 500), ("1", 1000), ("2", 2000), (1, 1000), (0.25, 250), ("1e3", 1_000_000), ("1k", 1_000_000),
     # metrics-server reports nano- and microcores
     ("250000000n", 250), ("12000u", 12), ("1500000n", 2)],
)
def test_cpu_millicores(text: object, millicores: int) -> None:
    assert cpu_millicores(text) == millicores


@pytest.mark.parametrize(("text", "size"), [("64Mi", 64 * 1024**2), ("1.5Gi", 3 * 1024**3 // 2), ("1G", 10**9), ("128974848", 128974848), ("1Ki", 1024), ("129e6", 129_000_000)])
def test_memory_bytes(text: str, size: int) -> None:
    assert memory_bytes(text) == size


@pytest.mark.parametrize("text", ["", "abc", "1K", "1e3Mi", "5e", "Mi", "1 Mi"])
def test_not_a_quantity(text: str) -> None:
    with pytest.raises(ValueError):
        parse_quantity(text)
    assert canonical(text) == text


@pytest.mark.parametrize(
    ("text", "printed"),
    [("1000m", "1"), ("1500m", "1500m"), ("16777216Ki", "16Gi"), ("1024Mi", "1Gi"), ("1536Mi", "1536Mi"), ("0.5Gi", "512Mi"),
     ("100Ki", "100Ki"), ("512", "512"), ("1000", "1k"), ("2e3", "2k"), ("0", "0"), ("0.1", "100m"), ("-1000m", "-1"), (2, "2"), (True, "True")],
)
def test_canonical_as_kubectl_prints(text: object, printed: str) -> None:
    assert canonical(text) == printed


@pytest.mark.parametrize(("millicores", "printed"), [(0, "0"), (250, "250m"), (1900, "1900m"), (2000, "2"), (16000, "16")])
def test_format_millicores(millicores: int, printed: str) -> None:
    assert format_millicores(millicores) == printed


@pytest.mark.parametrize(("size", "printed"), [(0, "0"), (64 * 1024**2, "64Mi"), (1536 * 1024**2, "1536Mi"), (2 * 1024**3, "2Gi"), (1024, "1Ki"), (1000, "1000")])
def test_format_bytes(size: int, printed: str) -> None:
    assert format_bytes(size) == printed
