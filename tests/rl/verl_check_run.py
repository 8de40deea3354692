"""Run in the verl 0.9.1 environment (``.venv-verl``) by tests/rl/test_verl_recipe.py: several
``python -m prmkit.rl.verl_check OVERRIDES`` (what ``recipes/verl-grpo-prm.sh --check`` execs) one after
the other in one interpreter, since verl's imports take ~8 s each time and a check well under one.

Not a test module (pytest does not collect it; the main environment has no verl). Input (JSON on stdin):
``[{"overrides": [...], "env": {NAME: VALUE}}, ...]``, each check's overrides as ``--print-overrides``
gives them and the environment variables it adds (the manager reads ``PRMKIT_*`` when it is built, so
each check sees its own and no other's). ``VERL_USE_EXTERNAL_MODULES`` is the recipe's, set by the caller
before ``import verl``. Output (JSON on stdout, after whatever verl prints): ``[{"code", "report"}, ...]``,
``verl_check.main``'s exit code and the report it printed.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys

from prmkit.rl.verl_check import main

MARK = "=== verl_check_run ==="
"""Printed before the results, so the caller finds them past verl's own output."""


def run(checks: list[dict]) -> list[dict]:
    """Each check's :func:`main` with its environment variables set, and unset again after it."""
    results = []
    for given in checks:
        before = {k: os.environ.get(k) for k in given["env"]}
        os.environ.update(given["env"])
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                code = main(given["overrides"])
        finally:
            for k, v in before.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        text = printed.getvalue()
        results.append({"code": code, "report": json.loads(text[text.index("{") :])})
    return results


if __name__ == "__main__":
    print(MARK)
    print(json.dumps(run(json.load(sys.stdin))))
