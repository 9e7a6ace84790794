"""Hostile input to the ``neardup`` commands: each is refused, or handled, with one clear line on
stderr and nothing lost (the input, the output, the store and files the command did not write
are as they were)."""

from __future__ import annotations

import json
import os
import sys
import time
import unicodedata
from pathlib import Path

import pytest
from support import warm_python
from support.corpus import ARTICLES, random_news, reprint, text

from scrapy_neardup import Detector, Recipe, open_store
from scrapy_neardup.cli import main


def records() -> list[dict]:
    """Each corpus article, then a reprint of it."""
    found = []
    for name in ARTICLES:
        found += [{"id": name, "text": text(name)}, {"id": f"{name}-copy", "text": reprint(name)}]
    return found


def write_lines(path: Path, lines: list[dict]) -> bytes:
    data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")
    path.write_bytes(data)
    return data


def neardup(capsys, *args: str) -> tuple[int, str]:
    """Run the command; its exit code and its stderr (one error line at most, no traceback)."""
    capsys.readouterr()
    try:
        code = main([str(arg) for arg in args])
    except SystemExit as exc:  # an option argparse refused
        code = exc.code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def stored(uri: str) -> int:
    with open_store(uri, create=False) as store:
        return store.count()


# -- seconds ----------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "-100", "inf", "0", "-inf", "1e400", "a week"])
def test_purge_refuses_an_age_that_is_not_finite_and_positive_and_removes_nothing(tmp_path, capsys, value):
    """--older-than nan once removed every document of a LevelDB store."""
    store = f"leveldb://{tmp_path / 'store'}"
    write_lines(tmp_path / "in.jsonl", records())
    assert neardup(capsys, "dedup", tmp_path / "in.jsonl", "-o", tmp_path / "out.jsonl", "--store", store)[0] == 0
    before = stored(store)
    code, err = neardup(capsys, "purge", "--store", store, f"--older-than={value}")
    assert code == 2
    assert "--older-than: must be a number of seconds > 0 and finite" in one_line(err)
    assert stored(store) == before == len(ARTICLES)


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "1e999"])
def test_dedup_refuses_a_time_window_that_is_not_finite_and_positive(tmp_path, capsys, value):
    write_lines(tmp_path / "in.jsonl", records())
    store = tmp_path / "store"
    code, err = neardup(
        capsys, "dedup", tmp_path / "in.jsonl", "-o", tmp_path / "out.jsonl", "--store", store, f"--ttl={value}"
    )
    assert code == 2 and "--ttl: must be a number of seconds >= 0 and finite (0: no time window)" in one_line(err)
    assert not store.exists() and not (tmp_path / "out.jsonl").exists()


def test_a_time_window_redis_cannot_hold_is_refused_before_the_namespace_is_made(tmp_path, capsys, redis_server):
    """--ttl 1e18 once created the namespace, then failed on the first line (exit code 3)."""
    write_lines(tmp_path / "in.jsonl", records())
    for namespace, ttl in (("long", "1e18"), ("longer", "1e300")):
        code, err = neardup(
            capsys,
            "dedup",
            tmp_path / "in.jsonl",
            "-o",
            tmp_path / "out.jsonl",
            "--store",
            redis_server.url(),
            "--namespace",
            namespace,
            "--ttl",
            ttl,
        )
        assert code == 2 and "the Redis store cannot keep ttl" in one_line(err)
        assert list(redis_server.client().scan_iter(f"neardup:{{{namespace}}}:*")) == []
    assert not (tmp_path / "out.jsonl").exists()
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".partial")]


@pytest.mark.parametrize("value", [b"hello", b"[1, 2]", b"\xff\xfe"])
def test_a_namespace_holding_another_programs_metadata_is_one_line_and_left_alone(
    tmp_path, capsys, redis_server, value
):
    """A key named like a namespace's metadata but written by another program once stopped
    every command with the JSON reader's own words (Expecting value: line 1 column 1)."""
    redis_server.client().set("neardup:{other}:meta", value)
    source, _ = dedup_files(tmp_path)
    store = ["--store", redis_server.url(), "--namespace", "other"]
    for command in (["info"], ["export"], ["purge", "--older-than", "5"], ["dedup", source, "-o", tmp_path / "o"]):
        code, err = neardup(capsys, *command, *store)
        assert code == 2, err
        assert "(namespace 'other') holds metadata that scrapy-neardup did not write" in one_line(err)
    assert redis_server.client().get("neardup:{other}:meta") == value
    assert list(redis_server.client().scan_iter("neardup:{other}:*")) == [b"neardup:{other}:meta"]
    assert not (tmp_path / "o").exists()


def test_the_python_api_takes_the_same_seconds(redis_server):
    from scrapy_neardup import Detector
    from scrapy_neardup.stores.redis import RedisStore

    for bad in (float("nan"), float("inf"), -1.0, 0.0):
        with pytest.raises(ValueError, match="ttl"), open_store("memory://") as store:
            Detector(store, ttl=bad)
        with pytest.raises(ValueError, match="ttl"):
            RedisStore(redis_server.url(), ttl=bad)
        with pytest.raises(ValueError, match="pending_timeout"):
            RedisStore(redis_server.url(), pending_timeout=bad)


# -- the files a run names ---------------------------------------------------------------------


def dedup_files(tmp_path) -> tuple[Path, bytes]:
    source = tmp_path / "in.jsonl"
    return source, write_lines(source, records())


@pytest.mark.parametrize(
    "output, report, says",
    [
        ("out.jsonl", "in.jsonl", "the review page (--report) {dir}/in.jsonl is the input file"),
        ("out.jsonl", "link.html", "the review page (--report) {dir}/link.html is the input file ({dir}/in.jsonl)"),
        ("out.jsonl", "hard.jsonl", "the review page (--report) {dir}/hard.jsonl is the input file"),
        ("out.jsonl", "out.jsonl", "the review page (--report) {dir}/out.jsonl is the output (-o) file"),
        ("store/out.jsonl", "review.html", "the output (-o) {dir}/store/out.jsonl is inside the store's folder"),
        ("out.jsonl", "store/review.html", "the review page (--report) {dir}/store/review.html is inside the store's"),
    ],
)
def test_the_review_page_output_and_store_are_each_their_own_file(tmp_path, capsys, output, report, says):
    """--report equal to the input once replaced it with the page, and exited 0."""
    source, data = dedup_files(tmp_path)
    os.symlink(source, tmp_path / "link.html")
    os.link(source, tmp_path / "hard.jsonl")
    (tmp_path / "out.jsonl").write_text("the old output\n", encoding="utf-8")
    (tmp_path / "store").mkdir()
    code, err = neardup(
        capsys,
        "dedup",
        source,
        "-o",
        tmp_path / output,
        "--report",
        tmp_path / report,
        "--store",
        f"leveldb://{tmp_path / 'store'}",
    )
    assert code == 2 and one_line(err).startswith("neardup: " + says.format(dir=tmp_path)), err
    assert source.read_bytes() == data  # nothing read or written: the input, the old output, no store
    assert (tmp_path / "out.jsonl").read_text(encoding="utf-8") == "the old output\n"
    assert os.listdir(tmp_path / "store") == []
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".partial")]


def test_a_review_page_over_a_file_neardup_did_not_write_is_refused(tmp_path, capsys):
    """--report part.jsonl would have replaced a shard of the input with the page."""
    source, _ = dedup_files(tmp_path)
    shard = tmp_path / "part.jsonl"
    shard.write_text('{"id": "x", "text": "a shard of the input"}\n', encoding="utf-8")
    code, err = neardup(capsys, "dedup", source, "-o", tmp_path / "out.jsonl", "--report", shard)
    assert code == 2 and "exists and is not a page neardup wrote: it is left as it is" in one_line(err)
    assert shard.read_text(encoding="utf-8") == '{"id": "x", "text": "a shard of the input"}\n'
    assert not (tmp_path / "out.jsonl").exists()
    # an empty file (made with mktemp, say) and a page of an earlier run are written over
    (tmp_path / "empty.html").touch()
    assert neardup(capsys, "dedup", source, "-o", tmp_path / "out.jsonl", "--report", tmp_path / "empty.html")[0] == 0
    assert neardup(capsys, "dedup", source, "-o", tmp_path / "out.jsonl", "--report", tmp_path / "empty.html")[0] == 0
    assert "<section" in (tmp_path / "empty.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "report, others",
    [("review.html", ["review-2.html", "review-3.html"]), ("part.jsonl", ["part-2.jsonl", "part-3.jsonl"])],
)
def test_files_named_like_further_pages_are_never_removed(tmp_path, capsys, report, others):
    """A one-page report once removed review-2.html and review-3.html, or the input shards
    part-2.jsonl and part-3.jsonl, because of their names alone."""
    source, _ = dedup_files(tmp_path)
    for name in others:
        (tmp_path / name).write_text(f"{name}: not a page of the report\n", encoding="utf-8")
    for _ in range(2):  # the second run replaces its own page
        code, err = neardup(capsys, "dedup", source, "-o", tmp_path / "out.jsonl", "--report", tmp_path / report)
        assert code == 0 and f"review page: {tmp_path / report}" in err
    for name in others:
        assert (tmp_path / name).read_text(encoding="utf-8") == f"{name}: not a page of the report\n"


def test_a_review_page_in_a_read_only_folder_is_refused_before_anything_is_done(tmp_path, capsys, read_only_folder):
    """The run once wrote its output and its store, then exited 2 ("nothing done") on the page."""
    source, _ = dedup_files(tmp_path)
    store = tmp_path / "store"
    page = read_only_folder / "review.html"
    code, err = neardup(capsys, "dedup", source, "-o", tmp_path / "out.jsonl", "--store", store, "--report", page)
    assert code == 2 and one_line(err).startswith(f"neardup: cannot write the review page (--report) {page}: ")
    assert not store.exists() and not (tmp_path / "out.jsonl").exists()


def test_explain_never_writes_its_page_over_a_or_b(tmp_path, capsys):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(text("rice"), encoding="utf-8")
    b.write_text(reprint("rice"), encoding="utf-8")
    for page, says in ((a, "the page (--html) {a} is A file"), (b, "the page (--html) {b} is B file")):
        code, err = neardup(capsys, "explain", a, b, "--html", page)
        assert code == 2 and one_line(err) == f"neardup: {says.format(a=a, b=b)}: name another file"
    assert a.read_text(encoding="utf-8") == text("rice") and b.read_text(encoding="utf-8") == reprint("rice")
    assert neardup(capsys, "explain", a, b, "--html", tmp_path / "pair.html")[0] == 0


def test_export_never_writes_into_the_store_folder(tmp_path, capsys):
    store = tmp_path / "store"
    source, _ = dedup_files(tmp_path)
    assert neardup(capsys, "dedup", source, "-o", tmp_path / "out.jsonl", "--store", store)[0] == 0
    before = sorted(os.listdir(store))
    code, err = neardup(capsys, "export", "--store", store, "-o", store / "CURRENT")
    assert code == 2 and "is inside the store's folder" in one_line(err)
    assert sorted(os.listdir(store)) == before and stored(f"leveldb://{store}") == len(ARTICLES)


def test_a_store_is_never_made_in_a_folder_of_other_files(tmp_path, capsys):
    """A store named at a home or data folder by mistake once had LevelDB's files written among
    the folder's own (and a file named LOG rotated to LOG.old)."""
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "a.jpg").write_bytes(b"\xff\xd8 a photo")
    (folder / "notes.txt").write_text("my notes\n")
    source, _ = dedup_files(tmp_path)
    code, err = neardup(capsys, "dedup", source, "-o", tmp_path / "out.jsonl", "--store", f"leveldb://{folder}")
    assert code == 2
    assert f"{folder} holds files that are not a store's ('a.jpg', 'notes.txt')" in one_line(err)
    assert sorted(os.listdir(folder)) == ["a.jpg", "notes.txt"]
    assert not (tmp_path / "out.jsonl").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert neardup(capsys, "dedup", source, "-o", tmp_path / "out.jsonl", "--store", f"leveldb://{empty}")[0] == 0
    assert stored(f"leveldb://{empty}") == len(ARTICLES)  # an empty folder takes a store, and keeps it
    assert neardup(capsys, "dedup", source, "-o", tmp_path / "out.jsonl", "--store", f"leveldb://{empty}")[0] == 0


# -- explain reads what it judges -------------------------------------------------------------


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_explain_reads_a_device_no_further_than_it_judges(tmp_path, device):
    """/dev/zero once ran out of memory (a MemoryError traceback), /dev/urandom never ended."""
    a = tmp_path / "a.txt"
    a.write_text(text("rice"), encoding="utf-8")
    done = warm_python.run(
        [sys.executable, "-m", "scrapy_neardup", "explain", str(a), device],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert one_line(done.stderr).startswith(f"neardup: {device} is not text (its first ")


def test_explain_judges_the_beginning_of_a_longer_file_and_says_so(tmp_path, capsys):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("\n".join(text(name) for name in ARTICLES) * 20, encoding="utf-8")
    b.write_text(reprint("rice"), encoding="utf-8")
    capsys.readouterr()
    assert main(["explain", str(a), str(b), "--max-bytes", "4000", "--color", "never"]) == 0
    out = capsys.readouterr().out
    (note,) = [line for line in out.splitlines() if line.startswith("note: A ")]
    read = int(note.split("its first ")[1].split(" bytes")[0].replace(",", ""))
    assert 0 < read <= 4000 and "larger than --max-bytes 4,000" in note
    assert a.read_bytes()[:read].decode("utf-8").endswith("\n")  # cut at a line end
    assert "=== A:" in out and not [line for line in out.splitlines() if line.startswith("note: B ")]


# -- a damaged LevelDB store -------------------------------------------------------------------


def damaged_in_the_middle(path: Path) -> list[str]:
    """A store of 300 records whose table is garbled a fifth of the way in: it opens (its meta
    and last records are readable), and a read of every record meets the damage."""
    with open_store(f"leveldb://{path}") as store:
        detector = Detector(store)
        for number, body in enumerate(random_news(300)):
            detector.check(f"k{number}", body)
        store.compact()
    tables = sorted(name for name in os.listdir(path) if name.endswith(".ldb"))
    for name in tables:
        with open(path / name, "r+b") as handle:
            handle.seek(os.path.getsize(path / name) // 5)
            handle.write(b"\xff" * 64)
    return tables


@pytest.mark.parametrize(
    "command",
    [
        ["info"],
        ["list"],
        ["export", "-o", "{dir}/records.jsonl"],
        ["export"],
        ["lookup", "k60"],
        ["purge", "--older-than", "1e-9"],
        ["dedup", "{dir}/in.jsonl", "-o", "{dir}/out.jsonl"],
        ["query", "{dir}/in.jsonl", "-o", "{dir}/out.jsonl"],
    ],
)
def test_every_command_that_meets_a_damaged_table_says_so_in_one_line(tmp_path, capfd, command):
    """export and list ended in a plyvel CorruptionError traceback; info and lookup did not."""
    store = tmp_path / "db"
    tables = damaged_in_the_middle(store)
    write_lines(tmp_path / "in.jsonl", [{"id": f"again-{n}", "text": body} for n, body in enumerate(random_news(300))])
    args = [part.format(dir=tmp_path) for part in command] + ["--store", f"leveldb://{store}"]
    capfd.readouterr()
    code = main(args)
    err = capfd.readouterr().err
    assert "Traceback" not in err
    (said,) = [line for line in err.splitlines() if "is damaged" in line]
    assert code in (2, 3) and said.startswith("neardup: ") and "plyvel.repair_db" in said, err
    assert set(tables) <= set(os.listdir(store))
    assert not (tmp_path / "records.jsonl").exists()
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".partial")]


# -- the rest of the second round ---------------------------------------------------------------


def test_purge_works_on_a_store_of_another_recipe(tmp_path, capsys):
    """purge refused a store of another recipe and had no option to name it: age needs none."""
    store = f"leveldb://{tmp_path / 'store'}"
    write_lines(tmp_path / "in.jsonl", records())
    assert (
        neardup(
            capsys, "dedup", tmp_path / "in.jsonl", "-o", tmp_path / "out.jsonl", "--store", store, "--nshash-n", "4"
        )[0]
        == 0
    )
    code, err = neardup(capsys, "purge", "--store", store, "--older-than", "1e-9")
    assert code == 0 and one_line(err) == f"removed {len(ARTICLES)} documents older than 1e-09 s"
    with open_store(store, create=False, recipe=Recipe(nshash_n=4)) as opened:
        assert opened.count() == 0


def test_purge_paced_removes_the_old_documents(tmp_path, capsys):
    store = f"leveldb://{tmp_path / 'store'}"
    write_lines(tmp_path / "in.jsonl", records())
    assert neardup(capsys, "dedup", tmp_path / "in.jsonl", "-o", tmp_path / "out.jsonl", "--store", store)[0] == 0
    code, err = neardup(capsys, "purge", "--store", store, "--older-than", "1e-9", "--paced")
    assert code == 0 and one_line(err) == f"removed {len(ARTICLES)} documents older than 1e-09 s"
    assert stored(store) == 0


HOSTILE_KEYS = ["esc\x1b[2J\x1b[31mred", "csi\x9b31m", "bidi\u202eevil", "tab\tnew\nline", "bell\x07", "中文\u3000键"]


def test_list_lookup_and_export_never_print_control_characters(tmp_path, capsys):
    store = f"leveldb://{tmp_path / 'store'}"
    names = list(ARTICLES)
    write_lines(tmp_path / "in.jsonl", [{"id": key, "text": text(name)} for key, name in zip(HOSTILE_KEYS, names)])
    assert neardup(capsys, "dedup", tmp_path / "in.jsonl", "-o", tmp_path / "out.jsonl", "--store", store)[0] == 0

    def printed(*args: str) -> str:
        capsys.readouterr()
        assert main([*args, "--store", store]) == 0
        out = capsys.readouterr().out
        assert not [c for c in out if not c.isprintable() and c not in "\t\n" and unicodedata.category(c) != "Zs"], out
        return out

    listed = printed("list").splitlines()
    assert len(listed) == len(HOSTILE_KEYS)
    assert [line.split("\t")[3] for line in listed] == [
        "esc\\x1b[2J\\x1b[31mred",
        "csi\\x9b31m",
        "bidi\\u202eevil",
        "tab\\x09new\\x0aline",
        "bell\\x07",
        "中文\u3000键",
    ]
    exported = [json.loads(line) for line in printed("export").splitlines()]
    assert [record["key"] for record in exported] == HOSTILE_KEYS  # the same JSON values
    for key in HOSTILE_KEYS:
        (found,) = [json.loads(line) for line in printed("lookup", key).splitlines()]
        assert found["key"] == key


@pytest.mark.parametrize("key", ["k\ud800", "\udfff\ud800", "键\ud83d"])
def test_a_key_holding_a_lone_surrogate_is_kept_as_it_is(tmp_path, capsys, store_uri, key):
    """Such a key was stored as the text "\\ud800", so the reprint's duplicate_of differed from
    the original's id."""
    lines = [{"id": key, "text": text("rice")}, {"id": "copy", "text": reprint("rice")}]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="ascii")
    code, _ = neardup(capsys, "dedup", tmp_path / "in.jsonl", "-o", tmp_path / "out.jsonl", "--store", store_uri)
    original, copy = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert code == 0 and original["id"] == key and copy["duplicate_of"] == key
    code, err = neardup(capsys, "dedup", tmp_path / "in.jsonl", "-o", tmp_path / "again.jsonl", "--store", store_uri)
    assert code == 0 and "0 unique, 1 revisits, 1 duplicates" in err  # the key found again under itself
    assert main(["export", "--store", store_uri]) == 0
    assert [json.loads(line)["key"] for line in capsys.readouterr().out.splitlines()] == [key]


def test_unreachable_sentinels_are_one_short_line(capsys):
    """The message held some 3 KB of redis-py's client internals."""
    from support.redis_server import free_port

    ports = [free_port(), free_port()]
    uri = f"redis+sentinel://127.0.0.1:{ports[0]},127.0.0.1:{ports[1]}/news"
    code, err = neardup(capsys, "info", "--store", uri)
    line = one_line(err)
    assert code == 2 and len(line) < 300 and "<redis." not in line and "Redis<" not in line, line
    assert "(service 'news') name no primary that answers: 2 could not be asked (" in line


@pytest.fixture
def replica(redis_server):
    """A read-only replica of the session's server, in sync."""
    from support.redis_server import start_redis

    with redis_server.client() as primary:  # the first copy sent at once, not after 5 s
        primary.config_set("repl-diskless-sync-delay", 0)
    server = start_redis("--replicaof", "127.0.0.1", str(redis_server.port))
    client = server.client()
    deadline = time.monotonic() + 30
    while client.info("replication").get("master_link_status") != "up":
        assert time.monotonic() < deadline, "the replica did not sync"
        time.sleep(0.05)
    client.close()
    yield server
    server.stop()


def test_the_commands_that_only_look_work_on_a_read_only_replica(tmp_path, capsys, redis_server, replica):
    """info on a replica tried a write (the namespace's marker) and failed."""
    namespace = "replicated"
    write_lines(tmp_path / "in.jsonl", records())
    primary = ["--store", redis_server.url(), "--namespace", namespace]
    assert neardup(capsys, "dedup", tmp_path / "in.jsonl", "-o", tmp_path / "out.jsonl", *primary)[0] == 0
    redis_server.client().wait(1, 5000)
    on_replica = ["--store", replica.url(), "--namespace", namespace]
    capsys.readouterr()
    assert main(["info", *on_replica]) == 0
    assert json.loads(capsys.readouterr().out)["documents"] == len(ARTICLES)
    assert main(["list", *on_replica]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(ARTICLES)
    assert main(["lookup", "rice", *on_replica]) == 0
    assert main(["query", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "q.jsonl"), *on_replica]) == 0
    code, err = neardup(capsys, "dedup", tmp_path / "in.jsonl", "-o", tmp_path / "again.jsonl", *on_replica)
    assert code == 3 and "is a read-only replica: point the URI at the primary" in err


# -- an output file neardup did not write ----------------------------------------------------


def _marks_files(folder: Path) -> bool:
    """Whether files here can carry the extended attribute neardup marks its outputs with."""
    probe = folder / "probe"
    probe.write_bytes(b"")
    try:
        os.setxattr(probe, "user.scrapy-neardup", b"probe")
    except (AttributeError, OSError):
        return False
    finally:
        probe.unlink()
    return True


@pytest.mark.parametrize("command", ["dedup", "export"])
def test_an_output_neardup_did_not_write_is_refused_unless_overwrite_is_given(tmp_path, capsys, command):
    source, target, store = tmp_path / "in.jsonl", tmp_path / "notes.jsonl", tmp_path / "store"
    write_lines(source, records())
    target.write_bytes(b"a file of the user's\n")
    if command == "export":
        assert neardup(capsys, "dedup", source, "-o", os.devnull, "--store", f"leveldb://{store}")[0] == 0
    arguments = [source] if command == "dedup" else []
    code, err = neardup(capsys, command, *arguments, "-o", target, "--store", f"leveldb://{store}")
    assert code == 2
    assert one_line(err).endswith(
        "notes.jsonl exists and neardup did not write it: name another file, or add --overwrite to replace it"
    )
    assert target.read_bytes() == b"a file of the user's\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        ["in.jsonl", "notes.jsonl"] + (["store"] if command == "export" else [])
    )
    code, err = neardup(capsys, command, *arguments, "-o", target, "--store", f"leveldb://{store}", "--overwrite")
    assert code == 0, err
    assert target.read_bytes() != b"a file of the user's\n"
    assert len(target.read_bytes().splitlines()) == (len(records()) if command == "dedup" else len(ARTICLES))


def test_an_empty_file_and_neardups_own_output_are_replaced(tmp_path, capsys):
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_lines(source, records())
    target.write_bytes(b"")  # made by mktemp for the output
    assert neardup(capsys, "dedup", source, "-o", target)[0] == 0
    first = target.read_bytes()
    assert len(first.splitlines()) == len(records())
    if not _marks_files(tmp_path):
        pytest.skip("this file system keeps no extended attributes: a rerun needs --overwrite")
    write_lines(source, records()[:2])
    assert neardup(capsys, "dedup", source, "-o", target)[0] == 0  # its own output of the run before
    assert len(target.read_bytes().splitlines()) == 2
