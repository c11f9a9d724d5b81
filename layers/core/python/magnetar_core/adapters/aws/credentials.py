"""Authentication adapters: token keys from SSM Parameter Store, IAM callers from AWS STS.

``SsmParameters`` reads a SecureString once per call (the caller keeps the value for the
container's life): one ``ssm:GetParameter`` with decryption, so the function needs that
permission on the parameter and ``kms:Decrypt`` on its key. A Secrets Manager secret is read
the same way by its SSM reference name ``/aws/reference/secretsmanager/<secret id>``.

``StsCallerIdentity`` sends an IAM token's presigned ``sts:GetCallerIdentity`` call
(``domain.security.iam`` checked it first: an STS endpoint, that one action) and reads the
caller's ARN from STS's XML answer. No AWS credentials are needed for it: the call is
signed by the caller.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any
from xml.etree import ElementTree

from botocore.exceptions import BotoCoreError, ClientError

from magnetar_core.adapters.aws.clients import BotoClient, error_code
from magnetar_core.domain.errors import StorageFault
from magnetar_wire.token_keys import InvalidKey
from magnetar_wire.tokens import BadSignature

_STS_NS = "{https://sts.amazonaws.com/doc/2011-06-15/}"
_MAX_ANSWER_BYTES = 64 * 1024


class SsmParameters:
    """Decrypted SSM parameters (``ports.SecretParameters``)."""

    def __init__(self, ssm: BotoClient) -> None:
        self._ssm = ssm

    def read(self, name: str) -> str:
        """The decrypted value of ``name``; one ``ssm:GetParameter``. Raises InvalidKey
        naming the parameter and what went wrong (missing, access denied, KMS)."""
        try:
            answer = self._ssm.get_parameter(Name=name, WithDecryption=True)
        except ClientError as exc:
            code = error_code(exc) or "unknown AWS error"
            raise InvalidKey(
                f"cannot read the token key parameter {name!r} from SSM Parameter Store "
                f"({code}): create it as a SecureString (aws ssm put-parameter --type "
                "SecureString) and let this function read it (ssm:GetParameter, kms:Decrypt)"
            ) from exc
        except BotoCoreError as exc:
            raise InvalidKey(
                f"cannot read the token key parameter {name!r}: {type(exc).__name__}"
            ) from exc
        return str(answer["Parameter"]["Value"])


Opener = Callable[..., Any]
"""``urllib.request.urlopen``-like: ``(request, timeout=seconds)`` -> a response."""


class StsCallerIdentity:
    """Sends presigned GetCallerIdentity calls (``ports.CallerIdentity``), each with a
    ``timeout_s`` seconds limit."""

    def __init__(self, timeout_s: float = 5.0, opener: Opener = urllib.request.urlopen) -> None:
        self._timeout_s = timeout_s
        self._open = opener

    def caller_arn(self, url: str, headers: Mapping[str, str]) -> str:
        """The ARN STS answers for the presigned ``url`` sent with ``headers``. Raises
        BadSignature when STS refuses the call (4xx), StorageFault when it cannot be asked
        or answers something else."""
        request = urllib.request.Request(url, headers=dict(headers), method="GET")  # noqa: S310 - checked: an STS endpoint
        try:
            with self._open(request, timeout=self._timeout_s) as answer:
                body = answer.read(_MAX_ANSWER_BYTES)
        except urllib.error.HTTPError as exc:
            if 400 <= exc.code < 500:
                raise BadSignature(
                    f"AWS STS refused the IAM token (HTTP {exc.code}): it is signed for another "
                    "cluster, has expired, or its credentials are no longer valid; make a new "
                    "one with magnetar.AuthenticationAws"
                ) from exc
            raise StorageFault(
                f"asking AWS STS who signed the IAM token failed: HTTP {exc.code}"
            ) from exc
        except (OSError, ValueError) as exc:
            raise StorageFault(f"asking AWS STS who signed the IAM token failed: {exc}") from exc
        return _arn_of(body)


def _arn_of(body: bytes) -> str:
    """The ``Arn`` of a GetCallerIdentity answer (XML, STS's namespace or none)."""
    try:
        root = ElementTree.fromstring(body)  # noqa: S314 - STS's answer, bounded in size
    except ElementTree.ParseError as exc:
        raise StorageFault(
            "AWS STS answered GetCallerIdentity with something that is not XML"
        ) from exc
    for tag in (f".//{_STS_NS}Arn", ".//Arn"):
        found = root.find(tag)
        if found is not None and found.text:
            return found.text.strip()
    raise StorageFault("AWS STS's GetCallerIdentity answer names no Arn")
