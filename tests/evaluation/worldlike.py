"""Gold-labelled traces built by hand, and scores that behave like a PRM and like an ORM.

They let the metric and audit logic be tested exactly, in milliseconds; the tests that train real
tiny models on the world live in tests/cards/test_card_world_model.py (marked slow).
"""

from __future__ import annotations

import numpy as np

from prmkit.core.model import Label, Problem, Provenance, Step, Trace

GOLD_LOCAL = Provenance(method="gold", actor="world:local")
GOLD_PREFIX = Provenance(method="gold", actor="world:prefix")


def make_trace(pid: str, tid: str, n_steps: int, first_error: int, correct: bool, answer: str = "1") -> Trace:
    """A trace with both gold views, its first error at ``first_error`` (-1 = none)."""
    steps = []
    for i in range(n_steps):
        local = -1 if i == first_error else 1
        prefix = -1 if first_error != -1 and i >= first_error else 1
        steps.append(
            Step(
                text=f"step {i}",
                labels=[
                    Label(rating=local, provenance=GOLD_LOCAL),
                    Label(rating=prefix, provenance=GOLD_PREFIX),
                ],
            )
        )
    final = "1" if correct else str(2 + sum(map(ord, tid)) % 3)
    return Trace(
        id=tid,
        problem=Problem(id=pid, text=f"problem {pid}", answer=answer, source="arithmetic"),
        steps=steps,
        final_answer=final,
        answer_correct=correct,
    )


def synthetic_world(problems: int = 30, per_problem: int = 32, seed: int = 0) -> list[Trace]:
    """Traces where ~45 % have an error, errors usually (not always) make the answer wrong, and some
    error-free traces still end wrong (a bad final step is the error then) — like the world's policy."""
    rng = np.random.default_rng(seed)
    out = []
    for p in range(problems):
        skill = rng.uniform(0.2, 0.8)
        for k in range(per_problem):
            n = int(rng.integers(2, 7))
            has_error = rng.random() > skill
            fe = int(rng.integers(0, n)) if has_error else -1
            correct = (not has_error) or rng.random() < 0.15  # 15 % of erroneous traces are lucky
            out.append(make_trace(f"p{p}", f"p{p}-{k}", n, fe, correct))
    return out


def prm_like(traces: list[Trace], noise: float = 0.1, seed: int = 1) -> list[list[float]]:
    """Scores that follow gold step validity: high before the first error, low from it on."""
    rng = np.random.default_rng(seed)
    out = []
    for t in traces:
        fe = t.first_error("gold")
        row = [0.15 if fe != -1 and i >= fe else 0.9 for i in range(len(t.steps))]
        out.append([float(np.clip(s + rng.normal(0, noise), 0, 1)) for s in row])
    return out


def orm_like(traces: list[Trace], noise: float = 0.1, seed: int = 2) -> list[list[float]]:
    """An outcome model: one score per trace (from the final answer), broadcast to every step."""
    rng = np.random.default_rng(seed)
    out = []
    for t in traces:
        s = float(np.clip((0.85 if t.answer_correct else 0.2) + rng.normal(0, noise), 0, 1))
        out.append([s] * len(t.steps))
    return out
