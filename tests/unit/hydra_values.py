"""What the tests of rlcat's Hydra value grammar share: Hydra's own reading of a value, a strict
comparison, and generated values with every character the grammar gives a meaning to."""

from __future__ import annotations

from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hypothesis import strategies as st
from omegaconf import OmegaConf

HYDRA = OverridesParser.create()


def hydra(text: str) -> Any:
    """What Hydra's real parser makes of `k=<text>`."""
    return HYDRA.parse_override("k=" + text).value()


def verl_reads(text: str) -> Any:
    """What verl ends up with for `k=<text>`: Hydra's parse, then OmegaConf's resolution of the
    composed config (verl resolves its config before using it)."""
    config = OmegaConf.create({"k": hydra(text)})
    return OmegaConf.to_container(config, resolve=True)["k"]


def same(a: Any, b: Any) -> bool:
    """Equal values of the same types all the way down, keys included (True is not 1, "1" is not
    1, "null" is not None); floats by repr, so nan equals nan and -0.0 is not 0.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return len(a) == len(b) and all(same(k, bk) and same(a[k], b[bk]) for k, bk in zip(a, b, strict=True))
    if isinstance(a, float):
        return repr(a) == repr(b)
    return bool(a == b)


# characters that mean something in Hydra's override grammar, and some that are merely unusual
SPECIAL_CHARS = list(" '\",=$@{}[]()\\:/.-+#*~%&|!?<>;`^\t\n\r\x00\x1f\x1b\x7f\x85\u00a0\u2028\u202eé日🙂")
FRAGMENTS = ["", "${", "${x}", "${oc.env:HOME}", "\\${x}", "}", "\\", "\\\\", "'", '"', "null", "NULL"]
FRAGMENTS += ["true", "True", "false", "inf", "-inf", "+inf", "nan", "NaN", "1", "-1", "1.5", "1e5"]
FRAGMENTS += ["1_000", "0x10", "a", "vllm", "Qwen/Qwen3-8B", "a:b", "a=b", "a,b", "[]", "{}"]
# what YAML block scalars (`|`, `>`) give: several lines, a final newline, indentation kept
FRAGMENTS += ["line one\nline two\n", "\n", "  indented\n", "a\n\n", "\\${x}", "${oc.env:SECRET}"]
strings = st.one_of(
    st.text(),
    st.lists(
        st.one_of(st.sampled_from(SPECIAL_CHARS), st.sampled_from(FRAGMENTS), st.text(max_size=3)),
        max_size=8,
    ).map("".join),
)


def values(floats: st.SearchStrategy[float], keys: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    """Scalars (strings above, ints of any size, the given floats, bools, None) nested in lists and
    mappings with the given keys."""
    scalars = st.one_of(
        strings,
        st.integers(),
        st.integers(min_value=-(10**40), max_value=10**40),
        floats,
        st.booleans(),
        st.none(),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
        max_leaves=12,
    )
