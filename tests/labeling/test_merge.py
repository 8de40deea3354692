"""`prmkit label merge` joins the shards of one job and refuses anything else (issue 66: shards of another
seed or method, an unlabelled shard and one with an edited step all merged with exit 0)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from prmkit.core.dataset import write_traces
from prmkit.core.errors import InputError
from prmkit.formats.inputs import read_traces
from prmkit.labeling.binary_search import BinarySearchConfig, run_binary_search
from prmkit.labeling.common import file_sha256
from prmkit.labeling.mc import MCConfig, run_mc
from prmkit.labeling.merge import MergeConfig, run_merge
from tests.labeling.conftest import world_traces

PRMKIT = str(Path(sys.executable).parent / "prmkit")


@pytest.fixture
def job(tmp_path: Path):
    """The input, and a function running one shard of an MC job over it (other options: another job)."""
    src = tmp_path / "in.jsonl"
    write_traces(src, world_traces(6, 2))

    def shard(i: int, name: str | None = None, config=MCConfig, run=run_mc, **options) -> Path:
        out = tmp_path / (name or f"s{i}.jsonl")
        run(config(input=src, output=out, rollouts=2, shard=f"{i}/2", **options), show_progress=False)
        return out

    return src, shard


def merge(src: Path, *shards: Path) -> dict:
    return run_merge(MergeConfig(input=src, shards=list(shards), output=src.with_name("merged.jsonl")))


def test_the_shards_of_one_job_merge_into_what_one_run_writes(job) -> None:
    src, shard = job
    summary = merge(src, shard(0), shard(1))
    merged = src.with_name("merged.jsonl")
    assert [t.id for t in read_traces(merged)] == [t.id for t in read_traces(src)]
    assert summary["shards"] == 2 and summary["output_sha256"] == file_sha256(merged)
    assert summary["input_sha256"] == file_sha256(src)


def test_a_shard_of_another_seed_or_method_is_refused_naming_what_differs(job) -> None:
    src, shard = job
    s0 = shard(0)
    other_seed = shard(1, "seed.jsonl", seed=1)
    with pytest.raises(
        InputError, match=r"seed\.jsonl\.config\.yaml: seed: expected 0 \(as shard 0\), found 1"
    ):
        merge(src, s0, other_seed)
    other_method = shard(1, "bs.jsonl", BinarySearchConfig, run_binary_search)
    with pytest.raises(InputError, match=r"bs\.jsonl\.config\.yaml: method: expected 'mc' \(as shard 0\)"):
        merge(src, s0, other_method)
    with pytest.raises(InputError, match=r"s0\.jsonl\.config\.yaml: shard: expected 1/2 \(its place"):
        merge(src, shard(1), s0)


def test_an_unlabelled_or_edited_shard_or_another_input_is_refused(job, tmp_path) -> None:
    src, shard = job
    s0, s1 = shard(0), shard(1)
    unlabelled = tmp_path / "raw.jsonl"
    write_traces(unlabelled, [t for t in read_traces(src) if t.id in {u.id for u in read_traces(s1)}])
    with pytest.raises(InputError, match=r"raw\.jsonl\.config\.yaml: \(file\): expected the config its "):
        merge(src, s0, unlabelled)

    lines = s1.read_text().splitlines()
    rec = json.loads(lines[0])
    rec["steps"][0]["text"] = "2 + 2 = 5"
    s1.write_text("\n".join([json.dumps(rec), *lines[1:]]) + "\n")
    with pytest.raises(InputError, match=r"s1\.jsonl\.summary\.yaml: output_sha256: expected [0-9a-f]{64}, "):
        merge(src, s0, s1)
    side = s1.with_name(
        "s1.jsonl.summary.yaml"
    )  # its digest made to agree: the step is still not the input's
    summary = yaml.safe_load(side.read_text()) | {"output_sha256": file_sha256(s1)}
    side.write_text(yaml.safe_dump(summary))
    with pytest.raises(InputError, match=r"s1\.jsonl:1: steps\[0\]\.text: expected .*found '2 \+ 2 = 5'"):
        merge(src, s0, s1)

    other = tmp_path / "other.jsonl"
    write_traces(other, read_traces(src)[::-1])
    with pytest.raises(InputError, match=r"input_sha256: expected [0-9a-f]{64} \(of .*other\.jsonl\)"):
        merge(other, s0, shard(1, "fresh.jsonl"))


@pytest.mark.parametrize(("text", "found"), [("{{{ :", "(yaml)"), ("- a\n- b\n", "found a YAML list")])
def test_a_garbage_or_list_summary_is_one_line_not_a_traceback(job, text, found) -> None:
    src, shard = job
    s0, s1 = shard(0), shard(1)
    s1.with_name("s1.jsonl.summary.yaml").write_text(text)
    r = subprocess.run(
        [PRMKIT, "label", "merge", "--input", str(src), "--shards", str(s0), "--shards", str(s1),
         "--output", str(src.with_name("m.jsonl"))],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    out = r.stdout + r.stderr
    assert r.returncode == 2 and "Traceback" not in out, out
    assert "s1.jsonl.summary.yaml" in out and found in out, out
    assert not src.with_name("m.jsonl").exists()
