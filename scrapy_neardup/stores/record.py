"""The stored form of one document: what verification needs, in a compact byte layout."""

from __future__ import annotations

import hashlib
import json
import struct
import threading
import zlib
from collections import OrderedDict
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from ..fingerprints.sketch import Sketch
from ..fingerprints.storywords import StoryWords, story_words_read_later

COMMITTED = 0
PENDING = 1  # reserved by a crawl, waiting for the item to pass every pipeline

# doc_id, time, simhash, sketch size, content chars, state, number of sentence keys
_HEAD = struct.Struct("<QdQIIBB")
_TIME = struct.Struct("<d")  # at offset 8 of the head
# Bytes of the head; a server-side script reads the state byte, the head's next to last, in place.
HEAD_SIZE = _HEAD.size
# Keys are clipped far below 32 KiB, so the top bits of the key's length are free for flags.
# The top bit says that the story fields (story id, the id it replaces, the source) follow the
# key; a record without them leaves them out.
_STORY_FLAG = 0x8000
_STORY = struct.Struct("<QQB")  # story id, replaced id, length of the source
# The next bit says that the story words follow (and the sketch's places follow its hashes):
# what tells a passage shared by two stories from one story told twice (engine.samestory).
_WORDS_FLAG = 0x4000
_WORDS = struct.Struct("<BBQH")  # story words, figures, the text's digest, its datelines
# The next bit says that the titles follow the story fields: the hashes of the text's headline
# and of the original title it declares (fingerprints.titles), either 0 for none.
_TITLES_FLAG = 0x2000
_TITLES = struct.Struct("<QQ")
# The next bit says that the sketch's hashes are packed (Sketch.packed: about 3 bytes a hash
# instead of 4); records written before it read as they were written. Keys are clipped to
# 2,000 bytes (clip_key), below the 4,096 the bits left over hold.
_PACKED_FLAG = 0x1000
_FLAGS = _STORY_FLAG | _WORDS_FLAG | _TITLES_FLAG | _PACKED_FLAG
_KEY_LIMIT = ~_FLAGS & 0xFFFF


# The story words' arrays as stored: words, IDF bytes, spreads, figures (little-endian).
_WORD_ARRAYS: tuple[np.dtype, ...] = (np.dtype("<u4"), np.dtype("u1"), np.dtype("<u2"), np.dtype("<u4"))

_WORD_BYTES = sum(dtype.itemsize for dtype in _WORD_ARRAYS[:3])  # a story word's, in three arrays


# The stored orders are the machine's (little-endian): the arrays are read as they are.
_NATIVE = all(dtype.isnative for dtype in _WORD_ARRAYS)


def _native(array: np.ndarray) -> np.ndarray:
    """``array`` in the machine's byte order: itself (a view of the record's bytes) where that
    is the stored order, so that reading a record copies nothing."""
    return array if array.dtype.isnative else array.astype(array.dtype.newbyteorder("="))


@dataclass
class DocRecord:
    doc_id: int
    key: str
    time: float
    simhash: int
    sketch: Sketch
    chars: int
    state: int = COMMITTED
    sentence_keys: list[int] = field(default_factory=list)  # the nshash keys it is filed under
    story: int = 0  # the story's id when it differs from doc_id (a copy that replaced another)
    replaces: int = 0  # the id of the copy this one replaces (pending until it is committed)
    source: str = ""  # the site it came from when given apart from its key (NEARDUP_SOURCE_FIELD)
    story_words: StoryWords | None = field(default=None, compare=False)
    digest: int = 0  # the text's (Fingerprint.digest): tells an updated page from one seen again
    title: int = 0  # the hash of its headline (Fingerprint.title), 0 for none
    declared: int = 0  # the hash of the original title it declares (Fingerprint.declared)

    @property
    def story_id(self) -> int:
        """The story's id, its ``similar_id``: the first copy's id, kept by a copy replacing it."""
        return self.story or self.doc_id

    # The text to keep beside the record (NEARDUP_KEEP_TEXT), written by the store in the same
    # step as the record, under a key of its own: the record's bytes are the same with or
    # without it, so stores written either way read alike. Never read back into a record.
    text: str | None = field(default=None, compare=False, repr=False)

    def to_bytes(self) -> bytes:
        return b"".join([part for _, part in self.parts()])

    def parts(self) -> list[tuple[str, bytes]]:
        """The stored form part by part, named (:meth:`to_bytes` joins them): where its bytes go."""
        key = self.key.encode("utf-8", "surrogatepass")
        if len(key) > _KEY_LIMIT:
            key = clip_key(self.key, _KEY_LIMIT).encode("utf-8", "surrogatepass")
        story = b""
        if self.story or self.replaces or self.source:
            source = self.source.encode("utf-8")[:255].decode("utf-8", "ignore").encode("utf-8")
            story = _STORY.pack(self.story, self.replaces, len(source)) + source
        titles = _TITLES.pack(self.title, self.declared) if self.title or self.declared else b""
        words, figures, places = b"", b"", b""
        if self.story_words is not None and self.sketch.places is not None:
            found = self.story_words
            words = b"".join(
                [
                    _WORDS.pack(len(found.words), len(found.figures), self.digest, found.datelines),
                    found.words.astype("<u4").tobytes(),
                    found.idf.tobytes(),
                    found.spread.astype("<u2").tobytes(),
                ]
            )
            figures = found.figures.astype("<u4").tobytes()
            places = self.sketch.places.tobytes()
        flags = _PACKED_FLAG | (_STORY_FLAG if story else 0) | (_WORDS_FLAG if words else 0)
        flags |= _TITLES_FLAG if titles else 0
        head = _HEAD.pack(
            self.doc_id, self.time, self.simhash, self.sketch.size, self.chars, self.state, len(self.sentence_keys)
        )
        return [
            ("head", head),
            ("sentence keys", struct.pack(f"<{len(self.sentence_keys)}Q", *self.sentence_keys)),
            ("key", struct.pack("<H", len(key) | flags) + key),
            ("story fields", story),
            ("titles", titles),
            ("story words", words),
            ("figures", figures),
            ("sketch hashes", self.sketch.packed()),
            ("sketch places", places),
        ]

    @staticmethod
    def replaces_of(data: bytes) -> int:
        """The id of the copy an encoded record replaces (0 for none), without decoding the rest."""
        offset = HEAD_SIZE + 8 * data[HEAD_SIZE - 1]  # after the head and its sentence keys
        (key_length,) = struct.unpack_from("<H", data, offset)
        if not key_length & _STORY_FLAG:
            return 0
        return _STORY.unpack_from(data, offset + 2 + (key_length & ~_FLAGS))[1]

    @staticmethod
    def time_of(data: bytes) -> float:
        """The time of an encoded record, without decoding the rest."""
        return _TIME.unpack_from(data, 8)[0]

    @classmethod
    def from_bytes(cls, data: bytes) -> DocRecord:
        doc_id, time, simhash, sketch_size, chars, state, nkeys = _HEAD.unpack_from(data)
        offset = _HEAD.size
        sentence_keys = list(struct.unpack_from(f"<{nkeys}Q", data, offset))
        offset += 8 * nkeys
        (key_length,) = struct.unpack_from("<H", data, offset)
        offset += 2
        has_story, has_words, has_titles = key_length & _STORY_FLAG, key_length & _WORDS_FLAG, key_length & _TITLES_FLAG
        packed = key_length & _PACKED_FLAG
        key_length &= ~_FLAGS
        key = data[offset : offset + key_length].decode("utf-8", "surrogatepass")
        offset += key_length
        story = replaces = 0
        source = ""
        if has_story:
            story, replaces, source_length = _STORY.unpack_from(data, offset)
            offset += _STORY.size
            source = data[offset : offset + source_length].decode("utf-8", "replace")
            offset += source_length
        title = declared = 0
        if has_titles:
            title, declared = _TITLES.unpack_from(data, offset)
            offset += _TITLES.size
        story_words, digest = None, 0
        if has_words:
            nwords, nfigures, digest, datelines = _WORDS.unpack_from(data, offset)
            offset += _WORDS.size
            story_words = story_words_read_later(partial(_story_words, data, offset, nwords, nfigures), datelines)
            offset += nwords * _WORD_BYTES + nfigures * _WORD_ARRAYS[3].itemsize
        sketch = Sketch.from_record(data, offset, sketch_size, placed=bool(has_words), packed=bool(packed))
        return cls(
            doc_id,
            key,
            time,
            simhash,
            sketch,
            chars,
            state,
            sentence_keys,
            story,
            replaces,
            source,
            story_words,
            digest,
            title=title,
            declared=declared,
        )


def passed_over(data: bytes, keys: set[int], simhash: int, distance: int, key: bytes) -> bool:
    """Whether the verdict rule passes over the encoded record ``data`` as a candidate of a
    document with sentence and sketch keys ``keys``, SimHash ``simhash`` and encoded key
    ``key``: the record shares none of the keys, its SimHash is farther than ``distance``, it
    is stored under another key, and it is committed and replaces no copy. A bucket's members
    are found by a 32-bit hash of the bucket, so a few of those read belong to another bucket
    that has the same hash; such a record need not be decoded."""
    _, _, stored_simhash, _, _, state, nkeys = _HEAD.unpack_from(data)
    if state != COMMITTED or (stored_simhash ^ simhash).bit_count() <= distance:
        return False
    offset = _HEAD.size + 8 * nkeys
    if not keys.isdisjoint(struct.unpack_from(f"<{nkeys}Q", data, _HEAD.size)):
        return False
    (key_length,) = struct.unpack_from("<H", data, offset)
    if key_length & _STORY_FLAG:
        return False  # may replace a copy: read whole
    return data[offset + 2 : offset + 2 + (key_length & ~_FLAGS)] != key


def _story_words(data: bytes, offset: int, nwords: int, nfigures: int) -> StoryWords:
    """The story words' arrays of a record, from ``offset`` (:data:`_WORD_ARRAYS`), read in place."""
    parts = []
    for stored, count in zip(_WORD_ARRAYS, (nwords, nwords, nwords, nfigures)):
        array = np.frombuffer(data, stored, count, offset)  # positional: keywords cost as much
        parts.append(array if _NATIVE else _native(array))
        offset += count * stored.itemsize
    words, idf, spread, figures = parts
    return StoryWords(words, idf, spread, figures)


def pack_text(text: str) -> bytes:
    """A kept text as stored: UTF-8 (lone surrogates escaped), zlib-compressed."""
    return zlib.compress(text.encode("utf-8", "backslashreplace"), 6)


def unpack_text(data: bytes) -> str:
    """A kept text as stored, unpacked (taken from :data:`UNPACKED` when unpacked lately)."""
    return UNPACKED.text(data)


class UnpackedTexts:
    """Texts unpacked lately, by their packed bytes, the least recently used dropped first
    once they hold more than ``max_bytes`` (packed and unpacked, two bytes a character):
    a service lists the same stored entries again and again, and unpacking a news-length text
    costs several times reading it. The same bytes always unpack to the same text, so a text
    taken from here is the one unpacking would give."""

    def __init__(self, max_bytes: int = 16 << 20) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._kept: OrderedDict[bytes, str] = OrderedDict()
        self._lock = threading.Lock()  # stores may be read from several threads

    def __len__(self) -> int:
        return len(self._kept)

    def text(self, data: bytes) -> str:
        with self._lock:
            text = self._kept.get(data)
            if text is not None:
                self._kept.move_to_end(data)
                return text
        text = zlib.decompress(data).decode("utf-8", "replace")
        size = len(data) + 2 * len(text)
        if size <= self.max_bytes // 16:  # a very long text would push out many others
            with self._lock:
                if data not in self._kept:
                    self._kept[data] = text
                    self.bytes += size
                while self.bytes > self.max_bytes:
                    dropped, gone = self._kept.popitem(last=False)
                    self.bytes -= len(dropped) + 2 * len(gone)
        return text


UNPACKED = UnpackedTexts()


def clip_key(key: str, limit: int = 2000) -> str:
    """Keys (usually URLs) are stored whole up to ``limit`` UTF-8 bytes.

    A lone surrogate (from a JSON escape such as ``"\\ud800"``, or an undecodable byte of the
    input) is stored as itself, so a duplicate's ``duplicate_of`` is its first copy's key
    exactly; a key cut at the limit loses the character cut in half.
    """
    encoded = key.encode("utf-8", "surrogatepass")
    if len(encoded) <= limit:
        return key
    end = limit
    while True:
        try:
            return encoded[:end].decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:  # cut inside a character (of 4 bytes at most)
            end -= 1


def content_key(record: Mapping[str, Any] | str | bytes, leave_out: Collection[str] = ()) -> str:
    """The key of a record that has none: ``text:`` and a 128-bit BLAKE2b hash of the record
    exactly as given (every field, but those in ``leave_out``: the fields a run writes), or of a
    text or page given alone.

    A key names one document: the same record seen again (a rerun, a resumed batch, the output of
    an earlier run) gets the same key in every run and process, and is a revisit; any other
    record gets another key, however alike its text. Nothing is folded first: a Traditional copy
    of a story, or the same text under another title, is a copy to judge, never "the same
    document" (numbered keys such as ``<spider>:item-<n>`` repeat between runs for the same reason).
    """
    if isinstance(record, Mapping):
        kept = {str(name): value for name, value in record.items() if name not in leave_out}
        data = json.dumps(kept, sort_keys=True, ensure_ascii=False, default=_plain).encode("utf-8", "surrogatepass")
    elif isinstance(record, str):
        data = record.encode("utf-8", "surrogatepass")
    else:
        data = bytes(record)
    return "text:" + hashlib.blake2b(data, digest_size=16).hexdigest()


def _plain(value: Any) -> Any:
    """A field value JSON cannot hold, as a content key hashes it: bytes by their hex, another
    object by its repr."""
    if isinstance(value, (bytes, bytearray)):
        return {"bytes": bytes(value).hex()}
    if isinstance(value, (set, frozenset)):
        return sorted(map(repr, value))
    return repr(value)
