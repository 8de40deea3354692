"""The ``vllm:`` scorer form against a real ``/pooling`` server on loopback, and its refusals.

The server is ``prmkit serve``'s app (``create_app``), which answers ``/pooling`` as vLLM 0.33.0's STEP
pooling does (tests/serving/test_pooling.py checks that against transformers and vLLM's own pydantic
models), serving a random-weight stand-in of Qwen2.5-Math-PRM (tests/scoring/released.py: the released
weight names, ``<extra_0>``, ChatML turns). ``prmkit score vllm:URL --convention qwen`` must give what
``prmkit score PATH`` (local) and ``prmkit score URL`` (prmkit's own ``/score``) give on the same traces.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.core.dataset import write_traces
from prmkit.core.model import Problem, Step, Trace
from prmkit.formats.inputs import read_traces
from prmkit.modeling import build_tokenizer
from prmkit.modeling.template import Encoded
from prmkit.scoring import load_scorer
from prmkit.scoring.vllm_pooling import VllmScoringError, pick_rows
from prmkit.serving.config import ServerConfig
from prmkit.serving.reward_server import create_app
from tests.scoring import released
from tests.scoring.real_tokenizers import QWEN_CHAT
from tests.serving.conftest import run_server

GSM8K = Path(__file__).resolve().parents[3] / "shared" / "data" / "real" / "processbench" / "gsm8k.json"
runner = CliRunner()


@pytest.fixture(scope="module")
def qwen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random Qwen2.5-Math-PRM stand-in (2048 positions) whose head spreads scores over (0, 1)."""
    texts = [t.problem.text + " " + " ".join(s.text for s in t.steps) for t in read_traces(GSM8K)]
    tok = build_tokenizer(texts, vocab_size=600, extra_tokens=["<extra_0>", "<|im_start|>", "<|im_end|>"])
    tok.chat_template = QWEN_CHAT
    return released.qwen_prm(tmp_path_factory.mktemp("qwen") / "prm", tok)


@pytest.fixture(scope="module")
def url(qwen: Path):
    with run_server(create_app(load_scorer(str(qwen), batch_tokens=2048), ServerConfig(max_wait_ms=20))) as u:
        yield u


def _invoke(*args: Any) -> Any:
    return runner.invoke(app, [str(a) for a in args])


def _scores(path: Path, actor: str) -> list[list[float | None]]:
    out = []
    for t in read_traces(path):
        labels = [s.label(f"model:{actor}") for s in t.steps]
        out.append([None if lab is None else lab.score for lab in labels])
    return out


def _close(got: list[list[float | None]], want: list[list[float | None]]) -> None:
    assert [len(r) for r in got] == [len(r) for r in want]
    for g, w in zip(got, want, strict=True):
        assert [x is None for x in g] == [x is None for x in w]
        assert [x for x in g if x is not None] == pytest.approx([x for x in w if x is not None], abs=1e-5)


def test_score_through_vllm_equals_local_and_prmkit_server(qwen: Path, url: str, tmp_path: Path) -> None:
    spec = f"vllm:{url}"
    runs = {"vllm": [spec, "--convention", "qwen"], "local": [qwen], "server": [url], "detected": [spec]}
    for name, args in runs.items():
        result = _invoke("score", *args, GSM8K, "-o", tmp_path / f"{name}.jsonl")
        assert result.exit_code == 0, result.output
        assert "scored 10 of 10 traces" in result.output
    through_vllm = _scores(tmp_path / "vllm.jsonl", spec)
    assert sum(len(r) for r in through_vllm) > 30
    scores = [x for r in through_vllm for x in r]
    assert max(scores) - min(scores) > 0.05  # a random head that does not say the same everywhere
    _close(through_vllm, _scores(tmp_path / "local.jsonl", str(qwen)))
    _close(through_vllm, _scores(tmp_path / "server.jsonl", f"remote:{url.rstrip('/')}"))
    _close(through_vllm, _scores(tmp_path / "detected.jsonl", spec))  # the config declares qwen


def _long_traces() -> list[Trace]:
    short = read_traces(GSM8K)[:2]
    problem = Problem(id="long", text="Count the xs.")
    long = Trace(id="long", problem=problem, steps=[Step(text="There are xs."), Step(text=" x" * 2100)])
    return [short[0], long, short[1]]


@pytest.mark.parametrize("policy", ["skip", "truncate"])
def test_overlong_follows_the_policy_as_locally(qwen: Path, url: str, policy: str) -> None:
    traces = _long_traces()
    remote = load_scorer(f"vllm:{url}", "qwen", overlong=policy)
    local = load_scorer(str(qwen), overlong=policy)
    got, want = remote.score(traces), local.score(traces)
    assert (
        [len(r) for r in got]
        == [len(r) for r in want]
        == [len(traces[0].steps), 1 if policy == "truncate" else 0, len(traces[2].steps)]
    )
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(w, abs=1e-5)
    assert remote.length_counts.to_dict() == local.length_counts.to_dict()


def test_refusals_are_one_line(url: str, tmp_path: Path) -> None:
    data = tmp_path / "long.jsonl"
    write_traces(data, _long_traces())
    spec = f"vllm:{url}"
    cases = {
        "more than the limit of 2048": ["score", spec, data, "-o", tmp_path / "a.jsonl", "--convention", "qwen"],
        "reads more than pooling returns": ["score", spec, GSM8K, "-o", tmp_path / "c.jsonl", "--convention", "likelihood"],
    }  # fmt: skip
    for needle, args in cases.items():
        result = _invoke(*args)
        assert result.exit_code == 2, result.output
        assert needle in result.output and len(result.output.strip().splitlines()) == 1, result.output


def _other_server(root: Path) -> Any:
    """A server that is not a pooling one: it names its model as vLLM does, and answers /pooling with
    prmkit's /score shape."""
    from fastapi import FastAPI

    other = FastAPI()
    other.get("/v1/models")(lambda: {"object": "list", "data": [{"id": "prm", "root": str(root)}]})
    other.post("/pooling")(lambda: {"results": [{"step_scores": [0.5]}]})
    return other


def test_a_server_that_does_not_pool_is_refused(qwen: Path, tmp_path: Path) -> None:
    with run_server(_other_server(qwen)) as base:
        result = _invoke("score", f"vllm:{base}", GSM8K, "-o", tmp_path / "x.jsonl", "--convention", "qwen")
    assert result.exit_code == 2, result.output
    assert "not vLLM's PoolingResponse" in result.output and "keys ['results']" in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


def test_a_model_that_declares_no_convention_needs_one(causal_model: Path, tmp_path: Path) -> None:
    with run_server(_other_server(causal_model)) as base:
        result = _invoke("score", f"vllm:{base}", GSM8K, "-o", tmp_path / "x.jsonl")
    assert result.exit_code == 2, result.output
    assert "pass --convention NAME" in result.output and len(result.output.strip().splitlines()) == 1


def test_rows_are_picked_at_the_read_positions() -> None:
    """STEP pooling (a row per tag) and no step_tag_id (a row per token) give the same rows; a server
    pooling at another tag is refused, naming the tag to serve with."""
    enc = Encoded(input_ids=[5, 9, 7, 9, 8, 9], tag_positions=[1, 3, 5])
    every = [[float(k), -float(k)] for k in range(6)]
    assert (
        pick_rows(every, enc, "w")
        == pick_rows([every[1], every[3], every[5]], enc, "w")
        == [every[1], every[3], every[5]]
    )
    with pytest.raises(VllmScoringError, match='"step_tag_id": 9'):
        pick_rows(every[:2], enc, "w")


@pytest.mark.skipif("vllm" in sys.modules or bool(__import__("importlib").util.find_spec("vllm")),
                    reason="vLLM is installed here")  # fmt: skip
def test_the_offline_engine_without_vllm_says_how_to_install(qwen: Path, tmp_path: Path) -> None:
    result = _invoke("score", f"vllm:{qwen}", GSM8K, "-o", tmp_path / "x.jsonl", "--convention", "qwen")
    assert result.exit_code == 2 and "pip install vllm" in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


def test_offline_engine_calls_match_vllms_documented_api(qwen: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A FAKE ``vllm`` module: this checks only that the calls prmkit makes use vLLM's documented names
    and arguments (``LLM(model, *, runner="pooling", pooler_config=PoolerConfig(tok_pooling_type="STEP",
    step_tag_id=...))``, ``PoolingParams(use_activation=False)``, ``LLM.encode(prompts, pooling_params=,
    *, use_tqdm, pooling_task="token_classify")`` with ``{"prompt_token_ids": ...}`` prompts and
    ``outputs.data`` read back), with keyword-only signatures as vLLM 0.33.0's, and that rows shaped as
    STEP pooling shapes them give local scores. It does not run vLLM: its numbers are the local model's."""
    import dataclasses

    import torch

    local = load_scorer(str(qwen))
    calls: dict[str, Any] = {}

    @dataclasses.dataclass
    class PoolerConfig:
        pooling_type: str | None = None
        seq_pooling_type: str | None = None
        tok_pooling_type: str | None = None
        step_tag_id: int | None = None
        returned_token_ids: list[int] | None = None
        use_activation: bool | None = None

    class PoolingParams:
        def __init__(
            self, *, use_activation=None, dimensions=None, step_tag_id=None, returned_token_ids=None
        ):
            self.use_activation = use_activation

    class LLM:
        def __init__(self, model: str, *, runner: str = "auto", pooler_config=None, dtype="auto",
                     trust_remote_code: bool = False, **kwargs: Any):  # fmt: skip
            calls["llm"] = {"model": model, "runner": runner, "pooler_config": pooler_config, "dtype": dtype}

        def encode(self, prompts, pooling_params=None, *, use_tqdm=True, lora_request=None,
                   pooling_task=None, tokenization_kwargs=None):  # fmt: skip
            calls["encode"] = {"params": pooling_params, "task": pooling_task, "prompts": prompts}
            tag = calls["llm"]["pooler_config"].step_tag_id
            out = []
            for p in prompts:
                ids = p["prompt_token_ids"]
                logits = local.forward(local.pad([Encoded(input_ids=ids, tag_positions=[])]))[0]
                rows = logits[torch.tensor(ids) == tag]
                out.append(SimpleNamespace(outputs=SimpleNamespace(data=rows)))
            return out

    fake, config = ModuleType("vllm"), ModuleType("vllm.config")
    fake.LLM, fake.PoolingParams, fake.config, config.PoolerConfig = LLM, PoolingParams, config, PoolerConfig
    monkeypatch.setitem(sys.modules, "vllm", fake)
    monkeypatch.setitem(sys.modules, "vllm.config", config)

    scorer = load_scorer(f"vllm:{qwen}", "qwen", dtype="float32")
    traces = read_traces(GSM8K)[:3]
    got = scorer.score(traces)
    tag = local.convention.tokenizer.convert_tokens_to_ids("<extra_0>")
    assert calls["llm"] == {"model": str(qwen), "runner": "pooling", "dtype": "float32",
                            "pooler_config": PoolerConfig(tok_pooling_type="STEP", step_tag_id=tag)}  # fmt: skip
    assert calls["encode"]["task"] == "token_classify" and calls["encode"]["params"].use_activation is False
    assert all(set(p) == {"prompt_token_ids"} for p in calls["encode"]["prompts"])
    for g, w in zip(got, local.score(traces), strict=True):
        assert g == pytest.approx(w, abs=1e-5)
