"""PNG plots for evaluations and audits: a person would rather look at these than read the numbers.

Each function takes plain rows (the same dicts the JSON/CSV results hold) and a path, writes one PNG
with the non-interactive Agg backend, and returns the path (``draw_bon_curves`` draws best-of-N on a
given Axes, so a test can read its lines). matplotlib is imported inside the functions
so importing prmkit.evaluation stays fast.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

Rows = Sequence[dict[str, Any]]


def _figure(width: float = 6.4, height: float = 4.2, ncols: int = 1):
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, ncols, figsize=(width, height), dpi=110)
    return plt, fig, ax


def _save(plt, fig, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


HONEST_LEGEND = "honest (a pick that games the task counts as wrong)"
"""The legend entry of the dashed honest-accuracy lines (:mod:`prmkit.evaluation.bon_curves`)."""


def bon_curves(rows: Rows, path: str | Path, title: str = "Best-of-N accuracy") -> Path:
    """Accuracy vs N (log2 axis), one line per method with its band (:func:`draw_bon_curves`)."""
    plt, fig, ax = _figure()
    draw_bon_curves(ax, rows, title)
    return _save(plt, fig, path)


def draw_bon_curves(ax: Any, rows: Rows, title: str = "Best-of-N accuracy") -> None:
    """Draw :func:`bon_curves`' figure on ``ax``. Where the rows carry ``honest_accuracy`` (a world with
    loopholes), each method also gets a dashed line of its colour, with one legend entry for them all;
    rows without it draw exactly what they always did."""
    honest = any("honest_accuracy" in r for r in rows)
    for method in dict.fromkeys(r["method"] for r in rows):
        pts = [r for r in rows if r["method"] == method]
        ns = [r["n"] for r in pts]
        style = {"linestyle": "--", "color": "grey"} if method == "oracle" else {}
        line = ax.plot(ns, [r["accuracy"] for r in pts], marker="o", markersize=3, label=method, **style)[0]
        ax.fill_between(
            ns, [r["lo"] for r in pts], [r["hi"] for r in pts], alpha=0.15, color=line.get_color()
        )
        if honest:
            # a leading "_" keeps each method's honest line out of the legend: one entry names them all
            ax.plot(ns, [r["honest_accuracy"] for r in pts], label=f"_honest {method}", **_honest(line))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("N (samples per problem)")
    ax.set_ylabel("answer accuracy")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if not honest:
        ax.legend(fontsize=7, ncol=2)
        return
    from matplotlib.lines import Line2D

    handles, labels = ax.get_legend_handles_labels()
    key = Line2D([], [], **_honest(None))
    ax.legend([*handles, key], [*labels, HONEST_LEGEND], fontsize=7, ncol=2)


def _honest(line: Any) -> dict[str, Any]:
    """The style of an honest line: dashed in the colour of its method's ``line`` (black for the legend
    key), with cross markers, since the oracle's own line is dashed too."""
    color = "black" if line is None else line.get_color()
    return {"linestyle": "--", "marker": "x", "markersize": 3, "color": color}


def goodhart(rows: Rows, path: str | Path, x: str = "n", title: str = "Verifier gaming") -> Path:
    """Selected traces' mean PRM score vs their gold process validity as selection pressure rises."""
    plt, fig, ax = _figure()
    xs = [r[x] for r in rows]
    ax.plot(xs, [r["score"] for r in rows], marker="o", label="PRM score of picks (aggregated)")
    ax.plot(xs, [r["gold_valid"] for r in rows], marker="s", label="gold: share of picks with no wrong step")
    ax.plot(
        xs, [r["answer_correct"] for r in rows], marker="^", linestyle=":", label="answer accuracy of picks"
    )
    if x == "n":
        ax.set_xscale("log", base=2)
    ax.set_xlabel("N (best-of-N)" if x == "n" else x)
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return _save(plt, fig, path)


def outcome_shift(rows: Rows, path: str | Path) -> Path:
    """Share of best-of-N picks whose lowest step score sits on the final step, vs N."""
    plt, fig, ax = _figure()
    ax.plot(
        [r["n"] for r in rows], [r["share_min_on_final"] for r in rows], marker="o", label="best-of-N picks"
    )
    if rows and rows[0].get("share_min_on_final_all") is not None:
        ax.axhline(rows[0]["share_min_on_final_all"], color="grey", linestyle="--", label="all traces")
    ax.axhspan(0.42, 0.55, color="orange", alpha=0.15, label="42–55 % (Qwen 'Lessons', open PRMs)")
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1)
    ax.set_xlabel("N (best-of-N)")
    ax.set_ylabel("share with min score on final step")
    ax.set_title("Process-to-outcome shift")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return _save(plt, fig, path)


def collapse(groups: dict[str, Sequence[float]], path: str | Path, fidelity: float | None = None) -> Path:
    """Step scores of the four validity x outcome groups; a process-faithful PRM separates by validity."""
    plt, fig, ax = _figure(7.0, 4.2)
    names = [k for k, v in groups.items() if len(v)]
    ax.boxplot([list(groups[k]) for k in names], showfliers=False)
    ax.set_xticks(range(1, len(names) + 1), [k.replace(" | ", "\n") for k in names], fontsize=7)
    ax.set_ylabel("step score")
    ax.set_ylim(-0.02, 1.02)
    extra = "" if fidelity is None else f" (process fidelity AUC {fidelity:.2f})"
    ax.set_title("Process collapse: step scores by gold validity and outcome" + extra, fontsize=9)
    ax.grid(alpha=0.3, axis="y")
    return _save(plt, fig, path)


def lucky(summary: dict[str, Any], path: str | Path) -> Path:
    """Right-answer traces split into valid and lucky ones, and how many lucky ones the PRM flags."""
    plt, fig, ax = _figure(5.5, 3.8)
    labels = [
        "right answer,\nvalid process",
        "lucky\n(wrong step)",
        "lucky,\nflagged by PRM",
        "lucky, first\nerror exact",
    ]
    values = [summary["right_valid"], summary["lucky"], summary["lucky_flagged"], summary["lucky_exact"]]
    ax.bar(labels, values, color=["tab:green", "tab:orange", "tab:blue", "tab:purple"])
    ax.set_ylabel("traces")
    ax.set_title(f"Lucky answers: {summary['lucky_share']:.1%} of right answers", fontsize=9)
    ax.tick_params(axis="x", labelsize=7)
    return _save(plt, fig, path)


def loophole(summary: dict[str, Any], path: str | Path) -> Path:
    """Mean aggregated score of loophole, honest right and other trajectories, and best-of-N's pick rate."""
    plt, fig, (left, right) = _figure(8.0, 3.6, ncols=2)
    means = summary["mean_score"]
    groups = [("loophole\n(right answer,\ngamed)", means["loophole"]), ("honest,\nright", means["honest_right"]),
              ("other", means["other"])]  # fmt: skip
    shown = [(k, v) for k, v in groups if v is not None]
    left.bar(
        [k for k, _ in shown], [v for _, v in shown], color=["tab:red", "tab:green", "tab:grey"][: len(shown)]
    )
    left.set_ylabel(f"mean {summary['aggregation']} step score")
    left.set_title(f"Rewarded as error-free: {summary['rewarded_rate']:.0%} of loophole runs", fontsize=9)
    left.tick_params(axis="x", labelsize=7)
    shares = [summary["pool_share"] or 0.0, summary["pick_share"] or 0.0]
    right.bar(["in the pools", f"best-of-{summary['max_n']} picks"], shares, color=["tab:grey", "tab:red"])
    right.set_ylabel("share of loophole trajectories")
    right.set_title("Selection towards gaming", fontsize=9)
    return _save(plt, fig, path)


def reliability(curves: dict[str, Rows], path: str | Path) -> Path:
    """Reliability diagram: observed validity rate against mean predicted score, per bin and gold view."""
    plt, fig, ax = _figure(5.0, 4.6)
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", label="perfect calibration")
    for name, bins in curves.items():
        pts = [b for b in bins if b["count"]]
        ax.plot([b["confidence"] for b in pts], [b["accuracy"] for b in pts], marker="o", label=name)
    ax.set_xlabel("mean predicted step score")
    ax.set_ylabel("observed share of valid steps")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_title("Calibration (reliability diagram)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return _save(plt, fig, path)


def length_bias(rows: Rows, path: str | Path) -> Path:
    """Mean aggregated score and gold validity rate against the number of steps."""
    plt, fig, ax = _figure()
    xs = [r["steps"] for r in rows]
    ax.plot(xs, [r["score"] for r in rows], marker="o", label="mean PRM score (aggregated)")
    ax.plot(xs, [r["gold_valid"] for r in rows], marker="s", label="gold: share with no wrong step")
    ax.plot(
        xs,
        [float("nan") if r["score_valid_only"] is None else r["score_valid_only"] for r in rows],
        marker="^",
        linestyle=":",
        label="PRM score, gold-valid only",
    )
    ax.set_xlabel("number of steps")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Length bias")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return _save(plt, fig, path)


def first_error_hist(gold: Sequence[int], predicted: Sequence[int], path: str | Path) -> Path:
    """Histogram of gold and predicted first-error positions (-1 = no error)."""
    plt, fig, ax = _figure()
    top = max([*gold, *predicted, 0])
    bins = [b - 0.5 for b in range(-1, top + 2)]
    ax.hist([list(gold), list(predicted)], bins=bins, label=["gold", "predicted"])
    ax.set_xlabel("first error step (-1 = none)")
    ax.set_ylabel("traces")
    ax.set_title("First-error positions")
    ax.legend(fontsize=8)
    return _save(plt, fig, path)


def interval_bars(
    groups: dict[str, dict[str, tuple[float, float, float]]], path: str | Path, title: str, ylabel: str
) -> Path:
    """Grouped bars with error bars: ``groups[group][series] = (mean, low, high)``, e.g. first-error F1
    per subset (groups) and model (series), mean over seeds with its 95 % interval."""
    plt, fig, ax = _figure(8.0, 4.2)
    series = list(dict.fromkeys(s for g in groups.values() for s in g))
    width = 0.8 / max(1, len(series))
    for k, name in enumerate(series):
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(groups))]
        cells = [g.get(name, (float("nan"),) * 3) for g in groups.values()]
        means = [c[0] for c in cells]
        errs = [[c[0] - c[1] for c in cells], [c[2] - c[0] for c in cells]]
        ax.bar(xs, means, width, yerr=errs, capsize=2, label=name)
    ax.set_xticks(range(len(groups)), list(groups), rotation=15, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7, ncol=2)
    return _save(plt, fig, path)


def fewshot(rows: Rows, path: str | Path, title: str) -> Path:
    """The few-shot curve: first-error F1 (at the source threshold and at each copy's own) and step AUROC
    against ``k`` (symlog axis, so k = 0 shows), each point with its bootstrap interval."""
    plt, fig, axes = _figure(9.0, 3.8, ncols=2)
    ks = [r["k"] for r in rows]
    panels = {
        "first-error F1": {"source threshold": "f1", "own threshold": "f1_own"},
        "step AUROC": {"": "auroc"},
    }
    for ax, (ylabel, lines) in zip(axes, panels.items(), strict=True):
        for label, key in lines.items():
            mean = [r[key]["mean"] for r in rows]
            err = [[max(0.0, m - r[key]["low"]) for m, r in zip(mean, rows, strict=True)],
                   [max(0.0, r[key]["high"] - m) for m, r in zip(mean, rows, strict=True)]]  # fmt: skip
            ax.errorbar(ks, mean, yerr=err, marker="o", markersize=3, capsize=3, label=label or None)
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xlabel("k (labelled target traces)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    return _save(plt, fig, path)
