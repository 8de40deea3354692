"""Recipes are read with the one config loader, :mod:`prmkit.core.yamlconf` (file:line errors); this name
stays for the pipeline's readers and older imports."""

from prmkit.core.yamlconf import load_yaml_config

__all__ = ["load_yaml_config"]
