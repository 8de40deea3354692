"""prmkit.training.views: the training benchmarks' tables in docs/models.md are rendered from the committed
bench results files, name the run each row shows, and every number they show is the file's."""

from __future__ import annotations

import json
import re

import pytest

from prmkit.core.results import BlockError, render_blocks
from prmkit.training import views
from tests.experiments import ROOT, shown

DECIMAL = re.compile(r"\d[\d,]*\.?\d*")


def _numbers(text: str) -> list[float]:
    return [float(x.replace(",", "")) for x in DECIMAL.findall(text)]


def test_the_cpu_table_shows_each_run_file_its_date_and_the_file_medians() -> None:
    [(block, body)] = shown("docs/models.md", "train-cpu")
    assert views.train_cpu(block) == body
    rows = [line for line in body.splitlines() if line.startswith("| `")]
    files = [block.file, *block.attrs["also"].split(",")]
    assert len(rows) == len(files) == 5
    for row, file in zip(rows, files, strict=True):
        result = json.loads((ROOT / file).read_text(encoding="utf-8"))
        cells = row.split(" | ")
        assert file.rsplit("/", 1)[1] in cells[0] and views.run_date(block, file) in cells[0]
        prmkit, trl = result["median"]["prmkit"], result["median"]["trl"]
        assert _numbers(cells[3]) == [round(prmkit["tokens_per_s"])]
        assert _numbers(cells[4]) == [round(trl["tokens_per_s"])]
        assert _numbers(cells[5]) == [round(result["ratio_tokens_per_s"], 2)]
        assert _numbers(cells[6]) == [round(result["ratio_tokens_per_cpu_s"], 2)]
        assert _numbers(cells[7]) == [round(prmkit["peak_rss_mb"]), round(trl["peak_rss_mb"])]
    # the batches column follows each file's settings: TRL's random batches only in the first run
    assert "random" in rows[0] and all("grouped by length" in r for r in rows[1:])
    assert "dropout on" in rows[2] and "dropout off" in rows[4]


def test_the_gpu_table_shows_both_runs_side_by_side_from_their_files() -> None:
    [(block, body)] = shown("docs/models.md", "train-gpu")
    assert views.train_gpu(block) == body
    runs = [json.loads((ROOT / f).read_text(encoding="utf-8")) for f in (block.file, block.attrs["also"])]
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ")[1:] for line in body.splitlines()[2:6]}
    for setup, name in views.GPU_SETUPS.items():
        configs = [next(c for c in r["configs"] if c["config"] == setup) for r in runs]
        prmkit, trainer, ratio, peak = rows[name]
        assert _numbers(prmkit) == [round(c["prmkit"]["tokens_per_s"]) for c in configs]
        assert _numbers(trainer) == [round(c["trainer"]["tokens_per_s"]) for c in configs]
        assert _numbers(ratio) == [round(c["ratio"], 2) for c in configs]
        assert _numbers(peak.strip(" |")) == [round(configs[0]["prmkit"]["peak_gpu_mb"] / 1024, 1)]
    assert "2026-11-27" in body and "12 timed steps after 3 warm-up" in body


def test_a_run_file_without_a_date_is_refused(tmp_path) -> None:
    result = json.loads((ROOT / "bench/results/train-cpu-2026-11-26.json").read_text(encoding="utf-8"))
    (tmp_path / "train-cpu.json").write_text(json.dumps(result), encoding="utf-8")
    page = "<!-- results: train-cpu.json view=train-cpu -->\n<!-- /results -->\n"
    with pytest.raises(BlockError, match="no date in the file's name"):
        render_blocks(page, tmp_path)
