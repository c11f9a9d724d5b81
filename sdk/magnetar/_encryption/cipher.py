"""End-to-end encryption, the cipher work: pure functions over keys and bytes (no I/O; the
randomness comes from ``os.urandom`` unless passed in). Needs ``cryptography`` (the client's
``encryption`` extra); imported only when encryption is used.

One entry (one message or one batch, or one chunk) gets a fresh 256-bit AES data key and a
fresh 12-byte nonce; its compressed payload section is encrypted with AES-256-GCM (the 16-byte
tag appended). The data key is wrapped for each named public key:

- RSA: RSA-OAEP with SHA-256 (MGF1 SHA-256);
- EC: ECIES: an ephemeral key on the recipient's curve, ECDH, HKDF-SHA256 (``_ECIES_INFO``)
  to a 256-bit key, AES-256-GCM of the data key. The wrapped value is
  ``u16 point length | ephemeral point (X9.62 uncompressed) | 12-byte nonce | ciphertext``.

Pulsar's Java client differs: it keeps one data key for up to 4 hours (a fresh IV per
message), wraps it with ``RSA/NONE/OAEPWithSHA1AndMGF1Padding`` and BouncyCastle's ``ECIES``
(ECDH + KDF2 + XOR + HMAC-SHA1). The formats are not interchangeable anyway: entries are
Magnetar's own (docs/entry-format.md).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Mapping
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from magnetar_wire import DataKey, EntryEncryption

__all__ = [
    "ALGORITHM",
    "DecryptionFailed",
    "decrypt_section",
    "encrypt_section",
    "load_private_key",
    "load_public_key",
    "unwrap_key",
    "wrap_key",
]

ALGORITHM = "AES-256-GCM"
_KEY_BYTES = 32
_NONCE_BYTES = 12
_ECIES_INFO = b"magnetar e2e ecies v1"
_OAEP = padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)

PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey
PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey


class DecryptionFailed(ValueError):
    """No private key unwraps the entry's data key, or the payload fails GCM's check."""


def load_public_key(pem: bytes, where: str) -> PublicKey:
    """An RSA or EC public key from PEM bytes (``where`` names them in errors). Raises
    ValueError: not PEM, or another kind of key."""
    try:
        key: Any = serialization.load_pem_public_key(pem)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{where} is not a PEM public key: {exc}") from None
    if not isinstance(key, rsa.RSAPublicKey | ec.EllipticCurvePublicKey):
        raise ValueError(f"{where} is a {type(key).__name__}; only RSA and EC keys encrypt")
    return key


def load_private_key(pem: bytes, where: str) -> PrivateKey:
    """An RSA or EC private key from unencrypted PEM bytes. Raises ValueError."""
    try:
        key: Any = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{where} is not an unencrypted PEM private key: {exc}") from None
    if not isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
        raise ValueError(f"{where} is a {type(key).__name__}; only RSA and EC keys decrypt")
    return key


def _hkdf(shared: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=_KEY_BYTES, salt=None,
                info=_ECIES_INFO).derive(shared)  # fmt: skip


def wrap_key(data_key: bytes, public: PublicKey) -> bytes:
    """``data_key`` encrypted for ``public`` (RSA-OAEP or ECIES, see the module)."""
    if isinstance(public, rsa.RSAPublicKey):
        return public.encrypt(data_key, _OAEP)
    ephemeral = ec.generate_private_key(public.curve)
    kek = _hkdf(ephemeral.exchange(ec.ECDH(), public))
    point = ephemeral.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    nonce = os.urandom(_NONCE_BYTES)
    return (
        struct.pack(">H", len(point)) + point + nonce + AESGCM(kek).encrypt(nonce, data_key, None)
    )


def unwrap_key(value: bytes, private: PrivateKey) -> bytes:
    """The data key from a wrapped ``value``. Raises DecryptionFailed (wrong key, damage)."""
    try:
        if isinstance(private, rsa.RSAPrivateKey):
            return private.decrypt(value, _OAEP)
        (n,) = struct.unpack(">H", value[:2])
        point, rest = value[2 : 2 + n], value[2 + n :]
        peer = ec.EllipticCurvePublicKey.from_encoded_point(private.curve, point)
        kek = _hkdf(private.exchange(ec.ECDH(), peer))
        return AESGCM(kek).decrypt(rest[:_NONCE_BYTES], rest[_NONCE_BYTES:], None)
    except (ValueError, InvalidTag, struct.error) as exc:
        raise DecryptionFailed(
            f"the data key does not unwrap with this private key ({exc!r})"
        ) from None


def encrypt_section(
    section: bytes,
    recipients: Mapping[str, tuple[PublicKey, Mapping[str, str]]],
    *,
    data_key: bytes | None = None,
    nonce: bytes | None = None,
) -> tuple[EntryEncryption, bytes]:
    """``section`` encrypted under a fresh data key wrapped for each recipient (name ->
    (public key, key metadata)); ``data_key`` / ``nonce`` are random unless given (tests).
    Raises ValueError when there is no recipient."""
    if not recipients:
        raise ValueError("end-to-end encryption needs at least one public key")
    data_key = data_key if data_key is not None else AESGCM.generate_key(bit_length=256)
    nonce = nonce if nonce is not None else os.urandom(_NONCE_BYTES)
    keys = tuple(DataKey(name, wrap_key(data_key, public), dict(meta))
                 for name, (public, meta) in recipients.items())  # fmt: skip
    return EntryEncryption(ALGORITHM, nonce, keys), AESGCM(data_key).encrypt(nonce, section, None)


def decrypt_section(
    encryption: EntryEncryption,
    ciphertext: bytes,
    private_key: Callable[[str, Mapping[str, str]], PrivateKey | None],
) -> bytes:
    """The payload section of an encrypted entry: the first wrapped data key that
    ``private_key(name, metadata)`` unwraps, then AES-256-GCM. Raises DecryptionFailed:
    an unknown algorithm, no key unwraps, or the ciphertext or nonce was altered."""
    if encryption.algorithm != ALGORITHM:
        raise DecryptionFailed(f"unknown encryption algorithm {encryption.algorithm!r}")
    data_key = None
    for k in encryption.keys:
        private = private_key(k.name, k.metadata)
        if private is None:
            continue
        try:
            data_key = unwrap_key(k.value, private)
            break
        except DecryptionFailed:
            continue
    if data_key is None:
        names = [k.name for k in encryption.keys]
        raise DecryptionFailed(f"no private key of the key reader unwraps the data key ({names})")
    try:
        return AESGCM(data_key).decrypt(encryption.param, ciphertext, None)
    except (InvalidTag, ValueError) as exc:
        raise DecryptionFailed(f"the payload fails AES-GCM's check (altered?) {exc!r}") from None
