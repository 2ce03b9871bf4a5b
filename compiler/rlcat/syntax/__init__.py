"""The text grammars of the programs that read rlcat's output, and how text is escaped for each:
Hydra's override values (hydra_value), bash words and comments (bash), YAML documents (yaml_text).

Every layer uses them and they use nothing of rlcat's but diagnostics: each escaping rule is here,
once, and every output that needs it calls it."""
