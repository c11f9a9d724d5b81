"""``magnetar admin``'s arguments read as pulsar-admin reads them (times, sizes, retention
units, names, auth plugins), its tables, and usage errors: exit 2 before any request."""

from __future__ import annotations

import pytest

from magnetar.authentication import AuthenticationToken
from magnetar.cli import main as cli
from magnetar.cli.admin import output as out
from magnetar.cli.admin.auth import authentication
from magnetar.cli.admin.units import retention_mb, retention_minutes, seconds, size_bytes
from magnetar.cli.service_url import ServiceUrl

NOWHERE = "http://127.0.0.1:9"  # nothing listens: a request sent would fail with status 1


def test_times_take_pulsar_admins_units_and_no_unit_means_seconds():
    got = [seconds(t) for t in ("30", "30s", "10m", "10M", "2h", "1d", "5w", "1y", "-1", " 7s ")]
    assert got == [30, 30, 600, 600, 7_200, 86_400, 3_024_000, 31_536_000, -1, 7]


@pytest.mark.parametrize("bad", ["", "10 minutes", "1.5h", "10x", "m", "1mo", "h1"])
def test_a_time_that_is_not_a_number_and_one_unit_is_refused_naming_the_form(bad):
    with pytest.raises(ValueError, match="a time is a whole number and an optional unit"):
        seconds(bad)


def test_sizes_take_powers_of_1024_in_either_case_and_no_unit_means_bytes():
    got = [size_bytes(s) for s in ("4096", "2k", "10M", "10m", "5G", "1t", "-1")]
    assert got == [4096, 2048, 10 * 2**20, 10 * 2**20, 5 * 2**30, 2**40, -1]


@pytest.mark.parametrize("bad", ["", "5GB", "1.5G", "G", "10 M", "3p"])
def test_a_size_that_is_not_a_number_and_one_unit_is_refused_naming_the_form(bad):
    with pytest.raises(ValueError, match="a size is a whole number of bytes"):
        size_bytes(bad)


def test_set_retention_sends_whole_minutes_and_mib_rounded_down_and_keeps_minus_one():
    assert [retention_minutes(t) for t in ("3d", "90s", "59", "-1", "0")] == [4320, 1, 0, -1, 0]
    assert [retention_mb(s) for s in ("5G", "1536k", "4096", "-1", "0")] == [5120, 1, 0, -1, 0]


def test_tables_align_their_columns_and_json_is_sorted_and_indented():
    text = out.table(("NAME", "N"), [("a", 1), ("long-name", None), ("b", ["x", "y"])])
    assert text.splitlines() == ["NAME       N", "a          1", "long-name", "b          x,y"]
    assert out.render({"b": True, "a": {"k": 1}}, "table").splitlines() == [
        "KEY  VALUE", 'a    {"k":1}', "b    true",
    ]  # fmt: skip
    assert out.render(["t1", "t2"], "table") == "t1\nt2"
    assert out.render([], "table") is None and out.render([], "json") == "[]"
    assert out.render({"b": 1, "a": 2}, "json") == '{\n  "a": 2,\n  "b": 1\n}'


def test_the_token_plugin_takes_pulsar_admins_auth_params_and_an_unknown_plugin_is_refused():
    service = ServiceUrl(NOWHERE, "--service-url")
    for plugin in (None, "org.apache.pulsar.client.impl.auth.AuthenticationToken", "token"):
        auth = authentication(plugin, "token:abc", service)
        assert isinstance(auth, AuthenticationToken) and auth._headers() == {"Authorization": "Bearer abc"}  # fmt: skip
    with pytest.raises(ValueError, match="is not one of"):
        authentication("AuthenticationSasl", None, service)
    with pytest.raises(ValueError, match="JSON object of strings"):
        authentication("AuthenticationAws", '{"regoin": "eu-west-1"}', service)


@pytest.mark.parametrize(
    "words, said",
    [
        (["namespaces", "set-retention", "public/default", "-s", "5GB", "-t", "1d"], "a size is"),
        (["namespaces", "set-message-ttl", "public/default", "-ttl", "-5"], "may not be negative"),
        (["namespaces", "set-deduplication", "public/default"], "one of the arguments -e/--enable -d/--disable is required"),  # fmt: skip
        (["namespaces", "get-retention", "public"], "a namespace is tenant/namespace"),
        (["topics", "expire-messages", "t", "-s", "s", "-t", "1x"], "a time is"),
        (["topics", "stats", "persistent://a/b"], "argument topic"),
        (["topics", "create-partitioned-topic", "t"], "-p/--partitions"),
    ],
)  # fmt: skip
def test_a_malformed_argument_is_a_usage_error_exiting_2_before_any_request(words, said, capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(["admin", "--service-url", NOWHERE, *words])
    assert exited.value.code == 2 and said in capsys.readouterr().err


def test_an_unknown_auth_plugin_is_a_usage_error_exiting_2_before_any_request(capsys):
    status = cli.main(["admin", "--admin-url", NOWHERE, "--auth-plugin", "x", "clusters", "list"])
    assert (status, capsys.readouterr().err.startswith("error: --auth-plugin 'x' is not one of")) == (2, True)  # fmt: skip


ADMIN_LINES = [
    ["topics", "list", "public/default"],
    ["--service-url", NOWHERE, "topics", "stats", "persistent://public/default/t", "-o", "json"],
    ["--tls-allow-insecure", "--auth-params=token:x", "namespaces", "set-retention", "public/d",
     "--time", "10m", "--size", "1G"],
    ["tenants", "create", "acme", "-r", "admin"],
    ["clusters", "list"],
]  # fmt: skip


@pytest.mark.parametrize("line", ADMIN_LINES, ids=lambda line: " ".join(line[:4]))
def test_the_parser_of_the_lines_kind_alone_reads_a_line_as_the_whole_parser_does(line):
    from magnetar.cli.admin import command

    hoisted = command.hoist_global_options(line)
    kind = command._kind(hoisted)
    assert kind in ("topics", "namespaces", "tenants", "clusters") and kind in line
    assert command._parser(kind).parse_args(hoisted) == command._parser().parse_args(hoisted)


def test_the_admin_help_lists_every_kind_whatever_kind_the_line_names(capsys):
    from magnetar.cli.admin import command

    for kind in (None, "topics", "namespaces"):
        with pytest.raises(SystemExit):
            command._parser(kind).parse_args(["--help"])
        shown = capsys.readouterr().out
        assert all(k in shown for k in ("clusters", "tenants", "namespaces", "topics")), kind
