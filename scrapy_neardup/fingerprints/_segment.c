/* jieba's cut(line, HMM=True) as jieba-rs does it, on code points, without Python strings
 * per token (a study: see benchmarks/segment_study.py).
 *
 * The dictionary is a hash table of every word and every prefix of a word (keys: a 64-bit
 * hash of the code points); the route is jieba's DP on log frequencies, ties to the longer
 * word as jieba-rs's max_by keeps the last maximum; runs of single characters that are not
 * a word go through jieba's HMM (Viterbi over B/E/M/S; on a tie a state keeps the first
 * allowed predecessor and the path ends in S, as rjieba 0.2.2 does: ties are common, a
 * character missing from the emission table costs -3.14e100, which absorbs the rest). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MIN_FLOAT (-3.14e100)
#define HMM_FIRST 0x4E00
#define HMM_LAST 0x9FD5
#define SEPARATOR 0x1F

typedef struct {
    uint64_t key; /* 0: empty */
    double log;   /* ln(freq) of a word; NAN for a prefix only */
} Slot;            /* one cache line holds a probe's key and its frequency */

static Slot *slots = NULL;
static uint64_t slot_mask = 0;
/* The common characters' entries without a probe: ln(freq), NAN for a prefix only, INFINITY
 * for neither; and a filter of the pairs of characters seen next to each other in a word,
 * which ends most failing probes without touching the table (the probes' cache misses were
 * two thirds of the time). */
#define DENSE_FIRST 0x4E00
#define DENSE_LAST 0x9FFF
#define PAIR_BITS 22
static double char_logs[DENSE_LAST - DENSE_FIRST + 1];
static uint64_t *pair_filter = NULL;

static inline uint64_t pair_hash(Py_UCS4 a, Py_UCS4 b) {
    uint64_t h = ((uint64_t)a << 21 | b) * 0x9E3779B97F4A7C15ULL;
    return h >> (64 - PAIR_BITS);
}

static inline int pair_seen(Py_UCS4 a, Py_UCS4 b) {
    uint64_t bit = pair_hash(a, b);
    return (int)(pair_filter[bit >> 6] >> (bit & 63) & 1);
}
static double log_total = 0.0;
static double hmm_start[4];
static double hmm_trans[4][4];
static double *hmm_emit = NULL; /* [code - HMM_FIRST][state] */
static const int allowed_prev[4][2] = {{1, 3}, {0, 2}, {2, 0}, {3, 1}}; /* B E M S */

static inline uint64_t step(uint64_t h, Py_UCS4 c) {
    h ^= (uint64_t)c + 0x9E3779B97F4A7C15ULL;
    h *= 0xFF51AFD7ED558CCDULL;
    return h ^ (h >> 29);
}

static inline uint64_t key_of(uint64_t h) { return h ? h : 1; }

/* The slot of hash h, or -1 when neither a word nor a prefix. */
static inline int64_t find(uint64_t h) {
    uint64_t k = key_of(h), i = k & slot_mask;
    while (slots[i].key) {
        if (slots[i].key == k) return (int64_t)i;
        i = (i + 1) & slot_mask;
    }
    return -1;
}

static void put(uint64_t h, double logfreq, int word) {
    uint64_t k = key_of(h), i = k & slot_mask;
    while (slots[i].key && slots[i].key != k) i = (i + 1) & slot_mask;
    if (!slots[i].key) {
        slots[i].key = k;
        slots[i].log = NAN;
    }
    if (word) slots[i].log = logfreq;
}

static int han_default(Py_UCS4 c) {
    return (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2EBEF) || (c >= 0x2F800 && c <= 0x2FA1F) ||
           (c < 128 && (isalnum((int)c) || c == '+' || c == '#' || c == '&' || c == '.' ||
                        c == '_' || c == '%' || c == '-'));
}

static inline int hmm_han(Py_UCS4 c) { return c >= HMM_FIRST && c <= HMM_LAST; }
static inline int alnum(Py_UCS4 c) { return c < 128 && isalnum((int)c); }
static inline int is_digit(Py_UCS4 c) { return c >= '0' && c <= '9'; }

typedef struct {
    const Py_UCS4 *text;
    Py_UCS4 *out;
    Py_ssize_t used;
    double *route;
    Py_ssize_t *next;
    double *v;
    signed char *prev;
} Cut;

static void emit(Cut *cut, Py_ssize_t start, Py_ssize_t end) {
    if (cut->used) cut->out[cut->used++] = SEPARATOR;
    memcpy(cut->out + cut->used, cut->text + start, (size_t)(end - start) * sizeof(Py_UCS4));
    cut->used += end - start;
}

static void viterbi(Cut *cut, Py_ssize_t start, Py_ssize_t end) {
    const Py_UCS4 *t = cut->text + start;
    Py_ssize_t n = end - start, i;
    double *v = cut->v;
    signed char *prev = cut->prev;
    for (int y = 0; y < 4; y++) {
        v[y] = hmm_start[y] + hmm_emit[(t[0] - HMM_FIRST) * 4 + y];
        prev[y] = -1;
    }
    for (i = 1; i < n; i++) {
        for (int y = 0; y < 4; y++) {
            double em = hmm_emit[(t[i] - HMM_FIRST) * 4 + y], best = 0.0;
            int from = -1;
            for (int k = 0; k < 2; k++) {
                int y0 = allowed_prev[y][k];
                double p = v[(i - 1) * 4 + y0] + hmm_trans[y0][y] + em;
                if (from < 0 || p > best) best = p, from = y0; /* the first maximum */
            }
            v[i * 4 + y] = best;
            prev[i * 4 + y] = (signed char)from;
        }
    }
    int state = v[(n - 1) * 4 + 3] >= v[(n - 1) * 4 + 1] ? 3 : 1;
    for (i = n - 1; i >= 0; i--) { /* the path's states, stored in prev[i*4] */
        int before = i ? prev[i * 4 + state] : -1;
        prev[i * 4] = (signed char)state;
        state = before;
    }
    Py_ssize_t begin = 0, after = 0;
    for (i = 0; i < n; i++) {
        int s = prev[i * 4];
        if (s == 0) begin = i;
        else if (s == 1) emit(cut, start + begin, start + i + 1), after = i + 1;
        else if (s == 3) emit(cut, start + i, start + i + 1), after = i + 1;
    }
    if (after < n) emit(cut, start + after, end);
}

/* jieba-rs's hmm::cut: runs of U+4E00..U+9FD5 by Viterbi; the rest split at runs of
 * letters and digits joined by single "._-" with an optional "%" (what rjieba 0.2.2 does,
 * found by trying it), the pieces between kept whole. */
static void hmm_cut(Cut *cut, Py_ssize_t start, Py_ssize_t end) {
    const Py_UCS4 *t = cut->text;
    Py_ssize_t i = start;
    while (i < end) {
        Py_ssize_t j = i + 1;
        if (hmm_han(t[i])) {
            while (j < end && hmm_han(t[j])) j++;
            if (j - i > 1) viterbi(cut, i, j);
            else emit(cut, i, j);
            i = j;
            continue;
        }
        while (j < end && !hmm_han(t[j])) j++;
        Py_ssize_t p = i, last = i;
        while (p < j) {
            if (!alnum(t[p])) {
                p++;
                continue;
            }
            Py_ssize_t e = p;
            while (e < j && alnum(t[e])) e++;
            while (e + 1 < j && (t[e] == '.' || t[e] == '_' || t[e] == '-') && alnum(t[e + 1]))
                for (e++; e < j && alnum(t[e]);) e++;
            if (e < j && t[e] == '%') e++;
            if (p > last) emit(cut, last, p);
            emit(cut, p, e);
            p = last = e;
        }
        if (j > last) emit(cut, last, j);
        i = j;
    }
}

static int is_word(const Py_UCS4 *t, Py_ssize_t start, Py_ssize_t end) {
    uint64_t h = 0;
    int64_t slot = -1;
    for (Py_ssize_t i = start; i < end; i++) {
        h = step(h, t[i]);
        if ((slot = find(h)) < 0) return 0;
    }
    return slot >= 0 && !isnan(slots[slot].log);
}

/* A run of single characters between words: one character, a word of the dictionary cut
 * into characters, or the HMM's words. */
static void flush(Cut *cut, Py_ssize_t start, Py_ssize_t end) {
    if (end - start == 1) emit(cut, start, end);
    else if (!is_word(cut->text, start, end)) hmm_cut(cut, start, end);
    else
        for (Py_ssize_t i = start; i < end; i++) emit(cut, i, i + 1);
}

/* The route is found from the block's end backwards: the table's slots for the position
 * this many characters before are fetched while this one is worked on (their cache misses
 * overlap instead of following each other). */
#ifndef PREFETCH_AHEAD
#define PREFETCH_AHEAD 4
#endif

static void cut_block(Cut *cut, Py_ssize_t start, Py_ssize_t end) {
    const Py_UCS4 *t = cut->text;
    double *route = cut->route;
    Py_ssize_t *next = cut->next, i, j;
    route[end] = 0.0;
    for (i = end - 1; i >= start; i--) {
        Py_ssize_t ahead = i - PREFETCH_AHEAD; /* its probes of 2 and 3 characters, started now */
        if (ahead >= start) {
            uint64_t h2 = step(step(0, t[ahead]), t[ahead + 1]);
            __builtin_prefetch(&slots[key_of(h2) & slot_mask]);
            if (ahead + 2 < end) __builtin_prefetch(&slots[key_of(step(h2, t[ahead + 2])) & slot_mask]);
        }
        uint64_t h = 0;
        int found = 0;
        double best = 0.0;
        Py_ssize_t best_end = i + 1;
        for (j = i; j < end; j++) {
            double logfreq;
            h = step(h, t[j]);
            if (j == i && t[j] >= DENSE_FIRST && t[j] <= DENSE_LAST) {
                logfreq = char_logs[t[j] - DENSE_FIRST];
                if (logfreq == INFINITY) break;
            } else {
                int64_t slot;
                if (j > i && !pair_seen(t[j - 1], t[j])) break;
                if ((slot = find(h)) < 0) break;
                logfreq = slots[slot].log;
            }
            if (isnan(logfreq)) continue;
            double p = logfreq - log_total + route[j + 1];
            if (!found || p >= best) best = p, best_end = j + 1, found = 1;
        }
        if (!found) best = (0.0 - log_total) + route[i + 1];
        route[i] = best;
        next[i] = best_end;
    }
    Py_ssize_t x = start, left = -1;
    while (x < end) {
        Py_ssize_t y = next[x];
        if (y - x == 1) {
            if (left < 0) left = x;
        } else {
            if (left >= 0) flush(cut, left, x), left = -1;
            emit(cut, x, y);
        }
        x = y;
    }
    if (left >= 0) flush(cut, left, end);
}

/* Working memory of cut, kept between calls (the GIL is held throughout a cut). */
static struct {
    Py_ssize_t room;
    Py_UCS4 *text, *out;
    double *route, *v;
    Py_ssize_t *next;
    signed char *prev;
} scratch;

static int scratch_for(Py_ssize_t n) {
    if (n < scratch.room && scratch.text) return 1;
    Py_ssize_t room = n + 64;
    PyMem_Free(scratch.text), PyMem_Free(scratch.out), PyMem_Free(scratch.route);
    PyMem_Free(scratch.v), PyMem_Free(scratch.next), PyMem_Free(scratch.prev);
    scratch.text = PyMem_Malloc((size_t)room * sizeof(Py_UCS4));
    scratch.out = PyMem_Malloc(2 * (size_t)room * sizeof(Py_UCS4));
    scratch.route = PyMem_Malloc((size_t)room * sizeof(double));
    scratch.v = PyMem_Malloc(4 * (size_t)room * sizeof(double));
    scratch.next = PyMem_Malloc((size_t)room * sizeof(Py_ssize_t));
    scratch.prev = PyMem_Malloc(4 * (size_t)room);
    scratch.room = room;
    if (scratch.text && scratch.out && scratch.route && scratch.v && scratch.next && scratch.prev)
        return 1;
    scratch.room = 0;
    return 0;
}

static PyObject *segment_cut(PyObject *self, PyObject *arg) {
    if (!slots) {
        PyErr_SetString(PyExc_RuntimeError, "_segment.load was not called");
        return NULL;
    }
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "cut takes a str");
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg), i;
    if (!scratch_for(n)) return PyErr_NoMemory();
    int kind = PyUnicode_KIND(arg);
    const void *data = PyUnicode_DATA(arg);
    Py_UCS4 *text = scratch.text;
    for (i = 0; i < n; i++) text[i] = PyUnicode_READ(kind, data, i);
    Cut cut = {text, scratch.out, 0, scratch.route, scratch.next, scratch.v, scratch.prev};
    for (i = 0; i < n;) {
        Py_ssize_t j = i + 1;
        if (han_default(text[i])) {
            while (j < n && han_default(text[j])) j++;
            cut_block(&cut, i, j);
        } else {
            emit(&cut, i, j);
        }
        i = j;
    }
    return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, cut.out, cut.used);
}

/* load(codes: uint32 words end to end, ends: int64 end of each word, freqs: int64,
 *      start: float64[4], trans: float64[16], emit: float64[(HMM_LAST-HMM_FIRST+1)*4]) */
static PyObject *segment_load(PyObject *self, PyObject *args) {
    Py_buffer codes, ends, freqs, start, trans, emits;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*", &codes, &ends, &freqs, &start, &trans, &emits))
        return NULL;
    const uint32_t *c = codes.buf;
    const int64_t *e = ends.buf, *f = freqs.buf;
    Py_ssize_t words = ends.len / 8, w;
    uint64_t size = 1;
    while (size < (uint64_t)(codes.len / 4) + 1) size <<= 1; /* never full: an entry a code */
    free(slots);
    free(hmm_emit);
    free(pair_filter);
    slots = calloc(size, sizeof(Slot));
    hmm_emit = malloc((size_t)emits.len);
    pair_filter = calloc((size_t)1 << (PAIR_BITS - 6), 8);
    slot_mask = size - 1;
    if (!slots || !hmm_emit || !pair_filter) {
        PyErr_NoMemory();
        goto done;
    }
    uint64_t total = 0;
    int64_t begin = 0;
    for (size_t k = 0; k < sizeof char_logs / sizeof *char_logs; k++) char_logs[k] = INFINITY;
    for (w = 0; w < words; w++) {
        uint64_t h = 0;
        for (int64_t i = begin; i < e[w]; i++) {
            h = step(h, c[i]);
            put(h, log((double)f[w]), i == e[w] - 1);
            if (i > begin) {
                uint64_t bit = pair_hash(c[i - 1], c[i]);
                pair_filter[bit >> 6] |= 1ULL << (bit & 63);
            } else if (c[i] >= DENSE_FIRST && c[i] <= DENSE_LAST) {
                double *entry = &char_logs[c[i] - DENSE_FIRST];
                if (e[w] - begin == 1) *entry = log((double)f[w]);
                else if (*entry == INFINITY) *entry = NAN;
            }
        }
        begin = e[w];
        total += (uint64_t)f[w];
    }
    log_total = log((double)total);
    memcpy(hmm_start, start.buf, sizeof hmm_start);
    memcpy(hmm_trans, trans.buf, sizeof hmm_trans);
    memcpy(hmm_emit, emits.buf, (size_t)emits.len);
done:
    PyBuffer_Release(&codes);
    PyBuffer_Release(&ends);
    PyBuffer_Release(&freqs);
    PyBuffer_Release(&start);
    PyBuffer_Release(&trans);
    PyBuffer_Release(&emits);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"load", segment_load, METH_VARARGS, "Load the dictionary and HMM tables."},
    {"cut", segment_cut, METH_O, "A line's tokens, joined by U+001F."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_segment", NULL, -1, methods};

PyMODINIT_FUNC PyInit__segment(void) { return PyModule_Create(&module); }
