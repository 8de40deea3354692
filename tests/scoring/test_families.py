"""Each released PRM family, scored by prmkit and by its model card's own snippet, on a tiny random model
of the real architecture with the real weight names (tests/scoring/released.py) and the real tokenizer
(tests/scoring/real_tokenizers.py; skipped without ``make vocab``): equal within 1e-5.

Each family's stand-in is built once per test run (tests/scoring/standins.py) and read by both its card test
and its ``prmkit eval processbench`` run (tests/scoring/test_families_processbench.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file

from prmkit.core.model import Problem, Step, Trace
from prmkit.scoring import load_scorer
from tests.scoring import released
from tests.scoring.real_tokenizers import llama3, mistral_7b, qwen25
from tests.scoring.standins import EURUS_CHAT, QWEN_PRM_TOKENS, standin

__all__ = ["QWEN_PRM_TOKENS"]  # tests/test_readme.py reads it here

QUESTION = (
    "Janet's ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins for her "
    "friends every day with four. She sells the remainder at the farmers' market daily for $2 per fresh duck "
    "egg. How much in dollars does she make every day at the farmers' market?"
)
STEPS = [
    "Step 1: Janet's ducks lay 16 eggs per day.",
    "Step 2: She eats 3 for breakfast, so she has 16 - 3 = 13 eggs left.",
    "Step 3: She bakes muffins with 4 eggs, so she has 13 - 4 = 9 eggs left.",
    "Step 4: She sells the remaining eggs for $2 each, so she makes 9 * $2 = $<<9*2=18>>18. The answer is: 18",
]


def traces() -> list[Trace]:
    problem = Problem(id="janet", text=QUESTION)
    return [
        Trace(id="full", problem=problem, steps=[Step(text=s) for s in STEPS]),
        Trace(id="short", problem=problem, steps=[Step(text=s) for s in STEPS[:2]]),
    ]


def test_math_shepherd_as_its_card_scores_it() -> None:
    folder = standin("math-shepherd")
    ours = load_scorer(f"math-shepherd:{folder}").score(traces())
    from transformers import AutoModelForCausalLM, AutoTokenizer

    # peiyi9979/math-shepherd-mistral-7b-prm's README, verbatim but for the names of the inputs
    good_token, bad_token, step_tag = "+", "-", "ки"
    tokenizer = AutoTokenizer.from_pretrained(folder)
    candidate_tokens = tokenizer.encode(f"{good_token} {bad_token}")[1:]  # [648, 387]
    step_tag_id = tokenizer.encode(f"{step_tag}")[-1]  # 12902
    assert (candidate_tokens, step_tag_id) == ([648, 387], 12902)
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    for trace, expected in zip(traces(), ours, strict=True):
        output = "\n".join(f"{s.text} {step_tag}" for s in trace.steps)
        input_for_prm = f"{QUESTION} {output}"
        input_id = torch.tensor([tokenizer.encode(input_for_prm)])
        with torch.no_grad():
            logits = model(input_id).logits[:, :, candidate_tokens]
            scores = logits.softmax(dim=-1)[:, :, 0]
            step_scores = scores[input_id == step_tag_id]
        assert step_scores.tolist() == pytest.approx(expected, abs=1e-5)
    spread = [s for row in ours for s in row]
    assert max(spread) - min(spread) > 1e-3  # the random model is not flat: the comparison has teeth


def test_rlhflow_as_its_reference_scores_it() -> None:
    folder = standin("rlhflow")
    scorer = load_scorer(f"rlhflow:{folder}")
    assert (scorer.convention.good_id, scorer.convention.bad_id) == (10, 12)  # not " -" (482)
    ours = scorer.score(traces())
    from transformers import AutoModelForCausalLM, AutoTokenizer

    # RLHFlow/RLHF-Reward-Modeling math-rm/prm_evaluate.py: one forward per growing conversation
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    plus_tag_id = tokenizer.encode("+")[-1]
    minus_tag_id = tokenizer.encode("-")[-1]
    candidate_tokens = [plus_tag_id, minus_tag_id]
    for trace, expected in zip(traces(), ours, strict=True):
        conversation, single_step_score = [], []
        ans_list = [s.text for s in trace.steps]
        for k in range(len(ans_list)):
            text = QUESTION + " " + ans_list[0] if k == 0 else ans_list[k]
            conversation.append({"content": text, "role": "user"})
            conversation.append({"content": "+", "role": "assistant"})
            input_ids = tokenizer.apply_chat_template(conversation, return_tensors="pt", return_dict=True)[
                "input_ids"
            ]
            with torch.no_grad():
                logits = model(input_ids).logits[:, -3, candidate_tokens]
                scores = logits.softmax(dim=-1)[:, 0]
                single_step_score.append(scores[0].item())
        assert single_step_score == pytest.approx(expected, abs=1e-5)
    spread = [s for row in ours for s in row]
    assert max(spread) - min(spread) > 1e-3


def qwen_reference(folder: Path, trace: Trace, tokenizer: Any, body: Any) -> list[float]:
    """Qwen/Qwen2.5-Math-PRM-7B's README: the chat, ``make_step_rewards``; the model's forward pass as its
    ``modeling_qwen2_rm.py`` computes it (the Qwen2 body, then score.0, ReLU, score.2), by hand."""

    def make_step_rewards(logits, token_masks):  # the card's, verbatim
        probabilities = F.softmax(logits, dim=-1)
        probabilities = probabilities * token_masks.unsqueeze(-1)  # bs, seq_len, num_labels
        all_scores_res = []
        for i in range(probabilities.size(0)):
            sample = probabilities[i]  # seq_len, num_labels
            positive_probs = sample[sample != 0].view(-1, 2)[:, 1]  # valid_tokens, num_labels
            non_zero_elements_list = positive_probs.cpu().tolist()
            all_scores_res.append(non_zero_elements_list)
        return all_scores_res

    data = {
        "system": "Please reason step by step, and put your final answer within \\boxed{}.",
        "query": trace.problem.text,
        "response": [s.text for s in trace.steps],
    }
    messages = [
        {"role": "system", "content": data["system"]},
        {"role": "user", "content": data["query"]},
        {"role": "assistant", "content": "<extra_0>".join(data["response"]) + "<extra_0>"},
    ]
    conversation_str = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=False)
    input_ids = tokenizer.encode(conversation_str, return_tensors="pt")
    head = load_file(str(folder / "model.safetensors"))
    with torch.no_grad():
        hidden = body(input_ids=input_ids).last_hidden_state
        hidden = F.relu(hidden @ head["score.0.weight"].T + head["score.0.bias"])
        logits = hidden @ head["score.2.weight"].T + head["score.2.bias"]
    step_sep_id = tokenizer.encode("<extra_0>")[0]
    token_masks = input_ids == step_sep_id
    return make_step_rewards(logits, token_masks)[0]


def test_qwen_as_its_card_scores_it() -> None:
    folder = standin("qwen")
    scorer = load_scorer(folder)  # detected from architectures; auto_map's code is not there, not needed
    assert scorer.convention.name == "qwen"
    ours = scorer.score(traces())
    from transformers import AutoTokenizer, Qwen2Model

    tokenizer, body = AutoTokenizer.from_pretrained(folder), Qwen2Model.from_pretrained(folder).eval()
    assert tokenizer.convert_tokens_to_ids("<extra_0>") == 151651  # vLLM's step_tag_id for Qwen PRMs
    for trace, expected in zip(traces(), ours, strict=True):
        assert qwen_reference(folder, trace, tokenizer, body) == pytest.approx(expected, abs=1e-5)
    spread = [s for row in ours for s in row]
    assert max(spread) - min(spread) > 1e-3


def test_skywork_as_its_reference_scores_it() -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = standin("skywork")  # Qwen2.5's tokenizer with Skywork's BOS (standins._skywork_tok)
    scorer = load_scorer(folder)  # detected: Qwen2ForPrmModel
    assert scorer.convention.name == "skywork"
    ours = scorer.score(traces())

    # SkyworkAI/skywork-o1-prm-inference model_utils/io_utils.py, verbatim
    def prepare_input(problem, response, tokenizer, step_token):
        prompt_ids = tokenizer.encode(tokenizer.bos_token + problem + "\n")
        response_ids = []
        steps = []
        reward_flags = [0] * len(prompt_ids)
        step_token_id = tokenizer.encode(step_token)[-1]
        for _idx, step in enumerate(response.split(step_token)):
            step_ids = tokenizer.encode(step) if step != "" else []
            step_ids += [step_token_id]
            step = step + step_token
            flag = [0] * len(step_ids)
            flag[-1] = 1
            response_ids.extend(step_ids)
            reward_flags.extend(flag)
            steps.append(step)
        input_ids = prompt_ids + response_ids
        return input_ids, steps, reward_flags

    def derive_step_rewards(rewards, reward_flags):
        batch_size = rewards.shape[0]
        batch_step_rewards = []
        for i in range(batch_size):
            rewards_indices = torch.nonzero(reward_flags[i] == 1).view(-1)
            step_rewards = [rewards[i][rewards_indices[j]].item() for j in range(len(rewards_indices))]
            batch_step_rewards.append(step_rewards)
        return batch_step_rewards

    tokenizer = AutoTokenizer.from_pretrained(folder)
    body = AutoModelForCausalLM.from_pretrained(folder).eval()  # PRM_MODEL's pretrained_model
    head = load_file(str(folder / "model.safetensors"))
    for trace, expected in zip(traces(), ours, strict=True):
        response = "\n".join(s.text for s in trace.steps)
        input_ids, _, reward_flags = prepare_input(trace.problem.text, response, tokenizer, "\n")
        with torch.no_grad():  # PRM_MODEL.forward(return_probs=True): v_head on hidden_states[-1], sigmoid
            hidden = body(torch.tensor([input_ids]), output_hidden_states=True).hidden_states[-1]
            value = (hidden @ head["v_head.summary.weight"].T + head["v_head.summary.bias"]).squeeze(-1)
            rewards = torch.sigmoid(value)
        assert derive_step_rewards(rewards, torch.tensor([reward_flags]))[0] == pytest.approx(
            expected, abs=1e-5
        )
    spread = [s for row in ours for s in row]
    assert max(spread) - min(spread) > 1e-3


def test_implicit_prm_as_its_card_scores_it() -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    prm, ref = standin("implicit")  # two Qwen2 LMs, EurusPRM's chat template (standins._eurus_tok)
    ours = load_scorer(f"implicit:{prm}", reference=str(ref), beta=0.05).score(traces())

    # EurusPRM's card (as PRIME-RL/ImplicitPRM eval/processbench.py runs it), coef = beta
    tokenizer = AutoTokenizer.from_pretrained(prm)
    model = AutoModelForCausalLM.from_pretrained(prm).eval()
    ref_model = AutoModelForCausalLM.from_pretrained(ref).eval()
    coef = 0.05

    def get_logps(model, inputs):
        logits = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"]).logits
        labels = inputs["labels"][:, 1:].clone().long()
        logits = logits[:, :-1, :]
        labels[labels == -100] = 0
        return torch.gather(logits.log_softmax(-1), dim=2, index=labels.unsqueeze(2)).squeeze(2)

    for trace, expected in zip(traces(), ours, strict=True):
        prompt = trace.problem.text
        steps = [s.text if s.text.startswith(f"Step {i + 1}:") else f"Step {i + 1}: " + s.text
                 for i, s in enumerate(trace.steps)]  # fmt: skip
        conversation = [
            {"role": "user", "content": prompt},
            {"role": "assistant", "content": "\n\n".join(steps)},
        ]
        input_ids = tokenizer.apply_chat_template(conversation, tokenize=True, add_generation_prompt=False,
                                                  return_tensors="pt", return_dict=True)["input_ids"]  # fmt: skip
        attention_mask = input_ids != tokenizer.pad_token_id
        step_last_tokens = []
        for step_num in range(0, len(steps) + 1):
            conv = tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}, {"role": "assistant", "content": "\n\n".join(steps[:step_num])}],
                tokenize=False, add_generation_prompt=False,
            )  # fmt: skip
            conv = conv.strip()
            if step_num != 0 and step_num != len(steps):
                conv += "\n\n"
            currect_ids = tokenizer.encode(conv, add_special_tokens=False)
            step_last_tokens.append(len(currect_ids) - 2)
        inputs = {"input_ids": input_ids, "attention_mask": attention_mask, "labels": input_ids}
        label_mask = torch.tensor(
            [[0] * step_last_tokens[0] + [1] * (input_ids.shape[-1] - step_last_tokens[0])]
        )
        step_last_tokens = torch.tensor([step_last_tokens])
        with torch.no_grad():
            per_token_logps = get_logps(model, inputs)
            ref_per_token_logps = get_logps(ref_model, inputs)
        raw_reward = per_token_logps - ref_per_token_logps
        beta_reward = coef * raw_reward * label_mask[:, 1:]
        beta_reward = beta_reward.cumsum(-1)
        beta_reward = beta_reward.gather(dim=-1, index=step_last_tokens[:, 1:])
        q = torch.logit(torch.tensor(expected, dtype=torch.float64))  # prmkit's score is sigmoid(q_t)
        assert beta_reward[0].tolist() == pytest.approx(q.tolist(), abs=1e-4)
    spread = [s for row in ours for s in row]
    assert max(spread) - min(spread) > 1e-3


def test_versaprm_as_its_evaluation_scores_it() -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = standin("versaprm")  # a Llama of the real architecture on Llama-3's real tiktoken ranks
    scorer = load_scorer(f"versaprm:{folder}")
    assert (scorer.convention.good_id, scorer.convention.bad_id, scorer.convention.tag_id) == (10, 12, 23535)
    ours = scorer.score(traces())

    # VersaPRM's evaluation (get_rewards_reasoning_step.py, prm_models/prm_llama.py), from its facts
    tokenizer = AutoTokenizer.from_pretrained(folder)
    assert tokenizer.encode(" \n\n\n\n", add_special_tokens=False) == [23535]  # the step tag, one token
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    candidate_tokens, step_tag_id = [12, 10], 23535  # "-", "+"
    for trace, expected in zip(traces(), ours, strict=True):
        steps = [s.text.strip().replace(" \n\n\n\n", "") for s in trace.steps]
        question = trace.problem.text.strip().replace(" \n\n\n\n", "")
        steps_all = f"{question} \n\n" + "".join(f"{step} \n\n\n\n" for step in steps)
        input_id = torch.tensor([tokenizer.encode(steps_all)])
        with torch.no_grad():
            logits = model(input_id).logits[:, :, candidate_tokens]
            scores = logits.softmax(dim=-1)[:, :, 1]
        assert scores[input_id == step_tag_id].tolist() == pytest.approx(expected, abs=1e-5)
    spread = [s for row in ours for s in row]
    assert max(spread) - min(spread) > 1e-3


def test_versaprm_refuses_a_tokenizer_that_splits_its_step_tag() -> None:
    from transformers import LlamaConfig

    from prmkit.core.errors import InputError
    from prmkit.scoring.families import VersaPRMConvention

    tokenizer = (
        mistral_7b()
    )  # not VersaPRM's: its " \n\n\n\n" is no single token, nowhere for the card to read
    pieces = tokenizer.encode(" \n\n\n\n", add_special_tokens=False)
    assert len(pieces) > 1
    with pytest.raises(InputError, match=r"step tag: expected .* as one token .*, found [0-9]+ tokens"):
        VersaPRMConvention(tokenizer, LlamaConfig(max_position_embeddings=512))
    VersaPRMConvention(llama3(), LlamaConfig(max_position_embeddings=512))  # its own tokenizer is read


def card_step_rewards(folder: Path, messages: list, tokenizer: Any, body: Any) -> list[float]:
    """Qwen's ``make_step_rewards`` (ReasonFlux's ``utils/rm_utils.py`` has the same) after the card's
    ``apply_chat_template`` + ``encode`` of ``messages``; the head by hand (score.0, ReLU, score.2)."""
    conversation_str = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=False)
    input_ids = tokenizer.encode(conversation_str, return_tensors="pt")
    head = load_file(str(folder / "model.safetensors"))
    with torch.no_grad():
        hidden = body(input_ids=input_ids).last_hidden_state
        hidden = F.relu(hidden @ head["score.0.weight"].T + head["score.0.bias"])
        logits = hidden @ head["score.2.weight"].T + head["score.2.bias"]
    probabilities = F.softmax(logits, dim=-1) * (input_ids == tokenizer.encode("<extra_0>")[0]).unsqueeze(-1)
    return probabilities[0][probabilities[0] != 0].view(-1, 2)[:, 1].tolist()


def test_reasonflux_as_its_card_scores_it_and_qwen_only_where_the_template_agrees() -> None:
    """ReasonFlux-PRM-7B's card: Qwen's head and ``make_step_rewards``, but the chat has no system turn, so
    the checkpoint's template writes its own default. ``qwen:`` (Qwen's system prompt) gives other scores,
    and the same ones only on a template whose default system turn is Qwen's prompt (Qwen2.5-Math's)."""
    from transformers import AutoTokenizer, Qwen2Model

    folder = standin("reasonflux")
    flux, qwen = load_scorer(f"reasonflux:{folder}"), load_scorer(f"qwen:{folder}")
    tokenizer, body = AutoTokenizer.from_pretrained(folder), Qwen2Model.from_pretrained(folder).eval()
    ours = flux.score(traces())
    for trace, expected in zip(traces(), ours, strict=True):
        messages = [
            {"role": "user", "content": trace.problem.text},
            {"role": "assistant", "content": "<extra_0>".join(s.text for s in trace.steps) + "<extra_0>"},
        ]
        assert card_step_rewards(folder, messages, tokenizer, body) == pytest.approx(expected, abs=1e-5)
    other = qwen.score(traces())
    assert max(abs(a - b) for x, y in zip(ours, other, strict=True) for a, b in zip(x, y, strict=True)) > 1e-3
    for scorer in (flux, qwen):  # a template whose default system turn is Qwen's own prompt
        scorer.convention.tokenizer.chat_template = EURUS_CHAT
    flat = [[s for row in scorer.score(traces()) for s in row] for scorer in (flux, qwen)]
    assert flat[0] == pytest.approx(flat[1], abs=1e-6)


ANSWER = "18"


def answered() -> list[Trace]:
    return [
        t.model_copy(update={"problem": t.problem.model_copy(update={"answer": ANSWER})}) for t in traces()
    ]


def test_universal_as_its_card_scores_it() -> None:
    """Universal-PRM-7B's card: the reference in the user turn, one forward per step prefix, the EOS id
    appended, ``sigmoid`` of the value there; the head (score.0, ReLU, score.2 = 1 x h) by hand."""
    from transformers import AutoTokenizer, Qwen2Model

    folder = standin("universal")
    scorer = load_scorer(f"universal:{folder}")
    ours = scorer.score(answered())
    tokenizer, body = AutoTokenizer.from_pretrained(folder), Qwen2Model.from_pretrained(folder).eval()
    head = load_file(str(folder / "model.safetensors"))
    for trace, expected in zip(answered(), ours, strict=True):
        steps = [s.text for s in trace.steps]
        question_wgt = trace.problem.text + "\n\n###\n\nThe reference answer is: " + ANSWER
        judge_list_infer = []
        for step_idx in range(1, len(steps) + 1):
            responses = "\n\n".join(steps[:step_idx]) + "\n\n"
            messages = [
                {"role": "system", "content": "You are a helpful assistant."},
                {"role": "user", "content": question_wgt},
            ]
            query_id = tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True,
                                                     return_dict=False)  # fmt: skip
            answer_tokens = tokenizer(responses)["input_ids"]
            answer_tokens += [tokenizer.eos_token_id]
            input_ids = torch.tensor([list(query_id) + answer_tokens]).long()
            with torch.no_grad():
                hidden = body(input_ids=input_ids).last_hidden_state[:, -1]
                hidden = F.relu(hidden @ head["score.0.weight"].T + head["score.0.bias"])
                value = hidden @ head["score.2.weight"].T + head["score.2.bias"]
            judge_list_infer.append(torch.sigmoid(value).item())
        assert judge_list_infer == pytest.approx(expected, abs=1e-5)
    spread = [s for row in ours for s in row]
    assert max(spread) - min(spread) > 1e-3
    # --overlong truncate keeps the prefixes that fit, each read as it is alone
    (enc,) = scorer.encode(answered()[:1])
    scorer.convention.max_length, scorer.overlong = enc.tag_positions[1], "truncate"
    assert scorer.score(answered()[:1]) == [pytest.approx(ours[0][:1], abs=1e-6)]


def test_universal_refuses_a_problem_without_its_answer_and_a_checkpoint_without_its_head(tmp_path) -> None:
    from prmkit.core.errors import InputError

    scorer = load_scorer(f"universal:{standin('universal')}")
    with pytest.raises(InputError) as err:
        scorer.score(traces())  # ProcessBench-style problems: no answer
    assert str(err.value).count(
        "\n"
    ) == 0 and "problem janet: answer: expected the problem's reference" in str(err.value)
    headless = released.universal_prm(tmp_path / "no-head", qwen25.shared(), head=False)
    with pytest.raises(InputError, match=r"missing from the checkpoint \(they would be random\): score\.0\.bias, "
                       r"score\.0\.weight, score\.2\.bias, score\.2\.weight"):  # fmt: skip
        load_scorer(f"universal:{headless}")
    with pytest.raises(InputError, match=r"of another shape: score\.2\.bias, score\.2\.weight"):
        load_scorer(f"universal:{standin('qwen')}")  # Qwen's two-class head is not a value head
