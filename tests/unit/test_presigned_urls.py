"""Presigned entry URLs as AWS gets them (signed locally, no request): SigV4 on the bucket's
regional endpoint, and a GET valid only as long as configured."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from magnetar_core.adapters.aws.clients import make_clients
from magnetar_core.adapters.aws.entries import EntryStore
from magnetar_core.settings import Settings


@pytest.fixture
def store(monkeypatch, tmp_path) -> EntryStore:
    for name, value in {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret",
                        "AWS_CONFIG_FILE": str(tmp_path / "none")}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):  # a local stack's, if one runs
        monkeypatch.delenv(name, raising=False)
    settings = Settings.from_env({"TOPICS_TABLE": "t", "LOG_TABLE": "l", "CURSORS_TABLE": "c",
                                  "ENTRIES_BUCKET": "magnetar-entries", "AWS_REGION": "eu-west-1"})  # fmt: skip
    _, s3 = make_clients(settings)
    return EntryStore(s3, "magnetar-entries")


def test_a_download_url_is_sigv4_on_the_regional_endpoint_and_lives_the_seconds_asked(store):
    url = store.download_url("entries/persistent/public/default/t/abc", 60)
    parts = urlsplit(url)
    assert parts.netloc == "magnetar-entries.s3.eu-west-1.amazonaws.com"
    query = parse_qs(parts.query)
    assert query["X-Amz-Algorithm"] == ["AWS4-HMAC-SHA256"]
    assert query["X-Amz-Expires"] == ["60"]
    assert "eu-west-1/s3/aws4_request" in query["X-Amz-Credential"][0]


def test_an_upload_url_names_only_its_own_key(store):
    key = "entries/persistent/public/default/t/uploads/abc"
    url = store.upload_url(key, 900)
    assert urlsplit(url).path == "/" + key
    assert parse_qs(urlsplit(url).query)["X-Amz-Expires"] == ["900"]


def test_the_service_default_for_download_urls_is_a_minute():
    assert Settings.from_env({"TOPICS_TABLE": "t", "LOG_TABLE": "l", "CURSORS_TABLE": "c",
                              "ENTRIES_BUCKET": "b"}).download_url_expiry_s == 60  # fmt: skip
