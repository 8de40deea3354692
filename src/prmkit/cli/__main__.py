"""``python -m prmkit.cli``: the same app as the ``prmkit`` script."""

from prmkit.cli import main

main()
