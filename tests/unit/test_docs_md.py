"""The Markdown writers of the docs site (rlcat.docsite.md), one value at a time: link targets, text,
code spans and fences. tests/e2e/test_docs_hostile.py builds a whole site from a hostile catalog
with them and checks the pages in a browser."""

from __future__ import annotations

import pytest

from rlcat.docsite.md import breakable_code, code, esc, fence, link, safe_target


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("../platforms/rocm.md#tweak-x", "../platforms/rocm.md#tweak-x"),
        ("#rocm-7-0-2", "#rocm-7-0-2"),
        ("https://github.com/volcengine/verl/pull/1", "https://github.com/volcengine/verl/pull/1"),
        ("https://example.org/a(b)", "https://example.org/a%28b%29"),
        ("https://example.org/a b", None),
        ("javascript:alert(1)", None),
        ("JaVaScRiPt:alert(1)", None),
        (" javascript:alert(1)", None),
        ("java\tscript:alert(1)", None),
        ("java\u200bscript:alert(1)", None),
        ("java&#115;cript:alert(1)", None),
        ("javascript&colon;alert(1)", None),
        ("data:text/html,<script>alert(1)</script>", None),
        ("vbscript:msgbox(1)", None),
        ("//evil.example/x", None),
        ("\\\\evil.example/x", None),
        ("/\\evil.example/x", None),
        ("/absolute/page.md", None),
        ("http:evil.example", None),
        ("", None),
    ],
    ids=lambda v: repr(v) if isinstance(v, str) else str(v),
)
def test_safe_target(target: str, expected: str | None) -> None:
    assert safe_target(target) == expected


def test_a_refused_link_is_text() -> None:
    assert link("click", "javascript:alert(1)") == "click (javascript:alert(1))"
    assert link("click", "ok.md", 'say "hi" & <go>') == '[click](ok.md "say &quot;hi&quot; &amp; &lt;go&gt;")'


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("- item", "\\- item"),
        ("--engine sglang", "--engine sglang"),
        ("---", "\\---"),
        ("1. first", "1\\. first"),
        ("0.9.1", "0.9.1"),
        ("!!! danger", "\\!!! danger"),
        ('=== "tab"', '&#61;== "tab"'),
        ("??? note", "&#63;?? note"),
        (": definition", "&#58; definition"),
        ("~~~", "&#126;~~"),
        (":smile: a:b", "&#58;smile: a:b"),
        ("<b>&amp;", "&lt;b\\>&amp;amp;"),
        ("a\u202eb\x1bc", "a\\\\u202eb\\\\x1bc"),
    ],
    ids=repr,
)
def test_esc(value: str, expected: str) -> None:
    assert esc(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("a`b", "`` a`b ``"),
        ("#!python import os", "` #!python import os `"),
        ("a\u202e\rb", "`a\\u202e\\rb`"),
    ],
    ids=repr,
)
def test_code(value: str, expected: str) -> None:
    assert code(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("a.b_c=1", "<code>a.<wbr>b_c=<wbr>1</code>"),
        ("x=_a_ __b", "<code>x=<wbr>&#95;a_ &#95;&#95;b</code>"),
        ("[y](javascript:z) ![i](x)", "<code>[y&#93;(javascript:z) ![i&#93;(x)</code>"),
        ("*em* `c` \\", "<code>&#42;em&#42; &#96;c&#96; &#92;</code>"),
        (":smile: a|b <i>", "<code>&#58;smile: a&#124;b &lt;i&gt;</code>"),
        ("[1,2]", "<code>[1,2]</code>"),
    ],
    ids=repr,
)
def test_breakable_code(value: str, expected: str) -> None:
    assert breakable_code(value) == expected


def test_fence_outlasts_the_fences_in_the_text() -> None:
    assert fence("```\nx\u202e", "bash") == "```` bash\n```\nx\\u202e\n````\n"
