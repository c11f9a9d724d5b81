"""Which Magnetar service the ``magnetar`` command talks to.

In this order, the first that is set wins:

1. ``--service-url URL`` on the command line;
2. ``$MAGNETAR_SERVICE_URL``;
3. the running ``magnetar local`` (``make run``): it writes its URL and pid to ``local.json``
   in its state folder (``$MAGNETAR_HOME``, else ``.magnetar/`` in the directory it was started
   in) and removes the file when it stops; a file whose pid is dead is ignored;
4. ``http://127.0.0.1:8080`` (``make run``'s default port).

The state file is written by ``magnetar_local.jobs.write_state`` (the service side); this
module only reads it, so the client-only distribution finds a local service too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

DEFAULT_SERVICE_URL = "http://127.0.0.1:8080"
ENV_VAR = "MAGNETAR_SERVICE_URL"
STATE_FILE = "local.json"
TOKEN_FILE = "local.token"
TOKEN_ENV_VAR = "MAGNETAR_AUTH_TOKEN"
AUTH_PARAMS_HELP = (
    "the token to send: token:<token>, file:///path or the token itself (default: "
    f"${TOKEN_ENV_VAR}, else the running `magnetar local --auth`'s {TOKEN_FILE})"
)
"""The ``--auth-params`` help of every CLI verb that calls the service (``auth_token``)."""
"""``magnetar local --auth`` writes its superuser's token here, beside ``STATE_FILE``."""


@dataclass(frozen=True)
class ServiceUrl:
    """A resolved service URL and where it came from (said in error messages)."""

    url: str
    source: str


def state_dir(env: Mapping[str, str], cwd: Path) -> Path:
    """The local stack's state folder: ``$MAGNETAR_HOME``, else ``<cwd>/.magnetar``."""
    home = env.get("MAGNETAR_HOME")
    return Path(home) if home else cwd / ".magnetar"


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a process of another user counts as alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def local_service_url(folder: Path, alive: Callable[[int], bool] = pid_alive) -> str | None:
    """The URL in ``folder/local.json`` when the process that wrote it still runs; None when
    there is no such file, it is unreadable or malformed, or its process is gone."""
    try:
        state = json.loads((folder / STATE_FILE).read_text())
        url, pid = state["url"], int(state["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return url if isinstance(url, str) and url and alive(pid) else None


def resolve_service_url(
    flag: str | None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    alive: Callable[[int], bool] = pid_alive,
) -> ServiceUrl:
    """The service URL by the order of this module's docstring (``env``: the process
    environment, ``cwd``: the current directory, ``alive``: the pid check; all injectable)."""
    env = os.environ if env is None else env
    if flag:
        return ServiceUrl(flag, "--service-url")
    if env.get(ENV_VAR):
        return ServiceUrl(env[ENV_VAR], f"${ENV_VAR}")
    folder = state_dir(env, Path.cwd() if cwd is None else cwd)
    found = local_service_url(folder, alive)
    if found:
        return ServiceUrl(found, f"the running `magnetar local` ({folder / STATE_FILE})")
    return ServiceUrl(DEFAULT_SERVICE_URL, "the default")


def auth_token(
    auth_params: str | None,
    service: ServiceUrl,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> str | None:
    """The token (or ``file:///`` URL) the CLI's verbs (produce, consume, admin) send:
    ``--auth-params``, else ``$MAGNETAR_AUTH_TOKEN``, else the local stack's token file when
    ``service`` is that running ``magnetar local`` (never sent to another service); None:
    send none."""
    env = os.environ if env is None else env
    if auth_params:
        return auth_params.removeprefix("token:")
    if env.get(TOKEN_ENV_VAR):
        return env[TOKEN_ENV_VAR]
    folder = state_dir(env, Path.cwd() if cwd is None else cwd)
    token_file = folder / TOKEN_FILE
    if local_service_url(folder) == service.url and token_file.is_file():
        return token_file.resolve().as_uri()
    return None
