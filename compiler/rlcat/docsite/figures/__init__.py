"""The docs' figures: each function takes data and returns SVG text to inline in a page.

matplotlib draws them (the `docs` extra); it is imported inside these modules only, so nothing on
the compile path loads it. Every figure is byte-deterministic and every text in it escaped
(`rlcat.docsite.figures.svg`).
"""


def forget_drawings() -> None:
    """Empty the caches of drawn figures (a benchmark round, or a test, draws them all again)."""
    from rlcat.docsite.figures import placement, series

    placement.placement_svg.cache_clear()
    series._series_svg.cache_clear()
