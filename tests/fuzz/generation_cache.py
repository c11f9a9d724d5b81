"""Caches over schemathesis' generation (the pinned 4.32.5) for the fuzz lanes: the same values
drawn, built once instead of once per draw or once per operation.

py-spy over the memory lane (155 operations; CPU with the GIL held): a tenth of it was
Hypothesis validating a ``st.fixed_dictionaries`` strategy schemathesis builds anew for every
object it draws (the draw's own work is not counted there), and the coverage phase's whole
values drawn for a path parameter, built again for every operation that has it (``tenant``,
``namespace``, ``topic``: 27 ms a draw, a fresh Hypothesis run each).

Neither changes a value drawn: Hypothesis draws from the choices it makes, whatever the
strategy object (an equal strategy reused draws what a new one would), and the coverage phase
draws each strategy through ``generate_one``'s seeded run. ``tests/fuzz/test_fuzz_checks.py``
holds the lane to it: the requests of a run with the caches equal those of a run without.
Hooked into private names of schemathesis (pinned in pyproject.toml): ``install`` fails loudly
if a new version moved them, rather than fuzzing without the caches.
"""

from __future__ import annotations

import json
import types
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis.core.jsonschema.bundler import BUNDLE_STORAGE_KEY

if TYPE_CHECKING:
    from schemathesis.specs.openapi.coverage._schema import CoverageContext

MAX_ENTRIES = 4096
"""Entries each cache keeps (least recently used dropped): the memory lane needs about 600."""
_REFERENCE = f"#/{BUNDLE_STORAGE_KEY}/"


class _Bounded(OrderedDict):
    def remember(self, key: Any, value: Any) -> Any:
        self[key] = value
        if len(self) > MAX_ENTRIES:
            self.popitem(last=False)
        return value

    def recall(self, key: Any) -> Any:
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value


_DICTIONARIES = _Bounded()


def fixed_dictionaries(mapping: Mapping[str, Any], *, optional: Any = None) -> Any:
    """``st.fixed_dictionaries``, one strategy per mapping of the same keys to the same
    strategies (by identity; the entry holds them, so no identity is reused meanwhile)."""
    if optional is not None:
        return st.fixed_dictionaries(mapping, optional=optional)
    key = tuple((name, id(value)) for name, value in mapping.items())
    hit = _DICTIONARIES.recall(key)
    if hit is None:
        hit = _DICTIONARIES.remember(key, (st.fixed_dictionaries(mapping), dict(mapping)))
    return hit[0]


class _Strategies(types.ModuleType):
    """``hypothesis.strategies`` as schemathesis' JSON Schema generator sees it: the same, but
    ``fixed_dictionaries`` above."""

    fixed_dictionaries = staticmethod(fixed_dictionaries)

    def __getattr__(self, name: str) -> Any:
        return getattr(st, name)


class _Unkeyable(Exception):
    """A schema with a reference outside the bundle, or nested too deep: not cached."""


def schema_key(schema: Any, root: Mapping[str, Any]) -> str:
    """``schema`` as ``CoverageContext._strategy_for`` reads it, as text: without its top
    ``examples`` (dropped there), its bundle's references written out in place (the bundler
    numbers the same definition differently in each operation: ``schema000047``), with the
    bundle it gets there (the root's when the root has one)."""
    if isinstance(schema, dict):
        schema = {key: value for key, value in schema.items() if key != "examples"}
        bundle = (
            root[BUNDLE_STORAGE_KEY]
            if BUNDLE_STORAGE_KEY in root
            else schema.get(BUNDLE_STORAGE_KEY, {})
        )
    else:
        bundle = {}

    def inline(node: Any, depth: int) -> Any:
        if depth > 64:
            raise _Unkeyable
        if isinstance(node, list):
            return [inline(item, depth + 1) for item in node]
        if not isinstance(node, dict):
            return node
        out = {}
        for key, value in node.items():
            if key == BUNDLE_STORAGE_KEY:
                continue
            if key == "$ref":
                if not isinstance(value, str) or not value.startswith(_REFERENCE):
                    raise _Unkeyable
                name = value[len(_REFERENCE) :]
                if name not in bundle:
                    raise _Unkeyable
                value = bundle[name]
            out[key] = inline(value, depth + 1)
        return out

    return json.dumps(inline(schema, 0), sort_keys=True)


_STRATEGIES = _Bounded()

SHORTEST: dict[str, int] = {}
"""The length of the shortest value each custom format (``schemathesis.openapi.format``) draws,
for the formats that declare it (``shortest_value``)."""

_LENGTH_ONLY = frozenset({"type", "format", "minLength", "maxLength", "description", "title"})


def shortest_value(format_name: str, length: int) -> None:
    """Declare that the custom format ``format_name`` draws no value shorter than ``length``."""
    SHORTEST[format_name] = length


def too_short_for_its_format(schema: Any) -> bool:
    """Whether ``schema`` is a string of a declared format (``SHORTEST``), and nothing else but
    lengths, whose ``maxLength`` is below the shortest value the format draws: no value.

    The coverage phase asks for the lengths around a format's ``minLength`` (1, 2 and 3 for
    ``avro-schema``'s 2); schemathesis filters the format's values by length, so the draw
    fails only after Hypothesis has spent its whole budget (0.6 CPU-s each) to raise
    ``Unsatisfiable``, which ``_strategy_for`` raises here at once: the coverage phase skips
    the value either way (the same requests)."""
    if not isinstance(schema, dict) or not set(schema) <= _LENGTH_ONLY:
        return False
    shortest = SHORTEST.get(schema.get("format"))  # type: ignore[arg-type]
    longest = schema.get("maxLength")
    return (
        schema.get("type") == "string"
        and shortest is not None
        and isinstance(longest, int)
        and longest < shortest
    )


def _cached_strategy_for(original: Callable[[CoverageContext, Any], Any]) -> Callable[..., Any]:
    def strategy_for(self: CoverageContext, schema: Any) -> Any:
        """``_strategy_for``, one strategy per schema (``schema_key``) and the context's
        formats, pattern rewrite, draft and session: ``cached_draw`` then draws it once.
        ``Unsatisfiable`` for a schema ``too_short_for_its_format``."""
        if too_short_for_its_format(schema) and schema["format"] in self.custom_formats:
            raise Unsatisfiable(f"no {schema['format']} value of at most {schema['maxLength']}")
        try:
            text = schema_key(schema, self.root_schema)
        except (_Unkeyable, TypeError, ValueError):
            return original(self, schema)
        held = (self.custom_formats, self.update_pattern, self.session)
        key = (text, self.validator_cls, *map(id, held))
        hit = _STRATEGIES.recall(key)
        if hit is None:
            hit = _STRATEGIES.remember(key, (original(self, schema), held))
        return hit[0]

    return strategy_for


_REGEXES = _Bounded()
_regex_strategy: Callable[..., Any] | None = None
"""Hypothesis' own ``regex_strategy`` while ``_cached_regex_strategy`` stands in for it."""


def _alphabet_key(alphabet: Any) -> Any:
    """An alphabet by its characters (``from_regex`` makes a new one per call), else itself."""
    from hypothesis.strategies._internal.strings import OneCharStringStrategy

    if type(alphabet) is OneCharStringStrategy:
        return ("characters", tuple(alphabet.intervals.intervals), alphabet._force_repr)
    return ("object", id(alphabet))


def _cached_regex_strategy(
    regex: Any,
    fullmatch: bool,
    *,
    alphabet: Any,
    _temp_jsonschema_hack_no_end_newline: bool = False,
) -> Any:
    """Hypothesis' ``regex_strategy``, one strategy per pattern (its text and flags), kind of
    match and alphabet (its characters): ``st.from_regex`` builds it again for every strategy
    schemathesis builds, and it builds one per mutated schema (negative mode) and per
    operation, so the memory lane parsed 31 patterns 1,259 times (2.6 CPU-s), and validated
    each new strategy's graph again when first drawn."""
    assert _regex_strategy is not None
    pattern = (type(regex), regex.pattern, regex.flags) if hasattr(regex, "pattern") else regex
    key = (pattern, fullmatch, _alphabet_key(alphabet), _temp_jsonschema_hack_no_end_newline)
    hit = _REGEXES.recall(key)
    if hit is None:
        built = _regex_strategy(
            regex,
            fullmatch,
            alphabet=alphabet,
            _temp_jsonschema_hack_no_end_newline=_temp_jsonschema_hack_no_end_newline,
        )
        hit = _REGEXES.remember(key, (built, alphabet))  # the alphabet held: its id stays its own
    return hit[0]


_installed = False


def install() -> None:
    """Both caches, once per process; and room in the coverage phase's cache of values drawn
    (keyed by strategy: 128 entries, fewer than the strategies above)."""
    global _installed, _regex_strategy
    from hypothesis.strategies._internal import regex

    if not callable(getattr(regex, "regex_strategy", None)):
        raise RuntimeError("hypothesis moved what tests/fuzz/generation_cache.py caches")
    if _regex_strategy is None:
        _regex_strategy, regex.regex_strategy = regex.regex_strategy, _cached_regex_strategy
    if _installed:
        return
    # imported here: collection (every xdist worker) does not need them
    from schemathesis.core.cache.bounded import BoundedCache
    from schemathesis.generation.coverage import DEFAULT_GENERATION_SESSION
    from schemathesis.generation.jsonschema import strategy as jsonschema_strategy
    from schemathesis.specs.openapi.coverage._schema import CoverageContext

    if jsonschema_strategy.st is not st or not hasattr(CoverageContext, "_strategy_for"):
        raise RuntimeError("schemathesis moved what tests/fuzz/generation_cache.py caches")
    jsonschema_strategy.st = _Strategies("hypothesis.strategies")
    CoverageContext._strategy_for = _cached_strategy_for(CoverageContext._strategy_for)  # type: ignore[method-assign]
    DEFAULT_GENERATION_SESSION.draw_outcomes = BoundedCache(maxsize=MAX_ENTRIES)
    _installed = True


def release() -> None:
    """Empty the caches (the schemathesis patches stay; Hypothesis' ``regex_strategy`` is its
    own again, for the tests the process runs next): after the memory lane they hold about
    110,000 objects, which every later full garbage collection of the process would go
    through."""
    global _regex_strategy
    if _regex_strategy is not None:
        from hypothesis.strategies._internal import regex

        regex.regex_strategy, _regex_strategy = _regex_strategy, None
    _DICTIONARIES.clear()
    _STRATEGIES.clear()
    _REGEXES.clear()
    if _installed:
        from schemathesis.generation.coverage import DEFAULT_GENERATION_SESSION

        DEFAULT_GENERATION_SESSION.draw_outcomes.clear()
