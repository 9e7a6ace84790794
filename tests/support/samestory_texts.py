"""Texts that share much with another text, written for these tests: a complete article and
its lead excerpt, a commentary that quotes a whole story, a roundup that carries several,
and template reports with other facts. The events, places and people are invented."""

from __future__ import annotations

# A complete article that keeps coming back to its people and places, as news does.
BRIDGE = [
    "本报讯 经过三年多建设，横跨清江的青石大桥今天上午正式通车，清江两岸的居民从此告别了绕行四十分钟的历史。",
    "青石大桥全长两千一百六十米，主跨四百二十米，是清江上第一座双塔斜拉桥。大桥通车后，从青石镇到江北新区的车程缩短到八分钟。",
    "上午九点，第一批车辆缓缓驶上青石大桥。青石镇居民周立新开着自家的小货车排在车队前面，他说，过去每天去江北新区送菜要绕道上游的老渡口，现在清晨五点出门，六点前就能把菜送到江北新区的市场。",
    "市交通运输局局长韩志远介绍，青石大桥建设中遇到了清江汛期水位高、江底岩层破碎等难题。施工单位在主塔基础采用了钢围堰和大直径钻孔灌注桩，前后攻克了十四项技术难关，大桥主体工程比计划提前两个月完工。",
    "为了保护清江的江豚栖息地，青石大桥在设计时把主塔从江心移到了浅滩，施工期间设置了声学驱离装置，并安排专人每天巡查江面。韩志远说，施工三年来，清江这一段的江豚观测数量没有减少。",
    "青石大桥的通车也让江北新区的企业看到了新的机会。江北新区一家食品企业的负责人说，企业的原料大多来自青石镇的农户，以前运输成本高、损耗大，青石大桥通车后，企业计划在青石镇建一座收购站。",
    "据了解，青石大桥设有双向六车道和两侧人行道，桥面安装了一百二十套智能照明设备和结冰预警系统。市交通运输局表示，青石大桥通车后的第一个月免收通行费，此后小型客车每次收费五元。",
    "周立新说，他打算以后每个周末带着孩子走上青石大桥，从桥上看一看清江，看一看自己生活了四十年的青石镇。",
]

# What a later copy adds: a closing paragraph of the same story (a few percent more text, more
# than a reprint's own lines).
BRIDGE_CLOSING = (
    "当天下午，青石大桥上的车流量已经超过三千辆，市交通运输局在青石大桥两端增派了交警疏导交通。"
    "据介绍，大桥通车后，城东片区居民前往老城区的车程将由原来的四十分钟缩短到十五分钟左右。"
)

# A reprint's own lines around the article: a headline, a dateline with its source, an editor line.
BRIDGE_DRESSING = (
    "青石大桥今天通车 清江两岸八分钟直达",
    "2024年06月22日 08:15  来源：江城晚报",
    "（编辑：李红 校对：张明）",
)

# A portal's excerpt: its source line and the article's first paragraphs.
BRIDGE_EXCERPT_HEAD = "来源：清江日报  原标题：青石大桥今天通车 清江两岸八分钟直达"


def bridge(paragraphs: int | None = None, closing: bool = False, sentence: bool = False) -> str:
    """The article, or its lead excerpt of ``paragraphs`` paragraphs under a source line; with
    its closing paragraph, or only that paragraph's first sentence."""
    if paragraphs is not None:
        return "\n".join([BRIDGE_EXCERPT_HEAD, *BRIDGE[:paragraphs]])
    if sentence:
        return "\n".join([*BRIDGE, BRIDGE_CLOSING[: BRIDGE_CLOSING.index("。") + 1]])
    return "\n".join(BRIDGE + ([BRIDGE_CLOSING] if closing else []))


def dressed_bridge() -> str:
    """The article reprinted with lines of the reprinting site's own before and after it."""
    headline, source, editor = BRIDGE_DRESSING
    return "\n".join([headline, source, bridge(), editor])


# A short story, and a reader's letter on another subject that quotes it whole in its middle.
CLINIC = (
    "本报讯 柳河村卫生室日前开通了远程会诊，村民在卫生室就能请县人民医院的医生看病。"
    "柳河村卫生室的乡村医生马玉兰说，远程会诊开通一个月来，已经有六十多位村民通过视频请县人民医院的医生会诊，"
    "其中不少是行动不便的老人。县卫生健康局表示，年底前全县一百二十个村卫生室都将开通远程会诊。"
)

LETTER_OWN = [
    "编辑同志：我是一名退休的中学语文教师，住在城东的老旧小区里。最近小区加装电梯的事情让我想了很多，写下来和大家交流。",
    "我们这栋楼建于上世纪九十年代，一共七层，住着二十八户人家，其中一半以上是六十岁以上的老人。三楼以上的老人下楼买菜、看病，都要扶着楼梯歇好几次。",
    "去年社区提出加装电梯，费用由政府补贴一部分、住户分摊一部分。可是一楼和二楼的住户担心采光和噪音，迟迟不肯签字，这件事就搁置了大半年。",
]
LETTER_AFTER = [
    "读到这条消息，我想，办法总比困难多。加装电梯也是一样，关键在于把各家的难处摆到桌面上，一件一件去商量。",
    "后来，社区请来设计单位，把电梯井挪到了楼的北侧，不挡一楼的阳光；又和施工方约定，噪音大的工序只在白天进行。一楼的老张第一个签了字，他说，谁家没有老人呢。",
    "今年春天，我们楼的电梯终于装好了。住在七楼的刘奶奶已经八十三岁，她说，这是她五年来第一次自己下楼晒太阳。邻里之间多一分体谅，日子就多一分方便。",
    "希望更多的老旧小区能把加装电梯的好事办好，也希望有关部门在审批和补贴上再简化一些手续，让老人们早一天坐上电梯。（读者 陈文清）",
]


def letter() -> str:
    """The reader's letter: its own text, the quoted story, more of its own (more than the story)."""
    return "\n".join([*LETTER_OWN, "前几天，我在报纸上读到这样一则消息：", CLINIC, *LETTER_AFTER])


# Short stories, and a morning roundup that carries them in full.
ROUNDUP_STORIES = {
    "青石镇开通夜间公交": (
        "本报讯 从下月一日起，青石镇将开通两条夜间公交线路，末班车时间延长到晚上十一点。"
        "青石镇交通办负责人说，夜间公交主要方便在江北新区上夜班的青石镇居民，两条线路途经青石镇的八个村，"
        "单程票价两元，持老年卡的乘客免费乘车。"
    ),
    "城西图书馆推出送书上门": (
        "本报讯 城西图书馆近日推出送书上门服务，读者在手机上选好图书，志愿者就会把图书送到家门口。"
        "城西图书馆馆长孙静说，送书上门服务主要面向行动不便的老人和残疾读者，每位读者每次最多可借十本，"
        "借期一个月，到期后志愿者会上门收回。"
    ),
    "南湖湿地迎来候鸟": (
        "本报讯 随着气温下降，南湖湿地迎来了今年第一批越冬候鸟，白鹭、苍鹭和小天鹅等二十多种候鸟在湿地栖息觅食。"
        "南湖湿地管理处的工作人员说，今年南湖湿地新建了三处观鸟平台，提醒市民观鸟时不要投喂、不要惊扰候鸟，"
        "不要使用无人机靠近鸟群。"
    ),
}


def roundup() -> str:
    lines = ["【早间新闻】今日要闻速览"]
    for title, story in ROUNDUP_STORIES.items():
        lines += [f"【{title}】", story]
    lines.append("以上为今日要闻，明天见。")
    return "\n".join(lines)


def weather(city: str, day: int, low: int, high: int, wind: int, rain: int, aqi: int) -> str:
    """A daily weather report from one template: the facts differ, the sentences do not."""
    return (
        f"{city}市气象台{day}日发布天气预报：今天白天到夜间，{city}市多云转阴，部分地区有小雨，"
        f"最低气温{low}摄氏度，最高气温{high}摄氏度，东北风{wind}级。"
        f"明天降水概率为百分之{rain}，空气质量指数预计为{aqi}，空气质量等级为良。"
        f"气象部门提醒，近期早晚温差较大，请市民注意及时增减衣物，出行时携带雨具，驾车注意减速慢行。"
        f"农业部门建议，{city}市各地抓住晴好间隙抢收晚稻，做好设施大棚的保温和排水工作。"
        f"{city}市气象台将于明天上午十点发布下一期天气预报，请市民关注。"
    )


def repost(report: str) -> str:
    """A repost of a report: a source line on top, an editor line below, commas changed."""
    return "\n".join(["来源：滨海天气网", report.replace("，", ",", 3), "（编辑：林小雨）"])


def forecast(day: str, sky: str, wind: tuple[int, int], temperatures: tuple[int, int, int, int], humidity: int) -> str:
    """A forecast of Tingzhou's observatory from one template: its small numbers (winds,
    temperatures, humidity) can coincide as a set with another day's."""
    low, high, low_tomorrow, high_tomorrow = temperatures
    return (
        f"汀州市气象台{day}6时发布天气预报：\n"
        f"今天白天，汀州市{sky}，北风{wind[0]}到{wind[1]}级，气温{low}到{high}度，相对湿度45%到{humidity}%。\n"
        f"今天夜间到明天白天，阴，气温{low_tomorrow}到{high_tomorrow}度。\n"
        "气象部门提醒，近期早晚温差较大，请市民适时增减衣物，注意防范感冒等呼吸道疾病；"
        "出行请关注最新天气预报和预警信息，合理安排出行时间。"
    )


# Two days whose figures are one set but for one each way (80 on the one, 85 on the other).
FORECASTS = {
    "tingzhou/0305": forecast("3月5日", "多云", (2, 4), (3, 9, 4, 10), 80),
    "tingzhou/0412": forecast("4月12日", "小雨", (3, 4), (2, 9, 3, 10), 85),
}


# Agency reports side by side: a roundup whose second and third items report one marathon,
# each under its own dateline, after a story of the same city.
MARATHON_ITEMS = {
    "江城图书馆延长开放时间": (
        "新华社江城3月2日电 江城图书馆从本月起延长开放时间，工作日闭馆时间推迟到晚上九点。"
        "江城图书馆馆长许文说，延长开放时间后，下班的读者也能到江城图书馆借书、上自习，周末还将增开亲子阅读室。"
    ),
    "江城马拉松开始报名": (
        "新华社江城3月3日电 第五届江城马拉松今天开始报名，全程马拉松的名额为一万二千个，报名截止到本月二十日。"
        "江城马拉松组委会说，今年的赛道沿着清江南岸延伸，江城马拉松的选手将跑过清江上的三座大桥。"
    ),
    "江城马拉松报名首日火爆": (
        "新华社江城3月4日电 第五届江城马拉松报名首日，已有八千多名选手报名参加全程马拉松。"
        "江城马拉松组委会表示，报名人数超过名额时将抽签决定参赛选手，清江南岸的赛道沿线将增设二十个补给站。"
    ),
}

# A roundup opening with a census story that has no dateline; a report under its own dateline
# follows, then more of the census: the census items go on with each other, the report between
# them starts another story.
CENSUS_ITEMS = {
    "全市农户普查结果公布": (
        "全市农业普查结果显示，全市共有农户三十二万户，农村从业人员五十八万人。农村从业人员中，"
        "从事种植业的农村从业人员占四成，从事养殖业的占两成，其余农村从业人员在乡镇企业务工。"
        "全市农业普查还显示，农村从业人员的平均年龄为四十七岁，五年来提高了三岁。"
    ),
    "江城地铁三号线试运行": (
        "本报讯 江城地铁三号线今天开始试运行，全线设二十一座车站，试运行期间乘客可以免费乘坐。"
        "江城地铁公司表示，三号线将在试运行三个月后正式开通，届时从城东到机场只需四十分钟。"
    ),
    "农机拥有量增长": (
        "全市农业普查同时公布了农机拥有量：全市拖拉机拥有量比五年前增长三成，农村从业人员中会操作农机的占一成。"
        "农业部门表示，将为农村从业人员开办农机培训班。"
    ),
}


def digest(items: dict[str, str], headings: bool = True) -> str:
    """A morning digest carrying ``items`` (title: text) in full, numbered, or with no headings."""
    lines = ["早安！今日要闻速览"]
    for number, (title, story) in enumerate(items.items(), 1):
        lines += [f"{number}. {title}"] if headings else []
        lines.append(story)
    lines.append("以上为今日要闻，明天见。")
    return "\n".join(lines)


# A story under an agency's dateline, and a commentary that opens with it whole and goes on with
# a report of its own on another county's flood warnings, under the paper's dateline without a
# day: it comes back to the story's words (防汛, 群众, 转移, 应急分队), as a lead's article does.
DRILL = (
    "新华社成都７月３日电 青川县今天在白龙湖畔举行防汛应急演练，沿湖六个乡镇的两千多名群众参加了演练。"
    "上午九点，青川县防汛指挥部发出山洪预警，白龙湖沿岸的广播同时响起，各村的应急分队带领群众沿着事先标好的路线向高处转移，"
    "四十分钟内全部转移到安置点。青川县防汛指挥部负责人说，今年汛期以来，白龙湖水位比往年同期高出两米，"
    "演练就是要让每一户群众都知道预警响起时往哪里走、由谁带领。"
)

DRILL_COMMENTARY_OWN = [
    "（本报绵阳电）",
    "北川县的防汛预警系统今年换了新装备。山区的三百多个村民小组都装上了雨量监测站，雨量超过警戒值，"
    "监测站就把预警发到村干部的手机上，村里的广播随即响起。",
    "北川县水务局的工程师罗文斌介绍，过去山洪预警要靠人在河边看水位，夜里下大雨时常常来不及通知群众转移。"
    "新装备用了一年，北川县已经五次提前两小时以上发出预警。",
    "罗文斌说，预警发出去只是第一步，群众转移还要靠村里的应急分队。今年北川县给每个村配了应急分队，每个季度在村里走一遍转移路线。",
    "北川县还在山区学校里开了防汛课，孩子们学会了看雨量牌，回家再讲给老人听。罗文斌说，明年北川县打算把雨量监测站装到每一条山沟。",
]


def drill_commentary() -> str:
    """The commentary: a line of its own, the story whole, then its own report."""
    return "\n".join(["读到这样一条消息：", DRILL, *DRILL_COMMENTARY_OWN])


# An essay whose later paragraphs turn from its opening scene to general reflections: an
# excerpt of its first paragraphs shares few of the later paragraphs' words.
ESSAY_TITLE = "云岭茶园里的一堂课"
ESSAY = [
    "清晨六点，云岭村的茶园还笼罩在薄雾里，五十八岁的茶农罗桂芬已经背着竹篓走进了茶垄。她一边采摘芽尖，一边告诉我们，今年春茶的头一批鲜叶卖出了每斤三百二十元的好价钱。",
    "罗桂芬家的六亩茶园在云岭半山腰上。十年前，她和丈夫从外地打工回到云岭村，跟着村里的合作社学会了修剪茶树、施用有机肥，还在茶垄之间种上了驱虫的香草。",
    "说起这些年的变化，罗桂芬指着山脚下新修的茶叶加工厂说，以前鲜叶只能挑到镇上卖给收购商，现在合作社统一收购、统一加工，茶农每年能多挣一万多元。",
    "走出山区再看，一个地方的发展，往往取决于能否把手里的资源变成长久的本事。资源会用尽，市场会起落，真正留得住的，是人们在实践中摸索出来的经验和规矩。",
    "这些年各地都在讲特色产业，可特色不是一句口号。有的地方一哄而上，今天种这个、明天养那个，结果投入不少，收获寥寥；有的地方认准一条路，十几年如一日，慢慢做出了名气。",
    "做成一件事，需要耐心，也需要制度。好的制度让肯下功夫的人得到回报，让投机取巧的人无利可图，这比任何一时的补贴都更管用。",
    "城市里的人常常把乡村想象成田园牧歌，其实乡村的日子同样离不开算账。算清楚成本和收益，算清楚眼前和长远，才能少走弯路。",
    "这一课，不在课本里，而在一次次的尝试和失败里。学会了，路就宽了。",
]
ESSAY_HEAD = f"来源：南山晨报  原标题：{ESSAY_TITLE}"


def essay(paragraphs: int | None = None, title: str = ESSAY_TITLE) -> str:
    """The essay, or a portal's excerpt of its first ``paragraphs`` under a credit line naming
    ``title`` as the original title."""
    if paragraphs is None:
        return "\n".join(ESSAY)
    return "\n".join([f"来源：南山晨报  原标题：{title}", *ESSAY[:paragraphs]])
