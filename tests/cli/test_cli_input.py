"""The command line never loses a record: odd lines, odd encodings, and outputs that would
erase their input. Each case runs the real ``neardup`` in a subprocess, as a user would."""

import json
import os
import sys

import pytest
from support import warm_python
from support.corpus import ARTICLES, reprint, with_disclaimer

NAMES = list(ARTICLES)


def neardup(*args, stdin=None, env=None):
    quiet = ["--no-progress"] if args[0] == "dedup" else []
    command = [sys.executable, "-m", "scrapy_neardup.cli", *map(str, args), *quiet]
    return warm_python.run(command, input=stdin, capture_output=True, timeout=120, env={**os.environ, **(env or {})})


def line(record: dict) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode("utf-8")


def corpus_bytes() -> bytes:
    records = [{"id": f"{n}/original", "text": with_disclaimer(n)} for n in NAMES]
    records += [{"id": f"{n}/reprint", "text": reprint(n, cut=0.9)} for n in NAMES]
    return b"".join(line(r) + b"\n" for r in records)


@pytest.mark.parametrize("how", ["same path", "symlink", "stdin"])
def test_an_output_that_is_the_input_is_refused_and_the_input_kept(tmp_path, how):
    source = tmp_path / "in.jsonl"
    data = corpus_bytes()
    source.write_bytes(data)
    if how == "same path":
        result = neardup("dedup", source, "-o", source)
    elif how == "symlink":
        (tmp_path / "link.jsonl").symlink_to(source)
        result = neardup("dedup", tmp_path / "link.jsonl", "-o", source)
    else:
        with open(source, "rb") as handle:
            result = warm_python.run(
                [sys.executable, "-m", "scrapy_neardup.cli", "dedup", "-", "-o", str(source)],
                stdin=handle,
                capture_output=True,
                timeout=120,
            )
    assert result.returncode == 2
    assert b"is the input file" in result.stderr
    assert source.read_bytes() == data


def test_the_output_appears_whole_at_the_end_and_a_failed_run_keeps_the_old_one(tmp_path):
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_bytes(corpus_bytes())
    target.write_bytes(b"yesterday's output\n")
    os.chmod(target, 0o640)
    held = tmp_path / "held"
    # A store held by another process fails the run before anything is judged.
    import plyvel

    db = plyvel.DB(str(held), create_if_missing=True)
    try:
        result = neardup("dedup", source, "-o", target, "--overwrite", "--store", f"leveldb://{held}")
    finally:
        db.close()
    assert result.returncode == 2
    assert target.read_bytes() == b"yesterday's output\n"
    assert result.stderr.count(b"\n") == 1
    result = neardup("dedup", source, "-o", target, "--overwrite")
    assert result.returncode == 0
    assert len(target.read_bytes().splitlines()) == 2 * len(NAMES)
    assert os.stat(target).st_mode & 0o777 == 0o640
    assert sorted(os.listdir(tmp_path)) == ["held", "in.jsonl", "out.jsonl"]


def test_every_odd_line_comes_out_judged_or_byte_for_byte(tmp_path):
    original, copy = with_disclaimer(NAMES[0]), reprint(NAMES[0], cut=0.9)
    other = with_disclaimer(NAMES[1])
    lines = [
        line({"id": "first", "text": original}),
        b'{"id": "\\ud800", "text": ' + json.dumps(copy).encode() + b"}",  # lone surrogate escape
        b'{"id": "bad\xff\xfebyte", "text": ' + json.dumps(other, ensure_ascii=False).encode() + b"}",
        b'{"id":\r"cr",\r"text": ' + json.dumps(copy).encode() + b"}",  # CR as JSON white space
        b"not json \xc3\x28 at all",
        b'{"id": "no text"}',
    ]
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_bytes(b"\n".join(lines) + b"\n")
    result = neardup("dedup", source, "-o", target, env={"PYTHONIOENCODING": "ascii:strict", "LC_ALL": "C"})
    assert result.returncode == 0, result.stderr
    out = target.read_bytes().split(b"\n")[:-1]
    assert len(out) == len(lines)
    judged = [json.loads(out[i].decode("utf-8", "surrogateescape")) for i in (0, 1, 2, 3)]
    assert judged[0]["duplicate_of"] is None
    assert judged[1]["id"] == "\ud800" and judged[1]["duplicate_of"] == "first"
    assert judged[2]["duplicate_of"] is None
    assert out[2].startswith(b'{"id": "bad\xff\xfebyte"')  # undecodable bytes go back out as they came
    assert judged[3]["id"] == "cr" and judged[3]["duplicate_of"] == "first"
    assert out[4] == lines[4] and out[5] == lines[5]
    err = result.stderr.decode()
    assert "in.jsonl:2: holds a lone surrogate" in err
    assert "in.jsonl:5: not valid JSON" in err and "in.jsonl:6: no usable text" in err
    assert err.strip().splitlines()[-1] == "6 records: 2 unique, 2 duplicates, 2 skipped"


def test_stdin_and_stdout_under_a_strict_ascii_encoding(tmp_path):
    data = corpus_bytes()
    result = neardup("dedup", "-", stdin=data, env={"PYTHONIOENCODING": "ascii:strict", "LC_ALL": "C"})
    assert result.returncode == 0, result.stderr
    out = [json.loads(x) for x in result.stdout.decode("utf-8").splitlines()]
    assert [r["text"] for r in out] == [json.loads(x)["text"] for x in data.decode().splitlines()]
    assert sum(r["duplicate_of"] is not None for r in out) == len(NAMES)


def test_records_without_a_key_are_keyed_by_content_so_a_rerun_is_not_fooled(tmp_path):
    """Yesterday's first line and today's first line are different stories' copies: with
    numbered keys today's reprint at line 1 was taken for the same document and kept."""
    store = f"leveldb://{tmp_path}/db"
    first, second = tmp_path / "monday.jsonl", tmp_path / "tuesday.jsonl"
    first.write_bytes(line({"text": with_disclaimer(NAMES[0])}) + b"\n")
    second.write_bytes(line({"text": reprint(NAMES[0], cut=0.9)}) + b"\n")
    assert neardup("dedup", first, "-o", tmp_path / "a.jsonl", "--store", store).returncode == 0
    # The same file under another name is the same document again, not its own duplicate.
    (tmp_path / "copy.jsonl").write_bytes(first.read_bytes())
    assert neardup("dedup", tmp_path / "copy.jsonl", "-o", tmp_path / "b.jsonl", "--store", store).returncode == 0
    assert json.loads((tmp_path / "b.jsonl").read_bytes())["duplicate_of"] is None
    assert neardup("dedup", second, "-o", tmp_path / "c.jsonl", "--store", store).returncode == 0
    assert json.loads((tmp_path / "c.jsonl").read_bytes())["duplicate_of"].startswith("text:")


@pytest.mark.parametrize(
    "args, message",
    [
        (["dedup", "{tmp}/missing.jsonl"], "cannot read input"),
        (["dedup", "{tmp}"], "cannot read input"),
        (["dedup", "{tmp}/in.jsonl", "-o", "{tmp}/no/such/folder/out.jsonl"], "cannot write output"),
        (["dedup", "{tmp}/in.jsonl", "-o", "{tmp}"], "cannot write output"),
        (["info", "--store", "leveldb://{tmp}/nothing"], "there is no LevelDB store"),
        (["purge", "--older-than", "60", "--store", "leveldb://{tmp}/nothing"], "there is no LevelDB store"),
    ],
)
def test_file_and_folder_errors_are_one_line_and_create_nothing(tmp_path, args, message):
    (tmp_path / "in.jsonl").write_bytes(corpus_bytes())
    before = sorted(os.listdir(tmp_path))
    result = neardup(*[a.format(tmp=tmp_path) for a in args])
    assert result.returncode == 2
    assert result.stderr.decode().startswith(f"neardup: {message}")
    assert result.stderr.count(b"\n") == 1
    assert sorted(os.listdir(tmp_path)) == before


def test_info_on_an_existing_store_still_works(tmp_path):
    store = f"leveldb://{tmp_path}/db"
    (tmp_path / "in.jsonl").write_bytes(corpus_bytes())
    assert neardup("dedup", tmp_path / "in.jsonl", "-o", tmp_path / "out.jsonl", "--store", store).returncode == 0
    result = neardup("info", "--store", store)
    assert result.returncode == 0
    assert json.loads(result.stdout)["documents"] == len(NAMES)
    result = neardup("info", "--store", store, "--namespace", "other")
    assert result.returncode == 2 and b"there is no store" in result.stderr


def test_help_says_which_key_field_is_taken():
    result = neardup("dedup", "--help")
    assert "default: url, else id, whichever the first record has" in " ".join(result.stdout.decode().split())
