"""Issue 22, item 1: traces longer than the model takes, on real records, under each ``--overlong`` policy.

``prmkit score`` on the PRM800K samples and ``prmkit eval processbench`` on ProcessBench's gsm8k split,
with a tiny checkpoint whose ``max_length`` is 900 tokens (PRM800K: 4 of 6 records fit; gsm8k: 2 of 10),
and ``prmkit train prm | orm`` on world traces with ``--max-length 90`` (most traces are longer). Before
the fix the first two ended in ``ValueError: ... more than max_length`` tracebacks, and training cut
long training traces silently, then crashed in the step-0 dev evaluation on a long dev trace.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.core.dataset import write_traces
from prmkit.formats import read
from prmkit.formats.inputs import read_traces

runner = CliRunner()
REAL = Path(__file__).resolve().parents[3] / "shared" / "data" / "real"
PRM800K = REAL / "prm800k" / "labels_openr_samples.jsonl"
GSM8K = REAL / "processbench" / "gsm8k.json"
LIMIT = 900


def invoke(*args: str | Path):
    return runner.invoke(app, [str(a) for a in args])


def assert_clean(result, code: int) -> str:
    out = result.output
    assert result.exit_code == code, out
    assert "Traceback" not in out
    if code:
        assert isinstance(result.exception, SystemExit), repr(result.exception)
    return out


@pytest.fixture(scope="module")
def prm(tmp_path_factory) -> Path:
    """A random prmkit PRM whose spec says it takes ``LIMIT`` tokens (the tests that read real records
    skip where ``../shared/data/real`` is absent)."""
    if not PRM800K.exists() or not GSM8K.exists():
        pytest.skip(f"no real samples under {REAL}")
    from prmkit.testing import make_random_prm

    folder = Path(make_random_prm(tmp_path_factory.mktemp("ckpt") / "prm"))
    config = json.loads((folder / "config.json").read_text())
    config["prmkit"]["max_length"] = LIMIT
    (folder / "config.json").write_text(json.dumps(config))
    return folder


@pytest.fixture(scope="module")
def lengths(prm) -> dict[str, list[tuple[int, list[int]]]]:
    """Every record's token count and read positions with no limit, to count independently of the CLI."""
    from prmkit.scoring import load_scorer

    scorer = load_scorer(prm)
    scorer.convention.max_length = 10**9
    out = {}
    for name, traces in (("prm800k", read_traces(PRM800K)), ("gsm8k", list(read(GSM8K)))):
        out[name] = [(len(e.input_ids), e.tag_positions) for e in scorer.encode(traces)]
    return out


def expected(rows: list[tuple[int, list[int]]], policy: str) -> tuple[int, int, int]:
    """(skipped, truncated, steps left without a score) that ``policy`` must report."""
    skipped = truncated = cut = 0
    for n, tags in rows:
        if n <= LIMIT:
            continue
        kept = sum(p < LIMIT for p in tags) if policy == "truncate" else 0
        skipped += kept == 0
        truncated += kept > 0
        cut += len(tags) - kept
    return skipped, truncated, cut


def model_scores(path: Path) -> list[int]:
    """Steps that carry a model score, per trace."""
    return [sum(s.label("model") is not None for s in t.steps) for t in read_traces(path)]


# --- prmkit score -------------------------------------------------------------------------------------


def test_score_refuses_an_overlong_trace_by_default(prm, tmp_path, lengths):
    out = assert_clean(invoke("score", prm, PRM800K, "-o", tmp_path / "s.jsonl"), 2)
    first = next(i for i, (n, _) in enumerate(lengths["prm800k"]) if n > LIMIT)
    trace = read_traces(PRM800K)[first]
    tokens = lengths["prm800k"][first][0]
    assert f"trace {trace.id}: {tokens} tokens, more than the limit of {LIMIT}" in out
    assert "--overlong skip" in out and "--overlong truncate" in out
    assert not (tmp_path / "s.jsonl").exists()


@pytest.mark.parametrize("policy", ["skip", "truncate"])
def test_score_skips_or_truncates_and_counts(prm, tmp_path, lengths, policy):
    rows = lengths["prm800k"]
    skipped, truncated, cut = expected(rows, policy)
    assert skipped + truncated == 2 and (policy == "skip" or truncated >= 1)  # the data this test needs
    result = invoke(
        "score", prm, PRM800K, "-o", tmp_path / "s.jsonl", "--overlong", policy, "--aggregate", "min"
    )
    out = " ".join(assert_clean(result, 0).split())
    steps = sum(len(tags) for _, tags in rows)
    assert f"scored {len(rows) - skipped} of {len(rows)} traces ({steps - cut} of {steps} steps)" in out
    assert f"{skipped} trace(s) skipped, {truncated} truncated, {cut} step(s)" in out
    assert f"longer than {LIMIT} tokens, --overlong {policy}" in out
    scored = model_scores(tmp_path / "s.jsonl")
    for (n, tags), k, trace in zip(rows, scored, read_traces(tmp_path / "s.jsonl"), strict=True):
        want = len(tags) if n <= LIMIT else sum(p < LIMIT for p in tags) * (policy == "truncate")
        assert k == want
        # the scored steps are the first ones; a cut trace's score says how many steps it covers
        assert all(s.label("model") is not None for s in trace.steps[:k])
        if 0 < k < len(tags):
            assert trace.metadata["prm_score"]["steps_scored"] == k
        if k == 0:
            assert "prm_score" not in trace.metadata


def test_score_refuses_an_unknown_policy(prm, tmp_path):
    out = assert_clean(invoke("score", prm, PRM800K, "-o", tmp_path / "s.jsonl", "--overlong", "cut"), 2)
    assert "Invalid value for '--overlong'" in out and "'cut' is not one of" in out


# --- prmkit eval processbench -------------------------------------------------------------------------


def test_processbench_refuses_an_overlong_trace_by_default(prm, lengths):
    out = " ".join(assert_clean(invoke("eval", "processbench", GSM8K, "--model", prm), 2).split())
    first = next(i for i, (n, _) in enumerate(lengths["gsm8k"]) if n > LIMIT)
    assert f"trace gsm8k-{first}: {lengths['gsm8k'][first][0]} tokens, more than the limit of {LIMIT}" in out


@pytest.mark.parametrize("policy", ["skip", "truncate"])
def test_processbench_counts_overlong_traces(prm, tmp_path, lengths, policy):
    skipped, truncated, cut = expected(lengths["gsm8k"], policy)
    assert skipped + truncated == 8
    args = ("eval", "processbench", GSM8K, "--model", prm, "--overlong", policy, "-o", tmp_path)
    out = " ".join(assert_clean(invoke(*args), 0).split())
    assert f"overlong: {skipped} trace(s) skipped and {truncated} truncated" in out
    report = json.loads((tmp_path / "processbench.json").read_text())
    assert report["overlong"] == {**report["overlong"], "policy": policy, "limit": LIMIT, "skipped": skipped,
                                  "truncated": truncated, "steps_cut": cut}  # fmt: skip
    (subset,) = report["subsets"]
    predictions = [json.loads(line) for line in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    overlong = [p for p in predictions if p["status"] == "overlong"]
    assert subset["overlong"] == len(overlong) and subset["traces"] == 10  # the subset stays whole
    assert all(p["predicted"] is None for p in overlong)
    if policy == "skip":
        assert len(overlong) == skipped
    else:  # a cut trace predicts a first error among its kept steps, or nothing
        assert skipped <= len(overlong) <= skipped + truncated


# --- prmkit train prm | orm ---------------------------------------------------------------------------

TRAIN = ("--max-length", "90", "--tiny-layers", "1", "--tiny-width", "32", "--tiny-heads", "2",
         "--tiny-positions", "rope", "--max-steps", "1", "--eval-every", "1", "--threads", "1",
         "--batch-size", "4", "--dev-fraction", "0.5", "--no-resume")  # fmt: skip


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    """24 gold-labelled world traces, most of them longer than 90 tokens in a tokenizer built on them."""
    from tests.training.conftest import world_traces

    path = tmp_path_factory.mktemp("world") / "world.jsonl"
    write_traces(path, world_traces(12, 2, seed=0))
    return path


@pytest.mark.parametrize("kind", ["prm", "orm"])
def test_train_refuses_an_overlong_trace_by_default(world, tmp_path, kind):
    out = " ".join(assert_clean(invoke("train", kind, world, "-o", tmp_path / "m", *TRAIN), 2).split())
    assert "training trace world-" in out and "more than the limit of 90 (--max-length)" in out
    assert "--overlong skip" in out


@pytest.mark.parametrize(("kind", "policy"), [("prm", "skip"), ("prm", "truncate"), ("orm", "truncate")])
def test_train_skips_or_truncates_train_and_dev_and_counts(world, tmp_path, kind, policy):
    """The long dev traces no longer crash the step-0 evaluation; both sides are counted."""
    result = invoke("train", kind, world, "-o", tmp_path / "m", *TRAIN, "--overlong", policy)
    summary = yaml.safe_load(assert_clean(result, 0)[result.output.index("output_dir:") :])
    counts = summary["overlong"]
    for part in ("train", "dev"):
        assert counts[part]["policy"] == policy and counts[part]["limit"] == 90
        hit = counts[part]["skipped"] + counts[part]["truncated"]
        assert hit > 0, counts  # this data has long traces on both sides
        assert counts[part]["truncated" if policy == "truncate" else "skipped"] > 0
        if policy == "skip":
            assert counts[part]["truncated"] == 0
    assert "eval_first_error_f1" in summary["dev_at_start"] or kind == "orm"
    card = json.loads((tmp_path / "m" / "process_card.json").read_text())
    assert card["training"]["overlong"] == counts
