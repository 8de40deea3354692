"""A PRM served over HTTP keeps its dev-tuned threshold (issue 22 item 2, found on the real-data path).

``prmkit eval processbench --model http://HOST:PORT`` against ``prmkit serve CKPT`` used 0.5 ("default")
where the same command on CKPT uses the checkpoint's stored threshold: the server did not say it and
the remote scorer had none. Now ``/health`` reports it and :class:`RemoteScorer` reads it there.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from prmkit.scoring import load_scorer
from prmkit.scoring.remote import RemoteScorer
from prmkit.scoring.scorer import pick_threshold
from prmkit.serving.reward_server import create_app
from prmkit.testing import make_random_prm
from tests.serving.conftest import HashScorer, free_port, run_server

STORED = 0.3125


@pytest.fixture(scope="module")
def tuned_prm(tmp_path_factory) -> Path:
    """A random prmkit PRM whose config stores a dev-tuned threshold, as ``prmkit train prm`` writes it."""
    folder = Path(make_random_prm(tmp_path_factory.mktemp("tuned") / "prm", layers=2, width=16))
    config = json.loads((folder / "config.json").read_text())
    config["prmkit"]["threshold"] = STORED
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_a_served_checkpoint_gives_its_threshold_to_remote_clients(tuned_prm) -> None:
    with run_server(create_app(load_scorer(str(tuned_prm)))) as url:
        assert httpx.get(f"{url}/health").json()["threshold"] == STORED
        assert RemoteScorer(url).threshold == STORED
        assert pick_threshold(None, RemoteScorer(url)) == (STORED, "checkpoint")
        assert pick_threshold(0.7, RemoteScorer(url)) == (0.7, "given")


def test_a_scorer_without_a_threshold_or_no_server_falls_back_to_the_default() -> None:
    with run_server(create_app(HashScorer())) as url:
        assert httpx.get(f"{url}/health").json()["threshold"] is None
        assert pick_threshold(None, RemoteScorer(url)) == (0.5, "default")
    gone = RemoteScorer(f"http://127.0.0.1:{free_port()}")  # nothing listens there
    assert gone.threshold is None and pick_threshold(None, gone) == (0.5, "default")
