"""The problem generator: determinism, splits, table facts, knobs."""

from __future__ import annotations

import hashlib
import json

import pytest

from prmkit.worlds.arithmetic import WORLD_VERSION, WorldConfig, generate_problem, generate_problems
from prmkit.worlds.arithmetic.generator import apply_op

# The first 20 train problems of seed 0. If this changes, problems changed: bump WORLD_VERSION.
GOLDEN = (
    "d3cebcf5fd5aeb3f2316cc18d08c2ecf40ba9d4b4085041f3291237a2bb69f45"  # world-2: the version in metadata
)


def _digest(problems) -> str:
    return hashlib.sha256(
        json.dumps(
            [p.model_dump(mode="json", exclude_defaults=True) for p in problems], sort_keys=True
        ).encode()
    ).hexdigest()


def test_same_seed_same_problems_on_any_machine() -> None:
    problems = generate_problems(20, seed=0)
    assert _digest(problems) == GOLDEN, f"problems changed: bump WORLD_VERSION ({WORLD_VERSION}) and GOLDEN"
    assert _digest(generate_problems(20, seed=0)) == _digest(problems)
    assert _digest(generate_problems(20, seed=1)) != _digest(problems)
    assert generate_problem(7, seed=0).model_dump() == problems[7].model_dump()  # independent of n


def _facts(problem, n: int = 10):
    graph = problem.metadata["graph"]
    q = graph["quantities"]
    r = q[0]
    for k, op in enumerate(graph["ops"]):
        b = q[k + 1]
        yield op["op"], r, b, op["result"]
        r = op["result"]


@pytest.mark.parametrize("split", ["train", "test", "heldout"])
def test_every_step_is_a_small_table_fact(split: str) -> None:
    for problem in generate_problems(300, seed=0, split=split):
        graph = problem.metadata["graph"]
        results = []
        for op, a, b, c in _facts(problem):
            assert apply_op(op, a, b) == c
            assert 2 <= b <= 10
            if op in "+*":
                assert a <= 10
            else:
                assert c <= 10 and (op == "-" or a == b * c)
            results.append(c)
        assert problem.answer == str(results[-1])
        assert problem.source == "world" and graph["version"] == WORLD_VERSION
        for v in graph["quantities"]:
            assert f" {v} " in problem.text  # every quantity is stated in the text


def test_splits_have_their_lengths_and_train_test_share_no_graph() -> None:
    def signature(p):
        g = p.metadata["graph"]
        return (g["quantities"][0], tuple((o["op"], g["quantities"][k + 1]) for k, o in enumerate(g["ops"])))

    train = generate_problems(1500, seed=0, split="train")
    test = generate_problems(400, seed=0, split="test")
    heldout = generate_problems(100, seed=0, split="heldout")
    lengths = {
        s: {len(p.metadata["graph"]["ops"]) for p in ps}
        for s, ps in (("train", train), ("test", test), ("heldout", heldout))
    }
    assert lengths["train"] == lengths["test"] == {2, 3, 4, 5}
    assert lengths["heldout"] == {6, 7, 8}
    assert not {signature(p) for p in train} & {signature(p) for p in test}
    assert len({p.id for p in train + test + heldout}) == 2000


def test_knobs_make_harder_worlds() -> None:
    default = generate_problems(200, seed=0)
    big = generate_problems(200, seed=0, config=WorldConfig(max_value=50))
    assert max(max(p.metadata["graph"]["quantities"]) for p in big) > 10
    varied = generate_problems(200, seed=0, config=WorldConfig(phrasing_variety=2))

    def vocabulary(problems):
        return {w for p in problems for w in p.text.split() if w.isalpha()}

    assert len(vocabulary(varied)) > len(vocabulary(default)) + 20
    long = generate_problems(50, seed=0, config=WorldConfig(min_ops=8, max_ops=8))
    assert {len(p.metadata["graph"]["ops"]) for p in long} == {8}


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown split 'dev'"):
        generate_problems(1, split="dev")
    with pytest.raises(ValueError, match="min_ops"):
        WorldConfig(min_ops=5, max_ops=3)
