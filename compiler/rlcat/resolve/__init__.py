"""Resolve a recipe: follow `extends`, merge layers (platform block, --set), look up catalog entries.

Values keep their origin through every merge, so a value inherited from a parent recipe points at
the parent file and a value from a platform block points at that block.

    extends.load_recipe_source (the recipe file and its ancestors, merged: a source.Source)
      → source.platform_block, source.command_line_sets (layers merged on top)
      → recipe.resolve (validated as a Recipe, its model and dataset loaded by entries.load_entry)

findings.py moves a finding about an inherited file onto the recipe under review.
"""
