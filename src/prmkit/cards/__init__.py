"""Process cards: the JSON written beside every checkpoint saying how its labels and model were made.

Contract: ``cards`` alone writes a checkpoint's cards. :func:`write_process_card` writes
``process_card.json`` atomically from a :class:`ProcessCard` and :func:`write_model_card` the ``README.md``
a freshly trained checkpoint carries (its head's usage: plain transformers, vLLM); training fills what it knows (separator, label scale, label sources with counts
and provenance, base model, data and split, dev metrics, the roles its traces show). Other areas extend the card (audits,
evaluation results) by adding fields, never by changing these.

- ``process_card.py``  ProcessCard, LabelSourceSummary, summarize_sources, write/read
- ``roles.py``         the card's roles: Roles (base model, policy, ORM, PRM, judge, human labels, tool
                       scaffold, monitor), DeploymentMonitor and read_monitor (``prmkit card --monitor``)
- ``card.py``          the full card (``prmkit card MODEL``): measures the model on fresh world data
- ``render.py``        Markdown rendering: the card's README.md, which is also the HF model card (the
                       training-time one from the head table in ``prmkit.modeling.heads``, then the full one)
"""

from prmkit.cards.process_card import (
    LabelSourceSummary,
    ProcessCard,
    read_process_card,
    summarize_sources,
    training_warnings,
    write_process_card,
)
from prmkit.cards.render import write_model_card
from prmkit.cards.roles import DeploymentMonitor, Roles, read_monitor, trace_roles

__all__ = [
    "DeploymentMonitor",
    "LabelSourceSummary",
    "ProcessCard",
    "Roles",
    "read_monitor",
    "read_process_card",
    "summarize_sources",
    "trace_roles",
    "training_warnings",
    "write_model_card",
    "write_process_card",
]
