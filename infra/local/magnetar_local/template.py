"""template.yaml as the local stack sees it: tables, buckets, state machines, functions, routes.

Physical names follow CloudFormation where the template names a resource (``TableName:
!Sub "${AWS::StackName}-topics"`` becomes ``magnetar-topics`` for stack ``magnetar``);
unnamed resources get ``<stack>-<kebab-case logical id>`` (``EntriesBucket`` becomes
``magnetar-entries-bucket``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from magnetar_local.cfn import Resolver, TemplateError, load_yaml

REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_TEMPLATE = REPO_ROOT / "template.yaml"
LOCAL_ACCOUNT_ID = "123456789012"
LOCAL_API_ID = "local"

_TABLE = "AWS::DynamoDB::Table"
_BUCKET = "AWS::S3::Bucket"
_STATE_MACHINES = ("AWS::Serverless::StateMachine", "AWS::StepFunctions::StateMachine")
_FUNCTIONS = ("AWS::Serverless::Function", "AWS::Lambda::Function")
_NAME_PROPERTY = {
    _TABLE: "TableName",
    _BUCKET: "BucketName",
    "AWS::Serverless::StateMachine": "Name",
    "AWS::StepFunctions::StateMachine": "StateMachineName",
    "AWS::Serverless::Function": "FunctionName",
    "AWS::Lambda::Function": "FunctionName",
}


@dataclass(frozen=True)
class TableSpec:
    """A DynamoDB table: its name, CreateTable keyword arguments and TTL attribute."""

    logical_id: str
    name: str
    create_kwargs: dict[str, Any]
    ttl_attribute: str | None = None


@dataclass(frozen=True)
class BucketSpec:
    """An S3 bucket (only its name matters locally)."""

    logical_id: str
    name: str


@dataclass(frozen=True)
class StateMachineSpec:
    """A Step Functions state machine with its definition resolved to ASL JSON text."""

    logical_id: str
    name: str
    arn: str
    definition: str
    type: str = "STANDARD"


@dataclass(frozen=True)
class FunctionSpec:
    """A Lambda function: code directory, handler ("module.function"), resolved environment."""

    logical_id: str
    name: str
    code_dir: Path
    handler: str
    environment: dict[str, str] = field(default_factory=dict)
    timeout_s: int = 3
    memory_mb: int = 128


@dataclass(frozen=True)
class RouteSpec:
    """An HTTP API route: method ("GET", ..., or "ANY"), path template, function logical id."""

    method: str
    path: str
    function: str
    authorized: bool = True
    """False for a route whose event says ``Auth: {Authorizer: NONE}``: API Gateway runs
    no authorizer before it (the console's static files)."""

    @property
    def route_key(self) -> str:
        """The API Gateway route key, e.g. ``GET /admin/v2/brokers/health``."""
        return "$default" if self.path == "$default" else f"{self.method} {self.path}"


def kebab(logical_id: str) -> str:
    """``EntriesBucket`` -> ``entries-bucket``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", logical_id).lower()


class LocalTemplate:
    """template.yaml resolved for one local stack.

    ``path`` is the template; ``stack_name``, ``region``, ``account_id`` fill the pseudo
    parameters; ``parameters`` override parameter defaults. Raises TemplateError for
    constructs the local stack cannot resolve and FileNotFoundError for a missing file.
    """

    def __init__(
        self,
        path: Path | str = DEFAULT_TEMPLATE,
        stack_name: str = "magnetar",
        region: str = "us-east-1",
        account_id: str = LOCAL_ACCOUNT_ID,
        parameters: dict[str, str] | None = None,
    ) -> None:
        self.path = Path(path).resolve()
        self.root = self.path.parent
        self.stack_name, self.region, self.account_id = stack_name, region, account_id
        self.document = load_yaml(self.path)
        self.resources: dict[str, dict[str, Any]] = self.document.get("Resources", {})
        self.resolver = Resolver(
            {}, {}, self.document.get("Conditions"), self.document.get("Mappings")
        )
        self._bind_parameters(parameters or {})
        self._bind_resources()
        self.tables = [self._table(lid, r) for lid, r in self._of_type(_TABLE)]
        self.buckets = [
            BucketSpec(lid, self.physical_name(lid)) for lid, _ in self._of_type(_BUCKET)
        ]
        self.state_machines = [
            self._state_machine(lid, r) for lid, r in self._of_type(*_STATE_MACHINES)
        ]
        self.functions = {lid: self._function(lid, r) for lid, r in self._of_type(*_FUNCTIONS)}
        self.routes = [route for lid, r in self._of_type(*_FUNCTIONS) for route in _routes(lid, r)]

    def physical_name(self, logical_id: str) -> str:
        """The local physical name of a resource (see the module docstring)."""
        return self._names[logical_id]

    def resolve(self, value: Any) -> Any:
        """Evaluate the intrinsic functions in ``value`` against this stack."""
        return self.resolver.resolve(value)

    # ------------------------------------------------------------------ binding
    def _bind_parameters(self, overrides: dict[str, str]) -> None:
        refs = self.resolver.refs
        refs.update(
            {
                "AWS::StackName": self.stack_name,
                "AWS::Region": self.region,
                "AWS::AccountId": self.account_id,
                "AWS::Partition": "aws",
                "AWS::URLSuffix": "amazonaws.com",
                "AWS::StackId": f"arn:aws:cloudformation:{self.region}:{self.account_id}:stack/{self.stack_name}/local",
                "AWS::NotificationARNs": [],
            }
        )
        for name, spec in self.document.get("Parameters", {}).items():
            if name in overrides:
                refs[name] = overrides[name]
            elif "Default" in spec:
                refs[name] = spec["Default"]
            else:
                raise TemplateError(f"parameter {name} has no default: pass it in parameters=")

    def _bind_resources(self) -> None:
        self._names: dict[str, str] = {}
        refs, attributes = self.resolver.refs, self.resolver.attributes
        arn_prefix = f"{self.region}:{self.account_id}"
        for logical_id, resource in self.resources.items():
            kind = resource.get("Type", "")
            name_property = _NAME_PROPERTY.get(kind)
            explicit = (
                (resource.get("Properties") or {}).get(name_property) if name_property else None
            )
            name = self.resolve(explicit) if explicit else f"{self.stack_name}-{kebab(logical_id)}"
            self._names[logical_id] = name
            refs[logical_id] = name
            if kind == _TABLE:
                attributes[(logical_id, "Arn")] = f"arn:aws:dynamodb:{arn_prefix}:table/{name}"
            elif kind == _BUCKET:
                attributes[(logical_id, "Arn")] = f"arn:aws:s3:::{name}"
                attributes[(logical_id, "DomainName")] = f"{name}.s3.amazonaws.com"
            elif kind in _STATE_MACHINES:
                arn = f"arn:aws:states:{arn_prefix}:stateMachine:{name}"
                refs[logical_id] = arn
                attributes[(logical_id, "Arn")] = arn
                attributes[(logical_id, "Name")] = name
            elif kind in _FUNCTIONS:
                attributes[(logical_id, "Arn")] = f"arn:aws:lambda:{arn_prefix}:function:{name}"
            elif kind == "AWS::Serverless::HttpApi":
                refs[logical_id] = LOCAL_API_ID
            elif kind == "AWS::Serverless::LayerVersion":
                refs[logical_id] = f"arn:aws:lambda:{arn_prefix}:layer:{name}:1"

    def _of_type(self, *kinds: str) -> list[tuple[str, dict[str, Any]]]:
        return [(lid, r) for lid, r in self.resources.items() if r.get("Type") in kinds]

    # ------------------------------------------------------------------ resources
    def _table(self, logical_id: str, resource: dict[str, Any]) -> TableSpec:
        props = self.resolve(resource.get("Properties") or {})
        kwargs: dict[str, Any] = {
            "TableName": self.physical_name(logical_id),
            "KeySchema": props["KeySchema"],
            "AttributeDefinitions": props["AttributeDefinitions"],
            "BillingMode": props.get("BillingMode", "PROVISIONED"),
        }
        if kwargs["BillingMode"] == "PROVISIONED":
            kwargs["ProvisionedThroughput"] = props.get(
                "ProvisionedThroughput", {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
            )
        for key in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
            if props.get(key):
                kwargs[key] = props[key]
        # No StreamSpecification: nothing reads a stream locally (the log table's feeds the
        # trigger fan-out on AWS; here TriggerDriver stands in), and moto would keep every
        # write's stream record in memory for the process's life.
        ttl = props.get("TimeToLiveSpecification") or {}
        return TableSpec(
            logical_id,
            kwargs["TableName"],
            kwargs,
            ttl.get("AttributeName") if ttl.get("Enabled") else None,
        )

    def _state_machine(self, logical_id: str, resource: dict[str, Any]) -> StateMachineSpec:
        props = resource.get("Properties") or {}
        if "DefinitionUri" in props:
            uri = self.resolve(props["DefinitionUri"])
            if not isinstance(uri, str):
                raise TemplateError(f"{logical_id}: only a local DefinitionUri path is supported")
            text = (self.root / uri).read_text()
        elif "Definition" in props:
            text = json.dumps(self.resolve(props["Definition"]), indent=2)
        elif "DefinitionString" in props:
            text = self.resolve(props["DefinitionString"])
        else:
            raise TemplateError(f"{logical_id}: no Definition, DefinitionUri or DefinitionString")
        substitutions = self.resolve(props.get("DefinitionSubstitutions") or {})
        for key, value in substitutions.items():
            text = text.replace("${" + key + "}", str(value))
        json.loads(text)  # fail early on a broken definition
        name = self.physical_name(logical_id)
        arn = self.resolver.attributes[(logical_id, "Arn")]
        return StateMachineSpec(logical_id, name, arn, text, props.get("Type", "STANDARD"))

    def _function(self, logical_id: str, resource: dict[str, Any]) -> FunctionSpec:
        defaults = (self.document.get("Globals") or {}).get("Function") or {}
        props = resource.get("Properties") or {}
        environment: dict[str, Any] = {}
        for source in (defaults, props):
            environment.update(
                self.resolve((source.get("Environment") or {}).get("Variables") or {})
            )
        code_uri = props.get("CodeUri", defaults.get("CodeUri"))
        if not isinstance(code_uri, str):
            raise TemplateError(f"{logical_id}: only a local CodeUri path is supported")
        return FunctionSpec(
            logical_id=logical_id,
            name=self.physical_name(logical_id),
            code_dir=(self.root / code_uri).resolve(),
            handler=props.get("Handler", defaults.get("Handler", "app.lambda_handler")),
            environment={key: str(value) for key, value in environment.items()},
            timeout_s=int(self.resolve(props.get("Timeout", defaults.get("Timeout", 3)))),
            memory_mb=int(self.resolve(props.get("MemorySize", defaults.get("MemorySize", 128)))),
        )


def _routes(logical_id: str, resource: dict[str, Any]) -> list[RouteSpec]:
    """The HttpApi events of one function as routes (an event without Path is $default)."""
    routes = []
    for event in ((resource.get("Properties") or {}).get("Events") or {}).values():
        if event.get("Type") != "HttpApi":
            continue
        props = event.get("Properties") or {}
        method = str(props.get("Method", "ANY")).upper()
        path = props.get("Path", "$default")
        routes.append(
            RouteSpec(
                "ANY" if method == "X-AMAZON-APIGATEWAY-ANY-METHOD" else method,
                path,
                logical_id,
                authorized=(props.get("Auth") or {}).get("Authorizer") != "NONE",
            )
        )
    return routes
