"""The process card as Markdown: the checkpoint's README.md, which is also its Hugging Face model card.

Front matter follows the Hub's model-card metadata (``library_name``, ``pipeline_tag``, ``tags``,
``base_model`` when it is a Hub id); the body has one section per question a user of a PRM asks,
in the order of the issue: what process, which labels, who played each role (base model, policy, ORM, PRM,
judge, human labels, tool scaffold, deployment monitor), which model and data, where tested, what still
fails, what was not tested, how to use it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prmkit.cards.process_card import ProcessCard
from prmkit.cards.roles import (
    NONE_DECLARED,
    Accuracy,
    DeploymentMonitor,
    HumanRole,
    ModelRole,
    Roles,
    ToolScaffold,
    tool_name,
)
from prmkit.core.files import atomic_write
from prmkit.core.results import percent
from prmkit.modeling.heads import card_fields, head
from prmkit.modeling.spec import PrmSpec


def _num(x: Any, digits: int = 3) -> str:
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def _code(x: Any) -> str:
    """A value as inline code, safe inside a Markdown table cell (pipes escaped)."""
    if x is None:
        return "–"
    text = x.encode("unicode_escape").decode() if isinstance(x, str) else json.dumps(x)
    return "`" + text.replace("|", "\\|") + "`"


def _flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts as dotted keys, so a table row holds one value."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict) and v:
            out |= _flat(v, f"{prefix}{k}.")
        else:
            out[f"{prefix}{k}"] = v
    return out


def front_matter(card: ProcessCard) -> str:
    kind = getattr(card, "process", {}).get("kind", card.kind)
    kind_of_head = head(getattr(card, "process", {}).get("head") or "classifier")
    lines = [
        "---",
        "library_name: transformers",
        f"pipeline_tag: {kind_of_head.pipeline_tag}",
        "tags:",
        "- prmkit",
        f"- {kind}",
    ]
    lines.append("- process-reward-model" if kind == "prm" else "- outcome-reward-model")
    base = card.base_model
    if base and "/" in base and not base.startswith(("/", ".")) and base.count("/") == 1:
        lines.append(f"base_model: {base}")
    return "\n".join([*lines, "---", ""])


def process_md(card: ProcessCard) -> str:
    p = card.process
    rows = [
        ("kind", p["kind"]),
        ("supervised at", p["supervised_at"]),
        ("step definition", p["step_definition"]),
        ("input template", _code(p.get("input_template"))),
        ("separator", _code(p["separator"])),
    ]
    kind_of_head = head(p.get("head") or "classifier")
    if not kind_of_head.reads_tag:
        rows += [
            ("head", f"{kind_of_head.name}: {kind_of_head.described}"),
            ("label scale", p["label_scale"]),
        ]
    else:
        rows += [
            ("tag (score read here)", f"{_code(p['tag'])} (id {p['tag_id']})"),
            (
                "label scale",
                f"{p['label_scale']}; classes {_code(p['classes'])}, positive {_code(p['positive_labels'])}",
            ),
        ]
    rows += [
        ("default aggregation", p["aggregation"] or "–"),
    ]
    return "## What process was supervised\n\n| | |\n|---|---|\n" + "\n".join(
        f"| {k} | {v} |" for k, v in rows
    )


def labels_md(card: ProcessCard) -> str:
    lines = [
        "## How the labels were made",
        "",
        "| source | steps | ratings (-1 / 0 / +1) | soft | provenance |",
        "|---|---|---|---|---|",
    ]
    for lab in card.labels:
        r = lab.ratings
        prov = "; ".join(
            f"{p.get('method')} by {p.get('actor') or '?'}"
            + (f" ({_params(p.get('params'))})" if p.get("params") else "")
            + (f", v{p['version']}" if p.get("version") else "")
            + (f": {p['labels']:,} labels" if "labels" in p else "")
            + (f" (each with its own {', '.join(p['per_label'])})" if p.get("per_label") else "")
            for p in lab.provenance
        )
        lines.append(
            f"| {lab.source} | {lab.steps} | {r.get('-1', 0)} / {r.get('0', 0)} / {r.get('1', 0)} | {lab.soft} | {prov or '–'} |"
        )
    if not card.labels:
        lines.append("| (training recorded no label sources) | | | | |")
    return "\n".join(lines)


def _params(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def _kv(title: str, d: dict[str, Any]) -> str:
    if not d:
        return f"**{title}:** not recorded by training."
    rows = _flat(d).items()
    body = "\n".join(f"| {k} | {_code(v) if isinstance(v, dict | list) else _num(v, 4)} |" for k, v in rows)
    return f"**{title}**\n\n| | |\n|---|---|\n{body}"


def gold_md(card: ProcessCard) -> str:
    """Every way gold labels reached the model (its training recorded them from what it read)."""
    head = "## Where gold labels were used\n\n"
    if not card.gold_use:
        return head + (
            "Nowhere in training: no gold-filtered corpus, no gold training labels, no gold dev set. "
            "(Evaluation below is measured against gold.)"
        )
    return (
        head
        + "\n".join(f"- {use.line()}" for use in card.gold_use)
        + (
            "\n\nGold is for evaluation; a user without gold labels reproduces this model only by replacing "
            "these uses (a dev set with gold labels can be a small hand-labelled one)."
        )
    )


def model_md(card: ProcessCard) -> str:
    parts = [
        "## Base model, training data and split",
        "",
        f"Base model: `{card.base['base_model']}`"
        + (f", architecture {_code(card.base['architecture'])}" if card.base.get("architecture") else ""),
        "",
    ]
    parts += [
        _kv("Training data and split", card.data),
        "",
        _kv("Training", card.training),
        "",
        _kv("Dev metrics at training time", card.metrics),
    ]
    return "\n".join(parts)


def tested_md(card: ProcessCard) -> str:
    ev = card.evaluation
    if not ev:
        return "## Where it was tested\n\nNot evaluated: see *What it was not tested on*."
    d, fe = ev["data"], ev["first_error"]
    lines = [
        "## Where it was tested",
        "",
        f"Fresh world data ({d['world_version']}): test split {d['test']['problems']} problems × {d['test']['per_problem']} "
        f"samples from {', '.join(d['policies'])}; heldout split (longer problems) {d['heldout']['traces']} traces; "
        f"steps per trace {d['steps_min']}–{d['steps_max']}.",
        "",
        f"### First-error detection (ProcessBench metric, ×100; threshold {_num(fe['threshold'])}, {fe['threshold_from']}"
        + (f" on {d['dev_problems']} dev problems" if fe["threshold_from"] == "dev" else "")
        + ")",
        "",
        _fe_table(fe),
    ]
    if ev.get("processbench"):
        lines += [
            "",
            f"### ProcessBench (real), threshold {_num(ev['processbench']['threshold'])} from the world dev split",
            "",
            _fe_table(ev["processbench"]),
        ]
    lines += [*_image("first-error positions", card.plots.get("first_error")), "", _bon_md(ev["bon"])]
    lines += _image("best-of-N", card.plots.get("bon"))
    return "\n".join(lines)


def _image(caption: str, path: str | None) -> list[str]:
    """A Markdown image line after a blank one, or nothing for a plot that was not drawn
    (``evaluate.plots: false``): a card links no missing image."""
    return [] if path is None else ["", f"![{caption}]({path})"]


def _fe_table(fe: dict[str, Any]) -> str:
    """The first-error table; AUROC and the F1 at each subset's own best threshold beside F1 when the
    evaluation has them (a step scorer's, measured since they were added)."""
    extra = any(s.get("auroc") is not None or s.get("f1_own_best") is not None for s in fe["subsets"])
    lines = [
        "| subset | traces | with error / error-free | acc_error | acc_correct | F1 |"
        + (" AUROC | F1 at own best threshold |" if extra else ""),
        "|---|---|---|---|---|---|" + ("---|---|" if extra else ""),
    ]
    for s in fe["subsets"]:
        cells = f" {percent(s.get('auroc'))} | {percent(s.get('f1_own_best'))} |" if extra else ""
        lines.append(
            f"| {s['name']} | {s['traces']} | {s['with_error']} / {s['error_free']} | {percent(s['acc_error'])} | {percent(s['acc_correct'])} | {percent(s['f1'])} |"
            + cells
        )
    means = f" **{percent(fe.get('auroc'))}** | **{percent(fe.get('f1_own_best'))}** |" if extra else ""
    lines.append(f"| **mean of subset F1s (headline)** | | | | | **{percent(fe['f1'])}** |" + means)
    lines.append(
        f"| size-weighted F1 (huggingface script's figure, not the headline) | | | | | {percent(fe['f1_size_weighted'])} |"
        + (" | |" if extra else "")
    )
    if extra:
        lines += [
            "",
            "F1 is at the threshold above (tuned on dev, then transferred); *F1 at own best threshold* is each "
            "subset's F1 at the threshold best for that subset (in-sample): the gap between them is threshold "
            "transfer, not verification. AUROC is threshold-free: the gold first-error step ranked against the "
            "right steps before it by step score (steps after the first error left out).",
        ]
    return "\n".join(lines)


HONEST_CELLS = ("honest_accuracy", "honest_lo", "honest_hi")
"""A best-of-N row's honest accuracy and band, present only where a pool holds a trace that games the
task (:mod:`prmkit.evaluation.bon_curves`)."""


def _bon_md(bon: dict[str, Any]) -> str:
    """Best-of-N accuracy with its bands, the honest accuracy beside it when the evaluation measured one
    (a world with loopholes), and each method's gap to majority vote."""
    p = bon["params"]
    rows = bon["rows"]
    ns = sorted({r["n"] for r in rows})
    cell = {(r["method"], r["n"]): r for r in rows}
    head = "| method | " + " | ".join(f"N = {n}" for n in ns) + " |\n|---|" + "---|" * len(ns)
    methods = list(dict.fromkeys(r["method"] for r in rows))
    gap = [head] + [
        f"| {m} | "
        + " | ".join(
            f"{100 * cell[m, n]['gap_vs_majority']:+.1f} ({100 * cell[m, n]['gap_lo']:+.1f} to {100 * cell[m, n]['gap_hi']:+.1f})"
            for n in ns
        )
        + " |"
        for m in methods
        if m not in ("majority", "oracle")
    ]
    honest: list[str] = []
    if rows and all(HONEST_CELLS[0] in r for r in rows):
        honest = [
            "",
            "Honest accuracy ×100, where a pick that games the task counts as wrong and a vote counts only "
            "when a trace that does not game gave its answer (the same picks and resampled problems; traces "
            f"in the pools with a step gold marks as a loophole: {p['gaming_traces']}):",
            "",
            head,
            *_band_rows(cell, methods, ns, HONEST_CELLS),
        ]
    return "\n".join(
        [
            f"### Best-of-N: answer accuracy ×100 ({int(p['confidence'] * 100)} % bootstrap band over {p['problems']} problems)",
            "",
            head,
            *_band_rows(cell, methods, ns, ("accuracy", "lo", "hi")),
            *honest,
            "",
            "Gap to majority vote, points (paired bootstrap band: the same resampled problems on both sides):",
            "",
            *gap,
        ]
    )


def _band_rows(
    cell: dict[tuple[str, int], dict[str, Any]], methods: list[str], ns: list[int], keys: tuple[str, str, str]
) -> list[str]:
    """One table row per method: the value ``keys[0]`` with its band ``keys[1]``–``keys[2]`` at each N."""
    mean, lo, hi = keys
    return [
        f"| {m} | "
        + " | ".join(
            f"{percent(cell[m, n][mean])} ({percent(cell[m, n][lo])}–{percent(cell[m, n][hi])})" for n in ns
        )
        + " |"
        for m in methods
    ]


AUDIT_ROWS = (
    ("gaming_gap_at_max_n", "Verifier gaming: picks' score − gold validity at the largest N", "audit_gaming"),
    ("gaming_gap_growth", "  … growth of that gap from N = 1", None),
    (
        "beam_gap_at_max_budget",
        "Verifier gaming under beam search: picks' score − gold validity, largest budget",
        "audit_beam",
    ),
    ("beam_gap_growth", "  … growth of that gap from the smallest budget", None),
    (
        "outcome_shift_share",
        "Process-to-outcome shift: picks with min score on the final step (open PRMs: 0.42–0.55)",
        "audit_shift",
    ),
    (
        "process_fidelity",
        "Process fidelity (AUC; 1 = follows steps, 0 = follows the answer)",
        "audit_collapse",
    ),
    (
        "collapse_verdict",
        "Verdict (bootstrap band of fidelity: all below 0.5 = collapsed, above = process)",
        None,
    ),
    ("lucky_share", "Lucky answers: right answers with a wrong step", "audit_lucky"),
    ("lucky_catch_rate", "  … of those, flagged by the model", None),
    ("ece_local", "Calibration error (ECE), local gold view", "audit_calibration"),
    ("ece_prefix", "Calibration error (ECE), prefix gold view", None),
    (
        "length_slope_valid_only",
        "Length bias: score change per extra step on gold-valid traces",
        "audit_length",
    ),
    (
        "loophole_rewarded_rate",
        "Loophole: trajectories gaming the task passed as error-free",
        "audit_loophole",
    ),
    ("loophole_preference", "  … chance one outranks an honest right trajectory (0.5 = indifferent)", None),
    ("loophole_pick_share", "  … share of best-of-N picks that game the task", None),
)


def _estimate_cell(e: dict[str, Any] | None, signed: bool = False) -> str:
    if e is None:
        return ""
    fmt = "{:+.1f}" if signed else "{:.1f}"
    return f"{fmt.format(100 * e['mean'])} [{fmt.format(100 * e['low'])}, {fmt.format(100 * e['high'])}]"


def transfer_md(card: ProcessCard) -> str | None:
    """*Where it transfers*: the settings ``prmkit eval transfer`` measured it in (None: none given)."""
    t = getattr(card, "transfer", None)
    if not t:
        return None
    targets = (t.get("params") or {}).get("config", {}).get("targets", {})
    lines = [
        "## Where it transfers",
        "",
        f"One threshold ({_num(t['threshold'])}, {t['threshold_from']}) in every setting, {t['problems']} problems "
        "each; F1 is first-error F1 at that threshold, AUROC the threshold-free step ranking, the gaps are "
        "setting − source paired by problem (×100, 95 % bootstrap intervals over problems).",
        "",
        "| setting | what changes | traces | F1 | AUROC | gap F1 | gap AUROC |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in t["settings"]:
        knobs = targets.get(s["name"])
        what = "the source" if knobs is None else _cell(json.dumps(knobs, sort_keys=True))
        cells = [_estimate_cell(s["f1"]), _estimate_cell(s["auroc"])]
        cells += [_estimate_cell(s.get("gap_f1"), True), _estimate_cell(s.get("gap_auroc"), True)]
        lines.append(f"| {s['name']} | {what} | {s['traces']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def audits_md(card: ProcessCard) -> str:
    a = card.audits
    if not a:
        return "## What failures remain\n\nNo audit was run."
    lines = ["## What failures remain (audits on the world test split)", "", "| audit | value |", "|---|---|"]
    lines += [f"| {label} | {_num(a[key])} |" for key, label, _ in AUDIT_ROWS if key in a]
    lines.append("")
    lines += [f"![{plot}]({card.plots[plot]})" for _, _, plot in AUDIT_ROWS if plot and plot in card.plots]
    return "\n".join(lines)


def usage_md(card: ProcessCard, usage: str | None = None) -> str:
    """How to score with prmkit, then the head's own usage sections (plain transformers, vLLM)."""
    agg = card.process.get("aggregation") or "min"
    text = (
        "## How to use\n\n```python\nfrom prmkit.scoring import aggregate, load_scorer\n\n"
        'scorer = load_scorer("path/to/this/checkpoint")\nstep_scores = scorer.score(traces)  # one score in [0, 1] per step\n'
        f'trace_scores = [aggregate(s, "{agg}") for s in step_scores]\n```\n\n'
        "Or from the shell: `prmkit score MODEL traces.jsonl -o scored.jsonl`. The full numbers are in `process_card.json` "
        "and the `card/` folder."
    )
    if usage:  # its sections one level down, under "How to use"
        text += "\n\n#" + usage.replace("\n## ", "\n### ")
    return text


def head_usage(card: ProcessCard, path: str | Path) -> str | None:
    """The usage sections of the card's head for the checkpoint at ``path`` (None: the card declares no
    PRM head, e.g. a pretrained LM, so there is nothing beyond prmkit's own scorer to show)."""
    from pydantic import ValidationError

    try:
        spec = PrmSpec.model_validate(card.model)
    except ValidationError:
        return None
    return head(spec.head).usage.format(**card_fields(spec, str(path), card.base_model))


def training_readme(spec: PrmSpec, path: str | Path, base: str | None) -> str:
    """The model card a checkpoint has right after training: Hub front matter, what the head reads and
    the head's usage sections (scoring with plain transformers, serving with vLLM)."""
    kind = head(spec.head)
    fields = card_fields(spec, str(path), base)
    front = (
        f"---\nlibrary_name: transformers\npipeline_tag: {kind.pipeline_tag}\ntags: [{kind.card_tags}]\n"
        f"base_model: {fields['base']}\n---\n\n"
    )
    title = kind.title.format(**fields)
    return f"{front}# {title}\n\n{kind.summary.format(**fields)}\n\n{kind.usage.format(**fields)}"


def write_model_card(directory: str | Path, spec: PrmSpec, base: str | None) -> Path:
    """Write ``README.md`` (the Hugging Face model card) of a freshly trained checkpoint; ``prmkit card``
    later replaces it with the full process card, which keeps the same usage sections."""
    readme = Path(directory) / "README.md"
    with atomic_write(readme) as fh:
        fh.write(training_readme(spec, directory, base))
    return readme


def render_markdown(card: ProcessCard, usage: str | None = None) -> str:
    """The whole card as Markdown with Hub front matter (``usage``: the head's sections, see
    :func:`head_usage`)."""
    not_tested = "## What it was not tested on\n\n" + "\n".join(f"- {x}" for x in card.not_tested)
    title = f"# Process card: {card.process['kind'].upper()} ({card.card_version}, {card.created_at[:10]})"
    warnings = "\n".join(f"> **Warning:** {w}." for w in card.warnings())
    sections = [
        title,
        *([warnings] if warnings else []),
        process_md(card),
        labels_md(card),
        gold_md(card),
        roles_md(card),
        model_md(card),
        tested_md(card),
        *filter(None, [transfer_md(card)]),
        audits_md(card),
        not_tested,
        usage_md(card, usage),
    ]
    return front_matter(card) + "\n" + "\n\n".join(sections) + "\n"


UNKNOWN_ROLE = "unknown: training did not summarise its traces (a card written before roles)"


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _model_role(role: ModelRole | None) -> str:
    if role is None:
        return NONE_DECLARED
    link = f" ([checkpoint]({role.link}))" if role.link else ""
    card = "" if role.card in (None, role.link) else f", card: {role.card}"
    return f"`{role.name}`{link}{card}"


def _accuracy(acc: Accuracy | None, missing: str) -> str:
    if acc is None:
        return missing
    return (
        f"against {acc.reference} on {acc.traces:,} traces: first-error accuracy {percent(acc.first_error_accuracy)} %, "
        f"ProcessBench F1 {percent(acc.processbench_f1)}, step-error F1 {percent(acc.step_error_f1)}"
    )


def _settings(d: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in d.items())


def _trace_roles(roles: Roles) -> list[tuple[str, str]]:
    """The rows of the roles the training traces show (policy, judge, human labels, tool scaffold)."""
    names = ("policy (wrote the training traces)", "automated judge", "human labels", "tool scaffold")
    if roles.traces is None:
        return [(name, UNKNOWN_ROLE) for name in names]
    policy = "; ".join(
        f"`{p.name}`: {p.traces:,} traces, "
        + (
            "; ".join(f"sampled with {_settings(s)}" for s in p.sampling)
            or "sampling settings not on the traces"
        )
        for p in roles.policy
    )
    judge = "; ".join(
        f"`{j.source}`: {j.labels:,} labels on {j.traces:,} traces"
        + (f" ({j.version})" if j.version else "")
        + "; "
        + _accuracy(j.accuracy, "accuracy not measured: no gold or human labels on its traces")
        for j in roles.judge
    )
    shown = (
        policy or NONE_DECLARED,
        judge or NONE_DECLARED,
        _human(roles.human),
        _tools(roles.tool_scaffold),
    )
    return list(zip(names, shown, strict=True))


def _human(human: HumanRole | None) -> str:
    if human is None:
        return NONE_DECLARED
    people = "; ".join(
        f"`{a.name}`: {a.labels:,} labels on {a.traces:,} traces, "
        + _accuracy(a.gold_accuracy, "no gold to compare")
        for a in human.annotators
    )
    text = f"{len(human.annotators)} annotator(s) ({people})"
    if human.made_with:
        text += f", made with {', '.join(human.made_with)}"
    ag = human.agreement
    if ag:
        text += (
            f"; agreement over {ag['steps_double_labelled']:,} steps rated twice or more: Fleiss' kappa "
            f"{_num(ag['fleiss_kappa'])}, raw {percent(ag['raw_step_agreement'])} %, first-error agreement "
            f"{percent(ag['first_error_agreement'])} % over {ag['first_error_pairs']} pairs"
        )
    return text + "".join(f"; not measured: {u}" for u in human.unmeasured)


def _tools(tools: ToolScaffold | None) -> str:
    if tools is None:
        return "none: plain reasoning steps, no tool calls"
    names = dict.fromkeys([*(tool_name(t) for t in tools.tools), *tools.calls])
    listed = ", ".join(f"`{n}` ({tools.calls.get(n, 0):,} calls)" for n in names)
    return f"tools {listed}; layout: {tools.layout} (the schemas are in process_card.json)"


def _monitor(m: DeploymentMonitor | None) -> str:
    if m is None:
        return NONE_DECLARED
    text = f"{m.rule}: {m.aggregation} step score below {_num(m.threshold, 4)} → {m.action}"
    if m.measured_on is None:
        return text + "; its rates were not measured"
    counts = [f"{m.traces:,} traces"] if m.traces is not None else []
    counts += [f"{m.positives:,} with an error"] if m.positives is not None else []
    return text + (
        f"; on {m.measured_on} ({', '.join(counts) or 'traces not counted'}): TPR {_num(m.tpr)}, TNR {_num(m.tnr)}, g-mean² {_num(m.g_mean2)}"
    )


def roles_md(card: ProcessCard) -> str:
    """Every role of the card (``none declared`` where there is none), then an agent step as the model
    reads it when the traces had tools."""
    roles = card.roles or Roles()
    rows = [
        ("base model", _model_role(roles.base_model)),
        *_trace_roles(roles)[:1],
        ("ORM", _model_role(roles.orm)),
        ("PRM", _model_role(roles.prm)),
        *_trace_roles(roles)[1:],
        ("deployment monitor", _monitor(roles.monitor)),
    ]
    lines = ["## Roles: who made the traces, the labels and the gate", "", "| role | |", "|---|---|"]
    lines += [f"| {name} | {_cell(text)} |" for name, text in rows]
    example = roles.tool_scaffold.example if roles.tool_scaffold else None
    if example:
        lines += ["", "One tool-calling step as the model reads it:", "", "```text", example, "```"]
    return "\n".join(lines)
