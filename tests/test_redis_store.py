"""The redis:// store against a real redis-server: same verdicts as the other stores,
format checks, TTL, pending reservations, connection errors, passwords and namespaces."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
import redis
from redis_server import start_redis
from test_stores import renamed

from scrapy_neardup import DUPLICATE, UNIQUE, Detector, Recipe, open_store
from scrapy_neardup.stores import StoreFormatError, StoreUnavailable
from scrapy_neardup.stores.redis import RedisStore

# Articles written for these tests: distinct stories on distinct topics.
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


def _edited(text: str) -> str:
    for old, new in EDITS[:3]:
        text = text.replace(old, new, 1)
    return text


def corpus() -> list[tuple[str, str, str]]:
    """(key, story, text) in arrival order: originals, reprints of each kind, hard negatives."""
    docs = []
    for name, text in ARTICLES.items():
        docs.append((f"https://a.example/{name}", name, text))
    for name, text in ARTICLES.items():
        paragraphs = text.split("\n")
        docs.append((f"https://b.example/{name}", name, f"转载自滨江日报网\n{text}\n（责任编辑：李明）"))
        docs.append((f"https://c.example/{name}", name, _edited(text)))
        docs.append((f"https://d.example/{name}", name, "\n".join(paragraphs[:-1]) + paragraphs[-1][:40]))
        docs.append((f"https://e.example/{name}", name, text.replace("，", ",").replace("\n", "\n\n")))
    # Distinct stories that end with the same long site disclaimer: not each other's copies,
    # and past the boilerplate limit the disclaimer is no longer a key.
    for name, text in ARTICLES.items():
        docs.append((f"https://f.example/{name}-only", f"{name}-lead", f"{text.split(chr(10))[0]}\n{DISCLAIMER}"))
    return docs


def bucket_ids(client, namespace: str) -> list[set[int]]:
    """The ids filed in every bucket of a namespace (buckets are fields of shard hashes)."""
    out = []
    for key in client.scan_iter(match=f"neardup:{{{namespace}}}:h:*".encode()):
        for value in client.hgetall(key).values():
            out.append({int.from_bytes(value[i : i + 8], "big") for i in range(0, len(value), 8)})
    return out


def _verdicts(uri: str, recipe: Recipe, **options) -> list[dict]:
    store = open_store(uri, "corpus", recipe, **options)
    try:
        detector = Detector(store)
        return [detector.check(key, text).as_dict() for key, _, text in corpus()]
    finally:
        store.close()


def test_same_verdicts_as_memory_and_leveldb(redis_url, tmp_path):
    recipe = Recipe()
    memory = _verdicts("memory://", recipe)
    leveldb = _verdicts(f"leveldb://{tmp_path / 'db'}", recipe)
    redis = _verdicts(redis_url, recipe)
    assert len(memory) == len(corpus())
    for expected, level, red in zip(memory, leveldb, renamed(redis)):
        assert level == expected
        assert red == expected
    # The verdicts are the right ones: each story is kept once, by its first copy.
    kept = {v["key"] for v in redis if v["status"] == UNIQUE}
    assert kept == {key for key, story, _ in corpus() if key.startswith(("https://a.", "https://f."))}
    stories = {key: story for key, story, _ in corpus()}
    for verdict in redis:
        if verdict["status"] == DUPLICATE:
            assert stories[verdict["duplicate_of"]] == stories[verdict["key"]]
    # The boilerplate guard was exercised: the disclaimer is a key of the first five stories only.
    with open_store(redis_url, "corpus", recipe) as store:
        leads = [store.get(v["doc_id"]) for v in redis if v["key"].startswith("https://f.")]
        shared = set(leads[0].sentence_keys).intersection(*(r.sentence_keys for r in leads[1:5]))
        assert shared
        assert [bool(shared & set(r.sentence_keys)) for r in leads] == [True] * 5 + [False] * 3


@pytest.mark.parametrize("size", [1, 5, 64])
def test_batches_give_the_verdicts_of_checks_one_by_one(redis_url, tmp_path, size):
    """One round trip per batch: later documents of a batch see the earlier ones, duplicates
    included, until those are taken out; verification must skip them."""
    recipe = Recipe()
    one_by_one = _verdicts(f"leveldb://{tmp_path / 'db'}", recipe)
    namespace = f"batch{size}"
    with open_store(redis_url, namespace, recipe) as store:
        detector = Detector(store)
        documents = [(key, detector.fingerprint(text)) for key, _, text in corpus()]
        verdicts = []
        for start in range(0, len(documents), size):
            verdicts += [v.as_dict() for v in detector.check_many(documents[start : start + size])]
        assert renamed(verdicts) == renamed(one_by_one)
        # Every duplicate filed by a batch was taken out again: buckets hold kept documents only.
        # (The last batch's go out with the store's next call, here count.)
        kept = {v["doc_id"] for v in verdicts if v["status"] == UNIQUE}
        assert store.count() == len(kept)
        assert set().union(*bucket_ids(store.client, namespace)) == kept


def test_check_texts_overlaps_batches_and_gives_the_verdicts_of_checks_one_by_one(redis_url, tmp_path):
    """Batch k+1 is sent with batch k's duplicates' removal while the next is fingerprinted."""
    from scrapy_neardup.batching import check_texts

    recipe = Recipe()
    one_by_one = _verdicts(f"leveldb://{tmp_path / 'db'}", recipe)
    store = open_store(redis_url, "texts", recipe)
    documents = [(key, text) for key, _, text in corpus()]
    verdicts = [v.as_dict() for v in check_texts(Detector(store), documents, size=4)]
    store.close()  # sends the last batch's removals
    assert renamed(verdicts) == renamed(one_by_one)
    kept = {v["doc_id"] for v in verdicts if v["status"] == UNIQUE}
    assert set().union(*bucket_ids(redis.Redis.from_url(redis_url), "texts")) == kept


def test_a_batch_whose_answer_is_lost_is_sent_again_and_judged_the_same(redis_url):
    """The server applied the batch but the answer never came: sent again, the server gives
    the same answer (ids, filed keys, candidates filed before each), and nothing is filed twice."""
    recipe = Recipe()
    documents = [(key, text) for key, _, text in corpus()]
    with open_store("memory://", "alone", recipe) as store:
        detector = Detector(store)
        expected = [detector.check(key, body).as_dict() for key, body in documents]
    with open_store(redis_url, "lost", recipe) as store:
        detector = Detector(store)
        prints = [(key, detector.fingerprint(body)) for key, body in documents]
        half = len(prints) // 2
        first = detector.check_many(prints[:half])
        finish = detector.start_many(prints[half:])
        store._batch.disconnect()  # the answer is lost with the connection
        second = finish()
        got = [v.as_dict() for v in first + second]
        kept = {v["doc_id"] for v in got if v["status"] == UNIQUE}
        assert store.count() == len(kept)  # the second filings were taken out again
        assert set().union(*bucket_ids(store.client, "lost")) == kept
    assert renamed(got) == renamed(expected)


def test_a_batch_never_matches_a_duplicate_of_the_same_batch(redis_url):
    """i reprints X with a second story added; j keeps that second story and a little of X.
    One by one, i is removed before j is checked, and j, far from X, is a story of its own.
    In a batch, j's candidates include i: verification must skip it."""
    first, second = list(ARTICLES.values())[:2]
    x = first
    i = f"{first}\n{second}"
    j = f"{second}\n{first[: len(first) // 4]}"
    documents = [("https://x.example/1", x), ("https://i.example/1", i), ("https://j.example/1", j)]
    with open_store("memory://", "alone", Recipe()) as store:
        detector = Detector(store)
        expected = [detector.check(key, text).as_dict() for key, text in documents]
    assert [v["status"] for v in expected] == [UNIQUE, DUPLICATE, UNIQUE]
    with open_store(redis_url, "together", Recipe()) as store:
        detector = Detector(store)
        batch = detector.check_many([(key, detector.fingerprint(text)) for key, text in documents])
    assert renamed([v.as_dict() for v in batch]) == renamed(expected)


def test_every_sentence_key_is_looked_up(redis_url):
    """A reprint whose n longest sentences are an added promotion is found by its next ones."""
    reprint = "\n".join(PROMOTION) + "\n" + ARTICLES["rail"]
    outcomes = []
    for uri in ("memory://", redis_url):
        with open_store(uri, "lookup") as store:
            detector = Detector(store, methods=("nshash",))
            first = detector.check("https://a.example/rail", ARTICLES["rail"])
            outcomes.append(detector.check("https://b.example/rail", reprint).as_dict())
            assert store.get(first.doc_id).sentence_keys  # the original is filed under its keys
    assert outcomes[0] == outcomes[1]
    assert outcomes[1]["status"] == DUPLICATE and outcomes[1]["method"] == "nshash"


def test_two_dedup_runs_share_one_server(redis_url, tmp_path):
    """``neardup dedup --store redis://...`` from two processes at once: each story kept once."""
    names = list(ARTICLES)
    inputs = {}
    for run, (own, other) in enumerate([(names[:4], names[4:]), (names[4:], names[:4])]):
        lines = [{"url": f"https://{run}.example/{n}", "text": ARTICLES[n]} for n in own]
        lines += [{"url": f"https://{run}.example/{n}", "text": f"转载自{run}号网\n{ARTICLES[n]}"} for n in other]
        inputs[run] = tmp_path / f"in{run}.jsonl"
        inputs[run].write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "scrapy_neardup.cli", "dedup", str(path), "-o", str(tmp_path / f"out{run}.jsonl"),
             "--store", redis_url, "--namespace", "cli", "--key-field", "url", "--drop", "--no-progress"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for run, path in inputs.items()
    ]
    for process in runs:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err[-2000:]
    kept = [json.loads(line) for run in inputs for line in (tmp_path / f"out{run}.jsonl").read_text().splitlines()]
    assert sorted(item["url"].rsplit("/", 1)[1] for item in kept) == sorted(names)
    with open_store(redis_url, "cli") as store:
        assert store.count() == len(names)


def test_another_format_version_is_refused(redis_url, redis_server):
    client = redis_server.client()
    client.set("neardup:{old}:meta", b'{"format": 99, "recipe": {}}')
    with pytest.raises(StoreFormatError, match="format version 99"):
        open_store(redis_url, "old")


def test_namespaces_and_databases_are_apart_in_their_keys(redis_server, redis_url):
    text = ARTICLES["museum"]
    with open_store(redis_url, "site-a") as a, open_store(redis_url, "site-b") as b:
        Detector(a).check("a", text)
        Detector(b).check("b", text)
    with open_store(redis_server.url(5), "site-a") as other_db:
        assert other_db.count() == 0
    keys = redis_server.client().keys("*")
    assert keys and all(k.startswith((b"neardup:{site-a}:", b"neardup:{site-b}:")) for k in keys)
    with open_store(redis_url, "site-a", key_prefix="crawl2") as prefixed:
        assert prefixed.count() == 0
        assert prefixed.prefix == "crawl2:{site-a}:"


def test_commit_and_remove(redis_url, redis_server):
    store = open_store(redis_url, "reserve")
    try:
        detector = Detector(store)
        kept = detector.check("https://a.example/chip", ARTICLES["chip"], reserve=True)
        assert kept.status == UNIQUE and store.get(kept.doc_id).state == 1
        # A pending document already catches its copy.
        assert detector.check("https://b.example/chip", _edited(ARTICLES["chip"])).status == DUPLICATE
        detector.commit(kept)
        assert store.get(kept.doc_id).state == 0
        assert redis_server.client().zcard("neardup:{reserve}:p") == 0
        assert redis_server.client().pttl(f"neardup:{{reserve}}:r:{kept.doc_id}") == -1  # permanent

        dropped = detector.check("https://a.example/port", ARTICLES["port"], reserve=True)
        detector.release(dropped)  # a later pipeline dropped the item: nothing left behind
        assert store.get(dropped.doc_id) is None
        assert store.count() == 1
        # Every bucket left holds the committed document only.
        client = redis_server.client()
        buckets = bucket_ids(client, "reserve")
        assert len(buckets) >= 10 and all(ids == {kept.doc_id} for ids in buckets)
        again = detector.check("https://b.example/port", ARTICLES["port"])
        assert again.status == UNIQUE  # the released reservation does not catch its reprint

        # remove() without the client-side cache (another process, a new store object).
        with open_store(redis_url, "reserve") as other:
            other.remove(again.doc_id)
        assert store.count() == 1
        assert all(ids == {kept.doc_id} for ids in bucket_ids(client, "reserve"))
    finally:
        store.close()


def test_pending_reservation_of_a_dead_process_expires(redis_url, redis_server):
    crashed = open_store(redis_url, "pending", pending_timeout=0.3)
    Detector(crashed).check("https://a.example/flood", ARTICLES["flood"], reserve=True)
    crashed.client.close()  # the process dies before commit or release
    store = open_store(redis_url, "pending", pending_timeout=0.3)
    try:
        detector = Detector(store)
        assert detector.check("https://b.example/flood", _edited(ARTICLES["flood"])).status == DUPLICATE
        time.sleep(0.5)
        fresh = detector.check("https://c.example/flood", _edited(ARTICLES["flood"]))
        assert fresh.status == UNIQUE  # the dead reservation no longer blocks the story
        assert store.count() == 1
        assert redis_server.client().zcard("neardup:{pending}:p") == 0

        # A committed reservation outlives the timeout.
        kept = detector.check("https://a.example/rice", ARTICLES["rice"], reserve=True)
        detector.commit(kept)
        time.sleep(0.5)
        assert detector.check("https://b.example/rice", ARTICLES["rice"] + "（完）").status == DUPLICATE
        assert store.count() == 2
    finally:
        store.close()


def test_ttl_expires_records_and_buckets(redis_url, redis_server):
    client = redis_server.client()
    store = open_store(redis_url, "ttl", ttl=0.4)
    try:
        detector = Detector(store)
        first = detector.check("https://a.example/library", ARTICLES["library"])
        assert 0 < client.pttl(f"neardup:{{ttl}}:r:{first.doc_id}") <= 400
        shards = list(client.scan_iter(match=b"neardup:{ttl}:h:*"))
        assert shards and all(0 < client.pttl(key) <= 500 for key in shards)  # window end + ttl
        assert detector.check("https://b.example/library", ARTICLES["library"]).status == DUPLICATE
        time.sleep(0.6)
        assert detector.check("https://c.example/library", ARTICLES["library"]).status == UNIQUE
        time.sleep(0.7)
        assert store.count() == 0
        left = {key.rsplit(b":", 1)[-1] for key in client.scan_iter(match=b"neardup:{ttl}:*")}
        assert left <= {b"meta", b"mark", b"n", b"ops", b"t"}  # bounded: no record or bucket outlives the window
    finally:
        store.close()


def test_ttl_window_follows_document_time(redis_url):
    """Members older than the window are trimmed by the next document that touches the bucket."""
    now = [1_000_000.0]
    store = open_store(redis_url, "window", ttl=3600)
    try:
        detector = Detector(store, clock=lambda: now[0])
        detector.check("https://a.example/marathon", ARTICLES["marathon"])
        now[0] += 1800
        assert detector.check("https://b.example/marathon", ARTICLES["marathon"]).status == DUPLICATE
        now[0] += 3600
        assert detector.check("https://c.example/marathon", ARTICLES["marathon"]).status == UNIQUE
    finally:
        store.close()


def test_purge(redis_url, redis_server):
    now = [1_000.0]
    store = open_store(redis_url, "purge")
    try:
        detector = Detector(store, clock=lambda: now[0])
        ids = {}
        for name, text in ARTICLES.items():
            ids[name] = detector.check(f"https://a.example/{name}", text).doc_id
            now[0] += 10
        assert store.purge(1_000.0 + 40) == 4  # the first four stories
        assert store.count() == len(ARTICLES) - 4
        members = set().union(*bucket_ids(redis_server.client(), "purge"))
        assert members == set(list(ids.values())[4:])
        names = list(ARTICLES)
        assert detector.check("https://b.example/x", ARTICLES[names[0]]).status == UNIQUE
        assert detector.check("https://b.example/y", ARTICLES[names[-1]]).status == DUPLICATE
        assert store.purge(0) == 0
    finally:
        store.close()


def test_retried_call_is_applied_once(redis_url):
    """A check-and-add whose answer was lost and is sent again must not file the document twice."""
    store = open_store(redis_url, "retry")
    try:
        detector = Detector(store)
        detector.check("https://a.example/rail", ARTICLES["rail"])
        seq = next(store._seq)
        store._seq = iter([seq, seq])  # the next call and its retry carry the same sequence number
        first = detector.check("https://a.example/port", ARTICLES["port"])
        retried = detector.check("https://a.example/port", ARTICLES["port"])
        assert first.status == retried.status == UNIQUE
        assert retried.doc_id == first.doc_id
        assert store.count() == 2
    finally:
        store.close()


def test_lost_connection_is_retried(redis_url, redis_server):
    store = open_store(redis_url, "reconnect")
    try:
        detector = Detector(store)
        detector.check("https://a.example/rail", ARTICLES["rail"])
        admin = redis_server.client()
        assert admin.client_kill_filter(_type="normal", skipme=True) >= 1  # every store connection
        verdict = detector.check("https://b.example/rail", _edited(ARTICLES["rail"]))
        assert verdict.status == DUPLICATE
    finally:
        store.close()


def test_server_gone_mid_crawl_raises_store_unavailable():
    server = start_redis(password="s3cret-pw")
    store = open_store(server.url(0), "gone", retries=2)
    try:
        Detector(store).check("https://a.example/rail", ARTICLES["rail"])
        server.stop()
        with pytest.raises(StoreUnavailable) as caught:
            Detector(store).check("https://b.example/rail", ARTICLES["rail"])
        message = str(caught.value)
        assert f"127.0.0.1:{server.port}" in message
        assert "s3cret-pw" not in message
    finally:
        store.close()
        server.stop()


def test_unreachable_server_message_hides_password(redis_server):
    from redis_server import free_port

    port = free_port()
    with pytest.raises(StoreUnavailable) as caught:
        open_store(f"redis://:hunter2pw@127.0.0.1:{port}/0", retries=0)
    message = str(caught.value)
    assert f"redis://:***@127.0.0.1:{port}/0" in message
    assert "hunter2pw" not in message


def test_password_in_uri():
    server = start_redis(password="p@ss word")
    try:
        quoted = f"redis://:p%40ss%20word@127.0.0.1:{server.port}/2"
        with open_store(quoted, "auth") as store:
            assert Detector(store).check("a", ARTICLES["port"]).status == UNIQUE
            assert store.count() == 1
        assert server.client(2).exists("neardup:{auth}:meta")
        for uri in (f"redis://:badpw123@127.0.0.1:{server.port}/2", f"redis://127.0.0.1:{server.port}/2"):
            with pytest.raises(StoreUnavailable) as caught:
                open_store(uri, "auth", retries=0)
            assert "p@ss" not in str(caught.value) and "badpw123" not in str(caught.value)
    finally:
        server.stop()


def test_ttl_is_part_of_the_layout(redis_url):
    open_store(redis_url, "layout", ttl=3600).close()
    with pytest.raises(StoreFormatError, match="ttl 3600.0"):
        open_store(redis_url, "layout", ttl=60)
    with open_store(redis_url, "layout") as store:  # no TTL given: the store's own
        assert store.ttl == 3600
    open_store(redis_url, "layout", ttl=3600).close()
    open_store(redis_url, "forever").close()
    with pytest.raises(StoreFormatError, match="created with ttl None"):
        open_store(redis_url, "forever", ttl=60)


def test_constructor_checks_options(redis_url):
    with pytest.raises(ValueError, match="ttl"):
        RedisStore(redis_url, ttl=0)
    with pytest.raises(ValueError, match="pending_timeout"):
        RedisStore(redis_url, pending_timeout=-1)


def _check_in_child(store, key: str, text: str, expect: str, conn) -> None:
    conn.send(Detector(store).check(key, text).status == expect)


def test_a_forked_child_uses_its_own_connection(redis_url):
    """The store keeps one connection: a child must not write into the parent's socket."""
    import multiprocessing

    (key, _, text), (other_key, _, other) = corpus()[:2]
    with open_store(redis_url, "fork") as store:
        detector = Detector(store)
        assert detector.check(key, text).status == UNIQUE
        receive, send = multiprocessing.Pipe(duplex=False)
        child = multiprocessing.get_context("fork").Process(
            target=_check_in_child, args=(store, other_key, other, UNIQUE, send)
        )
        child.start()
        assert receive.recv() and child.join(30) is None and child.exitcode == 0
        copy = detector.check("https://b.example/copy", "转载：" + other)
        assert copy.status == DUPLICATE and copy.duplicate_of == other_key
        assert store.count() == 2
