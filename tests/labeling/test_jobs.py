from __future__ import annotations

import threading
import time

import pytest

from prmkit.core.errors import InputError
from prmkit.core.model import Step
from prmkit.labeling.jobs import Job, derive_seed, prefix_key


def test_seeds_and_keys_depend_on_content_only():
    assert derive_seed(0, "mc", "k") == derive_seed(0, "mc", "k") == 463398190  # stable across runs/machines
    assert derive_seed(1, "mc", "k") != derive_seed(0, "mc", "k")
    a = prefix_key("p", [Step(text="x"), Step(text="y")])
    assert a == prefix_key("p", [Step(text="x"), Step(text="y", labels=[])])
    assert a != prefix_key("p", [Step(text="xy")]) != prefix_key("q", [Step(text="x"), Step(text="y")])


def test_a_key_is_computed_once_even_when_threads_race(tmp_path):
    calls = []

    def compute() -> dict:
        calls.append(1)
        time.sleep(0.05)
        return {"n": 3}

    with Job(tmp_path, "t", {}) as job:
        threads = [threading.Thread(target=job.get, args=("k", compute)) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(calls) == 1
    assert (tmp_path / "records.jsonl").read_text().count("\n") == 1
    with Job(tmp_path, "t", {}) as again:
        assert again.resumed == 1 and again.get("k", compute) == {"key": "k", "n": 3} and len(calls) == 1


def test_map_stops_on_an_error_that_is_not_an_items_and_keeps_finished_work(tmp_path):
    def fn(i: int) -> dict:
        if i == 3:
            raise RuntimeError("a bug, not an item's failure")
        time.sleep(0.002)  # a unit of work takes time (a rollout request)
        return job.get(f"k{i}", lambda: {"n": 1})

    with Job(tmp_path, "t", {}) as job, pytest.raises(RuntimeError, match="a bug"):
        job.map(list(range(500)), fn, 2, "t", show=False)
    done = (tmp_path / "records.jsonl").read_text().count("\n")
    assert 0 < done < 100  # queued units were cancelled, finished ones are on disk


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("job.json", "", "job.json:1: (json)"),
        ("job.json", '{"kind": "t"}', "job.json: params"),
        ("records.jsonl", '{"key": "a"}\n{"key": \n{"key": "c"}\n', "records.jsonl:2: (json)"),
        ("records.jsonl", '{"key": "a"}\n[1]\n', "records.jsonl:2: key"),
    ],
)
def test_damaged_state_is_refused_with_its_place_and_the_fix(name, text, where, tmp_path):
    with Job(tmp_path, "t", {}) as job:
        job.get("a", lambda: {"n": 1})
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError) as err:
        Job(tmp_path, "t", {})
    assert where in str(err.value) and "--restart" in str(err.value)
    with Job(tmp_path, "t", {}, restart=True) as fresh:
        assert fresh.resumed == 0


def test_a_file_as_work_folder_is_refused(tmp_path):
    (tmp_path / "w").write_text("")
    with pytest.raises(InputError, match="expected a job's work folder, found a file"):
        Job(tmp_path / "w", "t", {})


def test_failed_items_are_recorded_and_a_run_of_them_stops_the_job(tmp_path):
    from prmkit.core.errors import ItemError
    from prmkit.labeling.jobs import JobStoppedError

    def flaky(i: int) -> dict:
        if i % 10 == 3:
            raise ItemError(f"item {i} refused")
        return job.get(f"k{i}", lambda: {"n": 1})

    with Job(tmp_path / "a", "t", {}) as job:
        results = job.map(list(range(100)), flaky, 4, "t", show=False, about=lambda i: {"item": i})
    assert [i for i, r in enumerate(results) if r is None] == list(range(3, 100, 10))
    assert job.failure_summary()["failed"] == 10
    failed = (tmp_path / "a" / "failed.jsonl").read_text().splitlines()
    assert len(failed) == 10 and '"reason": "item 3 refused"' in "".join(failed)

    def down(i: int) -> dict:
        if i >= 5:
            raise ItemError("connection refused")
        return job.get(f"k{i}", lambda: {"n": 1})

    with (
        Job(tmp_path / "b", "t", {}) as job,
        pytest.raises(JobStoppedError, match="64 items failed in a row"),
    ):
        job.map(list(range(10_000)), down, 1, "t", show=False)  # one thread: items finish in order
    assert len(job.failures) == 64  # it stopped there: the other 9,931 were never started
