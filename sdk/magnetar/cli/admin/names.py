"""Namespace and topic names as ``magnetar admin`` arguments: the ``*_arg`` functions are
argparse ``type=`` converters, so a malformed name is a usage error (argparse prints it and
exits with status 2) and no request is sent."""

from __future__ import annotations

import argparse
from urllib.parse import quote

from magnetar._topics import parse_topic
from magnetar.exceptions import PulsarException


def namespace_path(text: str) -> str:
    """``tenant/namespace`` as ``/admin/v2/namespaces/<tenant>/<namespace>`` (segments
    percent-encoded); raises ValueError for another form."""
    tenant, sep, namespace = text.partition("/")
    if not sep or not tenant or not namespace or "/" in namespace:
        raise ValueError(f"a namespace is tenant/namespace, not {text!r}")
    return f"/admin/v2/namespaces/{quote(tenant, safe='')}/{quote(namespace, safe='')}"


def namespace_arg(text: str) -> str:
    """argparse type: a ``tenant/namespace``, returned as it is."""
    try:
        namespace_path(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def topic_arg(text: str) -> str:
    """argparse type: a topic name (full, ``tenant/ns/t`` or short), returned as it is."""
    try:
        parse_topic(text)
    except (ValueError, PulsarException) as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text
