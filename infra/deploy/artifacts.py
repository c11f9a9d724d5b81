"""The Glue jobs' artifacts in the stack's own bucket (template.yaml ``ArtifactsBucket``).

    python infra/deploy/artifacts.py --stack magnetar --region eu-west-1 upload build/glue/spark_glue
    python infra/deploy/artifacts.py --stack magnetar --region eu-west-1 empty

``upload`` puts every file of the folder (``spark_glue/package.py`` builds it: the job scripts
and ``magnetar_libs.zip``) under ``spark_glue/`` of the bucket the stack's
``ArtifactsBucketName`` output names, where the Glue jobs' ScriptLocation and
``--extra-py-files`` point; ``make deploy`` runs it after ``sam deploy``. ``empty`` deletes
every object version of that bucket, so that ``sam delete`` can delete it (``make
undeploy``); a stack that is gone or has no such output leaves nothing to empty.

Credentials and the account come from boto3's usual chain (environment, profile, role).
Exit status 1 with a message on stderr when the stack or its output is missing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import boto3
from botocore.exceptions import ClientError

OUTPUT = "ArtifactsBucketName"
PREFIX = "spark_glue/"


class StackNotReady(Exception):
    """The stack does not exist or has no artifacts bucket output."""


def artifacts_bucket(cloudformation: Any, stack: str) -> str:
    """The name of ``stack``'s artifacts bucket (its ``ArtifactsBucketName`` output).
    Raises StackNotReady."""
    try:
        [found] = cloudformation.describe_stacks(StackName=stack)["Stacks"]
    except ClientError as exc:
        raise StackNotReady(f"stack {stack!r}: {exc.response['Error']['Message']}") from None
    for output in found.get("Outputs") or []:
        if output["OutputKey"] == OUTPUT:
            return str(output["OutputValue"])
    raise StackNotReady(f"stack {stack!r} has no {OUTPUT} output: deploy this template first")


def upload(s3: Any, bucket: str, folder: Path) -> list[str]:
    """Put every file directly in ``folder`` at ``spark_glue/<name>`` of ``bucket``; the
    keys written. Raises FileNotFoundError when ``folder`` holds no file."""
    files = sorted(path for path in folder.iterdir() if path.is_file()) if folder.is_dir() else []
    if not files:
        raise FileNotFoundError(f"{folder} holds no artifacts: run `make glue-artifacts` first")
    keys = []
    for path in files:
        s3.upload_file(str(path), bucket, PREFIX + path.name)
        keys.append(PREFIX + path.name)
    return keys


def empty(s3: Any, bucket: str) -> int:
    """Delete every object version and delete marker of ``bucket``; how many."""
    deleted = 0
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket):
        versions = [*page.get("Versions", []), *page.get("DeleteMarkers", [])]
        if versions:
            targets = [{"Key": v["Key"], "VersionId": v["VersionId"]} for v in versions]
            s3.delete_objects(Bucket=bucket, Delete={"Objects": targets, "Quiet": True})
            deleted += len(targets)
    return deleted


def main(argv: list[str] | None = None, session: Any = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stack", required=True, help="the stack's name")
    parser.add_argument("--region", required=True, help="the stack's region")
    verbs = parser.add_subparsers(dest="verb", required=True)
    verbs.add_parser("upload", help="upload the artifacts").add_argument("folder", type=Path)
    verbs.add_parser("empty", help="delete every object of the artifacts bucket")
    args = parser.parse_args(argv)
    session = session or boto3.Session(region_name=args.region)
    try:
        bucket = artifacts_bucket(session.client("cloudformation"), args.stack)
    except StackNotReady as exc:
        if args.verb == "empty":
            print(f"nothing to empty: {exc}")
            return 0
        print(f"upload: {exc}", file=sys.stderr)
        return 1
    s3 = session.client("s3")
    if args.verb == "upload":
        try:
            keys = upload(s3, bucket, args.folder)
        except FileNotFoundError as exc:
            print(f"upload: {exc}", file=sys.stderr)
            return 1
        print(f"uploaded {len(keys)} artifacts to s3://{bucket}/{PREFIX}")
    else:
        print(f"deleted {empty(s3, bucket)} object versions of s3://{bucket}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
