"""A crawler engineer's first hour with the ``neardup`` command, run as a user runs it: a
process of its own, its exit status and what it prints, on records written here (a crawl's feed: url,
title, text or html; reprints and a Traditional copy among them).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import warm_python
from support.redis_server import start_redis

# One story, a reprint of it, its Traditional-script copy, and another story.
RAIL = (
    "本报北京三月十二日电 记者从国家铁路集团获悉，今年春运期间全国铁路累计发送旅客超过三亿人次，"
    "同比增长百分之八点六，创下历史同期新高。\n据介绍，为应对客流高峰，铁路部门在节前节后共加开旅客列车"
    "一万二千余列，其中夜间高铁和跨线动车组的开行数量比去年明显增加。多个车站延长了售票窗口的服务时间。\n"
    "铁路部门还表示，春运期间电子客票的使用比例进一步提高，刷身份证进站已覆盖全部高铁车站，旅客平均进站"
    "时间缩短到十秒以内。下一步将继续优化列车运行图，提升中西部地区的运输能力。"
)
RAIL_REPRINT = "转载自滨江日报网\n" + RAIL + "\n（责任编辑：李明）"
RAIL_TRADITIONAL = (
    "本報北京三月十二日電 記者從國家鐵路集團獲悉，今年春運期間全國鐵路累計發送旅客超過三億人次，"
    "同比增長百分之八點六，創下歷史同期新高。\n據介紹，為應對客流高峰，鐵路部門在節前節後共加開旅客列車"
    "一萬二千餘列，其中夜間高鐵和跨線動車組的開行數量比去年明顯增加。多個車站延長了售票窗口的服務時間。\n"
    "鐵路部門還表示，春運期間電子客票的使用比例進一步提高，刷身份證進站已覆蓋全部高鐵車站，旅客平均進站"
    "時間縮短到十秒以內。下一步將繼續優化列車運行圖，提升中西部地區的運輸能力。"
)
MUSEUM = (
    "记者日前从省博物馆了解到，经过两年多的改造提升，博物馆新馆将于下月正式对公众开放，新增展厅面积六千"
    "平方米，首批展出文物超过三千件。\n新馆的常设展览以本地区的历史发展为主线，分为远古文明、青铜时代、"
    "丝路往来和近代风云四个部分。其中一件出土于汉代墓葬的鎏金铜灯，是首次与观众见面。\n馆方表示，开馆后"
    "将实行预约参观，每天限流一万人次，并推出面向中小学生的研学课程。"
)


def neardup(
    *args: str, stdin: str | None = None, prefix: tuple[str, ...] = (), fresh: bool = False
) -> subprocess.CompletedProcess:
    """``neardup ARGS`` in a process of its own, forked from the tests' warm server
    (support.warm_python), or ``fresh``: a python started anew, as a user's is, so that the
    command's own start-up stays covered (``prefix``: a command that runs it, such as setpriv;
    such a command always starts anew)."""
    command = [*prefix, sys.executable, "-m", "scrapy_neardup", *args]
    runner = subprocess.run if fresh else warm_python.run
    return runner(command, input=stdin, capture_output=True, text=True, timeout=240)


def jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def feed(tmp_path: Path) -> Path:
    return jsonl(
        tmp_path / "feed.jsonl",
        [
            {"url": "https://a.example/rail", "title": "春运客流创新高", "text": RAIL},
            {"url": "https://b.example/rail", "title": "转：春运客流创新高", "text": RAIL_REPRINT},
            {"url": "https://tw.example/rail", "title": "春運客流創新高", "text": RAIL_TRADITIONAL},
            {"url": "https://a.example/museum", "title": "省博物馆新馆下月开放", "text": MUSEUM},
        ],
    )


# -- store URIs that are wrong each get their own message ---------------------------------------


@pytest.mark.parametrize("db", ["abc", "1/2", "-1"])
def test_a_redis_db_that_is_not_a_number_is_refused(tmp_path, redis_server, db):
    before = set(redis_server.client().keys("*"))  # the server is shared with other tests
    done = neardup("dedup", str(feed(tmp_path)), "--store", f"redis://127.0.0.1:{redis_server.port}/{db}")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"neardup: bad Redis store URI redis://127.0.0.1:{redis_server.port}/{db}: the db after the host must "
        f"be a number, as in redis://host:6379/0, got {db!r}"
    ]
    assert set(redis_server.client().keys("*")) == before, "nothing is written to db 0 meanwhile"


def test_a_password_sent_to_a_server_without_one_is_refused(tmp_path, redis_server):
    before = set(redis_server.client().keys("*"))  # the server is shared with other tests
    done = neardup("dedup", str(feed(tmp_path)), "--store", f"redis://:s3cret@127.0.0.1:{redis_server.port}/0")
    assert done.returncode == 2, done.stderr
    assert f"127.0.0.1:{redis_server.port} requires none and accepts any" in done.stderr
    assert "s3cret" not in done.stderr and "Traceback" not in done.stderr
    assert set(redis_server.client().keys("*")) == before


def test_the_right_password_opens_a_server_that_requires_one(tmp_path):
    server = start_redis(password="s3cret")
    try:
        done = neardup("dedup", str(feed(tmp_path)), "-o", str(tmp_path / "out.jsonl"), "--store", server.url())
        assert done.returncode == 0, done.stderr
        wrong = neardup("info", "--store", server.url().replace("s3cret", "wrong"))
        assert wrong.returncode == 2 and "authentication failed" in wrong.stderr
    finally:
        server.stop()


def unprivileged() -> tuple[str, ...]:
    """A prefix that runs a command without root's right to write anywhere (root ignores file
    permissions): setpriv drops that capability; an ordinary user needs none."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv (util-linux): file permissions cannot be tested")
    return (setpriv, "--bounding-set=-dac_override,-dac_read_search")


def test_a_read_only_leveldb_folder_is_not_sent_to_repair(tmp_path):
    store = tmp_path / "store"
    source = feed(tmp_path)
    assert neardup("dedup", str(source), "-o", os.devnull, "--store", f"leveldb://{store}").returncode == 0
    for path in [store, *store.iterdir()]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        done = neardup("dedup", str(source), "--store", f"leveldb://{store}", prefix=unprivileged())
    finally:
        for path in [store, *store.iterdir()]:
            path.chmod(0o755 if path.is_dir() else 0o644)
    assert done.returncode == 2, done.stderr
    message = done.stderr.strip()
    assert message.startswith(f"neardup: LevelDB store {store} cannot be written by this process (")
    assert "Permission denied" in message and "must be writable" in message
    assert "repair" not in message and "damaged" not in message


def test_a_leveldb_folder_that_cannot_be_made_is_not_sent_to_repair(tmp_path):
    parent = tmp_path / "locked"
    parent.mkdir(mode=0o555)
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    try:
        denied = neardup("dedup", str(feed(tmp_path)), "--store", f"leveldb://{parent}/store", prefix=unprivileged())
    finally:
        parent.chmod(0o755)
    blocked = neardup("dedup", str(feed(tmp_path)), "--store", f"leveldb://{not_a_folder}/store")
    for done, why in ((denied, "Permission denied"), (blocked, "Not a directory")):
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"neardup: cannot create the LevelDB store folder {done.args[-1][10:]}: {why}")
        assert "repair" not in done.stderr
    assert not (parent / "store").exists()


# -- which field keys a record, and what a content key means ------------------------------------


def test_dedup_keys_records_by_url_and_says_so(tmp_path):
    out = tmp_path / "out.jsonl"
    done = neardup("dedup", str(feed(tmp_path)), "-o", str(out), "--no-progress", fresh=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == "neardup: records are keyed by their 'url' field (--key-field names another)"
    written = read_jsonl(out)
    assert [r["duplicate_of"] for r in written] == [None, "https://a.example/rail", "https://a.example/rail", None]
    assert done.stderr.splitlines()[-1] == "4 records: 2 unique, 2 duplicates, 0 skipped"


def test_key_field_given_wins(tmp_path):
    records = [{"id": f"n{i}", **r} for i, r in enumerate(read_jsonl(feed(tmp_path)))]
    out = tmp_path / "out.jsonl"
    done = neardup("dedup", str(jsonl(tmp_path / "ids.jsonl", records)), "-o", str(out), "--key-field", "id")
    assert done.returncode == 0 and "keyed by" not in done.stderr, done.stderr
    assert [r["duplicate_of"] for r in read_jsonl(out)] == [None, "n0", "n0", None]


def test_a_traditional_copy_without_a_key_is_a_duplicate_not_a_revisit(tmp_path):
    """Records without url or id are keyed by their content: the whole record, exactly. A copy
    whose text folds to the story's (Traditional script) is another record, judged as a copy; the
    same record seen again (a rerun, or the output of the first run) is a revisit."""
    keyless = [{"title": r["title"], "text": r["text"]} for r in read_jsonl(feed(tmp_path))]
    source, store = jsonl(tmp_path / "keyless.jsonl", keyless), f"leveldb://{tmp_path / 'store'}"
    out = tmp_path / "out.jsonl"
    done = neardup("dedup", str(source), "-o", str(out), "--store", store)
    assert done.returncode == 0, done.stderr
    assert "the records have no 'url' or 'id' field: each is keyed by its content" in done.stderr
    written = read_jsonl(out)
    first = written[0]["duplicate_of"], written[0]["similar_id"]
    assert first[0] is None and first[1] is not None
    assert written[2]["duplicate_of"] is not None and written[2]["duplicate_of"] == written[1]["duplicate_of"]
    assert written[2]["similar_id"] == written[1]["similar_id"] == first[1]
    assert done.stderr.splitlines()[-1] == "4 records: 2 unique, 2 duplicates, 0 skipped"
    # The same records again, as they came and as the first run wrote them: the first copies are
    # revisits, the copies duplicates still.
    for again in (source, out):
        rerun = neardup("dedup", str(again), "-o", str(tmp_path / "again.jsonl"), "--store", store)
        assert rerun.stderr.splitlines()[-1] == "4 records: 0 unique, 2 revisits, 2 duplicates, 0 skipped"


# -- a crawl's feed of HTML, and a run that judges nothing ---------------------------------------


def test_a_run_that_judges_nothing_exits_4_with_the_reason(tmp_path):
    records = [{"url": r["url"], "body": r["text"]} for r in read_jsonl(feed(tmp_path))]
    source = jsonl(tmp_path / "body.jsonl", records)
    out = tmp_path / "out.jsonl"
    done = neardup("dedup", str(source), "-o", str(out))
    assert done.returncode == 4, done.stderr
    assert done.stderr.splitlines()[-2:] == [
        "4 records: 0 unique, 0 duplicates, 4 skipped",
        "neardup: no record was judged: 4 of 4 lines skipped (4 no usable text in field 'text' or HTML in field "
        "'html'); the records have the fields 'body', 'url': --text-field names the field holding the text, "
        "--html-field the one holding a page's HTML",
    ]
    assert read_jsonl(out) == records  # passed through, nothing lost
    store = f"leveldb://{tmp_path / 'store'}"
    named = neardup("dedup", str(source), "-o", str(out), "--text-field", "body", "--store", store)
    assert named.returncode == 0 and named.stderr.splitlines()[-1] == "4 records: 2 unique, 2 duplicates, 0 skipped"
    query = neardup("query", str(source), "--store", store)
    assert query.returncode == 4 and "no record was judged" in query.stderr


def test_the_review_page_of_dedup_heads_each_copy_with_its_title_and_url(tmp_path):
    page = tmp_path / "review.html"
    done = neardup("dedup", str(feed(tmp_path)), "-o", os.devnull, "--report", str(page))
    assert done.returncode == 0, done.stderr
    document = page.read_text(encoding="utf-8")
    headings = re.findall(r'<h2 id="pair-\d+">(.*?) <small>duplicate of (.*?)</small></h2>', document)
    assert headings == [("转：春运客流创新高", "春运客流创新高"), ("春運客流創新高", "春运客流创新高")]
    assert '<a href="https://tw.example/rail">https://tw.example/rail</a>' in document
    assert "2 stories kept in this run" in document
    listed = re.findall(r'<li value="\d+">(.*?) <small>', document.split('id="stories"')[1])
    assert listed == ["春运客流创新高", "省博物馆新馆下月开放"]
