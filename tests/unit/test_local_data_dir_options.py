"""``magnetar local``'s data directory options: kept by default, ``--data-dir``, ``--ephemeral``."""

from __future__ import annotations

import pytest

from magnetar_local.main import build_parser, data_dir_of


def test_the_state_is_kept_in_the_state_folders_data_directory_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("MAGNETAR_HOME", str(tmp_path / "home"))
    assert data_dir_of(build_parser().parse_args([])) == tmp_path / "home" / "data"


def test_data_dir_names_the_directory_and_ephemeral_keeps_nothing(tmp_path):
    parser = build_parser()
    assert data_dir_of(parser.parse_args(["--data-dir", str(tmp_path / "d")])) == tmp_path / "d"
    assert data_dir_of(parser.parse_args(["--ephemeral"])) is None


def test_data_dir_and_ephemeral_together_are_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["--ephemeral", "--data-dir", str(tmp_path)])
    assert exit_info.value.code == 2 and "not allowed with" in capsys.readouterr().err
