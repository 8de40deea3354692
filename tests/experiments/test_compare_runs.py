"""experiments/compare_runs.py: two runs compare equal when only paths, timings and world names differ,
and a changed label or number is named."""

from __future__ import annotations

import json
from pathlib import Path

from tests.experiments import load_experiment


def _run(root: Path, key: str, rating: int, f1: float, world: str) -> Path:
    trace = {"id": "t", "steps": [{"labels": [{"provenance": {"method": "mc"}, "rating": rating}]}]}
    (root / "stages" / f"mc-{key}").mkdir(parents=True)
    (root / "stages" / f"mc-{key}" / "labels.jsonl").write_text(json.dumps(trace) + "\n")
    summary = {
        "first_error": {"f1": f1},
        "data": {"world": world},
        "scorer": f"{root}/stages/prm-{key}/model",
    }
    (root / "stages" / f"eval-prm-{key}" / "eval").mkdir(parents=True)
    (root / "stages" / f"eval-prm-{key}" / "eval" / "eval_summary.json").write_text(json.dumps(summary))
    return root


def test_equal_numbers_under_other_paths_and_names_are_identical_and_a_change_is_named(tmp_path, capsys):
    compare = load_experiment("compare_runs").compare
    old = _run(tmp_path / "old", "aaa", 1, 0.9412345678901234, "world")
    assert compare(old, _run(tmp_path / "new", "bbb", 1, 0.9412345678901235, "arithmetic"))
    assert "eval-prm: identical" in capsys.readouterr().out
    assert not compare(old, _run(tmp_path / "label", "ccc", -1, 0.9412345678901234, "world"))
    assert "mc: DIFFERS" in capsys.readouterr().out
    assert not compare(old, _run(tmp_path / "number", "ddd", 1, 0.93, "world"))
    assert "eval-prm: DIFFERS" in capsys.readouterr().out
