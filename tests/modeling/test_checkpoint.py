"""check_checkpoint: a folder that cannot load is refused with its place; a Hub id is left to transformers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from prmkit.core.errors import InputError
from prmkit.modeling.checkpoint import check_checkpoint, written_by_prmkit
from prmkit.testing import make_random_prm


@pytest.fixture(scope="module")
def prm(tmp_path_factory):
    return make_random_prm(tmp_path_factory.mktemp("prm") / "ckpt", layers=2, width=16, heads=2)


def test_a_good_folder_passes_and_says_prmkit_wrote_it(prm):
    assert check_checkpoint(prm) is not None
    assert written_by_prmkit(prm) is None  # weights, tokenizer and config only: the cards are prmkit.cards'
    (Path(prm) / "process_card.json").write_text("{}")
    assert written_by_prmkit(prm) == "process_card.json"
    (Path(prm) / "process_card.json").unlink()


def test_every_problem_of_a_folder_is_collected(prm, tmp_path):
    folder = tmp_path / "bad"
    shutil.copytree(prm, folder)
    (folder / "model.safetensors").unlink()
    config = json.loads((folder / "config.json").read_text())
    config["prmkit"]["head"] = "regression"
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "tokenizer.json").write_text("{")
    with pytest.raises(InputError) as err:
        check_checkpoint(folder)
    fields = sorted(issue.field for issue in err.value.issues)
    assert fields == ["(json)", "(weights)", "prmkit.head"]


def test_hub_ids_are_left_to_transformers_but_a_missing_local_path_is_not(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    assert check_checkpoint("Qwen/Qwen2.5-Math-PRM-7B") is None  # no network: only the shape is read
    for name in ("runs/prm", "prm", "./prm", "~/nowhere/prm"):
        with pytest.raises(InputError, match="expected a checkpoint folder, found no such path"):
            check_checkpoint(name)
