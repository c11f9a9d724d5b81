"""template.yaml deploys and runs: no function's resource-based policy near Lambda's limit,
and the Glue jobs' artifacts in a private bucket of the stack (see docs/deploying.md).
The function URL's two permissions: test_front_door_template.py; the layer's layout:
test_lambda_layout.py."""

from __future__ import annotations

import copy
import json
import re

from lambda_policies import LIMIT_BYTES, policy_sizes_bytes, resource_policies
from sam_translation import transformed  # noqa: F401 - the shared SAM translation

TARGET_BYTES = 16 * 1024  # room to grow under LIMIT_BYTES


def test_no_function_has_a_resource_based_policy_over_16_kb(transformed):  # noqa: F811
    sizes = policy_sizes_bytes(transformed)
    assert {"AdminFunction", "TenancyFunction", "DataPlaneFunction"} <= set(sizes)
    assert {lid: size for lid, size in sizes.items() if size > TARGET_BYTES} == {}
    assert sizes["AdminFunction"] < 1024  # one permission: ANY /admin/{proxy+}


def test_the_sizing_is_lambdas_and_catches_a_permission_per_admin_route(transformed):  # noqa: F811
    [admin] = [r for r in transformed["Resources"].values() if r["Type"] == "AWS::Lambda::Permission"
               and r["Properties"]["FunctionName"] == {"Ref": "AdminFunction"}]  # fmt: skip
    policy = json.loads(resource_policies(transformed)["AdminFunction"])
    [statement] = policy["Statement"]
    assert statement["Principal"] == {"Service": "apigateway.amazonaws.com"}
    assert statement["Action"] == "lambda:InvokeFunction"
    assert statement["Condition"]["ArnLike"]["AWS:SourceArn"].endswith("/*/*/admin/*")
    # the template as it was: one permission per admin route (106), 47 KB
    per_route = copy.deepcopy(transformed)
    for index in range(106):
        permission = copy.deepcopy(admin)
        source = permission["Properties"]["SourceArn"]["Fn::Sub"]
        source[0] = source[0].replace("/*/*/admin/*", f"/*/GET/admin/v2/*/*/*/*/route{index}")
        per_route["Resources"][f"AdminFunctionRoute{index}Permission"] = permission
    assert policy_sizes_bytes(per_route)["AdminFunction"] > LIMIT_BYTES


def test_the_glue_jobs_run_artifacts_of_a_private_tls_only_bucket_of_the_stack(transformed):  # noqa: F811
    resources = transformed["Resources"]
    assert "ArtifactsBucket" not in transformed["Parameters"]  # never a bucket of someone else
    jobs = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::Glue::Job"]
    assert len(jobs) == 3
    for job in jobs:
        for location in (job["Command"]["ScriptLocation"], job["DefaultArguments"]["--extra-py-files"]):  # fmt: skip
            assert re.fullmatch(r"s3://\$\{ArtifactsBucket\}/spark_glue/\w+\.(py|zip)", location["Fn::Sub"])  # fmt: skip
    bucket = resources["ArtifactsBucket"]
    assert bucket["Type"] == "AWS::S3::Bucket"
    assert set(bucket["Properties"]["PublicAccessBlockConfiguration"].values()) == {True}
    assert bucket["Properties"]["OwnershipControls"]["Rules"] == [{"ObjectOwnership": "BucketOwnerEnforced"}]  # fmt: skip
    [policy] = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::S3::BucketPolicy"
                and r["Properties"]["Bucket"] == {"Ref": "ArtifactsBucket"}]  # fmt: skip
    [deny] = policy["PolicyDocument"]["Statement"]
    assert (deny["Effect"], deny["Principal"], deny["Action"]) == ("Deny", "*", "s3:*")
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert deny["Resource"] == [{"Fn::GetAtt": ["ArtifactsBucket", "Arn"]},
                                {"Fn::Sub": "${ArtifactsBucket.Arn}/*"}]  # fmt: skip
    reads = [s for p in resources["GlueJobRole"]["Properties"]["Policies"]
             for s in p["PolicyDocument"]["Statement"] if "ArtifactsBucket" in json.dumps(s)]  # fmt: skip
    assert reads == [{"Effect": "Allow", "Action": "s3:GetObject",
                      "Resource": {"Fn::Sub": "${ArtifactsBucket.Arn}/spark_glue/*"}}]  # fmt: skip
    assert transformed["Outputs"]["ArtifactsBucketName"]["Value"] == {"Ref": "ArtifactsBucket"}
