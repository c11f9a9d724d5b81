"""End-to-end encryption, the pure parts: magnetar._encryption.cipher (AES-256-GCM data keys wrapped
with RSA-OAEP or ECIES) and encrypted entries in the wire codec (magnetar_wire)."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from magnetar._encryption import cipher as _e2e
from magnetar_wire import (
    Codec,
    EncryptedEntry,
    EntryFormatError,
    EntryMessage,
    decode_entry,
    encode_entry,
    read_metadata,
    stored_payload,
)

RSA = rsa.generate_private_key(public_exponent=65537, key_size=2048)  # once per module
EC = ec.generate_private_key(ec.SECP256R1())
OTHER_EC = ec.generate_private_key(ec.SECP256R1())
SECRET = b"the launch codes are 0000" * 8


def keys_of(*privates):
    return lambda name, metadata: dict(zip(("a", "b"), privates, strict=False)).get(name)


@pytest.mark.parametrize("private", [RSA, EC], ids=["rsa", "ec"])
def test_a_section_encrypted_for_a_public_key_decrypts_with_its_private_key(private):
    encryption, ciphertext = _e2e.encrypt_section(SECRET, {"a": (private.public_key(), {"v": "1"})})

    assert SECRET not in ciphertext and len(ciphertext) == len(SECRET) + 16  # GCM tag
    assert (encryption.algorithm, len(encryption.param)) == ("AES-256-GCM", 12)
    assert [(k.name, dict(k.metadata)) for k in encryption.keys] == [("a", {"v": "1"})]
    assert _e2e.decrypt_section(encryption, ciphertext, keys_of(private)) == SECRET


def test_each_entry_gets_a_fresh_data_key_and_nonce():
    first, c1 = _e2e.encrypt_section(SECRET, {"a": (EC.public_key(), {})})
    second, c2 = _e2e.encrypt_section(SECRET, {"a": (EC.public_key(), {})})
    assert first.param != second.param and c1 != c2
    assert _e2e.unwrap_key(first.keys[0].value, EC) != _e2e.unwrap_key(second.keys[0].value, EC)


def test_a_section_encrypted_for_two_keys_decrypts_with_either_private_key():
    recipients = {"a": (RSA.public_key(), {}), "b": (EC.public_key(), {})}
    encryption, ciphertext = _e2e.encrypt_section(SECRET, recipients)

    assert _e2e.decrypt_section(encryption, ciphertext, keys_of(RSA)) == SECRET
    assert _e2e.decrypt_section(encryption, ciphertext, keys_of(None, EC)) == SECRET


def test_the_wrong_private_key_fails_to_unwrap_the_data_key():
    encryption, ciphertext = _e2e.encrypt_section(SECRET, {"a": (EC.public_key(), {})})
    with pytest.raises(_e2e.DecryptionFailed, match="no private key"):
        _e2e.decrypt_section(encryption, ciphertext, keys_of(OTHER_EC))
    with pytest.raises(_e2e.DecryptionFailed, match="no private key"):
        _e2e.decrypt_section(encryption, ciphertext, keys_of(RSA))


def test_a_tampered_ciphertext_fails_gcm_s_check():
    encryption, ciphertext = _e2e.encrypt_section(SECRET, {"a": (RSA.public_key(), {})})
    tampered = bytes([ciphertext[0] ^ 1]) + ciphertext[1:]
    with pytest.raises(_e2e.DecryptionFailed, match="AES-GCM"):
        _e2e.decrypt_section(encryption, tampered, keys_of(RSA))


def test_a_pem_that_is_not_a_key_is_refused_with_its_name():
    with pytest.raises(ValueError, match="key.pem is not a PEM public key"):
        _e2e.load_public_key(b"not a key", "key.pem")


def _encrypted_batch(codec=Codec.NONE):
    messages = [EntryMessage(SECRET, i, 1000, key=f"k{i}", properties={"p": "v"}) for i in range(3)]
    encrypt = lambda section: _e2e.encrypt_section(section, {"a": (EC.public_key(), {})})  # noqa: E731
    return encode_entry(messages, producer_name="p", codec=codec, encrypt=encrypt)


def test_an_encrypted_entry_keeps_keys_and_properties_in_clear_but_not_the_payload():
    entry = _encrypted_batch()
    meta = read_metadata(entry)

    assert SECRET[:25] not in entry
    assert meta.header.encrypted and [m.key for m in meta.messages] == ["k0", "k1", "k2"]
    assert meta.messages[0].properties == {"p": "v"} and meta.encryption is not None
    with pytest.raises(EncryptedEntry, match="needs a private key"):
        decode_entry(entry)
    decrypt = lambda e, s: _e2e.decrypt_section(e, s, keys_of(EC))  # noqa: E731
    assert [m.payload for m in decode_entry(entry, decrypt=decrypt).messages] == [SECRET] * 3


def test_compression_happens_before_encryption():
    entry = _encrypted_batch(Codec.ZLIB)
    meta = read_metadata(entry)
    assert len(stored_payload(entry)) < meta.header.uncompressed_len // 4  # still compressed


def test_an_encrypted_flag_without_encryption_metadata_is_refused():
    clear = bytearray(encode_entry([EntryMessage(b"x", 0, 1)], producer_name="p"))
    clear[6] |= 0x02  # the header's encrypted flag (not covered by the CRC)
    with pytest.raises(EntryFormatError, match="encrypted flag"):
        read_metadata(bytes(clear))
