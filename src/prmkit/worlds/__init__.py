"""What every embedded world shares, written once: the skeleton ``world/`` and ``agentworld/`` fill in.

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
- ``oracle.py``     ``GoldOracle``: a world's checker as a StepScorer (prefix correctness)
- ``summary.py``    ``tally``: the counts and shares every world's statistics report
- ``jobs.py``       ``Jobs``: the file jobs behind ``prmkit <world> generate | sample | check | stats``
"""
