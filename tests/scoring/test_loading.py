"""Strict loading: every convention refuses a checkpoint whose head it would have to make up or leave
behind, naming the keys and the convention that would read them; a ``.bin`` loads only through torch's
safe loader; the causal-LM conventions read big vocabularies in slices with the same scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.core.dataset import write_traces
from prmkit.core.errors import InputError
from prmkit.scoring import conventions, load_scorer
from tests.scoring import released
from tests.scoring.conftest import CHAT, _tok


def flat(rows: list[list[float]]) -> list[float]:
    return [s for row in rows for s in row]


def refusal(spec: str) -> str:
    with pytest.raises(InputError) as err:
        load_scorer(spec)
    return str(err.value)


@pytest.fixture(scope="module")
def qwen(tmp_path_factory) -> Path:
    tok = _tok()
    tok.chat_template = CHAT
    return released.qwen_prm(tmp_path_factory.mktemp("qwen") / "prm", tok)


@pytest.fixture(scope="module")
def untied_lm(tmp_path_factory) -> Path:
    return released.causal_lm(
        tmp_path_factory.mktemp("lm") / "lm", _tok(), "llama", tie_word_embeddings=False
    )


def _without(src: Path, dst: Path, drop: str) -> Path:
    """A copy of checkpoint ``src`` whose weights starting with ``drop`` are gone."""
    dst.mkdir(parents=True)
    for f in src.iterdir():
        if f.is_file() and f.name != "model.safetensors":
            (dst / f.name).write_bytes(f.read_bytes())
    weights = {k: v for k, v in load_file(str(src / "model.safetensors")).items() if not k.startswith(drop)}
    save_file(weights, str(dst / "model.safetensors"))
    return dst


def test_a_qwen_prm_read_as_a_token_classifier_is_refused_naming_qwen(qwen: Path) -> None:
    text = refusal(f"trl:{qwen}")
    assert "score.bias, score.weight" in text and "missing from the checkpoint" in text
    assert "score.0.bias, score.0.weight, score.2.bias, score.2.weight" in text and "unused" in text
    assert "read it as qwen:PATH" in text


def test_a_token_classifier_read_as_qwen_is_refused_naming_its_readers(classifier_model: Path) -> None:
    text = refusal(f"qwen:{classifier_model}")
    assert "score.0.bias, score.0.weight, score.2.bias, score.2.weight" in text
    assert "read it as prmkit:PATH or trl:PATH" in text


def test_a_prmkit_checkpoint_without_its_head_is_refused(prmkit_model: Path, tmp_path: Path) -> None:
    text = refusal(str(_without(prmkit_model, tmp_path / "prm", "score.")))
    assert "the weights a prmkit model has" in text and "score.bias, score.weight" in text


def test_a_head_of_another_shape_is_refused(classifier_model: Path, tmp_path: Path) -> None:
    folder = _without(classifier_model, tmp_path / "three", "nothing")
    config = json.loads((folder / "config.json").read_text())
    config["id2label"] = {"0": "a", "1": "b", "2": "c"}
    config["label2id"] = {"a": 0, "b": 1, "c": 2}
    (folder / "config.json").write_text(json.dumps(config))
    text = refusal(str(folder))
    assert "of another shape: score.bias, score.weight" in text


@pytest.mark.parametrize("family", ["math-shepherd", "rlhflow", "likelihood"])
def test_causal_conventions_refuse_what_is_not_their_lm(family: str, classifier_model: Path, untied_lm: Path,
                                                        tmp_path: Path) -> None:  # fmt: skip
    text = refusal(f"{family}:{classifier_model}")  # a token classifier: its head unused
    assert "unused" in text and "score.bias, score.weight" in text and "prmkit:PATH or trl:PATH" in text
    text = refusal(f"{family}:{_without(untied_lm, tmp_path / 'no-lm-head', 'lm_head.')}")
    assert "missing from the checkpoint (they would be random): lm_head.weight" in text


def test_a_causal_lm_read_as_a_classifier_is_refused_with_the_causal_choices(causal_model: Path) -> None:
    text = refusal(f"trl:{causal_model}")
    assert "score.bias, score.weight" in text and "it is a causal LM" in text and "likelihood:PATH" in text


def test_a_bin_of_tensors_loads_through_the_safe_loader(prmkit_model: Path, tmp_path: Path, traces) -> None:
    """Older released PRMs (Math-Shepherd's) ship ``pytorch_model.bin``: tensors only load, same scores."""
    folder = _without(prmkit_model, tmp_path / "bin", "nothing")
    torch.save(load_file(str(folder / "model.safetensors")), folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()
    assert flat(load_scorer(folder).score(traces)) == pytest.approx(
        flat(load_scorer(prmkit_model).score(traces))
    )


class Payload:
    """An object a pickle would run on load: it writes a file."""

    def __init__(self, target: Path):
        self.target = target

    def __reduce__(self):
        return (Path.write_text, (self.target, "ran"))


def test_a_bin_holding_more_than_tensors_is_refused_in_one_line(prmkit_model: Path, tmp_path: Path, traces):
    folder = _without(prmkit_model, tmp_path / "pickle", "nothing")
    ran = tmp_path / "ran.txt"
    weights = dict(load_file(str(folder / "model.safetensors"))) | {"extra": Payload(ran)}
    torch.save(weights, folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()
    data = tmp_path / "t.jsonl"
    write_traces(data, traces)
    result = CliRunner().invoke(app, ["score", str(folder), str(data), "-o", str(tmp_path / "s.jsonl")])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("error:")]
    assert "pytorch_model.bin" in line and "a pickle that holds other objects" in line
    assert not ran.exists()  # refused, never run


def test_big_vocabularies_are_read_in_slices_with_the_same_scores(causal_model: Path, traces, monkeypatch):
    """``LOGITS_BUDGET`` slices the vocabulary projection of the likelihood read-out, and the +/- families
    project only their read positions: the scores are those of the model's own full forward pass."""
    whole = {f: load_scorer(f"{f}:{causal_model}").score(traces) for f in ("likelihood", "math-shepherd")}
    monkeypatch.setattr(conventions, "LOGITS_BUDGET", 3 * 300)  # a few positions per slice
    sliced = load_scorer(f"likelihood:{causal_model}").score(traces)
    assert flat(sliced) == pytest.approx(flat(whole["likelihood"]), rel=1e-5)
    monkeypatch.setattr("prmkit.scoring.families.vocab_head", lambda model: None)  # the full pass
    full = load_scorer(f"math-shepherd:{causal_model}").score(traces)
    assert flat(full) == pytest.approx(flat(whole["math-shepherd"]), abs=1e-6)


def test_skywork_and_qwen_refuse_each_others_heads(qwen: Path, tmp_path: Path) -> None:
    tok = _tok()
    tok.chat_template = CHAT
    skywork = released.skywork_prm(tmp_path / "skywork", tok)
    text = refusal(f"skywork:{qwen}")
    assert "v_head.summary.bias, v_head.summary.weight" in text and "read it as qwen:PATH" in text
    text = refusal(f"qwen:{skywork}")
    assert "score.0.bias" in text and "read it as skywork:PATH" in text


def test_an_implicit_prm_needs_its_reference_and_only_it_takes_one(causal_model, classifier_model) -> None:
    assert "pass --reference MODEL" in refusal(f"implicit:{causal_model}")
    with pytest.raises(InputError, match=r"unused.*score\.bias, score\.weight"):
        load_scorer(f"implicit:{classifier_model}", reference=str(causal_model))
    with pytest.raises(InputError, match="only an implicit PRM reads one"):
        load_scorer(f"likelihood:{causal_model}", reference=str(causal_model))


def test_a_reference_that_is_not_there_and_two_named_conventions_are_refused(causal_model, tmp_path) -> None:
    with pytest.raises(InputError, match="no such path"):
        load_scorer(f"implicit:{causal_model}", reference=str(tmp_path / "no-such-ref"))
    with pytest.raises(InputError, match="found --convention qwen too"):
        load_scorer(f"likelihood:{causal_model}", convention="qwen")
