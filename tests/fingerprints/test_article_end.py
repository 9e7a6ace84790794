"""Where the article ends inside readability's choice: a 相关新闻 list with long leads in the
story's own container, and the posts after the first on a blog page, are cut; a story is never
cut short at a caption or at a column label above it. On a forum thread the first post is the
article, not the longest reply."""

from __future__ import annotations

from html import escape

import lxml.html
from support.real_template_pages import long_page

from scrapy_neardup.fingerprints.article_end import (
    cut_at_trailing_label,
    drop_captions,
    first_post,
    opening_post,
    without_repeated_lines,
)
from scrapy_neardup.fingerprints.extract import html_to_text

STORY = [
    "西岭县今年新建的十二座乡村水厂日前全部通水，全县二十一万农村群众喝上了和城里一样的自来水。",
    "县水利局介绍，水厂采用统一的净水工艺和水质在线监测，管网延伸到每个自然村，水价与城区同价。",
    "过去，不少村子靠打井和山泉水吃水，旱季常常断水，水质也得不到保障，群众反映强烈。",
    "为此，县里把农村供水列为民生实事，整合各方资金两亿多元，用两年时间建成了覆盖全县的供水网络。",
]
# Leads of other stories: prose as long as a story's paragraph, so pruning before scoring keeps them.
LEADS = [
    (
        "北川湿地公园迎来候鸟迁徙高峰",
        "本报讯连日来，北川湿地公园迎来候鸟迁徙高峰，白鹭、苍鹭、绿头鸭等二十余种候鸟在此停歇觅食，"
        "公园管理处增派巡护人员，设置观鸟点位，提醒游客文明观鸟、不投喂不惊扰，保护候鸟安全栖息，"
        "湿地周边村民也自发组成护鸟队，每天早晚沿岸巡查，劝阻捕鸟行为，拆除非法网具。",
    ),
    (
        "南湖片区地下管网改造开工",
        "本报讯南湖片区地下管网改造工程近日开工，将新建和改造雨污水管道三十六公里，实施雨污分流，"
        "工程分三个标段同步推进，计划年底前完工，完工后片区内涝和污水直排问题将得到根本解决，"
        "施工期间相关路段实行半幅通行，交警部门提醒市民提前规划出行路线。",
    ),
    (
        "城区新增两条夜间公交线路",
        "本报讯为方便市民夜间出行，市公交集团新开通两条夜间公交线路，运营时间为晚九点至次日凌晨一点，"
        "线路覆盖火车站、商业中心和主要居住区，票价与日间线路相同，可使用交通卡和手机扫码乘车，"
        "公交集团表示将根据客流情况适时调整发车间隔，并在站台增设夜间照明和电子站牌。",
    ),
]


def _page(container: str) -> str:
    """``long_page``'s chrome with ``container`` in the place of its article."""
    page = long_page()
    start = page.index('<div class="article-text">')
    end = page.index("</div>", start) + len("</div>")
    return page[:start] + container + page[end:]


def _related(label: str = "相关新闻") -> str:
    items = "".join(
        f'<div class="item"><a href="https://www.example.com/r/{n}.html">{escape(title)}</a><p>{escape(lead)}</p></div>'
        for n, (title, lead) in enumerate(LEADS)
    )
    return f"<h3>{label}</h3>{items}"


def _story() -> str:
    return "".join(f"<p>{p}</p>" for p in STORY)


def test_a_related_list_with_long_leads_in_the_storys_container_is_cut():
    text = html_to_text(_page(f'<div class="article-text">{_story()}{_related()}</div>'))
    assert text.split("\n")[-len(STORY) :] == STORY
    for title, lead in LEADS:
        assert title not in text and lead[:20] not in text


def test_comments_after_the_story_are_cut_in_english_too():
    comments = "".join(
        f'<div class="c"><a href="https://www.example.com/u/{n}">reader{n}</a><p>{escape(lead)}</p></div>'
        for n, (_, lead) in enumerate(LEADS)
    )
    text = html_to_text(_page(f'<div class="article-text">{_story()}<h4>Comments (3)</h4>{comments}</div>'))
    assert text.split("\n")[-len(STORY) :] == STORY


def _article(body: str) -> lxml.html.HtmlElement:
    return lxml.html.fragment_fromstring(f"<div>{body}</div>")


def test_the_story_is_not_cut_at_a_caption_a_column_label_or_a_label_without_links():
    # A caption ("图片") inside the story: not a label of what follows a story.
    caption = _article(f"<p>{STORY[0]}</p><p>图片</p><p>{STORY[1]}</p><a href='#'>甲</a><a href='#'>乙</a>")
    # A column label above the story: nothing of the story comes before it.
    column = _article(f"<h3>网友评论</h3><p>{STORY[0]}</p><p><a href='#'>{STORY[1]}</a><a href='#'>乙</a></p>")
    # A label after the story with no list of links after it: a heading of the story's own.
    no_links = _article(f"<p>{STORY[0]}</p><h3>相关报道</h3><p>{STORY[1]}</p>")
    for article in (caption, column, no_links):
        before = article.text_content()
        cut_at_trailing_label(article)
        assert article.text_content() == before


def test_a_menu_item_named_like_a_label_is_not_one():
    """A forum's board called 留言 in a bar of links after the story: an item of a menu."""
    menu = "".join(f"<a href='#{n}'><b>{name}</b></a> " for n, name in enumerate(["留言", "体育", "博客", "汽车"]))
    article = _article(f"<p>{STORY[0]}</p><p>{STORY[1]}</p><div>{menu}</div><p>{STORY[2]}</p>")
    before = article.text_content()
    cut_at_trailing_label(article)
    assert article.text_content() == before


def test_a_forums_reply_list_is_cut_at_its_label():
    replies = "".join(
        f"<li><a href='#{n}'>{title}</a>【<a href='#u{n}'>网友{n}</a>】08-11 16:0{n} 298字</li>"
        for n, (title, _) in enumerate(LEADS)
    )
    article = _article(
        f"<p>{STORY[0]}</p><p>{STORY[1]}</p><table><tr><td><b>| 回复线索：</b></td></tr></table><ul>{replies}</ul>"
    )
    cut_at_trailing_label(article)
    assert article.text_content() == STORY[0] + STORY[1]


def test_a_label_is_a_short_element_not_a_sentence_that_opens_with_its_words():
    links = "<a href='#'>甲</a><a href='#'>乙</a>"
    # A sentence that opens with the label's words, over 40 characters: part of the story.
    sentence = _article(f"<p>{STORY[0]}</p><p>相关新闻{STORY[2]}</p>{links}")
    before = sentence.text_content()
    cut_at_trailing_label(sentence)
    assert sentence.text_content() == before
    # The label in an inline element two levels down, as short as a label gets: cut there.
    nested = _article(f"<p>{STORY[0]}</p><p>{STORY[1]}</p><div><p><span>评论</span></p></div>{links}")
    cut_at_trailing_label(nested)
    assert nested.text_content() == STORY[0] + STORY[1]


def test_a_comment_box_after_the_story_goes():
    article = _article(f"<p>{STORY[0]}</p><p>{STORY[1]}</p><div>相关推荐</div><div>评论（191）</div><p>我要跟帖</p>")
    cut_at_trailing_label(article)
    assert article.text_content() == STORY[0] + STORY[1]


def test_text_after_the_label_in_tails_goes_too():
    article = _article(
        f"<div><p>{STORY[0]}</p><p>{STORY[1]}</p><b>相关新闻</b>其他的稿子<a href='#'>甲</a>尾巴<a href='#'>乙</a>"
        "</div>后面的字"
    )
    cut_at_trailing_label(article)
    assert article.text_content() == STORY[0] + STORY[1]


BLOG = [
    "江边散步 (图)",
    "2005-03-21 01:20:44",
    "傍晚沿着江边走了一圈，" * 8,
    "[打印]",
    "剪了短发",
    "2005-03-18 01:58:01",
    "头发留得很长了，每天花很多时间梳洗，" * 5,
    "[打印]",
    "收音机",
    "2005-03-17 21:08:00",
    "十多年前来的时候没有中文报纸，" * 4,
]


def test_a_blog_page_of_several_posts_gives_the_first():
    assert first_post("\n".join(BLOG)) == "\n".join(BLOG[:4])


def test_a_story_with_one_stamp_or_a_short_first_post_is_left_whole():
    story = "\n".join(["标题", "2024-03-05 08:30", *STORY, "2024-03-05 09:00 更新"])
    assert first_post(story) == story  # one line that is only a stamp
    short = "\n".join(["甲", "2005-03-21 01:20:44", "短。", "乙", "2005-03-18 01:58:01", "长" * 200])
    assert first_post(short) == short  # a first "post" this short is a heading, not a post


def test_captions_and_credits_go_unless_they_are_most_of_the_text():
    figure = (
        "<figure><img src='a.jpg'><figcaption>图为新建的水厂。 Credit: 本报记者</figcaption></figure>"
        "<p class='photo-credit'>摄影：王丽</p>"
    )
    article = _article(f"<p>{STORY[0]}</p>{figure}<p>{STORY[1]}</p>")
    drop_captions(article)
    assert article.text_content() == STORY[0] + STORY[1]
    # A template that gives every paragraph a caption's class: they are the story.
    marked = _article("".join(f"<p class='wp-caption-text'>{p}</p>" for p in STORY) + "<figcaption>图</figcaption>")
    drop_captions(marked)
    assert marked.text_content() == "".join(STORY) + "图"


def test_a_captions_class_is_read_in_any_case():
    """The class is matched as the rule reads it, in any case (İ and ı are an i to it too),
    and only as a word: a class that merely holds the letters stays."""
    classes = ["CAPTION", "Photo_Credits", "credİt", "image-credıt", "captioned", "discredit"]
    boxes = "".join(f"<div class='{name}'>{name}说明</div>" for name in classes)
    article = _article(f"<p>{STORY[0]}</p>{boxes}<p>{STORY[1]}</p>")
    drop_captions(article)
    assert article.text_content() == STORY[0] + "captioned说明discredit说明" + STORY[1]


def test_a_line_repeated_just_after_itself_goes_and_one_repeated_further_on_stays():
    caption = "In this photo, the new water plant of Xiling county opens on Monday."
    text = "\n".join([STORY[0], caption, caption, "Photo: AP", caption, STORY[1]])
    assert without_repeated_lines(text) == "\n".join([STORY[0], caption, "Photo: AP", STORY[1]])
    question = "What made you start cooking for others?"
    interview = "\n".join([question, STORY[0], STORY[1], STORY[2], question, STORY[3]])
    assert without_repeated_lines(interview) == interview
    rules = "\n".join(["_" * 40, STORY[0], "_" * 40])
    assert without_repeated_lines(rules) == rules


# A reader's reply, longer than the story posted first.
REPLY = (
    "说实话我看了好几遍，觉得这事没有那么简单，我们村前年也通了自来水，刚开始大家都说好，"
    "可是用了一段时间就发现水压不够，一到夏天用水高峰，楼上的住户基本上就没水了，"
    "后来村里又凑钱装了加压泵才算解决，所以我觉得光建水厂还不够，管网和后期维护也要跟上，"
    "不然老百姓花了钱还是吃不上放心水，希望县里能把后期管护的钱也算进去，别建完了就不管了，"
    "另外水价虽然说和城区一样，但是农村收入低，能不能对困难户有点照顾，这些都是实实在在的问题。"
)


def _post(number: int, user: str, stamp: str, message: str) -> str:
    """A post as a Discuz-style board marks it up: its id numbered, its author, its message, its time."""
    return (
        f'<div class="post" id="post_{number}"><div class="author"><a href="https://bbs.example.com/u/{number}">'
        f'{user}</a></div><div class="message">{message}</div><div class="stamp">发表于 {stamp}</div></div>'
    )


def _thread(first: str, first_stamp: str = "2024-03-05 08:30:12") -> str:
    posts = [
        _post(1, "西岭老乡", first_stamp, first),
        _post(2, "路过的", "2024-03-05 09:02:47", "<p>好事，支持！</p>"),
        _post(3, "水电工老李", "2024-03-05 10:15:03", f"<p>{REPLY}</p>"),
        _post(4, "网友甲", "2024-03-05 11:40:30", "<p>顶一下，希望我们县也早点通上。</p>"),
    ]
    return _page(f'<div class="article-text"><div id="postlist">{"".join(posts)}</div></div>')


def test_a_forum_thread_gives_its_first_post_not_a_longer_reply():
    text = html_to_text(_thread(_story()))
    assert "\n".join(STORY) in text
    assert REPLY[:20] not in text and "好事，支持" not in text


def test_the_first_post_is_found_where_readabilitys_choice_stands_in_its_reply():
    root = lxml.html.document_fromstring(_thread(_story()))
    posts = root.xpath('//div[@class="post"]')
    messages = root.xpath('//div[@class="message"]')
    assert opening_post(messages[2]) == (messages[0], posts[1:])  # readability's choice in a reply
    assert opening_post(posts[0]) == (posts[0], posts[1:])  # the first post: not the replies beside it
    assert opening_post(posts[0].getparent()) == (posts[0], posts[1:])  # the whole thread


def test_blocks_of_one_shape_without_time_stamps_or_a_short_first_post_are_left_alone():
    sections = lxml.html.document_fromstring(
        "<html><body>" + "".join(f'<div class="part"><p>{p}</p></div>' for p in STORY) + "</body></html>"
    )
    third = sections.xpath('//div[@class="part"]')[2]
    assert opening_post(third) == (third, [])  # parts of one story: no post carries a time stamp
    question = lxml.html.document_fromstring(_thread("<p>请问西岭县哪里能办水费缴费卡？</p>"))
    reply = question.xpath('//div[@class="message"]')[2]
    assert opening_post(reply) == (reply, [])  # a first post this short is a question, not an article
