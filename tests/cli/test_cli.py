import json
import os
import signal
import stat
import subprocess
import sys
import time

import pytest
from support import warm_python
from support.corpus import ARTICLES, random_news, reprint, text, with_disclaimer
from support.news_corpus import ARTICLES as NEWS
from support.two_feeds import EAST, WEST, feed, reprinted

from scrapy_neardup import open_store
from scrapy_neardup.cli import main


def write_lines(path, records):
    with open(path, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(record if isinstance(record, str) else json.dumps(record, ensure_ascii=False))
            handle.write("\n")


def read_lines(path):
    return list(open(path, encoding="utf-8").read().splitlines())


def in_progress(target):
    """The output of a running dedup: it is written beside the target under a temporary name
    and renamed when the run ends."""
    partial = sorted(target.parent.glob(f".{target.name}.*.partial"))
    return partial[0] if partial else target


def corpus_records():
    records = []
    for name in ARTICLES:
        records.append({"id": f"{name}/original", "text": with_disclaimer(name), "story": name})
    for name in ARTICLES:
        records.append({"id": f"{name}/reprint", "text": reprint(name, cut=0.9), "story": name})
    return records


def test_dedup_marks_every_reprint_and_keeps_every_record(tmp_path, capsys):
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    records = corpus_records()
    write_lines(source, records)
    assert main(["dedup", str(source), "-o", str(target), "--store", f"leveldb://{tmp_path}/db"]) == 0
    out = [json.loads(line) for line in read_lines(target)]
    assert [r["id"] for r in out] == [r["id"] for r in records]
    stories = {}
    for record in out:
        if record["story"] in stories:
            assert record["duplicate_of"] == stories[record["story"]]["id"], record["id"]
            assert record["similar_id"] == stories[record["story"]]["similar_id"]
        else:
            assert record["duplicate_of"] is None, record["id"]
            stories[record["story"]] = record
    assert len({r["similar_id"] for r in out}) == len(stories)
    summary = capsys.readouterr().err.strip().splitlines()[-1]
    assert (
        summary == f"{len(records)} records: {len(stories)} unique, {len(records) - len(stories)} duplicates, 0 skipped"
    )


def test_drop_writes_first_seen_records_only(tmp_path):
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_lines(source, corpus_records())
    assert main(["dedup", str(source), "-o", str(target), "--drop"]) == 0
    kept = [json.loads(line)["id"] for line in read_lines(target)]
    assert kept == [f"{n}/original" for n in ARTICLES]


def test_a_rerun_passes_revisits_or_drops_them_and_writes_records_of_another_story(tmp_path, capsys):
    source, target, store = tmp_path / "in.jsonl", tmp_path / "out.jsonl", f"leveldb://{tmp_path}/db"
    records = corpus_records()
    write_lines(source, records)
    assert main(["dedup", str(source), "-o", str(target), "--store", store]) == 0
    first = {r["id"]: r for r in map(json.loads, read_lines(target))}
    assert main(["dedup", str(source), "-o", str(target), "--store", store]) == 0
    again = [json.loads(line) for line in read_lines(target)]
    originals = [r for r in again if r["id"].endswith("/original")]
    assert [r["duplicate_of"] for r in originals] == [None] * len(ARTICLES)  # revisits, passed
    assert [r["similar_id"] for r in originals] == [first[r["id"]]["similar_id"] for r in originals]
    assert all(
        r["duplicate_of"] == r["id"].replace("reprint", "original") for r in again if r["id"].endswith("/reprint")
    )
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"{len(records)} records: 0 unique, {len(ARTICLES)} revisits, {len(ARTICLES)} duplicates, 0 skipped"
    )
    # The battery record tells another story now: written as a story of its own, stored beside
    # the battery story (a key collision, said with its line); the rest dropped.
    changed = [
        {**r, "text": NEWS["port"] if r["id"] == "battery/original" else r["text"]} for r in records[: len(ARTICLES)]
    ]
    write_lines(source, changed)
    assert main(["dedup", str(source), "-o", str(target), "--store", store, "--revisit", "drop"]) == 0
    written = [json.loads(line) for line in read_lines(target)]
    assert [(r["id"], r["duplicate_of"]) for r in written] == [("battery/original", None)]
    assert written[0]["similar_id"] not in {r["similar_id"] for r in first.values()}
    said = capsys.readouterr().err.strip().splitlines()
    number = [r["id"] for r in changed].index("battery/original") + 1
    assert said[-2:] == [
        f"neardup: {source}:{number}: key collision: battery/original already holds another story; this record "
        "is stored beside it as a story of its own and both are kept (--key-field should tell sources apart)",
        f"{len(changed)} records: 1 unique (1 key collisions), {len(changed) - 1} revisits, 0 duplicates, 0 skipped",
    ]


def test_two_feeds_numbering_their_items_alike_keep_every_story(tmp_path, capsys):
    """Two feeds with ids 0-9 into one store: the second feed's records are key collisions,
    each said with its line and counted, stored beside the first feed's stories; reprints of
    both feeds are then caught, and lookup lists both stories of a collided id."""
    store = f"leveldb://{tmp_path}/db"
    for name, stories in (("east", EAST), ("west", WEST)):
        write_lines(tmp_path / f"{name}.jsonl", [{"id": key, "text": body} for key, body in feed(stories)])
    assert main(["dedup", str(tmp_path / "east.jsonl"), "-o", str(tmp_path / "east.out"), "--store", store]) == 0
    assert capsys.readouterr().err.strip().splitlines()[-1] == "10 records: 10 unique, 0 duplicates, 0 skipped"
    assert main(["dedup", str(tmp_path / "west.jsonl"), "-o", str(tmp_path / "west.out"), "--store", store]) == 0
    said = capsys.readouterr().err.strip().splitlines()
    assert said[-1] == "10 records: 10 unique (10 key collisions), 0 duplicates, 0 skipped"
    assert [line for line in said if "key collision:" in line] == [
        f"neardup: {tmp_path / 'west.jsonl'}:{n + 1}: key collision: {n} already holds another story; this record "
        "is stored beside it as a story of its own and both are kept (--key-field should tell sources apart)"
        for n in range(10)
    ]
    written = [json.loads(line) for name in ("east", "west") for line in read_lines(tmp_path / f"{name}.out")]
    assert [(r["id"], r["duplicate_of"]) for r in written] == [(str(n % 10), None) for n in range(20)]
    stories = {r["text"]: r["similar_id"] for r in written}
    assert len(set(stories.values())) == 20

    copies = [{"id": f"portal/{n}", "text": reprinted(body)} for n, body in enumerate(EAST + WEST)]
    write_lines(tmp_path / "copies.jsonl", copies)
    assert main(["dedup", str(tmp_path / "copies.jsonl"), "-o", str(tmp_path / "copies.out"), "--store", store]) == 0
    assert capsys.readouterr().err.strip().splitlines()[-1] == "20 records: 0 unique, 20 duplicates, 0 skipped"
    tagged = [json.loads(line) for line in read_lines(tmp_path / "copies.out")]
    assert [(r["duplicate_of"], r["similar_id"]) for r in tagged] == [
        (str(n % 10), stories[body]) for n, body in enumerate(EAST + WEST)
    ]

    assert main(["lookup", "3", "--store", store]) == 0
    out, err = capsys.readouterr()
    assert [json.loads(line)["similar_id"] for line in out.splitlines()] == [stories[EAST[3]], stories[WEST[3]]]
    assert "key '3' holds 2 stories (a key collision" in err

    # Both feeds in one file, into a new store: the same, the warnings cut short.
    write_lines(tmp_path / "both.jsonl", [{"id": key, "text": body} for key, body in feed(EAST) + feed(WEST)])
    both = ["dedup", str(tmp_path / "both.jsonl"), "-o", str(tmp_path / "both.out"), "--max-warnings", "3"]
    assert main([*both, "--store", f"leveldb://{tmp_path}/db2"]) == 0
    said = capsys.readouterr().err.strip().splitlines()
    assert len([line for line in said if "key collision:" in line]) == 3
    assert said[-2:] == [
        "neardup: 7 more key collisions not shown",
        "20 records: 20 unique (10 key collisions), 0 duplicates, 0 skipped",
    ]


def test_bad_lines_are_reported_counted_and_passed_through(tmp_path, capsys):
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    lines = [
        {"id": "a", "text": text("battery")},
        "{this is not json",
        {"id": "no-text"},
        {"id": "none", "text": None},
        {"id": "number", "text": 42},
        "[1, 2, 3]",
        "",
        {"id": "short", "text": "短讯。"},
        "\x00\x01\x02 binary junk \udcff".encode("utf-8", "surrogateescape").decode("utf-8", "replace"),
        {"id": "b", "text": reprint("battery")},
    ]
    write_lines(source, lines)
    raw_in = read_lines(source)
    assert main(["dedup", str(source), "-o", str(target), "--drop"]) == 0
    raw_out = read_lines(target)
    # Everything but the dropped reprint comes out, the bad lines byte for byte.
    assert len(raw_out) == len(raw_in) - 1
    for number in (1, 2, 3, 4, 5, 6, 7, 8):
        assert raw_out[number] == raw_in[number]
    err = capsys.readouterr().err
    assert "in.jsonl:2: not valid JSON" in err
    assert "in.jsonl:3: no usable text in field 'text'" in err
    assert "in.jsonl:6: not a JSON object" in err
    assert "in.jsonl:8: text too short to judge" in err
    assert err.strip().splitlines()[-1] == "10 records: 1 unique, 1 duplicates, 8 skipped"


def test_stdin_to_stdout(tmp_path):
    payload = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in corpus_records())
    done = warm_python.run(
        [sys.executable, "-m", "scrapy_neardup.cli", "dedup", "-", "--drop", "--no-progress"],
        input=payload,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == len(ARTICLES)
    assert "records:" in done.stderr


def test_the_package_runs_as_the_command():
    """``python -m scrapy_neardup`` is the ``neardup`` command too."""
    payload = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in corpus_records())
    done = warm_python.run(
        [sys.executable, "-m", "scrapy_neardup", "dedup", "-", "--drop", "--no-progress"],
        input=payload,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == [f"{name}/original" for name in ARTICLES]


def test_a_store_of_another_recipe_stops_before_reading(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    write_lines(source, corpus_records())
    store = f"leveldb://{tmp_path}/db"
    assert main(["dedup", str(source), "-o", os.devnull, "--store", store]) == 0
    assert main(["dedup", str(source), "-o", os.devnull, "--store", store, "--nshash-n", "3"]) == 2
    assert "another recipe" in capsys.readouterr().err


def test_a_run_killed_halfway_leaves_a_store_that_knows_everything_written(tmp_path):
    """SIGKILL in the middle: the store reopens, and every record in the output is in it."""
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    names = list(ARTICLES)
    with open(source, "w", encoding="utf-8") as handle:
        for i in range(5000):  # distinct texts: rotate and number the articles
            body = "\n".join(text(names[(i + k) % len(names)]) for k in range(3))
            record = {"id": f"doc-{i}", "text": f"第{i}号稿件。编号{i * 7919}的报道内容如下。\n{body}"}
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    store = tmp_path / "db"
    process = warm_python.popen(
        [
            sys.executable,
            "-m",
            "scrapy_neardup.cli",
            "dedup",
            str(source),
            "-o",
            str(target),
            "--store",
            f"leveldb://{store}",
            "--no-progress",
        ],
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 120
    while time.time() < deadline:
        if in_progress(target).exists() and len(read_lines(in_progress(target))) > 200:
            break
        time.sleep(0.2)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert not target.exists()  # a killed run leaves its output under the temporary name
    # The kill may cut the last line, even inside a character: only whole lines count.
    lines = in_progress(target).read_bytes().decode("utf-8", errors="replace").splitlines()
    written = [json.loads(line) for line in lines if line.endswith("}")]
    assert len(written) > 200
    with open_store(f"leveldb://{store}") as reopened:
        known = {reopened.get(i).key for i in range(1, reopened.count() + 50) if reopened.get(i)}
    unique_written = {r["id"] for r in written if r["duplicate_of"] is None}
    assert unique_written <= known


def test_worker_processes_give_the_same_output(tmp_path):
    source = tmp_path / "in.jsonl"
    write_lines(source, corpus_records() + ["not json"] + corpus_records()[:3])
    outputs = []
    for workers in ("0", "2"):
        target = tmp_path / f"out-{workers}.jsonl"
        assert main(["dedup", str(source), "-o", str(target), "--workers", workers]) == 0
        outputs.append(read_lines(target))
    assert outputs[0] == outputs[1] and len(outputs[0]) == len(corpus_records()) + 4


def test_dedup_on_redis_with_a_time_window_creates_a_bounded_namespace(tmp_path, redis_url):
    source = tmp_path / "in.jsonl"
    write_lines(source, corpus_records())
    args = ["dedup", str(source), "-o", os.devnull, "--store", redis_url, "--ttl", "3600"]
    assert main(args) == 0
    with open_store(redis_url, ttl=3600) as store:  # the pipeline opens it with NEARDUP_TTL
        assert store.count() == len(ARTICLES)


def test_a_store_lost_mid_run_stops_at_the_first_line_not_written(tmp_path):
    """The Redis server dies mid-run: the run stops with exit code 3 and names the first line
    it did not write; every line before it is in the output, in order."""
    from support.redis_server import start_redis

    server = start_redis()
    target = tmp_path / "out.jsonl"
    names = list(ARTICLES)
    lines = [
        json.dumps({"id": f"doc-{i}", "text": f"第{i}号稿件。\n" + text(names[i % len(names)])}, ensure_ascii=False)
        for i in range(600)
    ]
    process = warm_python.popen(
        [
            sys.executable,
            "-m",
            "scrapy_neardup.cli",
            "dedup",
            "-",
            "-o",
            str(target),
            "--flush",
            "--no-progress",
            "--store",
            server.url(),
        ],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    try:
        process.stdin.write("\n".join(lines[:300]) + "\n")
        process.stdin.flush()  # 4 batches and part of a fifth, which waits for more lines
        deadline = time.time() + 120
        while time.time() < deadline and not (
            in_progress(target).exists() and len(read_lines(in_progress(target))) >= 192
        ):
            time.sleep(0.1)
        assert len(read_lines(in_progress(target))) == 192
    finally:
        server.stop()
    try:
        process.stdin.write("\n".join(lines[300:]) + "\n")
        process.stdin.close()
    except BrokenPipeError:
        pass  # it stopped reading at the first batch the store could not take
    assert process.wait(timeout=120) == 3
    written = [json.loads(line)["id"] for line in read_lines(target)]
    assert 192 <= len(written) < 600 and written == [f"doc-{i}" for i in range(len(written))]
    stderr = process.stderr.read()
    assert f"-:{len(written) + 1}: store failed" in stderr
    assert "this line and the ones after it were not written" in stderr


def test_query_lists_the_stored_first_copies_and_stores_nothing(tmp_path, capsys):
    names = list(ARTICLES)
    stored, store = tmp_path / "stored.jsonl", f"leveldb://{tmp_path}/db"
    write_lines(stored, [{"id": f"{name}/original", "text": with_disclaimer(name)} for name in names[:-1]])
    assert main(["dedup", str(stored), "-o", str(tmp_path / "kept.jsonl"), "--store", store]) == 0
    asked, answered = tmp_path / "ask.jsonl", tmp_path / "answers.jsonl"
    records = [{"id": f"{name}/reprint", "text": reprint(name, cut=0.9)} for name in names]
    write_lines(asked, records[:2] + ["{not json"] + records[2:])
    capsys.readouterr()
    assert main(["query", str(asked), "-o", str(answered), "--store", store, "-k", "2"]) == 0
    lines = read_lines(answered)
    assert lines[2] == "{not json"
    out = [json.loads(line) for line in lines[:2] + lines[3:]]
    assert [r["id"] for r in out] == [r["id"] for r in records]
    for name, record in zip(names[:-1], out):
        first = record["similar"][0]
        assert (first["key"], first["duplicate"]) == (f"{name}/original", True)
        assert set(first) == {"key", "similarity", "jaccard", "duplicate", "similar_id"}
        assert len(record["similar"]) <= 2
    assert out[-1]["similar"] == []
    err = capsys.readouterr().err
    assert f"{asked}:3: not valid JSON" in err
    assert err.strip().splitlines()[-1] == (
        f"{len(records) + 1} records: {len(names) - 1} with a duplicate stored, "
        "0 with similar entries only, 1 with none, 1 skipped"
    )
    with open_store(store, create=False) as opened:
        assert opened.count() == len(names) - 1


def test_query_of_a_store_that_does_not_exist_creates_none(tmp_path, capsys):
    asked = tmp_path / "ask.jsonl"
    write_lines(asked, [{"id": "x", "text": text("library")}])
    assert main(["query", str(asked), "--store", f"leveldb://{tmp_path}/none"]) == 2
    assert "there is no LevelDB store" in capsys.readouterr().err
    assert not (tmp_path / "none").exists()
    assert main(["query", str(asked), "--store", "leveldb://x", "-k", "0"]) == 2


def test_export_list_and_lookup_show_every_stored_record(tmp_path, capsys, store_uri):
    source = tmp_path / "in.jsonl"
    records = corpus_records()
    write_lines(source, records)
    assert main(["dedup", str(source), "-o", str(tmp_path / "out.jsonl"), "--store", store_uri]) == 0
    capsys.readouterr()
    assert main(["export", "--store", store_uri, "-o", str(tmp_path / "export.jsonl")]) == 0
    exported = [json.loads(line) for line in read_lines(tmp_path / "export.jsonl")]
    assert [r["key"] for r in exported] == [r["id"] for r in records if r["id"].endswith("/original")]
    assert all(set(r) == {"key", "similar_id", "time", "length", "pending"} and r["length"] > 50 for r in exported)
    assert main(["list", "--store", store_uri]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[3] for line in listed] == [r["key"] for r in exported]
    assert main(["lookup", exported[1]["key"], "--store", store_uri]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == [exported[1]]
    assert main(["lookup", "nothing/here", "--store", store_uri]) == 1
    assert "no record with key 'nothing/here'" in capsys.readouterr().err


def test_info_shows_a_store_of_another_recipe_with_what_differs(tmp_path, capsys):
    from scrapy_neardup import Detector, Recipe

    store = f"leveldb://{tmp_path}/db"
    with open_store(store, recipe=Recipe(nshash_n=7)) as opened:
        Detector(opened).check("a", text("library"))
    assert main(["info", "--store", store]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["documents"] == 1 and shown["recipe"]["nshash_n"] == 7
    assert shown["differs"] == {"nshash_n": {"stored": 7, "this version": 5}}
    assert main(["export", "--store", store]) == 0
    assert json.loads(capsys.readouterr().out)["key"] == "a"
    write_lines(tmp_path / "in.jsonl", [{"id": "b", "text": text("library")}])
    assert main(["dedup", str(tmp_path / "in.jsonl"), "--store", store]) == 2  # writing is still refused
    assert "another recipe" in capsys.readouterr().err


# Outputs that a rename would destroy, inputs appended to, and runs stopped early.


def run_cli(*args, stdin=None, stdout=None):
    return warm_python.run(
        [sys.executable, "-m", "scrapy_neardup.cli", *map(str, args), "--no-progress"],
        stdin=stdin,
        stdout=stdout if stdout is not None else subprocess.PIPE,
        stderr=subprocess.PIPE,
        timeout=120,
    )


def test_a_device_or_pipe_output_is_written_not_replaced(tmp_path):
    """A rename would put a regular file where the device or pipe was (/dev/null for everyone)."""
    source, pipe = tmp_path / "in.jsonl", tmp_path / "pipe"
    write_lines(source, corpus_records())
    os.mkfifo(pipe)
    reader = warm_python.popen(["cat", str(pipe)], stdout=subprocess.PIPE)
    done = run_cli("dedup", source, "-o", pipe)
    received = reader.communicate(timeout=60)[0].decode().splitlines()
    assert done.returncode == 0 and len(received) == len(corpus_records())
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "pipe"]


@pytest.mark.parametrize("how", ["hard link", "stdout appended to the input"])
def test_more_outputs_that_are_the_input_are_refused(tmp_path, how):
    source = tmp_path / "in.jsonl"
    write_lines(source, corpus_records())
    before = source.read_bytes()
    if how == "hard link":
        os.link(source, tmp_path / "other.jsonl")
        done = run_cli("dedup", source, "-o", tmp_path / "other.jsonl")
    else:
        with open(source, "ab") as stdout:
            done = run_cli("dedup", source, stdout=stdout)
    err = done.stderr.decode()
    assert done.returncode == 2 and err.count("\n") == 1 and "is the input file" in err, err
    assert source.read_bytes() == before


def test_lines_too_deep_or_with_huge_numbers_pass_through(tmp_path):
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    deep = "[" * 100000 + "]" * 100000
    huge = '{"id": "n", "n": ' + "9" * 5000 + ', "text": "x"}'
    write_lines(source, [corpus_records()[0], deep, huge, corpus_records()[-1]])
    done = run_cli("dedup", source, "-o", target)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert read_lines(target)[1:3] == [deep, huge]
    assert "in.jsonl:2: not valid JSON here (nested too deeply to read)" in err
    assert "in.jsonl:3: not valid JSON here" in err
    assert err.strip().splitlines()[-1] == "4 records: 2 unique, 0 duplicates, 2 skipped"


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_run_stopped_early_keeps_the_old_output_and_leaves_no_partial_file(tmp_path, stop):
    target = tmp_path / "out.jsonl"
    target.write_text("yesterday's output\n")
    process = warm_python.popen(
        [sys.executable, "-m", "scrapy_neardup.cli", "dedup", "-", "-o", str(target), "--overwrite", "--no-progress"],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdin.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in corpus_records() * 12).encode())
    process.stdin.flush()  # stdin stays open: the run waits for more lines after these
    deadline = time.time() + 120
    while time.time() < deadline and not any(p.stat().st_size for p in tmp_path.glob(".out.jsonl.*.partial")):
        time.sleep(0.1)
    assert any(tmp_path.glob(".out.jsonl.*.partial"))
    process.send_signal(stop)
    assert process.wait(timeout=60) == 130
    assert target.read_text() == "yesterday's output\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


@pytest.mark.parametrize("workers", [[], ["--workers", "2"]])
def test_a_stopped_run_keeps_the_lines_of_the_stories_its_store_took(tmp_path, workers):
    """A stopped run once removed its partial output while its store kept the stories: a rerun
    took them for revisits, and with --revisit drop they were in no output at all. Ctrl-C
    reaches the whole process group, as a terminal sends it: worker processes once each
    printed a KeyboardInterrupt traceback."""
    target, store = tmp_path / "out.jsonl", f"leveldb://{tmp_path / 'store'}"
    target.write_text("yesterday's output\n")
    records = [{"id": f"story/{n}", "text": news} for n, news in enumerate(random_news(150))]
    command = [
        sys.executable,
        "-m",
        "scrapy_neardup.cli",
        "dedup",
        "-",
        "-o",
        str(target),
        "--overwrite",
        "--store",
        store,
    ]
    process = subprocess.Popen(
        [*command, "--no-progress", *workers], stdin=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    process.stdin.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode())
    process.stdin.flush()  # stdin stays open: the run waits for more lines, a batch handed to the store
    deadline = time.time() + 120
    while time.time() < deadline and not any(p.stat().st_size for p in tmp_path.glob(".out.jsonl.*.partial")):
        time.sleep(0.1)
    time.sleep(1)
    os.killpg(process.pid, signal.SIGINT)
    time.sleep(1)
    process.stdin.close()  # with --workers a thread is reading the next lines: it ends here
    assert process.wait(timeout=60) == 130
    err = process.stderr.read().decode()
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert target.read_text() == "yesterday's output\n"
    (partial,) = tmp_path.glob(".out.jsonl.*.partial")
    kept = [json.loads(line)["id"] for line in read_lines(partial)]
    assert f"the store took the records of lines 1-{len(kept)}, and they are written in {partial}" in err, err
    assert kept == [r["id"] for r in records[: len(kept)]] and len(kept) >= 64
    with open_store(store, create=False) as opened:
        assert sorted(record.key for record in opened.records()) == sorted(kept)
    source = tmp_path / "in.jsonl"
    write_lines(source, records)
    rerun = run_cli("dedup", source, "-o", tmp_path / "rest.jsonl", "--store", store, "--revisit", "drop")
    assert rerun.returncode == 0
    assert kept + [json.loads(line)["id"] for line in read_lines(tmp_path / "rest.jsonl")] == [r["id"] for r in records]


def excerpt_records():
    """Each story's excerpt under a source line, its complete article later, then a copy
    with the end cut (near-complete)."""
    records = []
    for name in ARTICLES:
        kept = "\n".join(text(name).split("\n")[:3])
        records.append({"id": f"https://portal.example/{name}", "text": f"来源：滨江日报\n{kept}", "site": "portal"})
    for name in ARTICLES:
        records.append({"id": f"https://a.example/{name}", "text": text(name), "site": "daily"})
        records.append({"id": f"https://c.example/{name}", "text": text(name)[:-15], "site": "mirror"})
    return records


def test_dedup_prefer_longest_replaces_excerpts_with_the_complete_article(tmp_path, capsys, store_uri):
    """On Redis the records go in batches: a batch's later copies see its replacements."""
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_lines(source, excerpt_records())
    store = store_uri
    assert main(["dedup", str(source), "-o", str(target), "--store", store, "--prefer", "longest", "--drop"]) == 0
    out = {record["id"]: record for record in map(json.loads, read_lines(target))}
    assert sorted(out) == sorted(
        [f"https://portal.example/{n}" for n in ARTICLES] + [f"https://a.example/{n}" for n in ARTICLES]
    )
    for name in ARTICLES:
        complete, portal = out[f"https://a.example/{name}"], out[f"https://portal.example/{name}"]
        assert complete["replaces"] == portal["id"] and complete["similar_id"] == portal["similar_id"]
        assert "replaces" not in portal
    summary = capsys.readouterr().err.strip().splitlines()[-1]
    n = len(ARTICLES)
    assert summary == f"{3 * n} records: {2 * n} unique ({n} replacing a stored copy), {n} duplicates, 0 skipped"


def test_dedup_prefer_source_ranks_by_the_source_field(tmp_path):
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_lines(source, excerpt_records())
    assert (
        main(
            [
                "dedup",
                str(source),
                "-o",
                str(target),
                "--prefer",
                "source",
                "--prefer-sources",
                "mirror,daily",
                "--source-field",
                "site",
                "--replaces-field",
                "supersedes",
            ]
        )
        == 0
    )
    out = [json.loads(line) for line in read_lines(target)]
    name = next(iter(ARTICLES))
    by_id = {record["id"]: record for record in out}
    assert by_id[f"https://a.example/{name}"]["supersedes"] == f"https://portal.example/{name}"
    assert by_id[f"https://c.example/{name}"]["supersedes"] == f"https://a.example/{name}"  # ranked first
    assert by_id[f"https://c.example/{name}"]["duplicate_of"] is None


@pytest.mark.parametrize(
    "options, message",
    [
        (["--prefer", "newest"], "--prefer: must be one of first, longest, source or a dotted path"),
        (["--prefer", "source"], "NEARDUP_PREFER_SOURCES, or --prefer-sources"),
        (["--prefer", "no.such.policy"], "--prefer: cannot import 'no.such.policy'"),
        (["--replaces-field", "text"], "--replaces-field 'text' is also --text-field"),
        (["--duplicate-of-field", "text"], "--duplicate-of-field 'text' is also --text-field"),
        (["--similar-id-field", "duplicate_of"], "--similar-id-field 'duplicate_of' is also --duplicate-of-field"),
    ],
)
def test_dedup_refuses_a_bad_prefer_option(tmp_path, capsys, options, message):
    source = tmp_path / "in.jsonl"
    write_lines(source, excerpt_records())
    assert main(["dedup", str(source), "-o", str(tmp_path / "out.jsonl"), *options]) == 2
    assert message in capsys.readouterr().err


def test_export_gives_a_replacing_record_its_storys_similar_id(tmp_path, capsys):
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_lines(source, excerpt_records()[:1] + excerpt_records()[len(ARTICLES) : len(ARTICLES) + 1])
    store = f"leveldb://{tmp_path}/db"
    assert main(["dedup", str(source), "-o", str(target), "--store", store, "--prefer", "longest"]) == 0
    written = [json.loads(line) for line in read_lines(target)]
    assert written[1]["replaces"] == written[0]["id"]
    capsys.readouterr()
    assert main(["export", "--store", store]) == 0
    exported = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["key"], r["similar_id"]) for r in exported] == [(written[1]["id"], written[0]["similar_id"])]
