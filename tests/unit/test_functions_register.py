"""Pulsar's verb split for functions: ``POST /admin/v3/functions/{t}/{ns}/{name}``
registers (409 Conflict "Function ... already exists" when the name holds another
definition; the very same definition again is answered as it is, so a retried or rerun
register succeeds), ``PUT`` creates or replaces (as before); ``magnetar functions create``
POSTs and ``update`` PUTs."""

from __future__ import annotations

import textwrap

import requests

from magnetar.cli.main import main

PATH = "/admin/v3/functions/public/default/exclaim"
CODE = textwrap.dedent("""
    import magnetar as pulsar

    class Exclaim(pulsar.Function):
        def process(self, input, context):
            return input + "!"
""")


def definition(output: str = "loud") -> dict:
    return {"className": "exclaim.Exclaim", "code": CODE, "inputs": ["words"], "output": output}


def test_registering_a_taken_name_with_another_definition_is_409_and_keeps_the_first(svc):
    assert requests.post(svc.url + PATH, json=definition(), timeout=10).status_code == 200
    again = requests.post(svc.url + PATH, json=definition("other"), timeout=10)
    assert again.status_code == 409
    assert again.json()["error"] == "Conflict"
    assert again.json()["message"] == "Function public/default/exclaim already exists"
    stored = requests.get(svc.url + PATH, timeout=10).json()
    assert stored["output"] == "persistent://public/default/loud"


def test_registering_the_same_definition_again_succeeds_and_changes_nothing(svc):
    first = requests.post(svc.url + PATH, json=definition(), timeout=10)
    again = requests.post(svc.url + PATH, json=definition(), timeout=10)
    assert (first.status_code, again.status_code) == (200, 200)
    assert again.json() == first.json()


def test_put_still_creates_and_replaces_a_function(svc):
    assert requests.put(svc.url + PATH, json=definition(), timeout=10).status_code == 200
    assert requests.put(svc.url + PATH, json=definition("other"), timeout=10).status_code == 200
    stored = requests.get(svc.url + PATH, timeout=10).json()
    assert stored["output"] == "persistent://public/default/other"


def test_the_cli_create_refuses_a_taken_name_and_update_replaces_it(svc, tmp_path, capsys):
    source = tmp_path / "exclaim.py"
    source.write_text(CODE)
    flags = [
        "--py",
        str(source),
        "--classname",
        "exclaim.Exclaim",
        "--inputs",
        "words",
        "--name",
        "exclaim",
    ]
    cli = ["functions", "--service-url", svc.url]
    assert main([*cli, "create", *flags, "--output", "loud"]) == 0
    assert main([*cli, "create", *flags, "--output", "loud"]) == 0  # a rerun: the same
    capsys.readouterr()
    assert main([*cli, "create", *flags, "--output", "other"]) == 1
    assert "Conflict: Function public/default/exclaim already exists" in capsys.readouterr().err
    assert main([*cli, "update", *flags, "--output", "other"]) == 0
    stored = requests.get(svc.url + PATH, timeout=10).json()
    assert stored["output"] == "persistent://public/default/other"
