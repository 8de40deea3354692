"""What one client's connections may cost an HTTP server run by uvicorn, for every web server of prmkit.

uvicorn on its own (0.54) keeps a connection that never sends a byte open for good (its keep-alive timer
starts only after a first response), lets a client trickle a request head a byte at a time for as long as
it likes, admits any number of connections from one address, and believes ``X-Forwarded-For`` from
127.0.0.1, so any local client can pose as any address. One local process holding 20,000 idle sockets
then starves everyone else. :func:`bounded_config` returns a ``uvicorn.Config`` that adds:

- a header deadline: a request head (request line and headers) must arrive whole within
  ``header_timeout_s`` of the connection opening or of the previous response ending, else the connection
  is closed (a silent keep-alive connection is closed sooner, after ``keep_alive_s``);
- a per-client cap: at most ``connections_per_client`` open connections per client address (an IPv6
  client by its /64, see :func:`client_key`); one more is answered 503 and closed at once;
- a body deadline: once its head is in, a request's body must start within ``body_timeout_s`` and then
  keep arriving at ``min_body_rate`` bytes per second on average (it is due by ``body_timeout_s +
  received / min_body_rate`` after the head), else it is answered 408 and the connection closed, so a
  client that sends headers on time and then trickles its body (or nothing) holds a connection for a
  bounded time (issue 66: 200 such connections stayed open 90 s with no answer);
- forwarded headers (``X-Forwarded-For``, ``X-Forwarded-Proto``) believed only from ``trusted_proxies``
  (none by default: the connecting address is the client). A trusted proxy's own connections are not
  capped, since every client behind it shares its address: cap those at the proxy.

The protocol subclasses uvicorn's own HTTP protocol (h11, or httptools when installed) at four hooks:
``connection_made``, ``data_received``, ``on_response_complete`` and ``connection_lost``, and reads its
``cycle`` (``more_body``, ``response_started``, ``response_complete``), ``flow``, ``transport`` and
``loop`` attributes (tests/annotate/test_http_limits.py and tests/serving/test_connections.py cover them).

Standard library only at import (uvicorn is imported when a config is built), so config modules can use
:func:`parse_networks` while staying light; core imports no other prmkit package.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import uvicorn

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

BUSY_STATUS = 503
SLOW_BODY_STATUS = 408
RETRY_AFTER_S = 5


def parse_networks(entries: Iterable[str]) -> tuple[Network, ...]:
    """Each entry as an address (``10.0.0.5``) or a network (``10.0.0.0/8``, ``fd00::/8``); a ValueError
    names every entry that is neither (``*`` is refused: trusting every peer is trusting no header)."""
    networks, bad = [], []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            bad.append(entry)
    if bad:
        raise ValueError(
            f"{', '.join(repr(b) for b in bad)}: not an IP address or a CIDR network (10.0.0.5, 10.0.0.0/8, "
            "fd00::/8); trusting every peer would be trusting no header"
        )
    return tuple(networks)


def client_key(host: str | None) -> str:
    """The key one client is counted under: an IPv4 address as it is, an IPv6 one by its /64 network
    (a host commonly owns a whole /64, so counting single addresses would let it pose as billions of
    clients), an IPv4-mapped IPv6 address as the IPv4 one; anything else (a Unix socket's "") as it is."""
    try:
        ip = ipaddress.ip_address(host or "")
    except ValueError:
        return host or ""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def _in(host: str, networks: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return any(ip in net for net in networks)


def _busy_response(cap: int) -> bytes:
    body = (
        f"too many connections from your address (at most {cap} at once); "
        "close idle ones or try again shortly\n"
    ).encode()
    head = (
        f"HTTP/1.1 {BUSY_STATUS} Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"retry-after: {RETRY_AFTER_S}\r\nconnection: close\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def _slow_body_response(body_timeout_s: float, min_body_rate: int) -> bytes:
    body = (
        f"request body too slow: it must start within {body_timeout_s:g} s of the headers and arrive at "
        f"{min_body_rate} bytes per second or faster\n"
    ).encode()
    head = (
        f"HTTP/1.1 {SLOW_BODY_STATUS} Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"connection: close\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


class _Limits:
    """The deadlines and the per-client cap as a mixin over one of uvicorn's HTTP protocols (it comes
    first in the bases, so its hooks wrap uvicorn's through ``super()``); :func:`bounded_protocol` sets
    the class attributes below on each class it makes."""

    header_timeout_s: float
    connections_per_client: int
    trusted_proxies: tuple[Network, ...]
    body_timeout_s: float
    min_body_rate: int
    open_by_client: Counter[str]
    busy: bytes
    slow: bytes

    _client_key: str | None = None
    _deadline: asyncio.TimerHandle | None = None
    _seen_cycle: Any = None
    _body_timer: asyncio.TimerHandle | None = None
    _body_since = 0.0
    _body_bytes = 0
    # uvicorn's protocol state, read here (see the module docstring)
    cycle: Any
    loop: asyncio.AbstractEventLoop
    transport: Any

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        peer = transport.get_extra_info("peername")
        host = peer[0] if isinstance(peer, tuple | list) and peer else None
        if isinstance(host, str) and host and not _in(host, self.trusted_proxies):
            key = client_key(host)
            if self.open_by_client[key] >= self.connections_per_client:
                transport.write(self.busy)  # type: ignore[attr-defined]
                transport.close()
                return
            self.open_by_client[key] += 1
            self._client_key = key
        self._arm()

    def data_received(self, data: bytes) -> None:
        waiting = self._body_timer is not None
        super().data_received(data)  # type: ignore[misc]
        if waiting:
            self._body_bytes += len(data)
        self._note_request()

    def on_response_complete(self) -> None:
        self._disarm_body()  # answered: a body still arriving is bounded by the header deadline now
        super().on_response_complete()  # type: ignore[misc]  # may start a pipelined request already received
        if not self._note_request() and not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._disarm_body()
        key, self._client_key = self._client_key, None
        if key is not None:
            self.open_by_client[key] -= 1
            if self.open_by_client[key] <= 0:
                del self.open_by_client[key]
        super().connection_lost(exc)  # type: ignore[misc]

    def _note_request(self) -> bool:
        """Whether a new request head arrived whole (uvicorn then starts a new cycle): stop the clock."""
        if self.cycle is None or self.cycle is self._seen_cycle:
            return False
        self._seen_cycle = self.cycle
        self._disarm()
        if self.cycle.more_body:  # the head is in, the body is not: start the body's clock
            self._body_since, self._body_bytes = self.loop.time(), len(getattr(self.cycle, "body", b""))
            self._body_timer = self.loop.call_later(self.body_timeout_s, self._check_body)
        return True

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.header_timeout_s, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _disarm_body(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _check_body(self) -> None:
        """At the body's due time: done, or due later (bytes arrived meanwhile, or the app is not
        reading, which is no fault of the client's), or too slow: 408 and close."""
        self._body_timer = None
        cycle = self.cycle
        if cycle is None or cycle is not self._seen_cycle or not cycle.more_body:
            return
        flow = getattr(self, "flow", None)
        if flow is not None and flow.read_paused:  # the app has not read what came: not the client
            self._body_since = self.loop.time() - self._body_bytes / self.min_body_rate
        due = self._body_since + self.body_timeout_s + self._body_bytes / self.min_body_rate
        left = due - self.loop.time()
        if left > 0:
            self._body_timer = self.loop.call_later(left, self._check_body)
            return
        if self.transport.is_closing():
            return
        if not cycle.response_started:
            self.transport.write(self.slow)
        self.transport.close()

    def _expire(self) -> None:
        self._deadline = None
        working = self.cycle is not None and not self.cycle.response_complete
        if not working and not self.transport.is_closing():
            self.transport.close()


def bounded_protocol(
    base: type[asyncio.Protocol],
    header_timeout_s: float,
    connections_per_client: int,
    trusted_proxies: tuple[Network, ...] = (),
    body_timeout_s: float = 10.0,
    min_body_rate: int = 65_536,
) -> type[asyncio.Protocol]:
    """``base`` (one of uvicorn's HTTP protocols) with the header and body deadlines and the per-client
    cap; each call makes a class with its own count of open connections, so build one per server."""
    settings = {
        "header_timeout_s": header_timeout_s,
        "connections_per_client": connections_per_client,
        "trusted_proxies": trusted_proxies,
        "body_timeout_s": body_timeout_s,
        "min_body_rate": min_body_rate,
        "open_by_client": Counter(),
        "busy": _busy_response(connections_per_client),
        "slow": _slow_body_response(body_timeout_s, min_body_rate),
    }
    name = f"Bounded{base.__name__}"
    return type(name, (_Limits, base), {**settings, "__qualname__": name})


def bounded_config(
    app: Any,
    *,
    host: str,
    port: int,
    keep_alive_s: float = 5.0,
    header_timeout_s: float = 10.0,
    connections_per_client: int = 64,
    trusted_proxies: Iterable[str] = (),
    body_timeout_s: float = 10.0,
    min_body_rate: int = 65_536,
    **uvicorn_options: Any,
) -> uvicorn.Config:
    """A ``uvicorn.Config`` serving ``app`` with the bounds above (run it with ``uvicorn.Server(config)
    .run()``, or use :func:`serve_bounded`). ``uvicorn_options`` go to ``uvicorn.Config`` as they are
    (``log_level``, ``timeout_graceful_shutdown``, ...); the options this sets are refused there."""
    import uvicorn
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    if header_timeout_s <= 0 or keep_alive_s <= 0 or connections_per_client < 1:
        raise ValueError(
            "connection limits: expected header_timeout_s > 0, keep_alive_s > 0 and connections_per_client "
            f">= 1, found {header_timeout_s}, {keep_alive_s} and {connections_per_client}"
        )
    if body_timeout_s <= 0 or min_body_rate < 1:
        raise ValueError(
            f"body limits: expected body_timeout_s > 0 and min_body_rate >= 1, found {body_timeout_s} and "
            f"{min_body_rate}"
        )
    trusted = parse_networks(trusted_proxies)
    http = bounded_protocol(
        AutoHTTPProtocol, header_timeout_s, connections_per_client, trusted, body_timeout_s, min_body_rate
    )
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=http,
        ws="none",  # no websocket routes: an upgrade request is plain HTTP, under the same bounds
        timeout_keep_alive=keep_alive_s,  # type: ignore[arg-type]  # uvicorn hands it to call_later
        proxy_headers=bool(trusted),
        forwarded_allow_ips=[str(n) for n in trusted] or None,
        **uvicorn_options,
    )


def serve_bounded(app: Any, *, host: str, port: int, **options: Any) -> None:
    """Serve ``app`` until interrupted (blocking), with :func:`bounded_config`'s bounds and ``options``."""
    import uvicorn

    uvicorn.Server(bounded_config(app, host=host, port=port, **options)).run()
