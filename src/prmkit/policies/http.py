"""A small, careful client for OpenAI-compatible servers (vLLM, SGLang, prmkit's own policy server).

Why not the ``openai`` package: prmkit needs only two POST routes, and it needs control of the parts that
bite in long labelling jobs: a concurrency cap shared by every thread, retries with exponential backoff
on connection errors, 429 and 5xx (never on 4xx, which will not heal), a timeout per request, and an
error that says which URL failed and what to check when the server is down.
"""

from __future__ import annotations

import os
import random
import threading
import time
from typing import Any

import httpx

RETRY_STATUS = {408, 429, 500, 502, 503, 504}


class EndpointError(RuntimeError):
    """The endpoint could not answer: unreachable after retries, or it rejected the request."""


class OpenAIClient:
    """POSTs JSON to ``{base_url}/v1/...`` with a concurrency limit, retries and timeouts.

    ``base_url`` may end in ``/v1`` or not. The API key is read from the environment variable named by
    ``api_key_env`` (never passed on a command line, where ``ps`` would show it).
    """

    def __init__(
        self,
        base_url: str,
        *,
        concurrency: int = 8,
        retries: int = 3,
        timeout: float = 60.0,
        backoff: float = 0.5,
        api_key_env: str | None = "OPENAI_API_KEY",
    ):
        base = base_url.rstrip("/")
        self.base_url = base[: -len("/v1")] if base.endswith("/v1") else base
        self.retries = retries
        self.backoff = backoff
        self._slots = threading.BoundedSemaphore(max(1, concurrency))
        self._stopped = threading.Event()
        headers = {}
        key = os.environ.get(api_key_env) if api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        limits = httpx.Limits(
            max_connections=max(1, concurrency), max_keepalive_connections=max(1, concurrency)
        )
        self._http = httpx.Client(timeout=timeout, headers=headers, limits=limits)

    def post(self, route: str, payload: dict[str, Any]) -> dict[str, Any]:
        """POST ``payload`` to ``route`` (e.g. ``/v1/completions``) and return the decoded JSON body."""
        url = self.base_url + route
        last: str = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1) * (1 + 0.25 * random.random()))
            if self._stopped.is_set():
                raise EndpointError(f"{url}: not sent: the job is stopping ({last or 'stop() was called'})")
            try:
                with self._slots:
                    resp = self._http.post(url, json=payload)
            except httpx.TimeoutException as err:
                last = f"timed out ({type(err).__name__})"
                continue
            except httpx.TransportError as err:
                last = f"{type(err).__name__}: {err}"
                continue
            if resp.status_code in RETRY_STATUS:
                last = f"HTTP {resp.status_code}: {resp.text[:200]}"
                continue
            if resp.status_code >= 400:
                raise EndpointError(f"{url} rejected the request: HTTP {resp.status_code}: {resp.text[:500]}")
            try:
                return resp.json()
            except ValueError as err:
                raise EndpointError(f"{url} answered with non-JSON: {resp.text[:200]!r}") from err
        raise EndpointError(
            f"could not get an answer from {url} after {self.retries + 1} tries ({last}). "
            "Is the server running, and is the URL right (e.g. http://localhost:8000)?"
        )

    def get(self, route: str) -> dict[str, Any]:
        """GET ``route`` once (health checks, model lists); connection errors become :class:`EndpointError`."""
        url = self.base_url + route
        try:
            resp = self._http.get(url)
            resp.raise_for_status()
            return resp.json()
        except (httpx.HTTPError, ValueError) as err:
            raise EndpointError(f"{url}: {type(err).__name__}: {err}") from err

    def stop(self) -> None:
        """No new request and no retry from now on (requests already on the wire end at their timeout):
        a job that fails fast stops within one request timeout, not after every unit's retries."""
        self._stopped.set()

    def close(self) -> None:
        self._stopped.set()
        self._http.close()
