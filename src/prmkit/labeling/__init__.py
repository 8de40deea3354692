"""Automated step labels as resumable jobs: Monte Carlo, progress, binary search, LLM judge, consensus, report.

Contract: every labeller takes traces (whose problems carry a reference answer) and a
:class:`~prmkit.core.protocols.Policy` or :class:`~prmkit.core.protocols.Judge`, and returns labelled
copies plus a summary dict; with a ``work_dir`` it is a crash-safe job that a rerun resumes to the same
result. Each ``run_*`` function is the file-level twin of a ``prmkit label`` command and takes that
command's typed config.

- ``labellers.py``      ``LABELLERS``: one record per method (name, sources written, config, run, needs)
- ``mc.py``             per-step Monte Carlo, hard (``mc_hard``) and soft (``mc_soft``) — ``label mc``
- ``progress.py``       each step's advantage under a prover policy, hard (``progress_hard``) and soft
                        (``progress_soft``) — ``label progress``
- ``binary_search.py``  first error by divide and conquer (``binary_search``) — ``label binary_search``
- ``mcts.py``           OmegaPRM's tree search: Q + U selects a rollout, binary search inside it, MC values
                        along the tree's states (``mcts``) — ``label mcts``
- ``judge.py``          LLM-as-judge labels (``judge``) — ``label judge``
- ``consensus.py``      keep traces where MC and judge agree (``consensus``) — ``label consensus``
- ``chains.py``         a teacher judge's verification chains read back, and ThinkPRM's process-based
                        filtering against a small labelled set (the critic head's training data)
- ``merge.py``          join the outputs of a job run in shards (``--shard I/N``) — ``label merge``
- ``report.py``         precision / recall / F1, first-error accuracy, calibration, PNG — ``label report``
- ``agreement.py``      annotators' agreement: Cohen's and Fleiss' kappa, first-error agreement (the
                        annotation app's and the process card's)
- ``jobs.py``           the job store: append-only records, content keys, derived seeds, thread pool
- ``rollouts.py``       drawing rollouts and scoring them (``unparseable`` kept apart from ``wrong``)
- ``common.py``         shared file options, input checks, result writing
- ``views.py``          the labelling studies' results views (label-budget, label-mcts, labels-study-seeds,
                        progress-labels): docs tables rendered from committed results files
"""

from prmkit.labeling.binary_search import BinarySearchConfig, label_binary_search, run_binary_search
from prmkit.labeling.consensus import ConsensusConfig, consensus_filter, run_consensus
from prmkit.labeling.jobs import LABELING_VERSION, Job, derive_seed, prefix_key
from prmkit.labeling.judge import JudgeConfig, label_judge, run_judge
from prmkit.labeling.mc import MCConfig, label_mc, run_mc
from prmkit.labeling.mcts import MCTSConfig, label_mcts, run_mcts
from prmkit.labeling.merge import MergeConfig, merge_shards, run_merge
from prmkit.labeling.progress import ProgressConfig, label_progress, run_progress
from prmkit.labeling.report import ReportConfig, label_report, plot_report, run_report

__all__ = [
    "LABELING_VERSION",
    "BinarySearchConfig",
    "ConsensusConfig",
    "Job",
    "JudgeConfig",
    "MCConfig",
    "MCTSConfig",
    "MergeConfig",
    "ProgressConfig",
    "ReportConfig",
    "consensus_filter",
    "derive_seed",
    "label_binary_search",
    "label_judge",
    "label_mc",
    "label_mcts",
    "label_progress",
    "label_report",
    "merge_shards",
    "plot_report",
    "prefix_key",
    "run_binary_search",
    "run_consensus",
    "run_judge",
    "run_mc",
    "run_mcts",
    "run_merge",
    "run_progress",
    "run_report",
]
