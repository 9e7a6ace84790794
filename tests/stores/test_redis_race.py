"""Four processes race on copies of the same stories into one shared store: one Redis, and a
Redis Cluster of three masters.

Each round every process holds a different copy of one story and all of them call
check-and-add at the same moment (a barrier releases them together). One Redis's atomic
script, and the cluster's protocol across slots, must keep exactly one copy per story, never
two and never none, and keep the same stories as one process reading the whole stream alone.
"""

from __future__ import annotations

import random

import pytest
from support.processes import racing_processes

from scrapy_neardup import UNIQUE, Detector, Fingerprinter, open_store
from scrapy_neardup.engine.prefer import prefer_longest

PROCESSES = 4
STORIES = 24

# Common characters; stories are random words of them, so distinct stories share no text.
CHARS = (
    "国家发展改革委员会财政部交通运输农业科技教育卫生健康市场监管城市乡村企业工人学生医院学校"
    "工厂道路铁路机场港口河流山区平原森林草原能源电力煤炭石油天然气水利工程建设项目投资资金"
    "政策改革开放合作交流会议报告数据增长下降提高降低完成推进落实加强保障服务管理安全质量标准"
    "生产销售价格消费市场出口进口贸易金融银行保险证券基金利率汇率就业收入住房养老医疗文化体育"
)


def _story(rng: random.Random, names: int = 0) -> str:
    """Three paragraphs of random words; with ``names``, each sentence names one of that many
    people or places of the story, as a news story's later paragraphs do."""
    cast = ["".join(rng.choice(CHARS) for _ in range(3)) for _ in range(names)]
    paragraphs = []
    for _ in range(3):
        sentences = []
        for _ in range(rng.randint(3, 5)):
            words = ["".join(rng.choice(CHARS) for _ in range(rng.randint(2, 4))) for _ in range(rng.randint(8, 14))]
            if cast:
                words[rng.randrange(len(words))] = rng.choice(cast)
            sentences.append("，".join("".join(words[i : i + 4]) for i in range(0, len(words), 4)) + "。")
        paragraphs.append("".join(sentences))
    return "\n".join(paragraphs)


def _copies(text: str, rng: random.Random) -> list[str]:
    """One copy per process, as four sites would reprint the story."""
    paragraphs = text.split("\n")
    changed = list(text)
    for index in rng.sample(range(len(changed)), 3):
        if changed[index] not in "，。\n":
            changed[index] = rng.choice(CHARS)
    return [
        f"来源：新华网\n{text}\n（编辑：张华）",
        "".join(changed),
        "\n".join(paragraphs[:2]) + "\n" + paragraphs[2][: len(paragraphs[2]) // 2],
        text.replace("，", ",").replace("\n", "\n\n"),
    ]


def stream() -> list[tuple[str, list[str]]]:
    """Rounds of (story id, one copy per process); every fourth round repeats an earlier story."""
    rng = random.Random(20240601)
    stories = [_story(rng) for _ in range(STORIES)]
    rounds = []
    for number, text in enumerate(stories):
        rounds.append((f"story-{number:02d}", _copies(text, rng)))
        if number % 4 == 3:
            earlier = number - 2
            rounds.append((f"story-{earlier:02d}", _copies(stories[earlier], rng)))
    return rounds


class _Precomputed:
    """The parent fingerprints every copy once (a Fingerprinter costs seconds to load in
    each process); workers only race on the store."""

    def fingerprint(self, text: str):
        raise AssertionError("workers receive fingerprints")


def _worker(uri: str, proc: int, rounds, barrier, results) -> None:
    store = open_store(uri, "race")
    try:
        detector = Detector(store, fingerprinter=_Precomputed())
        verdicts = []
        for number, (story, fingerprints) in enumerate(rounds):
            barrier.wait(timeout=120)
            verdict = detector.check_fingerprint(f"p{proc}/{number}/{story}", fingerprints[proc])
            verdicts.append((number, story, verdict.status, verdict.doc_id, verdict.duplicate_of))
        results.put((proc, verdicts))
    finally:
        store.close()


def _race(worker, uri: str, rounds) -> list:
    """Run ``worker`` in PROCESSES processes over ``rounds``; their verdicts, in order."""
    context = racing_processes()
    barrier = context.Barrier(PROCESSES)
    results = context.Queue()
    workers = [context.Process(target=worker, args=(uri, proc, rounds, barrier, results)) for proc in range(PROCESSES)]
    for process in workers:
        process.start()
    collected = dict(results.get(timeout=300) for _ in workers)
    for process in workers:
        process.join(60)
        assert process.exitcode == 0
    return [v for proc in range(PROCESSES) for v in collected[proc]]


@pytest.fixture(params=["redis", "cluster"])
def shared_url(request):
    """An empty shared store: one Redis, or a Redis Cluster."""
    return request.getfixturevalue("redis_url" if request.param == "redis" else "cluster_url")


def test_four_processes_keep_one_copy_per_story(shared_url):
    redis_url = shared_url
    rounds = stream()
    fingerprinter = Fingerprinter()
    prints = [(story, [fingerprinter.fingerprint(c) for c in copies]) for story, copies in rounds]
    verdicts = _race(_worker, redis_url, prints)

    kept = [v for v in verdicts if v[2] == UNIQUE]
    kept_stories = [story for _, story, *_ in kept]
    assert sorted(kept_stories) == sorted(set(kept_stories))  # never two copies of one story
    for number, (story, _) in enumerate(rounds):
        in_round = [v for v in verdicts if v[0] == number]
        assert len(in_round) == PROCESSES
        first_time = all(s != story for s, _ in rounds[:number])
        # a new story: exactly one process keeps its copy; a repeated one: none does
        assert sum(v[2] == UNIQUE for v in in_round) == (1 if first_time else 0)
    for _, story, status, _, duplicate_of in verdicts:
        if status != UNIQUE:
            assert duplicate_of.endswith(story)  # each copy points at a copy of its own story

    with open_store(redis_url, "race") as store:
        assert store.count() == len(set(kept_stories))
        for _, _, _, doc_id, _ in kept:
            assert store.get(doc_id) is not None

    # One process reading the same stream alone keeps the same stories.
    with open_store("memory://", "race") as alone:
        detector = Detector(alone, fingerprinter=fingerprinter)
        single = {
            story
            for story, copies in rounds
            for proc in range(PROCESSES)
            if detector.check(f"{proc}/{story}", copies[proc]).status == UNIQUE
        }
    assert set(kept_stories) == single


# -- replacing a story's copy (NEARDUP_PREFER) ------------------------------------------------


def _replacing_worker(uri: str, proc: int, rounds, barrier, results) -> None:
    store = open_store(uri, "replace-race")
    try:
        detector = Detector(store, fingerprinter=_Precomputed(), prefer=prefer_longest)
        verdicts = []
        for number, (story, fingerprints) in enumerate(rounds):
            reserve = number % 2 == 1  # pending replacements, committed once every process checked
            barrier.wait(timeout=120)
            verdict = detector.check_fingerprint(f"p{proc}/{story}", fingerprints[proc], reserve)
            barrier.wait(timeout=120)
            detector.commit(verdict)
            verdicts.append(
                (story, verdict.status, verdict.replaces, verdict.duplicate_of, verdict.similar_id, verdict.key)
            )
        results.put((proc, verdicts))
    finally:
        store.close()


def test_of_four_processes_replacing_one_story_exactly_one_wins(shared_url):
    """Each story's excerpt is stored; then four processes check a complete copy each at the
    same moment, half the rounds reserved (committed after), half committed at once."""
    redis_url = shared_url
    rng = random.Random(20251125)
    fingerprinter = Fingerprinter()
    rounds, excerpts = [], {}
    for number in range(12):
        text = _story(rng, names=3)  # the complete copy's last paragraph goes on with the story
        story = f"story-{number:02d}"
        excerpts[story] = "来源：门户网\n" + "\n".join(text.split("\n")[:2])
        copies = _copies(text, rng)
        copies[2] = f"{text}\n（编辑：王军）"  # the cut copy of the other race is not complete here
        rounds.append((story, [fingerprinter.fingerprint(c) for c in copies]))
    with open_store(redis_url, "replace-race") as store:
        detector = Detector(store, fingerprinter=fingerprinter)
        ids = {story: detector.check(f"portal/{story}", body).doc_id for story, body in excerpts.items()}
    verdicts = _race(_replacing_worker, redis_url, rounds)
    winners = set()
    for story, _ in rounds:
        mine = [v for v in verdicts if v[0] == story]
        won = [v for v in mine if v[2] is not None]
        assert len(won) == 1 and won[0][1] == UNIQUE and won[0][2] == f"portal/{story}"
        winners.add(won[0][5])
        assert all(v[4] == ids[story] for v in mine)  # similar_id stays the story's
        # the others lost the race and, judged again, are duplicates of the winner
        assert all(v[1] == "duplicate" and v[3] == won[0][5] for v in mine if v is not won[0])
    with open_store(redis_url, "replace-race") as store:
        stored = list(store.records())
    assert sorted(record.key for record in stored) == sorted(winners)  # one copy a story: the winner
    assert sorted(record.story_id for record in stored) == sorted(ids.values())


# -- batches (the pipeline and neardup dedup check several documents in one call) ------------


BATCH = 6


def _batch_worker(uri: str, proc: int, rounds, barrier, results) -> None:
    """Checks its copy of each story, BATCH stories a call; every process sends its batch at
    the same moment. Process p's batch holds the stories in an order of its own (rotated by p),
    so copies of one story sit at other places in the processes' batches."""
    store = open_store(uri, "race")
    try:
        detector = Detector(store, fingerprinter=_Precomputed())
        verdicts = []
        for start in range(0, len(rounds), BATCH):
            numbers = list(range(start, min(start + BATCH, len(rounds))))
            numbers = numbers[proc % len(numbers) :] + numbers[: proc % len(numbers)]
            documents = [(f"p{proc}/{n}/{rounds[n][0]}", rounds[n][1][proc]) for n in numbers]
            barrier.wait(timeout=120)
            for number, verdict in zip(numbers, detector.check_many(documents)):
                verdicts.append((number, rounds[number][0], verdict.status, verdict.doc_id, verdict.duplicate_of))
        results.put((proc, verdicts))
    finally:
        store.close()


def test_four_processes_checking_in_batches_keep_one_copy_per_story(cluster_url):
    """As above, on the cluster, with batches: a document may wait for one of another process's
    batch, which may wait for one of its own batch; every story is still kept exactly once.

    Each batch holds a story and its repeat, so eight copies of one story are in flight at
    once. One Redis takes a batch's duplicates out with the process's next call, and until then
    they count toward the boilerplate limit of their sentences (5): with this many copies in
    flight a sentence shared by all of them can pass for boilerplate there and a copy is kept
    twice now and then (docs/stores.md). The cluster counts only kept documents toward the
    limit, and takes each duplicate out before its batch returns (copies held in flight by
    hand: test_copies_in_flight.py)."""
    shared_url = cluster_url
    rounds = stream()
    fingerprinter = Fingerprinter()
    prints = [(story, [fingerprinter.fingerprint(c) for c in copies]) for story, copies in rounds]
    verdicts = _race(_batch_worker, shared_url, prints)
    kept = [story for _, story, status, *_ in verdicts if status == UNIQUE]
    assert sorted(kept) == sorted({story for story, _ in rounds})  # each story once, none lost
    for _, story, status, _, duplicate_of in verdicts:
        if status != UNIQUE:
            assert duplicate_of.endswith(story)  # never a copy of another story
    with open_store(shared_url, "race") as store:
        assert store.count() == len(kept)
