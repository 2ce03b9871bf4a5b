"""Recipes, catalog entries and platform profiles.

The pydantic schemas (recipe, catalog, platform) are the source of truth: JSON Schemas, docs and
diagnostics come from them. `plain` holds the frozen plain classes generated from them, which the
compile path uses so that it never imports pydantic. Nothing is imported here, for the same reason.
"""
