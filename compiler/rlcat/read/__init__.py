"""Reading input: files and command-line values → plain data with the position of every key.

This is the only layer that reads files. It uses PyYAML's C composer so that every node keeps its
line and column; values are built from the nodes by hand (nodes.py) so that duplicate keys are
errors (YAML loaders silently keep the last one), only the safe core tags are accepted (never
executed), and alias expansion is bounded by the number of values and the size of the text it makes.

YAML is read as people see it:

- plain scalars resolve as in the YAML 1.2 core schema (`yes`, `on`, `64:00` are text, `0o17` is a
  number); where YAML 1.1 reads one differently, the difference is kept as a note that becomes the
  hint of a schema error about that value (yaml_schema.py);
- U+0085, U+2028 and U+2029, which YAML takes for line breaks while editors, grep and GitHub show
  one line, are refused outside quoted strings, at the line and column people see (hidden_breaks.py);
- only regular files are read, and no more of them than MAX_BYTES (rlcat.files.open_regular).

document.py reads a file into a Document; values.py reads a --set or --override value the same way.
"""
