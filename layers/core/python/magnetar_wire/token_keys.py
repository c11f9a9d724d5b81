"""Keys of JSON Web Tokens as Apache Pulsar's ``pulsar tokens`` makes them, and key references.

* A **secret key** (HS256) is 32 random bytes, stored raw (``create-secret-key --output``) or
  as base64 (``--base64``).
* A **key pair** (RS256 by default; RS384/RS512, ES256/ES384/ES512 too) is a private key in
  PKCS#8 DER and a public key in X.509 SubjectPublicKeyInfo DER, as Pulsar writes them. PEM
  files are read too.
* A **key reference** says where a key is: ``file:///absolute/path`` (read through the
  ``read_file`` passed in), ``data:;base64,<base64>`` (the key inline), or, as the service
  takes keys from SSM Parameter Store or Secrets Manager, a plain base64 value. Unlike
  Pulsar, a plain value is never taken for a file path: write ``file://`` for files.

Needs ``cryptography`` (the client's ``tokens`` extra; the service always has it). Raises
``InvalidKey`` (a ValueError) with what to change when a reference or key is unusable.
"""

from __future__ import annotations

import base64
import binascii
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

SECRET_KEY_BYTES = 32
"""Size of a secret key, as Pulsar's ``create-secret-key`` makes it (HS256)."""

RSA_KEY_BITS = {"RS256": 2048, "RS384": 3072, "RS512": 4096}
EC_CURVES: dict[str, type[ec.EllipticCurve]] = {
    "ES256": ec.SECP256R1,
    "ES384": ec.SECP384R1,
    "ES512": ec.SECP521R1,
}
KEY_PAIR_ALGORITHMS = tuple(RSA_KEY_BITS) + tuple(EC_CURVES)

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey

REFERENCE_HELP = "use file:///absolute/path, data:;base64,<base64> or a plain base64 value"


class InvalidKey(ValueError):
    """A key reference or key that cannot be used; the message says what to change."""


def read_file(path: str) -> bytes:
    """The bytes of the file at ``path`` (the default ``read_file`` of ``resolve``); raises
    InvalidKey when it cannot be read."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InvalidKey(f"cannot read key file {path}: {exc.strerror or exc}") from exc


def resolve(reference: str, read: Callable[[str], bytes] = read_file) -> bytes:
    """The key bytes a reference points at: ``file:///abs/path`` (through ``read``),
    ``data:[<type>];base64,<b64>``, or a plain base64 value. Raises InvalidKey."""
    text = reference.strip()
    if not text:
        raise InvalidKey(f"the key reference is empty: {REFERENCE_HELP}")
    if text.startswith("file:"):
        parsed = urlparse(text)
        if parsed.netloc not in ("", "localhost") or not parsed.path.startswith("/"):
            raise InvalidKey(
                f"{text!r} is not a file URL of an absolute path: write file:///absolute/path"
            )
        return read(unquote(parsed.path))
    if text.startswith("data:"):
        meta, comma, data = text[len("data:") :].partition(",")
        if not comma or not meta.endswith(";base64"):
            raise InvalidKey("a data URL key must be base64: write data:;base64,<base64>")
        return _base64(data, "the data URL")
    return _base64(text, "the plain key value")


def _base64(text: str, what: str) -> bytes:
    try:
        decoded = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidKey(f"{what} is not valid base64: {REFERENCE_HELP}") from exc
    if not decoded:
        raise InvalidKey(f"{what} holds no key bytes: {REFERENCE_HELP}")
    return decoded


def new_secret_key(random_bytes: Callable[[int], bytes] = secrets.token_bytes) -> bytes:
    """A fresh HS256 secret key: ``SECRET_KEY_BYTES`` random bytes."""
    return random_bytes(SECRET_KEY_BYTES)


@dataclass(frozen=True)
class KeyPair:
    """A key pair as Pulsar writes it: private PKCS#8 DER, public SubjectPublicKeyInfo DER."""

    private_der: bytes
    public_der: bytes


def new_key_pair(algorithm: str = "RS256") -> KeyPair:
    """A fresh key pair for ``algorithm`` (RS256/RS384/RS512: RSA of 2048/3072/4096 bits;
    ES256/ES384/ES512: EC P-256/P-384/P-521). Raises InvalidKey for other algorithms."""
    private: PrivateKey
    if algorithm in RSA_KEY_BITS:
        private = rsa.generate_private_key(public_exponent=65537, key_size=RSA_KEY_BITS[algorithm])
    elif algorithm in EC_CURVES:
        private = ec.generate_private_key(EC_CURVES[algorithm]())
    else:
        raise InvalidKey(
            f"unknown key pair algorithm {algorithm!r}: use one of {', '.join(KEY_PAIR_ALGORITHMS)}"
        )
    return KeyPair(
        private.private_bytes(
            serialization.Encoding.DER,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
        private.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        ),
    )


def load_private_key(data: bytes) -> PrivateKey:
    """An RSA or EC private key from PKCS#8 DER or PEM bytes; raises InvalidKey."""
    try:
        if data.lstrip().startswith(b"-----BEGIN"):
            key = serialization.load_pem_private_key(data, password=None)
        else:
            key = serialization.load_der_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise InvalidKey(
            "the private key is not an unencrypted PKCS#8 key (DER or PEM), as "
            "`magnetar tokens create-key-pair` writes it"
        ) from exc
    if not isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
        raise InvalidKey(f"the private key is a {type(key).__name__}: use an RSA or EC key")
    return key


def load_public_key(data: bytes) -> PublicKey:
    """An RSA or EC public key from X.509 SubjectPublicKeyInfo DER or PEM bytes; raises
    InvalidKey."""
    try:
        if data.lstrip().startswith(b"-----BEGIN"):
            key = serialization.load_pem_public_key(data)
        else:
            key = serialization.load_der_public_key(data)
    except (ValueError, TypeError) as exc:
        raise InvalidKey(
            "the public key is not an X.509 SubjectPublicKeyInfo key (DER or PEM), as "
            "`magnetar tokens create-key-pair` writes it"
        ) from exc
    if not isinstance(key, rsa.RSAPublicKey | ec.EllipticCurvePublicKey):
        raise InvalidKey(f"the public key is a {type(key).__name__}: use an RSA or EC key")
    return key


def algorithms_of(key: PrivateKey | PublicKey) -> tuple[str, ...]:
    """The JWT algorithms a key pair's key signs or verifies (RSA: RS256/384/512; EC: the
    one ES algorithm of its curve)."""
    if isinstance(key, rsa.RSAPrivateKey | rsa.RSAPublicKey):
        return tuple(RSA_KEY_BITS)
    for algorithm, curve in EC_CURVES.items():
        if isinstance(key.curve, curve):
            return (algorithm,)
    raise InvalidKey(
        f"the EC key's curve {key.curve.name} has no JWT algorithm: use P-256, P-384 or P-521"
    )
