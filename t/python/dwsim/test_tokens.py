"""dwsim.tokens: the container workflow's key and JWT (nnf-sos pkg/token)."""

from __future__ import annotations

import base64
import json

import pytest

from flux_dws.dwsim import tokens


def test_key_and_token_round_trip():
    der, pem = tokens.create_key()
    assert pem.startswith(b"-----BEGIN EC PRIVATE KEY-----\n")
    assert pem.rstrip().endswith(b"-----END EC PRIVATE KEY-----")
    assert tokens.key_from_pem(pem) == der
    from cryptography.hazmat.primitives.serialization import load_der_private_key
    key = load_der_private_key(der, None)
    assert key.curve.name == "secp521r1"  # type: ignore[attr-defined]
    token = tokens.create_token(der, now=1700000000)
    header, claims, _ = token.split(".")
    pad = "=="
    assert json.loads(base64.urlsafe_b64decode(header + pad)) == {"alg": "HS256", "typ": "JWT"}
    assert json.loads(base64.urlsafe_b64decode(claims + pad)) == {"iat": 1700000000,
                                                                  "sub": "user-container"}
    assert tokens.verify_token(token, der)["sub"] == "user-container"


def test_token_signed_with_another_key_is_refused():
    der, _ = tokens.create_key()
    other, _ = tokens.create_key()
    with pytest.raises(tokens.TokenError, match="signature is invalid"):
        tokens.verify_token(tokens.create_token(der), other)


@pytest.mark.parametrize("token, why", [
    ("abc", "token is malformed"),
    ("a.b.c", "token is malformed"),
    (base64.urlsafe_b64encode(b'{"alg":"none"}').decode().rstrip("=") + ".e30.", "unexpected"
     " signing method"),
])
def test_malformed_tokens(token, why):
    with pytest.raises(tokens.TokenError, match=why):
        tokens.verify_token(token, b"key")


@pytest.mark.parametrize("pem", [b"", b"not a pem", b"-----BEGIN X-----\n!!!\n-----END X-----"])
def test_bad_pem(pem):
    with pytest.raises(tokens.TokenError, match="unable to decode PEM block"):
        tokens.key_from_pem(pem)
