"""Gold is for evaluation: with the demo recipe's training settings (cut to a few steps of a width-32
LM), a model that is not trained on gold must not change when every gold label outside its declared dev
set is scrambled, and whatever gold it did use is declared in its process card (``gold_use``)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from prmkit.cards import read_process_card
from prmkit.cards.card import full_card
from prmkit.cards.render import render_markdown
from prmkit.pipeline import load_recipe
from prmkit.training import pretrain_lm, train_orm, train_prm
from prmkit.training.data import split_by_problem

RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "world.yaml"
TINY = {"max_steps": 8, "eval_every": 8, "threads": 1, "batch_size": 8}
"""Few small steps: what reaches a model is decided by the data path, not by how long it trains."""


def _small(config):
    """The recipe's config with TINY and a width-32 LM (for a model trained from scratch)."""
    return config.model_copy(
        update={**TINY, "tiny": config.tiny.model_copy(update={"width": 32, "heads": 2})}
    )


def _weights(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


def _same(a: Path, b: Path) -> bool:
    wa, wb = _weights(a), _weights(b)
    return wa.keys() == wb.keys() and all(bool((wa[k] == wb[k]).all()) for k in wa)


def _scramble_gold(traces, keep: set[str]):
    """Every gold step label outside the problems ``keep`` gets a random rating (answers stay: outcome
    labels come from the reference answer, which a user has)."""
    rng = random.Random(0)
    out = []
    for t in traces:
        t = t.model_copy(deep=True)
        if t.problem.id not in keep:
            for step in t.steps:
                for label in step.labels:
                    if label.provenance.method == "gold":
                        label.rating = rng.choice((-1, 0, 1))
        out.append(t)
    return out


@pytest.fixture(scope="module")
def data():
    from prmkit.labeling.mc import label_mc
    from prmkit.worlds.arithmetic import WorldPolicy, generate_problems, gold_label, sample_traces

    traces = gold_label(sample_traces(generate_problems(40, seed=3, split="train"), 4, seed=3))
    labelled, _ = label_mc(traces, WorldPolicy(), rollouts=2, seed=0)
    return labelled


@pytest.mark.slow
def test_gold_reaches_no_model_of_the_demo_recipe_undeclared(data, tmp_path: Path) -> None:
    train = load_recipe(RECIPE).train
    assert train.pretrain is not None and train.orm is not None
    pre = _small(train.pretrain)
    prm = train.prm.model_copy(update={**TINY, "label_source": "mc_hard"})
    orm = train.orm.model_copy(update=TINY)
    assert not pre.only_valid  # the demo's LM reads the policy's own samples, unfiltered
    _, dev = split_by_problem(data, prm.dev_fraction, prm.seed)
    assert split_by_problem(data, orm.dev_fraction, orm.seed)[1] == dev
    dev_ids = {t.problem.id for t in dev}
    runs = {"real": data, "scrambled": _scramble_gold(data, dev_ids)}
    for name, traces in runs.items():
        pretrain_lm(traces, tmp_path / name / "lm", pre)
        base = {"base_model": str(tmp_path / name / "lm")}
        train_prm(traces, tmp_path / name / "prm", prm.model_copy(update=base))
        train_orm(traces, tmp_path / name / "orm", orm.model_copy(update=base))
    for model in ("lm", "prm", "orm"):
        assert _same(tmp_path / "real" / model, tmp_path / "scrambled" / model), model
    # what they did use is declared: the dev set's gold, nothing else
    assert read_process_card(tmp_path / "real" / "lm").gold_use == []
    for model in ("prm", "orm"):
        uses = read_process_card(tmp_path / "real" / model).gold_use
        assert [u.use for u in uses] == ["dev_selection"], uses
        assert uses[0].traces == len(dev) and uses[0].labels > 0
    # the gold PRM changes with gold, and says it trained on it
    gold = train.prm.model_copy(
        update={**TINY, "label_source": "gold", "base_model": str(tmp_path / "real" / "lm")}
    )
    train_prm(data, tmp_path / "gold-prm", gold)
    assert [u.use for u in read_process_card(tmp_path / "gold-prm").gold_use] == [
        "training_labels",
        "dev_selection",
    ]


@pytest.mark.slow
def test_a_gold_filtered_backbone_is_declared_by_every_model_on_it(data, tmp_path: Path) -> None:
    train = load_recipe(RECIPE).train
    assert train.pretrain is not None
    pre = _small(train.pretrain).model_copy(update={"only_valid": True})
    pretrain_lm(data, tmp_path / "lm", pre)
    lm_uses = read_process_card(tmp_path / "lm").gold_use
    assert [u.use for u in lm_uses] == ["corpus_filter"] and lm_uses[0].traces == len(data)
    prm = train.prm.model_copy(update={**TINY, "label_source": "mc_hard", "base_model": str(tmp_path / "lm")})
    train_prm(data, tmp_path / "prm", prm)
    uses = read_process_card(tmp_path / "prm").gold_use
    assert [(u.use, u.via) for u in uses] == [("corpus_filter", "backbone"), ("dev_selection", None)]
    readme = render_markdown(full_card(read_process_card(tmp_path / "prm"), None))
    assert (
        "- pretraining corpus filtered on gold labels" in readme and "(its backbone's pretraining)" in readme
    )
