"""Generative-verdict scorers (``thinkprm:``, ``genprm:``): ThinkPRM's prompt byte for byte, its P(yes)
to the last digit through a loopback stub, its ranking in ``prmkit bon`` and ``prmkit beam``; GenPRM's
K sampled verdicts per step averaged as its docstring says; the verifier budget refused before any
request, and the local transformers path's logprob math (ThinkPRM's choices, GenPRM's top logprobs)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.core.dataset import write_jsonl
from prmkit.core.errors import InputError
from prmkit.core.model import Step, Trace
from prmkit.scoring.forms import load_scorer
from prmkit.scoring.thinkprm import ThinkPRMOptions, decision_probability, stop_strings
from prmkit.scoring.verdict_backends import healed_mean
from prmkit.scoring.verdicts import GenPRMOptions, load_genprm, load_thinkprm
from prmkit.worlds.arithmetic import generate_problems
from prmkit.worlds.registry import world
from tests.scoring.verdict_stub import CHAIN, VerdictStub, make_app
from tests.serving.conftest import run_server

TEMPLATE = (
    "{% for m in messages %}<|user|>{{ m['content'] }}{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


@pytest.fixture(scope="module")
def verifier(tmp_path_factory) -> str:
    """A tiny random causal LM whose tokenizer has a chat template: the stub names it as its model."""
    from transformers import AutoTokenizer

    from prmkit.testing import make_random_prm

    path = make_random_prm(tmp_path_factory.mktemp("thinkprm"), head="critic")
    tok = AutoTokenizer.from_pretrained(path)
    tok.chat_template = TEMPLATE
    tok.save_pretrained(path)
    return path


def trace(problem_text: str, steps: list[str]) -> Trace:
    from prmkit.core.model import Problem

    return Trace(id="t", problem=Problem(id="p", text=problem_text), steps=[Step(text=s) for s in steps])


def test_the_prompt_is_thinkprms_byte_for_byte_and_p_yes_is_exact(verifier: str) -> None:
    stub = VerdictStub(verifier, yes=lambda prompt: 0.9 if "7 + 5 = 12" in prompt else 0.2)
    options = ThinkPRMOptions(n=3, temperature=0.4, max_tokens=64)
    with run_server(make_app(stub)) as url:
        scorer = load_thinkprm(f"thinkprm:{url}", options=options)
        scores = scorer.score([trace("What is 7 + 5?", ["Step 1: 7 + 5 = 12.", "The answer is 12."])])
    expected_prompt = (
        "<|user|>You are given a math problem and a proposed step-by-step solution:\n\n"
        "[Math Problem]\n\nWhat is 7 + 5?\n\n"
        "[Solution]\n\nStep 1: 7 + 5 = 12.\nStep 2: The answer is 12.\n\n"
        "Review and critique each step in the proposed solution to determine whether each step is correct. "
        "If the solution is incomplete, only verify the provided steps.<|assistant|>\n"
        "Let's verify step by step:"
    )
    chain, *decides = stub.payloads  # one request for the 3 chains, then one per chain's decision
    assert chain["prompt"] == expected_prompt and chain["n"] == 3 and chain["temperature"] == 0.4
    assert chain["max_tokens"] == 64
    eos = chain["stop"][1]
    assert chain["stop"] == ["Is the solution correct?", eos, "</think>", "Step 3:"]
    forced = expected_prompt + CHAIN + "\nIs the solution correct? "
    assert len(decides) == 3
    for decide in decides:
        assert decide["prompt"] == [forced, forced + "yes", forced + "no"] and decide["echo"] is True
    # p(yes) = 0.9 and p(no) = 0.1 after the forced question: the softmax of their logprobs, mean of 3
    assert scores == [[pytest.approx(0.9, abs=1e-12)] * 2]


def test_decision_temperature_and_the_sglang_choice_rule() -> None:
    assert decision_probability([math.log(0.9), math.log(0.1)], 1.0) == pytest.approx(0.9)
    # at T = 2 the odds 9:1 become 3:1
    assert decision_probability([math.log(0.9), math.log(0.1)], 2.0) == pytest.approx(0.75)
    # SGLang's select: the mean from the token replacing the text's last one, past a None
    assert healed_mean([None, -1.0, -2.0, -0.5], prompt_len=3) == -2.0 / 2 - 0.5 / 2
    assert healed_mean([None, -3.0], prompt_len=1) == -3.0


def test_the_step_stop_keeps_upstreams_max_over_strings() -> None:
    prompt = "\n".join(f"Step {i}: x" for i in range(1, 11))
    assert stop_strings(prompt, None, True)[-1] == "Step 10:"  # max("1".."10") is "9" upstream
    assert stop_strings("Step 1: x\nStep 2: y", "<eos>", False) == [
        "Is the solution correct?", "<eos>", "</think>"
    ]  # fmt: skip


def test_per_prefix_scores_and_the_budget_refused_before_any_request(verifier: str) -> None:
    stub = VerdictStub(verifier, yes=lambda prompt: 0.3 if "wrong" in prompt else 0.7)
    t = trace("Q?", ["right", "wrong", "right again"])
    with run_server(make_app(stub)) as url:
        prefix = load_thinkprm(f"thinkprm:{url}", options=ThinkPRMOptions(per_step="prefix", max_tokens=8))
        assert prefix.score([t]) == [[pytest.approx(0.7), pytest.approx(0.3), pytest.approx(0.3)]]
        stub.payloads.clear()
        options = ThinkPRMOptions(max_tokens=100, max_verifier_tokens=250)
        scorer = load_scorer(f"thinkprm:{url}", options=options, verify_k=2, verify_temperature=0.5)
        with pytest.raises(InputError, match=r"verifier budget: expected at most 250 tokens.*found 400"):
            scorer.score([t, t])  # 2 traces x 1 verification x k 2 x 100 tokens
    assert stub.payloads == []


def _oracle_yes(problems):
    """P(yes) 0.9 for a solution the world's checker finds no error in, else 0.1."""
    by_text = {p.text: p for p in problems}
    oracle = world("arithmetic").oracle()

    def yes(prompt: str) -> float:
        problem = by_text[re.search(r"\[Math Problem\]\n\n(.*?)\n\n\[Solution\]", prompt, re.S)[1]]
        solution = re.search(r"\[Solution\]\n\n(.*?)\n\nReview and critique", prompt, re.S)[1]
        steps = [Step(text=re.sub(r"^Step \d+: ", "", line)) for line in solution.split("\n")]
        (scores,) = oracle.score([Trace(id="x", problem=problem, steps=steps)])
        return 0.9 if min(scores) == 1 else 0.1

    return yes


@pytest.mark.parametrize(
    "args",
    [
        ["bon", "--n", "4", "--aggregation", "last"],
        ["beam", "--n", "4", "--beam-width", "2", "--aggregation", "last"],
    ],
)
def test_thinkprm_ranks_in_bon_and_beam_as_the_oracle_does(verifier: str, tmp_path: Path, args) -> None:
    problems = generate_problems(6, seed=1, split="test")
    path = tmp_path / "problems.jsonl"
    write_jsonl(path, problems)
    stub = VerdictStub(verifier, yes=_oracle_yes(problems))
    rows = {}
    with run_server(make_app(stub)) as url:
        for scorer in (f"thinkprm:{url}", "arithmetic-oracle"):
            out = tmp_path / f"{scorer[:8]}.jsonl"
            result = CliRunner().invoke(
                app, [args[0], str(path), "--out", str(out), "--scorer", scorer, *args[1:], "--limit", "4"]
            )
            assert result.exit_code == 0, result.output
            rows[scorer[:8]] = [json.loads(line)["answer"] for line in out.read_text().splitlines()]
    assert rows["thinkprm"] == rows["arithmet"] and len(rows["thinkprm"]) == 4
    assert stub.payloads, "the stub was asked"


def test_bon_takes_thinkprms_default_chain_length_as_verify_tokens(verifier: str, tmp_path: Path) -> None:
    """``--verify-tokens`` reaches 8,172 (ThinkPRM's chain) and past; above 32,768 it is refused."""
    path = tmp_path / "problems.jsonl"
    write_jsonl(path, generate_problems(1, seed=1, split="test"))
    stub = VerdictStub(verifier)
    with run_server(make_app(stub)) as url:
        args = [
            "bon",
            str(path),
            "--out",
            str(tmp_path / "out.jsonl"),
            "--scorer",
            f"thinkprm:{url}",
            "--n",
            "2",
        ]
        result = CliRunner().invoke(app, [*args, "--verify-tokens", "8172"])
        assert result.exit_code == 0, result.output
        assert {p["max_tokens"] for p in stub.payloads if not p.get("echo")} == {8172}
        stub.payloads.clear()
        refused = CliRunner().invoke(app, [*args, "--verify-tokens", "32769"])
    assert refused.exit_code != 0 and "32768" in refused.output.replace(",", "") and not stub.payloads


def test_the_local_path_reads_the_forced_question_by_one_forward(verifier: str) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    scorer = load_thinkprm(f"thinkprm:{verifier}", options=ThinkPRMOptions(max_tokens=6), device="cpu")
    t = trace("Ann has 3 apples.", ["She has 3 apples.", "The answer is 3."])
    (scores,) = scorer.score([t])
    backend = scorer.backend
    prompt = backend.render([{"role": "user", "content": "x"}], "\nLet's verify step by step:")
    assert prompt == "<|user|>x<|assistant|>\nLet's verify step by step:"
    # the same score by hand: greedy chain, then log P(choice) at the token replacing the text's last
    tok = AutoTokenizer.from_pretrained(verifier)
    model = AutoModelForCausalLM.from_pretrained(verifier).eval()
    from prmkit.scoring.thinkprm import thinkprm_messages

    full = backend.render(thinkprm_messages(t.problem.text, t.steps), "\nLet's verify step by step:")
    (chain,) = backend.complete(full, 1, ["Is the solution correct?"], 6, temperature=0.0, seed=0)
    text = full + chain.text + "\nIs the solution correct? "
    n = len(tok(text, add_special_tokens=False).input_ids)
    means = []
    for choice in ("yes", "no"):
        ids = tok(text + choice, add_special_tokens=False).input_ids
        with torch.inference_mode():
            logp = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), -1)
        means.append(sum(float(logp[i - 1, ids[i]]) for i in range(n - 1, len(ids))) / (len(ids) - n + 1))
    p = math.exp(means[0]) / (math.exp(means[0]) + math.exp(means[1]))
    assert scores == [pytest.approx(p, abs=1e-5)] * 2


ANALYZE_2 = "<analyze>\nLet's analyze the Paragraph 2 step by step: "


def _genprm_answers(table: dict[tuple[int, int], tuple[str, dict[str, float] | None]]):
    """A GenPRM verifier: the analysis request's samples tagged ``[A step.j]``, and each sample's verify
    request answered, up to ``</output>``, by ``table[step, j]``: what its ``\\boxed{}`` holds ("Yes",
    "No", or "": no verdict) and the top logprobs at that token (None: the server gives no logprobs)."""

    def tokens(parts: list[tuple[str, dict[str, float]]]) -> dict:
        offsets = [sum(len(t) for t, _ in parts[:i]) for i in range(len(parts))]
        return {"tokens": [t for t, _ in parts], "text_offset": offsets,
                "token_logprobs": [top.get(t, -0.01) for t, top in parts],
                "top_logprobs": [top for _, top in parts]}  # fmt: skip

    def answer(body: dict) -> list[dict]:
        prompt = body["prompt"]
        if prompt.endswith(" step by step: "):  # the analysis, k samples in one request
            step = int(re.findall(r"Paragraph (\d+) step by step: ", prompt)[-1])
            texts = [f"[A{step}.{j}] checked.</analyze>\n" for j in range(body["n"])]
            return [{"text": t, "finish_reason": "stop", "logprobs": tokens([(t, {})])} for t in texts]
        step, j = map(int, re.findall(r"\[A(\d+)\.(\d+)\]", prompt)[-1])
        decision, top = table[step, j]
        head, tail = "print(1)\n```\n</verify>\n<output>\n**Judgement**: $\\boxed{", "}$\n"
        text = head + decision + tail + "</output>\n"
        parts = [(head, {}), (decision, top or {}), (tail, {}), ("</output>\n", {})]
        return [{"text": text, "finish_reason": "stop", "logprobs": tokens(parts) if top else None}]

    return answer


def test_genprm_averages_k_sampled_verdicts_per_step_through_an_endpoint(verifier: str) -> None:
    """A step's score is the mean of its K samples' P(Yes) / (P(Yes) + P(No)) at the decision token, a
    rival absent from the top logprobs taking the smallest listed, 1 / 0 for a box without logprobs, 0.5
    for a sample without a verdict; a step with no verdict in any sample scores 0.5."""
    log = math.log
    table = {
        (1, 0): ("Yes", {"Yes": log(0.8), "No": log(0.2)}),  # 0.8
        (1, 1): ("No", {"No": log(0.6), "Yes": log(0.3)}),  # 0.3 / 0.9
        (1, 2): ("", None),  # no verdict: 0.5
        **{(2, j): ("", None) for j in range(3)},  # no sample has a verdict: the step scores 0.5
        (3, 0): ("Yes", None),  # a box without logprobs: 1.0
        (3, 1): ("No", None),  # 0.0
        (3, 2): ("Yes", {"Yes": log(0.7), " maybe": log(0.05)}),  # "No" not listed: 0.7 / (0.7 + 0.05)
    }
    stub = VerdictStub(verifier, answer=_genprm_answers(table))
    t = trace("What is 7 + 5?", ["7 + 5 = 12.", "So 12.", "The answer is 12."])
    with run_server(make_app(stub)) as url:
        scorer = load_scorer(f"genprm:{url}", verify_k=3, verify_temperature=0.6, verify_tokens=64)
        assert scorer.name == f"genprm:{url}/{verifier}"
        (scores,) = scorer.score([t])
    step1 = (0.8 + 0.3 / 0.9 + 0.5) / 3
    step3 = (1.0 + 0.0 + 0.7 / 0.75) / 3
    assert scores == [pytest.approx(step1, abs=1e-12), 0.5, pytest.approx(step3, abs=1e-12)]
    # per step: one request for the K analyses, then one verify request per sample
    assert [p["n"] for p in stub.payloads] == [3, 1, 1, 1] * 3
    first = stub.payloads[0]
    assert first["temperature"] == 0.6 and first["top_p"] == 0.95 and first["top_k"] == 20
    assert first["logprobs"] == 20 and first["stop"] == ["</analyze>\n"] and first["max_tokens"] == 64
    assert first["include_stop_str_in_output"] is True
    assert first["prompt"].startswith("<|user|>You are a math teacher.")
    assert first["prompt"].endswith(
        "<|user|>What is 7 + 5?\n7 + 5 = 12.<|assistant|><analyze>\nLet's analyze the Paragraph 1 step by step: "
    )
    verify = stub.payloads[1]
    assert verify["stop"] == ["</output>\n"] and verify["max_tokens"] == 64 - 1  # the analysis cost 1 token
    # the next step's conversation carries the first sample's verification of the step before (the
    # template writes every turn as <|user|>)
    verification = "<analyze>\nLet's analyze the Paragraph 1 step by step: [A1.0] checked.</analyze>\n"
    second = stub.payloads[4]["prompt"]
    assert f"7 + 5 = 12.<|user|>{verification}<verify>" in second
    assert second.endswith("$\\boxed{Yes}$\n</output>\n<|user|>So 12.<|assistant|>" + ANALYZE_2)


def test_genprms_budget_is_refused_before_any_request(verifier: str) -> None:
    stub = VerdictStub(verifier, answer=_genprm_answers({}))
    t = trace("Q?", ["a", "b", "c"])
    with run_server(make_app(stub)) as url:
        options = GenPRMOptions(max_verifier_tokens=1000)
        scorer = load_scorer(f"genprm:{url}", options=options, verify_k=2, verify_tokens=100)
        assert scorer.budget([t]) == 3 * 2 * 100  # one verification per step, K samples of max_tokens
        with pytest.raises(InputError, match=r"verifier budget: expected at most 1,000 tokens.*found 1,200"):
            scorer.score([t, t])
    assert stub.payloads == []


def test_genprms_local_path_reports_the_drawn_tokens_top_logprobs(verifier: str, monkeypatch) -> None:
    """Locally each sample's tokens are the ones drawn, each with its logprob and top logprobs from one
    forward pass over them; a random model writes no box, so every step scores 0.5."""
    import torch

    scorer = load_genprm(f"genprm:{verifier}", device="cpu", verify_k=2, verify_tokens=12)
    backend = scorer.backend
    drawn = []
    generate = backend.model.generate
    monkeypatch.setattr(backend.model, "generate", lambda **kw: drawn.append(out := generate(**kw)) or out)
    prompt = "Ann has 3 apples. She"
    samples = backend.complete(
        prompt, 2, ["</analyze>\n"], 8, temperature=0.6, seed=3, top_k=20, top_logprobs=5
    )
    tok, ids = backend.tokenizer, backend._ids(prompt)
    recoded = 0
    for row, sample in enumerate(samples):
        new = drawn[0].sequences[row, len(ids) :].tolist()
        assert sample.text == tok.decode(new) and sample.spent == len(new) == len(sample.tokens) == 8
        recoded += backend._ids(sample.text) != new  # byte pieces: re-encoding the text gives other tokens
        with torch.inference_mode():
            logp = torch.log_softmax(backend.model(torch.tensor([ids + new])).logits[0].float(), -1)
        for i, (text, value, top) in enumerate(sample.tokens):
            at = logp[len(ids) + i - 1]
            assert text == tok.decode([new[i]]) and value == pytest.approx(float(at[new[i]]), abs=1e-4)
            best = {tok.decode([int(j)]): float(v) for v, j in zip(*at.topk(5), strict=True)}
            assert top == pytest.approx(best, abs=1e-4)
    assert recoded, "the seed draws byte pieces, the case re-encoding miscounts"
    t = trace("Ann has 3 apples.", ["She has 3 apples.", "The answer is 3."])
    assert scorer.score([t]) == [[0.5, 0.5]]
