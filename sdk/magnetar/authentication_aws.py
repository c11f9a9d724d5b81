"""``AuthenticationAws``: IAM authentication for AWS workloads that hold no Pulsar token.

pulsar-client has no AWS provider; this one follows its providers' shape (an
``Authentication`` passed as ``Client(..., authentication=...)``). It presigns an
``sts:GetCallerIdentity`` call with the process's AWS credentials (SigV4, botocore's
credential chain: environment, profile, container or instance role) and sends it as
``Authorization: Bearer magnetar-aws-v1.<...>`` (``magnetar_wire.iam_tokens``); the service
asks STS who signed it and takes that principal's ARN as the role (an assumed role's session
counts as its role: ``arn:aws:iam::<account>:role/<name>``). Grant that ARN like any role.

Needs botocore (``pip install botocore``), imported when the first token is made.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable
from typing import Any

from magnetar_wire.iam_tokens import AUDIENCE_HEADER, MAX_EXPIRY_S, encode_iam_token

from .authentication import Authentication
from .exceptions import ErrorGettingAuthenticationData

__all__ = ["AuthenticationAws"]

_INSTALL_HINT = "AuthenticationAws needs botocore: pip install botocore"


class AuthenticationAws(Authentication):
    """Authenticate as the caller's IAM principal.

    ``cluster``: the service's cluster name (its ``ClusterName``; ``magnetar`` by default),
    signed into every token so it is valid for that service only. ``region``: the STS region
    (default: botocore's configured region, else us-east-1). ``profile``: an AWS profile
    (default: the credential chain). ``expiry_seconds``: a token's validity (at most 900);
    one token is reused until ``refresh_seconds`` before it expires, so API Gateway's
    authorizer cache answers most requests. ``endpoint_url``: another STS endpoint (the local
    emulator). ``clock_s``: epoch seconds.
    """

    def __init__(
        self,
        cluster: str = "magnetar",
        region: str | None = None,
        profile: str | None = None,
        expiry_seconds: int = MAX_EXPIRY_S,
        refresh_seconds: int = 120,
        endpoint_url: str | None = None,
        clock_s: Callable[[], float] = time.time,
    ) -> None:
        if not cluster:
            raise ValueError("cluster may not be empty: it is the service's ClusterName")
        if not 0 < expiry_seconds <= MAX_EXPIRY_S:
            raise ValueError(f"expiry_seconds must be 1..{MAX_EXPIRY_S}, not {expiry_seconds}")
        if not 0 <= refresh_seconds < expiry_seconds:
            raise ValueError("refresh_seconds must be at least 0 and below expiry_seconds")
        self._cluster, self._region, self._profile = cluster, region, profile
        self._expiry_s, self._refresh_s = expiry_seconds, refresh_seconds
        self._endpoint_url, self._clock_s = endpoint_url, clock_s
        self._lock = threading.Lock()
        self._client: Any = None
        self._token: str | None = None
        self._renew_at_s = 0.0
        self._unsupported = None

    def token(self) -> str:
        """The current IAM token (a new one once the last is within ``refresh_seconds`` of
        expiring). Raises ErrorGettingAuthenticationData without botocore or credentials."""
        with self._lock:
            now_s = self._clock_s()
            if self._token is None or now_s >= self._renew_at_s:
                self._token = encode_iam_token(self._presign())
                self._renew_at_s = now_s + self._expiry_s - self._refresh_s
            return self._token

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token()}"}

    def _presign(self) -> str:
        client = self._sts()
        try:
            url = client.generate_presigned_url(
                "get_caller_identity", Params={}, ExpiresIn=self._expiry_s, HttpMethod="GET"
            )
        except Exception as exc:  # botocore's NoCredentialsError and kin: no shared base
            raise ErrorGettingAuthenticationData(
                f"cannot sign an IAM token: {exc} (configure AWS credentials for this process)"
            ) from None
        return str(url)

    def _sts(self) -> Any:
        if self._client is None:
            try:
                sessions = importlib.import_module("botocore.session")
            except ImportError:
                raise ErrorGettingAuthenticationData(_INSTALL_HINT) from None
            session = sessions.Session(profile=self._profile)
            region = self._region or session.get_config_variable("region") or "us-east-1"
            client = session.create_client(
                "sts", region_name=region, endpoint_url=self._endpoint_url
            )
            client.meta.events.register("before-sign.sts.GetCallerIdentity", self._add_audience)
            self._client = client
        return self._client

    def _add_audience(self, request: Any, **_kwargs: Any) -> None:
        request.headers[AUDIENCE_HEADER] = self._cluster
