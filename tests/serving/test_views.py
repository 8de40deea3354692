"""prmkit.serving.views: docs/serving.md's benchmark table is rendered from
bench/results/serving-cpu-2026-11-26.json, names its run, and every number it shows is the file's."""

from __future__ import annotations

import json

from prmkit.serving import views
from tests.experiments import ROOT, shown


def test_every_cell_of_the_serving_table_is_the_file_measurement() -> None:
    [(block, body)] = shown("docs/serving.md", "serving")
    assert views.serving(block) == body
    rows = json.loads((ROOT / block.file).read_text(encoding="utf-8"))
    lines = [line.strip("|").split(" | ") for line in body.splitlines()[2:] if line.startswith("| ")]
    assert len(lines) == len(rows) // 2 == 9
    for cells in lines:
        model, clients = cells[0].strip(), int(cells[1])
        modes = {
            r["mode"]: r for r in rows if views.model_name(r["section"]) == model and r["clients"] == clients
        }
        for mode, (rps, latency, cpu) in (("batched", cells[2:5]), ("unbatched", cells[5:8])):
            r = modes[mode]
            assert float(rps) == round(r["rps"], 1)
            assert [float(x) for x in latency.split(" / ")] == [round(r["p50_ms"], 1), round(r["p99_ms"], 1)]
            assert [float(x) for x in cpu.split(" / ")] == [
                round(r["server_cpu_ms"], 2),
                round(r["scorer_cpu_ms"], 2),
            ]
        assert float(cells[8].strip().rstrip("x")) == round(
            modes["batched"]["rps"] / modes["unbatched"]["rps"], 2
        )
    assert "`serving-cpu-2026-11-26.json` (2026-11-26)" in body


def test_models_are_named_as_the_benchmark_names_them() -> None:
    assert views.model_name("PRM on cpu: random prmkit PRM 4 layers x width 256, 4 heads, ...") == "4x256x4"
    assert views.model_name("SIMULATED accelerator: 100 ms per forward pass") == "SIMULATED 100 ms"
    assert views.model_name("a checkpoint") == "a checkpoint"
