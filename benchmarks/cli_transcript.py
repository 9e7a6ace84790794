"""Runs a fixed set of ``neardup`` commands and prints what each wrote, so that two checkouts can be
compared byte for byte (a refactoring must not change a command's output).

    python benchmarks/cli_transcript.py > before.txt     # in one checkout
    python benchmarks/cli_transcript.py > after.txt      # in the other
    diff before.txt after.txt

The commands run in order in one new temporary folder holding the same input files (a command
reads the store the ones before it wrote); paths of that folder are written as ``$TMP`` and the
store's timestamps as ``$TIME``, so the transcript is the same on every run.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

STORY = (
    "本报北京三月十二日电 记者从国家铁路集团获悉，今年春运期间全国铁路累计发送旅客超过三亿人次，"
    "同比增长百分之八点六，创下历史同期新高。\n"
    "据介绍，为应对客流高峰，铁路部门在节前节后共加开旅客列车一万二千余列，"
    "其中夜间高铁和跨线动车组的开行数量比去年明显增加。多个车站延长了售票窗口的服务时间。\n"
    "铁路部门还表示，春运期间电子客票的使用比例进一步提高，刷身份证进站已覆盖全部高铁车站，"
    "旅客平均进站时间缩短到十秒以内。下一步将继续优化列车运行图，提升中西部地区的运输能力。"
)
OTHER = (
    "湖南省农业农村厅二十日发布消息，今年全省早稻收获面积稳中有增，平均亩产比上年提高十二公斤，"
    "优质稻比例达到百分之七十以上。\n当地农技人员介绍，今年入夏后部分地区遭遇持续高温，"
    "各地及时组织灌溉和病虫害统防统治，把损失降到了最低。一些种粮大户采用无人机飞防和机械化烘干，"
    "每亩节约成本近百元。\n省里同时启动了最低收购价执行预案，在主产县设立收购网点四百多个。"
)
THIRD = (
    "记者日前从省博物馆了解到，经过两年多的改造提升，博物馆新馆将于下月正式对公众开放，"
    "新增展厅面积六千平方米，首批展出文物超过三千件。\n新馆的常设展览以本地区的历史发展为主线，"
    "分为远古文明、青铜时代、丝路往来和近代风云四个部分。其中一件出土于汉代墓葬的鎏金铜灯，是首次与观众见面。\n"
    "馆方表示，开馆后将实行预约参观，每天限流一万人次，并推出面向中小学生的研学课程。"
)


def records() -> list[dict]:
    banner = "转载自滨江日报网\n"
    return [
        {"id": "a1", "url": "https://a.example/rail", "text": STORY},
        {"id": "a2", "url": "https://a.example/rice", "text": OTHER},
        {"id": "b1", "url": "https://b.example/rail", "text": banner + STORY + "\n（责任编辑：李明）"},
        {"id": "c1", "url": "https://c.example/rail", "text": STORY.replace("，", ",").replace("记者", "本报记者")},
        {"id": "d1", "url": "https://d.example/rice", "text": OTHER.rsplit("\n", 1)[0]},
        {"id": "a3", "url": "https://a.example/museum", "text": THIRD},
        {"id": "s1", "url": "https://s.example/short", "text": "很短的一句话。"},
        {"id": "x1", "url": "https://x.example/notext", "body": STORY},
        {"id": "e1", "url": "https://e.example/museum", "text": THIRD.replace("\n", "\n\n")},
        {"id": "a1", "url": "https://a.example/rail", "text": STORY},
    ]


def commands() -> list[str]:
    lv = "leveldb://$TMP/store"
    return [
        "--version",
        "dedup in.jsonl -o out.jsonl --no-progress",
        "dedup in.jsonl --no-progress",
        "dedup in.jsonl --no-progress --drop",
        "dedup in.jsonl --no-progress --explain",
        "dedup in.jsonl --no-progress --key-field url",
        "dedup in.jsonl --no-progress --key-field url --revisit drop",
        "dedup in.jsonl --no-progress --threshold 0.9",
        "dedup in.jsonl --no-progress --min-chars 200",
        "dedup in.jsonl --no-progress --methods nshash",
        "dedup in.jsonl --no-progress --methods simhash,sketch",
        "dedup in.jsonl --no-progress --prefer longest",
        "dedup in.jsonl --no-progress --prefer source --prefer-sources c.example --key-field url",
        "dedup in.jsonl --no-progress --related",
        "dedup in.jsonl --no-progress --text-field body",
        "dedup in.jsonl --no-progress --duplicate-of-field dup --similar-id-field sid",
        f"dedup in.jsonl -o out.jsonl --no-progress --store {lv} --keep-text",
        f"dedup in.jsonl --no-progress --store {lv}",
        f"info --store {lv}",
        f"export --store {lv}",
        f"list --store {lv}",
        f"lookup a1 --store {lv}",
        f"lookup nothing --store {lv}",
        f"query in.jsonl --no-progress --store {lv}",
        f"query in.jsonl --no-progress --store {lv} -k 1 --min-similarity 0.5",
        f"query in.jsonl --no-progress --store {lv} --related",
        f"dedup in.jsonl --no-progress --store {lv} --namespace other",
        f"info --store {lv} --namespace other",
        f"purge --store {lv} --older-than 100000",
        "explain a.txt b.txt --color never",
        "explain a.txt c.txt --color never",
        "explain a.txt b.txt --color never --html side.html",
        "explain a.txt short.txt --color never",
        "explain missing.txt b.txt --color never",
        "dedup missing.jsonl --no-progress",
        "dedup bad.jsonl --no-progress",
        "dedup in.jsonl --no-progress --threshold 2",
        "dedup in.jsonl --no-progress --store nosuch://x",
        "dedup in.jsonl --no-progress -o in.jsonl",
        "dedup in.jsonl --no-progress --report review.html",
        "dedup in.jsonl --no-progress --tokenizer jieba",
    ]


INPUTS = ("in.jsonl", "bad.jsonl", "a.txt", "b.txt", "c.txt", "short.txt")


def write_inputs(folder: Path) -> None:
    (folder / "in.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records()) + "\n")
    (folder / "bad.jsonl").write_text('{"id": "1", "text": "x"}\nnot json\n[1, 2]\n', encoding="utf-8")
    (folder / "a.txt").write_text(STORY, encoding="utf-8")
    (folder / "b.txt").write_text("转载自滨江日报网\n" + STORY.replace("，", ","), encoding="utf-8")
    (folder / "c.txt").write_text(OTHER, encoding="utf-8")
    (folder / "short.txt").write_text("很短。", encoding="utf-8")


def run(command: str, folder: Path) -> str:
    tmp = str(folder)
    argv = [sys.executable, "-m", "scrapy_neardup", *shlex.split(command.replace("$TMP", tmp))]
    env = dict(os.environ, COLUMNS="80", PYTHONHASHSEED="0")
    done = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, env=env, timeout=300)
    shown = [f"$ neardup {command}", f"exit {done.returncode}", "-- stdout", done.stdout, "-- stderr", done.stderr]
    for path in sorted(folder.iterdir()):
        if path.is_file() and path.name not in INPUTS:
            data = path.read_bytes()
            shown.append(f"-- file {path.name}: {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()[:16]}")
    text = "\n".join(shown).replace(tmp, "$TMP")
    text = re.sub(r'"time": [0-9.e+]+', '"time": $TIME', text)
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "$TIME", text)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="neardup-transcript-") as tmp:
        write_inputs(Path(tmp))
        for command in commands():
            print(run(command, Path(tmp)))
            print()


if __name__ == "__main__":
    main()
