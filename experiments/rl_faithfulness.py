"""Does outcome-paid RL lower a policy's causal dependence on its own steps, where process-paid RL keeps it?
(issue 40: the RL question of the faithfulness instrument, docs/rl.md "Does RL keep the steps causal?").

An experiment, not part of the library. It reads an RL study's output folder (``prmkit run
recipes/rl.yaml -o RUN``) through the run's stage index (``RUN/stages.json``): π0 of one (π0, PRM) draw
(stage ``pi0-d<draw>``, its ``model/``) and the trained policy of each (reward, seed) cell of that draw
(stage ``rl-<reward>-<seed>-d<draw>``, its ``policy/``), ordinary HF folders. Every policy writes ``--per-problem`` samples of the same ``--problems`` fresh test problems of
the arithmetic world (``--seed``; the sampling streams are shared, so the policies differ only in their
weights), at the RL run's temperature and token limit. On each trace with an answer the interventions of
Lanham et al. (:func:`prmkit.evaluation.faithfulness.intervene`: early answering, an added mistake,
filler) are continued by the same policy; a trace's causal dependence is the share of its answered
continuations whose answer changed. Beside it, as context, each policy's answer accuracy and process-
correct share on those samples (gold read to evaluate only).

Statistics: the mean of per-trace rates, per policy; for a reward, its cells' mean over RL seeds with a
crossed bootstrap over RL seeds x problems (:func:`prmkit.core.stats.crossed_bootstrap`; every cell is
measured on the same problems); Δ from π0 paired by problem; differences between rewards paired by seed
index and problem. One (π0, PRM) draw: the intervals do not count π0's or the PRM's training noise.

``python experiments/rl_faithfulness.py runs/rl --rewards outcome,dense,progress --seeds 0,1,2
--problems 100 --seed 5678 --out docs/results/rl-faithfulness.json`` (each policy's interventions are
cached in ``RUN/faithfulness-SEED-.../``, so a killed run goes on where it stopped; ``--jobs 2`` measures
two policies at a time, one torch thread each).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

INTERVENTIONS = ("early_answering", "adding_mistakes", "filler")
CONTEXT = ("answer_accuracy", "process_correct")
"""Per-trace flags reported beside causal dependence (shares of all samples, answered or not)."""


def sample(policy: Any, problems: Sequence[Any], per_problem: int, seed: int) -> list[Any]:
    """``per_problem`` traces of each problem, each problem's stream seeded from (seed, problem id) alone."""
    from prmkit.core.model import Trace
    from prmkit.core.seeds import derive_seed

    out = []
    for problem in problems:
        key = derive_seed(seed, "rl-faithfulness", problem.id)
        for j, cont in enumerate(policy.continue_from(problem, [], per_problem, seed=key)):
            out.append(
                Trace(
                    id=f"{problem.id}-{j}", problem=problem, steps=cont.steps, final_answer=cont.final_answer
                )
            )
    return out


def load_policy(folder: str, temperature: float, max_new_tokens: int) -> Any:
    """The policy an RL run saved in ``folder`` (an HF folder), sampled as the run sampled it."""
    from prmkit.policies.hf import HFPolicy

    return HFPolicy(folder, temperature=temperature, max_new_tokens=max_new_tokens)


def measure_policy(folder: str, problems: int, per_problem: int, seed: int, temperature: float,
                   max_new_tokens: int, cache: str) -> str:  # fmt: skip
    """One policy's per-trace record, written to ``cache`` (JSON; skipped when it exists): the problem
    index, gold flags, and (changed, answered) per intervention."""
    if Path(cache).exists():
        return f"{cache}: cached"
    import torch

    from prmkit.evaluation.faithfulness import intervene
    from prmkit.rl.monitors import gold_columns
    from prmkit.worlds.registry import world

    torch.set_num_threads(1)
    start = time.monotonic()
    w = world("arithmetic")
    items = w.generate_problems(problems, seed=seed, split="test")
    policy = load_policy(folder, temperature, max_new_tokens)
    traces = sample(policy, items, per_problem, seed)
    checks = [w.check_trace(t) for t in traces]  # gold, as the RL monitors read it: evaluation only
    flags = gold_columns([t.final_answer is not None for t in traces], checks)
    index = {p.id: i for i, p in enumerate(items)}
    records = [
        {"problem": index[t.problem.id], "answer_accuracy": bool(k.answer_correct) and t.final_answer is not None,
         "process_correct": flags["process_correct"][i], **{name: [0, 0] for name in INTERVENTIONS}}
        for i, (t, k) in enumerate(zip(traces, checks, strict=True))
    ]  # fmt: skip
    for o in intervene(policy, traces, INTERVENTIONS, 1, seed):
        pair = records[o.trace][o.intervention]
        pair[0] += o.changed
        pair[1] += o.changed + o.same
    body = {"policy": folder, "seconds": round(time.monotonic() - start, 1), "traces": records}
    Path(cache).parent.mkdir(parents=True, exist_ok=True)
    Path(cache).write_text(json.dumps(body))
    return f"{cache}: {body['seconds']:.0f} s"


def rates(records: Sequence[dict[str, Any]], what: str) -> np.ndarray:
    """Per trace: its causal dependence under one intervention (``all``: pooled), nan where none was
    answered (:func:`prmkit.evaluation.faithfulness.trace_rates` on the stored counts); or a gold flag of
    :data:`CONTEXT` as 0/1."""
    from prmkit.evaluation.faithfulness import Outcome, trace_rates

    if what in CONTEXT:
        return np.array([float(r[what]) for r in records])
    outcomes = [
        Outcome(i, name, 0, r[name][0], r[name][1] - r[name][0], 0)
        for i, r in enumerate(records)
        for name in INTERVENTIONS
    ]
    return trace_rates(outcomes, len(records), None if what == "all" else what)


def sums(records: Sequence[dict[str, Any]], what: str, problems: int) -> tuple[np.ndarray, np.ndarray]:
    """Per problem, the sum of its traces' :func:`rates` and their count."""
    from prmkit.evaluation.faithfulness import problem_sums

    return problem_sums(rates(records, what), [r["problem"] for r in records], problems)


def estimates(measured: dict[str, list[list[dict[str, Any]]]], problems: int, resamples: int,
              seed: int) -> dict[str, dict[str, dict[str, Any]]]:  # fmt: skip
    """Rows of the table: every policy (``measured[name]``: one record list per RL seed; π0 has one),
    each reward's change from π0, each later reward minus the first; a column per measure."""
    from prmkit.core.stats import crossed_bootstrap, paired, ratio_stat

    columns = [*INTERVENTIONS, "all", *CONTEXT]

    def stat(name: str, what: str, runs: int) -> Any:
        pairs = [sums(records, what, problems) for records in measured[name]]
        pairs = pairs * runs if len(pairs) == 1 else pairs  # π0 under each RL seed of a paired reward
        return ratio_stat([p[0] for p in pairs], [p[1] for p in pairs])

    def est(stat_: Any, runs: int) -> dict[str, Any]:
        draws = {"rl_seed": runs, "problem": problems, "pi0_prm_draw": 1}
        return crossed_bootstrap(stat_, runs, problems, resamples=resamples, rng=seed, draws=draws).to_dict()

    rewards = [n for n in measured if n != "pi0"]
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    for name in measured:
        runs = len(measured[name])
        rows[name] = {c: est(stat(name, c, runs), runs) for c in columns}
    for name in rewards:
        runs = len(measured[name])
        rows[f"{name} - pi0"] = {
            c: est(paired(stat(name, c, runs), stat("pi0", c, runs)), runs) for c in columns
        }
    first, *later = rewards
    for name in later:
        runs = len(measured[name])
        if runs != len(measured[first]):
            continue  # unequal seed counts: not paired by seed index
        rows[f"{name} - {first}"] = {
            c: est(paired(stat(name, c, runs), stat(first, c, runs)), runs) for c in columns
        }
    return rows


def table(rows: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Markdown: a row per policy or difference, causal dependence per intervention and pooled, then the
    context columns (%)."""
    from prmkit.core.stats import Estimate

    columns = [*INTERVENTIONS, "all", *CONTEXT]
    lines = ["| policy | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for name, row in rows.items():
        signed = " - " in name
        lines.append(
            f"| {name} | " + " | ".join(Estimate(**row[c]).cell(signed=signed) for c in columns) + " |"
        )
    return "\n".join(lines)


def policy_folders(run: Path, draw: int, rewards: list[str], seeds: list[int]) -> dict[tuple[str, int], Path]:
    """(``pi0``, 0) and each (reward, seed) cell of draw ``draw`` -> its HF folder, by the run's stage
    index; a stage the run did not finish is named."""
    from prmkit.core.errors import InputError
    from prmkit.pipeline.rl_recipe import Cell
    from prmkit.pipeline.rl_stages import POLICY, stage_of
    from prmkit.pipeline.runner import stage_index
    from prmkit.pipeline.stages import MODEL

    try:
        index = stage_index(run)
    except InputError as err:
        raise SystemExit(str(err)) from None
    stages = {("pi0", 0): (stage_of("pi0", draw), MODEL)}
    stages |= {(r, s): (Cell(r, s, draw, {}).stage, POLICY) for r in rewards for s in seeds}
    absent = [name for name, _ in stages.values() if name not in index]
    if absent:
        raise SystemExit(
            f"{run}: no stage {', '.join(absent)} in its stage index (not in its recipe's cells?)"
        )
    folders = {key: index[name] / sub for key, (name, sub) in stages.items()}
    missing = [str(f) for f in folders.values() if not (f / "config.json").is_file()]
    if missing:
        raise SystemExit(f"not an HF policy folder (a cell not run yet?): {', '.join(missing)}")
    return folders


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    from prmkit.core.stats import multiplicity

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "run", type=Path, help="an RL study's output folder (prmkit run recipes/rl.yaml -o RUN)"
    )
    parser.add_argument("--draw", type=int, default=0, help="the (π0, PRM) draw whose π0 and cells are read")
    parser.add_argument(
        "--rewards", default="outcome,dense,progress", help="the first is what the others are compared with"
    )
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--problems", type=int, default=100)
    parser.add_argument("--per-problem", type=int, default=4)
    parser.add_argument(
        "--seed", type=int, default=5678, help="test problems and sampling: 1234 tunes, 5678 claims"
    )
    parser.add_argument("--temperature", type=float, default=0.7, help="the RL run's sampling temperature")
    parser.add_argument("--max-new-tokens", type=int, default=160, help="the RL run's max_completion_length")
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--jobs", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    parser.add_argument("--out", type=Path, help="the results JSON (default GRID/faithfulness-SEED.json)")
    args = parser.parse_args(argv)
    rewards, seeds = args.rewards.split(","), [int(s) for s in args.seeds.split(",")]
    folders = policy_folders(args.run, args.draw, rewards, seeds)
    cache = args.run / f"faithfulness-{args.seed}-{args.problems}x{args.per_problem}"
    todo = {key: str(cache / f"{key[0]}-{key[1]}.json") for key in folders}
    common = (args.problems, args.per_problem, args.seed, args.temperature, args.max_new_tokens)
    if args.jobs == 1:  # in this process (also where the module was loaded by path, as tests do)
        for k in folders:
            print(measure_policy(str(folders[k]), *common, todo[k]), flush=True)
    else:
        with ProcessPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(measure_policy, str(folders[k]), *common, todo[k]) for k in folders]
            for f in futures:
                print(f.result(), flush=True)
    read = {k: json.loads(Path(p).read_text()) for k, p in todo.items()}
    measured = {"pi0": [read[("pi0", 0)]["traces"]]}
    measured |= {r: [read[(r, s)]["traces"] for s in seeds] for r in rewards}
    rows = estimates(measured, args.problems, args.resamples, args.seed)
    intervals = sum(len(row) for row in rows.values())
    text = table(rows)
    result = {
        "command": "python experiments/rl_faithfulness.py "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "draws": {
            "pi0_prm_draw": 1,
            "rl_seed": len(seeds),
            "problem": args.problems,
            "per_problem": args.per_problem,
        },
        "multiplicity": multiplicity(intervals),
        "traces": {f"{k[0]}-{k[1]}": len(v["traces"]) for k, v in read.items()},
        "seconds": {f"{k[0]}-{k[1]}": v["seconds"] for k, v in read.items()},
        "rows": rows,
        "table": text,
    }
    out = args.out or args.run / f"faithfulness-{args.seed}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(text + "\n\n" + result["multiplicity"])
    return result


if __name__ == "__main__":
    main()
