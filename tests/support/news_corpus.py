"""Eight news stories written for the store tests, with the reprints a site makes of them and
short stories that share only a long site line and disclaimer (a hard negative and the
boilerplate guard)."""

# Distinct stories on distinct topics.: distinct stories on distinct topics.
ARTICLES = {
    "rail": (
        "本报北京三月十二日电 记者从国家铁路集团获悉，今年春运期间全国铁路累计发送旅客超过三亿人次，"
        "同比增长百分之八点六，创下历史同期新高。\n"
        "据介绍，为应对客流高峰，铁路部门在节前节后共加开旅客列车一万二千余列，"
        "其中夜间高铁和跨线动车组的开行数量比去年明显增加。"
        "多个车站延长了售票窗口的服务时间，并在候车室增设了重点旅客服务区。\n"
        "铁路部门还表示，春运期间电子客票的使用比例进一步提高，刷身份证进站已覆盖全部高铁车站，"
        "旅客平均进站时间缩短到十秒以内。下一步将继续优化列车运行图，提升中西部地区的运输能力。"
    ),
    "rice": (
        "新华社长沙九月二十日电 湖南省农业农村厅二十日发布消息，今年全省早稻收获面积稳中有增，"
        "平均亩产比上年提高十二公斤，优质稻比例达到百分之七十以上。\n"
        "当地农技人员介绍，今年入夏后部分地区遭遇持续高温，各地及时组织灌溉和病虫害统防统治，"
        "把损失降到了最低。一些种粮大户采用无人机飞防和机械化烘干，每亩节约成本近百元。\n"
        "省里同时启动了最低收购价执行预案，在主产县设立收购网点四百多个，确保农民种粮有钱赚，"
        "晚稻生产也已全面进入田间管理的关键阶段。"
    ),
    "museum": (
        "记者日前从省博物馆了解到，经过两年多的改造提升，博物馆新馆将于下月正式对公众开放，"
        "新增展厅面积六千平方米，首批展出文物超过三千件。\n"
        "新馆的常设展览以本地区的历史发展为主线，分为远古文明、青铜时代、丝路往来和近代风云四个部分。"
        "其中一件出土于汉代墓葬的鎏金铜灯，是首次与观众见面。\n"
        "馆方表示，开馆后将实行预约参观，每天限流一万人次，并推出面向中小学生的研学课程。"
        "观众还可以通过手机扫描展品旁的二维码，收听专家录制的讲解。"
    ),
    "flood": (
        "受连续强降雨影响，本市多条河流水位快速上涨，市防汛抗旱指挥部昨日将防汛应急响应提升至三级。\n"
        "指挥部要求各区县加强值班值守，对城市低洼地段、地下空间和在建工地开展拉网式排查，"
        "必要时果断转移受威胁群众。目前全市已预置抢险队伍两百余支，储备沙袋和编织袋五十多万条。\n"
        "气象部门预计，未来三天本市仍有中到大雨，局部地区可能出现暴雨，提醒市民尽量减少外出，"
        "驾车时不要强行通过积水路段，遇到险情及时拨打救援电话。"
    ),
    "chip": (
        "一家本土半导体企业近日宣布，其自主研发的车规级控制芯片已通过权威机构的可靠性认证，"
        "将于明年第一季度在多家整车厂的新车型上批量装车。\n"
        "公司负责人介绍，这款芯片从立项到量产历时四年，研发团队攻克了高温环境下长期稳定运行等难题，"
        "关键性能指标达到国际同类产品水平，成本则降低了约三成。\n"
        "业内人士认为，汽车电动化和智能化带动芯片需求持续增长，国产芯片在供应稳定和本地服务方面具有优势，"
        "但在高端产品和生态建设上仍需时间积累。"
    ),
    "marathon": (
        "第十届滨江国际马拉松赛昨天鸣枪开跑，来自二十多个国家和地区的三万名选手参加了全程、半程和健康跑三个项目。\n"
        "男子全程冠军被一名肯尼亚选手以两小时八分的成绩获得，女子全程冠军由一名本土选手夺得，"
        "她在最后五公里连续超越两名对手，打破了赛会纪录。\n"
        "组委会在沿途设置了四十个补给站和十二个医疗点，并首次启用智能跟踪系统，"
        "观众通过小程序即可实时查看选手的位置。赛事期间，沿线交通实行分段管制，整体运行平稳有序。"
    ),
    "library": (
        "城东社区图书馆改建完成后重新开放，借阅区、自习区和儿童阅读区分开设置，座位数量从六十个增加到两百个。\n"
        "图书馆引入了自助借还设备，读者刷卡即可完成借书和还书，晚上的开放时间也延长到九点。"
        "馆内还开辟了一间老年人电子阅览室，志愿者每周两次上门教老人使用智能手机。\n"
        "社区工作人员说，改建资金主要来自街道的民生项目，今后将与市图书馆实现通借通还，"
        "让居民在家门口就能借到全市的藏书。"
    ),
    "port": (
        "海关总署最新数据显示，今年前十个月我国港口集装箱吞吐量保持增长，"
        "沿海主要港口完成外贸货物吞吐量同比增长百分之五点二。\n"
        "分析人士指出，新能源汽车、锂电池和光伏产品出口增长较快，成为拉动港口业务的重要力量。"
        "一些港口加快建设自动化码头，远程操控的岸桥和无人驾驶集卡已经投入日常作业。\n"
        "与此同时，航运价格波动加大，部分航线运力阶段性紧张，港口企业正通过优化航线布局和延伸物流服务来稳定客户。"
    ),
}

DISCLAIMER = (
    "免责声明：本网站所刊载的各类新闻、图片及其他信息均来源于网络或由用户提供，仅供参考，"
    "不代表本网站赞同其观点，如有侵权请与本网站联系，我们将在核实后及时删除相关内容。"
)

# A promotion paragraph of sentences longer than any of an article's: a reprint that adds it
# on top has other longest sentences than its original.
PROMOTION = [
    "欢迎关注我们的官方微信公众号和视频号，每天第一时间为您推送国内外重大新闻、深度评论、民生服务信息以及各类便民实用的生活小贴士和健康知识。",
    "本站现已全面开通手机客户端下载服务，用户只需在各大应用商店搜索本站名称即可免费安装，注册成为会员后还可以参加每月举行的积分抽奖活动赢取好礼。",
    "如果您身边发生了值得关注的新闻线索，欢迎通过本站首页的爆料通道或者二十四小时热线电话与编辑部取得联系，一经采用我们将按照相关标准支付稿酬。",
    "本站长期面向社会招聘优秀的文字记者、摄影记者、视频编辑和新媒体运营人员，有意者请将个人简历和代表作品一并发送至人力资源部的电子邮箱等候通知。",
    "为了给广大读者提供更加优质的阅读体验，本站近期对网页版面和移动端界面进行了全面升级改造，如在使用过程中遇到任何问题请及时向在线客服进行反馈。",
]

# Substitutions a reprint site might make: a few characters changed, digits full-width.
EDITS = [("昨天", "前日"), ("记者", "本报记者"), ("表示", "称"), ("三", "3"), ("。", "！")]


def edited(text: str) -> str:
    for old, new in EDITS[:3]:
        text = text.replace(old, new, 1)
    return text


def reprinted(stories: dict[str, str]) -> list[tuple[str, str, str]]:
    """(key, story, text) in arrival order: the originals, then four reprints of each (a
    header and footer added, a few words edited, the end cut, punctuation and spacing changed)."""
    docs = [(f"https://a.example/{name}", name, text) for name, text in stories.items()]
    for name, text in stories.items():
        paragraphs = text.split("\n")
        docs.append((f"https://b.example/{name}", name, f"转载自滨江日报网\n{text}\n（责任编辑：李明）"))
        docs.append((f"https://c.example/{name}", name, edited(text)))
        docs.append((f"https://d.example/{name}", name, "\n".join(paragraphs[:-1]) + paragraphs[-1][:40]))
        docs.append((f"https://e.example/{name}", name, text.replace("，", ",").replace("\n", "\n\n")))
    return docs


# A long line a site ends every article with that is no notice (notices are not fingerprinted).
SIGNATURE = "滨江日报网每天为广大市民带来最及时、最全面的本地新闻和生活服务信息，欢迎大家继续关心和支持我们的成长并提出宝贵意见。"

# Short stories of other topics, one paragraph each, for the hard negatives below.
LEADS = [
    "县防汛指挥部于昨日凌晨启动三级应急响应，组织沿河低洼地带的两千三百余名群众提前转移到安置点，并为他们准备了饮用水、方便食品和药品。",
    "记者在石门水库大坝看到，泄洪闸已全部开启，技术人员每隔两小时测量一次坝体渗流数据，目前各项指标均处于正常范围之内。",
    "县水利局负责人介绍，今年以来全县共投入资金四千八百万元，对十七座小型水库进行了除险加固，新建自动雨量监测站三十二个。",
    "气象部门预计，未来三天当地仍有中到大雨，局部地区可能出现暴雨，提醒市民尽量减少外出，远离河道、山坡等危险区域。",
    "国内一家新能源企业近日宣布，其自主研发的新型固态电池完成了第三方安全测试，电芯能量密度达到每公斤四百二十瓦时。",
    "在针刺、挤压和高温等极端测试中，样品电池没有出现起火和爆炸，测试结束后仍能正常充放电，离量产又近了一步。",
    "业内专家指出，与传统液态锂电池相比，固态电池使用固体电解质，安全性更高，但目前仍面临材料成本高等难题。",
    "该企业计划明年在华东地区建设一条年产两吉瓦时的中试生产线，首批产品将优先供应高端电动汽车和储能电站。",
]


def corpus() -> list[tuple[str, str, str]]:
    """The reprinted stories, then hard negatives: distinct short stories that end with the
    same long site line and disclaimer (not each other's copies; past the boilerplate limit
    the site line is no longer a key, and the disclaimer never is one: it is a notice)."""
    docs = reprinted(ARTICLES)
    for number, lead in enumerate(LEADS):
        docs.append((f"https://f.example/short-{number}", f"short-{number}", f"{lead}\n{SIGNATURE}\n{DISCLAIMER}"))
    return docs
