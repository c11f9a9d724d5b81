"""The web console in a real headless browser: Debian's Chromium driven by Playwright (one
browser for the module; never ``playwright install``, which downloads browsers).

The page at ``/console`` lists a topic produced to with its subscription's backlog, draws
its charts, clears a backlog (confirmed by the admin API), and honours the caller's token
on the secured gateway. ``CONSOLE_SCREENSHOTS=1`` also saves docs/console.png and
docs/console-topic.png (``make`` never sets it: run this file with it to refresh them).
"""

from __future__ import annotations

import json
import os
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright import sync_api

CHROMIUM = "/usr/bin/chromium"
DOCS = Path(__file__).resolve().parents[2] / "docs"
WAIT_MS = 8000
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module (Playwright's ``launch`` gives it a fresh
    profile directory of its own, removed on close)."""
    if not os.access(CHROMIUM, os.X_OK):
        missing = f"{CHROMIUM} is missing: `make install` installs Debian's chromium as root"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(missing)  # CI tests the console: never a silent skip there
        pytest.skip(missing)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    yield page
    context.close()


def stats(url: str, topic: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    path = topic.replace("persistent://", "persistent/")
    request = urllib.request.Request(f"{url}/admin/v2/{path}/stats", headers=headers or {})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def canvas_points_drawn(page: Any, selector: str) -> int:
    """How many non-blank pixels the canvas has (any alpha)."""
    script = """(sel) => { const c = document.querySelector(sel);
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n; }"""
    return int(page.evaluate(script, selector))


def screenshot(page: Any, name: str) -> None:
    if os.environ.get("CONSOLE_SCREENSHOTS") == "1":
        page.screenshot(path=str(DOCS / name), full_page=True)


def test_the_console_lists_a_topic_produced_to_draws_its_charts_and_clears_its_backlog(
    local_stack, client, page
):
    namespace = f"public/console-{uuid.uuid4().hex[:8]}"  # the worker's stack has many topics
    local_stack.create_namespaces(namespace)
    topic = f"persistent://{namespace}/orders"
    client.subscribe(topic, "billing").close()
    producer = client.create_producer(topic, batching_enabled=True)
    for index in range(5):  # one batch entry: Peek must show its messages, not its bytes
        producer.send_async(f"order {index}".encode(), None)
    producer.flush()
    page.goto(f"{local_stack.url}/console#/ns/{namespace}")
    row = page.locator(f'#topics tr[data-topic="{topic}"]')
    row.locator("td.backlog", has_text="5").wait_for()  # the rows' stats fill in after the table
    assert page.locator("#tenants").inner_text().count("public") >= 1
    screenshot(page, "console.png")

    row.locator("a").click()
    sub = page.locator('#subscriptions tr[data-subscription="billing"]')
    assert sub.locator("td.backlog").inner_text() == "5"
    page.locator('#chart-rates[data-points]:not([data-points="0"])').wait_for()
    assert canvas_points_drawn(page, "#chart-rates") > 500
    assert canvas_points_drawn(page, "#chart-backlog") > 500
    sub.locator("button.peek").click()
    peeked = page.locator("#peek pre").inner_text()
    assert peeked.splitlines() == [f"[{index}] order {index}" for index in range(5)]
    screenshot(page, "console-topic.png")

    sub.locator("button.clear-backlog").click()
    page.locator("#notice", has_text="cleared the backlog of billing").wait_for()
    page.locator(
        '#subscriptions tr[data-subscription="billing"] td.backlog', has_text="0"
    ).wait_for()
    assert stats(local_stack.url, topic)["subscriptions"]["billing"]["msgBacklog"] == 0


def test_the_console_shows_pulsars_reason_for_a_refused_action(local_stack, page):
    page.goto(f"{local_stack.url}/console#/ns/public/default")
    page.locator("#new-topic").fill("bad/name")
    page.locator("button", has_text="Create topic").click()
    error = page.locator("#error", has_text="400")
    assert "InvalidTopicName" in error.inner_text()


def test_on_the_secured_gateway_the_console_shows_401_without_a_token_and_the_topic_with_one(
    local_stack, secured_gateway, page
):
    topic = f"persistent://public/default/console-auth-{uuid.uuid4().hex[:8]}"
    admin = secured_gateway.headers("admin")
    request = urllib.request.Request(
        f"{secured_gateway.url}/admin/v2/{topic.replace('://', '/')}", method="PUT", headers=admin
    )
    urllib.request.urlopen(request, timeout=30).close()
    page.goto(f"{secured_gateway.url}/console#/topic/{topic.replace('://', '/')}")
    assert "401" in page.locator("p.denied").inner_text()
    assert "401" in page.locator("#tenants").inner_text()

    page.locator("#token").fill(secured_gateway.token("admin"))
    page.locator("#token-form button[type=submit]").click()
    page.locator("h2", has_text=topic).wait_for()
    assert page.evaluate("sessionStorage.getItem('magnetar.token')")
    assert stats(secured_gateway.url, topic, admin)["subscriptions"] == {}
