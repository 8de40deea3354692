"""Every ```python block of README.md and docs/*.md is a program, and this test runs it.

A page's blocks run in order, in one namespace, in a fresh working directory, as a reader pasting them
one after another into one interpreter would; one test id per page. The few files a page's prose says
the reader already has are made first (``runs/prm``: a tiny random checkpoint, ``traces.jsonl``: world
traces with gold labels), and docs/formats.md reads the real data samples as ``REAL`` and writes to
``TMP``. A block that needs what no test can have (a GPU, a 7B download, a network endpoint) carries
the marker ``<!-- not run: REASON -->`` on the line before its fence and is reported as skipped with
that reason. Beside "it runs", a page may have a check of what it printed (``CHECKS``).
"""

from __future__ import annotations

import contextlib
import io
import linecache
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NOT_RUN = re.compile(r"<!-- not run: (?P<reason>[^>]+?) -->")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: its language, its text, its first line (1-based) and, for a block
    marked ``<!-- not run: REASON -->``, the reason."""

    lang: str
    code: str
    line: int
    not_run: str | None = None


def fenced_blocks(page: Path, lang: str | None = None) -> list[Block]:
    """The fenced blocks of ``page`` (of one language if ``lang`` is given), as markdown-it reads them
    (indented fences in lists included). A ``not run`` marker anywhere but right before a fence is an
    error, so a marker cannot drift away from the block it excuses."""
    tokens = MarkdownIt("commonmark").parse(page.read_text(encoding="utf-8"))
    blocks, pending = [], None
    for token in tokens:
        marker = NOT_RUN.search(token.content) if token.type == "html_block" else None
        if pending is not None and not (token.type == "fence" and token.map[0] == pending[1]):
            raise ValueError(f"{page.name}:{pending[1]}: a 'not run' marker must be right before a fence")
        if marker:
            pending = (marker["reason"], token.map[1])
            continue
        if token.type == "fence":
            info = token.info.split()[0] if token.info.strip() else ""
            reason = pending[0] if pending else None
            blocks.append(Block(info, token.content, token.map[0] + 1, reason))
        pending = None
    if pending is not None:
        raise ValueError(f"{page.name}:{pending[1]}: a 'not run' marker must be right before a fence")
    return [b for b in blocks if lang is None or b.lang == lang]


@pytest.fixture(scope="module")
def random_prm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One tiny random checkpoint (classifier head) for every page that names ``runs/prm``."""
    from prmkit.testing import make_random_prm

    return Path(make_random_prm(tmp_path_factory.mktemp("prm")))


def _runs_prm(tmp: Path, request: pytest.FixtureRequest) -> dict:
    shutil.copytree(request.getfixturevalue("random_prm"), tmp / "runs" / "prm")
    return {}


def _policy(tmp: Path, request: pytest.FixtureRequest) -> dict:
    """A 1-layer Llama as the ``policy`` to train, its ``tokenizer`` and a ``dataset`` of two world
    problems (``prompt``, ``answer``), as tests/rl/test_trl.py builds them."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM

    from prmkit.modeling.backbone import TinyConfig, tiny_config
    from prmkit.modeling.tokenizer import build_tokenizer
    from prmkit.worlds.arithmetic import generate_problems

    problems = generate_problems(2, seed=2)
    tokenizer = build_tokenizer([p.text for p in problems] + ["3 + 4 = 7 apples.", "The answer is 7."], 300)
    torch.manual_seed(0)
    config = tiny_config(tokenizer, TinyConfig(layers=1, width=32, heads=2, positions="rope"))
    dataset = Dataset.from_dict(
        {"prompt": [p.text + "\n" for p in problems], "answer": [p.answer for p in problems]}
    )
    return {"policy": AutoModelForCausalLM.from_config(config), "tokenizer": tokenizer, "dataset": dataset}


def _traces(tmp: Path, request: pytest.FixtureRequest) -> dict:
    from prmkit.core import write_traces
    from prmkit.worlds.arithmetic import generate_problems, gold_label, sample_traces

    write_traces(tmp / "traces.jsonl", gold_label(sample_traces(generate_problems(3, seed=0), 2, seed=0)))
    return {}


def _real(tmp: Path, request: pytest.FixtureRequest) -> dict:
    from tests.conftest import REAL

    if not REAL.is_dir():
        pytest.fail(f"real data samples not found at {REAL}; CI clones the repo with shared/ beside it")
    return {"REAL": REAL, "TMP": tmp}


GIVEN: dict[str, list[Callable[[Path, pytest.FixtureRequest], dict]]] = {
    "README.md": [_traces],
    "evaluation.md": [_runs_prm],
    "formats.md": [_real],
    "models.md": [_runs_prm],
    "rl.md": [_runs_prm, _policy],
    "serving.md": [_runs_prm],
}
"""What a page's prose says the reader already has, made in the working directory first."""


def _world_check(text: str, printed: list[str], tmp: Path) -> None:
    """The gold-label example prints a first error; a block that prints a table (the systematic-mode
    measurement) prints exactly the rows the page shows."""
    for out in printed:
        if out.startswith("|"):
            missing = [row for row in out.splitlines() if f"\n{row}\n" not in text]
            assert not missing, f"docs/world.md does not show these measured rows: {missing}"
        else:
            assert "first error:" in out


def _search_check(text: str, printed: list[str], tmp: Path) -> None:
    assert "".join(printed).count("accuracy") == 5


def _labeling_check(text: str, printed: list[str], tmp: Path) -> None:
    out = "".join(printed)
    assert "binary search" in out and "consensus kept" in out and "mc_hard:world" in out


def _formats_check(text: str, printed: list[str], tmp: Path) -> None:
    assert (tmp / "trl.jsonl").exists() and (tmp / "gsm8k.json").exists()


CHECKS: dict[str, Callable[[str, list[str], Path], None]] = {
    "world.md": _world_check,
    "search.md": _search_check,
    "labeling.md": _labeling_check,
    "formats.md": _formats_check,
}
"""Per page, what its blocks must print or write beyond running: (page text, each block's stdout, cwd)."""

SLOW: set[str] = set()
"""Pages whose blocks take more than about 20 s (``make test-fast`` leaves them out)."""

FILTERS = {
    # TRL 1.16 itself sets/reads transformers 5.23's deprecated gradient-checkpointing names
    "rl.md": r"ignore:`(is_)?gradient_checkpointing\w*` is deprecated:FutureWarning",
}


def _param(page: Path) -> Any:
    marks = [pytest.mark.slow] if page.name in SLOW else []
    if page.name in FILTERS:
        marks.append(pytest.mark.filterwarnings(FILTERS[page.name]))
    return pytest.param(page, id=page.name, marks=marks)


PYTHON_PAGES = [_param(p) for p in PAGES if fenced_blocks(p, "python")]


def test_every_python_block_is_fenced_as_python() -> None:
    """``py``/``python3``/``pycon`` fences would escape the run below: one spelling, ``python``."""
    odd = [
        f"{p.name}:{b.line}" for p in PAGES for b in fenced_blocks(p) if b.lang in ("py", "python3", "pycon")
    ]
    assert not odd, f"fence these as ```python: {odd}"


@pytest.mark.parametrize("page", PYTHON_PAGES)
def test_python_blocks_run(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    for given in GIVEN.get(page.name, []):
        namespace.update(given(tmp_path, request))
    printed = []
    for block in fenced_blocks(page, "python"):
        if block.not_run:
            continue  # listed by test_not_run_blocks
        name = f"{page.relative_to(ROOT)}, block at line {block.line}"
        linecache.cache[name] = (len(block.code), None, block.code.splitlines(True), name)  # for tracebacks
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block.code, name, "exec"), namespace)
        printed.append(out.getvalue())
    if page.name in CHECKS:
        CHECKS[page.name](page.read_text(encoding="utf-8"), printed, tmp_path)


NOT_RUN_BLOCKS = [
    pytest.param(b.not_run, id=f"{p.name}:{b.line}")
    for p in PAGES
    for b in fenced_blocks(p, "python")
    if b.not_run
] or [pytest.param(None, id="none")]


@pytest.mark.parametrize("reason", NOT_RUN_BLOCKS)
def test_not_run_blocks(reason: str | None) -> None:
    """Each block marked ``not run`` is listed here, skipped with its page's reason."""
    if reason is None:
        pytest.skip("no block of the docs is marked 'not run'")
    pytest.skip(reason)


def test_a_marker_excuses_only_the_fence_right_after_it(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    marked = "Text.\n<!-- not run: needs a GPU -->\n```python\nimport vllm\n```\n"
    page.write_text(marked + "- item\n\n  ```python\n  print(1)\n  ```\n", encoding="utf-8")
    assert fenced_blocks(page, "python") == [
        Block("python", "import vllm\n", 3, "needs a GPU"),
        Block("python", "print(1)\n", 8),
    ]
    page.write_text("<!-- not run: needs a GPU -->\n\n```python\nimport vllm\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"page\.md:1: a 'not run' marker must be right before a fence"):
        fenced_blocks(page)
