"""The embedded worlds: each a package of its own parts, the skeleton they share, and one registry.

- ``arithmetic/``   seeded arithmetic word problems (docs/world.md)
- ``agent/``        tool-using agent tasks with a knowledge base and a calculator (docs/agentworld.md)
- ``code/``         bug-fixing tasks in a small Python subset with visible and hidden tests (docs/codeworld.md)
- ``registry.py``   ``World``, the one record of a world, and ``WORLDS``: the policies, judges, oracle
                    scorers, CLI groups, recipes, evaluation and RL prompts all follow from it

Each world keeps what is its own (its problems, its policy's errors, how its checker reads a step, what
its judge is lenient about, the measures only it reports) and hands those parts to the code here, which
holds the rest: the splits, the configs' rules, the gold verdict and its labels, the sampling loop, the
noisy judge, the oracle scorer, the statistics and the file jobs. It imports only ``prmkit.core`` and
``prmkit.formats``; the worlds import it, never the other way round.

- ``splits.py``     the three splits; a problem's draw kept in its split (train / test by a hash)
- ``config.py``     bases of a world's configs: per-split length knobs, per-decision error rates
- ``checks.py``     the gold verdict (GoldStep, GoldCheck: first error, lucky, local and prefix views)
- ``sampling.py``   ``SimulatedPolicy`` (``continue_from`` from a world policy's parts), ``SampleTraces``
                    (the loop behind every ``sample_traces``), the seeds of both
- ``judge.py``      ``NoisyJudge``: gold statuses seen through miss and false-alarm rates
- ``teacher.py``    ``Teacher``: a world's judge writing the check behind each verdict (a ThinkPRM chain)
- ``oracle.py``     ``GoldOracle``: a world's checker as a StepScorer (prefix correctness)
- ``summary.py``    ``tally``: the counts and shares every world's statistics report
- ``jobs.py``       ``Jobs``: the file jobs behind ``prmkit <world> generate | sample | check | stats``
- ``views.py``      the ``world-stats`` results view: a page's statistics table from the ``stats`` files
"""
