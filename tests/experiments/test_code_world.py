"""experiments/code_world.py: label sources scored per class of the gold first error, from a run's
stage files, with an interval over seeds × problems, and the loophole audit per model; the docs blocks
render from the committed file."""

from __future__ import annotations

import json
from pathlib import Path

from prmkit.core.dataset import write_traces
from prmkit.evaluation.views import code_audit_table, code_labels_table, code_world_audit, code_world_labels
from prmkit.formats.inputs import read_traces
from prmkit.labeling import consensus_filter, label_judge, label_mc, label_progress
from prmkit.worlds.registry import world
from tests.experiments import ROOT, load_experiment, shown


def _seed_run(folder: Path, seed: int) -> None:
    w = world("code")
    traces = w.gold_label(w.sample_traces(w.generate_problems(12, seed=seed), 3, seed=seed))
    mc, _ = label_mc(traces, w.make_policy(), rollouts=4, seed=seed)
    both, _ = label_judge(mc, w.judge(seed=seed))
    progress, _ = label_progress(traces, w.make_policy(), rollouts=4, seed=seed)
    kept, _ = consensus_filter(both, mc_source="mc_hard", judge_source="judge")
    for stage, data in (("judge", both), ("progress", progress), ("consensus", kept)):
        (folder / f"seed-{seed}" / "stages" / f"{stage}-abc").mkdir(parents=True)
        write_traces(folder / f"seed-{seed}" / "stages" / f"{stage}-abc" / "labels.jsonl", data)


def test_every_source_by_class_with_the_trajectories_it_rests_on(tmp_path: Path) -> None:
    exp = load_experiment("code_world")
    for seed in (1, 2):
        _seed_run(tmp_path, seed)
    result = exp.collect(tmp_path)
    assert list(result["sources"]) == list(exp.SOURCES) and result["seeds"] == ["seed-1", "seed-2"]
    judge = result["sources"]["judge"]
    assert sum(cell["trajectories"] for cell in judge.values()) == 2 * 12 * 3  # every trajectory, once
    assert all(
        c["low"] <= c["mean"] <= c["high"] and 0.0 <= c["mean"] <= 1.0
        for c in judge.values()
        if c["draws"]["trajectories"] > 1
    )
    # the error-free trajectories' share is MC's own verdict on them (the mean over seeds of each seed's
    # share), counted here from the files
    shares = []
    for seed in (1, 2):
        labelled = read_traces(tmp_path / f"seed-{seed}/stages/judge-abc/labels.jsonl")
        clean = [t for t in labelled if t.first_error("gold") == -1]
        shares.append(sum(t.first_error("mc_hard") == -1 for t in clean) / len(clean))
    assert abs(result["sources"]["mc_hard"]["none"]["mean"] - sum(shares) / 2) < 1e-9 and min(shares) > 0.8
    consensus = result["sources"]["consensus"]
    assert sum(c["trajectories"] for c in consensus.values()) < 2 * 12 * 3  # only what it kept
    assert "| judge | " in code_labels_table(result)
    for seed in (1, 2):  # two evaluations' summaries, one with a loophole and an overfit audit
        audits_of = {"loophole_rewarded_rate": 0.1 * seed, "overfit_pick_share": 0.05 * seed}
        for name, audits in (("prm-gold-0a1b", audits_of), ("orm-9f", {})):
            done = tmp_path / f"seed-{seed}" / "stages" / f"claims-{name}" / "DONE.json"
            done.parent.mkdir(parents=True)
            done.write_text(json.dumps({"summary": {"audits": audits}}))
    audited = exp.collect(tmp_path)["audits"]
    assert audited == {
        "claims": {"prm-gold": {"loophole_rewarded_rate": [0.1, 0.2], "overfit_pick_share": [0.05, 0.1]}}
    }
    assert "| prm-gold | – | – | 7.5 (5.0–10.0) | – |" in code_audit_table(
        {"seeds": [1, 2], "audits": audited}, "claims", "overfit"
    )
    assert "| prm-gold | 15.0 (10.0–20.0) | – | – | – |" in code_audit_table(
        {"seeds": [1, 2], "audits": audited}, "claims"
    )


def test_the_docs_blocks_are_what_the_committed_file_gives() -> None:
    docs = (ROOT / "docs" / "codeworld.md").read_text(encoding="utf-8")
    result = json.loads((ROOT / "docs" / "results" / "code-world.json").read_text(encoding="utf-8"))
    [(labels, body)] = shown("docs/codeworld.md", "code-world-labels")
    assert labels.file == "docs/results/code-world.json" and code_world_labels(labels) == body
    audits = shown("docs/codeworld.md", "code-world-audit")
    assert {(b.attrs["set"], b.attrs.get("class", "loophole")) for b, _ in audits} == {
        (s, c) for s in ("claims", "tuning") for c in ("loophole", "overfit")
    }
    assert all(code_world_audit(block) == body for block, body in audits)
    assert f"{len(result['seeds'])} seeds" in docs  # the tables say how many training runs they rest on


def test_audits_only_reads_any_worlds_audits_and_no_label_files(tmp_path: Path) -> None:
    """The agent world's runs have no code-world label sources; ``--audits-only`` reads their evaluations'
    loophole audits alone, one value per seed, and the table renders them."""
    import subprocess
    import sys

    for seed, rate in ((0, 0.25), (1, 0.5)):
        for prefix in ("eval", "claims"):
            done = tmp_path / "run" / f"seed-{seed}" / "stages" / f"{prefix}-prm-consensus-1a2b" / "DONE.json"
            done.parent.mkdir(parents=True)
            done.write_text(json.dumps({"summary": {"audits": {"loophole_pick_share": rate}}}))
    out = tmp_path / "audits.json"
    script = ROOT / "experiments" / "code_world.py"
    cmd = [sys.executable, str(script), "--audits-only", str(tmp_path / "run"), "--out", str(out)]
    printed = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result == {
        "seeds": ["seed-0", "seed-1"],
        "audits": {s: {"prm-consensus": {"loophole_pick_share": [0.25, 0.5]}} for s in ("claims", "tuning")},
    }
    assert "| prm-consensus | – | – | 37.5 (25.0–50.0) | – |" in printed
