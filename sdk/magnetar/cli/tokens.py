"""``magnetar tokens``: Apache Pulsar's ``pulsar tokens`` verbs, same flags, same files.

    magnetar tokens create-secret-key [--output FILE] [--base64]
    magnetar tokens create-key-pair [-a RS256|ES256|...] --output-private-key FILE
                                    --output-public-key FILE
    magnetar tokens create (--secret-key REF | --private-key REF) --subject ROLE
                           [--expiry-time 1h|30m|7d|1y] [-a ALGORITHM]
    magnetar tokens show [TOKEN | -i | -f FILE]
    magnetar tokens validate (--secret-key REF | --public-key REF) [TOKEN | -i | -f FILE]

A key reference (REF) is ``file:///absolute/path``, ``data:;base64,<base64>`` or a plain
base64 value. Secret and private keys are written readable by their owner only.

Needs the client's ``tokens`` extra (PyJWT, cryptography): ``pip install
'magnetar-client[tokens]'``; importing this module without it raises ModuleNotFoundError
(the ``magnetar`` command says what to install). Exit status: 0 done, 1 the token or a key
is not valid (the message says why), 2 wrong usage.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from magnetar_wire import token_keys, tokens

PRIVATE_FILE_MODE = 0o600


def _token_source(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("token", nargs="?", help="the token (or use -i / -f)")
    parser.add_argument("-i", "--stdin", action="store_true", help="read the token from stdin")
    parser.add_argument("-f", "--token-file", help="read the token from this file")


def build_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``tokens`` verbs to ``parser`` (the ``magnetar tokens`` parser, or a fresh
    one); returns it."""
    verbs = parser.add_subparsers(dest="verb", required=True)
    secret = verbs.add_parser("create-secret-key", help="create a secret key (HS256)")
    secret.add_argument("-o", "--output", help="write the key to this file (raw bytes)")
    secret.add_argument("-b", "--base64", action="store_true", help="base64 the key")

    pair = verbs.add_parser("create-key-pair", help="create a private/public key pair")
    pair.add_argument("-a", "--signature-algorithm", "--sign-algorithm", dest="algorithm",
                      default="RS256", choices=token_keys.KEY_PAIR_ALGORITHMS)  # fmt: skip
    pair.add_argument("--output-private-key", required=True, help="PKCS#8 DER file to write")
    pair.add_argument("--output-public-key", required=True, help="X.509 DER file to write")

    create = verbs.add_parser("create", help="create a token for a role")
    keys = create.add_mutually_exclusive_group(required=True)
    keys.add_argument("-sk", "--secret-key", help="key reference of the secret key")
    keys.add_argument("-pk", "--private-key", help="key reference of the private key")
    create.add_argument("-s", "--subject", required=True, help="the role the token proves")
    create.add_argument(
        "-e", "--expiry-time", help="expires after: 30m, 1h, 7d, 1y (default never)"
    )
    create.add_argument("-a", "--signature-algorithm", dest="algorithm",
                        help="HS256 (secret key), RS256 or ES256 ... (private key)")  # fmt: skip

    show = verbs.add_parser("show", help="print a token's header and claims (not verified)")
    _token_source(show)

    check = verbs.add_parser("validate", help="verify a token's signature and expiry")
    check_keys = check.add_mutually_exclusive_group(required=True)
    check_keys.add_argument("-sk", "--secret-key", help="key reference of the secret key")
    check_keys.add_argument("-pk", "--public-key", help="key reference of the public key")
    _token_source(check)
    return parser


def _write_private(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` readable and writable by the owner only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(path, PRIVATE_FILE_MODE)


def _read_token(args: argparse.Namespace, stdin: IO[str]) -> str:
    if args.token_file:
        return Path(args.token_file).read_text().strip()
    if args.stdin:
        return stdin.read().strip()
    if not args.token:
        raise ValueError("give the token, -i (read it from stdin) or -f FILE")
    return str(args.token).strip()


def _create_secret_key(args: argparse.Namespace, out: IO[str]) -> None:
    key = token_keys.new_secret_key()
    data = base64.b64encode(key) if args.base64 else key
    if args.output:
        _write_private(args.output, data)
    elif args.base64:
        out.write(data.decode() + "\n")
    else:
        out.flush()
        getattr(out, "buffer", sys.stdout.buffer).write(data)


def _create_key_pair(args: argparse.Namespace, _out: IO[str]) -> None:
    pair = token_keys.new_key_pair(args.algorithm)
    _write_private(args.output_private_key, pair.private_der)
    Path(args.output_public_key).write_bytes(pair.public_der)


def _create(args: argparse.Namespace, out: IO[str], now_s: int) -> None:
    if args.secret_key:
        signing = tokens.SigningKey.secret(token_keys.resolve(args.secret_key))
    else:
        signing = tokens.SigningKey.private(token_keys.resolve(args.private_key))
    expires = None
    if args.expiry_time:
        expires = now_s + tokens.parse_relative_time_s(args.expiry_time)
    out.write(tokens.create(signing, args.subject, expires, args.algorithm) + "\n")


def _show(args: argparse.Namespace, out: IO[str], stdin: IO[str]) -> None:
    header, claims = tokens.show(_read_token(args, stdin))
    out.write(f"{json.dumps(header)}\n---\n{json.dumps(claims)}\n")


def _validate(args: argparse.Namespace, out: IO[str], stdin: IO[str], now_s: int) -> None:
    if args.secret_key:
        keys = tokens.VerificationKeys.of(secret_key=token_keys.resolve(args.secret_key))
    else:
        keys = tokens.VerificationKeys.of(public_key=token_keys.resolve(args.public_key))
    claims = tokens.validate(_read_token(args, stdin), keys, now_s)
    out.write(json.dumps(claims.raw) + "\n")


def run(args: argparse.Namespace, out: IO[str], err: IO[str], stdin: IO[str], now_s: int) -> int:
    """Run a parsed ``tokens`` verb; returns the exit status (1: a key or token is not
    valid, with the reason on ``err``)."""
    try:
        if args.verb == "create-secret-key":
            _create_secret_key(args, out)
        elif args.verb == "create-key-pair":
            _create_key_pair(args, out)
        elif args.verb == "create":
            _create(args, out, now_s)
        elif args.verb == "show":
            _show(args, out, stdin)
        else:
            _validate(args, out, stdin, now_s)
    except (tokens.AuthenticationError, ValueError, OSError) as exc:
        err.write(f"magnetar tokens {args.verb}: {exc}\n")
        return 1
    return 0


def main(argv: Sequence[str] | None = None, now_s: int | None = None) -> int:
    """``magnetar tokens ...`` with ``argv`` the words after ``tokens``; ``now_s`` (epoch
    seconds) defaults to the clock. Returns the exit status."""
    parser = build_parser(argparse.ArgumentParser(prog="magnetar tokens"))
    args = parser.parse_args(argv)
    clock_s = int(time.time()) if now_s is None else now_s
    return run(args, sys.stdout, sys.stderr, sys.stdin, clock_s)
