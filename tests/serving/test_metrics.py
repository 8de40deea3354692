"""``/metrics`` cannot be injected and its size is bounded (issue 21, finding 2).

Requests are labelled by route template, never by the raw path: a crafted URL (sent without the API
key, so it is counted as a 401) used to add its own metric line, and every distinct path added a
series. The page is read back with ``prometheus_client``'s own parser, as a Prometheus server would.
"""

from __future__ import annotations

import socket

import httpx
from prometheus_client.parser import text_string_to_metric_families

from prmkit.serving.reward_server import ServerConfig, create_app
from tests.serving.conftest import HashScorer, run_server

ROUTES = {"/score", "/get_reward", "/pooling", "/health", "/metrics", "/docs", "/openapi.json", "<other>"}
ROUTES |= {"/docs/oauth2-redirect", "/redoc"}


def request_counts(page: str) -> dict[tuple[str, str], float]:
    """``prmkit_requests_total`` by (path label, status label), parsed as Prometheus parses it."""
    counts = {}
    for family in text_string_to_metric_families(page):
        for sample in family.samples:
            if sample.name == "prmkit_requests_total":
                counts[(sample.labels["path"], sample.labels["status"])] = sample.value
    return counts


def metric_value(page: str, sample_name: str) -> float:
    """The value of an unlabelled sample (``prmkit_overlong_responses_total``), parsed as Prometheus does."""
    for family in text_string_to_metric_families(page):
        for sample in family.samples:
            if sample.name == sample_name:
                return sample.value
    raise KeyError(f"{sample_name} is not on the /metrics page")


def _raw_get(url: str, target: bytes) -> bytes:
    """A GET with a request target no HTTP client library would send (percent-encoded newline, quotes)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        return sock.recv(4096)


def test_a_crafted_path_cannot_add_a_metric_line() -> None:
    with run_server(create_app(HashScorer(), ServerConfig(api_key="k3y"))) as url:
        # decoded by the server to:  /x"} 1\nprmkit_injected{x="
        answer = _raw_get(url, b"/x%22%7D%201%0Aprmkit_injected%7Bx%3D%22")
        assert answer.startswith(b"HTTP/1.1 401"), answer[:100]
        score = httpx.post(f"{url}/score", json={"traces": [{"problem": "p", "steps": ["a"]}]}, timeout=30)
        assert score.status_code == 401
        metrics = httpx.get(f"{url}/metrics", timeout=30)
    page = metrics.text
    families = {f.name for f in text_string_to_metric_families(page)}
    assert not any("injected" in name for name in families), sorted(families)
    assert "injected" not in page
    assert metrics.headers["content-type"].startswith("text/plain; version=")
    counts = request_counts(page)
    assert counts[("<other>", "401")] == 1.0 and counts[("/score", "401")] == 1.0, counts
    assert {path for path, _ in counts} <= ROUTES


def test_distinct_paths_do_not_grow_the_page() -> None:
    with run_server(create_app(HashScorer(), ServerConfig())) as url, httpx.Client(base_url=url) as c:
        assert c.get("/no-such-page-0").status_code == 404
        before = c.get("/metrics").text
        for k in range(1, 300):
            c.get(f"/no-such-page-{k}")
        c.get("/score")  # a known route, wrong method: its template, status 405
        after = c.get("/metrics").text
    # 300 distinct paths used to add 300 series (5,000 made the page 10 MB); now a few counters change
    assert len(after) - len(before) < 1000, (len(before), len(after))
    assert len(after) < 20_000, len(after)
    counts = request_counts(after)
    assert counts[("<other>", "404")] == 300.0 and counts[("/score", "405")] == 1.0, counts
    assert {path for path, _ in counts} <= ROUTES


def test_batcher_counters_are_exported() -> None:
    scorer = HashScorer()
    with run_server(create_app(scorer, ServerConfig())) as url, httpx.Client(base_url=url) as c:
        for k in range(3):
            body = {"traces": [{"problem": f"p{k}", "steps": ["a", "b"]}] * 2}
            assert c.post("/score", json=body).status_code == 200
        page = c.get("/metrics").text
    values = {
        s.name: s.value for f in text_string_to_metric_families(page) for s in f.samples if not s.labels
    }
    assert values["prmkit_scored_traces_total"] == 6.0
    assert values["prmkit_batch_traces_count"] == float(len(scorer.calls))
    assert values["prmkit_batch_traces_sum"] == 6.0
    assert values["prmkit_queue_traces"] == 0.0 and values["prmkit_queue_chars"] == 0.0
    assert values["prmkit_rejected_requests_total"] == 0.0
    assert request_counts(page)[("/score", "200")] == 3.0
