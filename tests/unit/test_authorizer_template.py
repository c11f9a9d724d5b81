"""The HTTP API's authorizer as SAM makes it from template.yaml: cached per Authorization
header by default; with an anonymous role or client certificates (condition
OpenAuthorizer) without identity source and cache, so requests without the header reach it."""

from __future__ import annotations

import pytest
from sam_translation import language_extensions, sam_transform, yaml_parse

from magnetar_local.template import DEFAULT_TEMPLATE

MUTUAL_TLS = {
    "ClientCertificateDomainName": "mtls.example.com",
    "ClientCertificateDomainCertificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/x",
    "ClientCertificateTruststoreUri": "s3://truststore/cas.pem",
}


def _scheme(parameters: dict[str, str]) -> dict:
    """The authorizer SAM writes into the API's body for ``parameters``."""
    transformed = sam_transform(yaml_parse(DEFAULT_TEMPLATE.read_text()), parameters)
    body = transformed["Resources"]["HttpApi"]["Properties"]["Body"]
    return body["components"]["securitySchemes"]["TokenAuthorizer"]["x-amazon-apigateway-authorizer"]  # fmt: skip


@pytest.fixture(scope="module")
def document() -> dict:
    return yaml_parse(DEFAULT_TEMPLATE.read_text())


@pytest.mark.parametrize(
    "parameters",
    [{}, {"AnonymousUserRole": "anonymous", "AuthenticationEnabled": "false"}],
    ids=["defaults", "an anonymous role with authentication off"],
)
def test_by_default_the_authorizer_needs_the_authorization_header_and_caches_by_it(
    document, parameters
):
    auth = language_extensions(document, parameters)["Resources"]["HttpApi"]["Properties"]["Auth"]
    identity = auth["Authorizers"]["TokenAuthorizer"]["Identity"]
    assert identity == {"Headers": ["Authorization"], "ReauthorizeEvery": {"Ref": "AuthorizerCacheSeconds"}}  # fmt: skip


@pytest.mark.parametrize(
    "parameters",
    [{"AnonymousUserRole": "anonymous"}, MUTUAL_TLS],
    ids=["anonymous role", "mutual TLS domain"],
)
def test_with_an_anonymous_role_or_client_certificates_it_has_no_identity_source_nor_cache(
    document, parameters
):
    auth = language_extensions(document, parameters)["Resources"]["HttpApi"]["Properties"]["Auth"]
    assert auth["Authorizers"]["TokenAuthorizer"]["Identity"] == {"Headers": [], "ReauthorizeEvery": 0}  # fmt: skip
    assert auth["DefaultAuthorizer"] == "TokenAuthorizer"  # every route still runs it


def test_sam_writes_an_open_authorizer_without_identity_source_and_with_caching_off():
    scheme = _scheme({"AnonymousUserRole": "anonymous"})
    assert scheme["identitySource"] == []
    assert scheme["authorizerResultTtlInSeconds"] == 0
    assert (scheme["type"], scheme["authorizerPayloadFormatVersion"]) == ("request", "2.0")


def test_without_language_extensions_sam_refuses_the_conditional_identity_instead_of_guessing(
    document,
):
    # SAM alone would see the Fn::If maps: it must fail the deployment, never make an
    # authorizer with an empty identity and the default cache (one role for every caller)
    from samtranslator.model.exceptions import InvalidDocumentException

    raw = dict(document, Transform="AWS::Serverless-2016-10-31")
    with pytest.raises(InvalidDocumentException, match="Identity.Headers"):
        _sam_transform_without_extensions(raw)


def _sam_transform_without_extensions(document: dict) -> dict:
    import boto3
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.translator import Translator

    translator = Translator(None, Parser(), boto_session=boto3.Session(region_name="us-east-1"))
    return translator.translate(document, parameter_values={}, get_managed_policy_map=dict)
