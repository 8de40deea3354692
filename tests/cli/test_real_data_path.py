"""Issue 22, item 8: the worked path of docs/real-data.md on real files, through the ``prmkit`` script.

ProcessBench's gsm8k split and PRM800K's label samples (``../shared/data/real``) -> ``prmkit convert`` ->
``prmkit train prm`` on a local Hugging Face backbone folder -> ``prmkit eval processbench`` on the other
three ProcessBench splits -> ``prmkit score`` on every real trace file -> ``prmkit serve`` on loopback,
whose ``/score`` must give ``prmkit score``'s numbers for the same record.

The backbone is what a user passes as ``--base-model``, only tiny: a ``Qwen2ForCausalLM`` (2 layers,
width 32, 2,048 positions, so every real record fits) and a byte-level BPE tokenizer trained here on the
real texts, both written with ``save_pretrained``. Nothing is downloaded. Every command runs as a user
runs it (a subprocess of the installed script, stdout and stderr apart), so the test also sees what a
user sees: an exit code, and never a traceback. A path test, not a quality test: 4 optimiser steps.
Those tests are ``slow``; the fast one checks that the GPU commands the page prints exist as written.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.policies.conftest import free_port
from tests.processes import stop

PRMKIT = str(Path(sys.executable).parent / "prmkit")
REAL = Path(__file__).resolve().parents[3] / "shared" / "data" / "real"
PROCESSBENCH = REAL / "processbench"
PRM800K = REAL / "prm800k" / "labels_openr_samples.jsonl"
SHEPHERD = REAL / "math_shepherd" / "math_shepherd_openr_samples.jsonl"
EVAL_SPLITS = ("math", "olympiadbench", "omnimath")
"""ProcessBench splits the PRM is evaluated on (trained on gsm8k and PRM800K only)."""
RECORDS = {"gsm8k": 10, "math": 8, "olympiadbench": 9, "omnimath": 9, "prm800k": 6, "math_shepherd": 7}
"""Records in each real sample file (their SOURCE.md files list them)."""
MAX_LENGTH = 2048
DOC = Path(__file__).resolve().parents[2] / "docs" / "real-data.md"


def prmkit(*args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``prmkit ARGS`` as a user would; exit 0 with no traceback on either stream, or fail with both."""
    done = subprocess.run(
        [PRMKIT, *map(str, args)], capture_output=True, text=True, timeout=timeout, check=False
    )
    shown = f"prmkit {' '.join(map(str, args))}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    assert done.returncode == 0, shown
    assert "Traceback" not in done.stdout + done.stderr, shown
    return done


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """Converted real files: ``gsm8k.jsonl``, ``prm800k.jsonl`` and their concatenation ``train.jsonl``."""
    if not PROCESSBENCH.is_dir() or not PRM800K.exists():
        pytest.skip(f"no real samples under {REAL} (the shared/ folder beside the project root)")
    work = tmp_path_factory.mktemp("real")
    for src, dst in ((PROCESSBENCH / "gsm8k.json", "gsm8k.jsonl"), (PRM800K, "prm800k.jsonl")):
        out = prmkit("convert", src, work / dst).stdout + prmkit("validate", work / dst).stdout
        assert f"valid prmkit (detected), {RECORDS[dst.split('.')[0]]} record(s)" in out, out
    # prmkit JSONL is one trace per line: files concatenate into one training file
    text = "".join((work / f).read_text() for f in ("gsm8k.jsonl", "prm800k.jsonl"))
    (work / "train.jsonl").write_text(text)
    return work


def real_texts() -> list[str]:
    """Every problem and step text of the real trace files (what the tokenizer learns from)."""
    from prmkit.formats.inputs import read_traces
    from prmkit.modeling.tokenizer import trace_texts

    files = [*(PROCESSBENCH / f"{s}.json" for s in ("gsm8k", *EVAL_SPLITS)), PRM800K, SHEPHERD]
    return list(trace_texts([t for f in files for t in read_traces(f)]))


@pytest.fixture(scope="module")
def backbone(work) -> Path:
    """An ordinary HF causal-LM folder (config, safetensors, tokenizer), as a user's Qwen2.5 folder is."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from prmkit.modeling.tokenizer import build_tokenizer

    tok = build_tokenizer(real_texts(), vocab_size=512, extra_tokens=[])  # no step tag: training adds it
    config = Qwen2Config(
        vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=MAX_LENGTH,
        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
        tie_word_embeddings=True,
    )  # fmt: skip
    torch.manual_seed(0)
    folder = work / "backbone"
    Qwen2ForCausalLM(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def prm(work, backbone) -> Path:
    """``prmkit train prm`` on the converted real traces, on the backbone folder."""
    out = work / "prm"
    prmkit(
        "train", "prm", work / "train.jsonl", "-o", out, "--base-model", backbone,
        "--label-source", "human", "--max-length", MAX_LENGTH, "--max-steps", 4, "--batch-size", 4,
        "--eval-every", 2, "--threads", 2,
    )  # fmt: skip
    return out


@pytest.mark.slow
def test_checkpoint_is_an_hf_folder_on_the_backbone(prm, backbone):
    from transformers import AutoModelForTokenClassification

    config = json.loads((prm / "config.json").read_text())
    assert config["architectures"] == ["Qwen2ForTokenClassification"]
    assert config["prmkit"]["max_length"] == MAX_LENGTH
    card = json.loads((prm / "process_card.json").read_text())
    assert card["base_model"] == str(backbone)
    assert card["data"]["traces"] == RECORDS["gsm8k"] + RECORDS["prm800k"]
    assert card["training"]["steps"] == 4
    assert card["training"]["overlong"]["train"]["skipped"] == 0  # 2,048 tokens hold every record
    model = AutoModelForTokenClassification.from_pretrained(prm)  # no prmkit needed to load it
    assert model.config.prmkit["tag_id"] < model.get_input_embeddings().num_embeddings


@pytest.mark.slow
def test_score_reads_every_real_file(prm, work):
    """Every record of every real trace file (four ProcessBench splits, PRM800K, Math-Shepherd) is scored,
    read in its own format with no conversion. The command runs in this process (typer's runner: the
    same CLI, without paying a fresh interpreter's imports six times; the other tests here run it as a
    user would)."""
    from typer.testing import CliRunner

    from prmkit.cli import app
    from prmkit.formats.inputs import read_traces

    files = {s: PROCESSBENCH / f"{s}.json" for s in ("gsm8k", *EVAL_SPLITS)}
    files |= {"prm800k": PRM800K, "math_shepherd": SHEPHERD}
    for name, src in files.items():
        out = work / f"scored-{name}.jsonl"
        shown = CliRunner().invoke(app, ["score", str(prm), str(src), "-o", str(out), "--aggregate", "min"])
        assert shown.exit_code == 0 and "Traceback" not in shown.output, shown.output
        traces = read_traces(out)
        steps = sum(len(t.steps) for t in traces)
        assert len(traces) == RECORDS[name]
        assert f"scored {len(traces)} of {len(traces)} traces ({steps} of {steps} steps)" in shown.output
        labels = [s.label(f"model:{prm}") for t in traces for s in t.steps]
        assert all(lab is not None and 0.0 <= lab.score <= 1.0 for lab in labels), name
        for t in traces:
            assert t.metadata["prm_score"]["how"] == "min"
            assert t.metadata["prm_score"]["value"] == pytest.approx(
                min(s.label("model").score for s in t.steps)
            )


@pytest.mark.slow
def test_eval_processbench_on_the_other_splits(prm, work):
    out = work / "eval"
    files = [PROCESSBENCH / f"{s}.json" for s in EVAL_SPLITS]
    shown = prmkit("eval", "processbench", *files, "--model", prm, "-o", out)
    result = json.loads((out / "processbench.json").read_text())
    assert [s["name"] for s in result["subsets"]] == list(EVAL_SPLITS)
    for subset in result["subsets"]:
        assert subset["traces"] == RECORDS[subset["name"]]
        assert subset["with_error"] + subset["error_free"] == subset["traces"]
        assert subset["no_prediction"] == subset["overlong"] == 0
        for metric in ("acc_error", "acc_correct", "f1"):
            assert 0.0 <= subset[metric] <= 1.0
        assert f"| {subset['name']} | {subset['traces']} |" in shown.stdout + shown.stderr
    mean = sum(s["f1"] for s in result["subsets"]) / len(EVAL_SPLITS)
    assert result["f1"] == pytest.approx(mean)  # the headline: ProcessBench's plain mean of subset F1s
    stored = json.loads((prm / "config.json").read_text())["prmkit"]["threshold"]
    assert (result["threshold"], result["threshold_from"]) == (stored, "checkpoint")
    predictions = (out / "predictions.jsonl").read_text().splitlines()
    assert len(predictions) == sum(RECORDS[s] for s in EVAL_SPLITS)


@pytest.mark.slow
def test_serve_scores_a_real_record_as_score_does(prm, work):
    """The longest olympiadbench record over HTTP (``/score``, steps as a list) against ``prmkit score``."""
    from prmkit.formats.inputs import read_traces

    scored = work / "scored-served.jsonl"
    prmkit("score", prm, PROCESSBENCH / "olympiadbench.json", "-o", scored)
    trace = max(read_traces(scored), key=lambda t: sum(len(s.text) for s in t.steps))
    offline = [s.label("model").score for s in trace.steps]
    port = free_port()
    log = work / "serve.log"
    with log.open("w") as fh:
        proc = subprocess.Popen(
            [PRMKIT, "serve", str(prm), "--port", str(port)], stdout=fh, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, f"prmkit serve did not answer in 90 s:\n{log.read_text()}"
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.3)
        body = {"traces": [{"problem": trace.problem.text, "steps": [s.text for s in trace.steps]}]}
        reply = httpx.post(f"{url}/score", json=body, timeout=60)
        assert reply.status_code == 200, reply.text
        (result,) = reply.json()["results"]
    finally:
        stop(proc)
    assert len(trace.steps) > 5
    assert result["step_scores"] == pytest.approx(offline, abs=1e-5)
    assert result["score"] == pytest.approx(min(offline), abs=1e-5)  # the checkpoint's aggregation: min
    assert "Traceback" not in log.read_text()


def test_the_docs_commands_use_only_flags_prmkit_has():
    """Every ``prmkit`` command in docs/real-data.md's GPU block names a real sub-command and real flags
    (the block needs a GPU and a model folder to run; the slow tests above run its commands on a tiny one)."""
    import typer.main

    from prmkit.cli import app

    root = typer.main.get_command(app)
    block = re.search(r"```bash\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert block, "docs/real-data.md lost its command block"
    lines = block.group(1).replace("\\\n", " ").splitlines()
    commands = [seg for line in lines for seg in " ".join(shlex.split(line, comments=True)).split(" && ")]
    checked = 0
    for command in commands:
        words = command.split()
        if not words or words[0] != "prmkit":
            continue
        cmd, rest = root, words[1:]
        while hasattr(cmd, "commands") and rest and rest[0] in cmd.commands:
            cmd, rest = cmd.commands[rest[0]], rest[1:]
        assert not hasattr(cmd, "commands"), f"{command!r}: no such prmkit command"
        known = {opt for param in cmd.params for opt in (*param.opts, *param.secondary_opts)}
        unknown = [w for w in rest if w.startswith("-") and w.split("=")[0] not in known]
        assert not unknown, f"{command!r}: prmkit {cmd.name} has no {unknown}"
        checked += 1
    assert checked >= 7  # convert x2, validate, inspect, train prm, eval processbench, score, serve
