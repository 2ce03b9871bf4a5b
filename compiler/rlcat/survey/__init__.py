"""What is built on the compile to look at many inputs at once: the recipe list, the difference of
two plans and a recipe's matrix (recipes.py), every finding in catalog files (validate_files.py),
and launch scripts judged by the compile's own key check and guards (lint_scripts.py)."""
