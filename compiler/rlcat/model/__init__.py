"""Recipes, catalog entries and platform profiles as pydantic schemas, and their validation; and
the plan a compile makes of them (plan.py: settings with their origin), which every later stage
and the guards read.

The schemas are the source of truth: the JSON Schemas under schemas/, the docs and the diagnostics
all come from them, and every document is validated by them.
"""
