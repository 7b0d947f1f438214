"""Password hashing and opaque tokens (standard library only).

Passwords are hashed with scrypt (RFC 7914; n=2**14, r=8, p=1, 16-byte salt), stored as
``scrypt$n$r$p$salt_hex$hash_hex``. Tokens are 32 random bytes, URL-safe; only their
SHA-256 is stored, so a database dump reveals no usable credential.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

SCRYPT_N = 2**14
SCRYPT_R = 8
SCRYPT_P = 1
_DKLEN = 32
TOKEN_BYTES = 32

# The hash of a random password nobody knows, in the same format and with the same cost
# as a real one. A login for an unknown username is verified against it, so an unknown
# name costs the same scrypt as a known one with a wrong password: the response time says
# nothing about which usernames exist. Being public does not matter: no account has it,
# and a login never succeeds without an account.
DUMMY_HASH = (
    f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}$6fb099f67ef7f11b5236e52c44886c85"
    "$82dc922d8b5393d123c753f4b45c511e387d70b928455a3781560541a5819870"
)


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    digest = _scrypt(password, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    try:
        scheme, n, r, p, salt_hex, digest_hex = stored.split("$")
    except ValueError:
        return False
    if scheme != "scrypt":
        return False
    candidate = _scrypt(password, bytes.fromhex(salt_hex), int(n), int(r), int(p))
    return hmac.compare_digest(candidate, bytes.fromhex(digest_hex))


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, dklen=_DKLEN)


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def same_digest(token: str, digest: str | None) -> bool:
    return digest is not None and hmac.compare_digest(token_digest(token), digest)
