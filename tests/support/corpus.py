"""A small corpus of Chinese news written for these tests, and reprints made from it.

The articles are invented; they only need to read like news so that tokenising,
sentence splitting and the similarity thresholds meet realistic text.
"""

from __future__ import annotations

import random

from scrapy_neardup.newsworld import transforms

ARTICLES: dict[str, list[str]] = {
    "reservoir": [
        "本报讯 连日来，青川县遭遇入汛以来最强降雨过程，全县平均降雨量达到一百二十六毫米，多条河流水位持续上涨。",
        "县防汛指挥部于昨日凌晨启动三级应急响应，组织沿河低洼地带的两千三百余名群众提前转移到安置点，并为他们准备了饮用水、方便食品和药品。",
        "记者在石门水库大坝看到，泄洪闸已全部开启，技术人员每隔两小时测量一次坝体渗流数据，目前各项指标均处于正常范围之内。",
        "县水利局负责人介绍，今年以来全县共投入资金四千八百万元，对十七座小型水库进行了除险加固，新建自动雨量监测站三十二个，预警信息可在十分钟内推送到每一位村干部的手机上。",
        "气象部门预计，未来三天当地仍有中到大雨，局部地区可能出现暴雨，提醒市民尽量减少外出，远离河道、山坡等危险区域，注意防范山洪和地质灾害。",
    ],
    "library": [
        "市图书馆新馆今天上午正式对外开放，首日接待读者超过一万两千人次，不少家长一大早就带着孩子在门口排起了长队。",
        "新馆位于滨江新区文化中心北侧，总建筑面积四万三千平方米，设有少儿阅览区、古籍修复展示区、数字体验区和二十四小时自助借还区，馆藏图书达到一百八十万册。",
        "在古籍修复展示区，修复师隔着玻璃为读者演示如何清洗、补缀和装订破损的线装书，一位退休教师说，这是他第一次近距离看到老手艺如何让古书重获新生。",
        "图书馆馆长表示，新馆将延长开放时间，周一至周日每天开放十三个小时，并与全市六十个社区阅览室实现通借通还，读者在家门口就能借到新馆的图书。",
        "据了解，新馆建设历时三年，采用了雨水回收、屋顶光伏发电等绿色建筑技术，每年可节约用电约八十万千瓦时。",
    ],
    "marathon": [
        "第十届滨海国际马拉松赛昨日鸣枪开跑，来自二十八个国家和地区的三万名选手参加了全程、半程和迷你跑三个项目的比赛。",
        "男子全程冠军由肯尼亚选手基普罗蒂奇获得，他以两小时八分十五秒的成绩打破了赛会纪录，女子组冠军则被本土选手林晓雨收入囊中。",
        "比赛当天气温偏高，组委会在沿途设置了二十个补给站和十二个医疗点，并首次启用无人机巡查赛道，及时发现并救助了三名身体不适的选手。",
        "赛后，林晓雨在接受采访时说，最后五公里她几乎是咬着牙坚持下来的，家乡观众的加油声给了她很大的力量，她希望明年能够继续刷新个人最好成绩。",
        "据赛事主办方统计，本届比赛带动周边酒店入住率提高了百分之四十，餐饮和零售消费额超过一亿元，马拉松正在成为拉动城市消费的新名片。",
    ],
    "rice": [
        "金秋时节，东平镇两万亩优质水稻进入收割期，田野里联合收割机来回穿梭，一派繁忙的丰收景象。",
        "镇农业服务中心主任告诉记者，今年镇里推广了稻田养蟹和侧深施肥技术，水稻亩产比去年提高了六十多公斤，每亩稻田还能额外收获螃蟹三十公斤左右。",
        "种粮大户周建国承包了八百亩土地，他算了一笔账：扣除土地流转费、农资和机械作业成本，今年每亩纯收入有望达到九百元，比单纯种植水稻多出近一倍。",
        "为了解决晾晒难题，镇里去年新建了三座粮食烘干中心，日烘干能力达到六百吨，农民收割下来的稻谷当天就能烘干入库，避免了阴雨天气造成的霉变损失。",
        "下一步，东平镇计划注册区域大米品牌，通过电商平台把生态大米卖到全国各地，让更多农民分享产业升级带来的收益。",
    ],
    "battery": [
        "国内一家新能源企业近日宣布，其自主研发的新型固态电池完成了第三方安全测试，电芯能量密度达到每公斤四百二十瓦时。",
        "在针刺、挤压和高温等极端测试中，样品电池没有出现起火和爆炸，测试结束后仍能正常充放电，企业研发负责人称这标志着固态电池离量产又近了一步。",
        "业内专家指出，与传统液态锂电池相比，固态电池使用固体电解质，安全性更高，但目前仍面临材料成本高、界面阻抗大和规模化生产工艺不成熟等难题。",
        "该企业计划明年在华东地区建设一条年产两吉瓦时的中试生产线，首批产品将优先供应高端电动汽车和储能电站，预计三年内把电芯成本降低百分之三十。",
        "分析人士认为，随着多家企业加快布局，固态电池产业链上游的锂金属负极和硫化物电解质材料有望迎来快速增长。",
    ],
    "museum": [
        "历时两年的城南遗址考古发掘工作日前取得重要进展，考古人员在遗址东区清理出一处保存完整的宋代窑址，出土青瓷残片和窑具一千余件。",
        "考古领队介绍，这座龙窑依山而建，残长三十八米，窑床、火膛和烟道等结构清晰可辨，是本地区迄今发现的规模最大、保存最好的宋代窑址。",
        "出土的瓷片中有一批刻有花卉纹和文字的碗盘残件，专家初步判断，这里在当时可能是专门烧造外销瓷器的重要窑场，产品通过水路运往沿海港口。",
        "为了让公众了解考古成果，市博物馆将于下月推出专题展览，展出部分修复后的瓷器，并通过三维扫描和虚拟现实技术复原龙窑的烧造场景。",
        "文物部门表示，遗址所在地块将调整规划用途，建设考古遗址公园，在保护文物的同时为市民提供新的文化休闲空间。",
    ],
}

# A long site disclaimer that a site appends to every article: the longest sentence on its pages.
DISCLAIMER = (
    "特别声明：本网站转载的所有文章、图片和音视频资料仅出于传递更多信息之目的，并不代表本网站赞同其观点或对其真实性负责，"
    "如涉及作品内容、版权和其他问题，请在三十日内与本网站联系，我们将在第一时间核实并删除相关内容，谢谢您的理解与支持。"
)

# A long line a site ends every article with that is no notice (notices are not fingerprinted):
# the boilerplate guard's case.
SIGNATURE = "滨海新闻网每天为广大市民带来最及时、最全面的本地新闻和生活服务信息，欢迎大家继续关心和支持我们的成长并提出宝贵意见。"

BANNER = "【滨海日报讯】 来源：滨海新闻网 发布时间：2024-05-18 09:30"
EDITOR = "责任编辑：王晓明 校对：刘芳"
PROMOTION = "关注我们的微信公众号，回复“新闻”即可第一时间获取更多本地资讯和便民服务信息，还有机会抽取精美礼品。"


def text(name: str) -> str:
    return "\n".join(ARTICLES[name])


def full_width(value: str) -> str:
    """Half-width ASCII punctuation and digits turned full-width, as some CMSs do."""
    return value.translate(transforms.to_full_width(transforms.ASCII))


def reprint(name: str, *, cut: float = 1.0, edits: int = 2, promotion: bool = True) -> str:
    """A reprint: banner on top, a few changed characters, two paragraphs merged, the end
    cut to ``cut`` of the text, a promotion paragraph and another editor's line."""
    lines = transforms.merge_at(ARTICLES[name], 1)
    lines = transforms.spread_edits(transforms.cut_chars(lines, cut), edits)
    if promotion:
        lines = transforms.insert_line(lines, len(lines) // 2, PROMOTION)
    return "\n".join([BANNER, *lines, full_width(EDITOR)])


def quoting(name: str, quoted: str, sentences: int = 1) -> str:
    """Article ``name`` with one or two long sentences of article ``quoted`` inserted."""
    taken = sorted(ARTICLES[quoted], key=len, reverse=True)[:sentences]
    return "\n".join(transforms.insert_line(ARTICLES[name], 2, "有评论指出：“" + "”另有报道称：“".join(taken) + "”"))


def with_disclaimer(name: str) -> str:
    return text(name) + "\n" + DISCLAIMER


def random_news(count: int, seed: int = 5) -> list[str]:
    """Distinct texts of common characters, none a copy of another."""
    rng = random.Random(seed)
    chars = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面"
    return [
        "\n".join(
            "".join(rng.choice(chars) for _ in range(rng.randint(15, 40))) + "。" for _ in range(rng.randint(8, 14))
        )
        for _ in range(count)
    ]
