"""What one client may cost the annotation server, and the guards that hold it to that.

- :class:`Limits` is the typed config (``prmkit annotate serve --max-body-bytes ... --login-...``); this
  module imports nothing heavy, so the CLI reads its defaults and help without loading the app.
- ``prmkit.core.http_limits`` holds connections to ``keep_alive_s``, ``header_timeout_s`` and
  ``connections_per_client``, and believes forwarded headers only from ``trusted_proxies`` (``api.serve``
  builds the server with it), so the client address the throttle counts cannot be made up.
- ``app.BodyLimit`` refuses a request body over ``max_body_bytes`` with 413 before the app reads it.
- :class:`LoginThrottle` answers "wait" (429) before any password is hashed: per account, a lockout
  after ``login_failures`` wrong passwords in a row that doubles with each further one (a right password
  during it is refused too, or a guesser would learn it from the answer); per client address, at most
  ``client_logins`` attempts per ``client_window_s``. Unknown names are counted exactly like real ones,
  so the throttle tells nothing about which accounts exist. State is in memory, per server process:
  a restart forgets it, which costs an attacker a restart they cannot cause.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from prmkit.core.http_limits import parse_networks

MAX_TRACKED = 50_000
"""Accounts and clients remembered at once (oldest dropped first): bounds the throttle's memory."""
FORGET_S = 3600.0
"""Wrong passwords older than this (with no lockout running) no longer count towards a lockout."""


class Limits(BaseModel):
    """Request and login limits of the annotation server; each is a ``prmkit annotate serve`` flag."""

    model_config = ConfigDict(frozen=True, strict=True, extra="forbid")

    max_body_bytes: int = Field(
        1_048_576,
        ge=1024,
        description="Largest request body in bytes; larger ones get 413 unread "
        "(the biggest real one, a 20,000-character rewritten step, is under 250 kB).",
    )
    login_failures: int = Field(
        5, ge=1, description="Wrong passwords in a row for one account before it is locked."
    )
    lockout_s: float = Field(
        60.0,
        gt=0,
        description="First lockout in seconds; each wrong password after it doubles it, up to max_lockout_s.",
    )
    max_lockout_s: float = Field(900.0, gt=0, description="Longest lockout in seconds.")
    client_logins: int = Field(
        20, ge=1, description="Login attempts one client address may make per client_window_s, any account."
    )
    client_window_s: float = Field(60.0, gt=0, description="The window of client_logins, in seconds.")
    keep_alive_s: float = Field(
        5.0,
        gt=0,
        description="Seconds an idle connection is kept open after a response for the next request.",
    )
    header_timeout_s: float = Field(
        10.0,
        gt=0,
        description="Seconds a client has to send a whole request head (request line and headers) after "
        "connecting or after the previous response; then the connection is closed.",
    )
    body_timeout_s: float = Field(
        10.0,
        gt=0,
        description="Seconds a request body may take to start after its headers; it must then keep arriving "
        "at min_body_rate bytes per second on average, else the answer is 408 and the connection is closed.",
    )
    min_body_rate: int = Field(
        65_536,
        ge=1,
        description="Slowest average rate, in bytes per second, a request body may arrive at after "
        "body_timeout_s; a trickle slower than this is answered 408.",
    )
    connections_per_client: int = Field(
        64,
        ge=1,
        description="Open connections one client address may hold (IPv6: per /64); one more is answered 503. "
        "Clients behind one NAT share an address; a trusted proxy's connections are not counted.",
    )
    trusted_proxies: tuple[str, ...] = Field(
        (),
        strict=False,
        description="Addresses or CIDR networks of reverse proxies whose X-Forwarded-For and "
        "X-Forwarded-Proto are believed; none by default, so the connecting address is the client.",
    )

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        """Refused here, naming the entry, rather than when the server starts (or silently ignored)."""
        return tuple(str(n) for n in parse_networks(value))


@dataclass
class _Failures:
    count: int = 0
    last: float = 0.0
    locked_until: float = 0.0


class LoginThrottle:
    """Per-account lockout with exponential backoff and a per-client sliding window; thread-safe.

    The app asks :meth:`client_wait` and :meth:`account_wait` before checking a password (so a throttled
    attempt costs no scrypt) and reports the outcome with :meth:`failed` / :meth:`succeeded`.
    """

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic):
        self.limits, self.clock = limits, clock
        self._lock = threading.Lock()
        self._accounts: OrderedDict[str, _Failures] = OrderedDict()
        self._clients: OrderedDict[str, deque[float]] = OrderedDict()

    @staticmethod
    def _remember(table: OrderedDict, key: str, value: Any) -> Any:
        table[key] = value
        table.move_to_end(key)
        while len(table) > MAX_TRACKED:
            table.popitem(last=False)
        return value

    def client_wait(self, client: str) -> float:
        """Seconds this client must wait before another attempt; 0 means go (and counts this attempt)."""
        now, window = self.clock(), self.limits.client_window_s
        with self._lock:
            recent = self._clients.get(client) or deque()
            while recent and recent[0] <= now - window:
                recent.popleft()
            if len(recent) >= self.limits.client_logins:
                return recent[0] + window - now
            recent.append(now)
            self._remember(self._clients, client, recent)
            return 0.0

    def account_wait(self, account: str) -> float:
        """Seconds until this account's lockout ends (0: not locked)."""
        with self._lock:
            state = self._accounts.get(account[:200])
            return 0.0 if state is None else max(0.0, state.locked_until - self.clock())

    def failed(self, account: str) -> None:
        """A wrong password for ``account`` (known or not): count it, lock from the threshold on."""
        limits, now = self.limits, self.clock()
        with self._lock:
            state = self._accounts.get(account[:200]) or _Failures()
            if now - state.last > FORGET_S and now >= state.locked_until:
                state = _Failures()
            state.count, state.last = state.count + 1, now
            over = state.count - limits.login_failures
            if over >= 0:
                state.locked_until = now + min(limits.lockout_s * 2.0 ** min(over, 32), limits.max_lockout_s)
            self._remember(self._accounts, account[:200], state)

    def succeeded(self, account: str) -> None:
        """The right password: the account's count starts again."""
        with self._lock:
            self._accounts.pop(account[:200], None)
