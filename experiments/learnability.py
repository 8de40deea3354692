"""The learnability experiment: world data -> tiny LM -> PRM (gold, MC) and ORM -> first-error F1.

An experiment, not part of the library (it lives outside ``src/``). Its numbers in docs/models.md were
measured on world-1 with an LM pretrained only on gold-valid traces (``only_valid``, kept here so it
reproduces them); ``recipes/labels-study.yaml`` (world-2, no gold outside evaluation, seeds with
intervals) supersedes it.

Run ``python experiments/learnability.py --out DIR`` (``--world harder`` for the harder world;
``--runs zero-shot`` scores the pretrained LM as a verifier with no head, to compare backbones). It
writes ``results.json`` (test and held-out first-error F1 per error kind, thresholds tuned on dev,
timings) and ``curve.png`` (dev F1 per error kind against training minutes). docs/models.md quotes it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, get_args

from prmkit.core.dataset import write_traces
from prmkit.core.model import Trace
from prmkit.formats.inputs import read_traces

WORLDS: dict[str, dict[str, Any]] = {"default": {}, "harder": {"max_value": 20, "phrasing_variety": 1}}


def world_data(out: Path, world: str, problems: int, per_problem: int) -> dict[str, list[Trace]]:
    """Train / test / held-out traces with gold labels (cached as JSONL in ``out``)."""
    from prmkit.worlds.arithmetic import WorldConfig, generate_problems, gold_label, sample_traces

    cfg = WorldConfig(**WORLDS[world])
    sizes = {"train": problems, "test": max(100, problems // 8), "heldout": max(100, problems // 8)}
    data = {}
    for k, (split, n) in enumerate(sizes.items()):
        path = out / f"{split}.jsonl"
        if not path.exists():
            traces = sample_traces(generate_problems(n, seed=k, config=cfg, split=split), per_problem, seed=k)
            write_traces(path, gold_label(traces))
        data[split] = read_traces(path)
    return data


def mc_labels(out: Path, traces: list[Trace], rollouts: int) -> list[Trace]:
    """Math-Shepherd MC labels (prmkit.labeling, world policy rollouts), cached."""
    from prmkit.labeling.mc import label_mc
    from prmkit.worlds.arithmetic import WorldPolicy

    path = out / "train_mc.jsonl"
    if not path.exists():
        labelled, _ = label_mc(traces, WorldPolicy(), rollouts=rollouts, seed=0)
        write_traces(path, labelled)
    return read_traces(path)


def consensus_labels(out: Path, traces: list[Trace]) -> list[Trace]:
    """The MC-labelled traces on which a judge (the world's simulated one) agrees with MC on the first
    error, with ``consensus`` labels (Qwen's filter; prmkit.labeling.consensus), cached."""
    from prmkit.labeling.consensus import consensus_filter
    from prmkit.labeling.judge import label_judge
    from prmkit.worlds.arithmetic.judge import SimulatedJudge

    path = out / "train_consensus.jsonl"
    if not path.exists():
        kept, _ = consensus_filter(label_judge(traces, SimulatedJudge())[0])
        write_traces(path, kept)
    return read_traces(path)


def evaluate(model_dir: Path, data: dict[str, list[Trace]], limit: int) -> dict[str, Any]:
    """Test and held-out first-error metrics at the checkpoint's dev-tuned threshold."""
    from prmkit.scoring import load_scorer

    scorer = load_scorer(model_dir)
    return _splits(scorer, scorer.convention.spec.threshold, data, limit)


def _splits(scorer: Any, threshold: float, data: dict[str, list[Trace]], limit: int) -> dict[str, Any]:
    """First-error metrics of ``scorer`` on the first ``limit`` test and held-out traces at ``threshold``."""
    from prmkit.training.metrics import first_error_report

    out = {}
    for split in ("test", "heldout"):
        traces = data[split][:limit]
        out[split] = first_error_report(traces, scorer.score(traces), threshold)
    return out


def zero_shot(
    lm_dir: Path, data: dict[str, list[Trace]], limit: int, dev_fraction: float = 0.05, seed: int = 0
) -> dict[str, Any]:
    """The pretrained LM as a verifier with no step labels (the ``likelihood`` convention): the threshold is
    tuned on the same dev problems the PRMs select on, then test and held-out are scored at it. It measures
    what the backbone brings before any head is trained, e.g. how its layout generalises in length."""
    from prmkit.scoring import load_scorer
    from prmkit.training.data import split_by_problem
    from prmkit.training.metrics import first_error_report

    _, dev = split_by_problem(data["train"], dev_fraction, seed)
    scorer = load_scorer(lm_dir, "likelihood")
    tuned = first_error_report(dev, scorer.score(dev))
    return {"dev": tuned, "threshold": tuned["threshold"], **_splits(scorer, tuned["threshold"], data, limit)}


def probe_lm(lm_dir: Path, traces: list[Trace], limit: int = 200) -> dict[str, float]:
    """Teacher-forced next-token accuracy of a pretrained LM on the solution digits of error-free traces:
    ``result`` (the digit after ``=``: the arithmetic), ``operand`` (other digits: mostly quantities copied
    from the problem) and ``other`` tokens. It says whether pretraining learned what a verifier checks."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(lm_dir))
    model = AutoModelForCausalLM.from_pretrained(str(lm_dir)).eval()
    hits: dict[str, list[int]] = {"result": [0, 0], "operand": [0, 0], "other": [0, 0]}
    valid = [t for t in traces if t.first_error("gold") == -1][:limit]
    with torch.inference_mode():
        for t in valid:
            ids = tok(t.problem.text + "\n" + "".join(s.text + "\n" for s in t.steps)).input_ids
            start = len(tok(t.problem.text + "\n").input_ids)
            pred = model(torch.tensor([ids])).logits[0].argmax(-1).tolist()
            names = tok.convert_ids_to_tokens(ids)
            for i in range(start, len(ids)):
                kind = "other"
                if names[i].isdigit():
                    kind = "result" if "Ġ=" in names[max(0, i - 3) : i] else "operand"
                hits[kind][0] += int(pred[i - 1] == ids[i])
                hits[kind][1] += 1
    return {k: round(a / b, 4) for k, (a, b) in hits.items() if b}


def curve(runs: dict[str, Path], path: Path, title: str) -> None:
    """Dev first-error F1 (overall and per kind) against CPU minutes, one panel per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(runs), figsize=(4.5 * len(runs), 3.5), squeeze=False)
    for ax, (name, run) in zip(axes[0], runs.items(), strict=True):
        logs = [json.loads(line) for line in (run / "training_log.jsonl").read_text().splitlines()]
        evals = [r for r in logs if "eval_first_error_f1" in r]
        keys = ["eval_first_error_f1", *sorted({k for r in evals for k in r if k.startswith("eval_f1_")})]
        for key in keys:
            xs = [r["eval_cpu_minutes"] for r in evals if key in r]
            ys = [r[key] for r in evals if key in r]
            ax.plot(xs, ys, "o-" if key == "eval_first_error_f1" else ".-", label=key.removeprefix("eval_"),
                    linewidth=2.5 if key == "eval_first_error_f1" else 1)  # fmt: skip
        ax.set_title(f"{title}: {name}")
        ax.set_xlabel("training CPU-minutes per thread")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("dev first-error F1")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    from prmkit.modeling import TinyConfig
    from prmkit.training import OrmConfig, PretrainConfig, PrmConfig, pretrain_lm, train_orm, train_prm

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--world", choices=sorted(WORLDS), default="default")
    ap.add_argument("--problems", type=int, default=2000)
    ap.add_argument("--per-problem", type=int, default=4)
    ap.add_argument("--pretrain-minutes", type=float, default=4.0)
    ap.add_argument("--head-minutes", type=float, default=5.0)
    ap.add_argument("--layers", type=int, default=TinyConfig().layers)
    ap.add_argument("--width", type=int, default=TinyConfig().width)
    positions = get_args(TinyConfig.model_fields["positions"].annotation)
    ap.add_argument("--positions", choices=positions, default=TinyConfig().positions)
    ap.add_argument(
        "--window", type=int, default=TinyConfig().window, help="local layers' window (local+nope)"
    )
    ap.add_argument(
        "--runs",
        default="gold,mc,orm",
        help="comma list of zero-shot, gold, mc, consensus (MC kept where a judge agrees), gold-kept (gold "
        "labels on the traces consensus kept), orm ('' = only plot)",
    )
    ap.add_argument("--eval-traces", type=int, default=600, help="test / held-out traces scored per split")
    ap.add_argument("--rollouts", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0, help="the heads' seed (initialisation, order, dev split)")
    ap.add_argument("--separator", default="token", help="step separator of the PRMs (token, newline, ...)")
    ap.add_argument("--head", choices=["classifier", "likelihood"], default="classifier", help="PRMs' head")
    ap.add_argument(
        "--mc-lr",
        type=float,
        default=None,
        help="the MC and consensus PRMs' peak learning rate (default: PrmConfig's)",
    )
    ap.add_argument("--mc-noise", type=float, nargs=2, default=(0.0, 0.0), metavar=("MISSED", "FALSE"),
                    help="the MC and consensus PRMs' missed_error_rate and false_error_rate")  # fmt: skip
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    data = world_data(a.out, a.world, a.problems, a.per_problem)
    tiny = TinyConfig(layers=a.layers, width=a.width, positions=a.positions, window=a.window)
    common = {
        "max_minutes": a.head_minutes,
        "budget_clock": "cpu",
        "threads": a.threads,
        "eval_every": 50,
        "dev_fraction": 0.05,
        "epochs": 20,
        "seed": a.seed,
    }
    prm = {"separator": a.separator, "head": a.head}
    results: dict[str, Any] = {"args": {k: str(v) for k, v in vars(a).items()}}
    lm = a.out / "lm"
    if not (lm / "model.safetensors").exists():
        results["pretrain"] = pretrain_lm(data["train"], lm, PretrainConfig(
            tiny=tiny, max_minutes=a.pretrain_minutes, budget_clock="cpu", threads=a.threads, epochs=20,
            only_valid=True))  # fmt: skip
        results["pretrain"]["probe"] = probe_lm(lm, data["test"])
    for name in [r for r in a.runs.split(",") if r]:
        run = a.out / name
        if name == "zero-shot":
            results[name] = zero_shot(lm, data, a.eval_traces, common["dev_fraction"], a.seed)
            (a.out / f"results_{name}.json").write_text(json.dumps(results, indent=2))
            continue
        if name == "gold":
            results[name] = train_prm(data["train"], run, PrmConfig(base_model=str(lm), **prm, **common))
        elif name == "gold-kept":  # the consensus subset with gold labels: the subset's effect alone
            kept = consensus_labels(a.out, mc_labels(a.out, data["train"], a.rollouts))
            results[name] = train_prm(kept, run, PrmConfig(base_model=str(lm), **prm, **common))
        elif name in ("mc", "consensus"):
            traces = mc_labels(a.out, data["train"], a.rollouts)
            if name == "consensus":
                traces = consensus_labels(a.out, traces)
            noisy = {"label_source": "mc_hard" if name == "mc" else "consensus",
                     "missed_error_rate": a.mc_noise[0], "false_error_rate": a.mc_noise[1],
                     **({"lr": a.mc_lr} if a.mc_lr else {})}  # fmt: skip
            results[name] = train_prm(traces, run, PrmConfig(base_model=str(lm), **noisy, **prm, **common))
        elif name == "orm":
            results[name] = train_orm(data["train"], run, OrmConfig(base_model=str(lm), **common))
        results[name]["eval"] = evaluate(run, data, a.eval_traces)
        (a.out / f"results_{name}.json").write_text(json.dumps(results, indent=2))
    runs = {
        n: a.out / n
        for n in ("gold", "mc", "consensus", "gold-kept", "orm")
        if (a.out / n / "training_log.jsonl").exists()
    }
    if runs:
        curve(runs, a.out / "curve.png", f"{a.world} world")
    return results


if __name__ == "__main__":
    main()
