"""The console's static files (``magnetar_core.api.console.page_response``)."""

from __future__ import annotations

import json

from magnetar_core.api.console import page_response


def test_the_page_and_its_script_are_served_with_their_content_types():
    page, script = page_response("/console"), page_response("/console/console.js")
    assert (page["statusCode"], page["headers"]["Content-Type"]) == (
        200,
        "text/html; charset=utf-8",
    )
    assert "console.js" in page["body"]
    assert script["headers"]["Content-Type"] == "text/javascript; charset=utf-8"


def test_an_unknown_file_is_a_404_in_the_error_shape_whatever_its_path_holds():
    answer = page_response('/console/a"b\\c.js')
    assert answer["statusCode"] == 404
    assert json.loads(answer["body"]) == {
        "error": "NotFound", "message": 'No console file at /console/a"b\\c.js',
    }  # fmt: skip
