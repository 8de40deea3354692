"""What the reward server checks before FastAPI sees a request: body size, API key, strict JSON, metrics.

A pure ASGI middleware (cheaper per request than ``@app.middleware``). Every POST body is read here up
to ``max_body_bytes`` (413 beyond, with or without Content-Length), then checked as JSON stricter than
Python's ``json`` module is: ``NaN`` / ``Infinity`` and numbers that overflow a float (``1e999``), a
lone UTF-16 surrogate (``"\\ud800"``, which no UTF-8 encoder, tokenizer or JSON response accepts), an
integer past Python's 4300 digits, a body that is not UTF-8 and nesting deeper than ``max_json_depth`` each get a 422 naming the
place, where they used to surface as 500s deep inside FastAPI or the scorer. A body that is not JSON at
all passes through, so FastAPI answers it with its usual located error.

The API key is taken the ways RL clients can send one (:func:`presented_keys`): a Bearer token, an
``X-API-Key`` header, or HTTP Basic auth whose password is the key (OpenRLHF's only way).
"""

from __future__ import annotations

import base64
import hmac
import json
import math
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from starlette.routing import BaseRoute, Match

from prmkit.serving.config import ServerConfig
from prmkit.serving.metrics import Metrics

OPEN_PATHS = {"/health", "/metrics", "/docs", "/openapi.json", "/docs/oauth2-redirect", "/redoc"}
OTHER_ROUTE = "<other>"
"""The metrics label of a path no route matches (404s): raw paths never become labels."""
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class BodyError(ValueError):
    """A request body that parses but is not acceptable JSON; the message names the place."""


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BodyError(f"the number {text[:40]} overflows a 64-bit float; send a finite number")
    return value


def _constant(name: str) -> float:
    raise BodyError(f"{name} is not JSON (RFC 8259); send null or a finite number instead")


def check_json(body: bytes, max_depth: int) -> str | None:
    """Why ``body`` is refused (the message of a 422), or None to hand it on to FastAPI unchanged."""
    try:
        doc = json.loads(body, parse_constant=_constant, parse_float=_finite)
    except BodyError as err:
        return f"body: {err}"
    except json.JSONDecodeError:
        return None  # not JSON: FastAPI's own error says where
    except UnicodeDecodeError as err:
        return (
            f"body: not UTF-8 (byte {err.object[err.start]:#04x} at offset {err.start}); send JSON as UTF-8"
        )
    except RecursionError:
        return f"body: nested deeper than {max_depth} levels of lists and objects (--max-json-depth)"
    except ValueError:  # int() refuses more than sys.get_int_max_str_digits() digits
        return f"body: an integer of more than {sys.get_int_max_str_digits()} digits; send a shorter number"
    return _check_doc(doc, max_depth, surrogates=_SURROGATE_ESCAPE.search(body) is not None)


def _check_doc(doc: Any, max_depth: int, surrogates: bool) -> str | None:
    """Depth of every container, and (when the raw body escapes a surrogate) every string and key."""
    stack: list[tuple[Any, str, int]] = [(doc, "body", 0)]
    while stack:
        value, where, depth = stack.pop()
        if isinstance(value, str):
            if _lone_surrogate(value):
                return (
                    f"{where}: holds a lone UTF-16 surrogate ({_lone_surrogate(value)}), which is not "
                    "text; escape characters outside the BMP as a surrogate pair or send UTF-8"
                )
            continue
        if not isinstance(value, (list, dict)):
            continue
        if depth >= max_depth:
            return f"{where}: nested deeper than {max_depth} levels of lists and objects (--max-json-depth)"
        if isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, (list, dict)) or (surrogates and isinstance(item, str)):
                    stack.append((item, f"{where}[{i}]", depth + 1))
        else:
            for key, item in value.items():
                if surrogates and _lone_surrogate(key):
                    return f"{where}: a key holds a lone UTF-16 surrogate ({_lone_surrogate(key)})"
                if isinstance(item, (list, dict)) or (surrogates and isinstance(item, str)):
                    stack.append(
                        (item, f"{where}.{key}" if key.isidentifier() else f"{where}[{key!r}]", depth + 1)
                    )
    return None


def _lone_surrogate(text: str) -> str | None:
    """The first lone surrogate of ``text`` as ``\\udXXX`` (None when it encodes as UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        return f"\\u{ord(text[err.start]):04x} at character {err.start}"
    return None


KEY_HELP = (
    "send 'Authorization: Bearer KEY', 'X-API-Key: KEY', or HTTP Basic auth with KEY as the password "
    "and any user name (a URL http://prmkit:KEY@host:port/get_reward, the way OpenRLHF can pass it)"
)
"""How to send the key, for the 401 answer: every way :func:`authorized` accepts."""


def presented_keys(headers: dict[bytes, bytes]) -> list[bytes]:
    """Every key the request offers: ``X-API-Key``, a Bearer token, a Basic password (any user name).

    Basic auth is accepted because OpenRLHF's remote reward clients (``requests`` in 0.9,
    ``aiohttp`` from 0.10) send no header of their own: a key can only travel as userinfo in
    ``--reward.remote_url``, which both libraries turn into ``Authorization: Basic``.
    """
    keys = [headers[b"x-api-key"]] if b"x-api-key" in headers else []
    scheme, _, value = headers.get(b"authorization", b"").strip().partition(b" ")
    if scheme.lower() == b"bearer":
        keys.append(value.strip())
    elif scheme.lower() == b"basic":
        try:
            user_pass = base64.b64decode(value.strip(), validate=True)
        except ValueError:  # binascii.Error: not base64, so no key
            user_pass = b""
        if b":" in user_pass:
            keys.append(user_pass.partition(b":")[2])
    return keys


def authorized(headers: dict[bytes, bytes], key: str) -> bool:
    """Whether the request offers ``key`` in one of the ways of :func:`presented_keys`, each compared
    in constant time (all of them, so the time does not tell which way was tried)."""
    expected = key.encode()
    matches = [hmac.compare_digest(given, expected) for given in presented_keys(headers)]
    return any(matches)


def route_template(routes: Sequence[BaseRoute], scope: dict) -> str:
    """The path template of the route ``scope`` goes to (``/score``), or :data:`OTHER_ROUTE`: a label
    from a fixed set, whatever path the client sent."""
    for route in routes:
        match, _ = route.matches(scope)
        if match != Match.NONE:
            return getattr(route, "path", OTHER_ROUTE)
    return OTHER_ROUTE


@dataclass(frozen=True)
class Refusal:
    """An answer the guard gives itself, without FastAPI: a status and a message naming the limit."""

    status: int
    detail: str
    headers: tuple[tuple[bytes, bytes], ...] = ()

    async def send(self, send: Any, shape: Any = None) -> None:
        """Send it, its JSON ``{"detail": ...}``, or ``shape(status, detail)`` when given."""
        body = json.dumps(shape(self.status, self.detail) if shape else {"detail": self.detail}).encode()
        head = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": self.status, "headers": [*head, *self.headers]})
        await send({"type": "http.response.body", "body": body})


class Guard:
    """ASGI middleware: body-size limit, API key, strict JSON, request metrics by route template."""

    def __init__(self, app: Any, config: ServerConfig, metrics: Metrics, routes: Sequence[BaseRoute]):
        self.app, self.config, self.metrics, self.routes = app, config, metrics, routes

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started, status = time.perf_counter(), [500]
        route = route_template(self.routes, scope)

        async def send_status(message: dict) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            try:
                checked = await self._check(scope, receive, route)
            except ClientGone:  # the body never came whole (the server's 408, or the client left)
                status[0] = 408
                return
            if isinstance(checked, Refusal):
                status[0] = checked.status
                return await checked.send(send)
            await self.app(scope, checked, send_status)
        finally:
            self.metrics.observe(route, status[0], time.perf_counter() - started)

    async def _check(self, scope: dict, receive: Any, route: str) -> Refusal | Any:
        """A :class:`Refusal`, or the ``receive`` to hand on (replaying the body read here)."""
        headers = dict(scope["headers"])
        limit = self.config.max_body_bytes
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            size = f"request body is {int(length)} bytes"
            return Refusal(413, f"{size}; this server accepts at most {limit} (--max-body-bytes)")
        if self.config.api_key and route not in OPEN_PATHS and not authorized(headers, self.config.api_key):
            challenge = (b"www-authenticate", b'Bearer, Basic realm="prmkit"')
            return Refusal(401, f"missing or wrong API key: {KEY_HELP}", (challenge,))
        return await strict_body(scope, receive, limit, self.config.max_json_depth)


class StrictJSON:
    """ASGI middleware with :class:`Guard`'s body checks alone (size, strict JSON), for servers that need
    no API key or metrics: ``prmkit serve-policy``. ``shape`` writes a refusal's JSON body (OpenAI's
    ``{"error": ...}`` there), so each server answers in its own protocol's shape."""

    def __init__(self, app: Any, max_body_bytes: int, max_json_depth: int, shape: Any = None):
        self.app, self.max_body_bytes, self.max_json_depth, self.shape = (
            app,
            max_body_bytes,
            max_json_depth,
            shape,
        )

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        try:
            checked = await strict_body(scope, receive, self.max_body_bytes, self.max_json_depth)
        except ClientGone:
            return
        if isinstance(checked, Refusal):
            return await checked.send(send, self.shape)
        await self.app(scope, checked, send)


async def strict_body(scope: dict, receive: Any, limit: int, max_json_depth: int) -> Refusal | Any:
    """A POST body read whole up to ``limit`` bytes and checked by :func:`check_json`: a
    :class:`Refusal` (413, 422), or the ``receive`` that replays it to the app. Other methods pass."""
    if scope.get("method") != "POST":
        return receive
    length = dict(scope["headers"]).get(b"content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        return Refusal(
            413,
            f"request body is {int(length)} bytes; this server accepts at most {limit} (--max-body-bytes)",
        )
    body = await _read_body(receive, limit)
    if body is None:
        return Refusal(413, f"request body exceeds {limit} bytes (--max-body-bytes)")
    problem = check_json(body, max_json_depth) if body.strip() else None
    if problem is not None:
        return Refusal(422, problem)
    sent = False

    async def replay() -> dict:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class ClientGone(Exception):
    """The connection closed before the whole body arrived: there is no one to answer, and half a body
    must not reach the endpoints (it might even parse)."""


async def _read_body(receive: Any, limit: int) -> bytes | None:
    """The whole request body, or None once it passes ``limit`` bytes (the rest is never read)."""
    chunks, size, more = [], 0, True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            raise ClientGone
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        more = message.get("more_body", False)
        if size > limit:
            return None
    return b"".join(chunks)
