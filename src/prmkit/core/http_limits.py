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
- forwarded headers (``X-Forwarded-For``, ``X-Forwarded-Proto``) believed only from ``trusted_proxies``
  (none by default: the connecting address is the client). A trusted proxy's own connections are not
  capped, since every client behind it shares its address: cap those at the proxy.

The protocol subclasses uvicorn's own HTTP protocol (h11, or httptools when installed) at four hooks:
``connection_made``, ``data_received``, ``on_response_complete`` and ``connection_lost``, and reads its
``cycle``, ``transport`` and ``loop`` attributes (tests/annotate/test_http_limits.py covers them).

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


def bounded_protocol(
    base: type[asyncio.Protocol],
    header_timeout_s: float,
    connections_per_client: int,
    trusted_proxies: tuple[Network, ...] = (),
) -> type[asyncio.Protocol]:
    """``base`` (one of uvicorn's HTTP protocols) with the header deadline and the per-client cap; each
    call makes a class with its own count of open connections, so build one per server."""
    open_by_client: Counter[str] = Counter()
    busy = _busy_response(connections_per_client)

    class Bounded(base):  # type: ignore[valid-type, misc]
        _client_key: str | None = None
        _deadline: asyncio.TimerHandle | None = None
        _seen_cycle: Any = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            peer = transport.get_extra_info("peername")
            host = peer[0] if isinstance(peer, tuple | list) and peer else None
            if isinstance(host, str) and host and not _in(host, trusted_proxies):
                key = client_key(host)
                if open_by_client[key] >= connections_per_client:
                    transport.write(busy)  # type: ignore[attr-defined]
                    transport.close()
                    return
                open_by_client[key] += 1
                self._client_key = key
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._note_request()

        def on_response_complete(self) -> None:
            super().on_response_complete()  # may start a pipelined request already received
            if not self._note_request() and not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            key, self._client_key = self._client_key, None
            if key is not None:
                open_by_client[key] -= 1
                if open_by_client[key] <= 0:
                    del open_by_client[key]
            super().connection_lost(exc)

        def _note_request(self) -> bool:
            """Whether a new request head arrived whole (uvicorn then starts a new cycle): stop the clock."""
            if self.cycle is None or self.cycle is self._seen_cycle:
                return False
            self._seen_cycle = self.cycle
            self._disarm()
            return True

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(header_timeout_s, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            self._deadline = None
            working = self.cycle is not None and not self.cycle.response_complete
            if not working and not self.transport.is_closing():
                self.transport.close()

    Bounded.__name__ = Bounded.__qualname__ = f"Bounded{base.__name__}"
    return Bounded


def bounded_config(
    app: Any,
    *,
    host: str,
    port: int,
    keep_alive_s: float = 5.0,
    header_timeout_s: float = 10.0,
    connections_per_client: int = 64,
    trusted_proxies: Iterable[str] = (),
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
    trusted = parse_networks(trusted_proxies)
    http = bounded_protocol(AutoHTTPProtocol, header_timeout_s, connections_per_client, trusted)
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
