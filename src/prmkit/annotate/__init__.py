"""Human step annotation: a web app in the style of PRM800K's labelling, with quality control.

Contract: traces go in (``serve DATA`` / ``assign DATA``), annotators rate each step -1 / 0 / +1 with the
keyboard (flag "unsure", write a better step, stop at the first bad step), every rating is committed the
moment it is made, and the work comes out as core Traces with ``human`` Labels (actor = annotator id,
params with time spent) or as PRM800K lines; leads see gold accuracy and inter-annotator agreement.

Files:

- ``api.py``          the functions the CLI calls: serve, assign, add_user, agreement_report
- ``app.py``          FastAPI routes, sessions, CSRF, pages (``templates/``, ``static/``; no build step),
                      the body limit (413) and 4xx answers for hostile input
- ``work.py``         what annotators do: queue, rate, flag, rewrite, undo, finish (ownership checked)
- ``assign.py``       building queues: overlap for agreement, gold at a set rate, screening first
- ``qc.py``           per-annotator gold accuracy, time, flagged steps; world gold items
- ``agreement.py``    the app's agreement: its ratings read into ``prmkit.labeling.agreement`` (Cohen's
                      and Fleiss' kappa, first-error agreement)
- ``export.py``       to core traces (provenance ``human``) and PRM800K (through ``prmkit.formats``)
- ``labelstudio.py``  Label Studio tasks out (model scores as predictions), annotations back in
- ``auth.py``         scrypt passwords (OWASP cost, upgraded on login), hashed tokens, expiring sessions
- ``limits.py``       request body and login limits (``Limits``), the login throttle (lockout, per client)
- ``render.py``       escaped text with legible math
- ``store.py``        engine (SQLite WAL by default, PostgreSQL via psycopg 3) and Alembic migrations
- ``models.py``       the schema; ``migrations/`` its Alembic history
"""

import importlib
import sys
import types
from typing import Any

# Loaded on first use, so ``prmkit --help`` and ``prmkit.annotate.limits`` (read by the CLI) stay light.
_PUBLIC = {
    "Store": "store",
    "add_user": "api",
    "agreement_report": "api",
    "assign": "api",
    "export": "export",
    "export_labelstudio": "labelstudio",
    "export_traces": "export",
    "import_labelstudio": "labelstudio",
    "load": "api",
    "open_store": "store",
    "serve": "api",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'prmkit.annotate' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"prmkit.annotate.{_PUBLIC[name]}"), name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """``export`` and ``assign`` name both a submodule and a function of this package: the function wins,
    as it did when everything was imported eagerly, even when the submodule is imported later (Python then
    sets the package attribute to the submodule; ``sys.modules`` still has it)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _PUBLIC and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
