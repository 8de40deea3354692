"""Hostile recipes (issue 66): each is refused in one line naming the file, its line and the field, with
exit code 2, no traceback, and in bounded memory and time.

``prmkit run`` runs in a subprocess with its address space capped at 1 GiB and a timeout, so a reader that
expands what it reads fails the test instead of the machine. The last tests hold an output folder's lock
in one process and start ``prmkit run`` on it from another.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from prmkit.core.errors import InputError
from prmkit.core.yamlconf import MAX_DEPTH, MAX_EXPANDED, load_yaml_config
from prmkit.pipeline.recipe import Recipe
from prmkit.pipeline.runner import RUN_LOCK, output_lock
from prmkit.rl.config import RlConfig

MEMORY_CAP = 1 << 30
TIMEOUT_S = 60


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def prmkit_run(*args: object) -> subprocess.CompletedProcess:
    """``prmkit run ARGS`` in a process of at most 1 GiB that must end within a minute."""
    return subprocess.run(
        [sys.executable, "-m", "prmkit.cli", "run", *map(str, args)],
        capture_output=True,
        text=True,
        preexec_fn=_cap_memory,
        timeout=TIMEOUT_S,
    )


def assert_one_line(r: subprocess.CompletedProcess, start: str, *found: str) -> str:
    """Exit code 2 and one line ``error: <start>...`` holding each of ``found``; no traceback."""
    out = r.stdout + r.stderr
    assert r.returncode == 2, out
    assert "Traceback" not in out, out
    lines = out.strip().splitlines()
    assert len(lines) == 1, out
    assert lines[0].startswith(f"error: {start}"), out
    for text in found:
        assert text in lines[0], out
    return lines[0]


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if needle in line)


def write(tmp_path: Path, text: str | bytes, name: str = "recipe.yaml") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


# ---------------------------------------------------------------- 1. aliases that expand without end


def laughs(indent: str) -> list[str]:
    """Ten anchors, each a list of ten aliases of the one before: 10**10 strings once expanded."""
    lines = [f"{indent}l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"{indent}l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 10)]
    return lines


BOMBS = {
    "a string field": "name: &bomb\n" + "\n".join(laughs("  ")) + "\n",
    "a list field": "labels:\n  methods:\n" + "\n".join(f"    - {x}" for x in laughs("")) + "\n",
    "an unknown top-level key": "\n".join(laughs("")) + "\nname: ok\n",
}


@pytest.mark.parametrize("where", BOMBS)
def test_an_alias_bomb_is_refused_where_it_grows_past_the_bound(where, tmp_path):
    text = BOMBS[where]
    recipe = write(tmp_path, text)
    # l0 holds 41 nodes and characters, each next anchor ten times the last and one: l5 is past 10**6
    assert MAX_EXPANDED == 1_000_000
    line = assert_one_line(prmkit_run(recipe, "--check"), f"{recipe}:{line_of(text, '&l5')}: (yaml): ")
    assert "at most 1,000,000 nodes and characters with aliases expanded" in line


def test_a_merge_key_bomb_and_a_cycle_are_refused(tmp_path):
    merges = ["m0: &m0 {a: 1, b: 2}"]
    merges += [f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], k{i}: 1}}" for i in range(1, 40)]
    recipe = write(tmp_path, "\n".join(merges) + "\n")
    assert_one_line(prmkit_run(recipe, "--check"), f"{recipe}:", "aliases expanded")
    cycle = write(tmp_path, "name: ok\nevaluate: &e\n  compare: [*e]\n", "cycle.yaml")
    assert_one_line(prmkit_run(cycle, "--check"), f"{cycle}:3: (yaml): ", "a collection containing it")


def test_aliases_a_recipe_may_use_still_read(tmp_path):
    recipe = write(
        tmp_path,
        "train:\n  prm: &budget {max_steps: 7, threads: 1}\n  orm: *budget\n  prm_sources: [gold]\n",
    )
    read = load_yaml_config(recipe, Recipe)
    assert (read.train.prm.max_steps, read.train.orm.max_steps) == (7, 7)


# ------------------------------------------------------------ 2. an integer Python will not convert


def test_a_5000_digit_integer_is_a_located_error(tmp_path):
    recipe = write(tmp_path, f"name: ok\nproblems:\n  n: {'9' * 5000}\n")
    assert_one_line(
        prmkit_run(recipe, "--check"),
        f"{recipe}:3: (yaml): expected an integer of at most 40 characters",
        "found one of 5000",
    )


# --------------------------------------------------------------------------- 3. a wrong type anywhere


def test_a_string_for_a_section_names_the_section(tmp_path):
    recipe = write(tmp_path, "name: ok\nproblems: 'abc'\n")
    assert_one_line(
        prmkit_run(recipe, "--check"), f"{recipe}:2: problems: expected ", "valid dictionary", "found 'abc'"
    )


def setting_paths(tree: dict, prefix: tuple = ()) -> list[tuple]:
    """Every key path of a recipe's settings, sections and leaves alike."""
    paths = []
    for key, value in tree.items():
        paths.append((*prefix, key))
        if isinstance(value, dict):
            paths += setting_paths(value, (*prefix, key))
    return paths


WRONG = ["abc", "x/y", 7, -1, 2.5, True, None, [1], [], [[1]], [{"a": 1}], {"a": 1}, {}]
"""A string where a number, list or mapping belongs, a list where a mapping, a mapping where a scalar, null..."""


def every_setting() -> list[tuple]:
    defaults = Recipe().model_dump(mode="json") | {"rl": {"config": {}}}
    extra = [("rl", "config", "steps"), ("labels", "options", "mc"), ("labels", "options", "mc", "rollouts")]
    return setting_paths(defaults) + extra


def test_a_wrong_type_in_any_setting_is_located_never_a_crash(tmp_path):
    paths = every_setting()
    assert len(paths) > 150  # every section is walked, down to the world's and the policies' own fields
    for path in paths:
        for value in WRONG:  # nested in the file itself, so the line is the file's
            tree: dict = {"name": "ok"}
            node = tree
            for key in path[:-1]:
                node = node.setdefault(key, {})
            node[path[-1]] = value
            recipe = write(tmp_path, yaml.safe_dump(tree, sort_keys=False))
            try:
                load_yaml_config(recipe, Recipe)
            except InputError as err:  # the only way a recipe may be refused
                for issue in err.issues:
                    assert issue.file == str(recipe) and issue.line is not None, (path, value, issue)
                    assert issue.field, (path, value, issue)


# ----------------------------------------------------------------------------- 4. nesting without end


@pytest.mark.parametrize("flow", [True, False])
def test_nesting_deeper_than_python_recurses_is_a_located_error(flow, tmp_path):
    if flow:
        text = "name: " + "[" * 10_000 + "]" * 10_000 + "\n"
        line = 1
    else:  # a block mapping indented ever deeper: the root is level 1, line n opens level n + 1
        text = "".join(f"{' ' * i}k{i}:\n" for i in range(1_000)) + " " * 1_000 + "v\n"
        line = MAX_DEPTH
    recipe = write(tmp_path, text)
    expected = f"(yaml): expected at most {MAX_DEPTH} levels of nesting"
    assert_one_line(prmkit_run(recipe, "--check"), f"{recipe}:{line}: {expected}")


# ------------------------------------------------------------------- 5. counts that ask for no end of work


BOUNDS = {
    "problems:\n  per_problem: 1000000000\n": (2, "problems.per_problem", "less than or equal to 1024"),
    "problems:\n  n: 1000000000\n": (2, "problems.n", "less than or equal to 1000000"),
    "problems:\n  n: 100000\n  per_problem: 1000\n": (1, "problems", "at most 10,000,000"),
    "labels:\n  rollouts: 100000000\n": (2, "labels.rollouts", "less than or equal to 1024"),
    "labels:\n  options: {binary_search: {batch: 100000000}}\n": (
        2,
        "labels.options.binary_search.batch",
        "1024",
    ),
    "seeds: [0, 4294967296]\n": (1, "seeds.1", "less than or equal to 2147483647"),
    "seeds: [" + ", ".join(map(str, range(101))) + "]\n": (1, "seeds", "at most 100 items"),
    "problems:\n  seed: -1\n": (2, "problems.seed", "greater than or equal to 0"),
    # the settings of the commands a recipe drives are bounded in their own configs, read with the recipe
    "train:\n  prm: {max_steps: 1000000000}\n": (2, "train.prm.max_steps", "less than or equal to 10000000"),
    "train:\n  pretrain: {batch_size: 1000000000}\n": (2, "train.pretrain.batch_size", "65536"),
    "evaluate:\n  per_problem: 1000000000\n": (2, "evaluate.per_problem", "less than or equal to 1024"),
    "evaluate:\n  bootstrap: 1000000000\n": (2, "evaluate.bootstrap", "less than or equal to 100000"),
}


@pytest.mark.parametrize("text", BOUNDS)
def test_a_count_past_its_bound_is_refused_by_check(text, tmp_path):
    recipe = write(tmp_path, text)
    line, field, found = BOUNDS[text]
    assert_one_line(prmkit_run(recipe, "--check"), f"{recipe}:{line}: {field}: expected ", found)


def test_per_problem_1e9_is_refused_before_any_stage_runs(tmp_path):
    recipe = write(tmp_path, f"output_dir: {tmp_path / 'out'}\nproblems:\n  per_problem: 1000000000\n")
    assert_one_line(prmkit_run(recipe), f"{recipe}:3: problems.per_problem: ")
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------------------ 6. not UTF-8


def test_invalid_utf8_names_its_line_and_byte(tmp_path):
    recipe = write(tmp_path, b"name: ok\nproblems:\n  source: arithm\xff\xfeetic\n")
    assert_one_line(
        prmkit_run(recipe, "--check"),
        f"{recipe}:3: (encoding): expected UTF-8 text, found byte 0xff at offset 35",
    )


# ----------------------------------------------------------------- 7. files that are not regular files


def test_a_device_as_the_problems_file_is_refused_in_one_line(tmp_path):
    recipe = write(tmp_path, f"output_dir: {tmp_path / 'out'}\nproblems:\n  source: /dev/zero\n")
    for args in ((recipe, "--check"), (recipe,)):
        assert_one_line(
            prmkit_run(*args), f"{recipe}:3: problems.source: ", "/dev/zero", "not a regular file"
        )
    assert not (tmp_path / "out").exists()


def test_a_fifo_as_a_processbench_file_is_refused(tmp_path):
    fifo = tmp_path / "bench.json"
    os.mkfifo(fifo)
    recipe = write(tmp_path, f"evaluate:\n  processbench: [{fifo}]\n")
    assert_one_line(
        prmkit_run(recipe, "--check"), f"{recipe}:2: evaluate.processbench: ", "not a regular file"
    )


@pytest.mark.parametrize("kind", ["device", "fifo", "too large"])
def test_a_recipe_that_is_not_a_small_regular_file_is_refused_unread(kind, tmp_path):
    if kind == "device":
        recipe = Path("/dev/zero")
    elif kind == "fifo":
        recipe = tmp_path / "recipe.yaml"
        os.mkfifo(recipe)
    else:
        recipe = write(tmp_path, "name: ok\n" + "# padding\n" * 200_000)
    expected = "a config of at most 1,048,576 bytes" if kind == "too large" else "a regular file"
    assert_one_line(prmkit_run(recipe, "--check"), f"{recipe}: (file): expected {expected}")


@pytest.mark.timeout(30)  # a reader that opens the FIFO waits for ever
def test_a_file_the_stages_read_must_be_regular_too(tmp_path):
    from prmkit.core.files import read_input_bytes

    fifo = tmp_path / "traces.jsonl"
    os.mkfifo(fifo)  # were it opened, the read would wait for a writer for ever
    with pytest.raises(InputError, match="expected a regular data file, found a device, pipe or socket"):
        read_input_bytes(fifo)


# ------------------------------------------------------------------- 8. one run per output folder

HOLD = (
    "import sys; from pathlib import Path; from prmkit.pipeline.runner import output_lock\n"
    "with output_lock(Path(sys.argv[1])):\n"
    "    print('held', flush=True); sys.stdin.readline()\n"
)


def hold_lock(out: Path) -> subprocess.Popen:
    """Another process holding ``out`` as a run does, until its stdin closes or it is killed."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def quick_recipe(tmp_path: Path) -> Path:
    """A recipe whose first stage fails at once (its trace file is not JSON): if the lock let it in, the
    run would end in that stage's error, not in the lock's."""
    traces = write(tmp_path, "not json\n", "traces.jsonl")
    text = f"problems:\n  source: {traces}\nlabels:\n  methods: [mc]\ntrain:\n  prm_sources: [mc_hard]\n"
    return write(tmp_path, text)


def test_a_second_run_on_a_held_folder_is_refused_naming_the_holder(tmp_path):
    out = tmp_path / "out"
    holder = hold_lock(out)
    try:
        r = prmkit_run(quick_recipe(tmp_path), "-o", out)
        line = assert_one_line(r, f"{out}: (output): expected an output folder no other run is writing")
        assert re.search(rf"process {holder.pid} since \S+ on {re.escape(socket.gethostname())}", line), line
        assert "another --output-dir" in line
        assert not (out / "stages").exists()  # not one stage started
    finally:
        holder.communicate("\n", timeout=TIMEOUT_S)
    assert holder.returncode == 0


def test_the_lock_of_a_killed_run_is_taken_over(tmp_path):
    out = tmp_path / "out"
    holder = hold_lock(out)
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=TIMEOUT_S)
    assert str(holder.pid) in (out / RUN_LOCK).read_text()  # the dead run's line is still in the file
    r = prmkit_run(quick_recipe(tmp_path), "-o", out)
    assert "expected an output folder no other run is writing" not in r.stdout + r.stderr
    assert "traces.jsonl:1" in r.stdout + r.stderr  # the run went on to its first stage
    with output_lock(out):  # and, the run over, the folder is free again
        assert f"process {os.getpid()} since" in (out / RUN_LOCK).read_text()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("steps", 10**9),
        ("group_size", 10**6),
        ("batch", 10**9),
        ("max_completion_length", 10**9),
        ("seed", -1),
    ],
)
def test_an_rl_setting_past_its_bound_is_refused_when_read(field, value):
    with pytest.raises(ValidationError, match=field):
        RlConfig.model_validate({"policy": "pi0", "prm": "prm", field: value})
    RlConfig.model_validate({"policy": "pi0", "prm": "prm"})  # the defaults are inside every bound
