"""One scale run's world: the clock, the modelled AWS over fresh memory stores, the Lambda
account, the topic, the chaos model's record of what clients were told, and the tallies
the report is made of."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from magnetar_bench.scale.lambdas import Lambdas
from magnetar_bench.scale.profile import Profile
from magnetar_bench.scale.sim import Simulation
from magnetar_bench.scale.stores import AwsModel
from magnetar_bench.scale.traces import Traces
from magnetar_chaos.model import Model
from magnetar_core.adapters.memory import memory_stores
from magnetar_core.engine import Engine
from magnetar_core.settings import Settings
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/scale")
SETTINGS = Settings(
    topics_table="topics", log_table="log", cursors_table="cursors", entries_bucket="entries"
)
"""The service's defaults as deployed (template.yaml's values are Settings' defaults)."""


@dataclass
class Tally:
    """What clients saw in the measured window."""

    done: int = 0
    """Messages sent and confirmed (producers) or received and acked (consumers)."""
    errors: Counter[str] = field(default_factory=Counter)
    """Failed requests by ``<status> <Pulsar error>``."""
    send_ms: list[float] = field(default_factory=list)
    """Send to confirmation, per request (producers)."""
    publish_to_receive_ms: list[float] = field(default_factory=list)
    """A message's publish time to its receipt by a consumer, for messages published and
    received in the window (a preloaded backlog's wait is no latency, and messages sent in
    the warm-up waited behind its containers' cold starts)."""
    shares: Counter[str] = field(default_factory=Counter)
    """Messages received per consumer."""
    last_ms: float = 0.0
    """When the last message counted in ``done`` was done (virtual ms)."""


@dataclass
class World:
    """Everything one scenario runs on."""

    seed: int
    profile: Profile
    settings: Settings = SETTINGS
    topic: TopicName = TOPIC
    sub_type: str = "Shared"
    tally: Tally = field(default_factory=Tally)
    record: Model = field(default_factory=Model)
    window: tuple[float, float] = (0.0, 0.0)
    drain_window_ms: float | None = None
    """Set for a backlog's drain: the window opens at the first delivery, for this long."""
    first_delivery_ms: float | None = None
    """When a consumer first got messages (virtual ms)."""
    acked_at: dict[str, dict[str, float]] = field(default_factory=lambda: defaultdict(dict))
    """subscription -> payload -> when its ack was confirmed (virtual ms)."""
    after_ack: list[str] = field(default_factory=list)
    """Deliveries that came after the message's ack was confirmed."""

    def __post_init__(self) -> None:
        self.sim = Simulation(self.seed)
        self.aws = AwsModel(self.sim, self.profile)
        self.runtime = self.sim.runtime()
        self.memory = memory_stores(now_ms=self.runtime.now_ms)  # holes judged in virtual time
        self.lambdas = Lambdas(self.sim, self.profile, self.new_engine)
        self.traces = Traces()
        self.aws.on_call = self.traces.store_call
        self.lambdas.on_cold_start = self.traces.cold_start
        self.aws.free = True
        self.admin = self.new_engine()  # set-up and checks: no time, no capacity, no count
        self.admin.tenants.initialize_cluster()
        self.aws.free = False

    def new_engine(self) -> Engine:
        """One Lambda container's engine (the AWS front door: long-polls poll the log)."""
        return Engine.assemble(self.settings, self.aws.stores(self.memory), self.runtime)

    def open_window(self, duration_ms: float) -> None:
        """Start the measured window now and count from now on."""
        self.window = (self.sim.now_ms, self.sim.now_ms + duration_ms)
        self.counting(True)

    def delivering(self) -> None:
        """A consumer got messages: the first delivery opens a drain's window."""
        if self.first_delivery_ms is None:
            self.first_delivery_ms = self.sim.now_ms
        if self.drain_window_ms is not None and self.window[0] == float("inf"):
            self.open_window(self.drain_window_ms)

    def in_window(self) -> bool:
        start, end = self.window
        return start <= self.sim.now_ms < end

    def published_in_window(self, publish_time_ms: int) -> bool:
        """Whether a message stamped ``publish_time_ms`` (epoch ms, as the runtime's clock
        gives it) was published in the measured window."""
        at = publish_time_ms - (self.runtime.now_ms() - self.sim.now_ms)
        start, end = self.window
        return start - 1 < at < end

    def counting(self, on: bool) -> None:
        self.aws.meter.counting = on
        self.lambdas.counting = on
