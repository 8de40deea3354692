"""The critic head at a small label budget against the likelihood and classifier PRMs trained on every
label: first-error F1, AUROC and the misconception class on test and held-out problems, and the
verifier-compute curve (``k`` sampled chains per trace), with the CPU time each cost.

Why: ThinkPRM reports a generative verifier fine-tuned on about 1K filtered chains (about 1 % of
PRM800K's labels) beating discriminative PRMs trained on all of them. Here the critic learns from the
world teacher's chains on the traces of its filter set only (``--budget`` of the training traces, gold
labels read to filter them and declared in its card); the PRMs learn from gold on every training trace.
Gold is read otherwise only to evaluate.

``python experiments/critic.py --out runs/critic-study`` (minutes to hours on a CPU: not run in CI) writes
``critic-EVAL_SEED.json``; ``--eval-seed 5678 --critic D/critic --likelihood D/likelihood --classifier
D/classifier`` measures the same models on the claims set;
``--smoke`` runs the same code at toy sizes. ``--likelihood`` / ``--classifier`` reuse trained PRMs;
``--base`` starts every model trained here from one pretrained LM (the demo's ``pretrain`` stage), so the
heads differ in their objective and labels only.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prmkit.core.model import Trace
from prmkit.evaluation.views import critic_table

SMOKE = {
    "problems": 24,
    "per_problem": 2,
    "budget": 0.25,
    "steps": 2,
    "eval_problems": 4,
    "ks": "1,2",
    "width": 32,
}


CPU_FILE = "train_cpu_seconds.json"
"""Each model's training CPU seconds (this process's, all its threads), kept for a later run that reuses it."""


def auroc(traces: Sequence[Trace], scores: Sequence[Sequence[float]]) -> float:
    """P(a step before the first error outscores the first error), ties half: the prefix view."""
    import numpy as np

    pos, neg = [], []
    for trace, row in zip(traces, scores, strict=True):
        fe = trace.first_error("gold")
        pos += row[: len(row) if fe == -1 else fe]
        neg += row[fe : fe + 1] if fe != -1 else []
    if not pos or not neg:
        return float("nan")
    p, n = np.asarray(pos)[:, None], np.asarray(neg)[None, :]
    return float((p > n).mean() + (p == n).mean() / 2)


def misconception_f1(traces: Sequence[Trace], scores: Sequence[Sequence[float]], threshold: float) -> float:
    """First-error F1 on the traces whose gold first error is a misconception, with every error-free one."""
    from prmkit.evaluation.processbench import predicted_first_error, subset_metrics

    keep = [i for i, t in enumerate(traces) if _first_class(t) in (None, "misconception")]
    gold = [traces[i].first_error("gold") for i in keep]
    pred = [predicted_first_error(scores[i], threshold) for i in keep]
    return subset_metrics("misconception", gold, pred).f1 or 0.0


def _first_class(trace: Trace) -> str | None:
    fe = trace.first_error("gold")
    return None if fe == -1 else str(trace.steps[fe].label("gold").metadata.get("class"))  # type: ignore[union-attr]


def measure(scorer: Any, splits: dict[str, list[Trace]]) -> dict[str, Any]:
    """F1 at the checkpoint's threshold, AUROC and misconception F1 per split, and the CPU seconds."""
    from prmkit.scoring import pick_threshold
    from prmkit.training.metrics import first_error_report

    threshold, _ = pick_threshold(None, scorer)
    out: dict[str, Any] = {"threshold": threshold}
    for name, traces in splits.items():
        start = time.process_time()
        scores = scorer.score(traces)
        out[name] = {
            "f1": first_error_report(traces, scores, threshold)["f1"],
            "auroc": auroc(traces, scores),
            "misconception_f1": misconception_f1(traces, scores, threshold),
            "cpu_seconds": time.process_time() - start,
            "scores": [list(map(float, row)) for row in scores],  # for paired intervals afterwards
        }
    return out


def train_models(args: argparse.Namespace, world: Any, out: Path) -> dict[str, str]:
    """The critic at ``args.budget`` of the labels, and the PRMs on every gold label unless given."""
    from prmkit.labeling.judge import label_judge
    from prmkit.modeling import TinyConfig
    from prmkit.policies import load_judge
    from prmkit.training import PrmConfig, train_prm
    from prmkit.worlds.registry import teacher_name

    trained = [m for m in ("critic", "likelihood", "classifier") if getattr(args, m) is None]
    # the training traces (and the teacher's chains) only when a model is trained here: 12,000 traces
    traces = world.traces(args.problems, args.per_problem, args.seed, "train") if trained else []
    teacher = teacher_name(world.name)
    tiny = TinyConfig(width=args.width, heads=4 if args.width >= 64 else 2, max_length=2048)
    common = {"tiny": tiny, "max_steps": args.steps, "seed": args.seed, "threads": args.threads,
              "resume": False, "max_length": 2048, "base_model": args.base}  # fmt: skip
    filter_traces = max(1, round(args.budget * len(traces)))
    critic = PrmConfig(head="critic", label_source=f"judge:{teacher}", filter_source="gold",
                       filter_traces=filter_traces, batch_size=16, **common)  # fmt: skip
    paths = {"critic": args.critic or str(out / "critic")}
    spent = json.loads((out / CPU_FILE).read_text()) if (out / CPU_FILE).is_file() else {}
    if args.critic is None:
        start = time.process_time()
        taught, _ = label_judge(traces, load_judge(teacher, seed=args.seed))
        train_prm(taught, paths["critic"], critic)
        spent["critic"] = time.process_time() - start
    for head in ("likelihood", "classifier"):
        given = getattr(args, head)
        if given is None:
            given, start = str(out / head), time.process_time()
            train_prm(traces, given, PrmConfig(head=head, label_source="gold", **common))
            spent[head] = time.process_time() - start
        paths[head] = given
    (out / CPU_FILE).write_text(json.dumps(spent))
    return paths


def summarise(file: Path, resamples: int = 2000) -> dict[str, Any]:
    """The committed summary of a ``critic-SEED.json``: per model and split, first-error F1 at its own
    threshold and step AUROC (:mod:`prmkit.evaluation.transfer`'s statistics, the library's), each with a
    bootstrap interval over problems, and each critic row minus the likelihood PRM, paired by problem;
    the CPU seconds. The traces are drawn again from the file's seed (deterministic); scores stay out."""
    from prmkit.core.stats import multiplicity, paired
    from prmkit.evaluation.processbench import predicted_first_error
    from prmkit.evaluation.seeds import auroc_stat, f1_stat, over_problems, problem_indices
    from prmkit.worlds.registry import DEFAULT_WORLD, world

    data = json.loads(file.read_text())
    n, seed = data["eval_problems"], data["eval_seed"]
    rows = {**data["models"], **{f"critic k={k}": r for k, r in data["compute"].items()}}
    out: dict[str, Any] = {"eval_seed": seed, "problems": n, "per_problem": 4, "budget": data["budget"],
                           "critic_card": data["critic_card"], "train_cpu_seconds": data["train_cpu_seconds"],
                           "rows": {}}  # fmt: skip
    count = 0
    for split in ("test", "heldout"):
        traces = world(DEFAULT_WORLD).traces(n, 4, seed, split)
        gold = [t.first_error("gold") for t in traces]
        where = problem_indices(traces, n)

        def stats(row: dict[str, Any], threshold: float, gold=gold, where=where) -> tuple[Any, Any]:
            predicted = [predicted_first_error(r, threshold) for r in row["scores"]]
            return f1_stat(gold, predicted, where, n), auroc_stat(row["scores"], gold, where)

        base = stats(rows["likelihood"][split], data["models"]["likelihood"]["threshold"])
        for name, row in rows.items():
            f1, auc = stats(row[split], row["threshold"])
            cell = {"f1": over_problems(f1, n, resamples, 0.95, 0).to_dict(),
                    "auroc": over_problems(auc, n, resamples, 0.95, 0).to_dict(),
                    "misconception_f1": row[split]["misconception_f1"],
                    "cpu_seconds": round(row[split]["cpu_seconds"], 1)}  # fmt: skip
            count += 2
            if name.startswith("critic"):
                cell["auroc_minus_likelihood"] = over_problems(
                    paired(auc, base[1]), n, resamples, 0.95, 0
                ).to_dict()
                cell["f1_minus_likelihood"] = over_problems(
                    paired(f1, base[0]), n, resamples, 0.95, 0
                ).to_dict()
                count += 2
            out["rows"].setdefault(name, {})[split] = cell
    out["multiplicity"] = multiplicity(count)
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    from prmkit.scoring import load_scorer
    from prmkit.worlds.registry import DEFAULT_WORLD, world

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--problems", type=int, default=3000)
    parser.add_argument("--per-problem", type=int, default=4)
    parser.add_argument(
        "--budget", type=float, default=0.01, help="share of training traces in the filter set"
    )
    parser.add_argument("--steps", type=int, default=600, help="optimiser steps of every model trained here")
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument(
        "--base",
        help="a pretrained LM every model here starts from (as the demo's PRMs do); else from scratch",
    )
    parser.add_argument("--eval-problems", type=int, default=100)
    parser.add_argument("--ks", default="1,2,4,8,16", help="chains per trace of the compute curve")
    parser.add_argument("--temperature", type=float, default=0.7, help="sampling temperature for k > 1")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--eval-seed", type=int, default=1234, help="test and held-out problems: 1234 tunes, 5678 claims"
    )
    parser.add_argument("--critic", help="a critic trained by an earlier run (else trained here)")
    parser.add_argument("--likelihood", help="a likelihood PRM trained on every label (else trained here)")
    parser.add_argument("--classifier", help="a classifier PRM trained on every label (else trained here)")
    parser.add_argument("--smoke", action="store_true", help="toy sizes: the code path, not a result")
    parser.add_argument(
        "--summarise",
        type=Path,
        help="a critic-SEED.json: write its summary with intervals to --out and stop",
    )
    args = parser.parse_args(argv)
    if args.summarise:
        summary = summarise(args.summarise)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(summary, indent=1) + "\n")
        print(critic_table(summary) + "\n\n" + summary["multiplicity"])
        return summary
    if args.smoke:
        for key, value in SMOKE.items():
            setattr(args, key, value)
    w = world(DEFAULT_WORLD)
    args.out.mkdir(parents=True, exist_ok=True)
    paths = train_models(args, w, args.out)
    splits = {s: w.traces(args.eval_problems, 4, args.eval_seed, s) for s in ("test", "heldout")}
    file = args.out / f"critic-{args.eval_seed}.json"
    result: dict[str, Any] = {"budget": args.budget, "eval_seed": args.eval_seed,
                              "eval_problems": args.eval_problems, "models": {}, "compute": {}}  # fmt: skip
    if file.is_file():  # an earlier run on the same problems: keep what it measured, add the rest
        before = json.loads(file.read_text())
        if before.get("eval_problems") == args.eval_problems and before.get("paths") == paths:
            result["models"], result["compute"] = before["models"], before["compute"]
    card = json.loads((Path(paths["critic"]) / "process_card.json").read_text())
    result["critic_card"] = {"critic": card["training"]["critic"], "gold_use": card["gold_use"]}
    result["paths"] = paths
    result["train_cpu_seconds"] = json.loads((args.out / CPU_FILE).read_text())
    for name in ("likelihood", "classifier"):
        if name not in result["models"]:
            result["models"][name] = measure(load_scorer(paths[name]), splits)
    for k in (int(x) for x in args.ks.split(",")):
        if str(k) in result["compute"]:
            continue
        sampled = {"verify_k": k, "verify_temperature": args.temperature, "verify_seed": args.seed}
        scorer = load_scorer(paths["critic"], **(sampled if k > 1 else {}))
        result["compute"][str(k)] = measure(scorer, splits)
        file.write_text(json.dumps(result, indent=1))  # each k kept as it is measured: hours of CPU
    file.write_text(json.dumps(result, indent=1))
    for name, row in [
        *result["models"].items(),
        *((f"critic k={k}", r) for k, r in result["compute"].items()),
    ]:
        cells = " | ".join(f"{row[s]['f1']:.3f} / {row[s]['auroc']:.3f} / {row[s]['misconception_f1']:.3f} "
                           f"({row[s]['cpu_seconds']:.1f} s)" for s in splits)  # fmt: skip
        print(f"| {name} | {cells} |")
    return result


if __name__ == "__main__":
    main()
