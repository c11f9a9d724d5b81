"""Create the template's tables, buckets and state machines on the emulator."""

from __future__ import annotations

from typing import Any

from magnetar_local.template import LocalTemplate

LOCAL_ROLE_ARN = "arn:aws:iam::123456789012:role/magnetar-local"


def provision(template: LocalTemplate, session: Any, endpoint_url: str) -> dict[str, list[str]]:
    """Create every table (with TTL), bucket and state machine of ``template``.

    ``session`` is a boto3 Session with the emulator's fake credentials and region. Existing
    resources are left as they are, so it can be run twice. Returns the names created per
    kind ("tables", "buckets", "state_machines"). Raises botocore errors from the emulator.
    """
    dynamodb = session.client("dynamodb", endpoint_url=endpoint_url)
    s3 = session.client("s3", endpoint_url=endpoint_url)
    sfn = session.client("stepfunctions", endpoint_url=endpoint_url)
    created: dict[str, list[str]] = {"tables": [], "buckets": [], "state_machines": []}

    existing_tables = set(dynamodb.list_tables()["TableNames"])
    for table in template.tables:
        if table.name in existing_tables:
            continue
        dynamodb.create_table(**table.create_kwargs)
        if table.ttl_attribute:
            dynamodb.update_time_to_live(
                TableName=table.name,
                TimeToLiveSpecification={"Enabled": True, "AttributeName": table.ttl_attribute},
            )
        created["tables"].append(table.name)

    existing_buckets = {bucket["Name"] for bucket in s3.list_buckets()["Buckets"]}
    for bucket in template.buckets:
        if bucket.name not in existing_buckets:
            s3.create_bucket(Bucket=bucket.name)
            created["buckets"].append(bucket.name)

    existing_machines = {m["name"] for m in sfn.list_state_machines()["stateMachines"]}
    for machine in template.state_machines:
        if machine.name not in existing_machines:
            sfn.create_state_machine(
                name=machine.name,
                definition=machine.definition,
                roleArn=LOCAL_ROLE_ARN,
                type=machine.type,
            )
            created["state_machines"].append(machine.name)
    return created
