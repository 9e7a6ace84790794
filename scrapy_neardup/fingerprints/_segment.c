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

static uint64_t *slot_keys = NULL; /* 0: empty */
static double *slot_logs = NULL;   /* ln(freq) of a word; NAN for a prefix only */
static uint64_t slot_mask = 0;
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
    while (slot_keys[i]) {
        if (slot_keys[i] == k) return (int64_t)i;
        i = (i + 1) & slot_mask;
    }
    return -1;
}

static void put(uint64_t h, double logfreq, int word) {
    uint64_t k = key_of(h), i = k & slot_mask;
    while (slot_keys[i] && slot_keys[i] != k) i = (i + 1) & slot_mask;
    if (!slot_keys[i]) {
        slot_keys[i] = k;
        slot_logs[i] = NAN;
    }
    if (word) slot_logs[i] = logfreq;
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
    return slot >= 0 && !isnan(slot_logs[slot]);
}

/* A run of single characters between words: one character, a word of the dictionary cut
 * into characters, or the HMM's words. */
static void flush(Cut *cut, Py_ssize_t start, Py_ssize_t end) {
    if (end - start == 1) emit(cut, start, end);
    else if (!is_word(cut->text, start, end)) hmm_cut(cut, start, end);
    else
        for (Py_ssize_t i = start; i < end; i++) emit(cut, i, i + 1);
}

static void cut_block(Cut *cut, Py_ssize_t start, Py_ssize_t end) {
    const Py_UCS4 *t = cut->text;
    double *route = cut->route;
    Py_ssize_t *next = cut->next, i, j;
    route[end] = 0.0;
    for (i = end - 1; i >= start; i--) {
        uint64_t h = 0;
        int found = 0;
        double best = 0.0;
        Py_ssize_t best_end = i + 1;
        for (j = i; j < end; j++) {
            int64_t slot;
            h = step(h, t[j]);
            if ((slot = find(h)) < 0) break;
            if (isnan(slot_logs[slot])) continue;
            double p = slot_logs[slot] - log_total + route[j + 1];
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

static PyObject *segment_cut(PyObject *self, PyObject *arg) {
    if (!slot_keys) {
        PyErr_SetString(PyExc_RuntimeError, "_segment.load was not called");
        return NULL;
    }
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "cut takes a str");
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg), i;
    Py_UCS4 *text = PyUnicode_AsUCS4Copy(arg);
    if (!text) return NULL;
    size_t room = (size_t)(n + 1);
    Cut cut = {text, PyMem_Malloc(2 * room * sizeof(Py_UCS4)), 0, PyMem_Malloc(room * sizeof(double)),
               PyMem_Malloc(room * sizeof(Py_ssize_t)), PyMem_Malloc(4 * room * sizeof(double)),
               PyMem_Malloc(4 * room)};
    PyObject *result = NULL;
    if (!cut.out || !cut.route || !cut.next || !cut.v || !cut.prev) {
        PyErr_NoMemory();
        goto done;
    }
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
    result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, cut.out, cut.used);
done:
    PyMem_Free(text);
    PyMem_Free(cut.out);
    PyMem_Free(cut.route);
    PyMem_Free(cut.next);
    PyMem_Free(cut.v);
    PyMem_Free(cut.prev);
    return result;
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
    while (size < (uint64_t)(codes.len / 4) * 2 + 16) size <<= 1;
    free(slot_keys);
    free(slot_logs);
    free(hmm_emit);
    slot_keys = calloc(size, 8);
    slot_logs = malloc(size * 8);
    hmm_emit = malloc((size_t)emits.len);
    slot_mask = size - 1;
    if (!slot_keys || !slot_logs || !hmm_emit) {
        PyErr_NoMemory();
        goto done;
    }
    uint64_t total = 0;
    int64_t begin = 0;
    for (w = 0; w < words; w++) {
        uint64_t h = 0;
        for (int64_t i = begin; i < e[w]; i++) {
            h = step(h, c[i]);
            put(h, log((double)f[w]), i == e[w] - 1);
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
