"""Build the run report from the stage summaries: headline tables, plots, cards, time, commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prmkit.pipeline.recipe import Recipe
from prmkit.pipeline.report import Report, Table, relpath

BON_NS = (1, 4, 16, 64)
BON_METHODS = ("prm:min", "prm:prod", "weighted:min", "orm", "majority", "oracle")


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _evals(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {name[5:]: r for name, r in results.items() if name.startswith("eval-")}


def _first_error_rows(evals: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for model, r in evals.items():
        fe = r["summary"]["first_error"]
        row: dict[str, Any] = {"model": model, "threshold": fe.get("threshold")}
        for sub in fe["subsets"]:
            row[f"F1 {sub['name']}"] = _pct(sub["f1"])
        row["F1 (mean of subsets)"] = _pct(fe.get("f1"))
        rows.append(row)
    return rows


def _bon_rows(summary: dict[str, Any], orm_name: str | None) -> list[dict[str, Any]]:
    by = {(row["method"], row["n"]): row for row in summary["bon"]["rows"]}
    rows = []
    for method in BON_METHODS:
        if not any(m == method for m, _ in by):
            continue
        row: dict[str, Any] = {"method": method if method != "orm" else f"orm ({orm_name})"}
        for n in BON_NS:
            cell = by.get((method, n))
            row[f"N={n}"] = (
                "–" if cell is None else f"{_pct(cell['accuracy'])} [{_pct(cell['lo'])}, {_pct(cell['hi'])}]"
            )
        rows.append(row)
    return rows


def _label_rows(report: dict[str, Any], results: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for source, m in report["sources"].items():
        kept = m.get("data_kept")
        if source == "consensus" and "consensus" in results:
            c = results["consensus"]["summary"]
            kept = c.get("kept_fraction", kept)
        rows.append({
            "source": source,
            "step-error F1": _pct(m["step_error"]["f1"]),
            "first-error accuracy": _pct(m["first_error"]["accuracy"]),
            "ProcessBench F1": _pct(m["first_error"]["processbench_f1"]),
            "data kept": _pct(kept),
            "rollouts / trace": m.get("rollouts_per_trace"),
        })  # fmt: skip
    return rows


def _audit_rows(evals: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for model, r in evals.items():
        a = r["summary"].get("audits") or {}
        rows.append({"model": model, **{k: v for k, v in a.items() if not isinstance(v, dict | list)}})
    return rows


def build_report(recipe: Recipe, results: dict[str, dict[str, Any]], out: Path, source: str | None) -> Report:
    report = Report(f"prmkit run: {recipe.name}")
    evals = _evals(results)
    head = report.section("What this run shows")
    where = "the embedded world" if recipe.problems.source == "world" else f"`{recipe.problems.source}`"
    backbone = (
        "one shared pretrained tiny backbone" if recipe.train.pretrain else "the backbones the recipe names"
    )
    head.text.append(
        f"Problems and traces from {where}, step labels from {', '.join(recipe.labels.methods) or 'the data'}, "
        f"PRMs and an ORM trained on {backbone}, all measured on fresh world data with gold labels. "
        "Brackets are 95 % bootstrap bands over problems."
    )
    if evals:
        head.tables.append(
            Table(
                _first_error_rows(evals),
                "First-error F1 (ProcessBench metric, %), threshold tuned on world dev",
            )
        )
        main = next(iter(evals))
        summary = evals[main]["summary"]
        orm_name = summary["bon"].get("orm")
        head.tables.append(
            Table(_bon_rows(summary, "orm" if orm_name else None), f"Best-of-N accuracy (%) with {main}")
        )
        bon_png = Path(evals[main]["dir"]) / "model" / "card" / summary["files"]["bon_plot"]
        head.images.append((relpath(bon_png, out), f"Best-of-N curves, {main}"))
    if "label_report" in results:
        sec = report.section("Labels against gold")
        lr = results["label_report"]["summary"]
        sec.tables.append(
            Table(_label_rows(lr, results), f"Automated labels scored against gold ({lr['traces']} traces)")
        )
        sec.images.append(
            (relpath(Path(results["label_report"]["dir"]) / "label_quality.png", out), "Label quality")
        )
    if evals:
        sec = report.section("Failure-mode audits")
        sec.text.append(
            "Verifier gaming (gap between PRM score and gold validity of picked traces as N grows), process "
            "collapse (how far step scores follow the outcome instead of gold step validity), lucky answers "
            "caught, process-to-outcome shift, calibration and length bias. See each card for the plots."
        )
        sec.tables.append(Table(_audit_rows(evals)))
        for model, r in evals.items():
            plots = r["summary"]["files"].get("audit_plots", {})
            for name in ("collapse", "gaming"):
                if name in plots:
                    sec.images.append(
                        (relpath(Path(r["dir"]) / "model" / "card" / plots[name], out), f"{model}: {name}")
                    )
        cards = report.section("Process cards")
        for model, r in evals.items():
            cards.text.append(
                f"{model}: {relpath(Path(r['dir']) / 'model' / 'README.md', out)} (and process_card.json)"
            )
    timing = report.section("Where the time went")
    timing.tables.append(Table([
        {"stage": name, "seconds": round(r.get("seconds", 0.0), 1), "cached this run": r["cached"]}
        for name, r in results.items()
    ]))  # fmt: skip
    total = sum(r.get("seconds", 0.0) for r in results.values())
    timing.text.append(
        f"Total compute of all stages: {total / 60:.1f} minutes (cached stages count the time they took when run)."
    )
    repro = report.section("Reproduce")
    repro.commands.append(
        f"prmkit run {source or 'RECIPE.yaml'}   # reruns only stages whose settings changed"
    )
    repro.text.append(
        f"Resolved settings: {relpath(out / 'recipe.resolved.json', out)}; each stage folder holds its own config and summary."
    )
    return report
