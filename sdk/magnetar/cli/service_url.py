"""Which Magnetar service the ``magnetar`` command talks to.

In this order, the first that is set wins:

1. ``--service-url URL`` on the command line;
2. ``$MAGNETAR_SERVICE_URL``;
3. a running ``magnetar local`` (``make run``): each one writes a record of its own (URL,
   pid, whether authentication is on) to ``services/<pid>.json`` in its state folder
   (``$MAGNETAR_HOME``, else ``.magnetar/`` in the directory it was started in) and removes
   it when it stops; a record whose pid is dead is ignored. Without ``$MAGNETAR_HOME`` the
   current directory's state folder is looked in, then each parent directory's, and the
   nearest folder with a running service wins. Several running services there: the CLI
   refuses to guess (``AmbiguousService``, listing them);
4. ``http://127.0.0.1:8080`` (``make run``'s default port), said on stderr by the CLI with
   where it looked.

The records are written by ``magnetar_local.jobs.write_state`` (the service side); this
module only reads them, so the client-only distribution finds a local service too.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

DEFAULT_SERVICE_URL = "http://127.0.0.1:8080"
ENV_VAR = "MAGNETAR_SERVICE_URL"
SERVICES_DIR = "services"
"""The folder of running services' records, in a state folder: ``<pid>.json`` each."""
TOKEN_FILE = "local.token"
TOKEN_ENV_VAR = "MAGNETAR_AUTH_TOKEN"
AUTH_PARAMS_HELP = (
    "the token to send: token:<token>, file:///path (or the file's absolute path) or the "
    "token itself (default: "
    f"${TOKEN_ENV_VAR}, else the running `magnetar local --auth`'s {TOKEN_FILE})"
)
"""The ``--auth-params`` help of every CLI verb that calls the service (``auth_token``)."""
"""``magnetar local --auth`` writes its superuser's token here, in its state folder."""


@dataclass(frozen=True)
class ServiceUrl:
    """A resolved service URL and where it came from (said in error messages)."""

    url: str
    source: str
    explicit: bool = True
    """False when the URL was found (a running local service) or defaulted: the CLI then
    says on stderr where it came from."""


@dataclass(frozen=True)
class RunningService:
    """One running ``magnetar local``'s record in a state folder."""

    url: str
    pid: int
    folder: Path
    auth: bool = False
    data_dir: str | None = None  # where it keeps its state; None: in memory (--ephemeral)

    def describe(self) -> str:
        auth = ", authentication on" if self.auth else ""
        return (
            f"{self.url} (pid {self.pid}{auth}; {self.folder / SERVICES_DIR / f'{self.pid}.json'})"
        )


class AmbiguousService(ValueError):
    """Several local services run where the CLI looked: name one with --service-url."""


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


def running_services(
    folder: Path, alive: Callable[[int], bool] = pid_alive
) -> list[RunningService]:
    """The records in ``folder/services/`` whose process still runs, by pid; unreadable,
    malformed and dead ones are left out."""
    found = []
    for path in sorted((folder / SERVICES_DIR).glob("*.json")):
        try:
            record = json.loads(path.read_text())
            url, pid = record["url"], int(record["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if isinstance(url, str) and url and alive(pid):
            data = record.get("data_dir")
            found.append(RunningService(url, pid, folder, bool(record.get("auth")),
                                        data if isinstance(data, str) else None))  # fmt: skip
    return found


def search_folders(env: Mapping[str, str], cwd: Path) -> list[Path]:
    """The state folders looked in, nearest first: ``$MAGNETAR_HOME`` alone when set, else
    ``.magnetar/`` of ``cwd`` and of each of its parents."""
    if env.get("MAGNETAR_HOME"):
        return [Path(env["MAGNETAR_HOME"])]
    return [folder / ".magnetar" for folder in (cwd, *cwd.parents)]


def discover(
    env: Mapping[str, str], cwd: Path, alive: Callable[[int], bool] = pid_alive
) -> list[RunningService]:
    """The running services of the nearest state folder that has any (see the module's
    docstring); empty when none runs."""
    for folder in search_folders(env, cwd):
        services = running_services(folder, alive)
        if services:
            return services
    return []


def resolve_service_url(
    flag: str | None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    alive: Callable[[int], bool] = pid_alive,
) -> ServiceUrl:
    """The service URL by the order of this module's docstring (``env``: the process
    environment, ``cwd``: the current directory, ``alive``: the pid check; all injectable).
    Raises AmbiguousService when several local services run in the nearest state folder."""
    env = os.environ if env is None else env
    if flag:
        return ServiceUrl(flag, "--service-url")
    if env.get(ENV_VAR):
        return ServiceUrl(env[ENV_VAR], f"${ENV_VAR}")
    cwd = Path.cwd() if cwd is None else cwd
    services = discover(env, cwd, alive)
    if len(services) > 1:
        listed = "\n  ".join(service.describe() for service in services)
        raise AmbiguousService(
            f"{len(services)} local services run here:\n  {listed}\n"
            "Name one with --service-url URL (or MAGNETAR_SERVICE_URL=URL)."
        )
    if services:
        service = services[0]
        return ServiceUrl(service.url, f"the running `magnetar local`, {service.describe()}", False)
    looked = search_folders(env, cwd)[0]
    where = str(looked) if env.get("MAGNETAR_HOME") else f"{looked} or its parent folders"
    return ServiceUrl(
        DEFAULT_SERVICE_URL, f"the default: no running `magnetar local` in {where}", False
    )


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
        if auth_params.startswith("/") and Path(auth_params).is_file():
            return Path(auth_params).resolve().as_uri()  # a token file named by its path
        return auth_params.removeprefix("token:")
    if env.get(TOKEN_ENV_VAR):
        return env[TOKEN_ENV_VAR]
    for local in discover(env, Path.cwd() if cwd is None else cwd):
        token_file = local.folder / TOKEN_FILE
        if local.url == service.url and token_file.is_file():
            return token_file.resolve().as_uri()
    return None


def announce(service: ServiceUrl, stream: TextIO | None = None) -> None:
    """Say on ``stream`` (stderr) which service a command talks to when the URL was found
    or defaulted rather than given."""
    if not service.explicit:
        print(f"magnetar: using {service.url}: {service.source}", file=stream or sys.stderr)


def service_for_command(flag: str | None, stream: TextIO | None = None) -> ServiceUrl | None:
    """The service a CLI command talks to (``resolve_service_url``), said on ``stream``
    (stderr) when it was found or defaulted (``announce``); None, with the reason on
    ``stream``, when several local services run where it looked (the command exits 2)."""
    try:
        service = resolve_service_url(flag)
    except AmbiguousService as e:
        print(f"error: {e}", file=stream or sys.stderr)
        return None
    announce(service, stream)
    return service
