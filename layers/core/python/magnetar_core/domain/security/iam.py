"""IAM identities as roles: the caller's AWS principal ARN, proven by a presigned STS call.

An AWS workload that holds no Pulsar token authenticates with its IAM credentials: the SDK
(``magnetar.AuthenticationAws``) presigns an ``sts:GetCallerIdentity`` request with SigV4
(botocore), with the header ``x-magnetar-cluster: <cluster>`` among the signed headers, and
sends ``Authorization: Bearer magnetar-aws-v1.<base64url(presigned URL)>``
(``magnetar_wire.iam_tokens``). The service checks
the URL here (an STS endpoint, that one action, a SigV4 query signature, unexpired, made for
this cluster), then sends it to STS (``ports.CallerIdentity``): STS verifies the signature and
answers with the caller's ARN, which becomes the role. The scheme is aws-iam-authenticator's
(EKS) and Vault's AWS auth: the same tokens work through the API Gateway authorizer (cached by
the ``Authorization`` header) and in the handlers, on one API.

Pure: times are passed in (``now_s``, epoch seconds). Raises the 401 errors of
``magnetar_wire.tokens`` (MalformedToken, TokenExpired), each saying what to do.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

from magnetar_core.domain.security.model import Role
from magnetar_wire.iam_tokens import AUDIENCE_HEADER, IAM_TOKEN_PREFIX, MAX_EXPIRY_S
from magnetar_wire.tokens import MalformedToken, TokenExpired, utc_text

CLOCK_SKEW_S = 300
"""How far ahead of the service's clock a token's signing time may be (SigV4's 5 min)."""
STS_HOST = re.compile(r"sts(-fips)?(\.[a-z]{2}(-gov)?-[a-z]+-[0-9])?\.amazonaws\.com(\.cn)?")
"""STS's global and regional endpoints (``sts.amazonaws.com``, ``sts.eu-west-1.amazonaws.com``)."""
_HINT = "make a new one with magnetar.AuthenticationAws (botocore and AWS credentials)"
_DATE = "%Y%m%dT%H%M%SZ"
_ASSUMED_ROLE = re.compile(r"arn:(aws[a-z-]*):sts::([0-9]{12}):assumed-role/([^/]+)/.+")


def is_iam_token(token: str) -> bool:
    """True when ``token`` is an IAM token (not a JWT)."""
    return token.strip().startswith(IAM_TOKEN_PREFIX)


def caller_identity_request(
    token: str, cluster: str, now_s: int, extra_endpoints: Iterable[str] = ()
) -> tuple[str, dict[str, str]]:
    """The STS call an IAM token stands for: ``(url, headers)`` to GET, once checked.

    ``cluster`` is this deployment's cluster (the audience header's value);
    ``extra_endpoints`` are further ``scheme://host[:port]`` origins accepted besides STS's
    own HTTPS endpoints (the local emulator). Raises MalformedToken (not an IAM token, not a
    GetCallerIdentity call to STS, not SigV4 query-signed, the audience header not signed, a
    validity over ``MAX_EXPIRY_S``) or TokenExpired (its validity has passed, or it was
    signed more than ``CLOCK_SKEW_S`` ahead of ``now_s``).
    """
    url = _decoded(token)
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    sts = parts.scheme == "https" and STS_HOST.fullmatch(parts.netloc) is not None
    if not sts and origin not in set(extra_endpoints):
        raise MalformedToken(
            f"the IAM token is not a call to AWS STS (it names {origin!r}); {_HINT}"
        )
    if parts.path not in ("", "/") or parts.fragment:
        raise MalformedToken(f"the IAM token's STS call has a path or fragment; {_HINT}")
    query = _single_values(parts.query)
    if query.get("Action") != "GetCallerIdentity" or query.get("Version") != "2011-06-15":
        raise MalformedToken(f"the IAM token is not an sts:GetCallerIdentity call; {_HINT}")
    if query.get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256" or not query.get("X-Amz-Signature"):
        raise MalformedToken(f"the IAM token is not signed with SigV4; {_HINT}")
    signed = query.get("X-Amz-SignedHeaders", "").split(";")
    if AUDIENCE_HEADER not in signed or "host" not in signed:
        raise MalformedToken(
            f"the IAM token does not name its cluster (signed header {AUDIENCE_HEADER}); {_HINT}"
        )
    _check_validity(query, now_s)
    return url, {AUDIENCE_HEADER: cluster}


def role_of_arn(arn: str) -> Role:
    """The role of an IAM principal ARN: an assumed role's session ARN
    (``arn:aws:sts::123456789012:assumed-role/app/i-0abc``) becomes its role's ARN
    (``arn:aws:iam::123456789012:role/app``; role paths are not in session ARNs and so not
    here either), so grants name the role, not each session; users and other principals
    keep their ARN. Raises InvalidMessage for an ARN that is no valid role name."""
    match = _ASSUMED_ROLE.fullmatch(arn.strip())
    if match:
        partition, account, name = match.groups()
        return Role(f"arn:{partition}:iam::{account}:role/{name}")
    return Role(arn.strip())


def _decoded(token: str) -> str:
    text = token.strip()
    if not text.startswith(IAM_TOKEN_PREFIX):
        raise MalformedToken(f"not an IAM token (it must start with {IAM_TOKEN_PREFIX}); {_HINT}")
    body = text[len(IAM_TOKEN_PREFIX) :]
    try:
        url = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode()
    except (binascii.Error, ValueError) as exc:
        raise MalformedToken(f"the IAM token is not base64url text; {_HINT}") from exc
    if any(ord(c) < 33 or ord(c) == 127 for c in url):
        raise MalformedToken(f"the IAM token's URL holds blanks or control characters; {_HINT}")
    return url


def _single_values(query: str) -> dict[str, str]:
    """Query parameters, each given once (a repeated one could mean two things)."""
    try:
        values = parse_qs(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError as exc:
        raise MalformedToken(f"the IAM token's query string cannot be read; {_HINT}") from exc
    repeated = sorted(name for name, listed in values.items() if len(listed) > 1)
    if repeated:
        raise MalformedToken(f"the IAM token repeats query parameters {repeated}; {_HINT}")
    return {name: listed[0] for name, listed in values.items()}


def _check_validity(query: dict[str, str], now_s: int) -> None:
    try:
        signed_s = int(
            datetime.strptime(query.get("X-Amz-Date", ""), _DATE).replace(tzinfo=UTC).timestamp()
        )
        expires_s = int(query.get("X-Amz-Expires", ""))
    except ValueError as exc:
        raise MalformedToken(
            f"the IAM token has no valid X-Amz-Date/X-Amz-Expires; {_HINT}"
        ) from exc
    if not 0 < expires_s <= MAX_EXPIRY_S:
        raise MalformedToken(
            f"the IAM token is valid for {expires_s} s; at most {MAX_EXPIRY_S} s is accepted; {_HINT}"
        )
    if signed_s > now_s + CLOCK_SKEW_S:
        raise TokenExpired(
            f"the IAM token was signed at {utc_text(signed_s)}, ahead of this service's clock; "
            "check the caller's clock"
        )
    if now_s >= signed_s + expires_s:
        raise TokenExpired(f"the IAM token expired at {utc_text(signed_s + expires_s)}; {_HINT}")
