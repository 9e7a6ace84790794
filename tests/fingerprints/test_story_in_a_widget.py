"""A story whose template puts it in a box with a class readability dislikes ("widget"),
inside the block readability chooses: its clean-up must not take the story out of its own
choice (the page then gave its whole visible text, menus and all)."""

from __future__ import annotations

from html import escape

import pytest
from support.python_rules import in_python

from scrapy_neardup.fingerprints import readable
from scrapy_neardup.fingerprints.extract import html_to_text

STORY = [
    "东岭高铁站周边道路提升工程日前完工，新建和改造道路九条，总长十四公里，新增停车位八百个。",
    "工程同步完善了公交站台、慢行系统和绿化景观，高铁站到城区的通行时间由四十分钟缩短到二十分钟。",
]
COMMENTS = [
    "I relate to this so much, thank you for writing it, it helped me plan my week and my budget.",
    "Great post, as always, and I shared it with my team, my family, and two friends who run shops.",
]


def page() -> str:
    paragraphs = "".join(f"<p>{escape(p)}</p>" for p in STORY)
    comments = "".join(f'<li class="comment"><div class="comment-text"><p>{escape(c)}</p></div></li>' for c in COMMENTS)
    return (
        "<html><head><title>东岭高铁站周边道路完成提升</title></head><body>"
        '<div class="menu"><a href="/">Home</a> <a href="/blog">Blog</a> <a href="/shop">Shop</a></div>'
        "<h1>东岭高铁站周边道路完成提升</h1>"
        '<div class="elementor-widget elementor-widget-post-content">'
        f'<div class="elementor-widget-container">{paragraphs}</div></div>'
        f'<div id="comments"><ol class="comment-list">{comments}</ol></div>'
        '<div class="footer-menu"><a href="/privacy">Privacy</a> <a href="/terms">Terms</a></div>'
        "</body></html>"
    )


@pytest.mark.parametrize("python_rules", [False, True], ids=["c-walks", "python"])
def test_the_story_in_a_widget_box_is_kept(python_rules):
    text = in_python(html_to_text, page()) if python_rules else html_to_text(page())
    assert text.split("\n")[-2:] == STORY
    assert "Home" not in text and "Privacy" not in text


def test_without_the_rule_the_clean_up_empties_the_choice(monkeypatch):
    """The page is the case the rule is for: with readability's clean-up as it was, the
    story is taken out and the page's whole text comes back."""
    monkeypatch.setattr(readable, "_NEARLY_ALL", 2.0)
    assert "Home" in html_to_text(page())
