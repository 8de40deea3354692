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
        "critic", "implicit", "likelihood", "math-shepherd", "prmkit", "qwen", "reasonflux", "rlhflow",
        "skywork", "trl", "universal", "versaprm",
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


POSITIONS = 24
"""The position limit the checkpoints below declare (shorter than every trace of ``make_traces``)."""


def _declaring(name: str, field: str, tok):
    """A config of the kind the convention ``name`` reads that declares ``POSITIONS`` in ``field`` (a
    prmkit head in its ``prmkit`` block, any other in its architecture's position field)."""
    from transformers import GPT2Config, LlamaConfig

    if field == "n_positions":
        config = GPT2Config(vocab_size=len(tok), n_embd=8, n_layer=1, n_head=2, n_positions=POSITIONS)
    else:
        config = LlamaConfig(vocab_size=len(tok), hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                             max_position_embeddings=POSITIONS if field == "max_position_embeddings" else 10**6)  # fmt: skip
    if field == "prmkit.max_length":
        head = "critic" if name == "critic" else "likelihood" if name == "likelihood" else "classifier"
        write_spec(config, PrmSpec(head=head, tag_id=StepTemplate().tag_id(tok), max_length=POSITIONS))
    return config


WALK = {
    "prmkit": "prmkit.max_length",
    "critic": "prmkit.max_length",
    "trl": "max_position_embeddings",
    "likelihood": "n_positions",
    "qwen": "max_position_embeddings",
    "math-shepherd": "max_position_embeddings",
    "rlhflow": "n_positions",
    "skywork": "max_position_embeddings",
    "implicit": "max_position_embeddings",
    "versaprm": "max_position_embeddings",
    "reasonflux": "max_position_embeddings",
    "universal": "max_position_embeddings",
}
"""Each registered convention and the field its checkpoint declares its limit in here (a new convention
must join: the test below walks the registry)."""


@pytest.mark.parametrize("name", CONVENTIONS.names())
def test_every_convention_reads_the_limit_its_checkpoint_declares(name: str, traces):
    """Issue 66, item 2: the ``trl`` convention read every checkpoint at 4,096 tokens whatever it declared
    (512 declared; 2,945-token GSM8K traces scored, no overlong count). Every convention takes its limit
    from one rule (``declared_length``), and the scorer applies ``--overlong`` there."""
    from prmkit.scoring.scorer import LengthCounts, OverlongError, fit
    from tests.scoring.conftest import _tok
    from tests.scoring.real_tokenizers import llama3

    assert name in WALK, f"convention {name!r}: add the field its checkpoints declare a limit in to WALK"
    tok = (
        llama3.shared() if name == "versaprm" else _tok()
    )  # VersaPRM refuses a tokenizer that splits its tag
    convention = CONVENTIONS.get(name)(tok, _declaring(name, WALK[name], tok))
    assert (convention.max_length, convention.length_source) == (POSITIONS, WALK[name])
    trace = traces[0]
    (enc,) = convention.encode_many([(trace.problem.text, step_inputs(trace.steps))])
    assert len(enc.input_ids) > POSITIONS
    with pytest.raises(OverlongError, match=f"more than the limit of {POSITIONS}"):
        fit(trace, enc, convention.max_length, "error", LengthCounts(), convention.length_source)


def test_the_tokenizer_declares_where_the_config_does_not():
    from transformers import PretrainedConfig

    from prmkit.scoring.conventions import declared_length
    from tests.scoring.conftest import _tok

    tok, config = _tok(), PretrainedConfig()  # a config that declares no position limit
    tok.model_max_length = 40
    assert declared_length(tok, config) == (40, "the tokenizer's model_max_length")
    tok.model_max_length = int(1e30)  # transformers' "no limit"
    assert declared_length(tok, config, 4096)[0] == 4096


def test_a_trl_checkpoint_is_cut_at_its_declared_positions(classifier_model, traces, tmp_path):
    """``prmkit score`` on a TRL-style token classifier declaring 24 positions: refused at 24 under the
    default ``--overlong error``, counted under ``skip`` (before the fix: every trace scored)."""
    import json
    import shutil

    from typer.testing import CliRunner

    from prmkit.cli import app
    from prmkit.core.dataset import write_traces

    folder = tmp_path / "trl"
    shutil.copytree(classifier_model, folder)
    config = json.loads((folder / "config.json").read_text())
    config["max_position_embeddings"] = POSITIONS
    (folder / "config.json").write_text(json.dumps(config))
    write_traces(tmp_path / "traces.jsonl", traces)
    run = CliRunner().invoke(app, ["score", str(folder), str(tmp_path / "traces.jsonl"), "-o",
                                   str(tmp_path / "a.jsonl")])  # fmt: skip
    assert run.exit_code == 2 and "Traceback" not in run.output, run.output
    assert f"more than the limit of {POSITIONS} (max_position_embeddings of {folder})" in run.output
    run = CliRunner().invoke(app, ["score", str(folder), str(tmp_path / "traces.jsonl"), "-o",
                                   str(tmp_path / "b.jsonl"), "--overlong", "skip"])  # fmt: skip
    assert run.exit_code == 0, run.output
    assert f"longer than {POSITIONS} tokens" in run.output and f"{len(traces)} trace(s) skipped" in run.output
