"""The IAM token's wire format, shared by the SDK (``magnetar.AuthenticationAws`` makes it) and
the service (``magnetar_core.domain.security.iam`` checks it).

An IAM token is ``magnetar-aws-v1.`` + base64url (unpadded) of a presigned
``sts:GetCallerIdentity`` URL whose SigV4 signature covers the header ``x-magnetar-cluster``
set to the cluster the token is for. It travels as ``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import base64

IAM_TOKEN_PREFIX = "magnetar-aws-v1."
"""What an IAM token starts with (a JWT never does: it starts with ``eyJ``)."""
AUDIENCE_HEADER = "x-magnetar-cluster"
"""The signed header naming the cluster a token is for: a token made for another service or
cluster does not verify here, as STS checks the header against the signature."""
MAX_EXPIRY_S = 900
"""The longest validity (seconds) a presigned call may ask for and the service accepts."""


def encode_iam_token(presigned_url: str) -> str:
    """The token text of a presigned GetCallerIdentity URL."""
    return IAM_TOKEN_PREFIX + base64.urlsafe_b64encode(presigned_url.encode()).decode().rstrip("=")
