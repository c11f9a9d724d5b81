"""IAM tokens: the SDK's AuthenticationAws makes them with botocore (signed locally, no AWS
request), the domain checks them before STS is asked, and session ARNs become role ARNs."""

from __future__ import annotations

import base64
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest

import magnetar
from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.security.iam import caller_identity_request, is_iam_token, role_of_arn
from magnetar_wire.iam_tokens import AUDIENCE_HEADER, IAM_TOKEN_PREFIX, encode_iam_token
from magnetar_wire.tokens import MalformedToken, TokenExpired

NOW_S = 1_795_000_000


@pytest.fixture(scope="module", autouse=True)
def aws_credentials(tmp_path_factory):
    none = str(tmp_path_factory.mktemp("aws") / "none")
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {
            "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
            "AWS_SECRET_ACCESS_KEY": "secret",
            "AWS_SESSION_TOKEN": "session",
            "AWS_CONFIG_FILE": none,
            "AWS_SHARED_CREDENTIALS_FILE": none,
        }.items():
            patch.setenv(name, value)
        for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_STS"):  # a local stack's, if one runs
            patch.delenv(name, raising=False)
        yield


_TOKENS: dict[str, str] = {}


def _token(cluster: str = "magnetar") -> str:
    """A token of the SDK for ``cluster`` (one per cluster and test run: a botocore session
    takes ~0.3 s to make)."""
    if cluster not in _TOKENS:
        _TOKENS[cluster] = magnetar.AuthenticationAws(cluster, region="eu-west-1").token()
    return _TOKENS[cluster]


def _url(token: str) -> str:
    body = token[len(IAM_TOKEN_PREFIX) :]
    return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode()


def _with_query(token: str, **changes: str | None) -> str:
    parts = urlsplit(_url(token))
    query = dict(parse_qsl(parts.query))
    for name, value in changes.items():
        if value is None:
            query.pop(name, None)
        else:
            query[name] = value
    return encode_iam_token(urlunsplit(parts._replace(query=urlencode(query))))


def _signed_at_s(token: str) -> int:
    from datetime import UTC, datetime

    stamp = dict(parse_qsl(urlsplit(_url(token)).query))["X-Amz-Date"]
    return int(datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC).timestamp())


def test_the_sdk_token_is_an_sts_call_signed_for_the_cluster_that_the_service_accepts():
    token = _token("prod")
    assert is_iam_token(token) and not is_iam_token("eyJhbGciOiJIUzI1NiJ9.e30.x")
    url, headers = caller_identity_request(token, "prod", _signed_at_s(token) + 10)
    assert urlsplit(url).netloc == "sts.eu-west-1.amazonaws.com"
    query = dict(parse_qsl(urlsplit(url).query))
    assert query["Action"] == "GetCallerIdentity"
    assert AUDIENCE_HEADER in query["X-Amz-SignedHeaders"].split(";")
    assert query["X-Amz-Expires"] == "900"
    assert headers == {AUDIENCE_HEADER: "prod"}  # STS refuses it unless this matches the signature


def test_the_sdk_reuses_its_token_until_it_is_near_expiry_then_signs_a_new_one():
    now = [1_000.0]
    auth = magnetar.AuthenticationAws(region="us-east-1", clock_s=lambda: now[0],
                                      expiry_seconds=300, refresh_seconds=60)  # fmt: skip
    first = auth._headers()["Authorization"]
    now[0] += 239
    assert auth._headers()["Authorization"] == first
    now[0] += 1
    second = auth._headers()["Authorization"]
    assert second.startswith(f"Bearer {IAM_TOKEN_PREFIX}")
    assert auth.token() == second[len("Bearer ") :]


def test_the_sdk_refuses_validities_the_service_would_refuse():
    with pytest.raises(ValueError, match="expiry_seconds"):
        magnetar.AuthenticationAws(expiry_seconds=3600)
    with pytest.raises(ValueError, match="cluster"):
        magnetar.AuthenticationAws(cluster="")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"Action": "AssumeRole"}, "not an sts:GetCallerIdentity call"),
        ({"X-Amz-Algorithm": None}, "not signed with SigV4"),
        ({"X-Amz-Signature": None}, "not signed with SigV4"),
        ({"X-Amz-SignedHeaders": "host"}, "does not name its cluster"),
        ({"X-Amz-Expires": "3600"}, "at most 900 s"),
        ({"X-Amz-Date": "yesterday"}, "X-Amz-Date"),
    ],
    ids=["other-action", "no-algorithm", "no-signature", "no-audience", "too-long", "bad-date"],
)
def test_a_token_that_is_not_a_signed_caller_identity_call_for_the_cluster_is_malformed(
    change, message
):
    token = _with_query(_token(), **change)
    with pytest.raises(MalformedToken, match=message):
        caller_identity_request(token, "magnetar", _signed_at_s(_token()) + 1)


@pytest.mark.parametrize(
    "origin",
    ["https://evil.example.com", "http://sts.amazonaws.com", "https://sts.amazonaws.com.evil.io",
     "https://169.254.169.254", "https://sts.amazonaws.com:8443"],
)  # fmt: skip
def test_a_token_pointing_anywhere_but_sts_is_refused_before_any_request(origin):
    parts = urlsplit(_url(_token()))
    forged = encode_iam_token(origin + "/?" + parts.query)
    with pytest.raises(MalformedToken, match="not a call to AWS STS"):
        caller_identity_request(forged, "magnetar", NOW_S)


def test_the_emulator_endpoint_is_accepted_only_when_named():
    parts = urlsplit(_url(_token()))
    local = encode_iam_token("http://127.0.0.1:4566/?" + parts.query)
    with pytest.raises(MalformedToken):
        caller_identity_request(local, "magnetar", _signed_at_s(_token()) + 1)
    url, _ = caller_identity_request(
        local, "magnetar", _signed_at_s(_token()) + 1, ["http://127.0.0.1:4566"]
    )
    assert url.startswith("http://127.0.0.1:4566/?")


def test_an_expired_or_future_token_is_refused_with_the_time_it_expired():
    token = _token()
    signed_s = _signed_at_s(token)
    with pytest.raises(TokenExpired, match="expired at"):
        caller_identity_request(token, "magnetar", signed_s + 900)
    with pytest.raises(TokenExpired, match="ahead of this service's clock"):
        caller_identity_request(token, "magnetar", signed_s - 301)
    assert caller_identity_request(token, "magnetar", signed_s + 899)


def test_garbage_and_repeated_parameters_are_malformed():
    for token in (IAM_TOKEN_PREFIX + "%%%", IAM_TOKEN_PREFIX + base64.b64encode(b"a b").decode()):
        with pytest.raises(MalformedToken):
            caller_identity_request(token, "magnetar", NOW_S)
    doubled = encode_iam_token(_url(_token()) + "&Action=AssumeRole")
    with pytest.raises(MalformedToken, match="repeats"):
        caller_identity_request(doubled, "magnetar", NOW_S)


def test_an_assumed_role_session_is_its_role_and_other_principals_keep_their_arn():
    session = "arn:aws:sts::123456789012:assumed-role/orders-app/i-0abc123"
    assert role_of_arn(session).name == "arn:aws:iam::123456789012:role/orders-app"
    china = "arn:aws-cn:sts::123456789012:assumed-role/app/s"
    assert role_of_arn(china).name == "arn:aws-cn:iam::123456789012:role/app"
    user = "arn:aws:iam::123456789012:user/alice"
    assert role_of_arn(user).name == user
    with pytest.raises(InvalidMessage):
        role_of_arn("")


def test_the_emulator_sends_only_sts_scoped_presigned_calls_to_sts():
    from magnetar_local.moto_boot import sts_host_of_query

    query = urlsplit(_url(_token())).query
    assert sts_host_of_query(query) == "sts.eu-west-1.amazonaws.com"
    s3 = query.replace("%2Fsts%2F", "%2Fs3%2F")
    assert sts_host_of_query(s3) is None  # presigned S3 URLs (entries) stay S3's
    assert sts_host_of_query("Action=GetCallerIdentity") is None
