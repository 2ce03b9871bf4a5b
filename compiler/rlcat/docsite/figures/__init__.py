"""The docs' figures: each function takes data and returns SVG text to inline in a page.

matplotlib draws them (the `docs` extra); it is imported inside these modules only, so nothing on
the compile path loads it. Every figure is byte-deterministic and every text in it escaped
(`rlcat.docsite.figures.svg`).
"""
