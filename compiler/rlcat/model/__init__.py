"""Pydantic schemas (extra="forbid" everywhere): recipes, catalog entries, platform profiles."""

from .catalog import DatasetEntry, ModelEntry
from .platform import EnvVar, PlatformProfile, SupportCell, Tweak
from .recipe import Algorithm, Backend, Engine, Mode, Recipe

__all__ = [
    "Algorithm",
    "Backend",
    "DatasetEntry",
    "Engine",
    "EnvVar",
    "Mode",
    "ModelEntry",
    "PlatformProfile",
    "Recipe",
    "SupportCell",
    "Tweak",
]
