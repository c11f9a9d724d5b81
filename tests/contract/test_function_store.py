"""Contract of the function stores: functions versioned and listed by namespace (code and
the role they run as kept, never listed as topics); counters added atomically, state bytes kept, both per
function and forgotten together."""

from __future__ import annotations

import pytest

from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.functions.config import FunctionConfig

CODE = "import magnetar as pulsar\nclass Ex(pulsar.Function):\n    def process(self, i, c):\n        return i\n"  # fmt: skip


def _config(namespace: str, name: str, **extra: object) -> FunctionConfig:
    body = {"className": "ex.Ex", "code": CODE, "inputs": ["in"], **extra}
    return FunctionConfig.parse("c", namespace, name, body)


def test_functions_are_versioned_listed_by_namespace_and_never_listed_as_topics(stores, uid):
    functions, ns = stores.functions, f"ns-{uid}"
    assert functions.get("c", ns, "b") is None and functions.list("c", ns) == []

    b = functions.put(_config(ns, "b", output="out", userConfig={"k": [1]}))
    a = functions.put(_config(ns, "a"))
    functions.put(_config(f"{ns}-2", "a"))
    assert b.version == 1 and functions.get("c", ns, "b") == b
    assert functions.get("c", ns, "b").code == CODE
    assert functions.list("c", ns) == [a, b]
    assert stores.topics.list(f"persistent://c/{ns}") == []

    with pytest.raises(ConditionFailed):
        functions.put(_config(ns, "b"))  # version 0: it exists
    replaced = functions.put(_config(ns, "b", output="out-2").with_version(1))
    assert replaced.version == 2 and functions.get("c", ns, "b").output.endswith("/out-2")
    with pytest.raises(ConditionFailed):
        functions.delete(b)  # stale version
    functions.delete(replaced)
    assert functions.get("c", ns, "b") is None and functions.list("c", ns) == [a]


def test_a_function_keeps_the_role_it_runs_as_and_none_is_kept_as_none(stores, uid):
    functions, ns = stores.functions, f"ns-{uid}"
    owned = functions.put(_config(ns, "owned").with_role("app-owner"))
    functions.put(_config(ns, "open"))
    assert functions.get("c", ns, "owned") == owned and owned.role == "app-owner"
    assert functions.get("c", ns, "open").role is None
    assert [c.role for c in functions.list("c", ns)] == [None, "app-owner"]
    replaced = functions.put(_config(ns, "owned").with_role("other").with_version(1))
    assert functions.get("c", ns, "owned").role == "other" == replaced.role


def test_counters_add_up_and_state_keeps_bytes_per_function(stores, uid):
    state, f, g = stores.function_state, f"c/ns-{uid}/f", f"c/ns-{uid}/g"
    assert state.get_counter(f, "n") == 0 and state.get_state(f, "s") is None
    assert state.incr_counter(f"c/ns-{uid}/h", "zero", 0) == 0  # adding 0 to a new counter
    assert state.incr_counter(f, "n", 2) == 2
    assert state.incr_counter(f, "n", -5) == -3
    state.incr_counter(g, "n", 7)
    state.put_state(f, "s", b"\x00v1")
    state.put_state(f, "s", b"\x00v2")
    assert state.get_counter(f, "n") == -3 and state.get_counter(g, "n") == 7
    assert state.get_state(f, "s") == b"\x00v2" and state.get_state(g, "s") is None

    state.del_counter(f, "n")
    state.del_counter(f, "never")
    assert state.get_counter(f, "n") == 0
    state.incr_counter(f, "m", 1)
    assert state.delete_all(f) == 2
    assert state.get_counter(f, "m") == 0 and state.get_state(f, "s") is None
    assert state.get_counter(g, "n") == 7
    assert stores.topics.list(f"persistent://c/ns-{uid}") == []


def test_named_counts_add_up_in_one_item_keep_the_latest_values_and_go_with_delete_all(stores, uid):  # fmt: skip
    state, f = stores.function_state, f"c/ns-{uid}/f~stats"
    assert state.get_counts(f, "totals") == {}

    state.add_counts(f, "totals", {"received": 2, "processed": 1}, {"lastInvocation": 5})
    state.add_counts(f, "totals", {"received": 3, "failed": 1}, {"lastInvocation": 4})
    state.add_counts(f, "totals", {}, {})

    assert state.get_counts(f, "totals") == {"received": 5, "processed": 1, "failed": 1, "lastInvocation": 4}  # fmt: skip
    assert state.get_counts(f"c/ns-{uid}/f", "totals") == {}  # the function's own are apart
    assert state.delete_all(f) == 1 and state.get_counts(f, "totals") == {}
