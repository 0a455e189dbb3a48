"""nnf-sos: the workflow token of container workflows (§5, container-auth).

A workflow whose ``status.requires`` holds ``container-auth`` gets two
Secrets at Setup: ``<wf>-token-server`` with ``token.key``, an ECDSA P-521
key (PKCS#8, PEM block type "EC PRIVATE KEY"), and ``<wf>-token`` with
``token``, an HS256 JWT ``{"iat": <now>, "sub": "user-container"}`` signed
with the key's PKCS#8 DER bytes.  The WLM reads ``status.workflowToken``
and hands the token to the job as ``DW_WORKFLOW_TOKEN``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time

SUBJECT = "user-container"
PEM_TYPE = "EC PRIVATE KEY"


class TokenError(ValueError):
    """A token or key that does not verify or parse."""


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def create_key() -> tuple[bytes, bytes]:
    """(PKCS#8 DER key bytes, PEM text) of a new P-521 key."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP521R1())
    der = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    body = base64.encodebytes(der).decode().replace("\n", "")
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    pem = "\n".join([f"-----BEGIN {PEM_TYPE}-----", *lines, f"-----END {PEM_TYPE}-----", ""])
    return der, pem.encode()


def key_from_pem(pem: bytes) -> bytes:
    """The DER bytes of the first PEM block."""
    text = pem.decode("ascii", "replace")
    begin, end = text.find("-----BEGIN "), text.find("-----END ")
    if begin < 0 or end < begin:
        raise TokenError("unable to decode PEM block")
    body = text[text.index("\n", begin) + 1:end]
    try:
        return base64.b64decode("".join(body.split()), validate=True)
    except ValueError:
        raise TokenError("unable to decode PEM block") from None


def create_token(key: bytes, subject: str = SUBJECT, now: int | None = None) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":"))
                     .encode())
    claims = _b64url(json.dumps({"iat": int(time.time()) if now is None else now,
                                 "sub": subject}, separators=(",", ":")).encode())
    signed = f"{header}.{claims}"
    sig = hmac.new(key, signed.encode(), hashlib.sha256).digest()
    return f"{signed}.{_b64url(sig)}"


def verify_token(token: str, key: bytes) -> dict[str, object]:
    """The claims of a token signed with key; TokenError otherwise."""
    parts = token.split(".")
    if len(parts) != 3:
        raise TokenError("token verification failed: parse failed: token is malformed")
    try:
        header = json.loads(_unb64url(parts[0]))
        claims = json.loads(_unb64url(parts[1]))
        sig = _unb64url(parts[2])
    except ValueError:
        raise TokenError("token verification failed: parse failed: token is malformed") \
            from None
    if not isinstance(header, dict) or header.get("alg") != "HS256":
        raise TokenError("token verification failed: unexpected signing method for token")
    good = hmac.new(key, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(sig, good):
        raise TokenError("token verification failed: parse failed: signature is invalid")
    if not isinstance(claims, dict):
        raise TokenError("token verification failed: invalid token")
    return claims
