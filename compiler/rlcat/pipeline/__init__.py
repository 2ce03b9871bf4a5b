"""The compile pipeline: load → resolve → lower → platform → assemble (guards, key check) → Compiled.

Nothing is imported here: modules of the pipeline are imported by their full names, so that
importing one stage (the guards import `plan`) does not import the whole pipeline."""
