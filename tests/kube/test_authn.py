"""Bearer tokens: fresh from the OS, compared in constant time, refused with the apiserver's Status."""

from __future__ import annotations

from sre_env.kube.authn import authenticated, bearer_header, bearer_token, new_token, unauthorized_status


def test_tokens_are_random_and_long() -> None:
    tokens = {new_token() for _ in range(50)}
    assert len(tokens) == 50 and all(len(t) >= 43 for t in tokens)


def test_the_header_is_read_as_kubectl_and_curl_send_it() -> None:
    assert bearer_token("Bearer abc") == "abc" and bearer_token("bearer  abc ") == "abc"
    assert bearer_token("Basic abc") is None and bearer_token("Bearer") is None and bearer_token(None) is None
    assert authenticated("Bearer abc", "abc") and not authenticated("Bearer abd", "abc") and not authenticated(None, "abc")
    assert authenticated(None, None)  # no token configured: --no-auth
    assert bearer_header("abc") == {"Authorization": "Bearer abc"} and bearer_header(None) == {}


def test_the_refusal_is_the_apiservers() -> None:
    assert unauthorized_status() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
