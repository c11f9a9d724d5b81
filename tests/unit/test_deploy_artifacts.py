"""`make deploy` uploads the Glue jobs' artifacts into the stack's own bucket, where the
template's jobs look for them; `make undeploy` empties that bucket (infra/deploy/artifacts.py,
against moto's CloudFormation and S3)."""

from __future__ import annotations

import importlib.util
import json
import uuid
from pathlib import Path
from types import ModuleType

import boto3
import pytest
from moto import mock_aws

from magnetar_local.template import DEFAULT_TEMPLATE, LocalTemplate

ROOT = DEFAULT_TEMPLATE.parent
STACK_TEMPLATE = {
    "Resources": {"ArtifactsBucket": {"Type": "AWS::S3::Bucket", "Properties": {
        "VersioningConfiguration": {"Status": "Enabled"}}}},  # as template.yaml's
    "Outputs": {"ArtifactsBucketName": {"Value": {"Ref": "ArtifactsBucket"}}},
}  # fmt: skip


def _script(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"script_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


artifacts = _script(ROOT / "infra/deploy/artifacts.py")


@pytest.fixture
def session(monkeypatch):
    """A moto session with a stack of this test's own name (``session.stack``): moto's state
    can outlive one test in a worker, so no two tests share a stack name. In-process moto,
    not the session stack's emulator that AWS_ENDPOINT_URL names once that stack started."""
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        session = boto3.Session(region_name="eu-west-1", aws_access_key_id="test",
                                aws_secret_access_key="test")  # fmt: skip
        session.stack = f"shop-{uuid.uuid4().hex[:8]}"
        session.client("cloudformation").create_stack(
            StackName=session.stack, TemplateBody=json.dumps(STACK_TEMPLATE)
        )
        yield session


def _bucket(session) -> str:
    return artifacts.artifacts_bucket(session.client("cloudformation"), session.stack)


def test_upload_puts_every_artifact_where_the_templates_glue_jobs_look_for_it(
    session, tmp_path, capsys
):
    built = _script(ROOT / "spark_glue/package.py").build(tmp_path)
    assert artifacts.main(["--stack", session.stack, "--region", "eu-west-1", "upload",
                           str(tmp_path / "spark_glue")], session) == 0  # fmt: skip
    bucket = _bucket(session)
    listed = session.client("s3").list_objects_v2(Bucket=bucket)["Contents"]
    assert sorted(o["Key"] for o in listed) == sorted(f"spark_glue/{p.name}" for p in built)
    assert (
        f"uploaded {len(built)} artifacts to s3://{bucket}/spark_glue/" in capsys.readouterr().out
    )
    # every s3:// location of the template's Glue jobs, in the stack's bucket
    template = LocalTemplate(stack_name="shop")
    local_bucket = template.physical_name("ArtifactsBucket")
    wanted = set()
    for resource in template.resources.values():
        if resource["Type"] == "AWS::Glue::Job":
            properties = resource["Properties"]
            wanted.add(template.resolve(properties["Command"]["ScriptLocation"]))
            wanted.add(template.resolve(properties["DefaultArguments"]["--extra-py-files"]))
    assert len(wanted) == 4  # three scripts, one libraries zip
    assert wanted == {f"s3://{local_bucket}/{o['Key']}" for o in listed}


def test_upload_to_a_stack_that_does_not_exist_fails_and_writes_nothing(session, tmp_path, capsys):
    (tmp_path / "job.py").write_text("print()")
    answer = artifacts.main(["--stack", "nope", "--region", "eu-west-1", "upload", str(tmp_path)], session)  # fmt: skip
    assert answer == 1
    assert "stack 'nope'" in capsys.readouterr().err
    assert "Contents" not in session.client("s3").list_objects_v2(Bucket=_bucket(session))


def test_upload_of_an_empty_folder_says_to_build_the_artifacts_first(session, tmp_path, capsys):
    answer = artifacts.main(["--stack", session.stack, "--region", "eu-west-1", "upload", str(tmp_path)], session)  # fmt: skip
    assert answer == 1 and "make glue-artifacts" in capsys.readouterr().err


def test_empty_deletes_every_version_so_that_the_bucket_can_be_deleted(session, tmp_path):
    s3, bucket = session.client("s3"), _bucket(session)
    for body in (b"v1", b"v2"):
        s3.put_object(Bucket=bucket, Key="spark_glue/expire.py", Body=body)
    s3.delete_object(Bucket=bucket, Key="spark_glue/expire.py")  # a delete marker
    assert (
        artifacts.main(["--stack", session.stack, "--region", "eu-west-1", "empty"], session) == 0
    )
    assert "Versions" not in s3.list_object_versions(Bucket=bucket)
    s3.delete_bucket(Bucket=bucket)  # BucketNotEmpty before


def test_empty_of_a_stack_that_is_gone_is_nothing_to_do(session, capsys):
    assert artifacts.main(["--stack", "gone", "--region", "eu-west-1", "empty"], session) == 0
    assert "nothing to empty" in capsys.readouterr().out
