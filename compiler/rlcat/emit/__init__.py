"""The plan formats, explain, the diagnostic reporters and the tables: what a command prints."""
