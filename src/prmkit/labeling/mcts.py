"""OmegaPRM's Monte Carlo tree search over rollouts (Luo et al. 2024, "Improve Mathematical Reasoning in
Language Models by Automated Process Supervision", arXiv:2406.06592, section 3.3) — ``label mcts``.

Per problem, a tree of *states* (step prefixes), each keeping its rollouts, their Monte Carlo value
``MC(s)`` (the share that reach the reference answer) and a visit count ``N(s)``. The problem's input
traces are the root's rollouts, drawn already (the root, the problem alone, is taken as good, as binary
search takes the empty prefix). Each round:

- **select** the (state, rollout) pair with the highest ``Q(s, r) + U(s)`` among the *candidates*, the
  rollouts that did not reach the answer (wrong, or no answer) from a state with ``MC(s) > 0`` (the root
  included), each selected once::

      Q(s, r) = alpha ** (1 - MC(s)) * beta ** (len(r) / L)    a wrong rollout of a likely-right state
      U(s)    = c_puct * sqrt(sum_s' N(s')) / (1 + N(s))       states visited less

  with the paper's alpha = 0.5, beta = 0.9, L = 500 and c_puct = 0.125 (openreasoner/openr's
  ``data/omegaPRM_v2`` uses the same). ``len(r)`` counts the rollout's words, as openr does (the paper
  counts tokens; on short steps the factor is near 1 either way). Ties go to the candidate found first.
- **expand** by binary search inside the selected rollout (:func:`~prmkit.labeling.binary_search.search_trace`,
  started at the selected state, known good): every probed prefix becomes a state with ``rollouts``
  rollouts (``MC > 0``: good; ``MC = 0``: wrong by its last step), the last good state and the first
  wrong one among them; a new state's rollouts that missed the answer join the candidates.
- **maintain**: ``N(s) += 1`` for the selected state.

Tree reuse: a prefix in the tree (probed before, or shared by traces) is never rolled out again; its
rollouts are reused. The search stops when no candidate is left or when the next probe would take the
problem past ``budget`` rollouts (a cut search keeps what it probed).

Labels (method ``mcts``; one label per step carrying both readings): a step whose prefix is a state
scores its ``MC`` and is rated +1 when ``MC > 0``, else -1; the last step of a trace that states an
answer is that answer's correctness (no rollouts, as Monte Carlo's); a step between states takes the
value of the nearest later state of its trace when that one is good (a prefix of a reachable prefix is
reachable). Other steps (after a wrong state, or where the budget left a trace unsearched) stay
unlabelled. Rollouts are drawn as Monte Carlo's are (:func:`prmkit.labeling.mc.roll_out`: one seed per
prefix content), so with one policy and seed a state's MC is Monte Carlo's soft label of that prefix.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import Field

from prmkit.core.model import Label, Trace
from prmkit.core.protocols import Policy
from prmkit.labeling.binary_search import search_trace
from prmkit.labeling.common import (
    EstimateOptions,
    JobOptions,
    provenance,
    read_labelable,
    record_rollouts,
    write_result,
)
from prmkit.labeling.jobs import Job, derive_seed, prefix_key
from prmkit.labeling.labellers import Labeller
from prmkit.labeling.mc import RolloutRun, final_step_record
from prmkit.labeling.rollouts import (
    DRAW_FIELDS,
    MAX_ROLLOUTS,
    Truncated,
    continuation_trace,
    draw,
    draw_check,
    outcome,
    scored,
    success_rate,
)
from prmkit.policies.options import PolicyOptions

MISSED = ("wrong", "no_answer")
"""Rollout outcomes that make a candidate: it missed the answer (truncated and unparseable say nothing)."""


class MCTSConfig(JobOptions, PolicyOptions, EstimateOptions):
    """``prmkit label mcts``: OmegaPRM's tree search over rollouts, soft labels from its states."""

    rollouts: int = Field(default=8, ge=1, le=MAX_ROLLOUTS)
    """Rollouts per state (its MC estimate); at most 1024."""
    budget: int = Field(default=200, ge=1, le=10**7)
    """Most rollouts per problem (openr's default rollout budget): the search stops at the first probe
    that would spend more."""
    alpha: float = Field(default=0.5, gt=0.0, le=1.0)
    """Q's weight of a state's MC: Q = alpha^(1 - MC) * beta^(len / L) (OmegaPRM's 0.5)."""
    beta: float = Field(default=0.9, gt=0.0, le=1.0)
    """Q's length penalty per L words of the rollout (OmegaPRM's 0.9)."""
    length_scale: int = Field(default=500, ge=1)
    """L, the rollout length (in words) the penalty is counted in (OmegaPRM's 500)."""
    c_puct: float = Field(default=0.125, ge=0.0, le=100.0)
    """Exploration: U = c_puct * sqrt(total visits) / (1 + the state's visits) (OmegaPRM's 0.125)."""

    def rules(self) -> Rules:
        """The search's rules from this config."""
        fields = ("rollouts", "budget", "alpha", "beta", "length_scale", "c_puct", "truncated")
        return Rules(**{k: getattr(self, k) for k in fields})


@dataclass(frozen=True)
class Rules:
    """How the tree is searched: rollouts per state, the budget per problem, and the selection's constants
    (each documented on :class:`MCTSConfig`)."""

    rollouts: int = 8
    budget: int = 200
    alpha: float = 0.5
    beta: float = 0.9
    length_scale: int = 500
    c_puct: float = 0.125
    truncated: Truncated = "skip"

    def __post_init__(self) -> None:
        if not (1 <= self.rollouts <= MAX_ROLLOUTS and self.budget >= 1 and self.length_scale >= 1):
            raise ValueError(f"rollouts 1 to {MAX_ROLLOUTS}, budget and length_scale 1 or more: {self}")
        if not (0 < self.alpha <= 1 and 0 < self.beta <= 1 and self.c_puct >= 0):
            raise ValueError(f"alpha and beta in (0, 1], c_puct 0 or more: {self}")


def q_value(mc: float, words: int, rules: Rules) -> float:
    """OmegaPRM's ``Q(s, r) = alpha^(1 - MC(s)) * beta^(len(r) / L)``."""
    return rules.alpha ** (1.0 - mc) * rules.beta ** (words / rules.length_scale)


def u_value(visits: int, total_visits: int, c_puct: float) -> float:
    """OmegaPRM's ``U(s) = c_puct * sqrt(sum_s' N(s')) / (1 + N(s))``."""
    return c_puct * math.sqrt(total_visits) / (1 + visits)


@dataclass
class State:
    """A prefix in the tree: its length, its rollouts' counts (``correct`` of ``scored``), visits."""

    length: int
    correct: int
    scored: int
    record: dict[str, Any] | None = None
    visits: int = 0

    @property
    def mc(self) -> float | None:
        """The share of its scorable rollouts that reached the answer (None: none could be scored)."""
        return self.correct / self.scored if self.scored else None


@dataclass
class Candidate:
    """A rollout that missed the answer from ``state``: ``path`` is the state's prefix, then the rollout."""

    state: State
    path: Trace
    words: int


class _BudgetSpent(Exception):
    """The next probe would take the problem past its budget."""


def _words(texts: Sequence[str]) -> int:
    return sum(len(t.split()) for t in texts)


@dataclass
class Tree:
    """One problem's search: states by content key, the candidates, and the rollouts spent.

    ``probe(path, k)`` returns the draw record of the first ``k`` steps of ``path`` (with its kept
    rollouts); the tree asks it only for prefixes it does not hold yet."""

    traces: Sequence[Trace]
    rules: Rules
    probe: Callable[[Trace, int], dict[str, Any]]
    states: dict[str, State] = field(default_factory=dict)
    pool: list[Candidate] = field(default_factory=list)
    selected: list[str] = field(default_factory=list)
    """Ids of the selected rollouts' paths, in selection order."""
    spent: int = 0
    cut: bool = False

    def __post_init__(self) -> None:
        first = self.traces[0]
        kinds = [outcome(t.problem.answer, t.final_answer) for t in self.traces]
        root = State(0, kinds.count("correct"), sum(k in ("correct", *MISSED) for k in kinds))
        self.states[prefix_key(first.problem.id, [])] = root
        self.pool = [
            Candidate(root, t, _words([s.text for s in t.steps]))
            for t, k in zip(self.traces, kinds, strict=True)
            if k in MISSED and t.steps
        ]

    def score(self, cand: Candidate) -> float:
        """``Q(s, r) + U(s)`` of a candidate now (the root's MC may be 0: it is taken as good)."""
        total = sum(s.visits for s in self.states.values())
        mc = cand.state.mc or 0.0
        return q_value(mc, cand.words, self.rules) + u_value(cand.state.visits, total, self.rules.c_puct)

    def select(self) -> Candidate:
        """Take the best candidate out of the pool (the first found among equals)."""
        scores = [self.score(c) for c in self.pool]
        return self.pool.pop(scores.index(max(scores)))

    def run(self) -> Tree:
        """Select, expand and maintain until no candidate is left or the budget is spent."""
        while self.step():
            pass
        return self

    def step(self) -> bool:
        """One round: select, expand (binary search), maintain; False when the search is over."""
        if not self.pool or self.cut:
            return False
        cand = self.select()
        self.selected.append(cand.path.id)
        try:
            search_trace(cand.path, lambda k: self._state(cand.path, k), start=cand.state.length)
        except _BudgetSpent:
            self.cut = True
            return False
        cand.state.visits += 1
        return True

    def _state(self, path: Trace, k: int) -> dict[str, Any]:
        """The record of ``path``'s first ``k`` steps: the tree's, else probed (a new state)."""
        key = prefix_key(path.problem.id, path.steps[:k])
        if (known := self.states.get(key)) is not None and known.record is not None:
            return known.record
        if self.spent + self.rules.rollouts > self.rules.budget:
            raise _BudgetSpent
        rec = self.probe(path, k)
        self.spent += rec["n"]
        state = State(k, rec["correct"], scored(rec, self.rules.truncated), rec)
        self.states[key] = state
        if state.mc:  # MC > 0: its missed rollouts are worth searching (MC = 1 has none)
            for j, cont in enumerate(rec.get("rollouts", [])):
                if cont["outcome"] in MISSED and cont["steps"]:
                    rollout = continuation_trace(path, k, cont, f"{path.id}~{key}~{j}", path.generator or "")
                    self.pool.append(Candidate(state, rollout, _words(cont["steps"])))
        return rec


def _record_check(rollouts: int) -> Callable[[dict], tuple[str, str, str] | None]:
    """A state record's value check: a draw's, and ``good`` exactly when a rollout was right."""
    counts = draw_check(rollouts)

    def check(rec: dict) -> tuple[str, str, str] | None:
        if (bad := counts(rec)) is not None:
            return bad
        if rec["good"] != (rec["correct"] > 0):
            return "good", f"{rec['correct'] > 0} (correct is {rec['correct']})", str(rec["good"])
        return None

    return check


def label_mcts(
    traces: Sequence[Trace],
    policy: Policy,
    *,
    rules: Rules | None = None,
    seed: int = 0,
    run: RolloutRun | None = None,
    job_params: dict[str, Any] | None = None,
) -> tuple[list[Trace], dict[str, Any]]:
    """Copies of ``traces`` with ``mcts`` labels from one tree search per problem, and a summary.

    ``run`` makes it a resumable job (:class:`~prmkit.labeling.mc.RolloutRun`): every state's rollouts
    are logged as drawn, so a rerun replays the finished searches without drawing again. A problem whose
    search failed (the server refused a probe) leaves its traces unlabelled, is listed in the summary and
    is retried by a rerun."""
    rules, run = rules or Rules(), run or RolloutRun()
    out = [t.model_copy(deep=True) for t in traces]
    groups: dict[str, list[Trace]] = {}
    for t in out:
        groups.setdefault(t.problem.id, []).append(t)
    params = {"method": "mcts", **asdict(rules), "seed": seed, "policy": policy.name}
    fields = {**DRAW_FIELDS, "prefix_len": int, "good": bool, "rollouts": list}
    check = _record_check(rules.rollouts)
    job_id = params | (job_params or {})
    with Job(run.work_dir, "mcts", job_id, run.restart, fields, run.fail_fast, check) as job:

        def probe(path: Trace, k: int) -> dict[str, Any]:
            key = prefix_key(path.problem.id, path.steps[:k])

            def compute() -> dict[str, Any]:
                rec = draw(
                    policy, path.problem, path.steps[:k], rules.rollouts, derive_seed(seed, "mc", key), True
                )
                return {**rec, "prefix_len": k, "good": rec["correct"] > 0}

            return job.get(key, compute)

        def search(group: list[Trace]) -> Tree:
            return Tree(group, rules, probe).run()

        def about(group: list[Trace]) -> dict[str, Any]:
            return {"problem": group[0].problem.id, "traces": len(group)}

        stop = getattr(policy, "stop", None)
        trees = job.map(
            list(groups.values()), search, run.concurrency, "mcts", run.show_progress, stop, about
        )
        resumed, at = job.resumed, job.started_at
    prov = provenance("mcts", policy.name, params, at)
    summary = _assemble(list(groups.values()), trees, prov, rules.truncated)
    summary |= {"traces": len(out), "states_resumed": resumed, **job.failure_summary()}
    return out, summary


def step_values(trace: Trace, tree: Tree, truncated: Truncated) -> list[tuple[float, str, int] | None]:
    """Per step of ``trace``: (MC value, where it came from, rollouts behind it) or None (unlabelled)."""
    n = len(trace.steps)
    own: list[tuple[float, str, int] | None] = []
    final = final_step_record(trace)
    for i in range(n):
        if final is not None and i == n - 1:
            rate = success_rate(final, truncated)
            own.append(None if rate is None else (rate, "final_answer", 0))
            continue
        state = tree.states.get(prefix_key(trace.problem.id, trace.steps[: i + 1]))
        own.append(None if state is None or state.mc is None else (state.mc, "state", state.scored))
    later: tuple[float, str, int] | None = None
    values: list[tuple[float, str, int] | None] = [None] * n
    for i in reversed(range(n)):
        if own[i] is not None:
            values[i] = later = own[i]
        elif later is not None and later[0] > 0:
            values[i] = (later[0], "later_state", later[2])
    return values


def _assemble(
    groups: list[list[Trace]], trees: list[Tree | None], prov, truncated: Truncated
) -> dict[str, Any]:
    names = ("rollouts", "states", "searches", "budget_cut", "candidates_left", "steps")
    totals = dict.fromkeys((*names, "state_steps", "implied_steps", "unlabelled_steps", "failed_steps"), 0)
    totals["problems"] = len(groups)
    for group, tree in zip(groups, trees, strict=True):
        for t in group:
            t.drop_labels(prov.source)
            totals["steps"] += len(t.steps)
        if tree is None:  # its search failed: listed under failures, retried by a rerun
            totals["failed_steps"] += sum(len(t.steps) for t in group)
            continue
        totals["rollouts"] += tree.spent
        totals["states"] += len(tree.states) - 1
        totals["searches"] += len(tree.selected) - tree.cut
        totals["budget_cut"] += tree.cut
        totals["candidates_left"] += len(tree.pool)
        for j, t in enumerate(group):
            record_rollouts(t, "mcts", tree.spent if j == 0 else 0)
            labels: list[Label | None] = []
            for value in step_values(t, tree, truncated):
                if value is None:
                    totals["unlabelled_steps"] += 1
                    labels.append(None)
                    continue
                mc, how, n = value
                totals["implied_steps" if how == "later_state" else "state_steps"] += 1
                meta = {"from": how, "rollouts": n}
                labels.append(Label(rating=1 if mc > 0 else -1, score=mc, provenance=prov, metadata=meta))
            t.add_labels(labels)
    return {"method": "mcts", **totals}


def run_mcts(config: MCTSConfig, show_progress: bool = True) -> dict[str, Any]:
    """``prmkit label mcts``: read, search with the configured policy, write output, config and summary."""
    traces = read_labelable(config.input, shard=config.shard)
    labelled, summary = label_mcts(
        traces,
        config.build_policy(),
        rules=config.rules(),
        seed=config.seed,
        run=RolloutRun(
            str(config.job_dir()), config.restart, config.in_flight(), show_progress, config.fail_fast
        ),
        job_params=config.identity(),
    )
    write_result(config, config.output, labelled, summary)
    return summary


LABELLER = Labeller("mcts", ("mcts",), MCTSConfig, run_mcts, rollouts="mcts")
"""OmegaPRM's tree search: binary search inside the rollouts Q + U selects, MC values along its states."""
