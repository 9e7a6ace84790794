"""The small world: three sites of 江城, seven stories, reprints placed by hand, and bad pages.

Where the generated world (``build_world``) draws who reprints what from a seed, this one is
written out, so that tests know exactly which page is a reprint of which and which comes
first. Three sites with different templates carry seven stories (text written for the tests);
some are reprinted the way sites reprint (banner on top, editor line below, a few changed
characters, half/full-width punctuation, paragraphs merged, a promotion inserted, the end
cut off: see ``transforms.py``). Site A ends every article with the same long disclaimer, and
one site-C article quotes a long sentence of a site-A story: neither is a reprint. A few bad
pages (broken markup, binary, empty, 50 MB, GBK-encoded) complete it.
"""

from __future__ import annotations

import random
from functools import lru_cache

from . import transforms
from .stories import Story
from .world import World

_TEXTS: dict[str, tuple[str, list[str]]] = {
    "metro": (
        "江城地铁5号线一期开通运营",
        [
            "5月18日上午9时，江城地铁5号线一期工程正式开通运营，线路全长28.6公里，共设车站22座，串联起城东新区、老城商圈和南湖科教园区三大片区。首班列车从城东客运站发出，不少市民一早就来到站台，体验这条期待已久的新线路。",
            "据江城轨道交通集团介绍，5号线采用6节编组A型列车，最高运行速度每小时80公里，高峰时段行车间隔压缩至4分30秒。全线设有8座换乘车站，可与既有的1号线、2号线和3号线实现站内换乘，乘客从城东新区到南湖科教园区的通行时间由原来的70分钟缩短到40分钟左右。",
            "为方便老年人和残障乘客出行，各车站均设置了无障碍电梯、盲道和爱心候车区，部分车站还试点推出了“一键呼叫”服务，乘客按下站台立柱上的按钮，就能在两分钟内得到工作人员的协助。",
            "家住城东新区的退休教师刘桂芳告诉记者，她每周要去老城区看望外孙，过去要倒两趟公交，路上将近一个半小时，“现在坐地铁直达，不用再起大早，也不用在路边等车了”。",
            "5号线建设历时五年，施工期间先后穿越江城老城区密集建筑群和两条河道，建设单位采用盾构法施工并实时监测周边建筑沉降，确保了沿线古建筑和居民楼的安全。",
            "轨道交通集团有关负责人表示，开通初期将加强客流监测，根据早晚高峰客流变化动态调整运行图，同时在换乘量较大的车站增派引导人员，力争让市民出行更加顺畅便捷。",
        ],
    ),
    "canteen": (
        "和平社区老年食堂开张 七旬老人十元吃午餐",
        [
            "在江城市青石街道和平社区，一家面向老年人的社区食堂近日正式开张，每天中午供应两荤两素一汤的套餐，年满七十周岁的社区居民凭老年卡就餐只需支付十元，八十周岁以上的老人还可以再享受五折优惠。",
            "开业第一天，食堂里坐满了前来就餐的老人。今年七十六岁的周大爷一边吃着红烧鱼块一边说，老伴去年住院后，自己一个人做饭总是凑合，“现在下楼走几步就能吃上热乎饭，菜做得软烂，很适合我们这些牙口不好的人”。",
            "社区党委书记陈玉兰介绍了食堂的运营方式。食堂由街道提供场地，引入专业餐饮企业运营，菜单每周更新一次，并请营养师根据老年人的饮食特点控制盐和油的用量，对患有糖尿病等慢性病的老人还可以提供低糖餐。",
            "针对行动不便的高龄和独居老人，社区组织了一支由二十多名志愿者组成的送餐队伍，每天上午十一点前统计订餐需求，中午准时把饭菜送到老人家中，送餐时顺便了解老人的身体状况和生活需要。",
            "据了解，青石街道今年计划再建成三家社区老年食堂，实现辖区内老年助餐服务全覆盖，让更多老年人在家门口就能享受到实惠、安全、可口的一日三餐。",
            "有居民建议，食堂可以在周末增加早餐供应，并允许子女陪同老人一起用餐，社区表示将认真研究这些意见，在运营稳定后逐步扩大服务范围。",
        ],
    ),
    "flood": (
        "江城发布暴雨橙色预警 启动防汛三级应急响应",
        [
            "受强对流天气影响，江城市气象台于6月21日下午发布暴雨橙色预警信号，预计未来12小时内全市大部分地区将出现大暴雨，局部地区累计降雨量可达150毫米以上，并伴有雷电和短时大风。",
            "预警发布后，市防汛抗旱指挥部立即启动防汛三级应急响应，要求各区对地下通道、低洼路段、在建工地和老旧小区等重点部位开展拉网式排查，提前转移危险区域群众，并在易积水路段安排专人值守。",
            "市排水管理处调集了40台大功率移动泵车和600余名抢险人员，分别布置在火车站下穿隧道、解放路立交桥和滨江大道等历年易涝点。截至当晚10时，主城区未出现长时间积水，城市交通总体运行正常。",
            "在南湖区一处老旧小区，社区工作人员和志愿者挨家挨户敲门提醒，协助行动不便的老人转移到社区活动中心临时安置点，安置点为群众准备了饮用水、食品、毛毯和常用药品。",
            "气象部门提醒，此次降雨过程将持续到23日，市民应尽量减少外出，不要在大树、广告牌和临时搭建物下避雨，驾车经过积水路段时要减速慢行，遇到水深不明的路段切勿贸然通过。",
            "防汛指挥部同时提醒，各中小学和幼儿园要密切关注天气变化，必要时可以调整上学和放学时间，确保师生安全。",
        ],
    ),
    "oranges": (
        "白果村脐橙搭上直播快车",
        [
            "眼下正是秋季脐橙上市的季节，在江城市所辖的青山县白果村，村党支部书记王建国和几名返乡青年一起，每天晚上七点准时在果园里开启直播，向全国各地的网友推介自家种植的脐橙。",
            "直播镜头前，王建国熟练地剥开一个刚摘下的脐橙，果肉饱满、汁水充足。“我们这里昼夜温差大，土壤富含微量元素，种出来的脐橙甜度高、口感好。”他说，今年村里的脐橙种植面积达到了三千二百亩，预计总产量超过五百万斤。",
            "过去，白果村的脐橙主要依靠外地客商上门收购，价格常常被压得很低，遇到丰收年份还会出现滞销。两年前，村里成立了电商服务站，请来专业团队为村民培训拍摄、剪辑和直播带货技能，还统一设计了包装和品牌标识。",
            "如今，白果村已经培养出二十多名“农民主播”，脐橙通过网络销往二十多个省份，每斤售价比过去提高了将近一元钱。返乡创业的大学生李婷说，她负责村里直播间的运营，最多的时候一晚上就能卖出八千多单。",
            "为了保证发货速度，县里的快递企业在村口设立了收发点，每天下午定时上门揽收，消费者下单后两到三天就能收到新鲜的脐橙。",
            "青山县农业农村局负责人表示，下一步将继续完善冷链物流设施，扶持更多农产品走上电商平台，让网络直播成为农民增收致富的新渠道。",
        ],
    ),
    "robots": (
        "青少年机器人创新大赛落幕 垃圾分类机器人夺冠",
        [
            "第十二届江城市青少年机器人创新大赛日前在市科技馆落下帷幕，来自全市六十多所中小学的三百余支队伍参加了比赛，经过两天的激烈角逐，江城第一中学代表队凭借自主设计的垃圾分类机器人获得高中组一等奖。",
            "这台机器人由四名高二学生历时半年设计制作，它能够通过摄像头识别投放物品的外观特征，自动判断物品属于可回收物、厨余垃圾、有害垃圾还是其他垃圾，并通过机械臂将物品分拣到对应的垃圾桶里，现场演示的识别准确率达到了百分之九十以上。",
            "队长赵子涵介绍，团队最初的方案使用超声波传感器，但识别效果不理想，后来在指导老师的帮助下改用图像识别算法，利用课余时间拍摄了上万张生活垃圾的照片用于训练模型，反复调试了几十个版本才最终定型。",
            "本届大赛设置了机器人创意设计、编程挑战和工程竞技三大类项目，初中组和小学组的参赛作品同样亮点纷呈，既有帮助老人测量血压的陪护机器人，也有能够自动浇花的智能花盆。",
            "大赛评委、江城大学机械工程学院教授孙立平说，今年参赛作品更加贴近日常生活，不少作品已经具备了一定的实用价值，反映出中小学科技教育的水平在不断提高。",
            "据主办方介绍，获奖作品将在市科技馆展出一个月，市民可以免费参观，部分优秀队伍还将代表江城参加明年举行的全省青少年科技创新大赛。",
        ],
    ),
    "oldstreet": (
        "丁字街历史文化街区修缮后重新开放",
        [
            "经过一年多的保护性修缮，位于江城老城区的丁字街历史文化街区于本周末重新对外开放。整条街区保留了明清时期的街巷格局，修缮后的青石板路、木质门窗和马头墙重现了老街昔日的风貌。",
            "据了解，这次改造坚持“修旧如旧”的原则，施工前设计团队对街区内的一百三十多栋老建筑逐一进行了测绘和建档，能够保留的梁柱、砖瓦和雕花构件尽量原样保留，确实需要更换的部分也采用传统工艺和材料进行复原。",
            "在改造过程中，街区同步完成了雨污分流、电力线路入地和消防设施升级等基础工程，解决了过去居民反映强烈的下雨积水、电线杂乱和消防通道狭窄等问题，原有住户大部分选择了回迁。",
            "开街当天，修缮一新的老字号糕点铺、手工竹编作坊和传统茶馆吸引了大批市民和游客。在老街住了六十多年的吴奶奶说，街还是原来的街，邻居还是原来的邻居，但是住得比以前舒服多了。",
            "街区管理方表示，今后将引入非遗展示、传统手工艺体验和特色民宿等业态，同时严格控制商业比例，避免老街过度商业化，让历史文化街区既留得住乡愁，也充满生活气息。",
        ],
    ),
    "eldercare": (
        "江城出台方案加快发展社区居家养老服务",
        [
            "江城市民政局日前印发《关于加快发展社区居家养老服务的实施方案》，提出到明年年底，全市城市社区养老服务设施覆盖率达到百分之百，农村地区养老服务设施覆盖率达到百分之八十以上。",
            "方案明确，各区要以街道为单位建设综合性养老服务中心，为老年人提供日间照料、康复护理、文化娱乐和精神慰藉等服务，并鼓励社会力量通过公建民营、政府购买服务等方式参与运营。",
            # Quotes the longest sentence of the canteen story: shared, yet not a reprint.
            "在老年助餐方面，方案总结推广了部分街道的经验做法。食堂由街道提供场地，引入专业餐饮企业运营，菜单每周更新一次，并请营养师根据老年人的饮食特点控制盐和油的用量，对患有糖尿病等慢性病的老人还可以提供低糖餐。这是青石街道和平社区的做法，方案要求各区在今年内至少建成五个类似的助餐点。",
            "针对失能和半失能老人，方案提出建立家庭养老床位制度，由专业机构对老人居住环境进行适老化改造，安装紧急呼叫、跌倒报警等智能设备，并定期派出护理人员上门提供服务，相关费用按照规定纳入长期护理保险支付范围。",
            "民政局相关负责人表示，方案还将加强养老护理人才队伍建设，对取得职业技能等级证书并在养老机构连续工作满两年的护理人员给予一次性入职奖励，逐步提高护理人员的薪酬待遇和社会地位。",
        ],
    ),
}


STORIES = {name: Story(name, title, tuple(paragraphs)) for name, (title, paragraphs) in _TEXTS.items()}

DISCLAIMER = (
    "本网站所刊登的各种新闻、信息和各种专题专栏资料，均为江城日报社版权所有，未经协议授权，"
    "禁止下载使用或以任何方式转载、摘编、复制或建立镜像，违者本社将依法追究其法律责任。"
)
PROMOTION = "【推广】下载云端新闻客户端，每天第一时间推送本地权威资讯，新用户注册即可领取十元话费券。"

# -- reprint edits -------------------------------------------------------------------------


def banner(paragraphs: list[str], source: str, title: str, editor: str) -> list[str]:
    top = f"本文转载自{source}，原标题：《{title}》，版权归原作者所有，如有侵权请联系删除。"
    return [top, *paragraphs, f"（责任编辑：{editor}）"]


_DIGITS_TO_FULL = transforms.to_full_width(transforms.DIGITS)
_MARKS_TO_HALF = transforms.to_half_width(',:;"()')


def _story(name: str) -> tuple[str, list[str]]:
    return STORIES[name].title, list(STORIES[name].paragraphs)


# -- page templates ------------------------------------------------------------------------

_SIDE_TITLES = [
    "市政府召开常务会议研究部署下半年重点工作",
    "江城图书馆新馆将于明年春节前投入使用",
    "本周末全市最高气温将突破三十五度",
    "滨江公园夜间灯光秀延长至十一月底",
    "多条公交线路因道路施工临时调整走向",
    "江城大学新增三个本科专业",
]


def page_a(title: str, paragraphs: list[str]) -> str:
    body = "".join(f"<p>{p}</p>\n" for p in [*paragraphs, DISCLAIMER])
    side = "".join(f'<li><a href="/a/list.html#{i}">{t}</a></li>' for i, t in enumerate(_SIDE_TITLES))
    return f"""<!DOCTYPE html>
<html lang="zh-CN"><head><meta charset="utf-8"><title>{title} - 江城日报</title>
<link rel="stylesheet" href="/static/a.css"><script>window.dataLayer=[];function track(){{}}</script></head>
<body>
<div id="top"><a href="/a/">首页</a> | <a href="/a/list.html">要闻</a> | <a href="/a/list.html">民生</a> | <a href="/a/list.html">经济</a> | <a href="/a/list.html">教育</a></div>
<div class="main">
<article><h1>{title}</h1>
<div class="meta">2024-06-22 08:30 来源：江城日报 记者 张晓明</div>
<div class="content">
{body}</div></article>
<aside><h3>热门排行</h3><ul>{side}</ul></aside>
</div>
<div id="footer">江城日报社 主办 | 联系我们 | 网站地图 | 广告服务<br>新闻热线：0000-12345678</div>
</body></html>"""


def page_b(title: str, paragraphs: list[str]) -> str:
    body = "".join(f'<p style="text-indent:2em">{p}</p>' for p in paragraphs)
    side = "".join(f"<li><a href='/b/'>{t}</a></li>" for t in reversed(_SIDE_TITLES))
    comments = "".join(
        f'<div class="cmt"><span class="user">网友{n}</span><span class="txt">{c}</span></div>'
        for n, c in [(1024, "支持！"), (2048, "希望越办越好"), (4096, "点赞")]
    )
    return f"""<html><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8">
<title>{title}_南方快讯</title></head><body>
<div class="wrap"><div class="hd"><div class="logo">南方快讯</div><div class="nav"><a href="/b/">首页</a><a href="/b/">国内</a><a href="/b/">社会</a><a href="/b/">财经</a></div></div>
<div class="l"><div class="title"><h2>{title}</h2></div>
<div class="info">2024年06月22日 10:12 南方快讯</div>
<div id="artibody">{body}</div>
<div class="share">分享到：微信 微博</div>
<div class="comments"><h3>网友评论</h3>{comments}</div></div>
<div class="r"><div class="box"><h4>24小时热点</h4><ul>{side}</ul></div></div>
</div><div class="ft">Copyright 南方快讯 All Rights Reserved</div></body></html>"""


def page_c(title: str, paragraphs: list[str]) -> str:
    body = "<br><br>\n".join("&nbsp;&nbsp;&nbsp;&nbsp;" + p for p in paragraphs)
    side = "<br>".join(f"<a href='/c/'>· {t}</a>" for t in _SIDE_TITLES[:4])
    return f"""<html><head><meta charset="utf-8"><title>云端新闻--{title}</title></head>
<body bgcolor="#ffffff"><center>
<table width="960" border="0" cellpadding="0" cellspacing="0">
<tr><td colspan="2" class="nav"><a href="/c/">首页</a> <a href="/c/">本地</a> <a href="/c/">热点</a> <a href="/c/">视频</a></td></tr>
<tr><td width="720" valign="top"><font size="4"><b>{title}</b></font><br>
<font color="#999999">发布时间：2024-06-22 来源：网络</font><br><br>
<div id="zoom">{body}</div></td>
<td width="240" valign="top" class="side"><b>推荐阅读</b><br>{side}</td></tr>
</table>
<p class="copyright">云端新闻网 版权所有 未经授权禁止转载</p></center></body></html>"""


def broken_page(title: str, paragraphs: list[str]) -> str:
    """Unclosed tags, stray closing tags, bad attributes, no </body>, an unterminated comment."""
    body = "".join(f'<p class=x">{p}<span <b>' if i % 2 else f"<p>{p}</div></td>" for i, p in enumerate(paragraphs))
    return (
        f"<html><head><title>{title}</title><meta charset=utf-8></head><body><div id=content>"
        f"<table><tr><td><font>{body}</td></b></i><div class=footer>版权所有<!-- unterminated"
    )


# -- the world -------------------------------------------------------------------------------


# -- the world -------------------------------------------------------------------------------


def _pages() -> tuple[dict[str, str | bytes], dict[str, str]]:
    pages: dict[str, str | bytes] = {}
    types: dict[str, str] = {}

    def add(path: str, content: str) -> None:
        pages[path] = content

    for name in ("metro", "canteen", "flood", "oranges", "robots"):
        title, paragraphs = _story(name)
        add(f"/a/{name}.html", page_a(title, paragraphs))

    title, paragraphs = _story("metro")
    add(
        "/b/metro.html",
        page_b(
            "地铁5号线今天开通 城东到南湖只要40分钟",
            banner(
                transforms.replace_first(paragraphs, [("市民", "居民"), ("首班", "第一班"), ("便捷", "方便")]),
                "江城日报",
                title,
                "李明",
            ),
        ),
    )
    title, paragraphs = _story("canteen")
    add(
        "/b/canteen.html",
        page_b(
            title,
            banner(
                transforms.convert_width(transforms.convert_width(paragraphs, _DIGITS_TO_FULL), _MARKS_TO_HALF),
                "江城日报",
                title,
                "王芳",
            ),
        ),
    )
    title, paragraphs = _story("oldstreet")
    add("/b/oldstreet.html", page_b(title, paragraphs))

    title, paragraphs = _story("metro")
    add("/c/metro.html", page_c(title, transforms.cut_at_stop(paragraphs, 0.75)))
    title, paragraphs = _story("flood")
    edited = transforms.merge_pairs(transforms.replace_first(paragraphs, [("拉网式", "地毯式")]))
    add("/c/flood.html", page_c("暴雨橙色预警！江城启动三级响应", [*edited[:2], PROMOTION, *edited[2:]]))
    title, paragraphs = _story("eldercare")
    add("/c/eldercare.html", page_c(title, paragraphs))

    # Bad pages.
    title, paragraphs = _story("robots")
    add("/bad/broken.html", broken_page(title, paragraphs))  # a reprint, in broken markup
    add("/bad/empty.html", '<html><body><div class="nav"><a href="/">首页</a></div></body></html>')
    rng = random.Random(7)
    binary = b"\x89PNG\r\n\x1a\n" + rng.randbytes(20_000)
    pages["/bad/binary.html"] = binary  # a server that lies about its type
    pages["/bad/binary.png"] = binary
    types["/bad/binary.png"] = "image/png"
    title, paragraphs = _story("oldstreet")
    gbk = page_b(title, banner(paragraphs, "南方快讯", title, "陈静")).replace("charset=utf-8", "charset=gbk")
    pages["/bad/gbk.html"] = gbk.encode("gbk")  # charset only in <meta>

    # A portal posts excerpts before the source sites: the first paragraphs under a source line.
    for path, (name, kept) in EXCERPT_OF.items():
        title, paragraphs = _story(name)
        add(path, page_b(title, [f"来源：江城日报 {title}（摘编）", *paragraphs[:kept]]))

    links = "".join(f'<a href="{path}">{path}</a><br>\n' for path in ARTICLES)
    add("/index.html", f"<html><body>{links}</body></html>")
    pages["/bad/huge.html"] = _huge_page()
    types["/bad/huge.html"] = "text/html; charset=utf-8"
    return pages, types


# A portal's excerpts (not linked from the index): path -> (story, paragraphs kept), about
# two thirds of the article, which site A publishes whole.
EXCERPT_OF: dict[str, tuple[str, int]] = {"/p/oranges.html": ("oranges", 4), "/p/robots.html": ("robots", 4)}

# The articles in their link order (originals first, then reprints) and the story each tells.
STORY_OF: dict[str, str] = {
    "/a/metro.html": "metro",
    "/a/canteen.html": "canteen",
    "/a/flood.html": "flood",
    "/a/oranges.html": "oranges",
    "/a/robots.html": "robots",
    "/b/metro.html": "metro",
    "/b/canteen.html": "canteen",
    "/b/oldstreet.html": "oldstreet",
    "/c/metro.html": "metro",
    "/c/flood.html": "flood",
    "/c/eldercare.html": "eldercare",
    "/bad/broken.html": "robots",
    "/bad/gbk.html": "oldstreet",
}


ARTICLES = list(STORY_OF)


def _first_copies() -> dict[str, str]:
    first: dict[str, str] = {}
    for path, story in STORY_OF.items():
        first.setdefault(story, path)
    return {path: first[story] for path, story in STORY_OF.items() if first[story] != path}


# Path -> the path of the first copy of its story, for the pages that are reprints.
REPRINT_OF = _first_copies()
HUGE_BYTES = 50 * 1024 * 1024


def _huge_page() -> bytes:
    """A 50 MB page: what a size cap is for."""
    paragraph = ("<p>" + "超大页面的重复段落内容，用来测试页面大小上限。" * 20 + "</p>\n").encode("utf-8")
    head = b'<html><head><meta charset="utf-8"></head><body>'
    return head + paragraph * (HUGE_BYTES // len(paragraph) + 1) + b"</body></html>"


@lru_cache(maxsize=1)
def small_world() -> World:
    """The small world, built once: every page, and which story each article page tells."""
    pages, types = _pages()
    return World(
        pages=pages,
        start_paths=["/index.html"],
        story_of=dict(STORY_OF),
        stories=dict(STORIES),
        site_of={path: path.split("/")[1] for path in ARTICLES},
        types=types,
    )
