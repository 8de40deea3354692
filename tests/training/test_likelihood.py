"""The likelihood head: its objective against a plain loop, and a real checkpoint read three ways."""

from __future__ import annotations

import json
import math
import re

import pytest
import torch

from prmkit.core.render import step_inputs
from prmkit.training.data import IGNORE
from prmkit.training.likelihood import likelihood_loss, step_min_logp, step_targets_by_step


def _batch():
    """Two rows: prompt of 3 tokens then steps ending at the tags; row 1 is shorter and padded."""
    torch.manual_seed(0)
    ids = torch.randint(0, 20, (2, 12))
    tags = torch.zeros((2, 12), dtype=torch.bool)
    tags[0, [5, 8, 11]] = True
    tags[1, [4, 7]] = True
    targets = torch.full((2, 12), IGNORE)
    targets[0, [5, 8, 11]] = torch.tensor([1.0, 0.0, IGNORE])  # third step masked after the first error
    targets[1, [4, 7]] = torch.tensor([1.0, 0.25])  # a soft target
    batch = {
        "input_ids": ids,
        "tag_mask": tags,
        "step_targets": targets,
        "prompt_length": torch.tensor([3, 2]),
    }
    return torch.randn(2, 12, 20), batch


def _reference(logits, batch):
    logp = logits.log_softmax(-1)
    mins, means, ys = [], [], []
    for k in range(2):
        start = int(batch["prompt_length"][k])
        for end in batch["tag_mask"][k].nonzero()[:, 0].tolist():
            token = [logp[k, t - 1, batch["input_ids"][k, t]] for t in range(start, end + 1)]
            mins.append(torch.stack(token).min())
            means.append(torch.stack(token).mean())
            ys.append(float(batch["step_targets"][k, end]))
            start = end + 1
    return mins, means, ys


def test_step_minimum_and_targets_match_a_plain_loop():
    logits, batch = _batch()
    mins, sums, counts = step_min_logp(logits, batch)
    ref_mins, ref_means, ref_ys = _reference(logits, batch)
    have = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)]
    assert [float(mins[k, j]) for k, j in have] == pytest.approx([float(m) for m in ref_mins], abs=1e-6)
    assert [float(sums[k, j] / counts[k, j]) for k, j in have] == pytest.approx(
        [float(m) for m in ref_means], abs=1e-6
    )
    targets = step_targets_by_step(batch, mins.shape[1])
    assert [float(targets[k, j]) for k, j in have] == ref_ys
    assert float(targets[1, 2]) == IGNORE  # row 1 has no third step


def test_excess_surprisal_adds_each_predictions_entropy_to_the_minimum_not_to_the_lm_loss():
    """``surprisal: excess``: a step's minimum is of log p(x_t) + H(p_t) (a plain loop); its sum, the LM
    loss's, stays plain log-probabilities; the entropy is a fixed reference level (no gradient)."""
    logits, batch = _batch()
    mins, sums, _ = step_min_logp(logits, batch, "excess")
    logp = logits.log_softmax(-1)
    entropy = -(logp.exp() * logp).sum(-1)
    ref = []
    for k in range(2):
        start = int(batch["prompt_length"][k])
        for end in batch["tag_mask"][k].nonzero()[:, 0].tolist():
            ref.append(min(float(logp[k, t - 1, batch["input_ids"][k, t]] + entropy[k, t - 1])
                           for t in range(start, end + 1)))  # fmt: skip
            start = end + 1
    have = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)]
    assert [float(mins[k, j]) for k, j in have] == pytest.approx(ref, abs=1e-5)
    _, plain_sums, _ = step_min_logp(logits, batch)
    assert torch.equal(sums, plain_sums)
    # the gradient of a step's excess minimum is that of its argmin token's log-probability alone
    x = logits.clone().requires_grad_(True)
    step_min_logp(x, batch, "excess")[0][0, 0].backward()
    start, end = int(batch["prompt_length"][0]), 5
    excess = [
        float(logp[0, t - 1, batch["input_ids"][0, t]] + entropy[0, t - 1]) for t in range(start, end + 1)
    ]
    t = start + excess.index(min(excess))
    y = logits.clone().requires_grad_(True)
    y.log_softmax(-1)[0, t - 1, batch["input_ids"][0, t]].backward()
    assert torch.allclose(x.grad, y.grad, atol=1e-6)
    with pytest.raises(ValueError, match="surprisal"):
        step_min_logp(logits, batch, "typical")


def test_tool_result_tokens_are_left_out_of_each_step_minimum():
    logits, batch = _batch()
    context = torch.zeros_like(batch["tag_mask"])
    context[0, 6:8] = True  # row 0's second step (tokens 6..8) reads two tokens of results first
    mins, sums, counts = step_min_logp(logits, batch | {"context_mask": context})
    logp = logits.log_softmax(-1)
    own = torch.stack([logp[0, t - 1, batch["input_ids"][0, t]] for t in (8,)])
    assert float(mins[0, 1]) == pytest.approx(float(own.min()), abs=1e-6)
    assert float(counts[0, 1]) == 1 and float(sums[0, 1]) == pytest.approx(float(own.sum()), abs=1e-6)
    plain, _, _ = step_min_logp(logits, batch)
    same = [(0, 0), (0, 2), (1, 0), (1, 1)]
    assert [float(mins[k, j]) for k, j in same] == [float(plain[k, j]) for k, j in same]


def test_the_collator_marks_exactly_the_results_each_step_reads():
    from prmkit.core.model import Observation, Problem, Step, ToolCall, Trace
    from prmkit.core.render import RESPONSE_CLOSE
    from prmkit.modeling import StepTemplate, build_tokenizer
    from prmkit.training.data import StepCollator, make_examples

    call = ToolCall(name="lookup", arguments='{"crate": 7}', id="c1")
    seen = [Observation(content="crate 7: 9 apples", call_id="c1"), Observation(content="ok", call_id="c2")]
    steps = [Step(text="Look it up.", tool_calls=[call], observations=seen), Step(text="The answer is 9.")]
    trace = Trace(id="t", problem=Problem(id="p", text="Crate 7?"), steps=steps)
    tok = build_tokenizer(["Look it up. The answer is 9. crate apples lookup"], vocab_size=200)
    template = StepTemplate.named("newline")
    for skip in (True, False):
        rows = make_examples([trace], [[1.0, 1.0]], tok, template, 256, skip_context=skip)
        batch = StepCollator(tok.pad_token_id)(rows)
        marked = batch["input_ids"][0][batch["context_mask"][0]].tolist()
        if not skip:
            assert marked == []
            continue
        text = tok.decode(marked)
        assert text.replace(" ", "").startswith("<tool_response>") and text.rstrip().endswith(RESPONSE_CLOSE)
        assert "crate 7: 9 apples" in text and "ok" in text and "The answer" not in text


def test_loss_is_min_pooled_cross_entropy_plus_lm_loss_on_correct_steps():
    logits, batch = _batch()
    mins, means, ys = _reference(logits, batch)
    terms = [-(y * m + (1 - y) * torch.log1p(-m.exp())) for m, y in zip(mins, ys, strict=True) if y != IGNORE]
    lm = [-mean for mean, y in zip(means, ys, strict=True) if y != IGNORE and y >= 0.5]
    expected = torch.stack(terms).mean() + 0.5 * torch.stack(lm).mean()
    assert float(likelihood_loss(logits, batch, lm_weight=0.5)) == pytest.approx(float(expected), rel=1e-5)
    logits.requires_grad_(True)
    likelihood_loss(logits, batch, lm_weight=0.5).backward()
    assert torch.isfinite(logits.grad).all() and logits.grad.abs().sum() > 0


def test_label_noise_bounds_the_pull_of_confident_steps_labelled_the_other_way():
    from prmkit.training.loop import binary_loss

    # the model is sure step 0 is wrong, sure step 1 is right, unsure of step 2
    log_good = torch.log(torch.tensor([1e-4, 0.9, 0.5])).requires_grad_(True)
    log_bad = torch.log1p(-log_good.exp())
    ones, zeros = torch.ones(3), torch.zeros(3)

    def pull(y, noise, k):
        loss = binary_loss(log_good, log_bad, y, noise)[0][k]
        (grad,) = torch.autograd.grad(loss, log_good, retain_graph=True)
        return float(grad[k].abs())

    plain, trust0 = binary_loss(log_good, log_bad, ones, (0.0, 0.0))
    noisy, trust = binary_loss(log_good, log_bad, ones, (0.2, 0.0))
    assert float(plain[0].detach()) == pytest.approx(-math.log(1e-4))  # cross-entropy: the batch's biggest
    assert float(noisy[0].detach()) < -math.log(0.2)  # bounded: the label is explained as noise
    assert pull(ones, (0.2, 0.0), 0) < 0.01 * pull(ones, (0.0, 0.0), 0)
    # posterior that a "correct" step is correct: low for the confidently wrong step, ~1 for the right one
    assert trust0.tolist() == [1.0, 1.0, 1.0]
    assert float(trust[0]) < 1e-3 and float(trust[1]) > 0.97 and 0.8 < float(trust[2]) < 0.9
    # missed errors only: a "wrong" label keeps cross-entropy's gradient, shifted by a constant
    wrong, _ = binary_loss(log_good, log_bad, zeros, (0.2, 0.0))
    ref, _ = binary_loss(log_good, log_bad, zeros, (0.0, 0.0))
    assert (wrong - ref).detach().tolist() == pytest.approx([-math.log(0.8)] * 3, abs=1e-6)
    # false errors: a "wrong" label on a step the model is sure is right pulls less
    assert pull(zeros, (0.0, 0.1), 1) < 0.5 * pull(zeros, (0.0, 0.0), 1)
    # a proper likelihood: P(said correct) + P(said wrong) = 1 for any rates
    good, _ = binary_loss(log_good, log_bad, ones, (0.2, 0.1))
    bad, _ = binary_loss(log_good, log_bad, zeros, (0.2, 0.1))
    assert ((-good).exp() + (-bad).exp()).detach().tolist() == pytest.approx([1.0] * 3, abs=1e-6)


def test_likelihood_lm_loss_leaves_out_steps_the_noise_model_distrusts():
    logits, batch = _batch()
    plain = likelihood_loss(logits, batch, lm_weight=0.0, noise=(0.3, 0.0))
    with_lm = likelihood_loss(logits, batch, lm_weight=1.0, noise=(0.3, 0.0))
    _, means, ys = _reference(logits, batch)
    mins = _reference(logits, batch)[0]
    weights = [m.exp() / (m.exp() + (1 - m.exp()) * 0.3) for m, y in zip(mins, ys, strict=True) if y >= 0.5]
    nll = [-mean for mean, y in zip(means, ys, strict=True) if y >= 0.5]
    expected = torch.stack([w * n for w, n in zip(weights, nll, strict=True)]).mean()
    assert float(with_lm - plain) == pytest.approx(float(expected), rel=1e-4)


def test_classifier_step_loss_models_the_same_noise():
    from prmkit.training.loop import binary_loss, step_loss

    torch.manual_seed(0)
    logits = torch.randn(2, 5, 2)
    targets = torch.full((2, 5), IGNORE, dtype=torch.float)
    targets[0, [1, 3]] = torch.tensor([1.0, 0.0])
    targets[1, 4] = 1.0
    logp = logits[targets != IGNORE].log_softmax(-1)
    expected = binary_loss(logp[:, 1], logp[:, 0], targets[targets != IGNORE], (0.1, 0.05))[0].mean()
    assert float(step_loss(logits, targets, 2, (0.1, 0.05))) == pytest.approx(float(expected), rel=1e-6)
    assert float(step_loss(logits, targets, 2, (0.1, 0.05))) != pytest.approx(
        float(step_loss(logits, targets, 2))
    )


def test_label_noise_needs_two_classes():
    from prmkit.training import PrmConfig

    with pytest.raises(ValueError, match="2-class"):
        PrmConfig(num_classes=3, missed_error_rate=0.1)


@pytest.mark.slow
def test_likelihood_prm_is_an_ordinary_causal_lm_its_card_snippet_scores_the_same(tmp_path, small_world):
    from transformers import AutoModelForCausalLM

    from prmkit.modeling import TinyConfig
    from prmkit.scoring import load_scorer
    from prmkit.training import PretrainConfig, PrmConfig, pretrain_lm, train_prm

    tiny = TinyConfig(layers=1, width=64, heads=2, max_length=256, positions="rope")
    pretrain_lm(
        small_world, tmp_path / "lm", PretrainConfig(tiny=tiny, epochs=1, batch_size=16, resume=False)
    )
    cfg = PrmConfig(base_model=str(tmp_path / "lm"), head="likelihood", epochs=1, batch_size=16, eval_every=5)
    result = train_prm(small_world, tmp_path / "prm", cfg)
    assert result["dev"]["eval_first_error_f1"] is not None
    spec = AutoModelForCausalLM.from_pretrained(tmp_path / "prm").config.prmkit
    assert spec["head"] == "likelihood" and spec["min_over"] == "input"
    scorer = load_scorer(tmp_path / "prm")  # the convention comes from the checkpoint's spec
    assert scorer.convention.name == "likelihood" and scorer.convention.spec.threshold == pytest.approx(
        result["dev"]["eval_threshold"]
    )
    trace = small_world[0]
    ours = scorer.score([trace])[0]
    snippet = re.search(r"```python\n(.*?)```", (tmp_path / "prm" / "README.md").read_text(), re.S).group(1)
    snippet = snippet.replace('problem, steps = "...", ["step one", "step two"]', "")
    scope = {"problem": trace.problem.text, "steps": [s.text for s in trace.steps]}
    exec(snippet, scope)  # the model card's transformers-only recipe
    assert scope["step_scores"] == pytest.approx(ours, abs=1e-5)
    # the same weights read by excess surprisal: the scorer and the card's snippet still agree
    from prmkit.cards import write_model_card

    config = json.loads((tmp_path / "prm" / "config.json").read_text())
    config["prmkit"]["surprisal"] = "excess"
    (tmp_path / "prm" / "config.json").write_text(json.dumps(config))
    excess = load_scorer(tmp_path / "prm")
    assert excess.convention.surprisal == "excess"
    theirs = excess.score([trace])[0]
    assert theirs != pytest.approx(ours, abs=1e-3) and all(0 < x <= 1 for x in theirs)
    write_model_card(tmp_path / "prm", excess.convention.spec, None)
    snippet = re.search(r"```python\n(.*?)```", (tmp_path / "prm" / "README.md").read_text(), re.S).group(1)
    scope = {"problem": trace.problem.text, "steps": [s.text for s in trace.steps]}
    exec(snippet.replace('problem, steps = "...", ["step one", "step two"]', ""), scope)
    assert scope["step_scores"] == pytest.approx(theirs, abs=1e-5)


def test_an_agent_prm_trained_on_what_it_writes_is_read_that_way(tmp_path):
    """``min_over: own`` and ``surprisal: excess`` end to end on agent-world trajectories: the spec
    records them, the scorer reads each step's minimum after the tool results it reads, and dev
    evaluation used the same read-out."""
    from prmkit.modeling import TinyConfig
    from prmkit.scoring import load_scorer
    from prmkit.training import PrmConfig, train_prm
    from prmkit.worlds.registry import world

    traces = world("agentworld").traces(12, 2, 0, "train", None)
    tiny = TinyConfig(layers=1, width=32, heads=2, max_length=1024, positions="rope")
    cfg = PrmConfig(head="likelihood", min_over="own", surprisal="excess", tiny=tiny, max_steps=4,
                    batch_size=4, max_length=1024, eval_every=4, dev_fraction=0.25)  # fmt: skip
    result = train_prm(traces, tmp_path / "prm", cfg)
    scorer = load_scorer(tmp_path / "prm")
    assert scorer.convention.spec.min_over == "own" and scorer.convention.min_over == "own"
    assert scorer.convention.spec.surprisal == "excess" and scorer.convention.surprisal == "excess"
    reads = [t for t in traces if any(s.observations for s in t.steps)][:3]
    encoded = [scorer.convention.encode(t.problem.text, step_inputs(t.steps)) for t in reads]
    assert all(any(e.context_tokens) for e in encoded)
    scores = scorer.score(reads)
    assert all(
        len(s) == len(t.steps) and all(0 < x <= 1 for x in s) for s, t in zip(scores, reads, strict=True)
    )
    assert result["dev"]["eval_first_error_f1"] is not None
