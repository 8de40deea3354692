from __future__ import annotations

from prmkit.labeling.consensus import consensus_filter
from prmkit.labeling.judge import label_judge
from prmkit.labeling.mc import label_mc
from prmkit.worlds.arithmetic import SimulatedJudge, WorldPolicy


def test_consensus_keeps_cleaner_data_and_says_why_the_rest_went(traces, fe_accuracy):
    mc, _ = label_mc(traces, WorldPolicy(), rollouts=8, seed=0)
    both, _ = label_judge(mc, SimulatedJudge(miss_rate=0.3, false_alarm_rate=0.1, seed=0))
    kept, summary = consensus_filter(both, mc_source="mc_hard", judge_source="judge")
    assert summary["kept"] == len(kept)
    assert summary["kept"] + sum(summary["dropped"].values()) == len(traces)
    assert 0.4 < summary["kept_fraction"] < 0.95
    assert set(summary["dropped"]) <= {
        "only_mc_finds_error",
        "only_judge_finds_error",
        "mc_error_earlier",
        "judge_error_earlier",
    }
    acc_kept = fe_accuracy(kept, "consensus")
    assert acc_kept >= 0.95, (
        acc_kept
    )  # measured 0.97 on 54 % kept, vs 0.92 (MC) and 0.58 (noisy judge) on all
    assert acc_kept > fe_accuracy(both, "mc_hard") and acc_kept > fe_accuracy(both, "judge")
    per_step, s2 = consensus_filter(both, mode="per_step")
    assert s2["kept"] >= 1 and all(t.steps[0].label("consensus") is not None for t in per_step)


def test_traces_missing_a_source_are_dropped_with_that_reason(traces):
    kept, summary = consensus_filter(traces[:5])
    assert kept == [] and summary["dropped"] == {"missing_mc": 5}


def test_the_consensus_command_shows_progress_on_stderr_and_keeps_stdout_a_summary(traces, tmp_path, capsys):
    """Issue 22 item 7: ``label consensus`` draws the labelling commands' progress bar on stderr, while
    stdout stays the YAML summary alone; the library call stays quiet unless asked, as ``label_mc``'s does."""
    import yaml
    from typer.testing import CliRunner

    from prmkit.cli import app
    from prmkit.core.dataset import write_traces

    mc, _ = label_mc(traces[:40], WorldPolicy(), rollouts=2, seed=0)
    both, _ = label_judge(mc, SimulatedJudge(seed=0))
    write_traces(tmp_path / "both.jsonl", both)
    capsys.readouterr()
    quiet = consensus_filter(both)
    assert capsys.readouterr().err == ""
    loud = consensus_filter(both, show_progress=True)
    err = capsys.readouterr().err
    assert "consensus" in err and f"{len(both)}/{len(both)}" in err
    assert loud[1] == quiet[1]  # the bar changes nothing
    args = ["label", "consensus", "--input", tmp_path / "both.jsonl", "--output", tmp_path / "k.jsonl"]
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    assert f"{len(both)}/{len(both)}" in result.stderr and "━" not in result.stdout
    assert yaml.safe_load(result.stdout) == quiet[1]  # stdout: the summary, nothing else
