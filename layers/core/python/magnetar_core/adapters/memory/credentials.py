"""In-memory twins of ``adapters.aws.credentials``: parameters from a dict, IAM callers
from a table of accepted presigned URLs (tests)."""

from __future__ import annotations

from collections.abc import Mapping

from magnetar_wire.token_keys import InvalidKey
from magnetar_wire.tokens import BadSignature


class SecretParameters:
    """Parameters held in a dict (``ports.SecretParameters``); ``reads`` counts reads."""

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self.values = dict(values or {})
        self.reads = 0

    def read(self, name: str) -> str:
        """The value of ``name``; raises InvalidKey when there is none."""
        self.reads += 1
        if name not in self.values:
            raise InvalidKey(f"cannot read the token key parameter {name!r}: ParameterNotFound")
        return self.values[name]


class CallerIdentity:
    """Answers for the URLs in ``callers`` (url -> ARN), sent with ``audience`` headers
    (``ports.CallerIdentity``); any other call is refused as STS refuses a bad signature."""

    def __init__(self, callers: Mapping[str, str], audience: Mapping[str, str]) -> None:
        self.callers = dict(callers)
        self.audience = dict(audience)
        self.calls = 0

    def caller_arn(self, url: str, headers: Mapping[str, str]) -> str:
        """The ARN of ``url``'s signer; raises BadSignature for unknown URLs or headers."""
        self.calls += 1
        if url not in self.callers or dict(headers) != self.audience:
            raise BadSignature("AWS STS refused the IAM token (HTTP 403)")
        return self.callers[url]
