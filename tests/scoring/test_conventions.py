"""Each PRM convention against its reference read-out, on tiny random models built locally."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoModelForTokenClassification, AutoTokenizer

from prmkit.core.errors import InputError
from prmkit.core.model import Observation, Problem, Step, ToolCall, Trace
from prmkit.core.registry import UnknownNameError
from prmkit.core.render import context_length, step_inputs
from prmkit.modeling import PrmSpec, StepTemplate
from prmkit.modeling.spec import write_spec
from prmkit.scoring import load_scorer
from prmkit.scoring.conventions import CONVENTIONS


def test_registry_names_every_convention():
    assert CONVENTIONS.names() == [
        "critic", "implicit", "likelihood", "math-shepherd", "prmkit", "qwen", "rlhflow", "skywork", "trl"
    ]  # fmt: skip
    with pytest.raises(UnknownNameError, match="Did you mean 'qwen'"):
        CONVENTIONS.get("qwenn")


def test_trl_label_1_at_each_separator(classifier_model, traces):
    ours = load_scorer(classifier_model).score(traces)  # a plain token classifier reads as TRL
    tok = AutoTokenizer.from_pretrained(classifier_model)
    model = AutoModelForTokenClassification.from_pretrained(classifier_model).eval()
    for trace, expected in zip(traces, ours, strict=True):
        prompt = [tok.bos_token_id, *tok.encode(trace.problem.text, add_special_tokens=False)]
        ids, ends = list(prompt), []
        for (
            s
        ) in trace.steps:  # TRL 1.13's tokenize_row: prompt, then step ids + separator ids, label on the last
            ids += tok.encode(s.text, add_special_tokens=False) + tok.encode("\n", add_special_tokens=False)
            ends.append(len(ids) - 1)
        with torch.no_grad():
            probs = model(torch.tensor([ids])).logits[0].softmax(-1)
        assert probs[ends, 1].tolist() == pytest.approx(expected, abs=1e-5)


def test_math_shepherd_plus_over_minus_at_each_ki(causal_model, traces):
    ours = load_scorer(causal_model, "math-shepherd").score(traces)
    tok = AutoTokenizer.from_pretrained(causal_model)
    model = AutoModelForCausalLM.from_pretrained(causal_model).eval()
    good, bad = tok.encode("+ -", add_special_tokens=False)[-2:]
    tag = tok.encode("ки", add_special_tokens=False)[-1]
    for trace, expected in zip(traces, ours, strict=True):  # the model card's snippet
        text = f"{trace.problem.text} " + "\n".join(f"{s.text} ки" for s in trace.steps)
        ids = torch.tensor([tok.encode(text)])
        with torch.no_grad():
            scores = model(ids).logits[:, :, [good, bad]].softmax(-1)[:, :, 0]
        assert scores[ids == tag].tolist() == pytest.approx(expected, abs=1e-5)


def test_rlhflow_one_pass_equals_one_forward_per_step(causal_model, traces):
    ours = load_scorer(causal_model, "rlhflow").score(traces)
    tok = AutoTokenizer.from_pretrained(causal_model)
    model = AutoModelForCausalLM.from_pretrained(causal_model).eval()
    plus, minus = tok.encode("+")[-1], tok.encode("-")[-1]  # prm_evaluate.py's plus_tag_id, minus_tag_id
    for trace, expected in zip(traces, ours, strict=True):  # prm_evaluate.py: logits[:, -3] per prefix
        conversation, reference = [], []
        for k, step in enumerate(trace.steps):
            content = f"{trace.problem.text} {step.text}" if k == 0 else step.text
            conversation += [{"role": "user", "content": content}, {"role": "assistant", "content": "+"}]
            text = tok.apply_chat_template(conversation, tokenize=False)
            ids = torch.tensor([tok.encode(text, add_special_tokens=False)])
            with torch.no_grad():
                logits = model(ids).logits[:, -3, [plus, minus]]
            reference.append(logits.softmax(-1)[0, 0].item())
        assert reference == pytest.approx(expected, abs=1e-5)


def test_likelihood_is_the_lowest_token_probability_of_each_step(causal_model, traces):
    ours = load_scorer(causal_model, "likelihood").score(traces)
    tok = AutoTokenizer.from_pretrained(causal_model)
    model = AutoModelForCausalLM.from_pretrained(causal_model).eval()
    for trace, expected in zip(traces, ours, strict=True):  # one forward per prefix, whole-text encoding
        reference, before = [], trace.problem.text + "\n"
        for step in trace.steps:
            prefix = tok(before).input_ids
            ids = tok(before + step.text + "\n").input_ids
            with torch.no_grad():
                probs = model(torch.tensor([ids])).logits[0].softmax(-1)
            reference.append(min(probs[t - 1, ids[t]].item() for t in range(len(prefix), len(ids))))
            before += step.text + "\n"
        assert reference == pytest.approx(expected, abs=1e-5)


def test_a_causal_lm_needs_a_named_convention(causal_model):
    with pytest.raises(InputError, match=r"name the convention in the scorer: .*likelihood:PATH"):
        load_scorer(causal_model)


def test_a_fresh_head_on_a_causal_lm_loads_without_the_missing_weights_report(causal_model, capfd):
    from prmkit.modeling import token_classifier

    model = token_classifier(causal_model, 2)
    assert model.config.num_labels == 2
    assert "LOAD REPORT" not in capfd.readouterr().err  # expected MISSING score.* rows are not noise
    with pytest.raises(OSError):  # a real problem still raises
        token_classifier(causal_model.parent / "does-not-exist", 2)


def _agent_traces() -> list[Trace]:
    problem = Problem(id="a", text="How many apples are in crate 7?")
    call = ToolCall(name="lookup", arguments='{"crate": 7}', id="c1")
    result = Observation(content="crate 7: 9 apples", call_id="c1", name="lookup")
    steps = [
        Step(text="Look it up.", tool_calls=[call], observations=[result]),
        Step(text="The answer is 9."),
    ]
    return [Trace(id="a1", problem=problem, steps=steps, final_answer="9")]


def test_likelihood_of_an_agent_step_leaves_out_the_results_it_reads(causal_model, tmp_path):
    """Zero-shot (and ``min_over: own``): an agent step's minimum skips the tool result it reads; a
    checkpoint trained over whole inputs (``input``, the spec's default) is read over them."""
    trace = _agent_traces()[0]
    tok = AutoTokenizer.from_pretrained(causal_model)
    model = AutoModelForCausalLM.from_pretrained(causal_model).eval()
    write_spec(model.config, PrmSpec(head="likelihood", tag_id=StepTemplate.named("newline").tag_id(tok)))
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    scores = {
        "own": load_scorer(causal_model, "likelihood").score([trace])[0],
        "input": load_scorer(tmp_path, "likelihood").score([trace])[0],
    }
    for min_over, ours in scores.items():
        reference, before = [], trace.problem.text + "\n"
        for text in step_inputs(trace.steps):
            skip = context_length(text) if min_over == "own" else 0
            start = len(tok(before + text[:skip]).input_ids)
            ids = tok(before + text + "\n").input_ids
            with torch.no_grad():
                probs = model(torch.tensor([ids])).logits[0].softmax(-1)
            reference.append(min(probs[t - 1, ids[t]].item() for t in range(start, len(ids))))
            before += text + "\n"
        assert reference == pytest.approx(ours, abs=1e-5)
    assert scores["own"][0] == pytest.approx(scores["input"][0])  # the first step reads no result
    assert scores["own"][1] > scores["input"][1]  # this random LM's least likely token is in the result
