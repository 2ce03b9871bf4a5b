"""The compile: a resolved recipe lowered for one platform, the guards run, verl's key index
checked (assemble.py → Compiled); and the checks of a result file against the recipe it names
(result_checks.py)."""
