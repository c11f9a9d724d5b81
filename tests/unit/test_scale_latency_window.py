"""The scale model's publish -> receive latency counts the messages published in the
measured window: not a preloaded backlog, and not what was sent in the warm-up (it waited
behind the warm-up's cold starts)."""

from __future__ import annotations

from magnetar_bench.scale import scenarios
from magnetar_bench.scale.clients import ProducerSpec
from magnetar_bench.scale.profile import Profile
from magnetar_bench.scale.scenarios import Scenario
from magnetar_bench.scale.world import World


def test_a_message_counts_when_it_was_published_inside_the_window():
    world = World(1, Profile())
    world.sim.sleep(1000)
    world.open_window(5000)
    epoch = int(world.runtime.now_ms()) - 1000  # the runtime's epoch ms at virtual 0

    assert not world.published_in_window(epoch + 999)
    assert world.published_in_window(epoch + 1000)
    assert world.published_in_window(epoch + 5999)
    assert not world.published_in_window(epoch + 6000)


def test_messages_sent_in_the_warm_up_are_received_in_the_window_but_not_counted(monkeypatch):
    """One producer sending 10 a second and a short warm-up: the first messages wait behind
    the cold starts and are received in the window, without counting in its latency."""
    worlds: list[World] = []

    class Recorded(World):
        def __post_init__(self) -> None:
            super().__post_init__()
            worlds.append(self)

    monkeypatch.setattr(scenarios, "World", Recorded)
    light = Scenario("light", producers=1, consumers=1, prefetch=True,
                     producer=ProducerSpec(interval_ms=100.0))  # fmt: skip

    result = scenarios.run(light, seed=1, duration_s=3.0, warmup_s=0.2)

    tally = worlds[0].tally
    received_in_window = sum(tally.shares.values())
    assert 0 < len(tally.publish_to_receive_ms) < received_in_window
    assert len(tally.publish_to_receive_ms) <= 3.0 * 10 + 1
    assert result["publish_to_receive_ms"]["p99"] < 1000
