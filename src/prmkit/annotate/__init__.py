"""Human step annotation: a web app in the style of PRM800K's labelling, with quality control.

Contract: traces go in (``serve DATA`` / ``assign DATA``), annotators rate each step -1 / 0 / +1 with the
keyboard (flag "unsure", write a better step, stop at the first bad step), every rating is committed the
moment it is made, and the work comes out as core Traces with ``human`` Labels (actor = annotator id,
params with time spent) or as PRM800K lines; leads see gold accuracy and inter-annotator agreement.

Files:

- ``api.py``          the functions the CLI calls: serve, assign, add_user, agreement_report
- ``app.py``          FastAPI routes, sessions, CSRF, pages (``templates/``, ``static/``; no build step)
- ``work.py``         what annotators do: queue, rate, flag, rewrite, undo, finish (ownership checked)
- ``assign.py``       building queues: overlap for agreement, gold at a set rate, screening first
- ``qc.py``           per-annotator gold accuracy, time, flagged steps; world gold items
- ``agreement.py``    Cohen's and Fleiss' kappa, first-error agreement
- ``export.py``       to core traces (provenance ``human``) and PRM800K (through ``prmkit.formats``)
- ``labelstudio.py``  Label Studio tasks out (model scores as predictions), annotations back in
- ``auth.py``         scrypt passwords, hashed tokens, expiring sessions
- ``render.py``       escaped text with legible math
- ``store.py``        engine (SQLite WAL by default, PostgreSQL via psycopg 3) and Alembic migrations
- ``models.py``       the schema; ``migrations/`` its Alembic history
"""

from prmkit.annotate.api import add_user, agreement_report, assign, load, serve
from prmkit.annotate.export import export, export_traces
from prmkit.annotate.labelstudio import export_labelstudio, import_labelstudio
from prmkit.annotate.store import Store, open_store

__all__ = [
    "Store",
    "add_user",
    "agreement_report",
    "assign",
    "export",
    "export_labelstudio",
    "export_traces",
    "import_labelstudio",
    "load",
    "open_store",
    "serve",
]
