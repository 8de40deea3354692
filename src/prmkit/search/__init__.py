"""Search and selection with a PRM: any policy (``Policy``) and any scorer (``StepScorer``).

Contract: every method takes problems, a policy and a scorer and returns one
:class:`~prmkit.search.common.SearchResult` per problem: the chosen trace and answer, whether it is
right, and what it cost (steps and tokens generated, steps scored), so methods compare at equal compute.
Aggregations come from ``prmkit.scoring.aggregate`` (min, prod, last, mean, geomean); the scorer a
command names is read by ``prmkit.scoring.load_scorer`` (an embedded world's exact
checker is the scorer ``NAME-oracle``, e.g. ``arithmetic-oracle``).

- ``common.py``    SearchResult, Compute accounting, sampling and checked scoring helpers
- ``bon.py``       best-of-N (``best_of_n``, ``select_best``)
- ``vote.py``      majority and PRM-weighted majority vote (``vote``, ``group_answers``, ``select_vote``)
- ``beam.py``      step-level beam search and DVTS (``beam_search``, ``dvts``)
- ``smc.py``       particle filtering over steps, resampled by PRM weights (``smc``)
- ``resample.py``  reject-and-resample from the first doubtful step (``reject_and_resample``)
- ``parallel.py``  many problems at once: the thread pool, chunked and shared scoring, the progress bar
- ``config.py``    the commands' typed configs (``BonConfig``, ``VoteConfig``, ``BeamConfig`` ...)
- ``files.py``     what every search command reads and writes (problems in; results, traces, summary out)
- ``searches.py``  ``SEARCHES``: one entry per command (name, config, ``run_*(config)`` in the method's module)
- ``views.py``     the results view of the SMC study (``search-smc``): a docs table from its file

Each method's module holds its pure core and the command beside it (``best_of_n`` and ``run_bon`` in
bon.py), as the labellers do.
"""

from prmkit.search.beam import beam_search, dvts
from prmkit.search.bon import best_of_n, select_best
from prmkit.search.common import Compute, SearchResult
from prmkit.search.resample import reject_and_resample
from prmkit.search.smc import smc
from prmkit.search.vote import group_answers, select_vote, vote

__all__ = [
    "Compute",
    "SearchResult",
    "beam_search",
    "best_of_n",
    "dvts",
    "group_answers",
    "reject_and_resample",
    "select_best",
    "select_vote",
    "smc",
    "vote",
]
