"""The whole loop in one command: ``prmkit run RECIPE.yaml``.

- ``recipe.py``   the typed recipe (each section nests the config of the command it drives)
- ``yamlconf.py`` YAML -> typed config, with every mistake reported at its line before work starts
- ``stages.py``   the stages, each calling one public prmkit function, passing the files it declares
                  (a model's ``eval-`` stage measures, its ``card-`` stage writes the card from that)
- ``cache.py``    stage folders keyed by a hash of settings and inputs; DONE markers
- ``scores.py``   the run's store of the ORM's answers, computed by one evaluation stage, read by the rest
- ``runner.py``   run the stages in order, skip finished ones, resume after a crash
- ``parallel.py`` ``--jobs N``: stages whose inputs are done side by side, each in its own process
- ``sweep.py``    seeds: the whole recipe once per seed, then intervals over seeds and problems
- ``entry.py``    ``run``: once, or as a sweep when the recipe has seeds
- ``rl_recipe.py`` the RL study's recipe (``study: rl``, ``recipes/rl.yaml``): π0, PRMs, cells, draws
- ``rl_stages.py`` the RL study's stages: per draw π0 and its PRMs, one per cell, the report
- ``summary.py``  the report's content: headline tables, plots, audits, cards, timings
- ``report.py``   Markdown and HTML rendering of the report
"""

from prmkit.pipeline.entry import run
from prmkit.pipeline.runner import RunResult, load_recipe

__all__ = ["RunResult", "load_recipe", "run"]
