/* A page's markup made lighter for lxml's parser, with the same tree where extraction looks.
 *
 * libxml2 spends about half of its HTML parse on attributes, and extraction reads only a few
 * (markup.py names them). This scan follows libxml2's HTML tokenizer (2.14 and later, HTML5
 * tokenization) through the markup: start tags, end tags, comments, doctypes, and the raw
 * text of <script>, <style>, <title>, <textarea>, <xmp>, <iframe>, <noembed>, <noframes> and
 * <plaintext> (the escapes of <script> too), and gives the markup back with
 *   - the attributes not named left out of start tags (a space, or the line breaks they held,
 *     in their place), but from the tags named, which keep all theirs,
 *   - the text of <script> and <style> and of comments left out but for its line breaks.
 * Everything else is copied as it is. Line breaks are kept everywhere, so an element starts
 * on the same source line as before. markup.py's twin is the identity: the parse of the
 * lighter markup differs from the parse of the page only in what was left out, which
 * tests/fingerprints/test_markup.py checks on pages of every shape.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>
#define FIND_SSE2 1
#endif

/* The first index from p where s holds a or b (n where it holds neither): 16 bytes at a time
 * where SSE2 is there, as most of a page is searched so (text for '<', scripts, quoted values). */
#define FIND(T, WIDTH, CMPEQ, SET1)                                                            \
    static Py_ssize_t find_##T(const T *s, Py_ssize_t n, Py_ssize_t p, T a, T b) {             \
        FIND_WIDE(WIDTH, CMPEQ, SET1)                                                          \
        while (p < n && s[p] != a && s[p] != b) p++;                                           \
        return p;                                                                              \
    }
#ifdef FIND_SSE2
#define FIND_WIDE(WIDTH, CMPEQ, SET1)                                                          \
    const __m128i va = SET1(a), vb = SET1(b);                                                  \
    while (p + 16 / (WIDTH) <= n) {                                                            \
        __m128i v = _mm_loadu_si128((const __m128i *)(s + p));                                 \
        int mask = _mm_movemask_epi8(_mm_or_si128(CMPEQ(v, va), CMPEQ(v, vb)));                \
        if (mask) return p + __builtin_ctz(mask) / (WIDTH);                                    \
        p += 16 / (WIDTH);                                                                     \
    }
#else
#define FIND_WIDE(WIDTH, CMPEQ, SET1)
#endif
FIND(Py_UCS1, 1, _mm_cmpeq_epi8, _mm_set1_epi8)
FIND(Py_UCS2, 2, _mm_cmpeq_epi16, _mm_set1_epi16)
FIND(Py_UCS4, 4, _mm_cmpeq_epi32, _mm_set1_epi32)

#define MAX_KEPT 16
#define MAX_NAME 16

typedef struct {
    char names[MAX_KEPT][MAX_NAME];
    Py_ssize_t lengths[MAX_KEPT];
    int count;
} Kept;

enum { TEXT_KEEP, TEXT_LINES }; /* raw text copied, or only its line breaks */
enum { RAW_NONE, RAW_TEXT, RAW_SCRIPT, RAW_PLAIN };

#define IS_WS(c) ((c) == ' ' || (c) == '\t' || (c) == '\n' || (c) == '\f' || (c) == '\r')
#define IS_LETTER(c) ((((c) | 0x20) >= 'a') && (((c) | 0x20) <= 'z'))
#define LOWER(c) (((c) >= 'A' && (c) <= 'Z') ? (c) + 0x20 : (c))

/* How libxml2 reads what follows the start tag `name` (lower case): as markup, as raw text
 * (to its end tag), as a script (raw text with escapes) or as text to the end; `text` says
 * whether the raw text is kept or only its line breaks (scripts and styles). */
static int raw_kind(const char *name, int *text) {
    switch (name[0]) { /* most tags are none of these: one comparison for them */
    case 's':
        if (!strcmp(name, "script")) {
            *text = TEXT_LINES;
            return RAW_SCRIPT;
        }
        if (!strcmp(name, "style")) {
            *text = TEXT_LINES;
            return RAW_TEXT;
        }
        return RAW_NONE;
    case 't':
        return !strcmp(name, "title") || !strcmp(name, "textarea") ? RAW_TEXT : RAW_NONE;
    case 'x':
        return !strcmp(name, "xmp") ? RAW_TEXT : RAW_NONE;
    case 'i':
        return !strcmp(name, "iframe") ? RAW_TEXT : RAW_NONE;
    case 'n':
        return !strcmp(name, "noembed") || !strcmp(name, "noframes") ? RAW_TEXT : RAW_NONE;
    case 'p':
        return !strcmp(name, "plaintext") ? RAW_PLAIN : RAW_NONE;
    default:
        return RAW_NONE;
    }
}

/* Is the tag `name` (lower case) one of the list's? */
static int listed(const char *name, const Kept *list) {
    for (int k = 0; k < list->count; k++)
        if (!strcmp(name, list->names[k])) return 1;
    return 0;
}

/* Does the ASCII name (lower case) equal the markup's characters s[0..len), case folded? */
#define NAME_IS(T)                                                            \
    static int name_is_##T(const T *s, Py_ssize_t len, const char *name) {    \
        Py_ssize_t i = 0;                                                     \
        for (; i < len; i++) {                                                \
            if (!name[i] || s[i] > 127 || LOWER(s[i]) != (unsigned char)name[i]) return 0; \
        }                                                                     \
        return name[i] == 0;                                                  \
    }

/* The scan for one kind of str (1, 2 or 4 bytes a character), written once as a macro. */
#define SCAN(T)                                                                                \
    NAME_IS(T)                                                                                 \
                                                                                               \
    static int kept_##T(const T *s, Py_ssize_t len, const Kept *kept) {                        \
        for (int k = 0; k < kept->count; k++)                                                  \
            if (kept->lengths[k] == len && name_is_##T(s, len, kept->names[k])) return 1;      \
        return 0;                                                                              \
    }                                                                                          \
                                                                                               \
    /* Only the line breaks of s[from..to) (or one space where there are none and space). */  \
    static Py_ssize_t lines_##T(const T *s, Py_ssize_t from, Py_ssize_t to, T *out, Py_ssize_t o, \
                                int space) {                                                   \
        Py_ssize_t start = o;                                                                  \
        for (Py_ssize_t i = find_##T(s, to, from, '\n', '\n'); i < to; i = find_##T(s, to, i + 1, '\n', '\n')) \
            out[o++] = '\n';                                                                    \
        if (o == start && space) out[o++] = ' ';                                               \
        return o;                                                                              \
    }                                                                                          \
                                                                                               \
    /* Where an attribute starting at p ends (its name, then = and a value). */                \
    static Py_ssize_t attribute_end_##T(const T *s, Py_ssize_t n, Py_ssize_t p, Py_ssize_t *name_end) { \
        p++; /* the first character belongs to the name, whatever it is */                    \
        while (p < n && !(s[p] == '/' || s[p] == '>' || s[p] == '=' || IS_WS(s[p]))) p++;      \
        *name_end = p;                                                                         \
        Py_ssize_t q = p;                                                                      \
        while (q < n && IS_WS(s[q])) q++;                                                      \
        if (q >= n || s[q] != '=') return p;                                                   \
        q++;                                                                                   \
        while (q < n && IS_WS(s[q])) q++;                                                      \
        if (q < n && (s[q] == '"' || s[q] == '\'')) {                                          \
            T quote = s[q];                                                                    \
            q = find_##T(s, n, q + 1, quote, quote);                                           \
            return q < n ? q + 1 : n;                                                          \
        }                                                                                      \
        while (q < n && !IS_WS(s[q]) && s[q] != '>') q++;                                      \
        return q;                                                                              \
    }                                                                                          \
                                                                                               \
    /* The end of a tag's attributes from p: the index of its '>' or of "/>", or n. */        \
    static Py_ssize_t tag_rest_##T(const T *s, Py_ssize_t n, Py_ssize_t p, T *out, Py_ssize_t *o, \
                                   const Kept *kept, int *self_closing) {                      \
        *self_closing = 0;                                                                     \
        for (;;) {                                                                             \
            Py_ssize_t from = p;                                                               \
            while (p < n && IS_WS(s[p])) p++;                                                  \
            if (out) {                                                                         \
                memcpy(out + *o, s + from, (p - from) * sizeof(T));                            \
                *o += p - from;                                                                \
            }                                                                                  \
            if (p >= n) return n;                                                              \
            if (s[p] == '>') return p;                                                         \
            if (s[p] == '/') {                                                                 \
                if (p + 1 < n && s[p + 1] == '>') {                                            \
                    *self_closing = 1;                                                         \
                    return p;                                                                  \
                }                                                                              \
                if (out) out[(*o)++] = '/';                                                    \
                p++;                                                                           \
                continue;                                                                      \
            }                                                                                  \
            Py_ssize_t name_end, end = attribute_end_##T(s, n, p, &name_end);                  \
            if (out) {                                                                         \
                if (!kept || kept_##T(s + p, name_end - p, kept)) { /* no list: all kept */    \
                    memcpy(out + *o, s + p, (end - p) * sizeof(T));                            \
                    *o += end - p;                                                             \
                } else {                                                                       \
                    *o = lines_##T(s, p, end, out, *o, 1);                                     \
                }                                                                              \
            }                                                                                  \
            p = end;                                                                           \
        }                                                                                      \
    }                                                                                          \
                                                                                               \
    /* Where the raw text of element `name` that starts at p ends: its end tag, or n. */       \
    static Py_ssize_t raw_end_##T(const T *s, Py_ssize_t n, Py_ssize_t p, const char *name, int script) { \
        enum { PLAIN, ESCAPED, DOUBLE };                                                       \
        int mode = PLAIN;                                                                      \
        for (; p < n; p++) {                                                                   \
            p = mode == PLAIN ? find_##T(s, n, p, '<', '<') : find_##T(s, n, p, '<', '-');     \
            if (p >= n) break;                                                                 \
            T c = s[p];                                                                        \
            if (c == '-' && mode != PLAIN) {                                                   \
                if (p + 2 < n && s[p + 1] == '-' && s[p + 2] == '>') mode = PLAIN;             \
                continue;                                                                      \
            }                                                                                  \
            if (c != '<') continue;                                                            \
            Py_ssize_t j = p + 1;                                                              \
            if (script && mode == PLAIN && j < n && s[j] == '!') {                             \
                if (j + 2 < n && s[j + 1] == '-' && s[j + 2] == '-') mode = ESCAPED;           \
                continue;                                                                      \
            }                                                                                  \
            int solidus = j < n && s[j] == '/';                                                \
            j += solidus;                                                                      \
            if (!solidus && mode != ESCAPED) continue;                                         \
            Py_ssize_t i = 0;                                                                  \
            while (j < n && name[i] && (unsigned char)name[i] == (s[j] | 0x20)) {              \
                i++;                                                                           \
                j++;                                                                           \
            }                                                                                  \
            if (name[i] || j >= n || !(s[j] == '>' || s[j] == '/' || IS_WS(s[j]))) continue;  \
            if (mode == ESCAPED && !solidus)                                                   \
                mode = DOUBLE;                                                                 \
            else if (mode == DOUBLE)                                                           \
                mode = ESCAPED;                                                                \
            else                                                                               \
                return p;                                                                      \
        }                                                                                      \
        return n;                                                                              \
    }                                                                                          \
                                                                                               \
    static Py_ssize_t slim_##T(const T *s, Py_ssize_t n, T *out, const Kept *kept, const Kept *whole) { \
        Py_ssize_t i = 0, o = 0;                                                               \
        while (i < n) {                                                                        \
            Py_ssize_t lt = find_##T(s, n, i, '<', '<');                                            \
            memcpy(out + o, s + i, (lt - i) * sizeof(T));                                      \
            o += lt - i;                                                                       \
            i = lt;                                                                            \
            if (i >= n) break;                                                                 \
            Py_ssize_t end; /* the first character after the construct at i, copied as it is */ \
            T next = i + 1 < n ? s[i + 1] : 0;                                                 \
            if (next == '!') {                                                                 \
                if (i + 3 < n && s[i + 2] == '-' && s[i + 3] == '-') { /* a comment */        \
                    Py_ssize_t k = i + 4, close = -1;                                          \
                    if (k < n && s[k] == '>') {                                                \
                        end = k + 1;                                                           \
                    } else if (k + 1 < n && s[k] == '-' && s[k + 1] == '>') {                  \
                        end = k + 2;                                                           \
                    } else {                                                                   \
                        for (; (k = find_##T(s, n, k, '-', '-')) + 2 < n; k++) {               \
                            if (s[k + 1] != '-') continue;                                     \
                            if (s[k + 2] == '>') { close = k; end = k + 3; break; }            \
                            if (k + 3 < n && s[k + 2] == '!' && s[k + 3] == '>') { close = k; end = k + 4; break; } \
                        }                                                                      \
                        if (close < 0) end = n;                                                \
                    }                                                                          \
                    if (close >= 0) {                                                          \
                        static const char open[] = "<!--", shut[] = "-->";                     \
                        for (int c = 0; c < 4; c++) out[o++] = open[c];                        \
                        o = lines_##T(s, i + 4, close, out, o, 0);                             \
                        for (int c = 0; c < 3; c++) out[o++] = shut[c];                        \
                        i = end;                                                               \
                        continue;                                                              \
                    }                                                                          \
                } else { /* a doctype or a bogus comment: to the next '>' */                   \
                    end = find_##T(s, n, i + 2, '>', '>');                                          \
                    end = end < n ? end + 1 : n;                                               \
                }                                                                              \
            } else if (next == '?') {                                                          \
                end = find_##T(s, n, i + 2, '>', '>');                                              \
                end = end < n ? end + 1 : n;                                                   \
            } else if (next == '/') {                                                          \
                if (i + 2 < n && IS_LETTER(s[i + 2])) { /* an end tag: its attributes count for where it ends */ \
                    Py_ssize_t p = i + 3;                                                      \
                    while (p < n && !(s[p] == '/' || s[p] == '>' || IS_WS(s[p]))) p++;         \
                    int self_closing;                                                          \
                    p = tag_rest_##T(s, n, p, NULL, NULL, kept, &self_closing);                \
                    end = p >= n ? n : p + (self_closing ? 2 : 1);                             \
                } else if (i + 2 < n && s[i + 2] == '>') {                                     \
                    end = i + 3;                                                               \
                } else if (i + 2 < n) { /* a bogus comment */                                  \
                    end = find_##T(s, n, i + 2, '>', '>');                                          \
                    end = end < n ? end + 1 : n;                                               \
                } else {                                                                       \
                    end = n;                                                                   \
                }                                                                              \
            } else if (i + 1 < n && IS_LETTER(next)) { /* a start tag */                       \
                Py_ssize_t p = i + 2;                                                          \
                while (p < n && !(s[p] == '/' || s[p] == '>' || IS_WS(s[p]))) p++;             \
                char name[MAX_NAME] = {0};                                                     \
                if (p - i - 1 < MAX_NAME) {                                                    \
                    for (Py_ssize_t k = i + 1; k < p; k++) name[k - i - 1] = s[k] > 127 ? '?' : (char)LOWER(s[k]); \
                }                                                                              \
                memcpy(out + o, s + i, (p - i) * sizeof(T));                                   \
                o += p - i;                                                                    \
                int self_closing;                                                              \
                p = tag_rest_##T(s, n, p, out, &o, listed(name, whole) ? NULL : kept, &self_closing); \
                if (p >= n) break; /* libxml2 drops a tag the page ends in */                  \
                Py_ssize_t close = p + (self_closing ? 2 : 1);                                 \
                memcpy(out + o, s + p, (close - p) * sizeof(T));                               \
                o += close - p;                                                                \
                i = close;                                                                     \
                if (self_closing) continue;                                                    \
                int text = TEXT_KEEP, raw = raw_kind(name, &text);                             \
                if (raw == RAW_NONE) continue;                                                 \
                Py_ssize_t stop = raw == RAW_PLAIN ? n : raw_end_##T(s, n, i, name, raw == RAW_SCRIPT); \
                if (text == TEXT_LINES) {                                                      \
                    o = lines_##T(s, i, stop, out, o, 0);                                      \
                } else {                                                                       \
                    memcpy(out + o, s + i, (stop - i) * sizeof(T));                            \
                    o += stop - i;                                                             \
                }                                                                              \
                i = stop;                                                                      \
                continue;                                                                      \
            } else { /* a '<' of text */                                                       \
                end = i + 1;                                                                   \
            }                                                                                  \
            memcpy(out + o, s + i, (end - i) * sizeof(T));                                     \
            o += end - i;                                                                      \
            i = end;                                                                           \
        }                                                                                      \
        return o;                                                                              \
    }

SCAN(Py_UCS1)
SCAN(Py_UCS2)
SCAN(Py_UCS4)

static int read_kept(PyObject *names, Kept *kept) {
    PyObject *fast = PySequence_Fast(names, "expected a sequence of attribute names");
    if (!fast) return -1;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
    if (count > MAX_KEPT) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "too many attribute names");
        return -1;
    }
    kept->count = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t size;
        const char *name = PyUnicode_AsUTF8AndSize(PySequence_Fast_GET_ITEM(fast, k), &size);
        if (!name || size == 0 || size >= MAX_NAME) {
            Py_DECREF(fast);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "an attribute name is empty or too long");
            return -1;
        }
        for (Py_ssize_t c = 0; c <= size; c++) kept->names[kept->count][c] = (char)LOWER(name[c]);
        kept->lengths[kept->count++] = size;
    }
    Py_DECREF(fast);
    return 0;
}

static PyObject *py_slim(PyObject *self, PyObject *args) {
    PyObject *html, *names, *tags;
    if (!PyArg_ParseTuple(args, "UOO", &html, &names, &tags)) return NULL;
    Kept kept, whole;
    if (read_kept(names, &kept) < 0 || read_kept(tags, &whole) < 0) return NULL;
    int kind = PyUnicode_KIND(html);
    Py_ssize_t n = PyUnicode_GET_LENGTH(html);
    void *out = PyMem_Malloc((n ? n : 1) * kind);
    if (!out) return PyErr_NoMemory();
    Py_ssize_t length;
    const void *data = PyUnicode_DATA(html);
    if (kind == PyUnicode_1BYTE_KIND)
        length = slim_Py_UCS1(data, n, out, &kept, &whole);
    else if (kind == PyUnicode_2BYTE_KIND)
        length = slim_Py_UCS2(data, n, out, &kept, &whole);
    else
        length = slim_Py_UCS4(data, n, out, &kept, &whole);
    PyObject *slim = PyUnicode_FromKindAndData(kind, out, length);
    PyMem_Free(out);
    return slim;
}

static PyMethodDef methods[] = {
    {"slim", py_slim, METH_VARARGS,
     "slim(html, names, tags) -> the markup without the attributes not in names of start tags not in tags "
     "(both lower-case) "
     "and without the text of scripts, styles and comments, line breaks kept."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_markup", NULL, -1, methods};

PyMODINIT_FUNC PyInit__markup(void) { return PyModule_Create(&module); }
