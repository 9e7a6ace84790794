"""Opening a LevelDB store raises the process's soft limit of open files before LevelDB reads it."""

import json
import resource
import subprocess
import sys
import textwrap

from scrapy_neardup.stores.leveldb.openfiles import WANTED

CHILD = textwrap.dedent(
    """
    import json, resource, sys
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[2]), hard))
    from scrapy_neardup import Detector, open_store
    with open_store("leveldb://" + sys.argv[1]) as store:
        verdict = Detector(store).check("a", "本报讯 这是一篇用来检验存储的新闻稿件，内容足够长，句子也足够多。" * 8)
    print(json.dumps([verdict.status, *resource.getrlimit(resource.RLIMIT_NOFILE)]))
    """
)


def open_in_child(tmp_path, soft: int) -> list:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "db"), str(soft)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_a_low_soft_limit_is_raised_toward_the_hard_limit(tmp_path):
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    expected = WANTED if hard == resource.RLIM_INFINITY else min(WANTED, hard)
    status, soft, after_hard = open_in_child(tmp_path, 256)
    assert status == "unique"
    assert (soft, after_hard) == (expected, hard)


def test_a_soft_limit_high_enough_is_left_as_it_is(tmp_path):
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    high = hard if hard != resource.RLIM_INFINITY else WANTED + 1
    status, soft, _ = open_in_child(tmp_path, high)
    assert status == "unique"
    assert soft == high
