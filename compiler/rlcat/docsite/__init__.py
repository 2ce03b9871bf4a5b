"""The documentation site: Markdown generated from the catalog, recipes, platform profiles, guard
registry and command line (generate.py), built with MkDocs and the Material theme (build.py), and
the `rlcat docs` commands (cli.py).

Nothing here is imported by a compile; MkDocs is imported inside build.py's functions only.
"""
