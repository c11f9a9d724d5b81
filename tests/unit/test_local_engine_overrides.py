"""``magnetar local``'s engine settings over the template's: ``--delayed-delivery-release-
grace-ms`` reaches the handlers' settings, read once from their environment."""

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


def test_the_grace_option_sets_the_handlers_grace_and_without_it_the_templates_stays():
    args = build_parser().parse_args(["--delayed-delivery-release-grace-ms", "5000"])
    chosen = EngineOverrides(args.delayed_delivery_release_grace_ms)
    assert _handler_settings(chosen).delayed_delivery_release_grace_ms == 5000
    default = EngineOverrides(build_parser().parse_args([]).delayed_delivery_release_grace_ms)
    assert _handler_settings(default).delayed_delivery_release_grace_ms == 30_000


def test_a_negative_grace_is_a_usage_error_before_anything_starts(capsys):
    assert run(["--ephemeral", "--delayed-delivery-release-grace-ms", "-1"]) == 2
    assert "grace must be >= 0 ms, not -1" in capsys.readouterr().err
