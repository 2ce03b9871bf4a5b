"""Recipes, catalog entries and platform profiles as pydantic schemas, and their validation.

The schemas are the source of truth: the JSON Schemas under schemas/, the docs and the diagnostics
all come from them, and every document is validated by them.
"""
