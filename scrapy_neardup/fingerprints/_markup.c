/* A page's markup made lighter for lxml's parser, with the same tree where extraction looks.
 *
 * libxml2 spends about half of its HTML parse on attributes, and extraction reads only a few
 * (markup.py names them). This scan follows libxml2's HTML tokenizer (2.14 and later, HTML5
 * tokenization) through the markup: start tags, end tags, comments, doctypes, and the raw
 * text of <script>, <style>, <title>, <textarea>, <xmp>, <iframe>, <noembed>, <noframes> and
 * <plaintext> (the escapes of <script> too), and gives the markup back with
 *   - the attributes not named left out of start tags (a space, or the line breaks they held,
 *     in their place), but from the tags named, which keep all theirs,
 *   - the text of <script> and <style> and of comments left out but for its line breaks,
 *   - the content of the elements named (those parse_page takes out of the tree with all they
 *     hold) and of hidden ones (a hidden attribute, a display: none or visibility: hidden
 *     style) left out but for its line breaks, their tags kept, where libxml2's tree builder
 *     would end them at their own end tag (content_end follows its rules for that: the start
 *     tags that close an element, the end tags' priorities, the elements without content);
 *     once the reads that found no such end have read as much as the page, no more are made,
 *     so markup made to waste them costs at most one read more.
 * Everything else is copied as it is. Line breaks are kept everywhere, so an element starts
 * on the same source line as before. markup.py's twin is the identity: the parse of the
 * lighter markup differs from the parse of the page only in what was left out, which
 * tests/fingerprints/test_markup.py checks on pages of every shape (the trees compared once
 * parse_page's drop_unseen has taken out what a reader never sees).
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
    unsigned int firsts; /* a bit for each first character of the names, by its value mod 32 */
} Kept;

#define FIRST_BIT(name) (1u << ((unsigned char)(name)[0] & 31))

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
    if (!(list->firsts & FIRST_BIT(name))) return 0; /* most tags: one test */
    for (int k = 0; k < list->count; k++)
        if (list->names[k][0] == name[0] && !strcmp(name, list->names[k])) return 1;
    return 0;
}

/* What libxml2's HTML tree builder (2.14) does with a tag, for content_end: */

/* elements without content (a start tag opens and closes them), */
static Kept VOID = { /* its firsts are set when the module is made */
    {"area", "base", "basefont", "br", "col", "frame", "hr", "img", "input", "isindex", "link", "meta", "param"},
    {4, 4, 8, 2, 3, 5, 2, 3, 5, 7, 4, 4, 5},
    13,
    0,
};

/* tags that change the document around the element (a second <body> gives the page's <body> its
 * attributes, <meta> may name an encoding, frames replace the body), */
static int structural(const char *name) {
    static const char *const names[] = {"body", "frame", "frameset", "head", "html", "meta", "noframes", NULL};
    for (int k = 0; names[k] && names[k][0] <= name[0]; k++) /* in order: only those with its first letter */
        if (!strcmp(name, names[k])) return 1;
    return 0;
}

/* the start tags that close the element open before them (the element, then the tags), */
static const char *const CLOSED_BY[][2] = {
    {"a", " a fieldset table td th "},
    {"address", " dd dl dt form li ul "},
    {"b", " center p td th "},
    {"big", " p "},
    {"caption", " col colgroup tbody tfoot thead tr "},
    {"col", " col colgroup tbody tfoot thead tr "},
    {"colgroup", " colgroup tbody tfoot thead tr "},
    {"dd", " dt "},
    {"dir", " dd dl dt form ul "},
    {"dl", " form li "},
    {"dt", " dd dl "},
    {"font", " center td th "},
    {"form", " form "},
    {"h1", " fieldset form li p table "},
    {"h2", " fieldset form li p table "},
    {"h3", " fieldset form li p table "},
    {"h4", " fieldset form li p table "},
    {"h5", " fieldset form li p table "},
    {"h6", " fieldset form li p table "},
    {"hr", " form "},
    {"i", " center p td th "},
    {"legend", " fieldset "},
    {"li", " li "},
    {"link", " body frameset "},
    {"listing", " dd dl dt fieldset form li table ul "},
    {"menu", " dd dl dt form ul "},
    {"ol", " form "},
    {"option", " optgroup option "},
    {"p", " address blockquote body caption center col colgroup dd dir div dl dt fieldset form frameset h1 h2 h3 "
          "h4 h5 h6 head hr li listing menu ol p pre table tbody td tfoot th title tr ul xmp "},
    {"pre", " dd dl dt fieldset form li table ul "},
    {"s", " p "},
    {"script", " noscript "},
    {"small", " p "},
    {"span", " td th "},
    {"strike", " p "},
    {"style", " body frameset "},
    {"tbody", " tbody tfoot "},
    {"td", " tbody td tfoot th tr "},
    {"tfoot", " tbody "},
    {"th", " tbody td tfoot th tr "},
    {"thead", " tbody tfoot "},
    {"title", " body frameset "},
    {"tr", " tbody tfoot tr "},
    {"tt", " p "},
    {"u", " p td th "},
    {"ul", " address form menu pre "},
    {"xmp", " dd dl dt fieldset form li table ul "},
};

static int closes(const char *open, const char *name) {
    for (size_t k = 0; k < sizeof(CLOSED_BY) / sizeof(CLOSED_BY[0]) && CLOSED_BY[k][0][0] <= open[0]; k++) {
        if (CLOSED_BY[k][0][0] != open[0] || strcmp(open, CLOSED_BY[k][0])) continue; /* in order */
        size_t length = strlen(name);
        for (const char *at = strstr(CLOSED_BY[k][1], name); at; at = strstr(at + 1, name))
            if (at[-1] == ' ' && at[length] == ' ') return 1;
        return 0;
    }
    return 0;
}

/* and how far an end tag closes: not past an element of a higher priority. */
static int end_priority(const char *name) {
    static const struct {
        const char *name;
        int priority;
    } priorities[] = {{"div", 150},   {"td", 160},    {"th", 160},   {"tr", 170},   {"thead", 180}, {"tbody", 180},
                      {"tfoot", 180}, {"table", 190}, {"head", 200}, {"body", 200}, {"html", 220}};
    for (size_t k = 0; k < sizeof(priorities) / sizeof(priorities[0]); k++)
        if (!strcmp(name, priorities[k].name)) return priorities[k].priority;
    return 100;
}

#define MAX_OPEN 32 /* elements open inside an emptied one: deeper, it keeps its content */

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
    /* The index after the ASCII word (lower case) at s[p], letters of either case, or -1. */  \
    static Py_ssize_t word_##T(const T *s, Py_ssize_t to, Py_ssize_t p, const char *word) {    \
        for (; *word; word++, p++)                                                             \
            if (p >= to || s[p] > 127 || LOWER(s[p]) != (unsigned char)*word) return -1;       \
        return p;                                                                              \
    }                                                                                          \
                                                                                               \
    /* Does the style attribute's value (after its name, s[from..to)) hide the element: a      \
     * declaration "display: none" or "visibility: hidden" (!important or not)? ASCII white    \
     * space and letters only, and no character references: a value that reads otherwise is    \
     * left to readable.py's rule on the tree, which finds at least what this finds. */        \
    static int style_hides_##T(const T *s, Py_ssize_t from, Py_ssize_t to) {                   \
        Py_ssize_t p = from;                                                                   \
        while (p < to && IS_WS(s[p])) p++;                                                     \
        if (p >= to || s[p] != '=') return 0;                                                  \
        p++;                                                                                   \
        while (p < to && IS_WS(s[p])) p++;                                                     \
        if (p < to && (s[p] == '"' || s[p] == '\'')) {                                         \
            p++;                                                                               \
            to--; /* the closing quote (a value cut by the page's end has none: then no rule) */ \
            if (to < p || s[to] != s[p - 1]) return 0;                                         \
        }                                                                                      \
        for (Py_ssize_t k = p; k < to; k++)                                                    \
            if (s[k] == '&') return 0;                                                         \
        static const char *const rules[][2] = {{"display", "none"}, {"visibility", "hidden"}}; \
        for (Py_ssize_t start = p; start <= to; start++) {                                     \
            if (start > p && s[start - 1] != ';') continue;                                    \
            for (int r = 0; r < 2; r++) {                                                      \
                Py_ssize_t q = start;                                                          \
                while (q < to && IS_WS(s[q])) q++;                                             \
                q = word_##T(s, to, q, rules[r][0]);                                           \
                while (q >= 0 && q < to && IS_WS(s[q])) q++;                                   \
                if (q < 0 || q >= to || s[q] != ':') continue;                                 \
                q++;                                                                           \
                while (q < to && IS_WS(s[q])) q++;                                             \
                q = word_##T(s, to, q, rules[r][1]);                                           \
                while (q >= 0 && q < to && IS_WS(s[q])) q++;                                   \
                if (q >= 0 && q < to && s[q] == '!') {                                         \
                    q = word_##T(s, to, q + 1, "important");                                   \
                    while (q >= 0 && q < to && IS_WS(s[q])) q++;                               \
                }                                                                              \
                if (q >= 0 && (q == to || s[q] == ';')) return 1;                              \
            }                                                                                  \
        }                                                                                      \
        return 0;                                                                              \
    }                                                                                          \
                                                                                               \
    /* The end of a tag's attributes from p: the index of its '>' or of "/>", or n. */        \
    static Py_ssize_t tag_rest_##T(const T *s, Py_ssize_t n, Py_ssize_t p, T *out, Py_ssize_t *o, \
                                   const Kept *kept, int *self_closing, int *hides) {          \
        *self_closing = 0;                                                                     \
        int styled = 0; /* the first style attribute counts (the parser drops a repeated one) */ \
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
            if (hides) {                                                                       \
                if (name_is_##T(s + p, name_end - p, "hidden")) *hides = 1;                    \
                if (!styled && name_is_##T(s + p, name_end - p, "style")) {                    \
                    styled = 1;                                                                \
                    if (style_hides_##T(s, name_end, end)) *hides = 1;                         \
                }                                                                              \
            }                                                                                  \
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
    /* Where the comment that opens at i ("<!--") ends, and in close where its text ends (-1   \
     * for "<!-->", "<!--->" and a comment that the page ends in). */                          \
    static Py_ssize_t comment_end_##T(const T *s, Py_ssize_t n, Py_ssize_t i, Py_ssize_t *close) { \
        Py_ssize_t k = i + 4;                                                                  \
        *close = -1;                                                                           \
        if (k < n && s[k] == '>') return k + 1;                                                \
        if (k + 1 < n && s[k] == '-' && s[k + 1] == '>') return k + 2;                         \
        for (; (k = find_##T(s, n, k, '-', '-')) + 2 < n; k++) {                               \
            if (s[k + 1] != '-') continue;                                                     \
            if (s[k + 2] == '>') {                                                             \
                *close = k;                                                                    \
                return k + 3;                                                                  \
            }                                                                                  \
            if (k + 3 < n && s[k + 2] == '!' && s[k + 3] == '>') {                             \
                *close = k;                                                                    \
                return k + 4;                                                                  \
            }                                                                                  \
        }                                                                                      \
        return n;                                                                              \
    }                                                                                          \
                                                                                               \
    /* The tag name from p (its first character a letter) in lower case in name ("" for a name \
     * too long or not ASCII); returns where it ends. */                                       \
    static Py_ssize_t tag_name_##T(const T *s, Py_ssize_t n, Py_ssize_t p, char *name) {       \
        Py_ssize_t start = p++;                                                                \
        while (p < n && !(s[p] == '/' || s[p] == '>' || IS_WS(s[p]))) p++;                     \
        name[0] = 0;                                                                           \
        if (p - start >= MAX_NAME) return p;                                                   \
        for (Py_ssize_t k = start; k < p; k++) {                                               \
            if (s[k] > 127 || s[k] == 0) {                                                     \
                name[0] = 0;                                                                   \
                return p;                                                                      \
            }                                                                                  \
            name[k - start] = (char)LOWER(s[k]);                                               \
        }                                                                                      \
        name[p - start] = 0;                                                                   \
        return p;                                                                              \
    }                                                                                          \
                                                                                               \
    /* Where the content of the element `outer` (lower case) that starts at i ends: the '<' of \
     * the end tag that closes it, as libxml2's tree builder reads the markup between, or -1   \
     * where the builder could close it elsewhere or close an element around it (an end tag    \
     * of no element opened inside, a start tag that closes it, html/head/body/meta, nesting   \
     * deeper than MAX_OPEN, the page's end); reached says how far it read. */                                               \
    static Py_ssize_t content_end_##T(const T *s, Py_ssize_t n, Py_ssize_t i, const char *outer, \
                                      Py_ssize_t *reached) {                                   \
        char open[MAX_OPEN][MAX_NAME];                                                         \
        int depth = 1;                                                                         \
        strcpy(open[0], outer);                                                                \
        for (;;) {                                                                             \
            i = *reached = find_##T(s, n, i, '<', '<');                                        \
            if (i + 2 >= n) return -1;                                                         \
            T next = s[i + 1];                                                                 \
            int closing = next == '/' && IS_LETTER(s[i + 2]);                                  \
            if (!closing && !IS_LETTER(next)) {                                                \
                Py_ssize_t end = i + 1, close; /* a '<' of text */                             \
                if (next == '!' && s[i + 2] == '-' && i + 3 < n && s[i + 3] == '-') {          \
                    end = comment_end_##T(s, n, i, &close);                                    \
                } else if (next == '/' && s[i + 2] == '>') {                                   \
                    end = i + 3;                                                               \
                } else if (next == '!' || next == '?' || next == '/') { /* doctype, bogus comment */ \
                    end = find_##T(s, n, i + 2, '>', '>') + 1;                                 \
                }                                                                              \
                if (end >= n) return -1;                                                       \
                i = end;                                                                       \
                continue;                                                                      \
            }                                                                                  \
            char name[MAX_NAME];                                                               \
            int self_closing;                                                                  \
            Py_ssize_t p = tag_name_##T(s, n, i + 1 + closing, name);                          \
            p = tag_rest_##T(s, n, p, NULL, NULL, NULL, &self_closing, NULL);                  \
            if (p >= n || !name[0]) return -1;                                                 \
            Py_ssize_t end = p + (self_closing ? 2 : 1);                                       \
            if (closing) {                                                                     \
                int k = depth - 1;                                                             \
                while (k >= 0 && strcmp(open[k], name)) k--;                                   \
                if (k < 0) return -1; /* the builder looks among the elements around */        \
                for (int j = depth - 1; j > k; j--)                                            \
                    if (end_priority(open[j]) > end_priority(name)) return -1; /* the builder ignores it */ \
                if (k == 0) return i;                                                          \
                depth = k;                                                                     \
                i = end;                                                                       \
                continue;                                                                      \
            }                                                                                  \
            if (structural(name)) return -1;                                                   \
            while (closes(open[depth - 1], name)) {                                            \
                if (depth == 1) return -1;                                                     \
                depth--;                                                                       \
            }                                                                                  \
            i = end;                                                                           \
            if (self_closing || listed(name, &VOID)) continue;                                 \
            if (depth == MAX_OPEN) return -1;                                                  \
            strcpy(open[depth++], name);                                                       \
            int text, raw = raw_kind(name, &text);                                             \
            if (raw == RAW_PLAIN) return -1;                                                   \
            if (raw != RAW_NONE) i = raw_end_##T(s, n, i, name, raw == RAW_SCRIPT);            \
        }                                                                                      \
    }                                                                                          \
    static Py_ssize_t slim_##T(const T *s, Py_ssize_t n, T *out, const Kept *kept, const Kept *whole, \
                              const Kept *emptied, int hidden) {                                                             \
        Py_ssize_t i = 0, o = 0, wasted = 0; /* read by content_end where it kept the content */ \
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
                    Py_ssize_t close;                                                          \
                    end = comment_end_##T(s, n, i, &close);                                    \
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
                    p = tag_rest_##T(s, n, p, NULL, NULL, kept, &self_closing, NULL);            \
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
                int hides = 0, *hiding = hidden ? &hides : NULL;                               \
                p = tag_rest_##T(s, n, p, out, &o, listed(name, whole) ? NULL : kept, &self_closing, hiding); \
                if (p >= n) break; /* libxml2 drops a tag the page ends in */                  \
                Py_ssize_t close = p + (self_closing ? 2 : 1);                                 \
                memcpy(out + o, s + p, (close - p) * sizeof(T));                               \
                o += close - p;                                                                \
                i = close;                                                                     \
                if (self_closing) continue;                                                    \
                int text = TEXT_KEEP, raw = raw_kind(name, &text);                             \
                char exact[MAX_NAME] = {0}; /* the name, where it is ASCII */                  \
                if (hides || listed(name, emptied)) tag_name_##T(s, n, lt + 1, exact);         \
                if (exact[0] && raw != RAW_PLAIN && !structural(exact) && !listed(exact, &VOID) \
                    && (raw != RAW_NONE || wasted <= n)) { /* markup made to waste it: read once more at most */ \
                    if (raw == RAW_NONE) { /* its content goes, where the builder ends it at its end tag */ \
                        Py_ssize_t reached, stop = content_end_##T(s, n, i, exact, &reached);  \
                        if (stop >= 0) {                                                       \
                            o = lines_##T(s, i, stop, out, o, 0);                              \
                            i = stop;                                                          \
                        } else {                                                               \
                            wasted += reached - i;                                             \
                        }                                                                      \
                        continue;                                                              \
                    }                                                                          \
                    text = TEXT_LINES;                                                         \
                }                                                                              \
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
    kept->firsts = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t size;
        const char *name = PyUnicode_AsUTF8AndSize(PySequence_Fast_GET_ITEM(fast, k), &size);
        if (!name || size == 0 || size >= MAX_NAME) {
            Py_DECREF(fast);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "an attribute name is empty or too long");
            return -1;
        }
        for (Py_ssize_t c = 0; c <= size; c++) kept->names[kept->count][c] = (char)LOWER(name[c]);
        kept->firsts |= FIRST_BIT(kept->names[kept->count]);
        kept->lengths[kept->count++] = size;
    }
    Py_DECREF(fast);
    return 0;
}

static PyObject *py_slim(PyObject *self, PyObject *args) {
    PyObject *html, *names, *tags, *emptied_tags;
    int hidden;
    if (!PyArg_ParseTuple(args, "UOOOp", &html, &names, &tags, &emptied_tags, &hidden)) return NULL;
    Kept kept, whole, emptied;
    if (read_kept(names, &kept) < 0 || read_kept(tags, &whole) < 0 || read_kept(emptied_tags, &emptied) < 0) return NULL;
    int kind = PyUnicode_KIND(html);
    Py_ssize_t n = PyUnicode_GET_LENGTH(html);
    void *out = PyMem_Malloc((n ? n : 1) * kind);
    if (!out) return PyErr_NoMemory();
    Py_ssize_t length;
    const void *data = PyUnicode_DATA(html);
    if (kind == PyUnicode_1BYTE_KIND)
        length = slim_Py_UCS1(data, n, out, &kept, &whole, &emptied, hidden);
    else if (kind == PyUnicode_2BYTE_KIND)
        length = slim_Py_UCS2(data, n, out, &kept, &whole, &emptied, hidden);
    else
        length = slim_Py_UCS4(data, n, out, &kept, &whole, &emptied, hidden);
    PyObject *slim = PyUnicode_FromKindAndData(kind, out, length);
    PyMem_Free(out);
    return slim;
}

static PyMethodDef methods[] = {
    {"slim", py_slim, METH_VARARGS,
     "slim(html, names, tags, emptied, hidden) -> the markup without the attributes not in names of start "
     "tags not in tags (both lower-case), without the text of scripts, styles and comments, and without the "
     "content of the elements in emptied and (where hidden is true) of hidden ones, line breaks kept."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_markup", NULL, -1, methods};

PyMODINIT_FUNC PyInit__markup(void) {
    for (int k = 0; k < VOID.count; k++) VOID.firsts |= FIRST_BIT(VOID.names[k]);
    return PyModule_Create(&module);
}
