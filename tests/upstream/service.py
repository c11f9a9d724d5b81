"""``magnetar local`` prepared as pulsar-client's test service, for its own test files.

Pulsar's client test service is a standalone broker with token, Basic and TLS
authentication, an anonymous role, tenant ``public`` and a ``private/auth`` namespace
(``tests/auth_test_service.py`` prepares the same here), the test files' key and
certificate files under ``test-conf/`` and a token in ``.test-token.txt``. ``UpstreamService``
starts ``magnetar local`` with one https listener (Magnetar serves one; the test files'
plain and TLS URLs are both rewritten to it), writes those files into a run folder and
copies the test files there with their URLs made ours.
"""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import bcrypt
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/: auth_test_service

from auth_test_service import ANONYMOUS, CLIENT_ROLES, AuthFiles, prepare, write_files  # noqa: E402

UPSTREAM_BASIC = ("admin", "123456")
"""The user and password pulsar_test.py's Basic tests present (Pulsar's test htpasswd)."""
URLS = ("pulsar+ssl://localhost:6651", "pulsar://localhost:6650", "http://localhost:8080")
"""The test files' service and admin URLs, all rewritten to the one listener."""
UNREACHABLE = ("pulsar://192.0.2.1:1234", "http://192.0.2.1:1234")
"""test_connect_timeout's address (TEST-NET-1, never answers): only the scheme is ours."""

_PRODUCE_CONSUME = ["produce", "consume"]
_PREPARED: list[tuple[str, str, object]] = [
    # the test files' second namespace (test_topics_consumer), open as public/default
    ("PUT", "/admin/v2/namespaces/public/default-2", None),
    *(("POST", f"/admin/v2/namespaces/public/{ns}/permissions/{role}", _PRODUCE_CONSUME)
      for ns in ("default", "default-2") for role in (ANONYMOUS, *CLIENT_ROLES)),
    # Magnetar's default (tick 1 s) delivers a delayed message up to one tick early, as
    # Pulsar's non-strict mode documents; the test files' 1.1 s delays need a finer tick
    ("POST", "/admin/v2/namespaces/public/default/delayedDelivery",
     {"active": True, "tickTime": 100}),
]  # fmt: skip
"""Beyond ``auth_test_service.prepare``: what pulsar-client's test service also has."""


@dataclass(frozen=True)
class RunFolder:
    """Where the rewritten test files run (their working directory)."""

    path: Path
    ca: Path


def _rsa_pair(folder: Path) -> None:
    """``test-conf/{public-key,private-key}.client-rsa.pem``: test_encryption's key pair."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)  # fmt: skip
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())  # fmt: skip
    (folder / "public-key.client-rsa.pem").write_bytes(public)
    (folder / "private-key.client-rsa.pem").write_bytes(private)


def _test_conf(run: Path, files: AuthFiles) -> None:
    conf = run / "test-conf"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "cacert.pem").write_bytes(files.ca.read_bytes())
    (conf / "client-cert.pem").write_bytes(files.client_cert.read_bytes())
    (conf / "client-key.pem").write_bytes(files.client_key.read_bytes())
    _rsa_pair(conf)


def rewrite(text: str, url: str) -> str:
    """A test file's text with Pulsar's URLs made ours (``url``, the https listener)."""
    text = text.replace(*UNREACHABLE)
    for theirs in URLS:
        text = text.replace(theirs, url)
    return text


class UpstreamService:
    """``magnetar local --auth --anonymous-role anonymous --htpasswd --tls-cert --tls-key
    --tls-trust-certs`` on a free port, MAGNETAR_HOME in ``run/.magnetar``."""

    def __init__(self, run: Path, python: str = sys.executable) -> None:
        self.run = run
        self.files = write_files(run / "certs")
        user, password = UPSTREAM_BASIC
        hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4)).decode()
        with self.files.htpasswd.open("a") as htpasswd:
            htpasswd.write(f"{user}:{hashed}\n")
        env = {**os.environ, "MAGNETAR_HOME": str(run / ".magnetar")}
        files = self.files
        command = [python, "-m", "magnetar_local", "--port", "0", "--auth",
                   "--anonymous-role", ANONYMOUS, "--htpasswd", str(files.htpasswd),
                   "--tls-cert", str(files.server_cert), "--tls-key", str(files.server_key),
                   "--tls-trust-certs", str(files.ca), "--log-level", "WARNING"]  # fmt: skip
        self.log = (run / "magnetar-local.log").open("w")
        self.process = subprocess.Popen(  # noqa: S603 - our own module
            command, cwd=run, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self.url = self._await_url()

    def _await_url(self) -> str:
        lines: queue.Queue[str] = queue.Queue()

        def read() -> None:
            assert self.process.stdout is not None
            for line in self.process.stdout:
                self.log.write(line)
                self.log.flush()
                lines.put(line)

        threading.Thread(target=read, daemon=True).start()
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            if line.startswith("Magnetar is running at "):
                return line.split()[4].replace("127.0.0.1", "localhost")
        raise RuntimeError(f"magnetar local did not start; see {self.log.name}")

    def prepare(self) -> RunFolder:
        """Tenants, namespaces, grants and files as Pulsar's test service has them."""
        from magnetar_wire import tokens

        key = tokens.SigningKey.secret((self.run / ".magnetar" / "secret.key").read_bytes())
        admin = {"Authorization": f"Bearer {tokens.create(key, 'admin')}"}
        from auth_test_service import TOKEN_ROLE

        ca = str(self.files.ca)
        prepare(self.url, admin, tokens.create(key, TOKEN_ROLE), self.run / ".test-token.txt", ca)
        for method, path, body in _PREPARED:
            answer = requests.request(method, self.url + path, json=body, headers=admin,
                                      verify=ca, timeout=30)  # fmt: skip
            if answer.status_code != 409:
                answer.raise_for_status()
        _test_conf(self.run, self.files)
        return RunFolder(self.run, self.files.ca)

    def copy_tests(self, upstream: Path, names: list[str]) -> list[Path]:
        """The test files copied into the run folder with their URLs rewritten."""
        copied = []
        for name in names:
            target = self.run / name
            text = (upstream / name).read_text(encoding="utf-8")
            target.write_text(rewrite(text, self.url), encoding="utf-8")
            copied.append(target)
        for helper in upstream.glob("*.py"):  # pulsar_test.py imports schema_test
            if not (self.run / helper.name).exists():
                (self.run / helper.name).write_text(rewrite(helper.read_text(encoding="utf-8"), self.url))  # fmt: skip
        return copied

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        finally:
            self.log.close()


def first_line(text: str) -> str:
    """A failure's one-line reason: its last exception line, trimmed."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(
            r"^(E\s+)?[\w.]+(Error|Exception|Timeout|Failed|Interrupted)\b", line
        ) or line.startswith("E "):
            return line.removeprefix("E ").strip()[:200]
    return (lines[-1] if lines else "")[:200]
