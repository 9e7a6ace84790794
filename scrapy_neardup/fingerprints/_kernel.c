/* The per-character and per-word loops of fingerprinting, and the bucket filter probes, in C.
 *
 * fingerprint.py computes the same values with numpy when this module is not built; tests
 * compare the two on every kind of text. Nothing here decides anything that the Python code
 * does not define: sentence splitting, shingle hashing, sentence keys and SimHash weighting
 * follow text.py, sketch.py and fingerprint.py step by step, only without per-step numpy
 * calls, which cost more than the work on news-length text.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ xxh64 (the spec) */

static const uint64_t P1 = 0x9E3779B185EBCA87ULL;
static const uint64_t P2 = 0xC2B2AE3D27D4EB4FULL;
static const uint64_t P3 = 0x165667B19E3779F9ULL;
static const uint64_t P4 = 0x85EBCA77C2B2AE63ULL;
static const uint64_t P5 = 0x27D4EB2F165667C5ULL;

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

/* Little-endian on every host: one load or store where the host is little-endian (a loop of
 * byte loads or stores is not always merged into one, and a run page's checksum reads every
 * word of it, its decoding writes every entry). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static inline uint64_t read64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint32_t read32(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline void write64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
#else
static inline uint64_t read64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static inline uint32_t read32(const unsigned char *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline void write64(unsigned char *p, uint64_t v) {
    for (int b = 0; b < 8; b++) p[b] = (unsigned char)(v >> (8 * b));
}
#endif

static inline uint64_t xxh_round(uint64_t acc, uint64_t input) {
    acc += input * P2;
    acc = rotl64(acc, 31);
    return acc * P1;
}

static inline uint64_t xxh_merge(uint64_t acc, uint64_t value) {
    acc ^= xxh_round(0, value);
    return acc * P1 + P4;
}

/* The end of xxh64 from ``h``: the last bytes p..end (fewer than 32) and the avalanche. */
static inline uint64_t xxh64_tail(uint64_t h, const unsigned char *p, const unsigned char *end) {
    while (p + 8 <= end) {
        h ^= xxh_round(0, read64(p));
        h = rotl64(h, 27) * P1 + P4;
        p += 8;
    }
    if (p + 4 <= end) {
        h ^= (uint64_t)read32(p) * P1;
        h = rotl64(h, 23) * P2 + P3;
        p += 4;
    }
    while (p < end) {
        h ^= (uint64_t)(*p) * P5;
        h = rotl64(h, 11) * P1;
        p++;
    }
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

/* xxh64 of fewer than 32 bytes, inline where a loop hashes many short words. */
static inline uint64_t xxh64_short(const unsigned char *p, size_t len) { return xxh64_tail(P5 + len, p, p + len); }

static uint64_t xxh64(const unsigned char *p, size_t len) {
    const unsigned char *end = p + len;
    if (len < 32) return xxh64_short(p, len);
    uint64_t v1 = P1 + P2, v2 = P2, v3 = 0, v4 = 0 - P1;
    const unsigned char *limit = end - 32;
    do {
        v1 = xxh_round(v1, read64(p));
        v2 = xxh_round(v2, read64(p + 8));
        v3 = xxh_round(v3, read64(p + 16));
        v4 = xxh_round(v4, read64(p + 24));
        p += 32;
    } while (p <= limit);
    uint64_t h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
    h = xxh_merge(h, v1);
    h = xxh_merge(h, v2);
    h = xxh_merge(h, v3);
    h = xxh_merge(h, v4);
    return xxh64_tail(h + (uint64_t)len, p, end);
}

static PyObject *py_xxh64(PyObject *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    uint64_t h = xxh64((const unsigned char *)view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLongLong(h);
}

/* ------------------------------------------------------------------ helpers */

typedef struct {
    Py_buffer view;
    int held;
} Buffer;

static int get_buffer(PyObject *obj, Buffer *b, Py_ssize_t item, const char *what) {
    if (PyObject_GetBuffer(obj, &b->view, PyBUF_C_CONTIGUOUS) < 0) return -1;
    b->held = 1;
    if (b->view.len % item != 0) {
        PyErr_Format(PyExc_ValueError, "%s: buffer size is not a multiple of %zd", what, item);
        return -1;
    }
    return 0;
}

static void release(Buffer *b) {
    if (b->held) PyBuffer_Release(&b->view);
    b->held = 0;
}

/* ------------------------------------------------------------------ text parts */

static const uint64_t POLY = 0x100000001B3ULL; /* sketch.py's polynomial base */
static const uint64_t M1 = 0xBF58476D1CE4E5B9ULL;
static const uint64_t M2 = 0x94D049BB133111EBULL;

static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= M1;
    x ^= x >> 27;
    x *= M2;
    return x ^ (x >> 31);
}

/* Sorts a text's shingles by their sketch hash (the top 32 bits of the whole hash), equal
 * hashes in text order, into ``sorted`` as (hash << 32 | position); ``ends`` has room for
 * 2^bits counts, 2^bits at least the shingles. The hashes are mixed, so even: a scatter by
 * their top ``bits`` bits leaves them sorted but within buckets of about one item each, which
 * one pass of insertion puts in order (few moves, its branches foreseen). Hashes made to share
 * their top bits would make that pass quadratic: past a few moves an item, qsort takes over. */
static int u64_order(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : (x > y);
}

static void sort_by_top(const uint64_t *whole, Py_ssize_t count, uint64_t *sorted, uint32_t *ends, int bits) {
    Py_ssize_t buckets = (Py_ssize_t)1 << bits;
    int shift = 64 - bits;
    memset(ends, 0, sizeof(uint32_t) * (size_t)buckets);
    for (Py_ssize_t i = 0; i < count; i++) ends[whole[i] >> shift]++;
    uint32_t total = 0;
    for (Py_ssize_t b = 0; b < buckets; b++) {
        uint32_t here = ends[b];
        ends[b] = total;
        total += here;
    }
    for (Py_ssize_t i = 0; i < count; i++)
        sorted[ends[whole[i] >> shift]++] = (whole[i] & 0xFFFFFFFF00000000ULL) | (uint64_t)i;
    Py_ssize_t moves = 0;
    for (Py_ssize_t i = 1; i < count; i++) {
        uint64_t v = sorted[i];
        Py_ssize_t j = i;
        for (; j > 0 && sorted[j - 1] > v; j--) sorted[j] = sorted[j - 1];
        sorted[j] = v;
        moves += i - j;
        if (moves > 8 * count) {
            qsort(sorted, (size_t)count, sizeof(uint64_t), u64_order);
            return;
        }
    }
}

static inline int is_digit(uint32_t c) { return c >= '0' && c <= '9'; }
static inline int is_latin(uint32_t c) { return c >= 'a' && c <= 'z'; }
static inline int is_latin_letter(uint32_t c) { return is_latin(c) || (c >= 'A' && c <= 'Z'); }

typedef struct {
    Py_ssize_t start, length, number;
} Span;

/* Longest first; equal lengths in text order (numpy's stable argsort of -length). */
static int longer_first(const void *a, const void *b) {
    const Span *x = (const Span *)a, *y = (const Span *)b;
    if (x->length != y->length) return x->length > y->length ? -1 : 1;
    return x->number < y->number ? -1 : (x->number > y->number);
}

static int by_number(const void *a, const void *b) {
    const Span *x = (const Span *)a, *y = (const Span *)b;
    return x->number < y->number ? -1 : (x->number > y->number);
}

/* Sorts spans by ``order``: a text's few dozen sentences by insertion, inline (qsort calls
 * ``order`` through a pointer for each comparison); many by qsort. */
static void sort_spans(Span *spans, Py_ssize_t n, int (*order)(const void *, const void *)) {
    if (n > 64) {
        qsort(spans, (size_t)n, sizeof(Span), order);
        return;
    }
    for (Py_ssize_t i = 1; i < n; i++) {
        Span span = spans[i];
        Py_ssize_t j = i;
        for (; j > 0 && order(&spans[j - 1], &span) > 0; j--) spans[j] = spans[j - 1];
        spans[j] = span;
    }
}

/*
 * fold(text, table) -> bytes of native uint32 code points, or None
 *
 * text.fold_codes for text of the Basic Multilingual Plane whose every character the table
 * maps alone: each code point through ``table``, dropped characters left out. None where
 * the exact path is needed (a character beyond the BMP, or one the table marks as slow).
 */
static const uint32_t DROP = 0xFFFFFFFFu, SLOW = 0xFFFFFFFEu;

/* The loop of fold for one kind of str (a constant where this is inlined: one loop for each
 * kind, no branch on it per character): the folded code points into ``out``; their number, or
 * -1 where the exact path is needed. A dropped character is written over by the next. */
static inline __attribute__((always_inline)) Py_ssize_t fold_kind(int kind, const void *data, Py_ssize_t n,
                                                                  const uint32_t *table, unsigned char *out) {
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        uint32_t folded = c > 0xFFFF ? SLOW : table[c];
        memcpy(out + 4 * at, &folded, 4); /* native byte order, as numpy's uint32 */
        if (folded >= SLOW) { /* SLOW or DROP, both rare */
            if (folded == SLOW) return -1;
            continue;
        }
        at++;
    }
    return at;
}

static PyObject *py_fold(PyObject *self, PyObject *args) {
    PyObject *text, *table_obj;
    if (!PyArg_ParseTuple(args, "UO", &text, &table_obj)) return NULL;
    Buffer table_b = {0};
    if (get_buffer(table_obj, &table_b, 4, "fold table") < 0) {
        release(&table_b);
        return NULL;
    }
    if (table_b.view.len < 4 * 0x10000) {
        release(&table_b);
        PyErr_SetString(PyExc_ValueError, "the fold table must cover the Basic Multilingual Plane");
        return NULL;
    }
    const uint32_t *table = (const uint32_t *)table_b.view.buf;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    const void *data = PyUnicode_DATA(text);
    PyObject *out = PyBytes_FromStringAndSize(NULL, 4 * n);
    if (!out) {
        release(&table_b);
        return NULL;
    }
    unsigned char *bytes = (unsigned char *)PyBytes_AS_STRING(out);
    Py_ssize_t at;
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
        at = fold_kind(PyUnicode_1BYTE_KIND, data, n, table, bytes);
        break;
    case PyUnicode_2BYTE_KIND:
        at = fold_kind(PyUnicode_2BYTE_KIND, data, n, table, bytes);
        break;
    default:
        at = fold_kind(PyUnicode_4BYTE_KIND, data, n, table, bytes);
    }
    release(&table_b);
    if (at < 0) {
        Py_DECREF(out);
        Py_RETURN_NONE;
    }
    if (_PyBytes_Resize(&out, 4 * at) < 0) return NULL;
    return out;
}

/*
 * review/marking.py's content of a text in one pass, for BMP text whose every character the
 * fold table maps alone (else None: the caller takes its exact path). Returns the content
 * characters (folded letters and digits, as text.content_mask tells them), the position in
 * ``text`` of each (int32, native order), the clauses joined by NUL (never content), and where
 * each clause starts among the content characters, then their number (int32): a clause is a
 * run of content characters between other folded characters (dropped characters split nothing).
 */
static PyObject *py_content_clauses(PyObject *self, PyObject *args) {
    PyObject *text, *fold_obj, *content_obj;
    if (!PyArg_ParseTuple(args, "UOO", &text, &fold_obj, &content_obj)) return NULL;
    Buffer fold_b = {0}, content_b = {0};
    PyObject *result = NULL;
    uint32_t *codes = NULL, *runs = NULL;
    int32_t *places = NULL, *offsets = NULL;
    if (get_buffer(fold_obj, &fold_b, 4, "fold table") < 0 || get_buffer(content_obj, &content_b, 1, "content table") < 0)
        goto done;
    if (fold_b.view.len < 4 * 0x10000 || content_b.view.len < 0x10000) {
        PyErr_SetString(PyExc_ValueError, "the fold and content tables must cover the Basic Multilingual Plane");
        goto done;
    }
    const uint32_t *fold = (const uint32_t *)fold_b.view.buf;
    const unsigned char *is_content = (const unsigned char *)content_b.view.buf;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    codes = (uint32_t *)PyMem_RawMalloc(sizeof(uint32_t) * (n + 1));
    places = (int32_t *)PyMem_RawMalloc(sizeof(int32_t) * (n + 1));
    offsets = (int32_t *)PyMem_RawMalloc(sizeof(int32_t) * (n + 2));
    runs = (uint32_t *)PyMem_RawMalloc(sizeof(uint32_t) * (2 * n + 1));
    if (!codes || !places || !offsets || !runs) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t count = 0, clauses = 0, joined = 0;
    int in_clause = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        uint32_t folded = c > 0xFFFF ? SLOW : fold[c];
        if (folded == DROP) continue;
        if (folded == SLOW) {
            result = Py_None;
            Py_INCREF(result);
            goto done;
        }
        int content = folded <= 0xFFFF ? is_content[folded] != 0 : (folded >= 0x20000 && folded < 0x40000);
        if (content) {
            if (!in_clause) {
                if (clauses) runs[joined++] = 0;
                offsets[clauses++] = (int32_t)count;
            }
            runs[joined++] = folded;
            codes[count] = folded;
            places[count] = (int32_t)i;
            count++;
        }
        in_clause = content;
    }
    offsets[clauses] = (int32_t)count;
    result = Py_BuildValue("(Ny#Ny#)", PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, codes, count),
                           (const char *)places, (Py_ssize_t)sizeof(int32_t) * count,
                           PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, runs, joined), (const char *)offsets,
                           (Py_ssize_t)sizeof(int32_t) * (clauses + 1));
done:
    PyMem_RawFree(codes);
    PyMem_RawFree(places);
    PyMem_RawFree(offsets);
    PyMem_RawFree(runs);
    release(&fold_b);
    release(&content_b);
    return result;
}

static inline uint32_t swap32(uint32_t v) {
    return (v >> 24) | ((v >> 8) & 0xFF00) | ((v << 8) & 0xFF0000) | (v << 24);
}

/* What parts() computes before it builds Python objects: no Python calls, so the GIL is
 * released meanwhile (a thread fingerprinting the next batch overlaps with the store). */
typedef struct {
    const uint32_t *codes;
    Py_ssize_t n;
    const unsigned char *end_table, *content_table;
    Py_ssize_t min_chars, simhash_sentences, key_count, sketch_size, width, sketch_key_count;
    uint32_t *content; /* content characters */
    Span *spans;       /* kept sentences */
    uint32_t *hashes;  /* the smallest distinct shingle hashes, sorted (at most sketch_size) */
    uint32_t *joined;  /* the SimHash text when it is not the whole text */
    uint64_t *whole;   /* every shingle's 64-bit hash, in text order; one block with hashes and places */
    Py_ssize_t chars, kept, distinct, joined_length;
    uint64_t keys[64];
    Py_ssize_t nkeys;
    uint64_t sketch_keys[16]; /* low SKETCH_KEY_BITS bits of the smallest sketch hashes' shingles */
    Py_ssize_t nsketch_keys;
    unsigned char *places; /* the place (0-255) of each kept sketch hash's first shingle */
} Parts;

static const int SKETCH_KEY_BITS = 40; /* sketch.SKETCH_KEY_BITS */
static const double UNKNOWN_IDF = 10.0;       /* storywords.UNKNOWN_IDF */
static const double WORD_WEIGHT_SCALE = 16.0; /* storywords.WEIGHT_SCALE */

static int compute_parts(Parts *p) {
    const uint32_t *codes = p->codes;
    Py_ssize_t n = p->n;
    p->content = (uint32_t *)PyMem_RawMalloc(sizeof(uint32_t) * (n + 1));
    p->spans = (Span *)PyMem_RawMalloc(sizeof(Span) * (n + 1));
    if (!p->content || !p->spans) return -1;

    /* Sentences (text.sentences_of): a sentence ends at a sentence-end character, or at a
     * "." that is not inside a number or a Latin name; only content characters count. */
    Py_ssize_t chars = 0, kept = 0, start = 0, number = 0;
    const unsigned char *end_table = p->end_table, *content_table = p->content_table;
    uint32_t *content = p->content;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t c = codes[i];
        int is_end, is_content;
        if (c > 0xFFFF) {
            is_end = 0;
            is_content = c >= 0x20000 && c < 0x40000;
        } else {
            is_end = end_table[c] != 0;
            is_content = content_table[c] != 0;
        }
        if (c == '.' && i > 0 && i + 1 < n) {
            uint32_t before = codes[i - 1], after = codes[i + 1];
            int inside = (is_digit(before) && is_digit(after)) || (is_latin(before) && is_latin(after));
            if (!inside) is_end = 1;
        }
        content[chars] = c; /* kept only if content: written always, no branch to foresee */
        chars += is_content;
        if (is_end || i + 1 == n) {
            Py_ssize_t length = chars - start;
            if (length >= p->min_chars) {
                p->spans[kept].start = start;
                p->spans[kept].length = length;
                p->spans[kept].number = number;
                kept++;
            }
            start = chars;
            number++;
        }
    }
    p->chars = chars;
    p->kept = kept;
    sort_spans(p->spans, kept, longer_first);

    /* Sentence keys: xxh64 of each sentence's UTF-32-LE bytes, longest first, distinct. */
    Py_ssize_t limit = p->key_count < 64 ? p->key_count : 64;
    p->nkeys = 0;
    for (Py_ssize_t s = 0; s < kept && p->nkeys < limit; s++) {
        uint32_t *sentence = p->content + p->spans[s].start;
        Py_ssize_t length = p->spans[s].length;
#if !PY_LITTLE_ENDIAN
        for (Py_ssize_t j = 0; j < length; j++) sentence[j] = swap32(sentence[j]);
#endif
        uint64_t key = xxh64((const unsigned char *)sentence, (size_t)length * 4);
#if !PY_LITTLE_ENDIAN
        for (Py_ssize_t j = 0; j < length; j++) sentence[j] = swap32(sentence[j]);
#endif
        int seen = 0;
        for (Py_ssize_t j = 0; j < p->nkeys; j++) seen |= p->keys[j] == key;
        if (!seen) p->keys[p->nkeys++] = key;
    }

    /* SimHash text: the longest sentences in text order (NULL: the whole folded text). */
    if (p->simhash_sentences > 0 && kept > p->simhash_sentences) {
        Py_ssize_t top = p->simhash_sentences;
        sort_spans(p->spans, top, by_number);
        Py_ssize_t total = top - 1;
        for (Py_ssize_t s = 0; s < top; s++) total += p->spans[s].length;
        p->joined = (uint32_t *)PyMem_RawMalloc(sizeof(uint32_t) * (total + 1));
        if (!p->joined) return -1;
        Py_ssize_t at = 0;
        for (Py_ssize_t s = 0; s < top; s++) {
            if (s) p->joined[at++] = '\n';
            memcpy(p->joined + at, p->content + p->spans[s].start, sizeof(uint32_t) * p->spans[s].length);
            at += p->spans[s].length;
        }
        p->joined_length = total;
    }

    /* Sketch (sketch.shingle_hashes_of_codes): top 32 bits of the mixed polynomial hash of
     * every width-character shingle of the content, sorted and distinct. */
    p->distinct = 0;
    if (chars > 0) {
        Py_ssize_t w = chars < p->width ? chars : p->width;
        Py_ssize_t count = chars - w + 1;
        if ((uint64_t)count > UINT32_MAX) return -1; /* a position must fit in 32 bits */
        int bits = 4;
        while (((Py_ssize_t)1 << bits) < count) bits++;
        Py_ssize_t keep = p->sketch_size < count ? p->sketch_size : count;
        if (keep < 0) keep = 0;
        p->whole = (uint64_t *)PyMem_RawMalloc(sizeof(uint64_t) * 2 * count + sizeof(uint32_t) * (((size_t)1 << bits) + keep) + keep + 1);
        if (!p->whole) return -1;
        uint64_t *sorted = p->whole + count;
        uint32_t *ends = (uint32_t *)(sorted + count);
        p->hashes = ends + ((size_t)1 << bits);
        p->places = (unsigned char *)(p->hashes + keep);

        /* Each shingle's hash from the one before: h = sum of c[i + o] * POLY^(w-1-o) (the
         * polynomial of sketch.mixed_shingles), so the next drops c[i] * POLY^(w-1) and takes
         * c[i + w]; exact, as both wrap modulo 2^64. */
        const uint32_t *c = p->content;
        uint64_t h = 0, power = 1;
        for (Py_ssize_t o = 0; o < w; o++) {
            h = h * POLY + (uint64_t)c[o];
            if (o) power *= POLY;
        }
        Py_ssize_t rolled = w > 0 ? count - 1 : 0; /* (no characters in a shingle of width 0: h stays 0) */
        for (Py_ssize_t i = 0; i < rolled; i++) {
            p->whole[i] = mix64(h);
            h = (h - (uint64_t)c[i] * power) * POLY + (uint64_t)c[i + w];
        }
        for (Py_ssize_t i = rolled; i < count; i++) p->whole[i] = mix64(h);
        sort_by_top(p->whole, count, sorted, ends, bits);

        /* Distinct hashes, in order; for the first ``keep`` of them the place of their first
         * shingle (sketch.first_places: position * 256 // content characters) and for the first
         * sketch keys the smallest whole hash with those top bits (sketch.sketch_and_keys),
         * cut to its low SKETCH_KEY_BITS bits. Equal hashes come in text order: a hash's first
         * item is its first shingle. */
        Py_ssize_t nkeys = p->sketch_key_count < 16 ? p->sketch_key_count : 16;
        for (Py_ssize_t i = 0; i < count; i++) {
            uint32_t top = (uint32_t)(sorted[i] >> 32);
            Py_ssize_t at = (Py_ssize_t)(uint32_t)sorted[i];
            if (i == 0 || top != (uint32_t)(sorted[i - 1] >> 32)) {
                if (p->distinct < keep) {
                    p->hashes[p->distinct] = top;
                    p->places[p->distinct] = (unsigned char)((int64_t)at * 256 / chars);
                }
                if (p->distinct < nkeys) p->sketch_keys[p->distinct] = p->whole[at];
                p->distinct++;
            } else if (p->distinct <= nkeys && p->whole[at] < p->sketch_keys[p->distinct - 1]) {
                p->sketch_keys[p->distinct - 1] = p->whole[at];
            }
        }
        Py_ssize_t m = nkeys < p->distinct ? nkeys : p->distinct;
        for (Py_ssize_t j = 0; j < m; j++) p->sketch_keys[j] &= (1ULL << SKETCH_KEY_BITS) - 1;
        p->nsketch_keys = m;
#if !PY_LITTLE_ENDIAN
        Py_ssize_t take = p->distinct < keep ? p->distinct : keep;
        for (Py_ssize_t i = 0; i < take; i++) p->hashes[i] = swap32(p->hashes[i]);
#endif
    }
    return 0;
}

static PyObject *list_of_u64(const uint64_t *values, Py_ssize_t n) {
    PyObject *list = PyList_New(n);
    if (!list) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *value = PyLong_FromUnsignedLongLong(values[i]);
        if (!value) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, value);
    }
    return list;
}

/*
 * parts(codes, ends, content, min_chars, simhash_sentences, key_count, sketch_size, width,
 *       sketch_key_count)
 *   -> (simhash_text, sentence_keys, sketch_bytes, sketch_distinct, content_chars, sketch_keys,
 *       sketch_places, content)
 *
 * ``codes`` are folded code points (uint32), ``ends`` and ``content`` the per-BMP-code-point
 * tables of text.py (bool). See Fingerprinter.fingerprint for the meaning of each output;
 * the sketch bytes are little-endian uint32, at most ``sketch_size`` of them, and the places
 * one byte each; ``content`` is the content characters, native uint32 (for story_words).
 */
static PyObject *py_parts(PyObject *self, PyObject *args) {
    PyObject *codes_obj, *ends_obj, *content_obj;
    Parts p;
    memset(&p, 0, sizeof(p));
    if (!PyArg_ParseTuple(args, "OOOnnnnnn", &codes_obj, &ends_obj, &content_obj, &p.min_chars,
                          &p.simhash_sentences, &p.key_count, &p.sketch_size, &p.width,
                          &p.sketch_key_count))
        return NULL;
    Buffer codes_b = {0}, ends_b = {0}, content_b = {0};
    PyObject *result = NULL, *text = NULL, *keys = NULL, *sketch = NULL, *sketch_keys = NULL;
    PyObject *places = NULL, *content = NULL;
    int failed;

    if (get_buffer(codes_obj, &codes_b, 4, "codes") < 0 ||
        get_buffer(ends_obj, &ends_b, 1, "ends") < 0 ||
        get_buffer(content_obj, &content_b, 1, "content") < 0)
        goto done;
    if (ends_b.view.len < 0x10000 || content_b.view.len < 0x10000) {
        PyErr_SetString(PyExc_ValueError, "tables must cover the Basic Multilingual Plane");
        goto done;
    }
    p.codes = (const uint32_t *)codes_b.view.buf;
    p.n = codes_b.view.len / 4;
    p.end_table = (const unsigned char *)ends_b.view.buf;
    p.content_table = (const unsigned char *)content_b.view.buf;

    Py_BEGIN_ALLOW_THREADS
    failed = compute_parts(&p);
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }

    keys = list_of_u64(p.keys, p.nkeys);
    if (!keys) goto done;
    if (p.joined)
        text = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, p.joined, p.joined_length);
    else
        text = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, p.codes, p.n);
    if (!text) goto done;
    Py_ssize_t take = p.distinct < p.sketch_size ? p.distinct : p.sketch_size;
    sketch = PyBytes_FromStringAndSize(take ? (const char *)p.hashes : "", take * 4);
    if (!sketch) goto done;

    sketch_keys = list_of_u64(p.sketch_keys, p.nsketch_keys);
    if (!sketch_keys) goto done;
    places = PyBytes_FromStringAndSize(take && p.places ? (const char *)p.places : "", take && p.places ? take : 0);
    if (!places) goto done;
    content = PyBytes_FromStringAndSize(p.chars ? (const char *)p.content : "", p.chars * 4);
    if (!content) goto done;

    result = Py_BuildValue("(OOOnnOOO)", text, keys, sketch, p.distinct, p.chars, sketch_keys, places, content);

done:
    Py_XDECREF(text);
    Py_XDECREF(keys);
    Py_XDECREF(sketch);
    Py_XDECREF(sketch_keys);
    Py_XDECREF(places);
    Py_XDECREF(content);
    PyMem_RawFree(p.content);
    PyMem_RawFree(p.spans);
    PyMem_RawFree(p.whole); /* with the hashes and places */
    PyMem_RawFree(p.joined);
    release(&codes_b);
    release(&ends_b);
    release(&content_b);
    return result;
}

/* ------------------------------------------------------------------ story words (storywords.py) */

enum { PREFETCHED = 8 }; /* table slots asked for ahead of their reading */

static inline int is_han(uint32_t c) { return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF); }

typedef struct {
    uint32_t pair;
    float idf;
    double score;
    uint16_t spread;
} StoryWord;

typedef struct {
    uint32_t pair; /* 0: an empty slot (no pair of Chinese characters has code 0) */
    float idf;
} PairSlot;

/* Heaviest first; equal scores by pair code (numpy's lexsort on (code, -score)). */
static int heavier_first(const void *a, const void *b) {
    const StoryWord *x = (const StoryWord *)a, *y = (const StoryWord *)b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->pair < y->pair ? -1 : (x->pair > y->pair);
}

/* The ``keep`` heaviest of ``n`` words, heaviest first (heavier_first), moved to the front;
 * returns how many. One pass keeping them in order, most words turned away by one comparison
 * with the lightest kept: the order of a sort, without sorting every word. */
static Py_ssize_t heaviest(StoryWord *words, Py_ssize_t n, Py_ssize_t keep) {
    Py_ssize_t kept = 0;
    if (keep <= 0) return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (kept == keep && heavier_first(&words[i], &words[kept - 1]) >= 0) continue;
        StoryWord word = words[i];
        Py_ssize_t at = kept < keep ? kept++ : keep - 1; /* the lightest kept is dropped */
        while (at > 0 && heavier_first(&word, &words[at - 1]) < 0) {
            words[at] = words[at - 1];
            at--;
        }
        words[at] = word;
    }
    return kept;
}

static int u32_order(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : (x > y);
}

/* Figures (storywords.figures_of): the runs of digits of ``content``, each hashed (xxh64 of
 * the UTF-32-LE bytes, low 32 bits); dates and the digits of codes (after a Latin letter, or
 * before letters that digits follow) left out. Writes the ``max_figures`` smallest distinct
 * hashes, sorted, to ``figures`` (room for ``n``) and returns how many; -1 when out of memory. */
static Py_ssize_t figure_hashes(const uint32_t *content, Py_ssize_t n, uint32_t *figures, Py_ssize_t max_figures) {
    Py_ssize_t nfigures = 0;
    for (Py_ssize_t i = 0, end; i < n; i = end) {
        end = i + 1;
        if (!is_digit(content[i])) continue;
        while (end < n && is_digit(content[end])) end++;
        if (end < n && (content[end] == 0x5E74 || content[end] == 0x6708 || content[end] == 0x65E5))
            continue; /* a date (年, 月, 日): left out */
        Py_ssize_t letters = end;
        while (letters < n && is_latin_letter(content[letters])) letters++;
        if ((i > 0 && is_latin_letter(content[i - 1])) || (letters > end && letters < n && is_digit(content[letters])))
            continue; /* a code: after a Latin letter, or before letters that digits follow */
        Py_ssize_t length = end - i;
        unsigned char small_run[4 * 64], *run = small_run;
        if (length > 64) {
            run = (unsigned char *)PyMem_RawMalloc((size_t)length * 4);
            if (!run) {
                PyErr_NoMemory();
                return -1;
            }
        }
        for (Py_ssize_t k = 0; k < length; k++) {
            uint32_t c = content[i + k];
            run[4 * k] = (unsigned char)c;
            run[4 * k + 1] = (unsigned char)(c >> 8);
            run[4 * k + 2] = (unsigned char)(c >> 16);
            run[4 * k + 3] = (unsigned char)(c >> 24);
        }
        figures[nfigures++] = (uint32_t)xxh64(run, (size_t)length * 4);
        if (run != small_run) PyMem_RawFree(run);
    }
    qsort(figures, (size_t)nfigures, sizeof(uint32_t), u32_order);
    Py_ssize_t distinct = 0;
    for (Py_ssize_t i = 0; i < nfigures; i++)
        if (i == 0 || figures[i] != figures[i - 1]) figures[distinct++] = figures[i];
    return distinct < max_figures ? distinct : max_figures;
}

/* A text's pairs, each with how often it occurs and where (a bit per part of the text): open
 * addressing on the pair code (0: an empty slot; no pair of Chinese characters has code 0)
 * gives each pair its number, in the order first seen, and the counts and spreads are kept by
 * number, in arrays of the text's few hundred distinct pairs: one slot read an occurrence. */
typedef struct {
    uint32_t pair, number;
} CountSlot;

/* Where a pair's probe starts in the IDF table of ``nslots`` slots (storywords._pair_slots):
 * the top bits of the 32-bit product pair * 0x9E3779B1. */
static inline uint64_t idf_home(uint32_t pair, uint64_t nslots) { return (uint64_t)(pair * 0x9E3779B1u) * nslots >> 32; }

typedef struct {
    CountSlot *slots; /* ``mask`` + 1 slots */
    uint32_t mask, shift;
    uint32_t *pairs, *counts; /* by number */
    uint16_t *spreads;
    Py_ssize_t distinct;
} PairCounts;

static inline void count_pair(PairCounts *t, uint32_t pair, uint16_t bit) {
    uint32_t slot = (pair * 0x9E3779B1u) >> t->shift;
    while (t->slots[slot].pair != 0 && t->slots[slot].pair != pair) slot = (slot + 1) & t->mask;
    /* A pair not seen takes the next number; seen or not, the same steps (no branch to guess):
     * the counts and spreads of numbers not taken yet are 0. */
    uint32_t seen = t->slots[slot].pair != 0;
    uint32_t number = seen ? t->slots[slot].number : (uint32_t)t->distinct;
    t->slots[slot].pair = pair;
    t->slots[slot].number = number;
    t->distinct += !seen;
    t->pairs[number] = pair;
    t->counts[number]++;
    t->spreads[number] |= bit;
}

/*
 * story_words(content, slots, function, tf_factors, max_words, bins, max_figures)
 *   -> (words, idf_bytes, spread, figures)
 *
 * storywords.story_words_of: ``content`` native uint32 content characters; ``slots`` the
 * pair table as open addressing (a power of two of (uint32 pair, float32 idf) slots, probed
 * from idf_home); ``function`` a bool per BMP code point;
 * ``tf_factors`` float64, 1 + ln(count) by count. Outputs native uint32 words, uint8 IDF
 * bytes, uint16 spreads and the sorted uint32 figure hashes.
 */
static PyObject *py_story_words(PyObject *self, PyObject *args) {
    PyObject *content_obj, *slots_obj, *function_obj, *factors_obj;
    Py_ssize_t max_words, bins, max_figures;
    if (!PyArg_ParseTuple(args, "OOOOnnn", &content_obj, &slots_obj, &function_obj, &factors_obj,
                          &max_words, &bins, &max_figures))
        return NULL;
    Buffer content_b = {0}, slots_b = {0}, function_b = {0}, factors_b = {0};
    PyObject *result = NULL;
    char *arena = NULL;
    if (get_buffer(content_obj, &content_b, 4, "content") < 0 || get_buffer(slots_obj, &slots_b, 8, "slots") < 0 ||
        get_buffer(function_obj, &function_b, 1, "function") < 0 || get_buffer(factors_obj, &factors_b, 8, "tf_factors") < 0)
        goto done;
    Py_ssize_t nslots = slots_b.view.len / 8;
    if (function_b.view.len < 0x10000 || factors_b.view.len < 16 || bins < 1 || bins > 16 || nslots < 1 ||
        (nslots & (nslots - 1)) != 0 || (uint64_t)nslots > ((uint64_t)1 << 32)) {
        PyErr_SetString(PyExc_ValueError, "story_words: bad tables");
        goto done;
    }
    const uint32_t *content = (const uint32_t *)content_b.view.buf;
    Py_ssize_t n = content_b.view.len / 4;
    const PairSlot *slots = (const PairSlot *)slots_b.view.buf;
    uint64_t mask = (uint64_t)nslots - 1;
    const unsigned char *function = (const unsigned char *)function_b.view.buf;
    const double *factors = (const double *)factors_b.view.buf;
    Py_ssize_t nfactors = factors_b.view.len / 8;

    /* At least twice as many slots as pairs: probes stay short. Every array in one block, those
     * of the widest items first, only the slots cleared. */
    uint32_t bits = 4;
    while (((Py_ssize_t)1 << bits) < 2 * (n + 1)) bits++;
    size_t nslots_counted = (size_t)1 << bits, items = (size_t)n + 1;
    arena = (char *)PyMem_RawMalloc(sizeof(StoryWord) * items + sizeof(CountSlot) * nslots_counted +
                                    (5 * sizeof(uint32_t) + 3 * sizeof(uint16_t) + 1) * items);
    if (!arena) {
        PyErr_NoMemory();
        goto done;
    }
    StoryWord *words = (StoryWord *)arena;
    PairCounts counted = {(CountSlot *)(words + items), (uint32_t)(nslots_counted - 1), 32 - bits};
    counted.pairs = (uint32_t *)(counted.slots + nslots_counted);
    counted.counts = counted.pairs + items;
    uint32_t *figures = counted.counts + items, *kept_words = figures + items, *listed = kept_words + items;
    counted.spreads = (uint16_t *)(listed + items);
    uint16_t *kept_spread = counted.spreads + items, *listed_bits = kept_spread + items;
    unsigned char *kept_idf = (unsigned char *)(listed_bits + items);
    memset(counted.slots, 0, sizeof(CountSlot) * nslots_counted);
    memset(counted.counts, 0, sizeof(uint32_t) * items);
    memset(counted.spreads, 0, sizeof(uint16_t) * items);

    /* Pairs of Chinese characters, neither a function character. A pair at ``i`` is in part
     * i * bins / n of the text: the part moves on at each ``next_part`` (the first i past it). */
    int usable = n > 0 && is_han(content[0]) && !function[content[0]]; /* each character tested once */
    Py_ssize_t part = 0, next_part = (n + bins - 1) / bins;
    Py_ssize_t npairs = 0;
    for (Py_ssize_t i = 0; i + 1 < n; i++) {
        while (i >= next_part) {
            part++;
            next_part = ((part + 1) * n + bins - 1) / bins;
        }
        uint32_t a = content[i], b = content[i + 1];
        int next = is_han(b) & !function[b & 0xFFFF]; /* (a Chinese character is in the BMP) */
        /* Listed first, counted after: each pair is written and kept by moving the list's end
         * (no branch to guess on the characters), then counted without a character test. */
        listed[npairs] = a << 16 | b;
        listed_bits[npairs] = (uint16_t)(1u << part);
        npairs += usable & next;
        usable = next;
    }
    for (Py_ssize_t i = 0; i < npairs; i++) count_pair(&counted, listed[i], listed_bits[i]);
    Py_ssize_t nwords = 0;
    for (Py_ssize_t u = 0; u < counted.distinct; u++) {
        uint32_t count = counted.counts[u]; /* each pair written, kept if seen twice */
        words[nwords].pair = counted.pairs[u];
        words[nwords].score = (double)(count < nfactors ? count : nfactors - 1); /* the factor's index, for now */
        words[nwords].spread = counted.spreads[u];
        nwords += count >= 2;
    }
    /* The table is megabytes: each word's slot is asked for PREFETCHED words ahead of reading
     * it (asking for all at once overflows what the core can have on its way). */
    for (Py_ssize_t i = 0; i < nwords && i < PREFETCHED; i++) __builtin_prefetch(&slots[idf_home(words[i].pair, nslots)]);
    for (Py_ssize_t i = 0; i < nwords; i++) {
        if (i + PREFETCHED < nwords) __builtin_prefetch(&slots[idf_home(words[i + PREFETCHED].pair, nslots)]);
        uint32_t pair = words[i].pair;
        /* Open addressing (storywords._pair_slots): an empty slot holds pair code 0. */
        float idf = (float)UNKNOWN_IDF;
        for (uint64_t slot = idf_home(pair, (uint64_t)nslots);; slot = (slot + 1) & mask) {
            if (slots[slot].pair == pair) {
                idf = slots[slot].idf;
                break;
            }
            if (slots[slot].pair == 0) break;
        }
        words[i].idf = idf;
        words[i].score = (double)idf * factors[(Py_ssize_t)words[i].score];
    }
    nwords = heaviest(words, nwords, max_words);

    Py_ssize_t distinct = figure_hashes(content, n, figures, max_figures);
    if (distinct < 0) goto done;

    for (Py_ssize_t i = 0; i < nwords; i++) {
        double q = floor((double)words[i].idf * WORD_WEIGHT_SCALE + 0.5);
        kept_words[i] = words[i].pair;
        kept_idf[i] = (unsigned char)(q > 255 ? 255 : q);
        kept_spread[i] = words[i].spread;
    }
    result = Py_BuildValue("(y#y#y#y#)", (const char *)kept_words, nwords * 4, (const char *)kept_idf, nwords,
                           (const char *)kept_spread, nwords * 2, (const char *)figures, distinct * 4);

done:
    PyMem_RawFree(arena);
    release(&content_b);
    release(&slots_b);
    release(&function_b);
    release(&factors_b);
    return result;
}

/*
 * figures(content, max_figures) -> figures
 *
 * The figures of story_words alone (storywords.figures_of): a text judged against another needs
 * its figures, and its story words only where the rule reads them.
 */
static PyObject *py_figures(PyObject *self, PyObject *args) {
    PyObject *content_obj, *result = NULL;
    Py_ssize_t max_figures;
    if (!PyArg_ParseTuple(args, "On", &content_obj, &max_figures)) return NULL;
    Buffer content_b = {0};
    if (get_buffer(content_obj, &content_b, 4, "content") < 0) return NULL;
    const uint32_t *content = (const uint32_t *)content_b.view.buf;
    Py_ssize_t n = content_b.view.len / 4;
    uint32_t *figures = (uint32_t *)PyMem_RawMalloc(sizeof(uint32_t) * (size_t)(n + 1));
    if (!figures) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t distinct = figure_hashes(content, n, figures, max_figures);
    if (distinct >= 0) result = PyBytes_FromStringAndSize((const char *)figures, distinct * 4);
done:
    PyMem_RawFree(figures);
    release(&content_b);
    return result;
}

/* dateline_marks(content) -> (ends of 日电, starts of 本报讯, starts of 本报): the places in
 * native uint32 content characters where storywords.datelines_of looks for a dateline (its
 * numpy path finds them with str.find). Most texts hold none: they cost one pass. */
static int append_index(PyObject *list, Py_ssize_t index) {
    PyObject *value = PyLong_FromSsize_t(index);
    if (value == NULL) return -1;
    int failed = PyList_Append(list, value);
    Py_DECREF(value);
    return failed;
}

static PyObject *py_dateline_marks(PyObject *self, PyObject *arg) {
    Buffer content_b = {0};
    if (get_buffer(arg, &content_b, 4, "content") < 0) return NULL;
    const uint32_t *content = (const uint32_t *)content_b.view.buf;
    Py_ssize_t n = content_b.view.len / 4;
    PyObject *said = PyList_New(0), *notices = PyList_New(0), *papers = PyList_New(0), *result = NULL;
    if (said == NULL || notices == NULL || papers == NULL) goto done;
    for (Py_ssize_t i = 0; i + 1 < n; i++) {
        uint32_t a = content[i], b = content[i + 1];
        if (a == 0x65E5 && b == 0x7535) { /* 日电 */
            if (append_index(said, i + 2) < 0) goto done;
        } else if (a == 0x672C && b == 0x62A5) { /* 本报, and 本报讯 */
            if (append_index(papers, i) < 0) goto done;
            if (i + 2 < n && content[i + 2] == 0x8BAF && append_index(notices, i) < 0) goto done;
        }
    }
    result = PyTuple_Pack(3, said, notices, papers);
done:
    Py_XDECREF(said);
    Py_XDECREF(notices);
    Py_XDECREF(papers);
    release(&content_b);
    return result;
}

/* ------------------------------------------------------------------ site notices (notices.py) */

/* The kinds of notices.py's words, as notices._kernel_words lists them (W_END: the sentence
 * ends; W_LEAD: what may stand before a credit line's label). */
enum { W_RIGHTS, W_HEADING, W_SELF, W_CHANNEL, W_NOT_SELF, W_ACTION, W_LABEL, W_OPENING, W_END, W_LEAD, W_KINDS };
/* Bits of ``first``: the kinds looked for at every character. */
enum { F_ANCHOR = 1, F_RIGHTS = 2, F_ACTION = 4, F_END = 8, F_LEAD = 16 };
#define ANCHORS ((1u << W_HEADING) | (1u << W_SELF) | (1u << W_CHANNEL))

typedef struct {
    const uint32_t *codes;
    Py_ssize_t n;
    const uint32_t *chars; /* every word's code points, one after another */
    const int32_t *words;  /* (offset, length, kind, next) of each word, in notices.py's order;
                              next: the next word with the same first character, or -1 (the
                              words of one first character chained in their order) */
    Py_ssize_t nwords;
    const unsigned char *first; /* F_ bits of each BMP code point that starts such a word */
    const unsigned char *head;  /* 1 + the first word starting with each BMP code point, or 0 */
} Words;

static inline int starts(const Words *w, uint32_t c, unsigned bit) { return c < 0x10000 && (w->first[c] & bit); }

/* Words are a few characters: compared inline (memcmp is a call through the PLT each time). */
static inline int word_is_at(const Words *w, const int32_t *word, Py_ssize_t at, Py_ssize_t limit) {
    if (at + word[1] > limit) return 0;
    const uint32_t *have = w->codes + at, *want = w->chars + word[0];
    for (int32_t k = 0; k < word[1]; k++)
        if (have[k] != want[k]) return 0;
    return 1;
}

/* The first word of one of ``kinds`` (in their order: longest first, as the regex alternation
 * tries them) written at ``at`` and ending by ``limit``; its index, or -1. */
static inline Py_ssize_t word_at(const Words *w, Py_ssize_t at, unsigned bit, unsigned kinds, Py_ssize_t limit) {
    uint32_t c = at < limit ? w->codes[at] : 0;
    if (at >= limit || !starts(w, c, bit)) return -1;
    /* The chain of words starting with ``c`` (a head past the words is a bad table: none). */
    for (Py_ssize_t i = (Py_ssize_t)w->head[c] - 1; i >= 0 && i < w->nwords; i = w->words[4 * i + 3]) {
        const int32_t *word = w->words + 4 * i;
        if ((kinds & (1u << word[2])) && word_is_at(w, word, at, limit)) return i;
    }
    return -1;
}

/* Words of ``kind`` found in codes[start:end] as re.findall finds them (leftmost, longest,
 * not overlapping): a bit per word index (the rights words come first, fewer than 64). */
static uint64_t words_in(const Words *w, Py_ssize_t start, Py_ssize_t end, unsigned bit, int kind, int first_only) {
    uint64_t found = 0;
    for (Py_ssize_t at = start; at < end;) {
        Py_ssize_t i = word_at(w, at, bit, 1u << kind, end);
        if (i < 0) {
            at++;
            continue;
        }
        found |= 1ULL << (i & 63);
        if (first_only) break;
        at += w->words[4 * i + 1];
    }
    return found;
}

static PyObject *push_span(PyObject *spans, Py_ssize_t start, Py_ssize_t end) {
    PyObject *span = Py_BuildValue("(nn)", start, end);
    if (span == NULL || PyList_Append(spans, span) < 0) {
        Py_XDECREF(span);
        return NULL;
    }
    Py_DECREF(span);
    return spans;
}

/* Whether a credit line's label and colon, or a line opening, is written at ``at``: the first
 * such word of those starting with its character, in their order. */
static int credit_at(const Words *w, Py_ssize_t at) {
    uint32_t c = w->codes[at];
    if (c > 0xFFFF) return 0;
    for (Py_ssize_t i = (Py_ssize_t)w->head[c] - 1; i >= 0 && i < w->nwords; i = w->words[4 * i + 3]) {
        const int32_t *word = w->words + 4 * i;
        if ((word[2] != W_LABEL && word[2] != W_OPENING) || !word_is_at(w, word, at, w->n)) continue;
        if (word[2] == W_OPENING) return 1;
        Py_ssize_t after = at + word[1];
        if (after < w->n && w->codes[after] == ' ') after++;
        if (after < w->n && w->codes[after] == ':') return 1;
    }
    return 0;
}

/*
 * notice_spans(codes, chars, words, first, head, credit_line_chars) -> [(start, end), ...]
 *
 * notices.notice_spans on folded code points (native uint32) instead of their text: the
 * same spans, in the order found, before merging. ``chars``, ``words``, ``first`` and
 * ``head`` are notices._kernel_words(): the rules' words, their kinds and first characters.
 * One pass over the code points lists the line breaks, the sentence ends and the characters
 * an anchor word starts with; the rules then look only there.
 */
static PyObject *py_notice_spans(PyObject *self, PyObject *args) {
    PyObject *codes_obj, *chars_obj, *words_obj, *first_obj, *head_obj;
    Py_ssize_t max_line;
    if (!PyArg_ParseTuple(args, "OOOOOn", &codes_obj, &chars_obj, &words_obj, &first_obj, &head_obj, &max_line))
        return NULL;
    Buffer codes_b = {0}, chars_b = {0}, words_b = {0}, first_b = {0}, head_b = {0};
    PyObject *spans = NULL;
    Py_ssize_t *marks = NULL;
    if (get_buffer(codes_obj, &codes_b, 4, "codes") < 0 || get_buffer(chars_obj, &chars_b, 4, "chars") < 0 ||
        get_buffer(words_obj, &words_b, 16, "words") < 0 || get_buffer(first_obj, &first_b, 1, "first") < 0 ||
        get_buffer(head_obj, &head_b, 1, "head") < 0)
        goto done;
    Words w = {codes_b.view.buf, codes_b.view.len / 4,          chars_b.view.buf, words_b.view.buf,
               words_b.view.len / 16, first_b.view.buf, head_b.view.buf};
    Py_ssize_t n = w.n, nchars = chars_b.view.len / 4;
    if (first_b.view.len < 0x10000 || head_b.view.len < 0x10000 || w.nwords > 255) {
        PyErr_SetString(PyExc_ValueError, "notice_spans: bad tables");
        goto done;
    }
    for (Py_ssize_t i = 0; i < w.nwords; i++) {
        const int32_t *word = w.words + 4 * i;
        if (word[0] < 0 || word[1] < 1 || word[0] + word[1] > nchars || word[2] < 0 || word[2] >= W_KINDS ||
            (word[3] != -1 && (word[3] <= i || word[3] >= w.nwords))) {
            PyErr_SetString(PyExc_ValueError, "notice_spans: bad words");
            goto done;
        }
    }
    if ((spans = PyList_New(0)) == NULL) goto done;
    const uint32_t *codes = w.codes;
    /* The few characters that matter (line breaks, sentence ends, the first characters of
     * anchor words), each written at the list's end, which moves on only where it is one; then
     * from them where each line break is, just past each sentence end, and each anchor's start. */
    if ((marks = PyMem_Malloc(sizeof(Py_ssize_t) * 4 * (size_t)(n + 1))) == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    Py_ssize_t nmarks = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        uint32_t c = codes[k];
        unsigned bits = c < 0x10000 ? w.first[c] : 0;
        marks[nmarks] = k;
        nmarks += ((bits & (F_END | F_ANCHOR)) | (c == '\n')) != 0;
    }
    Py_ssize_t *breaks = marks + nmarks, *ends = breaks + nmarks + 1, *anchors = ends + nmarks + 1;
    Py_ssize_t nbreaks = 0, nends = 0, nanchors = 0;
    for (Py_ssize_t m = 0; m < nmarks; m++) {
        Py_ssize_t k = marks[m];
        uint32_t c = codes[k];
        unsigned bits = c < 0x10000 ? w.first[c] : 0;
        if (c == '\n') breaks[nbreaks++] = k;
        if (bits & F_END) ends[nends++] = k + 1;
        if (bits & F_ANCHOR) anchors[nanchors++] = k;
    }
    /* Credit lines: a line opening (after spaces and brackets) with a label and a colon, or a
     * line opening; each no longer than ``max_line`` with its line break. */
    for (Py_ssize_t line = 0, b = 0; line < n;) {
        Py_ssize_t at = line;
        while (at < n && starts(&w, codes[at], F_LEAD)) at++;
        int credit = at < n && credit_at(&w, at);
        while (b < nbreaks && breaks[b] < at) b++;
        Py_ssize_t next = b < nbreaks ? breaks[b] + 1 : n;
        if (credit && next - line <= max_line && push_span(spans, line, next) == NULL) goto fail;
        line = next;
    }
    /* Anchors: a self-reference, a notice heading or a channel, each judged with its sentence. */
    Py_ssize_t memo_start[W_KINDS], memo_found[W_KINDS];
    for (int k = 0; k < W_KINDS; k++) memo_start[k] = -1;
    for (Py_ssize_t a = 0, at = 0; a < nanchors; a++) {
        if (anchors[a] < at) continue; /* within the last anchor word */
        Py_ssize_t i = word_at(&w, anchors[a], F_ANCHOR, ANCHORS, n); /* a heading, a self-reference or a channel */
        if (i < 0) continue;
        const int32_t *word = w.words + 4 * i;
        Py_ssize_t first = anchors[a], last = first + word[1];
        int kind = word[2];
        at = last;
        if (kind == W_SELF) {
            int not_self = 0;
            for (Py_ssize_t j = 0; j < w.nwords && !not_self; j++) {
                const int32_t *other = w.words + 4 * j;
                not_self = other[2] == W_NOT_SELF && word_is_at(&w, other, last, n);
            }
            if (not_self) continue;
        }
        /* The sentence: from the last end at or before ``first`` to the first end after ``last``. */
        Py_ssize_t lo = 0, hi = nends;
        while (lo < hi) {
            Py_ssize_t mid = (lo + hi) / 2;
            if (ends[mid] <= first) lo = mid + 1;
            else hi = mid;
        }
        Py_ssize_t start = lo > 0 ? ends[lo - 1] : 0;
        lo = 0, hi = nends;
        while (lo < hi) {
            Py_ssize_t mid = (lo + hi) / 2;
            if (ends[mid] <= last) lo = mid + 1;
            else hi = mid;
        }
        Py_ssize_t end = lo < nends ? ends[lo] : n;
        int found;
        if (kind == W_HEADING) found = 1;
        else if (memo_start[kind] == start) found = (int)memo_found[kind];
        else {
            if (kind == W_CHANNEL) found = words_in(&w, start, end, F_ACTION, W_ACTION, 1) != 0;
            else {
                uint64_t rights = words_in(&w, start, end, F_RIGHTS, W_RIGHTS, 0);
                found = (rights & (rights - 1)) != 0; /* two different words or more */
            }
            memo_start[kind] = start;
            memo_found[kind] = found;
        }
        if (found && push_span(spans, start, end) == NULL) goto fail;
    }
    goto done;
fail:
    Py_CLEAR(spans);
done:
    PyMem_Free(marks);
    release(&codes_b);
    release(&chars_b);
    release(&words_b);
    release(&first_b);
    release(&head_b);
    return spans;
}

/* ------------------------------------------------------------------ SimHash of words */

typedef struct {
    uint64_t hash;
    Py_ssize_t count;
    PyObject *item; /* the str its first token is in (borrowed), and where in it */
    Py_ssize_t start, end;
} Word;

typedef struct {
    uint64_t hash;
    double idf; /* < 0: an empty slot */
} Slot; /* one slot of the common-word table: hash and idf in one cache line */

/* The distinct words of a token list, in the order first seen, and an open-addressing table of
 * them by hash (each slot 1 + a word's number, 0: empty), in one allocation. */
typedef struct {
    Word *words;
    Py_ssize_t nwords;
    uint32_t *slots;
    uint64_t mask;
    const Slot *table; /* the common words, prefetched as each word is first seen */
    uint64_t table_mask;
    unsigned char *utf8; /* room for the UTF-8 of the longest str */
} Counts;

/* UTF-8 of one character, lone surrogates as three bytes (Python's "surrogatepass"); its length. */
static inline Py_ssize_t put_utf8(unsigned char *out, Py_UCS4 c) {
    if (c < 0x80) {
        out[0] = (unsigned char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (unsigned char)(0xC0 | (c >> 6));
        out[1] = (unsigned char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (c >> 12));
        out[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | (c >> 18));
    out[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (c & 0x3F));
    return 4;
}

static int has_content(PyObject *text, Py_ssize_t start, Py_ssize_t end) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    for (Py_ssize_t i = start; i < end; i++)
        if (Py_UNICODE_ISALNUM(PyUnicode_READ(kind, data, i))) return 1;
    return 0;
}

/* Counts one token (its UTF-8; the characters start..end of ``item``). */
static inline void count_token(Counts *c, const unsigned char *utf8, Py_ssize_t length, PyObject *item,
                               Py_ssize_t start, Py_ssize_t end) {
    uint64_t h = length < 32 ? xxh64_short(utf8, (size_t)length) : xxh64(utf8, (size_t)length);
    uint64_t slot = h & c->mask;
    for (uint32_t at; (at = c->slots[slot]) != 0; slot = (slot + 1) & c->mask) {
        if (c->words[at - 1].hash == h) {
            c->words[at - 1].count++;
            return;
        }
    }
    c->words[c->nwords] = (Word){h, 1, item, start, end};
    c->slots[slot] = (uint32_t)++c->nwords;
    /* The table is megabytes: ask for every word's slot before reading any. */
    __builtin_prefetch(&c->table[h & c->table_mask]);
}

/* Counts the tokens of ``item``, of the str kind ``kind`` (a constant where this is inlined:
 * one loop for each kind, no branch on it per character), split at ``separator``. */
static inline __attribute__((always_inline)) void count_tokens(Counts *c, PyObject *item, int kind,
                                                               Py_UCS4 separator) {
    const void *data = PyUnicode_DATA(item);
    Py_ssize_t n = PyUnicode_GET_LENGTH(item), start = 0, length = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (ch != separator) {
            length += put_utf8(c->utf8 + length, ch);
            continue;
        }
        if (length) count_token(c, c->utf8, length, item, start, i);
        length = 0;
        start = i + 1;
    }
    if (length) count_token(c, c->utf8, length, item, start, n);
}

/*
 * weigh(tokens, table, rare_idf, tf_factors, scale[, separator])
 *   -> (simhash, features)
 *
 * The same SimHash as fingerprint._Features.weigh followed by simhash.simhash on integer
 * weights: distinct words (by their xxh64), idf from the open-addressing table (idf < 0:
 * empty slot; ``table`` holds (uint64 hash, float64 idf) pairs) or ``rare_idf`` for other words with a letter or digit, weight
 * floor(idf * tf_factors[min(tf, len - 1)] * scale + 0.5), features of weight 0 left out.
 * ``tokens`` is a list of str, each a token, or with ``separator`` (a code point) each the
 * tokens of a line joined by it (the tokenizer cache's form: no list of tokens is made). An
 * empty token is no word (no letter or digit) and is not counted.
 */
static PyObject *py_weigh(PyObject *self, PyObject *args) {
    PyObject *tokens, *table_obj, *factors_obj;
    double rare_idf, scale;
    long separator = -1;
    if (!PyArg_ParseTuple(args, "O!OdOd|l", &PyList_Type, &tokens, &table_obj, &rare_idf, &factors_obj, &scale,
                          &separator))
        return NULL;
    Buffer table_b = {0}, factors_b = {0};
    char *arena = NULL;
    PyObject *result = NULL;
    if (get_buffer(table_obj, &table_b, 16, "word table") < 0 ||
        get_buffer(factors_obj, &factors_b, 8, "tf factors") < 0)
        goto done;
    const Slot *table = (const Slot *)table_b.view.buf;
    const double *factors = (const double *)factors_b.view.buf;
    Py_ssize_t slots = table_b.view.len / 16, nfactors = factors_b.view.len / 8;
    if (slots == 0 || (slots & (slots - 1)) || nfactors < 2) {
        PyErr_SetString(PyExc_ValueError, "word table must have a power-of-two size");
        goto done;
    }

    /* At most a token a str, or with a separator one for every two characters (tokens are
     * not empty): twice as many slots, and room for the UTF-8 of the longest str. */
    Py_ssize_t nitems = PyList_GET_SIZE(tokens), most = 0, longest = 1;
    for (Py_ssize_t t = 0; t < nitems; t++) {
        PyObject *item = PyList_GET_ITEM(tokens, t);
        if (!PyUnicode_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "tokens must be str");
            goto done;
        }
        Py_ssize_t n = PyUnicode_GET_LENGTH(item);
        most += separator >= 0 ? (n + 1) / 2 : 1;
        if (n > longest) longest = n;
    }
    Py_ssize_t size = 16;
    while (size < 2 * most) size <<= 1;
    arena = (char *)PyMem_Malloc(sizeof(Word) * (size_t)most + sizeof(uint32_t) * (size_t)size + 4 * (size_t)longest);
    if (!arena) {
        PyErr_NoMemory();
        goto done;
    }
    Counts counts = {(Word *)arena, 0, (uint32_t *)(arena + sizeof(Word) * (size_t)most), (uint64_t)(size - 1),
                     table, (uint64_t)(slots - 1), NULL};
    counts.utf8 = (unsigned char *)(counts.slots + size);
    memset(counts.slots, 0, sizeof(uint32_t) * (size_t)size);
    Py_UCS4 split = separator >= 0 ? (Py_UCS4)separator : (Py_UCS4)-1; /* -1: no code point, never split */
    for (Py_ssize_t t = 0; t < nitems; t++) {
        PyObject *item = PyList_GET_ITEM(tokens, t);
        switch (PyUnicode_KIND(item)) {
        case PyUnicode_1BYTE_KIND:
            count_tokens(&counts, item, PyUnicode_1BYTE_KIND, split);
            break;
        case PyUnicode_2BYTE_KIND:
            count_tokens(&counts, item, PyUnicode_2BYTE_KIND, split);
            break;
        default:
            count_tokens(&counts, item, PyUnicode_4BYTE_KIND, split);
        }
    }

    /* Charikar SimHash on integer weights: exact, so independent of summing order. Each word's
     * weight is added once for each 4 bits of its hash, under their value; each bit's sum is
     * then that of the values it is set in (16 additions a word instead of 64). */
    int64_t by_nibble[16][16] = {{0}}, total = 0;
    Py_ssize_t features = 0;
    for (Py_ssize_t k = 0; k < counts.nwords; k++) {
        const Word *word = &counts.words[k];
        double idf = -2.0; /* not a common word */
        for (uint64_t at = word->hash & counts.table_mask; table[at].idf >= 0; at = (at + 1) & counts.table_mask) {
            if (table[at].hash == word->hash) {
                idf = table[at].idf;
                break;
            }
        }
        if (idf == -2.0) idf = has_content(word->item, word->start, word->end) ? rare_idf : -1.0;
        if (idf < 0) continue;
        Py_ssize_t tf = word->count < nfactors ? word->count : nfactors - 1;
        /* floor(x + 0.5) > 0 exactly where x + 0.5 >= 1, and is then its truncation */
        double weight = idf * factors[tf] * scale + 0.5;
        if (!(weight >= 1.0)) continue;
        int64_t w = (int64_t)weight;
        features++;
        total += w;
        uint64_t h = word->hash;
        for (int nibble = 0; nibble < 16; nibble++, h >>= 4) by_nibble[nibble][h & 15] += w;
    }
    uint64_t value = 0;
    for (int bit = 0; bit < 64; bit++) {
        int64_t set = 0;
        for (int v = 0; v < 16; v++) set += by_nibble[bit >> 2][v] & -(int64_t)(v >> (bit & 3) & 1);
        value |= (uint64_t)(2 * set > total) << bit;
    }
    result = Py_BuildValue("(Nn)", PyLong_FromUnsignedLongLong(value), features);

done:
    PyMem_Free(arena);
    release(&table_b);
    release(&factors_b);
    return result;
}

/*
 * overlap(a, b) -> (both, union)
 *
 * For two sorted arrays of distinct uint32 (bottom-k sketches): ``union`` is the number of the
 * smallest distinct values of both together that a bottom-k sketch of the union holds,
 * min(max(len a, len b), distinct values), and ``both`` how many of those are in each array.
 * sketch.resemblance computes the same with numpy.
 */
static PyObject *py_overlap(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj;
    if (!PyArg_ParseTuple(args, "OO", &a_obj, &b_obj)) return NULL;
    Buffer a_b = {0}, b_b = {0};
    PyObject *result = NULL;
    if (get_buffer(a_obj, &a_b, 4, "sketch") < 0 || get_buffer(b_obj, &b_b, 4, "sketch") < 0) goto done;
    const uint32_t *a = (const uint32_t *)a_b.view.buf, *b = (const uint32_t *)b_b.view.buf;
    Py_ssize_t na = a_b.view.len / 4, nb = b_b.view.len / 4, k = na > nb ? na : nb;
    Py_ssize_t i = 0, j = 0, seen = 0, both = 0;
    while (seen < k && (i < na || j < nb)) {
        if (j >= nb || (i < na && a[i] < b[j])) {
            i++;
        } else if (i >= na || b[j] < a[i]) {
            j++;
        } else {
            i++;
            j++;
            both++;
        }
        seen++;
    }
    result = Py_BuildValue("(nn)", both, seen);
done:
    release(&a_b);
    release(&b_b);
    return result;
}

/* ------------------------------------------------------------------ a sketch as records store it
 *
 * pack_hashes(hashes) -> bytes, unpack_hashes(data, offset, end) -> bytes (little-endian
 * uint32): the Elias-Fano coding of sorted sketch hashes that sketch.py writes and reads with
 * numpy when this module is not built (_packed_hashes, _unpacked_hashes): the number of hashes
 * (2 bytes) and of low bits (1), each hash's low bits packed from bit 0 of a byte on, then the
 * unary part, hash i setting bit (hash >> low bits) + i.
 */
static PyObject *py_pack_hashes(PyObject *self, PyObject *arg) {
    Buffer h_b = {0};
    PyObject *result = NULL;
    if (get_buffer(arg, &h_b, 4, "sketch") < 0) goto done;
    const uint32_t *h = (const uint32_t *)h_b.view.buf;
    Py_ssize_t n = h_b.view.len / 4;
    if (n > 0xFFFF) {
        PyErr_SetString(PyExc_ValueError, "a sketch of more than 65,535 hashes");
        goto done;
    }
    for (Py_ssize_t i = 1; i < n; i++) {
        if (h[i] < h[i - 1]) {
            PyErr_SetString(PyExc_ValueError, "sketch hashes are not sorted");
            goto done;
        }
    }
    int low = 0;
    uint64_t gap = n ? ((uint64_t)h[n - 1] + 1) / (uint64_t)n : 0;
    while (gap >> (low + 1)) low++;
    Py_ssize_t low_bytes = (n * low + 7) / 8;
    Py_ssize_t unary_bytes = n ? (Py_ssize_t)((((uint64_t)h[n - 1] >> low) + (uint64_t)n + 7) / 8) : 0;
    result = PyBytes_FromStringAndSize(NULL, 3 + low_bytes + unary_bytes);
    if (!result) goto done;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(result);
    memset(out, 0, 3 + low_bytes + unary_bytes);
    out[0] = (unsigned char)(n & 0xFF);
    out[1] = (unsigned char)(n >> 8);
    out[2] = (unsigned char)low;
    unsigned char *lows = out + 3, *unary = out + 3 + low_bytes;
    uint64_t mask = ((uint64_t)1 << low) - 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t bit = (uint64_t)i * (uint64_t)low, bits = ((uint64_t)h[i] & mask) << (bit & 7);
        for (Py_ssize_t at = (Py_ssize_t)(bit >> 3); bits; at++, bits >>= 8) lows[at] |= (unsigned char)bits;
        uint64_t place = ((uint64_t)h[i] >> low) + (uint64_t)i;
        unary[place >> 3] |= (unsigned char)(1u << (place & 7));
    }
done:
    release(&h_b);
    return result;
}

static PyObject *py_unpack_hashes(PyObject *self, PyObject *args) {
    PyObject *data_obj;
    Py_ssize_t offset, end;
    if (!PyArg_ParseTuple(args, "Onn", &data_obj, &offset, &end)) return NULL;
    Buffer d_b = {0};
    PyObject *result = NULL;
    if (get_buffer(data_obj, &d_b, 1, "record") < 0) goto done;
    const unsigned char *d = (const unsigned char *)d_b.view.buf;
    if (offset < 0 || end > d_b.view.len || offset + 3 > end) goto cut;
    Py_ssize_t n = d[offset] | (Py_ssize_t)d[offset + 1] << 8;
    int low = d[offset + 2];
    Py_ssize_t low_bytes = (n * low + 7) / 8;
    if (low > 32 || offset + 3 + low_bytes > end) goto cut;
    const unsigned char *lows = d + offset + 3, *unary = lows + low_bytes;
    Py_ssize_t unary_bytes = end - offset - 3 - low_bytes, i = 0;
    result = PyBytes_FromStringAndSize(NULL, 4 * n);
    if (!result) goto done;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(result);
    uint64_t mask = ((uint64_t)1 << low) - 1;
    for (Py_ssize_t byte = 0; byte < unary_bytes && i < n; byte++) {
        for (unsigned set = unary[byte]; set && i < n; set &= set - 1, i++) {
            uint64_t high = (uint64_t)(8 * byte + __builtin_ctz(set) - i), bit = (uint64_t)i * (uint64_t)low, bits = 0;
            Py_ssize_t at = (Py_ssize_t)(bit >> 3);
            for (int k = 0; k < 5 && at + k < low_bytes; k++) bits |= (uint64_t)lows[at + k] << (8 * k);
            uint32_t value = (uint32_t)((high << low) | ((bits >> (bit & 7)) & mask));
            for (int k = 0; k < 4; k++) out[4 * i + k] = (unsigned char)(value >> (8 * k));
        }
    }
    if (i == n) goto done;
    Py_CLEAR(result);
cut:
    PyErr_SetString(PyExc_ValueError, "a packed sketch is cut short");
done:
    release(&d_b);
    return result;
}

/* ------------------------------------------------------------------ bucket index
 *
 * The LevelDB store's buckets live in memory, in one open-addressing table (bucketindex.py):
 * a slot is two uint32, a bucket's key (the low 32 bits of the xxh64 of its bytes) and a
 * document id; id 0 marks an empty slot. A bucket's members sit from slot key & mask on,
 * by linear probing, up to the next empty slot. bucketindex.py does the same in Python when
 * this module is not built.
 */

typedef struct {
    Py_buffer view;
    uint32_t *slots;
    uint64_t mask;
} Table;

static int get_table(PyObject *obj, Table *t) {
    if (PyObject_GetBuffer(obj, &t->view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) return -1;
    uint64_t count = (uint64_t)t->view.len / 8;
    if (t->view.len % 8 != 0 || count == 0 || (count & (count - 1)) != 0) {
        PyBuffer_Release(&t->view);
        PyErr_SetString(PyExc_ValueError, "an index table is a power of two of 8-byte slots");
        return -1;
    }
    t->slots = (uint32_t *)t->view.buf;
    t->mask = count - 1;
    return 0;
}

/* A bucket's key in the index (the lower half of its xxh64) and, with ``bits`` > 0, its bit of
 * a document's signature (the upper half modulo ``bits``), -1 for a bucket starting with the
 * byte ``unsigned_prefix`` (simhashes.py: SimHash tables carry none). */
static inline int bucket_hash(PyObject *bucket, uint32_t *key, int *bit, int bits, int unsigned_prefix) {
    char *data;
    Py_ssize_t len;
    if (PyBytes_AsStringAndSize(bucket, &data, &len) < 0) return -1;
    uint64_t h = xxh64((const unsigned char *)data, (size_t)len);
    *key = (uint32_t)h;
    if (bit != NULL)
        *bit = bits > 0 && !(len > 0 && (unsigned char)data[0] == unsigned_prefix) ? (int)((h >> 32) % (uint64_t)bits)
                                                                                      : -1;
    return 0;
}

static inline int bucket_key(PyObject *bucket, uint32_t *key) { return bucket_hash(bucket, key, NULL, 0, -1); }

static int compare_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Put (key, id) in the first empty slot of key's run, unless the bucket holds ``cap`` ids. */
static int table_put(Table *t, uint32_t key, uint32_t id, Py_ssize_t cap) {
    uint64_t i = key & t->mask;
    Py_ssize_t held = 0;
    while (t->slots[2 * i + 1] != 0) {
        if (t->slots[2 * i] == key && ++held >= cap) return 0;
        i = (i + 1) & t->mask;
    }
    t->slots[2 * i] = key;
    t->slots[2 * i + 1] = id;
    return 1;
}

/* Empty slot ``hole`` and shift later members of the run back (no tombstones). */
static void table_delete(Table *t, uint64_t hole) {
    uint64_t j = hole;
    t->slots[2 * hole + 1] = 0;
    for (;;) {
        j = (j + 1) & t->mask;
        if (t->slots[2 * j + 1] == 0) return;
        uint64_t home = t->slots[2 * j] & t->mask;
        /* the entry at j may move to hole unless its home lies cyclically in (hole, j] */
        int stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (!stays) {
            t->slots[2 * hole] = t->slots[2 * j];
            t->slots[2 * hole + 1] = t->slots[2 * j + 1];
            t->slots[2 * j + 1] = 0;
            hole = j;
        }
    }
}

/* index_find(table, buckets, limit) -> for each bucket, its lowest ``limit`` ids, ascending. */
static PyObject *py_index_find(PyObject *self, PyObject *args) {
    PyObject *table, *buckets;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "OO!n", &table, &PyList_Type, &buckets, &limit)) return NULL;
    Table t;
    if (get_table(table, &t) < 0) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(buckets), room = 64, found;
    uint32_t *ids = PyMem_Malloc(room * sizeof(uint32_t));
    PyObject *result = ids ? PyList_New(n) : PyErr_NoMemory();
    for (Py_ssize_t b = 0; result != NULL && b < n; b++) {
        uint32_t key;
        if (bucket_key(PyList_GET_ITEM(buckets, b), &key) < 0) {
            Py_CLEAR(result);
            break;
        }
        found = 0;
        for (uint64_t i = key & t.mask; t.slots[2 * i + 1] != 0; i = (i + 1) & t.mask) {
            if (t.slots[2 * i] != key) continue;
            if (found == room) {
                uint32_t *more = PyMem_Realloc(ids, 2 * room * sizeof(uint32_t));
                if (more == NULL) {
                    Py_CLEAR(result);
                    PyErr_NoMemory();
                    break;
                }
                ids = more;
                room *= 2;
            }
            ids[found++] = t.slots[2 * i + 1];
        }
        if (result == NULL) break;
        if (found > 1) qsort(ids, (size_t)found, sizeof(uint32_t), compare_u32);
        if (found > limit) found = limit;
        PyObject *members = PyList_New(found);
        if (members == NULL) {
            Py_CLEAR(result);
            break;
        }
        for (Py_ssize_t m = 0; m < found; m++) PyList_SET_ITEM(members, m, PyLong_FromUnsignedLong(ids[m]));
        PyList_SET_ITEM(result, b, members);
    }
    PyMem_Free(ids);
    PyBuffer_Release(&t.view);
    return result;
}

/* Take (key, id) out of key's run; 1 if it was there. ``cap`` is unused (a Step). */
static int table_take(Table *t, uint32_t key, uint32_t id, Py_ssize_t cap) {
    for (uint64_t i = key & t->mask; t->slots[2 * i + 1] != 0; i = (i + 1) & t->mask) {
        if (t->slots[2 * i] == key && t->slots[2 * i + 1] == id) {
            table_delete(t, i);
            return 1;
        }
    }
    return 0;
}

typedef int (*Step)(Table *t, uint32_t key, uint32_t id, Py_ssize_t cap);

/* Apply ``step`` to (bucket, id) for each bucket; return the sum of what it returned. */
static PyObject *each_bucket(PyObject *table, PyObject *buckets, unsigned long id, Py_ssize_t cap, Step step) {
    if (id == 0 || id > 0xFFFFFFFFul) {
        PyErr_SetString(PyExc_ValueError, "an index holds document ids from 1 to 2**32 - 1");
        return NULL;
    }
    Table t;
    if (get_table(table, &t) < 0) return NULL;
    Py_ssize_t total = 0;
    for (Py_ssize_t b = 0; b < PyList_GET_SIZE(buckets); b++) {
        uint32_t key;
        if (bucket_key(PyList_GET_ITEM(buckets, b), &key) < 0) {
            PyBuffer_Release(&t.view);
            return NULL;
        }
        total += step(&t, key, (uint32_t)id, cap);
    }
    PyBuffer_Release(&t.view);
    return PyLong_FromSsize_t(total);
}

/* index_add(table, buckets, id, cap) -> how many buckets took the id (a full one does not).
 * The caller keeps the table at most three quarters full. */
static PyObject *py_index_add(PyObject *self, PyObject *args) {
    PyObject *table, *buckets;
    unsigned long id;
    Py_ssize_t cap;
    if (!PyArg_ParseTuple(args, "OO!kn", &table, &PyList_Type, &buckets, &id, &cap)) return NULL;
    return each_bucket(table, buckets, id, cap, table_put);
}

/* index_remove(table, buckets, id) -> how many entries of the id were taken out. */
static PyObject *py_index_remove(PyObject *self, PyObject *args) {
    PyObject *table, *buckets;
    unsigned long id;
    if (!PyArg_ParseTuple(args, "OO!k", &table, &PyList_Type, &buckets, &id)) return NULL;
    return each_bucket(table, buckets, id, 0, table_take);
}

/* index_move(old, new): put every entry of table ``old`` into the empty table ``new``. */
static PyObject *py_index_move(PyObject *self, PyObject *args) {
    PyObject *old_obj, *new_obj;
    if (!PyArg_ParseTuple(args, "OO", &old_obj, &new_obj)) return NULL;
    Table old, made;
    if (get_table(old_obj, &old) < 0) return NULL;
    if (get_table(new_obj, &made) < 0) {
        PyBuffer_Release(&old.view);
        return NULL;
    }
    for (uint64_t i = 0; i <= old.mask; i++) {
        if (old.slots[2 * i + 1] != 0) table_put(&made, old.slots[2 * i], old.slots[2 * i + 1], PY_SSIZE_T_MAX);
    }
    PyBuffer_Release(&old.view);
    PyBuffer_Release(&made.view);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ bucket runs
 *
 * bucketruns.py: a run file holds sorted uint64 entries (key << 32 | id) in pages of 512,
 * packed (a head: first key, lowest id, bits of a key's gap, bits of an id's offset; then a
 * field of gap << id bits | offset an entry, little-endian bits) or, in runs of earlier
 * versions, raw; in memory, the first entry of each page (fences), an xxh64 of each page's
 * bytes, where each page starts, and a blocked Bloom filter of the keys: 64-byte blocks, the
 * block chosen by the key's order, six bits in it by the key's mix. A page read is decoded
 * into raw entries (little-endian) and searched as such. bucketruns.py does the same with numpy.
 */

#include <errno.h>
#include <unistd.h>

enum { RUN_PAGE = 512, BLOOM_BLOCK = 64, BLOOM_PROBES = 6 };
/* A packed page's head: first key, lowest id, the two widths; then the key before every
 * PAGE_STRIDE-th entry (a lookup decodes from the stretch its key is in, not the page's start). */
enum { PAGE_HEAD = 10, PAGE_STRIDE = 64, PAGE_SLACK = 16 };
enum { MAX_PAGE_BYTES = PAGE_HEAD + 4 * ((RUN_PAGE - 1) / PAGE_STRIDE) + 8 * RUN_PAGE };


/* The entries of the packed page ``in`` of ``n`` (``len`` bytes, PAGE_SLACK more readable past
 * them) into ``out``, raw: from the stretch of PAGE_STRIDE where keys reach ``from_key`` (those
 * before are all less) up to the first of a key past ``last_key`` (a lookup needs no more). How
 * many, or -1 when its size is not the one its head says. */
static Py_ssize_t unpack_page(const unsigned char *in, size_t len, uint64_t n, unsigned char *out, uint64_t from_key,
                              uint64_t last_key) {
    if (len < PAGE_HEAD || n == 0) return -1;
    uint64_t key = read32(in), lowest = read32(in + 4), strides = (n - 1) / PAGE_STRIDE, start = 0;
    unsigned key_bits = in[8], id_bits = in[9], width = key_bits + id_bits;
    if (key_bits > 32 || id_bits > 32 || len != PAGE_HEAD + 4 * strides + (n * width + 7) / 8) return -1;
    for (uint64_t s = strides; s > 0; s--) {
        uint64_t before = read32(in + PAGE_HEAD + 4 * (s - 1)); /* the key of entry s * PAGE_STRIDE - 1 */
        if (before < from_key) {
            key = before;
            start = s * PAGE_STRIDE;
            break;
        }
    }
    const unsigned char *bits = in + PAGE_HEAD + 4 * strides;
    uint64_t mask = width == 64 ? ~0ULL : (1ULL << width) - 1, id_mask = (1ULL << id_bits) - 1;
    for (uint64_t i = start, at = start * width; i < n; i++, at += width) {
        unsigned shift = (unsigned)(at & 7);
        uint64_t field = read64(bits + (at >> 3)) >> shift;
        if (shift + width > 64) field |= (uint64_t)bits[(at >> 3) + 8] << (64 - shift);
        field &= mask;
        key += field >> id_bits;
        write64(out + 8 * (i - start), key << 32 | (lowest + (field & id_mask)));
        if (key > last_key) return (Py_ssize_t)(i - start) + 1;
    }
    return (Py_ssize_t)(n - start);
}

/* Pack the ``n`` sorted entries ``e`` (1 to RUN_PAGE) into ``out`` (MAX_PAGE_BYTES +
 * PAGE_SLACK); the page's bytes. */
static size_t pack_page(const uint64_t *e, uint64_t n, unsigned char *out) {
    uint32_t lowest = UINT32_MAX;
    uint64_t gaps = 0, offsets = 0;
    for (uint64_t i = 0; i < n; i++)
        if ((uint32_t)e[i] < lowest) lowest = (uint32_t)e[i];
    for (uint64_t i = 0; i < n; i++) {
        gaps |= (e[i] >> 32) - (e[i ? i - 1 : 0] >> 32);
        offsets |= (uint32_t)e[i] - lowest;
    }
    unsigned key_bits = 0, id_bits = 0;
    while (key_bits < 64 && gaps >> key_bits) key_bits++; /* the bits of the largest */
    while (id_bits < 64 && offsets >> id_bits) id_bits++;
    unsigned width = key_bits + id_bits;
    uint64_t strides = (n - 1) / PAGE_STRIDE;
    size_t len = PAGE_HEAD + 4 * strides + (size_t)(n * width + 7) / 8;
    uint32_t first = (uint32_t)(e[0] >> 32);
    for (int b = 0; b < 4; b++) {
        out[b] = (unsigned char)(first >> (8 * b));
        out[4 + b] = (unsigned char)(lowest >> (8 * b));
    }
    out[8] = (unsigned char)key_bits;
    out[9] = (unsigned char)id_bits;
    for (uint64_t s = 1; s <= strides; s++) {
        uint32_t before = (uint32_t)(e[s * PAGE_STRIDE - 1] >> 32);
        for (int b = 0; b < 4; b++) out[PAGE_HEAD + 4 * (s - 1) + b] = (unsigned char)(before >> (8 * b));
    }
    unsigned char *bits = out + PAGE_HEAD + 4 * strides;
    memset(bits, 0, len - PAGE_HEAD - 4 * strides + 9);
    for (uint64_t i = 0, at = 0; i < n; i++, at += width) {
        uint64_t field = ((e[i] >> 32) - (e[i ? i - 1 : 0] >> 32)) << id_bits | ((uint32_t)e[i] - lowest);
        unsigned shift = (unsigned)(at & 7);
        write64(bits + (at >> 3), read64(bits + (at >> 3)) | field << shift);
        if (shift + width > 64) bits[(at >> 3) + 8] |= (unsigned char)(field >> (64 - shift));
    }
    return len;
}
static const uint64_t GOLDEN = 0x9E3779B97F4A7C15ULL;

static inline const unsigned char *bloom_block(const unsigned char *bloom, uint64_t blocks, uint32_t key) {
    return bloom + (((uint64_t)key * blocks) >> 32) * BLOOM_BLOCK;
}

static inline int bloom_has(const unsigned char *bloom, uint64_t blocks, uint32_t key) {
    const unsigned char *block = bloom_block(bloom, blocks, key);
    uint64_t h = mix64((uint64_t)key + GOLDEN);
    for (int i = 0; i < BLOOM_PROBES; i++) {
        unsigned bit = (unsigned)((h >> (9 * i)) & 511);
        if (!(block[bit >> 3] & (1u << (bit & 7)))) return 0;
    }
    return 1;
}

/* bloom_add(bloom, entries, blocks): set the filter bits of each entry's key. */
static PyObject *py_bloom_add(PyObject *self, PyObject *args) {
    PyObject *bloom_obj, *entries_obj;
    unsigned long long blocks;
    if (!PyArg_ParseTuple(args, "OOK", &bloom_obj, &entries_obj, &blocks)) return NULL;
    Py_buffer bloom;
    Buffer entries = {0};
    if (PyObject_GetBuffer(bloom_obj, &bloom, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) return NULL;
    if (get_buffer(entries_obj, &entries, 8, "entries") < 0 || blocks == 0 ||
        (uint64_t)bloom.len != blocks * BLOOM_BLOCK) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a filter is blocks * 64 bytes");
        release(&entries);
        PyBuffer_Release(&bloom);
        return NULL;
    }
    unsigned char *bits = bloom.buf;
    const unsigned char *at = entries.view.buf;
    Py_ssize_t n = entries.view.len / 8;
    uint32_t last = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t key = (uint32_t)(read64(at + 8 * i) >> 32);
        if (i > 0 && key == last) continue;
        last = key;
        unsigned char *block = bits + (((uint64_t)key * blocks) >> 32) * BLOOM_BLOCK;
        uint64_t h = mix64((uint64_t)key + GOLDEN);
        for (int p = 0; p < BLOOM_PROBES; p++) {
            unsigned bit = (unsigned)((h >> (9 * p)) & 511);
            block[bit >> 3] |= (unsigned char)(1u << (bit & 7));
        }
    }
    release(&entries);
    PyBuffer_Release(&bloom);
    Py_RETURN_NONE;
}

typedef struct {
    int fd, packed;
    uint64_t count, pages, blocks;
    Buffer fences, sums, starts, bloom;
} Run;

static void release_runs(Run *runs, Py_ssize_t n) {
    for (Py_ssize_t r = 0; r < n; r++) {
        release(&runs[r].fences);
        release(&runs[r].sums);
        release(&runs[r].starts);
        release(&runs[r].bloom);
    }
}

/* A run from its spec (fd, count, fences, sums, starts, bloom, packed). */
static int get_run(PyObject *spec, Run *run) {
    PyObject *fences, *sums, *starts, *bloom;
    unsigned long long count;
    if (!PyArg_ParseTuple(spec, "iKOOOOp", &run->fd, &count, &fences, &sums, &starts, &bloom, &run->packed))
        return -1;
    run->count = count;
    if (get_buffer(fences, &run->fences, 8, "fences") < 0 || get_buffer(sums, &run->sums, 8, "sums") < 0 ||
        get_buffer(starts, &run->starts, 8, "starts") < 0 || get_buffer(bloom, &run->bloom, BLOOM_BLOCK, "filter") < 0)
        return -1;
    run->pages = (uint64_t)run->fences.view.len / 8;
    run->blocks = (uint64_t)run->bloom.view.len / BLOOM_BLOCK;
    if (run->blocks == 0 || run->pages != (count + RUN_PAGE - 1) / RUN_PAGE ||
        (uint64_t)run->sums.view.len != 8 * run->pages || (uint64_t)run->starts.view.len != 8 * (run->pages + 1)) {
        PyErr_SetString(PyExc_ValueError, "a run's fences, sums and filter do not match its count");
        return -1;
    }
    return 0;
}

static inline uint64_t fence(const Run *run, uint64_t page) {
    return read64((const unsigned char *)run->fences.view.buf + 8 * page);
}

static inline uint64_t page_start(const Run *run, uint64_t page) {
    return read64((const unsigned char *)run->starts.view.buf + 8 * page);
}

static inline uint64_t page_entries(const Run *run, uint64_t page) {
    return run->count - page * RUN_PAGE < RUN_PAGE ? run->count - page * RUN_PAGE : RUN_PAGE;
}

/* pread ``len`` bytes at ``at`` whole: 0, or errno (EIO for a file shorter than that). */
static int read_all(int fd, unsigned char *out, size_t len, uint64_t at) {
    for (size_t got = 0; got < len;) {
        ssize_t done = pread(fd, out + got, len - got, (off_t)(at + got));
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) return done < 0 ? errno : EIO;
        got += (size_t)done;
    }
    return 0;
}

/* Page ``page`` of ``run``, its ``len`` bytes as stored at ``in``, checked against its
 * checksum and decoded into ``out`` (raw entries; at least those of keys ``from_key`` to
 * ``last_key``, see unpack_page): how many, or -1 when it does not match. */
static Py_ssize_t page_entries_of(const Run *run, uint64_t page, const unsigned char *in, size_t len,
                                  unsigned char *out, uint64_t from_key, uint64_t last_key) {
    if (xxh64(in, len) != read64((const unsigned char *)run->sums.view.buf + 8 * page)) return -1;
    uint64_t n = page_entries(run, page);
    if (!run->packed) {
        if (len != 8 * n) return -1;
        if (in != out) memcpy(out, in, len);
        return (Py_ssize_t)n;
    }
    return unpack_page(in, len, n, out, from_key, last_key);
}

/* Read page ``page`` of ``run`` into ``out`` (8 * RUN_PAGE bytes, then MAX_PAGE_BYTES +
 * PAGE_SLACK for the page as stored), checked: its entries of key ``key`` and at least the
 * next one, or all of the page's from the first of ``key`` on. How many, or -1 (error set). */
static Py_ssize_t read_page(const Run *run, uint64_t page, unsigned char *out, uint64_t key) {
    uint64_t at = page_start(run, page), len = page_start(run, page + 1) - at;
    unsigned char *in = run->packed ? out + 8 * RUN_PAGE : out;
    if (len > MAX_PAGE_BYTES) {
        PyErr_SetString(PyExc_OSError, "a page of a bucket run is larger than a page can be");
        return -1;
    }
    int failed = read_all(run->fd, in, (size_t)len, at);
    if (failed) {
        errno = failed;
        if (failed == EIO) PyErr_SetString(PyExc_OSError, "a bucket run is shorter than its footer says");
        else PyErr_SetFromErrno(PyExc_OSError);
        return -1;
    }
    Py_ssize_t n = page_entries_of(run, page, in, (size_t)len, out, key, key);
    if (n < 0)
        PyErr_Format(PyExc_OSError, "a page of a bucket run does not match its checksum (page %llu)",
                     (unsigned long long)page);
    return n;
}

typedef struct {
    const uint32_t *dead;
    Py_ssize_t dead_n;
    uint32_t floor;
    /* Each document's SimHash value by id (simhashes.py): its low bits tell the buckets it is
     * filed under, one bit a bucket, so a member of another bucket with the same 32-bit key
     * is known. NULL: none known. */
    const uint64_t *signed_values;
    uint64_t signed_base, signed_used;
} Live;

/* Whether document ``id`` may be filed under a bucket of signature bit ``bit`` (-1: a bucket
 * no signature tells of): its value is unknown, or has the bit. */
static inline int may_be_filed(const Live *live, uint32_t id, int bit) {
    if (bit < 0 || live->signed_values == NULL || id < live->signed_base || id - live->signed_base >= live->signed_used)
        return 1;
    uint64_t value = live->signed_values[id - live->signed_base];
    return value == 0 || (value >> bit & 1);
}

static inline int is_live(const Live *live, uint32_t id) {
    if (id < live->floor) return 0;
    Py_ssize_t lo = 0, hi = live->dead_n;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (live->dead[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return !(lo < live->dead_n && live->dead[lo] == id);
}

typedef struct {
    uint32_t *ids;
    Py_ssize_t n, room;
} Ids;

static int push_id(Ids *out, uint32_t id) {
    if (out->n == out->room) {
        uint32_t *more = PyMem_Realloc(out->ids, 2 * out->room * sizeof(uint32_t));
        if (more == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        out->ids = more;
        out->room *= 2;
    }
    out->ids[out->n++] = id;
    return 0;
}

/* Append the live ids of ``key`` in ``run`` to ``out``, oldest first, until it holds ``limit``. */
static int run_members(const Run *run, uint32_t key, int bit, const Live *live, Ids *out, Py_ssize_t limit,
                       unsigned char *page_buf) {
    if (!bloom_has(run->bloom.view.buf, run->blocks, key)) return 0;
    uint64_t low = (uint64_t)key << 32, high = low + (1ULL << 32);
    uint64_t lo = 0, hi = run->pages; /* lo: how many pages have a fence <= low */
    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (fence(run, mid) <= low) lo = mid + 1;
        else hi = mid;
    }
    for (uint64_t page = lo ? lo - 1 : 0; page < run->pages && out->n < limit; page++) {
        Py_ssize_t n = read_page(run, page, page_buf, key);
        if (n < 0) return -1;
        uint64_t e = 0;
        for (Py_ssize_t i = 0; i < n && out->n < limit; i++) {
            e = read64(page_buf + 8 * i);
            if (e >= high) break;
            if (e > low && is_live(live, (uint32_t)e) && may_be_filed(live, (uint32_t)e, bit) &&
                push_id(out, (uint32_t)e) < 0)
                return -1;
        }
        if (e >= high || page + 1 >= run->pages || fence(run, page + 1) >= high) break;
    }
    return 0;
}

/* runs_find(runs, tables, buckets, limit, dead, floor[, values, base, used, bits, unsigned])
 *   -> for each bucket, its lowest ``limit`` live ids: from the runs (oldest first), then the
 * tables (the newest last). With ``values`` (simhashes.py's, of ids ``base`` on, ``used`` of
 * them), a member whose value is known and lacks the bucket's signature bit (the upper half of
 * the bucket's xxh64, modulo ``bits``) is of another bucket with the same key: left out;
 * buckets starting with the byte ``unsigned`` (SimHash tables) carry no signature. */
static PyObject *py_runs_find(PyObject *self, PyObject *args) {
    PyObject *run_specs, *table_objs, *buckets, *dead_obj, *values_obj = Py_None;
    Py_ssize_t limit;
    unsigned long floor;
    unsigned long long signed_base = 0, signed_used = 0;
    int bits = 0, unsigned_prefix = -1;
    if (!PyArg_ParseTuple(args, "O!O!O!nOk|OKKii", &PyList_Type, &run_specs, &PyList_Type, &table_objs, &PyList_Type,
                          &buckets, &limit, &dead_obj, &floor, &values_obj, &signed_base, &signed_used, &bits,
                          &unsigned_prefix))
        return NULL;
    Py_ssize_t nruns = PyList_GET_SIZE(run_specs), ntables = PyList_GET_SIZE(table_objs);
    Py_ssize_t nbuckets = PyList_GET_SIZE(buckets), got_runs = 0, got_tables = 0;
    Run *runs = PyMem_Calloc(nruns ? nruns : 1, sizeof(Run));
    Table *tables = PyMem_Calloc(ntables ? ntables : 1, sizeof(Table));
    unsigned char *page_buf = PyMem_Malloc(8 * RUN_PAGE + MAX_PAGE_BYTES + PAGE_SLACK);
    Ids out = {PyMem_Malloc(64 * sizeof(uint32_t)), 0, 64};
    uint32_t *keys = NULL;
    int *sig_bits = NULL;
    Buffer dead = {0}, values = {0};
    PyObject *result = NULL;
    if (!runs || !tables || !page_buf || !out.ids) {
        PyErr_NoMemory();
        goto done;
    }
    for (; got_runs < nruns; got_runs++)
        if (get_run(PyList_GET_ITEM(run_specs, got_runs), &runs[got_runs]) < 0) {
            got_runs++;
            goto done;
        }
    for (; got_tables < ntables; got_tables++)
        if (get_table(PyList_GET_ITEM(table_objs, got_tables), &tables[got_tables]) < 0) goto done;
    if (get_buffer(dead_obj, &dead, 4, "dead ids") < 0) goto done;
    Live live = {dead.view.buf, dead.view.len / 4, (uint32_t)floor, NULL, 0, 0};
    if (values_obj != Py_None) {
        if (bits < 1 || bits > 64) {
            PyErr_SetString(PyExc_ValueError, "signature bits must be 1 to 64");
            goto done;
        }
        if (get_buffer(values_obj, &values, 8, "SimHash values") < 0) goto done;
        live.signed_values = values.view.buf;
        live.signed_base = signed_base;
        live.signed_used = signed_used < (uint64_t)(values.view.len / 8) ? signed_used : (uint64_t)(values.view.len / 8);
    }
    keys = PyMem_Malloc((nbuckets ? nbuckets : 1) * sizeof(uint32_t));
    sig_bits = PyMem_Malloc((nbuckets ? nbuckets : 1) * sizeof(int));
    if (keys == NULL || sig_bits == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t b = 0; b < nbuckets; b++) /* no signature bits without the values */
        if (bucket_hash(PyList_GET_ITEM(buckets, b), &keys[b], &sig_bits[b], live.signed_values ? bits : 0,
                        unsigned_prefix) < 0)
            goto done;
    /* Each bucket's filter block of each run is a cache miss of its own (a large run's filter
     * is tens of MB): asked for all at once, they are fetched side by side, not one by one. */
    for (Py_ssize_t r = 0; r < nruns; r++)
        for (Py_ssize_t b = 0; b < nbuckets; b++)
            __builtin_prefetch(bloom_block(runs[r].bloom.view.buf, runs[r].blocks, keys[b]));
    if ((result = PyList_New(nbuckets)) == NULL) goto done;
    for (Py_ssize_t b = 0; b < nbuckets; b++) {
        uint32_t key = keys[b];
        out.n = 0;
        for (Py_ssize_t r = 0; r < nruns && out.n < limit; r++)
            if (run_members(&runs[r], key, sig_bits[b], &live, &out, limit, page_buf) < 0) goto fail;
        for (Py_ssize_t t = 0; t < ntables && out.n < limit; t++) {
            Py_ssize_t start = out.n;
            Table *tab = &tables[t];
            for (uint64_t i = key & tab->mask; tab->slots[2 * i + 1] != 0; i = (i + 1) & tab->mask) {
                uint32_t id = tab->slots[2 * i + 1];
                if (tab->slots[2 * i] == key && is_live(&live, id) && may_be_filed(&live, id, sig_bits[b]) &&
                    push_id(&out, id) < 0)
                    goto fail;
            }
            if (out.n - start > 1) qsort(out.ids + start, (size_t)(out.n - start), sizeof(uint32_t), compare_u32);
            if (out.n > limit) out.n = limit;
        }
        PyObject *members = PyList_New(out.n);
        if (members == NULL) goto fail;
        for (Py_ssize_t m = 0; m < out.n; m++) PyList_SET_ITEM(members, m, PyLong_FromUnsignedLong(out.ids[m]));
        PyList_SET_ITEM(result, b, members);
    }
    goto done;
fail:
    Py_CLEAR(result);
done:
    release_runs(runs, got_runs);
    for (Py_ssize_t t = 0; t < got_tables; t++) PyBuffer_Release(&tables[t].view);
    release(&dead);
    release(&values);
    PyMem_Free(runs);
    PyMem_Free(tables);
    PyMem_Free(page_buf);
    PyMem_Free(out.ids);
    PyMem_Free(keys);
    PyMem_Free(sig_bits);
    return result;
}

/* ------------------------------------------------------------------ writing runs */

typedef struct {
    const unsigned char *mem; /* sorted entries in memory, or NULL: read from ``run`` */
    uint64_t count, next;     /* entries in all, and the next one to take */
    Run run;
    unsigned char *buf; /* pages of the run read ahead, raw entries */
    unsigned char *stored; /* the same pages as stored */
    uint64_t buf_first, buf_n;
} Source;

enum { READ_AHEAD = 64 }; /* pages a source reads at once: 256 KB */

typedef struct {
    int failed; /* errno, or -1 for a checksum that does not match */
    uint64_t page;
} WriteError;

/* The entry at ``src->next``, reading ahead from its run when needed; 0 on error. */
static int source_peek(Source *src, uint64_t *entry, WriteError *err) {
    if (src->mem) {
        *entry = read64(src->mem + 8 * src->next);
        return 1;
    }
    uint64_t page = src->next / RUN_PAGE;
    if (page < src->buf_first || page >= src->buf_first + src->buf_n) {
        const Run *run = &src->run;
        uint64_t pages = run->pages - page < READ_AHEAD ? run->pages - page : READ_AHEAD;
        uint64_t at = page_start(run, page), len = page_start(run, page + pages) - at;
        if (len > pages * MAX_PAGE_BYTES) {
            err->failed = EIO;
            return 0;
        }
        if ((err->failed = read_all(run->fd, src->stored, (size_t)len, at)) != 0) return 0;
        for (uint64_t p = 0; p < pages; p++) {
            uint64_t start = page_start(run, page + p) - at, end = page_start(run, page + p + 1) - at;
            if (page_entries_of(run, page + p, src->stored + start, end - start, src->buf + p * RUN_PAGE * 8,
                                0, UINT64_MAX) != (Py_ssize_t)page_entries(run, page + p)) {
                err->failed = -1;
                err->page = page + p;
                return 0;
            }
        }
        src->buf_first = page;
        src->buf_n = pages;
    }
    *entry = read64(src->buf + 8 * (src->next - src->buf_first * RUN_PAGE));
    return 1;
}

typedef struct {
    uint64_t *items;
    size_t n, room;
} U64s;

static int push_u64(U64s *a, uint64_t v) {
    if (a->n == a->room) {
        size_t room = a->room ? 2 * a->room : 1024;
        uint64_t *more = realloc(a->items, room * sizeof(uint64_t));
        if (more == NULL) return -1;
        a->items = more;
        a->room = room;
    }
    a->items[a->n++] = v;
    return 0;
}

static int write_all(int fd, const unsigned char *data, size_t len) {
    while (len) {
        ssize_t done = write(fd, data, len);
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) return done < 0 ? errno : EIO;
        data += done;
        len -= (size_t)done;
    }
    return 0;
}

/* Pack the page of ``n`` entries ``e`` at ``out->items`` + ``*len`` and note its fence, checksum
 * and end; 0, or -1 out of memory. */
static int add_page(const uint64_t *e, uint64_t n, unsigned char *out, size_t *len, U64s *fences, U64s *sums,
                    U64s *starts) {
    size_t bytes = pack_page(e, n, out + *len);
    if (push_u64(fences, e[0]) < 0 || push_u64(sums, xxh64(out + *len, bytes)) < 0 ||
        push_u64(starts, starts->items[starts->n - 1] + bytes) < 0)
        return -1;
    *len += bytes;
    return 0;
}

/* run_write(fd, sources, dead, floor, cap, bloom, blocks, stop) -> (count, min_id, max_id,
 * fences, sums, starts): write the entries of ``sources`` (each sorted: a buffer of entries,
 * or a run spec) merged in order to ``fd``, in packed pages of 512, leaving out dead ids, ids
 * below ``floor`` and a bucket's members past its ``cap`` oldest, and set the filter bits of
 * their keys. Runs without the GIL; gives up (None) once ``stop[0]`` is set. */
static PyObject *py_run_write(PyObject *self, PyObject *args) {
    int fd;
    PyObject *source_objs, *dead_obj, *bloom_obj, *stop_obj;
    unsigned long floor;
    Py_ssize_t cap;
    unsigned long long blocks;
    if (!PyArg_ParseTuple(args, "iO!OknOKO", &fd, &PyList_Type, &source_objs, &dead_obj, &floor, &cap, &bloom_obj,
                          &blocks, &stop_obj))
        return NULL;
    Py_ssize_t nsources = PyList_GET_SIZE(source_objs), got = 0;
    Source *sources = PyMem_Calloc(nsources ? nsources : 1, sizeof(Source));
    Buffer *mems = PyMem_Calloc(nsources ? nsources : 1, sizeof(Buffer));
    Buffer dead = {0};
    Py_buffer bloom = {0}, stop = {0};
    int have_bloom = 0, have_stop = 0;
    PyObject *result = NULL;
    U64s fences = {0}, sums = {0}, starts = {0};
    uint64_t *page = NULL;
    unsigned char *out = NULL;
    if (!sources || !mems) {
        PyErr_NoMemory();
        goto done;
    }
    for (; got < nsources; got++) {
        PyObject *obj = PyList_GET_ITEM(source_objs, got);
        Source *src = &sources[got];
        if (PyTuple_Check(obj)) {
            if (get_run(obj, &src->run) < 0) {
                got++;
                goto done;
            }
            src->count = src->run.count;
            src->buf = PyMem_Malloc(READ_AHEAD * RUN_PAGE * 8);
            src->stored = PyMem_Malloc(READ_AHEAD * MAX_PAGE_BYTES + PAGE_SLACK);
            if (src->buf == NULL || src->stored == NULL) {
                got++;
                PyErr_NoMemory();
                goto done;
            }
            src->buf_n = 0;
        } else {
            if (get_buffer(obj, &mems[got], 8, "entries") < 0) {
                got++;
                goto done;
            }
            src->mem = mems[got].view.buf;
            src->count = (uint64_t)mems[got].view.len / 8;
        }
    }
    if (get_buffer(dead_obj, &dead, 4, "dead ids") < 0) goto done;
    if (PyObject_GetBuffer(bloom_obj, &bloom, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) goto done;
    have_bloom = 1;
    if (PyObject_GetBuffer(stop_obj, &stop, PyBUF_C_CONTIGUOUS) < 0) goto done;
    have_stop = 1;
    if (blocks == 0 || (uint64_t)bloom.len != blocks * BLOOM_BLOCK || stop.len < 1) {
        PyErr_SetString(PyExc_ValueError, "a filter is blocks * 64 bytes, and stop a flag");
        goto done;
    }
    page = PyMem_Malloc(RUN_PAGE * 8);
    out = PyMem_Malloc(READ_AHEAD * MAX_PAGE_BYTES + PAGE_SLACK);
    if (page == NULL || out == NULL || push_u64(&starts, 0) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    Live live = {dead.view.buf, dead.view.len / 4, (uint32_t)floor};
    WriteError err = {0, 0};
    uint64_t count = 0, min_id = UINT32_MAX, max_id = 0, held = 0, filled = 0;
    size_t out_len = 0;
    uint32_t key = 0;
    int stopped = 0, nomemory = 0;
    const volatile unsigned char *stop_flag = stop.buf;
    unsigned char *bits = bloom.buf;
    Py_BEGIN_ALLOW_THREADS
    for (;;) {
        Source *least = NULL;
        uint64_t best = 0, e;
        for (Py_ssize_t i = 0; i < nsources; i++) {
            Source *src = &sources[i];
            if (src->next >= src->count) continue;
            if (!source_peek(src, &e, &err)) goto stopped;
            if (least == NULL || e < best) {
                least = src;
                best = e;
            }
        }
        if (least == NULL) break;
        least->next++;
        uint32_t id = (uint32_t)best, k = (uint32_t)(best >> 32);
        if (!is_live(&live, id)) continue;
        if (count == 0 || k != key) {
            key = k;
            held = 0;
            unsigned char *block = bits + (((uint64_t)k * blocks) >> 32) * BLOOM_BLOCK;
            uint64_t h = mix64((uint64_t)k + GOLDEN);
            for (int p = 0; p < BLOOM_PROBES; p++) {
                unsigned bit = (unsigned)((h >> (9 * p)) & 511);
                block[bit >> 3] |= (unsigned char)(1u << (bit & 7));
            }
        }
        if (held >= (uint64_t)cap) continue;
        held++;
        if (id < min_id) min_id = id;
        if (id > max_id) max_id = id;
        page[filled++] = best;
        count++;
        if (filled < RUN_PAGE) continue;
        if (add_page(page, filled, out, &out_len, &fences, &sums, &starts) < 0) {
            nomemory = 1;
            goto stopped;
        }
        filled = 0;
        if (out_len > (READ_AHEAD - 1) * MAX_PAGE_BYTES) {
            if ((err.failed = write_all(fd, out, out_len)) != 0) goto stopped;
            out_len = 0;
            if (*stop_flag) {
                stopped = 1;
                goto stopped;
            }
        }
    }
    if (filled && add_page(page, filled, out, &out_len, &fences, &sums, &starts) < 0) {
        nomemory = 1;
        goto stopped;
    }
    if (out_len) err.failed = write_all(fd, out, out_len);
stopped:
    Py_END_ALLOW_THREADS
    if (nomemory) {
        PyErr_NoMemory();
    } else if (err.failed == -1) {
        PyErr_Format(PyExc_OSError, "a page of a bucket run does not match its checksum (page %llu)",
                     (unsigned long long)err.page);
    } else if (err.failed) {
        errno = err.failed;
        PyErr_SetFromErrno(PyExc_OSError);
    } else if (stopped) {
        result = Py_NewRef(Py_None);
    } else {
        result = Py_BuildValue("KKKy#y#y#", (unsigned long long)count, (unsigned long long)min_id,
                               (unsigned long long)max_id, (const char *)fences.items, (Py_ssize_t)(fences.n * 8),
                               (const char *)sums.items, (Py_ssize_t)(sums.n * 8), (const char *)starts.items,
                               (Py_ssize_t)(starts.n * 8));
    }
done:
    for (Py_ssize_t i = 0; i < got; i++) {
        if (sources[i].mem == NULL) {
            release_runs(&sources[i].run, 1);
            PyMem_Free(sources[i].buf);
            PyMem_Free(sources[i].stored);
        }
        release(&mems[i]);
    }
    release(&dead);
    if (have_bloom) PyBuffer_Release(&bloom);
    if (have_stop) PyBuffer_Release(&stop);
    PyMem_Free(sources);
    PyMem_Free(mems);
    PyMem_Free(page);
    PyMem_Free(out);
    free(fences.items);
    free(sums.items);
    free(starts.items);
    return result;
}

/* ------------------------------------------------------------------ SimHashes by id */

/* bucket_signature(buckets, bits, unsigned) -> a bit for each bucket, the upper half of its
 * xxh64 modulo ``bits``, but those starting with the byte ``unsigned`` (simhashes.signature). */
static PyObject *py_bucket_signature(PyObject *self, PyObject *args) {
    PyObject *buckets;
    int bits, unsigned_prefix;
    if (!PyArg_ParseTuple(args, "O!ii", &PyList_Type, &buckets, &bits, &unsigned_prefix)) return NULL;
    if (bits < 1 || bits > 64) {
        PyErr_SetString(PyExc_ValueError, "signature bits must be 1 to 64");
        return NULL;
    }
    uint64_t found = 0;
    for (Py_ssize_t b = 0; b < PyList_GET_SIZE(buckets); b++) {
        uint32_t key;
        int bit;
        if (bucket_hash(PyList_GET_ITEM(buckets, b), &key, &bit, bits, unsigned_prefix) < 0) return NULL;
        if (bit >= 0) found |= 1ULL << bit;
    }
    return PyLong_FromUnsignedLongLong(found);
}

/* simhashes_far(values, base, used, ids, simhash, k, kept) -> the set of ``ids`` whose value
 * (values[id - base], 0 for unknown) is known and whose SimHash bits (those of ``kept``)
 * differ from ``simhash``'s in more than ``k``. The values are asked for all at once: each is
 * a cache miss of its own. */
static PyObject *py_simhashes_far(PyObject *self, PyObject *args) {
    PyObject *values_obj, *ids;
    unsigned long long base, used, simhash, kept;
    int k;
    if (!PyArg_ParseTuple(args, "OKKOKiK", &values_obj, &base, &used, &ids, &simhash, &k, &kept)) return NULL;
    Buffer values = {0};
    PyObject *result = NULL, *items = NULL;
    uint64_t *at = NULL;
    if (get_buffer(values_obj, &values, 8, "SimHash values") < 0) goto done;
    const uint64_t *held = values.view.buf;
    if (used > (unsigned long long)(values.view.len / 8)) used = (unsigned long long)(values.view.len / 8);
    if ((items = PySequence_Fast(ids, "ids must be iterable")) == NULL) goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
    if ((at = PyMem_Malloc((n ? n : 1) * sizeof(uint64_t))) == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned long long id = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(items, i));
        if (id == (unsigned long long)-1 && PyErr_Occurred()) goto done;
        at[i] = id >= base && id - base < used ? id - base : UINT64_MAX;
        if (at[i] != UINT64_MAX) __builtin_prefetch(&held[at[i]]);
    }
    if ((result = PySet_New(NULL)) == NULL) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (at[i] == UINT64_MAX) continue;
        uint64_t value = held[at[i]];
        if (value != 0 && __builtin_popcountll((value ^ simhash) & kept) > k &&
            PySet_Add(result, PySequence_Fast_GET_ITEM(items, i)) < 0) {
            Py_CLEAR(result);
            goto done;
        }
    }
done:
    release(&values);
    Py_XDECREF(items);
    PyMem_Free(at);
    return result;
}

static PyMethodDef methods[] = {
    {"xxh64", py_xxh64, METH_O, "xxh64 (seed 0) of a bytes-like object."},
    {"fold", py_fold, METH_VARARGS, "Folded code points of BMP text, or None for the exact path."},
    {"content_clauses", py_content_clauses, METH_VARARGS, "Content characters, their places and clauses of BMP text, or None."},
    {"parts", py_parts, METH_VARARGS, "Sentence keys, SimHash text and sketch of folded code points."},
    {"story_words", py_story_words, METH_VARARGS, "Story words and figures of content characters."},
    {"figures", py_figures, METH_VARARGS, "Figures of content characters (those of story_words)."},
    {"dateline_marks", py_dateline_marks, METH_O, "Where datelines may stand in content characters."},
    {"notice_spans", py_notice_spans, METH_VARARGS, "Site notices and credit lines of folded code points."},
    {"overlap", py_overlap, METH_VARARGS, "Values in both of two bottom-k sketches, and the union's size."},
    {"pack_hashes", py_pack_hashes, METH_O, "Sorted sketch hashes as a record stores them (Elias-Fano)."},
    {"unpack_hashes", py_unpack_hashes, METH_VARARGS, "Sketch hashes from their packed bytes in a record."},
    {"weigh", py_weigh, METH_VARARGS, "SimHash of a token list with integer tf-idf weights."},
    {"index_find", py_index_find, METH_VARARGS, "For each bucket, its lowest ids in an index table."},
    {"index_add", py_index_add, METH_VARARGS, "File one document id under buckets of an index table."},
    {"index_remove", py_index_remove, METH_VARARGS, "Take one document id out of buckets of an index table."},
    {"index_move", py_index_move, METH_VARARGS, "Put every entry of one index table into a larger one."},
    {"bloom_add", py_bloom_add, METH_VARARGS, "Set the filter bits of the keys of sorted run entries."},
    {"runs_find", py_runs_find, METH_VARARGS, "For each bucket, its lowest live ids in bucket runs and tables."},
    {"simhashes_far", py_simhashes_far, METH_VARARGS, "Ids whose known SimHash is farther than k bits."},
    {"bucket_signature", py_bucket_signature, METH_VARARGS, "A bit for each bucket, from the upper half of its hash."},
    {"run_write", py_run_write, METH_VARARGS, "Write sorted entries, merged and filtered, as the pages of a run."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernel", NULL, -1, methods};

/* The layout of the pair table that story_words probes (storywords.PAIR_SLOTS_LAYOUT: 2, from
 * the top bits of the pair's hash, idf_home). */
enum { PAIR_SLOTS_LAYOUT = 2 };

PyMODINIT_FUNC PyInit__kernel(void) {
    PyObject *module_object = PyModule_Create(&module);
    if (module_object && PyModule_AddIntConstant(module_object, "PAIR_SLOTS_LAYOUT", PAIR_SLOTS_LAYOUT) < 0) {
        Py_DECREF(module_object);
        return NULL;
    }
    return module_object;
}
