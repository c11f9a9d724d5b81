"""``CryptoKeyReader``, as pulsar-client's: the key files of end-to-end encryption, and the
encrypt / decrypt functions a producer or consumer hands to the entry codec, and a
consumer's ``Crypto`` (its decrypt function and ``crypto_failure_action``).

The cipher work is ``magnetar._encryption.cipher`` (pure); this module reads the PEM files. It imports
``cryptography`` only when a key is first read, so ``import magnetar`` works without the
client's ``encryption`` extra.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from magnetar import exceptions as exc
from magnetar._enums import ConsumerCryptoFailureAction
from magnetar._validate import check_type

if TYPE_CHECKING:
    from magnetar_wire import EntryEncryption
    from magnetar_wire.entry import Decrypt, Encrypt

__all__ = ["Crypto", "CryptoKeyReader", "entry_decrypter", "entry_encrypter"]


def _e2e() -> Any:
    try:
        from . import cipher as _e2e
    except ImportError as err:  # pragma: no cover - the extra is installed in tests
        raise exc.CryptoError(
            "end-to-end encryption needs the 'cryptography' package: "
            "pip install 'magnetar-client[encryption]'"
        ) from err
    return _e2e


class CryptoKeyReader:
    """The paths of a public key (producers encrypt with it) and a private key (consumers
    decrypt with it), PEM files (RSA or EC; the private key unencrypted). As pulsar-client's
    default reader, every key name maps to these two files; a subclass may override
    ``public_key`` / ``private_key`` to pick a file per key name (a Magnetar extension).
    The files are read when first needed. Raises ValueError (a path not a str)."""

    def __init__(self, public_key_path: str, private_key_path: str) -> None:
        check_type(str, public_key_path, "public_key_path")
        check_type(str, private_key_path, "private_key_path")
        self.public_key_path = public_key_path
        self.private_key_path = private_key_path
        self._cache: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()

    def _load(self, kind: str, path: str) -> Any:
        with self._lock:
            if (kind, path) not in self._cache:
                e2e = _e2e()
                try:
                    with open(path, "rb") as f:
                        pem = f.read()
                    load = e2e.load_public_key if kind == "public" else e2e.load_private_key
                    self._cache[(kind, path)] = load(pem, f"{kind} key file {path!r}")
                except (OSError, ValueError) as err:
                    raise exc.CryptoError(f"cannot read the {kind} key: {err}") from None
            return self._cache[(kind, path)]

    def public_key(self, key_name: str) -> tuple[Any, Mapping[str, str]]:
        """The public key for ``key_name`` and its metadata (sent with the wrapped key).
        Raises CryptoError: the file is missing or not an RSA/EC PEM public key."""
        return self._load("public", self.public_key_path), {}

    def private_key(self, key_name: str, metadata: Mapping[str, str]) -> Any:
        """The private key for ``key_name`` (``metadata`` as the producer's reader gave it).
        Raises CryptoError: the file is missing or not an RSA/EC PEM private key."""
        return self._load("private", self.private_key_path)


def entry_encrypter(reader: CryptoKeyReader, key_names: list[str]) -> Encrypt:
    """The ``encrypt`` function of a producer: each call wraps a fresh data key for every
    name of ``key_names``. Reads the public keys now, so a bad key fails the producer's
    creation. Raises CryptoError."""
    e2e = _e2e()
    recipients = {name: reader.public_key(name) for name in key_names}
    return lambda section: e2e.encrypt_section(section, recipients)


def entry_decrypter(reader: CryptoKeyReader) -> Decrypt:
    """The ``decrypt`` function of a consumer or reader: raises CryptoError (no key unwraps
    the data key, an altered payload, an unreadable key file)."""
    e2e = _e2e()

    def private_key(name: str, metadata: Mapping[str, str]) -> Any:
        return reader.private_key(name, metadata)

    def decrypt(encryption: EntryEncryption, section: bytes) -> bytes:
        try:
            return e2e.decrypt_section(encryption, section, private_key)
        except e2e.DecryptionFailed as err:
            raise exc.CryptoError(f"cannot decrypt the message: {err}") from None

    return decrypt


@dataclass(frozen=True)
class Crypto:
    """A consumer's end-to-end decryption: its ``decrypt`` (None: no key reader) and what
    it does with a message it cannot decrypt."""

    decrypt: Decrypt | None = None
    action: ConsumerCryptoFailureAction = ConsumerCryptoFailureAction.FAIL

    @classmethod
    def of(cls, reader: CryptoKeyReader | None, action: ConsumerCryptoFailureAction) -> Crypto:
        """From the ``crypto_key_reader`` / ``crypto_failure_action`` arguments (a reader
        needs ``cryptography``: CryptoError without it)."""
        return cls(entry_decrypter(reader) if reader is not None else None, action)
