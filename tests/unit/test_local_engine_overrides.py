"""``magnetar local``'s engine settings over the template's: ``--delayed-delivery-release-
grace-ms`` and ``--consumer-lease-ms`` reach the handlers' settings, read once from their
environment."""

from __future__ import annotations

from magnetar_core.settings import Settings
from magnetar_local.handler_process import EngineOverrides, local_environment
from magnetar_local.main import build_parser, run
from magnetar_local.template import DEFAULT_TEMPLATE, LocalTemplate


def _handler_settings(overrides: EngineOverrides) -> Settings:
    """The settings a handler reads: the template's environment, then the stack's."""
    merged = {
        name: value
        for spec in LocalTemplate(DEFAULT_TEMPLATE).functions.values()
        for name, value in spec.environment.items()
    }
    merged.update(local_environment("http://127.0.0.1:1", "us-east-1", "ws://n", "local", None, overrides))  # fmt: skip
    return Settings.from_env(merged)


def _overrides(*argv: str) -> EngineOverrides:
    args = build_parser().parse_args(argv)
    return EngineOverrides(args.delayed_delivery_release_grace_ms, args.consumer_lease_ms)


def test_the_options_set_the_handlers_grace_and_lease_and_without_them_the_templates_stay():
    chosen = _handler_settings(
        _overrides("--delayed-delivery-release-grace-ms", "5000", "--consumer-lease-ms", "30000")
    )
    assert (chosen.delayed_delivery_release_grace_ms, chosen.consumer_lease_ms) == (5000, 30_000)
    default = _handler_settings(_overrides())
    assert (default.delayed_delivery_release_grace_ms, default.consumer_lease_ms) == (
        30_000,
        60_000,
    )


def test_a_negative_grace_or_a_lease_under_a_millisecond_is_a_usage_error_before_anything_starts(
    capsys,
):
    assert run(["--ephemeral", "--delayed-delivery-release-grace-ms", "-1"]) == 2
    assert "grace must be >= 0 ms, not -1" in capsys.readouterr().err
    assert run(["--ephemeral", "--consumer-lease-ms", "0"]) == 2
    assert "consumer lease must be >= 1 ms, not 0" in capsys.readouterr().err
