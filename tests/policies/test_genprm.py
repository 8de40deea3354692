"""GenPRM's format on the endpoint judge: its conversation, its request chain, its scores, its bounds."""

from __future__ import annotations

import inspect
import math

import pytest

from prmkit.core.model import Problem, Step, Trace
from prmkit.policies import load_judge

PROBLEM = Problem(id="p", text="Add 3 and 4, then double it.", answer="14")
STEPS = [Step(text="3 + 4 = 7."), Step(text="7 * 2 = 15."), Step(text="The answer is 15.")]

# GenPRM's strings, typed out here from RyanLiu112/GenPRM (prm_evaluate.py, genprm_inference.py), not
# imported: the test checks the module against them.
SYSTEM = (
    "You are a math teacher. Your task is to review and critique the paragraphs in solution step by step."
)
ANALYZE = "<analyze>\nLet's analyze the Paragraph {} step by step: "
VERIFY = "<verify>\nLet's use python code to find any potential error:\n```python\n"
OUTPUT = "<output>\n**Judgement**: $\\boxed"


def analysis(step: int, sample: int = 0) -> str:
    return f"Paragraph {step} computes a value (sample {sample}).\n</analyze>\n"


def check(verdict: str | None) -> str:
    box = "" if verdict is None else f"{OUTPUT}{{{verdict}}}$\n"
    return f"print(3 + 4)\n```\n[Code Output]\n\n```\n7\n```\n</verify>\n{box}</output>\n"


def tokens(verdict: str, p_verdict: float, rival: float | None) -> list[dict]:
    """Chat logprobs of an answer ending ``{verdict}}$``: the verdict token with its top logprobs."""
    other = "No" if verdict == "Yes" else "Yes"
    top = [{"token": verdict, "logprob": math.log(p_verdict)}, {"token": "Maybe", "logprob": math.log(0.01)}]
    if rival is not None:
        top.append({"token": other, "logprob": math.log(rival)})
    plain = [{"token": "print", "logprob": -0.1, "top_logprobs": []}] * 38
    verdict_token = {"token": verdict, "logprob": math.log(p_verdict), "top_logprobs": top}
    return [*plain, verdict_token, {"token": "}$", "logprob": -0.01, "top_logprobs": []}]


def parsed(content: list[dict]) -> list[tuple]:
    return [
        (t["token"], t["logprob"], {e["token"]: e["logprob"] for e in t["top_logprobs"]}) for t in content
    ]


class FakeGenPRM:
    """An OpenAI-compatible chat server answering as GenPRM would: ``verdicts[step - 1][sample]`` is
    each sample's judgement of a step (None: an answer with no box), ``logprobs[(step, sample)]`` the
    verdict token's probability and its rival's; ``short`` answers stop before ``</output>``. Every
    answer costs 40 tokens, as its 40 logprobs say."""

    def __init__(self, verdicts, logprobs=None, short=0):
        self.verdicts, self.logprobs, self.short = verdicts, logprobs or {}, short
        self.sent: list[dict] = []

    def post(self, path: str, payload: dict, max_bytes: int | None = None) -> dict:
        assert path == "/v1/chat/completions"
        self.sent.append(payload)
        prefill = payload["messages"][-1]["content"]
        step = int(prefill.split("Paragraph ")[1].split(" ")[0])
        if payload["stop"] == ["</analyze>\n"]:
            return self.answer([analysis(step, i) for i in range(payload["n"])])
        if self.short:
            self.short -= 1
            return self.answer(["x = 1\n"])
        sample = int(prefill.split("(sample ")[1].split(")")[0])
        verdict = self.verdicts[step - 1][sample]
        probs = self.logprobs.get((step, sample))
        return self.answer([check(verdict)], None if probs is None else tokens(verdict, *probs))

    @staticmethod
    def answer(texts: list[str], content: list[dict] | None = None) -> dict:
        plain = [{"token": "x", "logprob": -0.1, "top_logprobs": []}] * 40
        choices = [
            {
                "index": i,
                "message": {"content": text},
                "finish_reason": "stop",
                "logprobs": {"content": content or plain},
            }
            for i, text in enumerate(texts)
        ]
        return {"choices": choices, "usage": {"completion_tokens": 40 * len(texts)}}


def genprm_judge(monkeypatch, server: FakeGenPRM, **options):
    judge = load_judge(
        "endpoint",
        url="http://127.0.0.1:9",
        model="GenPRM-7B",
        verdict_format="genprm",
        temperature=0.6,
        **options,
    )
    monkeypatch.setattr(judge.client, "post", server.post)
    return judge


def test_each_step_is_asked_in_genprms_conversation(monkeypatch) -> None:
    server = FakeGenPRM([["Yes"], ["Yes"], ["Yes"]])
    verdict = genprm_judge(monkeypatch, server).judge(PROBLEM, STEPS)
    assert verdict.first_error == -1 and verdict.ratings == [1, 1, 1] and verdict.extra["scores"] == [1.0] * 3
    assert len(server.sent) == 6  # per step: the analysis, then the check and judgement
    first = ANALYZE.format(1) + analysis(1) + VERIFY + check("Yes")
    second = ANALYZE.format(2) + analysis(2) + VERIFY + check("Yes")
    # step 2's analysis: the earlier step answered by its verification, the step judged last (from 1)
    assert server.sent[2]["messages"] == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Add 3 and 4, then double it.\n3 + 4 = 7."},
        {"role": "assistant", "content": first},
        {"role": "user", "content": "7 * 2 = 15."},
        {"role": "assistant", "content": ANALYZE.format(2)},
    ]
    # its check and judgement continue the analysis after GenPRM's verify template
    assert server.sent[3]["messages"][-1] == {
        "role": "assistant",
        "content": ANALYZE.format(2) + analysis(2) + VERIFY,
    }
    assert server.sent[4]["messages"][4:6] == [
        {"role": "assistant", "content": second},
        {"role": "user", "content": "The answer is 15."},
    ]
    assert verdict.raw == first + second + ANALYZE.format(3) + analysis(3) + VERIFY + check("Yes")
    analyse, judge_ = server.sent[0], server.sent[1]
    assert analyse["stop"] == ["</analyze>\n"] and judge_["stop"] == ["</output>\n"]
    for payload in (analyse, judge_):
        assert payload["continue_final_message"] is True and payload["add_generation_prompt"] is False
        assert payload["include_stop_str_in_output"] is True and payload["top_logprobs"] == 20
        assert (payload["temperature"], payload["top_p"], payload["top_k"]) == (0.6, 0.95, 20)
    assert analyse["max_tokens"] == 2048 and judge_["max_tokens"] == 2048 - 40  # one budget per sample


def test_yes_no_and_no_box(monkeypatch) -> None:
    server = FakeGenPRM([["Yes"], ["No"], ["Yes"]])
    verdict = genprm_judge(monkeypatch, server).judge(PROBLEM, STEPS)
    assert verdict.first_error == 1 and verdict.ratings == [1, -1, None] and verdict.extra["status"] == "ok"
    assert verdict.extra["scores"] == [1.0, 0.0, None]
    assert len(server.sent) == 4  # nothing asked after the first step judged wrong
    # an answer with no box rates nothing and is never "correct"
    verdict = genprm_judge(monkeypatch, FakeGenPRM([[None], ["Yes"], ["Yes"]])).judge(PROBLEM, STEPS)
    assert (
        verdict.ratings == [None, 1, 1]
        and verdict.first_error is None
        and verdict.extra["status"] == "partial"
    )
    verdict = genprm_judge(monkeypatch, FakeGenPRM([[None]] * 3)).judge(PROBLEM, STEPS)
    assert verdict.ratings == [None] * 3 and verdict.extra["status"] == "unparseable"


def test_logprob_scores_as_genprm_computes_them(monkeypatch) -> None:
    from prmkit.policies.genprm import logprob_score, sample_score

    text = ANALYZE.format(1) + analysis(1) + VERIFY + check("Yes")
    assert logprob_score(text, parsed(tokens("Yes", 0.8, 0.15))) == pytest.approx(0.8 / 0.95)
    no_rival = parsed(tokens("Yes", 0.8, None))
    assert logprob_score(text, no_rival) == pytest.approx(0.8 / 0.81)  # the rival takes the smallest listed
    assert logprob_score(text.replace("{Yes}", "{No}"), no_rival) is None  # no "No" token: read from the text
    assert sample_score(text, None) == 1.0 and sample_score(text.replace("{Yes}", "{No}"), no_rival) == 0.0
    assert sample_score("no judgement", no_rival) is None
    # through the endpoint: a sampled No with P(No) = 0.7 scores 0.3; a Yes at 0.6 against 0.3 is right
    server = FakeGenPRM([["Yes"], ["No"]], logprobs={(1, 0): (0.6, 0.3), (2, 0): (0.7, 0.3)})
    verdict = genprm_judge(monkeypatch, server).judge(PROBLEM, STEPS[:2])
    assert verdict.extra["scores"] == pytest.approx([0.6 / 0.9, 0.3])
    assert verdict.ratings == [1, -1]


def test_k_samples_are_averaged(monkeypatch) -> None:
    server = FakeGenPRM([["Yes", "Yes", "No"], ["Yes", "No", "No"], ["Yes"] * 3])
    verdict = genprm_judge(monkeypatch, server, k=3).judge(PROBLEM, STEPS)
    assert verdict.extra["scores"] == pytest.approx([2 / 3, 1 / 3, None])
    assert verdict.ratings == [1, -1, None] and verdict.first_error == 1
    assert server.sent[0]["n"] == 3 and [p["n"] for p in server.sent[1:4]] == [1, 1, 1]
    # a sample with no box counts 0.5, as GenPRM's mean has it
    verdict = genprm_judge(monkeypatch, FakeGenPRM([["No", None]]), k=2).judge(PROBLEM, STEPS[:1])
    assert verdict.extra["scores"] == [0.25] and verdict.ratings == [-1]


def test_an_answer_that_stops_short_is_asked_again_with_no_code_run(monkeypatch) -> None:
    import prmkit.policies.genprm as genprm

    server = FakeGenPRM([["Yes"]], short=1)
    verdict = genprm_judge(monkeypatch, server).judge(PROBLEM, STEPS[:1])
    assert verdict.ratings == [1] and len(server.sent) == 3
    again = server.sent[2]["messages"][-1]["content"]
    assert again == ANALYZE.format(1) + analysis(1) + VERIFY + "x = 1\n" + "[Code Output]\n\n```\n"
    # at most three requests after the analysis; out of tokens, the judgement comes from the analysis alone
    server = FakeGenPRM([[None]], short=5)
    verdict = genprm_judge(monkeypatch, server, max_tokens=100).judge(PROBLEM, STEPS[:1])
    assert len(server.sent) == 4 and verdict.extra["status"] == "unparseable"
    last = server.sent[3]
    assert (
        last["messages"][-1]["content"] == ANALYZE.format(1) + analysis(1) + OUTPUT
        and last["max_tokens"] == 20
    )
    source = inspect.getsource(genprm)
    assert "exec(" not in source and "eval(" not in source


def test_a_trace_over_the_request_bound_is_refused_before_sending(monkeypatch) -> None:
    from prmkit.policies.endpoint import OverBudgetError

    server = FakeGenPRM([["Yes"] * 8] * 20)
    judge = genprm_judge(monkeypatch, server, k=8)
    with pytest.raises(OverBudgetError, match=r"20 steps x k=8 .* 640 .* over --judge-max-requests 512"):
        judge.judge(PROBLEM, [Step(text=f"step {i}") for i in range(20)])
    assert server.sent == []
    assert genprm_judge(monkeypatch, server, k=8, max_requests=640).max_requests == 640


def test_genprm_options_and_provenance(monkeypatch, tmp_path) -> None:
    from prmkit.labeling.judge import label_judge
    from prmkit.policies.options import JudgeOptions

    options = JudgeOptions(
        judge="endpoint", judge_url="http://127.0.0.1:9", judge_model="m", judge_format="genprm"
    )
    assert options.judge_temperature == 0.6  # GenPRM's, shown in the resolved config
    judge = options.build_judge()
    assert (judge.format, judge.k, judge.max_tokens, judge.max_requests) == ("genprm", 1, 2048, 512)
    base = {"judge": "endpoint", "judge_url": "http://127.0.0.1:9", "judge_model": "m"}
    with pytest.raises(ValueError, match="only used by --judge-format genprm"):
        JudgeOptions(**base, judge_format="thinkprm", judge_k=4)
    with pytest.raises(ValueError, match="needs a --judge-temperature above 0"):
        JudgeOptions(**base, judge_format="genprm", judge_k=4, judge_temperature=0.0)
    with pytest.raises(ValueError, match="takes no template"):
        JudgeOptions(**base, judge_format="genprm", judge_template=tmp_path / "t.txt")
    with pytest.raises(ValueError, match="only used by judge 'endpoint'"):
        JudgeOptions(judge="arithmetic", judge_k=2)
    assert "judge_k" not in JudgeOptions(**base).model_dump()  # earlier recipes keep their stage keys

    server = FakeGenPRM([["Yes", "Yes"], ["No", "Yes"]], logprobs={(1, 0): (0.9, 0.1)})
    judge = genprm_judge(monkeypatch, server, k=2, max_tokens=1024)
    traces, summary = label_judge([Trace(id="t", problem=PROBLEM, steps=STEPS[:2])], judge)
    assert summary["ok"] == 1  # a step's 0.5 is not below GenPRM's threshold: every step is right
    (first, second) = traces[0].steps
    settings = first.labels[0].provenance.params["settings"]
    assert settings == {
        "model": "GenPRM-7B", "temperature": 0.6, "max_tokens": 1024, "seed": 0, "format": "genprm",
        "template": "genprm", "k": 2, "top_p": 0.95, "top_k": 20, "top_logprobs": 20, "max_requests": 512,
    }  # fmt: skip
    assert first.labels[0].rating == 1 and first.labels[0].score == pytest.approx(0.95)
    assert second.labels[0].rating == 1 and second.labels[0].score == 0.5
