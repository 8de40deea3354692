"""The head table: each head kind is looked up by name, and its model card's transformers-only snippet
scores a checkpoint as prmkit does."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from prmkit.cards import write_model_card
from prmkit.core.registry import UnknownNameError
from prmkit.modeling.checkpoint import written_by_prmkit
from prmkit.modeling.heads import HEADS, head
from prmkit.modeling.spec import PrmSpec
from prmkit.scoring import load_scorer
from prmkit.testing import make_random_prm
from prmkit.worlds.arithmetic import WorldPolicy, generate_problems, sample_traces


@pytest.fixture(scope="module")
def prm(tmp_path_factory):
    return make_random_prm(tmp_path_factory.mktemp("prm") / "ckpt", layers=2, width=16, heads=2)


def test_the_table_holds_every_head_and_an_unknown_one_is_named():
    assert HEADS.names() == ["classifier", "critic", "likelihood"]
    assert head("critic").convention == "critic" and head("critic").examples is not None
    assert head("likelihood").convention == "likelihood" and head("classifier").convention == "prmkit"
    assert head("likelihood").template == "newline" and head("classifier").template is None
    with pytest.raises(UnknownNameError, match="Did you mean 'likelihood'"):
        head("likelyhood")


def test_save_writes_no_card_and_the_cards_readme_marks_the_folder(prm, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(prm, folder)
    assert not (folder / "README.md").exists() and not (folder / "process_card.json").exists()
    assert written_by_prmkit(folder) is None  # save_checkpoint alone writes weights, tokenizer, config
    write_model_card(folder, PrmSpec.model_validate(_config(folder)["prmkit"]), None)
    assert written_by_prmkit(folder) == "README.md (tag prmkit)"


def test_the_classifier_cards_snippet_scores_as_prmkit_does(prm, tmp_path):
    spec = PrmSpec.model_validate(_config(prm)["prmkit"])
    readme = write_model_card(tmp_path, spec, None).read_text()
    assert readme.startswith("---\nlibrary_name: transformers\npipeline_tag: token-classification\n")
    snippet = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    snippet = snippet.replace('problem, steps = "...", ["step one", "step two"]', "")
    snippet = snippet.replace(f'path = "{tmp_path}"', f'path = "{prm}"')
    (trace,) = sample_traces(generate_problems(1, seed=3), 1, seed=3, policy=WorldPolicy())
    scope = {"problem": trace.problem.text, "steps": [s.text for s in trace.steps]}
    exec(snippet, scope)  # the model card's transformers-only recipe
    ours = load_scorer(prm).score([trace])[0]
    assert scope["step_scores"].tolist() == pytest.approx(ours, abs=1e-5)


def _config(folder: str | Path) -> dict:
    return json.loads((Path(folder) / "config.json").read_text())
