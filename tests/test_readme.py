"""README's own-data path ("Your data and a released PRM") runs as written.

The block after the marker ``<!-- run by tests/test_readme.py -->`` is run by bash, line for line, in a
folder holding the files it names: ProcessBench's four splits (of each real sample in
``../shared/data/real/processbench``, the shortest record with an error and the shortest without) and
PRM800K's MATH test split (its first two problems). Only the two model ids are replaced, by tiny
stand-ins built here on the real Qwen2.5 tokenizer (tests/scoring/released.py,
tests/scoring/real_tokenizers.py; skipped, naming ``make vocab``, without it): ``Qwen/Qwen2.5-Math-PRM-7B``
by a random model in its released layout (read as ``qwen:``, as the block writes it) and
``Qwen/Qwen2.5-Math-1.5B-Instruct`` by a random Qwen2 causal LM with ChatML turns; and ``--port 8000``
by a free port. The last line, ``prmkit serve``, is the script's ``exec``: once it answers, ``/score`` must
give the numbers ``prmkit score`` wrote a few lines above. A path test, not a model: ``slow`` (the
stand-ins' 152k-token vocabulary and five commands' imports take minutes on a shared CPU).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from prmkit.formats.inputs import read_traces
from tests.policies.conftest import free_port
from tests.processes import stop

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"<!-- run by tests/test_readme\.py -->\n```bash\n(?P<code>.*?)```", re.S)
PRM_ID, POLICY_ID, PORT = "Qwen/Qwen2.5-Math-PRM-7B", "Qwen/Qwen2.5-Math-1.5B-Instruct", "--port 8000"
SPLITS = ("gsm8k", "math", "olympiadbench", "omnimath")


def readme_block() -> str:
    found = BLOCK.search(README.read_text(encoding="utf-8"))
    assert found, "README lost its own-data block (the fence after <!-- run by tests/test_readme.py -->)"
    return found["code"]


def test_the_block_names_the_released_prm_and_ends_in_serve() -> None:
    """What the slow test below relies on, checked in every run: the ids it replaces are there, the
    released PRM is read by the ``qwen:`` convention, and the server comes last."""
    code = readme_block()
    assert f"qwen:{PRM_ID}" in code and POLICY_ID in code and PORT in code
    assert code.replace("\\\n", " ").strip().splitlines()[-1].startswith("prmkit serve ")


def _inputs(real: Path, folder: Path) -> list[str]:
    """The files the block reads, cut small: of each ProcessBench split, its shortest record with an error
    and its shortest without (so every split has an F1), as the split writes them; the first two problems
    of PRM800K's MATH test split, byte for byte. Returns those problems' texts."""
    for split in SPLITS:
        records = json.loads((real / "processbench" / f"{split}.json").read_text(encoding="utf-8"))
        by_length = sorted(records, key=lambda r: len(r["problem"]) + len("".join(r["steps"])))
        chosen = [
            next(r for r in by_length if r["label"] >= 0),
            next(r for r in by_length if r["label"] == -1),
        ]
        (folder / f"{split}.json").write_text(json.dumps(chosen, indent=2, ensure_ascii=False))
    lines = (real / "prm800k" / "math_splits_test_first20.jsonl").read_text(encoding="utf-8").splitlines(True)
    (folder / "test.jsonl").write_text("".join(lines[:2]), encoding="utf-8")
    return [json.loads(line)["problem"] for line in lines[:2]]


def _standins(folder: Path, texts: list[str]) -> tuple[Path, Path]:
    """Qwen2.5-Math-PRM-7B's stand-in (its layout on Qwen2.5's real tokenizer) and a Qwen2 chat LM to
    sample from, on a byte-level tokenizer of 300 tokens learnt from ``texts`` with ChatML turns (a
    152k-token head would only slow its 2 x 16 rollouts of up to 256 tokens); both tiny and random."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from prmkit.modeling.tokenizer import build_tokenizer
    from tests.scoring import released
    from tests.scoring.real_tokenizers import QWEN_CHAT
    from tests.scoring.standins import standin

    prm = standin("qwen")  # built once per test run, shared with tests/scoring/test_families.py
    tok = build_tokenizer(texts, vocab_size=300, extra_tokens=["<|im_start|>", "<|im_end|>"])
    tok.chat_template = QWEN_CHAT
    torch.manual_seed(0)
    ids = {"eos_token_id": tok.eos_token_id, "pad_token_id": tok.pad_token_id}
    Qwen2ForCausalLM(Qwen2Config(vocab_size=len(tok), **released.SIZE, **ids)).save_pretrained(
        folder / "policy"
    )
    tok.save_pretrained(folder / "policy")
    return prm, folder / "policy"


def _await_health(proc: subprocess.Popen, url: str, log: Path, limit_s: float) -> None:
    deadline = time.monotonic() + limit_s
    while True:
        assert proc.poll() is None, f"the README block stopped (exit {proc.returncode}):\n{log.read_text()}"
        assert time.monotonic() < deadline, f"prmkit serve did not answer in {limit_s} s:\n{log.read_text()}"
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)


@pytest.mark.slow
def test_the_own_data_block_runs_as_written(real_data: Path, tmp_path: Path) -> None:
    code = readme_block()
    work = tmp_path / "work"
    work.mkdir()
    prm, policy = _standins(tmp_path, _inputs(real_data, work))
    port = free_port()
    code = code.replace(PRM_ID, str(prm)).replace(POLICY_ID, str(policy)).replace(PORT, f"--port {port}")
    *before, serve = code.replace("\\\n", " ").strip().splitlines()
    script = "\n".join([*before, f"exec {serve}"])  # bash becomes the server: terminate() stops it
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env |= {"HF_HUB_OFFLINE": "1"}  # nothing is downloaded: both models are folders here
    log = tmp_path / "block.log"
    with log.open("w") as fh:
        proc = subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", script], cwd=work, env=env, stdout=fh, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _await_health(proc, url, log, limit_s=900)
        scored = read_traces(work / "scored.jsonl")
        trace = max(scored, key=lambda t: len(t.steps))
        body = {"traces": [{"problem": trace.problem.text, "steps": [s.text for s in trace.steps]}]}
        reply = httpx.post(f"{url}/score", json=body, timeout=120)
        assert reply.status_code == 200, reply.text
        (served,) = reply.json()["results"]
    finally:
        stop(proc)
    shown = log.read_text()
    assert "Traceback" not in shown, shown
    # score: every step of every converted record has the PRM's score, as the server gives it
    assert len(scored) == 2 and all(s.label("model") is not None for t in scored for s in t.steps)
    assert served["step_scores"] == pytest.approx([s.label("model").score for s in trace.steps], abs=1e-5)
    # eval processbench: one subset per file, the headline their plain mean
    result = json.loads((work / "eval" / "processbench.json").read_text())
    assert [s["name"] for s in result["subsets"]] == list(SPLITS)
    assert result["f1"] == pytest.approx(sum(s["f1"] for s in result["subsets"]) / len(SPLITS))
    # bon: one chosen solution per MATH problem, each of 16 samples scored
    chosen = [json.loads(line) for line in (work / "bon.jsonl").read_text().splitlines()]
    assert [(r["problem_id"], r["n"], r["traces_scored"]) for r in chosen] == [
        (r["problem_id"], 16, 16) for r in chosen
    ]
    assert len(chosen) == 2 and all(r["reference"] for r in chosen)
