"""Where a likelihood-read agent PRM finds each step's least likely token: inside a tool result it read
(text the environment wrote, which the LM cannot predict) or in the agent's own text and calls.

Why: the likelihood head scores a step by the lowest token probability over the step's whole input, and an
agent step's input starts with the results of the previous call (``prmkit.core.render``). If the minimum
of right steps often sits in a tool result, the environment sets their score and the threshold falls to
where an error in the agent's own words no longer reaches it (docs/agentworld.md, best-of-N). This
measurement led to ``min_over: own`` (the likelihood read-out now leaves the results out); the script
still takes each step's minimum over its whole input, to show where it would fall.

``python experiments/agent_argmin.py --model STAGE/prm-gold-*/model --traces STAGE/problems-*/traces.jsonl``
prints counts by (gold label, the step reads a tool result, where the minimum is).
"""

from __future__ import annotations

import argparse
from collections import Counter
from itertools import islice
from pathlib import Path

from prmkit.core.model import Trace
from prmkit.core.render import RESPONSE_CLOSE, RESPONSE_OPEN
from prmkit.scoring import load_scorer


def inside_results(tokenizer, ids: list[int]) -> list[bool]:
    """For each token of a step, whether it lies inside a ``<tool_response>`` block."""
    text, flags = "", []
    for token in ids:
        text += tokenizer.decode([token])
        flags.append(text.rfind(RESPONSE_OPEN) > text.rfind(RESPONSE_CLOSE))
    return flags


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--traces", type=Path, required=True, help="traces with gold labels")
    parser.add_argument("--n", type=int, default=150, help="how many trajectories, from the top of the file")
    args = parser.parse_args()
    torch.set_num_threads(1)
    scorer = load_scorer(args.model)
    tokenizer = scorer.convention.tokenizer
    counts: Counter[tuple] = Counter()
    with args.traces.open() as f:
        for line in islice(f, args.n):
            trace = Trace.model_validate_json(line)
            (enc,) = scorer.encode([trace])
            if enc is None:
                continue
            batch = scorer.pad([enc])
            with torch.no_grad():
                logits = scorer.forward(batch)
            ids = batch["input_ids"][0]
            logp = torch.zeros(len(ids))
            logp[1:] = logits[0, :-1].float().log_softmax(-1).gather(-1, ids[1:, None])[:, 0]
            start = enc.prompt_length or 1
            for step, tag in zip(trace.steps, enc.tag_positions, strict=True):
                span = list(range(start, tag + 1))
                start = tag + 1
                flags = inside_results(tokenizer, [int(ids[p]) for p in span])
                lowest = min(range(len(span)), key=lambda i: float(logp[span[i]]))
                gold = next((lab.rating for lab in step.labels if lab.provenance.method == "gold"), None)
                where = "in a tool result" if flags[lowest] else "in its own text"
                counts[(gold, "reads a result" if any(flags) else "reads none", where)] += 1
    for key, value in sorted(counts.items(), key=str):
        print(key, value)


if __name__ == "__main__":
    main()
