"""Run with TRL 1.13 first on the path (``.trl-1.13``, ``make trl-prm-env``) by tests/scoring/test_trl_prm.py:
TRL's own ``PRMTrainer`` trains a token classifier on a stepwise-supervision file prmkit wrote, then TRL's
own ``tokenize_row`` lays out each row as training saw it and the model reads P(LABEL_1) at its labelled
positions.

Not a test module (pytest does not collect it; .venv's trl 1.16 has no PRMTrainer). Everything is TRL's
code path, as ``examples/scripts/prm.py`` runs it: ``AutoModelForTokenClassification.from_pretrained(base,
num_labels=2)``, ``PRMConfig``, ``PRMTrainer(model, args, processing_class, train_dataset)``, ``train()``,
``save_model``.

Input (JSON on stdin): ``{"base", "data", "out", "steps", "seed"}``. Output (JSON at ``out/trl_scores.json``):
``{"trl": version, "scores": [[P(LABEL_1) at each labelled position] per row], "log": trainer log}``.
"""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    args = json.load(sys.stdin)
    import torch
    import trl
    from datasets import load_dataset
    from transformers import AutoModelForTokenClassification, AutoTokenizer
    from trl.experimental.prm import PRMConfig, PRMTrainer

    torch.manual_seed(args["seed"])
    tokenizer = AutoTokenizer.from_pretrained(args["base"])
    model = AutoModelForTokenClassification.from_pretrained(args["base"], num_labels=2)
    data = load_dataset("json", data_files=args["data"], split="train")
    config = PRMConfig(
        output_dir=args["out"],
        max_steps=args["steps"],
        per_device_train_batch_size=8,
        learning_rate=3e-3,
        gradient_checkpointing=False,
        bf16=False,
        use_cpu=True,
        report_to=[],
        save_strategy="no",
        logging_steps=10,
        seed=args["seed"],
        dataloader_num_workers=0,
    )
    trainer = PRMTrainer(model=model, args=config, processing_class=tokenizer, train_dataset=data)
    trainer.train()
    trainer.save_model(args["out"])
    tokenizer.save_pretrained(args["out"])

    model = trainer.model.eval()
    scores = []
    for row in data:
        tok = PRMTrainer.tokenize_row(row, tokenizer, config.step_separator, None, None, False, True)
        ids = torch.tensor([tok["input_ids"]])
        with torch.no_grad():
            probs = model(input_ids=ids).logits[0].float().softmax(-1)[:, 1]
        scores.append([probs[i].item() for i, label in enumerate(tok["labels"]) if label != -100])
    out = {"trl": trl.__version__, "scores": scores, "log": trainer.state.log_history}
    with open(os.path.join(args["out"], "trl_scores.json"), "w") as fh:
        json.dump(out, fh)


if __name__ == "__main__":
    main()
