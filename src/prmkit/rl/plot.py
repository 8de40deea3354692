"""The monitors' plot: proxy and gold over training, and the Goodhart plot (gold against proxy)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prmkit.rl.series import gold_key


def plot_monitors(points: Sequence[dict[str, Any]], path: str | Path, title: str = "") -> Path | None:
    """Left: PRM reward, gold process-correct rate, answer accuracy, lucky rate (and causal dependence
    where measured) by optimiser step.
    Right: gold against the proxy, in step order (a curve going right and down is reward hacking).
    None when there is nothing to draw."""
    if not points:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [p["step"] for p in points]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for key, label, style in (
        ("prm_reward", "PRM reward (proxy)", "-o"),
        ("process_correct", "process-correct (gold)", "-s"),
        ("answer_accuracy", "answer accuracy", "--^"),
        ("lucky", "lucky answers", ":x"),
        ("unfinished", "no final answer", ":."),
        ("causal_dependence", "causal dependence", "-.d"),
    ):
        if key in points[-1]:
            left.plot(steps, [p.get(key, float("nan")) for p in points], style, label=label, markersize=4)
    left.set_xlabel("GRPO optimiser step")
    left.set_ylim(-0.02, 1.02)
    left.legend(fontsize=8)
    left.set_title(title or "held-out monitors")
    gold = gold_key(points)
    proxy = next((k for k in ("paid_reward", "prm_reward") if k in points[-1]), None)
    if proxy is not None:  # what training pays is what a policy games: it goes on the x axis
        xs, ys = [p[proxy] for p in points], [p[gold] for p in points]
        right.plot(xs, ys, "-", color="grey", linewidth=1)
        shown = right.scatter(xs, ys, c=steps, cmap="viridis", zorder=3)
        fig.colorbar(shown, ax=right, label="step")
        right.set_xlabel("paid reward" if proxy == "paid_reward" else "PRM reward (proxy)")
    else:
        right.text(0.5, 0.5, "no PRM: no proxy", ha="center", transform=right.transAxes)
    right.set_ylabel(gold.replace("_", " ") + (" (gold)" if gold == "process_correct" else " (held-out)"))
    right.set_title("Goodhart plot")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
