"""Schemathesis over openapi.yaml, shared by the fuzz tests: the schema with the lane's fixed
seed and bounds, the entry body strategy, the checks, and state read back from the stores.

Every fuzzed request is checked for:
  * ``not_a_server_error``: no 5xx;
  * ``status_code_conformance``, ``content_type_conformance``, ``response_schema_conformance``:
    the status is documented for the operation, the content type and body match its schema;
  * ``rejected_requests_change_nothing``: a request answered 4xx leaves the stored state as it
    was (a snapshot read back before and after the request, compared).

Auth: openapi.yaml declares a bearer scheme, optional (authentication is a deployment
setting). The memory and emulator lanes run with it off; ``test_fuzz_auth`` runs the handlers
with it on, sends a superuser's token (``run_case(..., headers=...)``) and adds
``ignored_auth`` (``AUTH_CHECKS``) on a copy of the schema where the scheme is required: the
same request without the token, or with a wrong one, must be refused.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import json
import pickle
import string
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import generation_cache
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.generation.feedback import FeedbackSources
from schemathesis.pytest._test_builder import build_operation_test
from schemathesis.python._constants.orchestrator import make_constants_value_source
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.transport.requests import ManagedCookiesSession

from magnetar_core.api.http import ENTRY_CONTENT_TYPE
from magnetar_wire import EntryMessage, encode_entry

OPENAPI = Path(__file__).resolve().parents[2] / "openapi.yaml"
SEED = 20261124
"""The lane's fixed seed: every run sends the same requests (``derandomize``, no database)."""
MAX_EXAMPLES = 4
"""Examples per operation and generation mode (positive, negative) of the fuzzing phase; the
examples and coverage phases add their own (about 25 per operation)."""
MAX_WAIT_MS = 50
"""Generated ``waitMs`` values are capped to this: a long poll up to 20 s is valid input, but
waiting it out tells the fuzzer nothing."""
AUTH_HEADERS: dict[str, str] = {}
"""Credentials sent with every fuzzed request of the lanes with authentication off: none."""

ACCEPTED_STATUSES = ["2xx", "401", "403", "404", "405", "406", "409", "412", "413", "429", "5xx"]
"""What ``positive_data_acceptance`` lets a request built from the document be answered."""

CONFIG = schemathesis.Config.from_dict(
    {
        "seed": SEED,
        "generation": {"mode": "all", "database": "none", "max-examples": MAX_EXAMPLES},
        # One unexpected method per path (the local gateway once answered TRACE with 501).
        "phases": {"coverage": {"unexpected-methods": ["trace"]}, "stateful": {"enabled": False}},
        # a conforming request may meet state (404, 409, 412, 405 on a kind of topic, 406
        # BYTES): only a refusal of its form (400, 415, 422) says the document is too loose
        "checks": {"positive_data_acceptance": {"expected-statuses": ACCEPTED_STATUSES}},
    }
)
SETTINGS = settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)


def _entry_messages() -> st.SearchStrategy[list[EntryMessage]]:
    message = st.builds(
        EntryMessage,
        payload=st.binary(max_size=64),
        sequence_id=st.integers(0, 2**63 - 1),
        key=st.none() | st.text(max_size=16),
        properties=st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3),
        deliver_at_ms=st.integers(0, 2**63 - 1),
    )
    return st.lists(message, min_size=1, max_size=4)


@st.composite
def _entry_bodies(draw: st.DrawFn) -> bytes:
    """Entries in the entry format, whole or damaged (cut, a byte flipped), or any bytes."""
    kind = draw(st.sampled_from(["valid", "cut", "flipped", "bytes"]))
    if kind == "bytes":
        return draw(st.binary(max_size=256))
    try:
        entry = encode_entry(draw(_entry_messages()), producer_name=draw(st.text(max_size=12)))
    except Exception:  # the codec refuses some drawn fields (e.g. surrogates): send bytes
        return draw(st.binary(max_size=64))
    if kind == "cut":
        return entry[: draw(st.integers(0, len(entry) - 1))]
    if kind == "flipped":
        at = draw(st.integers(0, len(entry) - 1))
        return entry[:at] + bytes([entry[at] ^ draw(st.integers(1, 255))]) + entry[at + 1 :]
    return entry


AVRO_PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
_AVRO_PRIMITIVE = st.sampled_from(AVRO_PRIMITIVES)
_NAME_START = string.ascii_letters + "_"
_AVRO_NAME = st.builds(
    str.__add__, st.sampled_from(_NAME_START), st.text(_NAME_START + string.digits, max_size=7)
)
"""An Avro name, ``[A-Za-z_][A-Za-z0-9_]{0,7}``, built from characters rather than drawn by
``st.from_regex`` (which cost a third more a schema; schemathesis' coverage phase draws this
format thousands of times: 9 % of the memory lane's CPU)."""
_AVRO_KIND = st.sampled_from(["primitive", "union", "record"])


@st.composite
def _avro_definitions(draw: st.DrawFn) -> str:
    """Avro schemas in JSON (openapi.yaml's ``avro-schema`` format: an AVRO or JSON schema's
    definition): a primitive, a union of primitives, or a record of primitive fields."""
    kind = draw(_AVRO_KIND)
    if kind == "primitive":
        return json.dumps(draw(_AVRO_PRIMITIVE))
    if kind == "union":
        return json.dumps(draw(st.lists(_AVRO_PRIMITIVE, min_size=1, max_size=3, unique=True)))
    names = draw(st.lists(_AVRO_NAME, max_size=3, unique=True))
    fields = [{"name": field, "type": draw(_AVRO_PRIMITIVE)} for field in names]
    return json.dumps({"type": "record", "name": draw(_AVRO_NAME), "fields": fields})


schemathesis.openapi.media_type(ENTRY_CONTENT_TYPE, _entry_bodies())
AVRO_DEFINITIONS = _avro_definitions()
schemathesis.openapi.format("avro-schema", AVRO_DEFINITIONS)
SHORTEST_AVRO_DEFINITION = min(len(json.dumps(name)) for name in AVRO_PRIMITIVES)
"""``"int"``: a union (``["int"]``) or a record is longer."""
generation_cache.shortest_value("avro-schema", SHORTEST_AVRO_DEFINITION)
schema = schemathesis.openapi.from_path(OPENAPI, config=CONFIG)


def every_operation(api: Any) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A test of ``(case, <fixtures>)`` parametrized over ``api``'s operations (ids: the
    operation's label, ``GET /admin/v2/...``, as schemathesis' own ``parametrize`` names them),
    each operation's Hypothesis test built when it runs.

    ``api.parametrize()`` builds every operation's test, its coverage cases drawn, while
    pytest collects; every xdist worker collects the whole suite, so every worker paid for
    every lane (measured: about half of the suite's collection, 5 CPU-s a worker), and
    ``make test-fast`` paid for lanes it deselects."""

    def decorate(test: Callable[..., None]) -> Callable[..., None]:
        operations = {result.ok().label: result.ok() for result in api.get_all_operations()}
        fixtures = [p for name, p in inspect.signature(test).parameters.items() if name != "case"]

        # the name and docs only: the test's @settings attributes on ``run`` would make
        # Hypothesis' pytest plugin take it for a settings-decorated test without @given
        @functools.wraps(test, updated=())
        def run(operation: str, **kwargs: Any) -> None:
            generation_cache.install()
            feedback = FeedbackSources(constants_value_source=make_constants_value_source(api))
            built = build_operation_test(
                config=api.config,
                operation=operations[operation],
                test_func=test,
                given_kwargs={},
                feedback=feedback,
            )
            built(**kwargs)

        parameters = [inspect.Parameter("operation", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        run.__signature__ = inspect.Signature(parameters + fixtures)  # type: ignore[attr-defined]
        del run.__wrapped__  # pytest reads the signature above, not the test's
        return pytest.mark.parametrize("operation", list(operations), ids=list(operations))(run)

    return decorate


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
SENT: Counter[str] = Counter()
"""Requests sent per lane in this process, with ``<lane> 5xx`` for server errors."""
SESSION = ManagedCookiesSession()
"""The session every fuzzed request of this process goes through: schemathesis' own kind
(redirects followed within the host only, cookies dropped after each request), kept, so its
connections are kept alive. ``case.call`` without one opened a session, a TCP connection and
(on the gateway) a handler thread per request: about a tenth of the memory lane's CPU.

It reads no proxy, certificate or ``~/.netrc`` settings from the environment
(``trust_env``): requests trusting it looked them up for every request (2 % of the memory
lane's CPU under py-spy), for a local gateway that no proxy stands in front of and that
must not get credentials from a file (the lanes send only the headers they name)."""
SESSION.trust_env = False


class ReadBack:
    """The stored state, read back by ``read`` only when needed: the state after a rejected
    request is the state before the next one (requests are sequential and nothing else
    writes the state read), so a run of rejections costs one read per request."""

    def __init__(self, read: Callable[[], Any]) -> None:
        self.read = read
        self._last: Any = None

    def current(self) -> Any:
        """The state now (the last read, unless a request may have changed it since)."""
        if self._last is None:
            self._last = self.read()
        return self._last

    def reread(self) -> Any:
        self._last = self.read()
        return self._last

    def forget(self) -> None:
        """An accepted request may have changed the state: read it again next time."""
        self._last = None


def rejected_requests_change_nothing(before: Any, state: ReadBack):
    """A check: when the response is 4xx, the state read back equals ``before`` (the state
    read back just before the request)."""

    def check(ctx: Any, response: Any, case: Any) -> bool | None:
        if not 400 <= response.status_code < 500:
            state.forget()
            return None
        after = state.reread()
        if after != before:
            state.forget()
            raise AssertionError(
                f"{case.operation.label} answered {response.status_code} but changed the "
                f"stored state: {_difference(before, after)}"
            )
        return None

    check.__name__ = "rejected_requests_change_nothing"
    return check


def _difference(before: Any, after: Any) -> str:
    if isinstance(before, dict) and isinstance(after, dict):
        changed = sorted(str(k) for k in set(before) | set(after) if before.get(k) != after.get(k))
        return f"changed {changed[:10]}"
    return "the state differs"


def cap_waits(case: Any) -> None:
    """Cap a generated ``waitMs`` at MAX_WAIT_MS (negative and non-integers stay as drawn)."""
    body = case.body
    if isinstance(body, dict) and isinstance(body.get("waitMs"), int) and body["waitMs"] > 0:
        body["waitMs"] = min(body["waitMs"], MAX_WAIT_MS)


def run_case(
    case: Any,
    base_url: str,
    lane: str,
    state: ReadBack,
    headers: dict[str, str] | None = None,
    checks: list[Any] | None = None,
) -> None:
    """Send ``case`` to ``base_url`` with ``headers`` (default ``AUTH_HEADERS``) and run
    every check, ``checks`` too, on the answer (raises on a failure)."""
    cap_waits(case)
    before = state.current()
    try:
        response = case.call(
            base_url=base_url, session=SESSION, headers=headers or AUTH_HEADERS or None, timeout=30
        )
    except BaseException:
        state.forget()
        raise
    SENT[lane] += 1
    if response.status_code >= 500:
        SENT[f"{lane} 5xx"] += 1
    case.validate_response(
        response,
        checks=[*CHECKS, *(checks or []), rejected_requests_change_nothing(before, state)],
    )


LOOSER_THAN_THE_SERVICE = {
    "POST /v1/{domain}/{tenant}/{namespace}/{topic}/messages":
        "the domain (non-persistent refused); an entryRef names an upload of the same topic",
    "PUT /admin/v2/{domain}/{tenant}/{namespace}/{topic}/triggers/{name}":
        "a target's fields by its type (lambda: only type and function)",
    "POST /admin/v3/functions/{tenant}/{namespace}/{name}":
        "code: Python source text that compiles, not any text",
    "PUT /admin/v3/functions/{tenant}/{namespace}/{name}": "as POST",
    "POST /v1/{domain}/{tenant}/{namespace}/{topic}/subscriptions/{subscription}/consumers":
        "deadLetterPolicy's topic and subscription names, Key_Shared options by mode",
    "POST /v1/{domain}/{tenant}/{namespace}/{topic}/subscriptions/{subscription}/consumers/"
    "{consumerId}/nack": "backoff: minDelayMs <= maxDelayMs (two fields)",
    "POST /v1/{domain}/{tenant}/{namespace}/{topic}/subscriptions/{subscription}/consumers/"
    "{consumerId}/seek": "the domain (non-persistent refused); a messageId's form",
}  # fmt: skip
"""Operations whose document still admits requests the service refuses for their form, and
what: ``positive_acceptance`` skips them (everything else must pass it)."""


def positive_acceptance(ctx: Any, response: Any, case: Any) -> bool | None:
    """``positive_data_acceptance`` (a request generated as valid is not refused for its
    form) on every operation but LOOSER_THAN_THE_SERVICE's."""
    if case.operation.label in LOOSER_THAN_THE_SERVICE:
        return None
    return positive_data_acceptance(ctx, response, case)


positive_acceptance.__name__ = "positive_data_acceptance"


def report(lane: str, started_s: float) -> str:
    """One line for the run's log: requests sent, 5xx, seconds."""
    return (
        f"fuzz {lane}: {SENT[lane]} requests, {SENT[f'{lane} 5xx']} 5xx, "
        f"{time.monotonic() - started_s:.1f} s, seed {SEED}"
    )


def _deep_copy(value: Any) -> Any:
    """A deep copy of stored items (plain data): through pickle, a third of ``copy.deepcopy``'s
    CPU (the memory lane reads its stores back after every rejected request); by
    ``copy.deepcopy`` if something in them does not pickle."""
    try:
        return pickle.loads(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
    except (pickle.PicklingError, TypeError, AttributeError):
        return copy.deepcopy(value)


def memory_state(service: Any) -> dict[str, Any]:
    """Everything a MemoryService stores: its three tables (topics, log, cursors; policies,
    producers, buffers and compaction state live in them), its entry objects and its delay
    timers, as deep copies (read under each store's lock)."""
    tables = service.tables
    with tables.lock:
        state: dict[str, Any] = {
            name: _deep_copy(getattr(tables, name)._partitions)
            for name in ("topics", "log", "cursors")
        }
    entries = service.stores.entries
    with entries._lock:
        state["entries"] = dict(entries._objects)
    timers = service.timers
    with timers._cond:
        state["timers"] = (set(timers._started), sorted(timers._pending))
    return state


class RecordedJobs:
    """A JobLauncher that records the runs it is asked for and starts none, for the auth
    lane's in-memory service. The local launcher would start ``python spark_glue/<job>.py``
    (a Python process and a Spark JVM, several CPU-s until it fails) on a fuzzed ``PUT
    .../compaction`` of a topic with entries: a job that cannot see a MemoryService's
    stores, fails on its own and is never looked at (the run's state is in the stores,
    RUNNING until the job writes it: so it stays either way)."""

    def __init__(self) -> None:
        self.started: list[tuple[str, dict[str, str]]] = []

    def start(self, job: str, args: Mapping[str, str]) -> str:
        self.started.append((job, dict(args)))
        return f"{job}-{len(self.started)}"


@contextlib.contextmanager
def jobs_recorded() -> Iterator[RecordedJobs]:
    """Engines made meanwhile launch maintenance jobs with one ``RecordedJobs``."""
    from magnetar_core.engine import aws

    launcher = RecordedJobs()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(aws, "launcher_from_settings", lambda settings, glue=None: launcher)
        yield launcher
