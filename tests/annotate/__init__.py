"""Tests of prmkit.annotate (a package, so module names never clash with other areas' tests)."""
