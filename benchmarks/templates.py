"""Template reports: texts one source writes from one template every day with other facts.

Weather reports, stock-market closes, exchange-rate notices, lottery draws, road-works notices
and air-quality bulletins keep the template's fixed sentences and change the facts: the place,
the date, the figures, the names. Each is a different story. A repost of one (a source line on
top, an editor line below, commas changed) is that story.

The templates, places and names are written for this benchmark. Everything is drawn from the
``random.Random`` given, so a seed gives the same reports.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

CITIES = [
    "澜江",
    "青禾",
    "云栖",
    "北川",
    "西苑",
    "东陵",
    "南湖",
    "临溪",
    "石桥",
    "安平",
    "长乐",
    "永宁",
    "白沙",
    "清河",
    "金山",
    "柳城",
    "凤台",
    "梅岭",
    "桃源",
    "松阳",
]
ROADS = [
    "解放路",
    "人民大道",
    "建设路",
    "滨江路",
    "中山北路",
    "文化路",
    "迎宾大道",
    "环城西路",
    "学府路",
    "新华街",
    "朝阳路",
    "和平路",
    "光明街",
    "育才路",
    "工业大道",
    "江东路",
    "翠湖路",
    "长青路",
]
SKY = ["晴", "多云", "阴", "小雨", "中雨", "阵雨", "雷阵雨", "晴转多云", "多云转阴", "阴转小雨", "小雪", "雨夹雪"]
WIND = ["北风", "东北风", "东风", "东南风", "南风", "西南风", "西风", "西北风"]
SECTORS = [
    "半导体",
    "银行",
    "证券",
    "保险",
    "煤炭",
    "有色金属",
    "汽车整车",
    "光伏设备",
    "医疗器械",
    "白酒",
    "房地产开发",
    "电力",
    "航运港口",
    "通信设备",
    "软件开发",
    "化学制药",
    "钢铁",
    "旅游酒店",
]
CURRENCIES = [
    ("美元", 1),
    ("欧元", 1),
    ("日元", 100),
    ("港元", 1),
    ("英镑", 1),
    ("澳大利亚元", 1),
    ("加拿大元", 1),
    ("新加坡元", 1),
]
OFFICIALS = ["王建国", "李卫东", "张丽华", "刘志强", "陈晓峰", "杨海燕", "赵文博", "黄志明", "周玉兰", "吴国庆"]
POLLUTANTS = ["细颗粒物", "可吸入颗粒物", "臭氧", "二氧化氮"]


def _date(rng: random.Random) -> tuple[int, int]:
    return rng.randint(1, 12), rng.randint(1, 28)


def weather(rng: random.Random) -> str:
    city = rng.choice(CITIES)
    month, day = _date(rng)
    low = rng.randint(-5, 24)
    high = low + rng.randint(4, 12)
    low2 = low + rng.randint(-3, 3)
    high2 = low2 + rng.randint(4, 12)
    return "\n".join(
        [
            f"{city}市气象台{month}月{day}日17时发布天气预报：",
            f"今天夜间到明天白天，{city}市{rng.choice(SKY)}，{rng.choice(WIND)}{rng.randint(1, 3)}到{rng.randint(3, 5)}级，"
            f"最低气温{low}℃，最高气温{high}℃，相对湿度{rng.randint(30, 60)}%到{rng.randint(61, 95)}%。",
            f"明天夜间到后天白天，{rng.choice(SKY)}，{rng.choice(WIND)}{rng.randint(1, 3)}到{rng.randint(3, 5)}级，"
            f"气温{low2}℃到{high2}℃。",
            "气象部门提醒，近期早晚温差较大，请市民适时增减衣物，注意防范感冒等呼吸道疾病；"
            "出行请关注最新天气预报和预警信息，合理安排出行时间。",
        ]
    )


def stock_close(rng: random.Random) -> str:
    month, day = _date(rng)
    up, down = rng.sample(SECTORS, 4)[:2], rng.sample(SECTORS, 4)[2:]
    turnover = rng.randint(6000, 15000)
    sign = rng.choice(["增加", "减少"])
    index = lambda low, high: f"{rng.uniform(low, high):.2f}"  # noqa: E731
    move = lambda: f"{rng.choice(['上涨', '下跌'])}{rng.uniform(0.01, 2.5):.2f}%"  # noqa: E731
    return "\n".join(
        [
            f"{month}月{day}日，A股三大股指{rng.choice(['集体高开', '小幅低开', '涨跌不一', '窄幅震荡'])}，"
            f"盘中{rng.choice(['震荡走高', '冲高回落', '探底回升', '维持弱势'])}。",
            f"截至收盘，上证指数报{index(2800, 3600)}点，{move()}；深证成指报{index(9000, 12000)}点，{move()}；"
            f"创业板指报{index(1700, 2600)}点，{move()}。",
            f"沪深两市全天成交额{turnover}亿元，较上一个交易日{sign}{rng.randint(50, 1500)}亿元。"
            f"个股方面，{rng.randint(800, 4500)}只股票上涨，{rng.randint(500, 4000)}只股票下跌，"
            f"{rng.randint(20, 120)}只股票涨停。",
            f"板块方面，{up[0]}、{up[1]}板块涨幅居前，{down[0]}、{down[1]}板块跌幅居前。"
            f"北向资金全天净{rng.choice(['买入', '卖出'])}{rng.uniform(1, 120):.2f}亿元。",
            "分析人士认为，短期市场仍以结构性行情为主，投资者应关注政策面和业绩面的变化，理性投资，注意控制风险。",
        ]
    )


def exchange_rates(rng: random.Random) -> str:
    month, day = _date(rng)
    year = rng.randint(2019, 2026)
    base = {
        "美元": 7.1,
        "欧元": 7.8,
        "日元": 4.8,
        "港元": 0.91,
        "英镑": 9.1,
        "澳大利亚元": 4.7,
        "加拿大元": 5.2,
        "新加坡元": 5.3,
    }
    lines = [f"{unit}{name}对人民币{base[name] * rng.uniform(0.97, 1.03):.4f}元" for name, unit in CURRENCIES]
    change = rng.randint(5, 300)
    return "\n".join(
        [
            f"中国外汇交易中心{year}年{month}月{day}日受权公布人民币汇率中间价：" + "，".join(lines) + "。",
            f"当日人民币对美元汇率中间价较前一交易日{rng.choice(['上调', '下调'])}{change}个基点。",
            "人民币汇率中间价的形成方式是：交易中心于每日银行间外汇市场开盘前向外汇市场做市商询价，"
            "去掉最高和最低报价后加权平均，得到当日人民币对美元汇率中间价。",
        ]
    )


def lottery(rng: random.Random) -> str:
    period = f"{rng.randint(2019, 2026)}{rng.randint(1, 150):03d}"
    red = sorted(rng.sample(range(1, 34), 6))
    blue = rng.randint(1, 16)
    first, second = rng.randint(0, 30), rng.randint(20, 400)
    return "\n".join(
        [
            f"中国福利彩票双色球游戏第{period}期开奖结果揭晓，本期开奖号码为：红球"
            + " ".join(f"{n:02d}" for n in red)
            + f"，蓝球{blue:02d}。",
            f"本期双色球全国销售总额为{rng.randint(300_000_000, 450_000_000)}元。"
            f"本期一等奖{first}注，单注奖金为{rng.randint(5_000_000, 10_000_000)}元；"
            f"二等奖{second}注，单注奖金为{rng.randint(100_000, 400_000)}元。",
            f"计奖后，双色球奖池金额为{rng.randint(1_000_000_000, 3_000_000_000)}元，"
            f"下期开奖时间为{rng.choice(['周二', '周四', '周日'])}晚21时15分。",
            "福彩中心提醒广大彩民，购买彩票要量力而行，理性投注，中奖彩民请于开奖之日起六十个自然日内兑奖，逾期视为弃奖。",
        ]
    )


def road_works(rng: random.Random) -> str:
    city = rng.choice(CITIES)
    road, cross_a, cross_b, detour = rng.sample(ROADS, 4)
    month, day = _date(rng)
    end_month = min(12, month + rng.randint(0, 3))
    work = rng.choice(["雨污分流管道改造", "燃气管道迁改", "路面大修", "地铁站点配套", "人行天桥拆除", "供水管网更新"])
    return "\n".join(
        [
            f"{city}市公安局交通管理局、{city}市城市管理局联合发布通告：",
            f"因{road}{work}工程施工需要，自{month}月{day}日起至{end_month}月{rng.randint(1, 28)}日止，"
            f"对{road}（{cross_a}至{cross_b}段）实行{rng.choice(['半幅封闭', '全封闭', '分段封闭'])}施工，"
            f"施工期间该路段{rng.choice(['由东向西', '由西向东', '由南向北', '由北向南'])}方向禁止机动车通行。",
            f"过往车辆可绕行{detour}，公交{rng.randint(1, 120)}路、{rng.randint(121, 400)}路临时调整线路，"
            f"具体以现场公告为准。施工现场负责人：{rng.choice(OFFICIALS)}，联系电话：{rng.randint(13000000000, 13999999999)}。",
            "请过往车辆和行人服从现场交通民警和施工人员的指挥，提前规划出行路线，由此带来的不便敬请谅解。",
        ]
    )


def air_quality(rng: random.Random) -> str:
    city = rng.choice(CITIES)
    month, day = _date(rng)
    aqi = rng.randint(20, 260)
    level = (
        "优"
        if aqi <= 50
        else "良"
        if aqi <= 100
        else "轻度污染"
        if aqi <= 150
        else "中度污染"
        if aqi <= 200
        else "重度污染"
    )
    return "\n".join(
        [
            f"{city}市生态环境局发布{month}月{day}日空气质量日报：",
            f"昨日全市空气质量指数为{aqi}，空气质量级别为{level}，首要污染物为{rng.choice(POLLUTANTS)}。"
            f"全市{rng.randint(6, 14)}个国控监测点位中，{rng.randint(0, 6)}个点位空气质量为优，"
            f"细颗粒物平均浓度为每立方米{rng.randint(8, 180)}微克，同比{rng.choice(['下降', '上升'])}{rng.uniform(0.5, 30):.1f}%。",
            f"预计今日全市空气质量以{rng.choice(['优', '良', '轻度污染'])}为主，首要污染物为{rng.choice(POLLUTANTS)}。",
            "生态环境部门提醒，空气质量较差时，儿童、老年人及心脏病、呼吸系统疾病患者应减少户外活动，"
            "一般人群适量减少户外运动。",
        ]
    )


@dataclass(frozen=True)
class Kind:
    name: str
    source: str  # the site that publishes it
    make: Callable[[random.Random], str]


KINDS = [
    Kind("weather", "澜江气象", weather),
    Kind("stock_close", "财经快报", stock_close),
    Kind("exchange_rates", "外汇资讯", exchange_rates),
    Kind("lottery", "福彩之窗", lottery),
    Kind("road_works", "城市交通", road_works),
    Kind("air_quality", "环境在线", air_quality),
]

_COMMAS = [("，", "、"), ("，", ", "), ("：", ":"), ("；", "，"), ("。", "．")]


def repost(text: str, rng: random.Random, site: str, editor: str) -> str:
    """The report as another site reposts it: a source line on top, an editor line below,
    some commas changed."""
    old, new = rng.choice(_COMMAS)
    lines = text.split("\n")
    lines = [line.replace(old, new, rng.randint(1, 3)) for line in lines]
    head = rng.choice(
        [f"来源：{site}", f"（来源：{site}）", f"本文转自{site}", f"来源：{site}  原标题：{lines[0][:12]}"]
    )
    tail = rng.choice([f"（责任编辑：{editor}）", f"责任编辑：{editor}", f"编辑：{editor}"])
    return "\n".join([head, *lines, tail])
