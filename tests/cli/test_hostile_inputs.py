"""Issue 21, findings 4, 6 and 7: what a careless user or an attacker can hand the real ``prmkit`` command.

Every case runs the real command (typer's CliRunner, in process; a subprocess where a process limit is
needed) and asserts exit code 2, one located line ``PLACE: field: expected ..., found ...`` and no
traceback. Before the fix each of these either exited 1 with a traceback or, for the strict-type cases,
was accepted as valid.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prmkit.cli import app

runner = CliRunner()

GOOD = {
    "id": "t1",
    "problem": {"id": "p1", "text": "1 + 1?", "answer": "2"},
    "steps": [
        {"text": "1 + 1 = 2", "labels": [{"rating": 1, "provenance": {"method": "human", "actor": "a"}}]}
    ],
    "final_answer": "2",
    "answer_correct": True,
}


def invoke(*args: str | Path):
    return runner.invoke(app, [str(a) for a in args])


def assert_refused(result, where: str | Path, expected: str = "", found: str = "") -> str:
    """Exit 2, no traceback, and one line ``where: field: expected ..., found ...`` (whole, unwrapped)."""
    out = result.output
    assert result.exit_code == 2, out
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in out
    pattern = re.escape(str(where)) + r"(:\d+)?: \S[^\n]*: expected [^\n]*" + re.escape(expected)
    pattern += r"[^\n]*, found [^\n]*" + re.escape(found) + r"[^\n]*"
    line = re.search(pattern, out)
    assert line, f"no located line for {where} in:\n{out}"
    return line.group(0)


def write_jsonl(path: Path, *records: dict | str) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def with_label(**fields) -> dict:
    rec = json.loads(json.dumps(GOOD))
    label = rec["steps"][0]["labels"][0]
    label.pop("rating")
    label.update(fields)
    return rec


# --- finding 4: strict types; `validate` calls these files invalid --------------------------------------

STRICT_CASES = {
    "rating false": (with_label(rating=False), "steps.0.labels.0.rating", "False"),
    "rating 1.0": (with_label(rating=1.0), "steps.0.labels.0.rating", "1.0"),
    "score as text": (with_label(score="0.5"), "steps.0.labels.0.score", "'0.5'"),
    "answer_correct yes": ({**GOOD, "answer_correct": "yes"}, "answer_correct", "'yes'"),
    "answer_correct 1": ({**GOOD, "answer_correct": 1}, "answer_correct", "1"),
    "id as a number": ({**GOOD, "id": 7}, "id", "7"),
}


@pytest.mark.parametrize("case", STRICT_CASES)
@pytest.mark.parametrize("command", ["validate", "convert"])
def test_wrong_types_are_rejected_with_their_place(case, command, tmp_path):
    record, field, found = STRICT_CASES[case]
    src = write_jsonl(tmp_path / "in.jsonl", GOOD, record)
    args = [command, src] + ([tmp_path / "out.jsonl"] if command == "convert" else [])
    line = assert_refused(invoke(*args), f"{src}:2", found=found)
    assert f": {field}: expected " in line
    assert not (tmp_path / "out.jsonl").exists()


def test_a_good_file_stays_valid_and_a_timestamp_is_still_read(tmp_path):
    rec = with_label(rating=-1, provenance={"method": "human", "created_at": "2024-01-01T00:00:00+00:00"})
    src = write_jsonl(tmp_path / "in.jsonl", GOOD, rec)
    result = invoke("validate", src)
    assert result.exit_code == 0, result.output
    assert "valid prmkit" in result.output


# --- finding 6: no traceback for any hostile file ------------------------------------------------------


def _deep(tmp: Path) -> tuple[Path, str, str]:
    nested = "[" * 1000 + "]" * 1000
    line = '{"id": "t", "problem": {"id": "p", "text": "x"}, "metadata": {"a": ' + nested + "}}"
    return write_jsonl(tmp / "deep.jsonl", line), ":1", "nested too deep"


def _deep_but_parsable(tmp: Path) -> tuple[Path, str, str]:
    rec = {**GOOD, "metadata": {"a": json.loads("[" * 150 + "]" * 150)}}
    return write_jsonl(tmp / "deep150.jsonl", rec), ":1", "{'a'"


def _huge_int(tmp: Path) -> tuple[Path, str, str]:
    line = json.dumps(GOOD)[:-1] + ', "metadata": {"n": ' + "9" * 5000 + "}}"
    return write_jsonl(tmp / "big.jsonl", line), ":1", "a number longer than"


def _directory(tmp: Path) -> tuple[Path, str, str]:
    (tmp / "folder").mkdir()
    return tmp / "folder", "", "a directory"


def _parquet_wrong_schema(tmp: Path) -> tuple[Path, str, str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp / "wrong.parquet"
    pq.write_table(pa.table({"id": [1, 2], "problem": ["a", "b"]}), path)
    return path, ":1", "1"


def _parquet_wrong_types(tmp: Path) -> tuple[Path, str, str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp / "types.parquet"
    pq.write_table(
        pa.table({"id": ["t"], "problem": [{"id": "p", "text": "x"}], "answer_correct": ["yes"]}), path
    )
    return path, ":1", "'yes'"


HOSTILE_FILES: dict[str, Callable[[Path], tuple[Path, str, str]]] = {
    "JSON nested 1,000 deep": _deep,
    "metadata nested 150 deep": _deep_but_parsable,
    "5,000-digit integer": _huge_int,
    "a directory": _directory,
    "Parquet of another schema": _parquet_wrong_schema,
    "Parquet with a text boolean": _parquet_wrong_types,
}


@pytest.mark.parametrize("case", HOSTILE_FILES)
@pytest.mark.parametrize("command", ["validate", "convert", "inspect"])
def test_hostile_input_files_give_a_located_line(case, command, tmp_path):
    src, line, found = HOSTILE_FILES[case](tmp_path)
    args = [command, src] + ([tmp_path / "out.jsonl"] if command == "convert" else [])
    assert_refused(invoke(*args), f"{src}{line}", found=found)


@pytest.mark.parametrize("kind", ["directory", "fifo", "file as folder"])
def test_convert_refuses_an_unwritable_output_before_reading(kind, tmp_path):
    src = write_jsonl(tmp_path / "in.jsonl", GOOD)
    if kind == "directory":
        dst = tmp_path / "out"
        dst.mkdir()
    elif kind == "fifo":
        dst = tmp_path / "pipe"
        os.mkfifo(dst)
    else:
        dst = src / "out.jsonl"
    assert_refused(invoke("convert", src, dst), dst, found={"fifo": "a device or pipe"}.get(kind, ""))
    assert src.read_text() == json.dumps(GOOD) + "\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_convert_refuses_a_read_only_folder(tmp_path):
    src = write_jsonl(tmp_path / "in.jsonl", GOOD)
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    assert_refused(invoke("convert", src, ro / "out.jsonl"), ro / "out.jsonl", found="read-only")


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))  # a disk with 200 bytes free, for writes


def test_a_full_disk_is_a_located_error_and_leaves_nothing(tmp_path):
    src = write_jsonl(tmp_path / "in.jsonl", *[{**GOOD, "id": f"t{i}"} for i in range(20)])
    dst = tmp_path / "out.jsonl"
    r = subprocess.run(
        [sys.executable, "-m", "prmkit.cli", "convert", str(src), str(dst)],
        capture_output=True,
        text=True,
        preexec_fn=_limit_file_size,
        timeout=120,
    )
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    assert f"error: {dst}: (output): expected a writable output file, found file too large" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]  # no output, no temporary file


# --- labelling jobs: output checked before the work, damaged state located ------------------------------


def test_a_labelling_job_checks_its_output_before_the_work(world_file, tmp_path):
    out = tmp_path / "labels"
    out.mkdir()
    result = invoke("label", "mc", "--input", world_file, "--output", out, "--rollouts", "2")
    assert_refused(result, out, found="a directory")
    assert not (tmp_path / "labels.job").exists()  # no rollout was drawn


def test_a_labelling_job_refuses_a_folder_as_input(tmp_path):
    result = invoke("label", "mc", "--input", tmp_path, "--output", tmp_path / "o.jsonl")
    assert_refused(result, tmp_path, found="a directory")


@pytest.mark.parametrize("damage", ["records.jsonl middle line", "job.json empty", "record without key"])
def test_damaged_job_state_is_located_and_says_how_to_start_over(damage, world_file, tmp_path):
    out = tmp_path / "mc.jsonl"
    args = ("label", "mc", "--input", world_file, "--output", out, "--rollouts", "2")
    first = invoke(*args)
    assert first.exit_code == 0, first.output
    job = tmp_path / "mc.jsonl.job"
    records = (job / "records.jsonl").read_text().split("\n")
    assert len(records) > 3
    if damage == "job.json empty":
        (job / "job.json").write_text("")
        where, found = job / "job.json", "an empty file"
    else:
        records[1] = '{"key": broken' if damage == "records.jsonl middle line" else "[1, 2]"
        (job / "records.jsonl").write_text("\n".join(records))
        where, found = f"{job / 'records.jsonl'}:2", ""
    line = assert_refused(invoke(*args), where, found=found)
    assert "--restart" in line
    again = invoke(*args, "--restart")
    assert again.exit_code == 0, again.output


# --- checkpoints ---------------------------------------------------------------------------------------


def _config_edit(edit: Callable[[dict], None]) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        config = json.loads((folder / "config.json").read_text())
        edit(config)
        (folder / "config.json").write_text(json.dumps(config))

    return apply


def _garble_spec(config: dict) -> None:
    config["prmkit"]["tag_id"] = "x"


BROKEN: dict[str, tuple[Callable[[Path], None], str, str]] = {
    "no weights": (lambda f: (f / "model.safetensors").unlink(), "", "(weights)"),
    "no config": (lambda f: (f / "config.json").unlink(), "/config.json", "(file)"),
    "no tokenizer": (
        lambda f: [(f / n).unlink() for n in ("tokenizer.json", "tokenizer_config.json")],
        "",
        "(tokenizer)",
    ),
    "config not JSON": (
        lambda f: (f / "config.json").write_text('{"model_type":'),
        "/config.json:1",
        "(json)",
    ),
    "safetensors header": (
        lambda f: (f / "model.safetensors").write_bytes(b"\xff" * 7 + b"\x00garbage"),
        "/model.safetensors",
        "(safetensors)",
    ),
    "garbage prmkit block": (_config_edit(_garble_spec), "/config.json", "prmkit.tag_id"),
    "prmkit block removed": (_config_edit(lambda c: c.pop("prmkit")), "/config.json", "prmkit"),
}


@pytest.mark.parametrize("case", BROKEN)
def test_every_broken_checkpoint_is_refused_with_its_place(case, checkpoint, world_file, tmp_path):
    damage, where, field = BROKEN[case]
    folder = tmp_path / "ckpt"
    shutil.copytree(checkpoint, folder)
    damage(folder)
    result = invoke("score", folder, world_file, "-o", tmp_path / "scored.jsonl")
    line = assert_refused(result, f"{folder}{where}")
    assert f": {field}: expected " in line


def test_a_checkpoint_without_its_block_reads_only_by_an_explicit_convention(
    checkpoint, world_file, tmp_path
):
    folder = tmp_path / "ckpt"
    shutil.copytree(checkpoint, folder)
    _config_edit(lambda c: c.pop("prmkit"))(folder)
    refused = invoke("score", folder, world_file, "-o", tmp_path / "a.jsonl")
    assert "save the model again with prmkit" in assert_refused(refused, f"{folder}/config.json")
    chosen = invoke("score", folder, world_file, "-o", tmp_path / "b.jsonl", "--convention", "trl")
    assert chosen.exit_code == 0, chosen.output


@pytest.mark.parametrize("name", ["runs/prm-typo", "prm-typo", "./prm-typo", "runs/a/b"])
def test_a_missing_local_checkpoint_fails_at_once_without_the_network(
    name, world_file, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    t0 = time.monotonic()
    result = invoke("score", name, world_file, "-o", tmp_path / "s.jsonl")
    assert_refused(result, name, found="no such path")
    assert time.monotonic() - t0 < 5  # the Hub was not tried (it retries for ~30 s offline)


def test_a_good_checkpoint_still_scores(checkpoint, world_file, tmp_path):
    result = invoke("score", checkpoint, world_file, "-o", tmp_path / "scored.jsonl")
    assert result.exit_code == 0, result.output


# --- finding 7: NaN survives, the umask is respected ---------------------------------------------------


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_nan_in_metadata_survives_a_round_trip(suffix, tmp_path):
    src = write_jsonl(tmp_path / "in.jsonl", json.dumps({**GOOD, "metadata": {"x": float("nan"), "y": 1}}))
    mid, back = tmp_path / f"mid{suffix}", tmp_path / "back.jsonl"
    assert invoke("convert", src, mid).exit_code == 0
    assert invoke("convert", mid, back).exit_code == 0
    assert '"metadata":{"x":NaN,"y":1}' in back.read_text()


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_outputs_respect_the_umask(umask, mode, tmp_path):
    src = write_jsonl(tmp_path / "in.jsonl", GOOD)
    old = os.umask(umask)
    try:
        result = invoke("convert", src, tmp_path / "out.jsonl")
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out.jsonl").stat().st_mode & 0o777 == mode


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_lone_surrogate_in_a_metadata_key_is_reported_not_raised(suffix, tmp_path):
    """Issue 66, item 3: ``"\\ud800"`` as a metadata key. The reader named it, but with the raw half
    surrogate in the field's path, and printing that line ended ``prmkit validate`` in a
    ``UnicodeEncodeError`` traceback; the key is now shown escaped."""
    record = '{"id": "a", "problem": {"id": "p", "text": "1+1?"}, "steps": [{"text": "2"}], "metadata": {"\\ud800": 1}}'
    path = tmp_path / f"bad{suffix}"
    path.write_text(record if suffix == ".jsonl" else f"[{record}]")
    result = invoke("validate", path)
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output
    assert f"{path}:1: metadata.\\ud800: expected Unicode text" in result.output
    assert "found a key holding a lone surrogate \\ud800" in result.output


def test_a_critic_head_on_data_without_chains_says_what_makes_them(world_file, tmp_path):
    """Issue 66, item 4: ``train prm --head critic`` on gold-labelled traces (no judge's chains) ended in
    a ``ValueError`` traceback from training/critic.py; now one located line names what the data lacks
    and the command that writes it, before a model is built."""
    result = invoke(
        "train", "prm", world_file, "-o", tmp_path / "critic", "--head", "critic", "--max-steps", 1
    )
    assert_clean_exit = result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert assert_clean_exit and "Traceback" not in result.output, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: {world_file}: label_source: expected traces whose 'gold' labels carry")
    assert "found none of 2 traces" in line and "prmkit label judge FILE --judge arithmetic-teacher" in line
    assert not (tmp_path / "critic").exists()


def test_a_judge_that_needs_options_is_refused_by_name(world_file):
    """Issue 66, item 5: ``eval processbench --judge endpoint`` (no URL can be given there) ended in
    ``TypeError: EndpointJudge.__init__() missing 2 required positional arguments``; now one line names
    the options and the command that takes them."""
    result = invoke("eval", "processbench", world_file, "--judge", "endpoint")
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert line.startswith("error: --judge endpoint: options: expected url, model (what judge 'endpoint'")
    assert "prmkit label judge FILE --judge endpoint --judge-url URL --judge-model NAME" in line


def test_every_backend_built_without_a_required_option_is_refused():
    """The same hole in every judge and policy a command may build by name: a missing option is a
    located refusal naming it, never the constructor's ``TypeError``."""
    from prmkit.core.errors import InputError
    from prmkit.policies import load_judge, load_policy

    for load, name, given, missing in (
        (load_judge, "endpoint", {"url": "http://127.0.0.1:9"}, "model"),
        (load_policy, "endpoint", {}, "url, model"),
    ):
        with pytest.raises(InputError, match=f"options: expected {missing} \\(what"):
            load(name, **given)
