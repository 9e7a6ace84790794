/* readability's walks over a parsed page, in C: the libxml2 tree under lxml's elements.
 *
 * readable.py runs readability-lxml's rules in Python when this module is not built; tests
 * compare the two on every kind of page. Nothing is decided here that readable.py does not
 * define: which elements are hidden or open with a label, and readability's
 * unlikely candidates, its <div>-to-paragraph rules and its paragraph scores (score), which
 * readable.py's Python path computes step by step on a changed tree. Here the tree is read,
 * never changed: the steps that change it in Python (taking out unlikely candidates, turning
 * <div>s into paragraphs) are followed as if done, and readable.py makes the few changes
 * that later steps need, on the elements this module names.
 *
 * More reads serve the steps around readability: the short paragraphs that readable.py
 * joins (short_paragraphs), the article's text with its line breaks (flat_text, with the
 * names of extract.py's skipped and block elements), and the <div>s of the article's region
 * sorted by the blocks below them for its <div>-to-paragraph rules (divs_by_blocks,
 * child_divs_by_blocks), each with a Python twin.
 *
 * The patterns (readability's class and id words, the label hints) come from readable.py
 * through configure(), so the rules live in one place.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <libxml/tree.h>
#include <string.h>

/* lxml's element object: struct LxmlElement of lxml's public C API (lxml/etree.h). */
typedef struct {
    PyObject_HEAD
    void *doc;
    xmlNode *c_node;
    PyObject *tag;
} LxmlElement;

typedef PyObject *(*ElementFactory)(void *doc, xmlNode *c_node);
static ElementFactory element_factory = NULL; /* lxml's elementFactory: the proxy of a node */
static PyTypeObject *element_type = NULL;     /* lxml.etree._Element */

/* ------------------------------------------------------------------ patterns */

typedef struct {
    char **words; /* lower-case ASCII words; a value matches when it holds one of them */
    Py_ssize_t count;
    size_t *sizes;         /* their lengths (set_words), or NULL: measured at each search */
    unsigned char *starts; /* 256 flags: a word starts with this byte (set_words), or NULL */
} Words;

static Words unlikely_words, maybe_words, positive_words, negative_words, hint_words;
static Py_UCS4 *hint_chars = NULL;
static Py_ssize_t hint_char_count = 0;
static unsigned char hint_plane[0x10000 / 8]; /* the hint characters below U+10000, one bit each */

static void free_words(Words *w) {
    for (Py_ssize_t i = 0; i < w->count; i++) PyMem_Free(w->words[i]);
    PyMem_Free(w->words);
    PyMem_Free(w->sizes);
    PyMem_Free(w->starts);
    w->words = NULL;
    w->sizes = NULL;
    w->starts = NULL;
    w->count = 0;
}

static int set_words(Words *w, PyObject *seq) {
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of str");
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    char **words = PyMem_Calloc(n ? n : 1, sizeof(char *));
    if (!words) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t size;
        const char *s = PyUnicode_AsUTF8AndSize(PySequence_Fast_GET_ITEM(fast, i), &size);
        if (!s || !(words[i] = PyMem_Malloc(size + 1))) {
            for (Py_ssize_t j = 0; j < i; j++) PyMem_Free(words[j]);
            PyMem_Free(words);
            Py_DECREF(fast);
            if (s) PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t k = 0; k < size; k++) words[i][k] = (char)((s[k] >= 'A' && s[k] <= 'Z') ? s[k] + 32 : s[k]);
        words[i][size] = 0;
    }
    Py_DECREF(fast);
    size_t *sizes = PyMem_Calloc(n ? n : 1, sizeof(size_t));
    unsigned char *starts = PyMem_Calloc(256, 1);
    if (!sizes || !starts) {
        for (Py_ssize_t j = 0; j < n; j++) PyMem_Free(words[j]);
        PyMem_Free(words);
        PyMem_Free(sizes);
        PyMem_Free(starts);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        sizes[i] = strlen(words[i]);
        if (sizes[i]) starts[(unsigned char)words[i][0]] = 1;
    }
    free_words(w);
    w->words = words;
    w->count = n;
    w->sizes = sizes;
    w->starts = starts;
    return 0;
}

/* Does `text` (`size` bytes) hold one of the words, ASCII case ignored? Where the words
 * were set by set_words, each place of the text is tried only with the words starting with
 * its byte (a class is read once, not once a word). */
static int holds_word(const Words *w, const unsigned char *text, size_t size) {
    if (w->starts) {
        for (size_t start = 0; start < size; start++) {
            unsigned char first = text[start];
            if (first >= 'A' && first <= 'Z') first += 32;
            if (!w->starts[first]) continue;
            for (Py_ssize_t i = 0; i < w->count; i++) {
                const char *word = w->words[i];
                size_t n = w->sizes[i];
                if (!n || (unsigned char)word[0] != first || n > size - start) continue;
                size_t k = 1;
                while (k < n) {
                    unsigned char c = text[start + k];
                    if (c >= 'A' && c <= 'Z') c += 32;
                    if (c != (unsigned char)word[k]) break;
                    k++;
                }
                if (k == n) return 1;
            }
        }
        return 0;
    }
    for (Py_ssize_t i = 0; i < w->count; i++) {
        const char *word = w->words[i];
        size_t n = strlen(word);
        if (!n || n > size) continue;
        for (size_t start = 0; start + n <= size; start++) {
            size_t k = 0;
            while (k < n) {
                unsigned char c = text[start + k];
                if (c >= 'A' && c <= 'Z') c += 32;
                if (c != (unsigned char)word[k]) break;
                k++;
            }
            if (k == n) return 1;
        }
    }
    return 0;
}

static PyObject *py_configure(PyObject *self, PyObject *args) {
    PyObject *unlikely, *maybe, *positive, *negative, *chars, *words;
    if (!PyArg_ParseTuple(args, "OOOOUO", &unlikely, &maybe, &positive, &negative, &chars, &words)) return NULL;
    if (set_words(&unlikely_words, unlikely) < 0 || set_words(&maybe_words, maybe) < 0 ||
        set_words(&positive_words, positive) < 0 || set_words(&negative_words, negative) < 0 ||
        set_words(&hint_words, words) < 0)
        return NULL;
    Py_UCS4 *copy = PyUnicode_AsUCS4Copy(chars);
    if (!copy) return NULL;
    PyMem_Free(hint_chars);
    hint_chars = copy;
    hint_char_count = PyUnicode_GET_LENGTH(chars);
    memset(hint_plane, 0, sizeof(hint_plane));
    for (Py_ssize_t i = 0; i < hint_char_count; i++)
        if (copy[i] < 0x10000) hint_plane[copy[i] >> 3] |= (unsigned char)(1u << (copy[i] & 7));
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ text */

/* What Python's str.split() and str.strip() take for white space. */
static inline int is_space(Py_UCS4 c) {
    if (c < 128) return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
    return c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
           c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

static inline int is_cjk(Py_UCS4 c) { return (c >= 0x3400 && c <= 0x9fff) || (c >= 0xf900 && c <= 0xfaff); }

/* The measures of a piece of text that readability's rules use, so that the measures of a
 * concatenation follow from those of its parts. */
typedef struct {
    Py_ssize_t chars;  /* code points */
    Py_ssize_t solid;  /* code points that are not white space */
    Py_ssize_t gaps;   /* runs of white space between solid code points */
    Py_ssize_t lead;   /* white space before the first solid code point (all of it, if none) */
    Py_ssize_t trail;  /* white space after the last solid code point (all of it, if none) */
    Py_ssize_t cjk;    /* CJK characters (readability's length counts them twice here) */
    Py_ssize_t pauses; /* ',' and '，' */
} Span;

static void span_add(Span *a, const Span *b) {
    if (!b->chars) return;
    if (!a->chars) {
        *a = *b;
        return;
    }
    if (a->solid && b->solid && (a->trail || b->lead)) a->gaps++;
    a->gaps += b->gaps;
    Py_ssize_t lead = a->solid ? a->lead : a->chars + b->lead;
    Py_ssize_t trail = b->solid ? b->trail : a->trail + b->chars;
    a->lead = lead;
    a->trail = trail;
    a->chars += b->chars;
    a->solid += b->solid;
    a->cjk += b->cjk;
    a->pauses += b->pauses;
}

static inline Py_UCS4 next_code_point(const unsigned char **p) {
    const unsigned char *s = *p;
    Py_UCS4 c = s[0];
    if (c < 0x80) {
        *p = s + 1;
        return c;
    }
    if (c < 0xe0 && s[1]) {
        *p = s + 2;
        return ((c & 0x1f) << 6) | (s[1] & 0x3f);
    }
    if (c < 0xf0 && s[1] && s[2]) {
        *p = s + 3;
        return ((c & 0x0f) << 12) | ((s[1] & 0x3f) << 6) | (s[2] & 0x3f);
    }
    if (s[1] && s[2] && s[3]) {
        *p = s + 4;
        return ((c & 0x07) << 18) | ((s[1] & 0x3f) << 12) | ((s[2] & 0x3f) << 6) | (s[3] & 0x3f);
    }
    *p = s + 1; /* never in libxml2's text, which is UTF-8 */
    return 0xfffd;
}

static Span measure(const xmlChar *text) {
    Span span = {0};
    if (!text) return span;
    const unsigned char *p = text;
    int in_gap = 0;
    while (*p) {
        Py_UCS4 c = next_code_point(&p);
        span.chars++;
        if (is_space(c)) {
            if (!span.solid)
                span.lead++;
            else {
                span.trail++;
                in_gap = 1;
            }
            continue;
        }
        if (in_gap) span.gaps++;
        in_gap = 0;
        span.trail = 0;
        span.solid++;
        if (is_cjk(c)) span.cjk++;
        if (c == ',' || c == 0xff0c) span.pauses++;
    }
    if (!span.solid) span.trail = span.lead;
    return span;
}

static inline int is_text(const xmlNode *node) {
    return node->type == XML_TEXT_NODE || node->type == XML_CDATA_SECTION_NODE;
}

/* ------------------------------------------------------------------ tags */

enum {
    T_OTHER,
    T_P, T_PRE, T_TD, T_BLOCKQUOTE, T_DIV, T_ARTICLE, T_MAIN, T_MATH, T_CODE, T_A, T_BR,
    T_HTML, T_BODY, T_ADDRESS, T_OL, T_UL, T_DL, T_DD, T_DT, T_LI, T_FORM, T_ASIDE,
    T_H, T_TH, T_HEADER, T_FOOTER, T_NAV, T_INLINE_OTHER,
};

static int tag_of(const xmlChar *name) {
    const char *n = (const char *)name;
    if (!n) return T_OTHER;
    static const struct { const char *name; int tag; } table[] = {
        {"p", T_P}, {"pre", T_PRE}, {"td", T_TD}, {"blockquote", T_BLOCKQUOTE}, {"div", T_DIV},
        {"article", T_ARTICLE}, {"main", T_MAIN}, {"math", T_MATH}, {"code", T_CODE}, {"a", T_A},
        {"br", T_BR}, {"html", T_HTML}, {"body", T_BODY}, {"address", T_ADDRESS}, {"ol", T_OL},
        {"ul", T_UL}, {"dl", T_DL}, {"dd", T_DD}, {"dt", T_DT}, {"li", T_LI}, {"form", T_FORM},
        {"aside", T_ASIDE}, {"h1", T_H}, {"h2", T_H}, {"h3", T_H}, {"h4", T_H}, {"h5", T_H},
        {"h6", T_H}, {"th", T_TH}, {"header", T_HEADER}, {"footer", T_FOOTER}, {"nav", T_NAV},
        /* readability's inline tags (besides a and code) */
        {"b", T_INLINE_OTHER}, {"cite", T_INLINE_OTHER}, {"em", T_INLINE_OTHER},
        {"font", T_INLINE_OTHER}, {"i", T_INLINE_OTHER}, {"small", T_INLINE_OTHER},
        {"span", T_INLINE_OTHER}, {"strong", T_INLINE_OTHER}, {"sub", T_INLINE_OTHER},
        {"sup", T_INLINE_OTHER}, {"u", T_INLINE_OTHER},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (n[0] == table[i].name[0] && strcmp(n, table[i].name) == 0) return table[i].tag;
    return T_OTHER;
}

static inline int is_inline(int tag) { return tag == T_A || tag == T_CODE || tag == T_INLINE_OTHER; }

/* readability looks for block elements in a <div>'s markup with the pattern
 * "<(blockquote|dl|div|img|ol|p|pre|table|ul)": any tag whose name starts so. */
static int is_block_name(const xmlChar *name) {
    static const char *starts[] = {"blockquote", "dl", "div", "img", "ol", "p", "table", "ul"};
    const char *n = (const char *)name;
    if (!n) return 0;
    for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++)
        if (strncmp(n, starts[i], strlen(starts[i])) == 0) return 1;
    return 0;
}

/* readability's score_node: the tag's part. */
static int tag_bonus(int tag) {
    switch (tag) {
    case T_DIV: case T_ARTICLE: return 5;
    case T_PRE: case T_TD: case T_BLOCKQUOTE: return 3;
    case T_ADDRESS: case T_OL: case T_UL: case T_DL: case T_DD: case T_DT: case T_LI: case T_FORM: case T_ASIDE:
        return -3;
    case T_H: case T_TH: case T_HEADER: case T_FOOTER: case T_NAV: return -5;
    default: return 0;
    }
}

/* ------------------------------------------------------------------ attributes */

/* The value of attribute `name` of an element as UTF-8 (the first text node of its value;
 * HTML attributes have one), or NULL without it. `*present` says whether it is there. */
static const xmlChar *attribute(const xmlNode *node, const char *name, int *present) {
    for (xmlAttr *attr = node->properties; attr; attr = attr->next) {
        if (attr->name && strcmp((const char *)attr->name, name) == 0) {
            if (present) *present = 1;
            if (attr->children && attr->children->type == XML_TEXT_NODE) return attr->children->content;
            return (const xmlChar *)"";
        }
    }
    if (present) *present = 0;
    return NULL;
}

static size_t length(const xmlChar *s) { return s ? strlen((const char *)s) : 0; }

/* readability's class_weight: -25 for a negative word and +25 for a positive one, in the class
 * and in the id. */
static int class_weight(const xmlNode *node) {
    int weight = 0;
    const char *names[2] = {"class", "id"};
    for (int i = 0; i < 2; i++) {
        const xmlChar *value = attribute(node, names[i], NULL);
        size_t size = length(value);
        if (!size) continue;
        if (holds_word(&negative_words, value, size)) weight -= 25;
        if (holds_word(&positive_words, value, size)) weight += 25;
    }
    return weight;
}

/* readability's unlikely-candidate test of "class id" (the words hold no space, so the
 * two values are searched apart). */
static int unlikely_names(const xmlNode *node) {
    const xmlChar *cls = attribute(node, "class", NULL), *id = attribute(node, "id", NULL);
    size_t cls_size = length(cls), id_size = length(id);
    if (cls_size + id_size + 1 < 2) return 0;
    if (!holds_word(&unlikely_words, cls, cls_size) && !holds_word(&unlikely_words, id, id_size)) return 0;
    return !holds_word(&maybe_words, cls, cls_size) && !holds_word(&maybe_words, id, id_size);
}

/* ------------------------------------------------------------------ the walk */

enum {
    F_BLOCK = 1,      /* its name starts like a block element's */
    F_PRE_CODE = 2,   /* it or an ancestor is <pre> or <code> */
    F_KEEP = 4,       /* it or a descendant is <main>, <article> or <math> */
    F_DROPPED = 8,    /* an unlikely candidate readability takes out */
    F_DEAD = 16,      /* dropped, or inside a dropped element */
    F_HOLDS = 32,     /* a block element is below it (dropped ones left out) */
    F_UNLIKELY = 64,  /* its class or id says unlikely */
};

typedef struct {
    xmlNode *node;
    int parent;  /* index of the parent element, -1 for the root */
    int end;     /* index after the last element below it */
    int tag;
    int flags;
    Span text;          /* its text content, dropped elements left out */
    Py_ssize_t linked;  /* solid code points under <a> elements below it */
    int candidate;      /* index in the candidate list, -1 */
} Node;

typedef struct {
    int owner;    /* the <div> whose loose text it is */
    int position; /* it comes just before the element of this index (document order) */
    Span text;
} Loose;

typedef struct {
    Node *nodes;
    Py_ssize_t count, size;
    Loose *loose;
    Py_ssize_t loose_count, loose_size;
    int *stack;
    Py_ssize_t stack_size;
} Walk;

static void walk_free(Walk *w) {
    PyMem_Free(w->nodes);
    PyMem_Free(w->loose);
    PyMem_Free(w->stack);
}

static int grow(void **items, Py_ssize_t *size, Py_ssize_t need, size_t item) {
    if (need <= *size) return 0;
    Py_ssize_t bigger = *size ? *size * 2 : 256;
    while (bigger < need) bigger *= 2;
    void *moved = PyMem_Realloc(*items, bigger * item);
    if (!moved) {
        PyErr_NoMemory();
        return -1;
    }
    *items = moved;
    *size = bigger;
    return 0;
}

static LxmlElement *as_element(PyObject *obj) {
    if (!PyObject_TypeCheck(obj, element_type)) {
        PyErr_SetString(PyExc_TypeError, "expected an lxml element");
        return NULL;
    }
    LxmlElement *element = (LxmlElement *)obj;
    if (!element->c_node || element->c_node->type != XML_ELEMENT_NODE) {
        PyErr_SetString(PyExc_ValueError, "expected an element node");
        return NULL;
    }
    return element;
}

static PyObject *proxy(LxmlElement *root, xmlNode *node) { return element_factory(root->doc, node); }

static int append_proxy(PyObject *list, LxmlElement *root, xmlNode *node) {
    PyObject *element = proxy(root, node);
    if (!element) return -1;
    int failed = PyList_Append(list, element);
    Py_DECREF(element);
    return failed;
}

/* The loose text of <div> `index` (one with blocks below it) as readability turns it into
 * paragraphs: its text with the run of inline children after it, each further run of
 * inline children (a <br> or another element ends a run; an inline child with a block
 * below it is another element), and each tail of a child that is not in a run. A run takes
 * the tails of its children with it. Dropped children are gone, their tails joined to the
 * text before them. */
static int wrap_loose_text(Walk *w, int index) {
    Node *div = &w->nodes[index];
    Span run = {0};
    int open = 0, run_position = 0, child_index = index + 1, in_run = 0;
    /* `in_run`: the text now read is the tail of a child taken into the open run */
#define FLUSH()                                                                                  \
    do {                                                                                        \
        if (open && run.chars) {                                                                \
            if (grow((void **)&w->loose, &w->loose_size, w->loose_count + 1, sizeof(Loose)) < 0) \
                return -1;                                                                      \
            w->loose[w->loose_count++] = (Loose){index, run_position, run};                    \
        }                                                                                       \
        open = 0;                                                                               \
        memset(&run, 0, sizeof(run));                                                           \
    } while (0)
    /* the text before the first child that stays: a paragraph when not blank */
    Span tail = {0};
    int tail_position = -1; /* where a tail paragraph goes, -1 for the div's own text */
    int before_children = 1;
    for (xmlNode *child = div->node->children; child; child = child->next) {
        if (is_text(child)) {
            Span piece = measure(child->content);
            if (in_run)
                span_add(&run, &piece);
            else
                span_add(&tail, &piece);
            continue;
        }
        if (child->type != XML_ELEMENT_NODE) continue;
        Node *c = &w->nodes[child_index];
        int c_index = child_index;
        child_index = c->end;
        if (c->flags & F_DROPPED) continue; /* gone: its tail joins the text before it */
        /* the text read since the last child that stays ends here */
        if (before_children) {
            before_children = 0;
            if (tail.solid) { /* the div's own text opens a paragraph that a run may join */
                open = 1;
                run = tail;
                run_position = c_index;
                in_run = 1;
            }
        } else if (!in_run && tail.solid) {
            if (grow((void **)&w->loose, &w->loose_size, w->loose_count + 1, sizeof(Loose)) < 0) return -1;
            w->loose[w->loose_count++] = (Loose){index, tail_position, tail};
        }
        memset(&tail, 0, sizeof(tail));
        if (c->tag == T_BR || !is_inline(c->tag) || (c->flags & F_HOLDS)) {
            FLUSH();
            in_run = 0;
            tail_position = c->end;
            continue;
        }
        if (!open) {
            open = 1;
            run_position = c_index;
        }
        span_add(&run, &c->text);
        in_run = 1;
    }
    if (before_children) {
        /* no child stays: readability would have turned this div into a paragraph */
        return 0;
    }
    if (!in_run && tail.solid) {
        if (grow((void **)&w->loose, &w->loose_size, w->loose_count + 1, sizeof(Loose)) < 0) return -1;
        w->loose[w->loose_count++] = (Loose){index, tail_position, tail};
    }
    FLUSH();
#undef FLUSH
    return 0;
}

/* Walk the elements under `root` in document order. Each element's measures are complete
 * when its last child is done; readability's unlikely candidates (with `ruthless`) are
 * left out of their parents' measures, and the loose text of each <div> with blocks below
 * it is cut into paragraphs. */
static int walk(Walk *w, xmlNode *root, int ruthless) {
    Py_ssize_t depth = 0;
    if (grow((void **)&w->nodes, &w->size, 1, sizeof(Node)) < 0) return -1;
    if (grow((void **)&w->stack, &w->stack_size, 1, sizeof(int)) < 0) return -1;
    w->nodes[0] = (Node){root, -1, 0, tag_of(root->name), 0, {0}, 0, -1};
    w->count = 1;
    w->stack[depth++] = 0;
    xmlNode *cur = root->children;
    for (;;) {
        Node *top = &w->nodes[w->stack[depth - 1]];
        if (cur == NULL) { /* the element on top of the stack is done */
            int index = w->stack[--depth];
            Node *done = &w->nodes[index];
            done->end = (int)w->count;
            if (done->tag == T_ARTICLE || done->tag == T_MAIN || done->tag == T_MATH) done->flags |= F_KEEP;
            if (ruthless && (done->flags & F_UNLIKELY) && !(done->flags & (F_PRE_CODE | F_KEEP)) &&
                done->tag != T_HTML && done->tag != T_BODY)
                done->flags |= F_DROPPED;
            if (done->tag == T_DIV && (done->flags & F_HOLDS) && !(done->flags & F_DROPPED))
                if (wrap_loose_text(w, index) < 0) return -1;
            if (depth == 0) return 0;
            Node *parent = &w->nodes[w->stack[depth - 1]];
            done = &w->nodes[index];
            parent->flags |= done->flags & F_KEEP;
            if (!(done->flags & F_DROPPED)) {
                span_add(&parent->text, &done->text);
                parent->linked += done->tag == T_A ? done->text.solid : done->linked;
                if ((done->flags & (F_BLOCK | F_HOLDS))) parent->flags |= F_HOLDS;
            }
            cur = done->node->next;
            continue;
        }
        if (is_text(cur)) {
            Span piece = measure(cur->content);
            span_add(&top->text, &piece);
            cur = cur->next;
            continue;
        }
        if (cur->type != XML_ELEMENT_NODE) {
            cur = cur->next;
            continue;
        }
        if (grow((void **)&w->nodes, &w->size, w->count + 1, sizeof(Node)) < 0) return -1;
        if (grow((void **)&w->stack, &w->stack_size, depth + 1, sizeof(int)) < 0) return -1;
        top = &w->nodes[w->stack[depth - 1]];
        int tag = tag_of(cur->name);
        int flags = (is_block_name(cur->name) ? F_BLOCK : 0) |
                    ((top->flags & F_PRE_CODE) || tag == T_PRE || tag == T_CODE ? F_PRE_CODE : 0) |
                    (ruthless && cur->properties && unlikely_names(cur) ? F_UNLIKELY : 0);
        w->nodes[w->count] = (Node){cur, w->stack[depth - 1], 0, tag, flags, {0}, 0, -1};
        w->stack[depth++] = (int)w->count++;
        cur = cur->children;
    }
}

/* ------------------------------------------------------------------ score */

typedef struct {
    int node;
    double score;
} Candidate;

static int add_score(Walk *w, Candidate **cands, Py_ssize_t *count, Py_ssize_t *size, int index, double score) {
    Node *node = &w->nodes[index];
    if (node->candidate < 0) {
        if (grow((void **)cands, size, *count + 1, sizeof(Candidate)) < 0) return -1;
        node->candidate = (int)*count;
        (*cands)[(*count)++] = (Candidate){index, (double)(class_weight(node->node) + tag_bonus(node->tag))};
    }
    (*cands)[node->candidate].score += score;
    return 0;
}

/* One paragraph's part in readability's scores: its text with white space runs as one
 * character and CJK characters counted twice; none below `min_length`. */
static int score_paragraph(Walk *w, Candidate **cands, Py_ssize_t *count, Py_ssize_t *size, int parent,
                           const Span *text, Py_ssize_t min_length) {
    if (parent < 0) return 0;
    Py_ssize_t weighted = text->solid + text->gaps + text->cjk;
    if (weighted < min_length) return 0;
    double share = (double)weighted / 100;
    double score = (double)(1 + text->pauses + 1) + (share < 3 ? share : 3);
    if (add_score(w, cands, count, size, parent, score * 1.0) < 0) return -1;
    int grandparent = w->nodes[parent].parent;
    if (grandparent >= 0 && add_score(w, cands, count, size, grandparent, score * 0.5) < 0) return -1;
    return 0;
}

static int loose_order(const void *a, const void *b) {
    const Loose *x = a, *y = b;
    return x->position < y->position ? -1 : x->position > y->position;
}

static PyObject *py_score(PyObject *self, PyObject *args) {
    PyObject *root_obj;
    int ruthless;
    Py_ssize_t min_length;
    if (!PyArg_ParseTuple(args, "Opn", &root_obj, &ruthless, &min_length)) return NULL;
    LxmlElement *root = as_element(root_obj);
    if (!root) return NULL;
    Walk w = {0};
    Candidate *cands = NULL;
    Py_ssize_t cand_count = 0, cand_size = 0;
    PyObject *dropped = NULL, *scored = NULL, *result = NULL;
    if (walk(&w, root->c_node, ruthless) < 0) goto done;
    /* loose paragraphs were made as their <div>s were done; put them in document order
     * (stable: the ones at one place were made in document order) */
    for (Py_ssize_t i = 0; i < w.loose_count; i++)
        if (w.loose[i].position < 0) w.loose[i].position = w.nodes[w.loose[i].owner].end;
    /* qsort is not stable: order by (position, made) with the index as the tie-break */
    {
        typedef struct { Loose loose; Py_ssize_t made; } Made;
        Made *made = PyMem_Malloc((w.loose_count ? w.loose_count : 1) * sizeof(Made));
        if (!made) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t i = 0; i < w.loose_count; i++) made[i] = (Made){w.loose[i], i};
        /* insertion sort: few loose paragraphs, nearly in order already */
        for (Py_ssize_t i = 1; i < w.loose_count; i++) {
            Made item = made[i];
            Py_ssize_t j = i;
            while (j > 0 && loose_order(&made[j - 1].loose, &item.loose) > 0) {
                made[j] = made[j - 1];
                j--;
            }
            made[j] = item;
        }
        for (Py_ssize_t i = 0; i < w.loose_count; i++) w.loose[i] = made[i].loose;
        PyMem_Free(made);
    }
    if (!(dropped = PyList_New(0))) goto done;
    Py_ssize_t next_loose = 0;
    for (Py_ssize_t i = 0; i <= w.count; i++) {
        while (next_loose < w.loose_count && w.loose[next_loose].position <= i) {
            Loose *loose = &w.loose[next_loose++];
            if (!(w.nodes[loose->owner].flags & F_DEAD) &&
                score_paragraph(&w, &cands, &cand_count, &cand_size, loose->owner, &loose->text, min_length) < 0)
                goto done;
        }
        if (i == w.count) break;
        Node *node = &w.nodes[i];
        if (node->parent >= 0 && (w.nodes[node->parent].flags & F_DEAD)) node->flags |= F_DEAD;
        if (node->flags & F_DROPPED && !(node->flags & F_DEAD)) {
            node->flags |= F_DEAD;
            if (append_proxy(dropped, root, node->node) < 0) goto done;
        }
        if (node->flags & F_DEAD) continue;
        int paragraph = node->tag == T_P || node->tag == T_PRE || node->tag == T_TD || node->tag == T_BLOCKQUOTE ||
                        (node->tag == T_DIV && !(node->flags & F_HOLDS));
        if (paragraph && score_paragraph(&w, &cands, &cand_count, &cand_size, node->parent, &node->text, min_length) < 0)
            goto done;
    }
    if (!(scored = PyList_New(cand_count))) goto done;
    for (Py_ssize_t i = 0; i < cand_count; i++) {
        Node *node = &w.nodes[cands[i].node];
        Py_ssize_t solid = node->text.solid > 1 ? node->text.solid : 1;
        double score = cands[i].score * (1 - (double)node->linked / (double)solid);
        PyObject *element = proxy(root, node->node);
        if (!element) goto done;
        PyObject *pair = Py_BuildValue("(Nd)", element, score);
        if (!pair) goto done;
        PyList_SET_ITEM(scored, i, pair);
    }
    result = PyTuple_Pack(2, dropped, scored);
done:
    Py_XDECREF(dropped);
    Py_XDECREF(scored);
    PyMem_Free(cands);
    walk_free(&w);
    return result;
}

/* ------------------------------------------------------------------ hidden */

/* The style's value mentions none or hidden (readable.py judges it with the full rule). */
static int hiding_style(const xmlNode *node) {
    const xmlChar *style = attribute(node, "style", NULL);
    static const char *const mentions[] = {"none", "hidden"};
    static Words words = {(char **)mentions, 2, NULL, NULL};
    return style && holds_word(&words, style, length(style));
}

/* The next node after `cur` in document order under `top`, its descendants left out. */
static xmlNode *after(xmlNode *cur, const xmlNode *top) {
    while (cur != top && !cur->next) cur = cur->parent;
    return cur == top ? NULL : cur->next;
}

/* The next node after `cur` in document order under `top`. */
static xmlNode *next_node(xmlNode *cur, const xmlNode *top) {
    if (cur->type == XML_ELEMENT_NODE && cur->children) return cur->children;
    return after(cur, top);
}

static PyObject *py_hidden(PyObject *self, PyObject *root_obj) {
    LxmlElement *root = as_element(root_obj);
    if (!root) return NULL;
    PyObject *hidden = PyList_New(0), *styled = PyList_New(0), *result = NULL;
    if (!hidden || !styled) goto done;
    xmlNode *top = root->c_node, *cur = top;
    while (cur) {
        if (cur->type == XML_ELEMENT_NODE && cur->properties) {
            int present;
            attribute(cur, "hidden", &present);
            if (present) { /* its descendants go with it */
                if (append_proxy(hidden, root, cur) < 0) goto done;
                cur = cur == top ? NULL : after(cur, top);
                continue;
            }
            if (hiding_style(cur) && append_proxy(styled, root, cur) < 0) goto done;
        }
        cur = next_node(cur, top);
    }
    result = PyTuple_Pack(2, hidden, styled);
done:
    Py_XDECREF(hidden);
    Py_XDECREF(styled);
    return result;
}

/* ------------------------------------------------------------------ labels */

/* A run of text nodes side by side is one piece of text for lxml (its .text, its .tail, one
 * item of itertext()). */
static Span run_span(const xmlNode *first, const xmlNode **last) {
    Span span = {0};
    const xmlNode *node = first;
    for (; node->next && is_text(node->next); node = node->next) {
        Span piece = measure(node->content);
        span_add(&span, &piece);
    }
    Span piece = measure(node->content);
    span_add(&span, &piece);
    if (last) *last = node;
    return span;
}

static PyObject *run_text(const xmlNode *first) {
    const xmlNode *node = first;
    size_t size = length(node->content);
    while (node->next && is_text(node->next)) {
        node = node->next;
        size += length(node->content);
    }
    char *joined = PyMem_Malloc(size + 1);
    if (!joined) return PyErr_NoMemory();
    size_t at = 0;
    for (node = first;; node = node->next) {
        size_t n = length(node->content);
        if (n) memcpy(joined + at, node->content, n);
        at += n;
        if (!node->next || !is_text(node->next)) break;
    }
    PyObject *text = PyUnicode_DecodeUTF8(joined, (Py_ssize_t)at, "replace");
    PyMem_Free(joined);
    return text;
}

/* The first text of `element` (its .text or a piece of itertext()) that is not blank: the
 * first node of its run, or NULL. */
static const xmlNode *first_text(xmlNode *element) {
    xmlNode *cur = element->children;
    while (cur) {
        if (is_text(cur)) {
            const xmlNode *last;
            Span span = run_span(cur, &last);
            if (span.solid) return cur;
            cur = after((xmlNode *)last, element);
            continue;
        }
        cur = next_node(cur, element);
    }
    return NULL;
}

/* Does the element's own text (lxml's .text) look like a label: at most 40 characters
 * holding a hint character, or, all ASCII, a hint word? */
static int is_hint_char(Py_UCS4 c) {
    if (c < 0x10000) return (hint_plane[c >> 3] >> (c & 7)) & 1;
    for (Py_ssize_t i = 0; i < hint_char_count; i++)
        if (c == hint_chars[i]) return 1;
    return 0;
}

static int label_hint(const xmlNode *node) {
    if (!node->children || !is_text(node->children)) return 0;
    Py_ssize_t chars = 0;
    int ascii = 1, hinted = 0;
    const xmlNode *text;
    for (text = node->children; text && is_text(text); text = text->next) {
        if (!text->content) continue;
        const unsigned char *p = text->content;
        while (*p) {
            Py_UCS4 c = next_code_point(&p);
            if (++chars > 40) return 0;
            if (c < 128 || hinted) continue; /* the hint characters are not ASCII */
            ascii = 0;
            hinted = is_hint_char(c);
        }
    }
    if (!chars || hinted) return chars && hinted;
    if (!ascii) return 0;
    /* the hint words, looked for only in ASCII text; one split over two text nodes is not
     * seen: lxml joins them only after changes such as taking out a script between them */
    for (text = node->children; text && is_text(text); text = text->next)
        if (text->content && holds_word(&hint_words, text->content, strlen((const char *)text->content))) return 1;
    return 0;
}

/* readable.py's _may_hold_article: the page's headline, a run of text of `long_text`
 * characters (stripped), or more than `long_block` characters (white space runs as one)
 * of which less than half are in links (their texts joined by spaces). */
static int may_hold_article(xmlNode *block, Py_ssize_t long_text, Py_ssize_t long_block) {
    static const Span space = {1, 0, 0, 1, 1, 0, 0};
    Span all = {0}, linked = {0};
    if (tag_of(block->name) == T_H && strcmp((const char *)block->name, "h1") == 0) return 1;
    /* depth in <a> elements, by the stack of the walk: the nodes of the <a>s entered */
    xmlNode *cur = block->children;
    int in_links = 0;
    while (cur) {
        if (cur->type == XML_ELEMENT_NODE) {
            if (cur->name && strcmp((const char *)cur->name, "h1") == 0) return 1;
            if (tag_of(cur->name) == T_A) in_links++;
            if (cur->children) {
                cur = cur->children;
                continue;
            }
            if (tag_of(cur->name) == T_A) in_links--;
        } else if (is_text(cur)) {
            const xmlNode *last;
            Span run = run_span(cur, &last);
            if (run.solid && run.chars - run.lead - run.trail >= long_text) return 1;
            span_add(&all, &run);
            if (in_links)
                for (const xmlNode *node = cur;; node = node->next) {
                    Span piece = measure(node->content);
                    if (linked.chars) span_add(&linked, &space);
                    span_add(&linked, &piece);
                    if (node == last) break;
                }
            cur = (xmlNode *)last;
        }
        /* next in document order, leaving the <a>s whose ends are passed */
        while (cur != block && !cur->next) {
            cur = cur->parent;
            if (cur != block && tag_of(cur->name) == T_A) in_links--;
        }
        cur = cur == block ? NULL : cur->next;
    }
    Py_ssize_t total = all.solid + all.gaps;
    return total > long_block && (double)(linked.solid + linked.gaps) < 0.5 * (double)total;
}

/* Blocks that open with a label: for each element whose own text is a label (`is_label`
 * says, for texts label_hint lets through), the largest element, below <body>, whose
 * first text that is not blank is that text; unless it is inline or may hold the article. */
static PyObject *py_labelled(PyObject *self, PyObject *args) {
    PyObject *root_obj, *is_label;
    Py_ssize_t long_text, long_block;
    if (!PyArg_ParseTuple(args, "OOnn", &root_obj, &is_label, &long_text, &long_block)) return NULL;
    LxmlElement *root = as_element(root_obj);
    if (!root) return NULL;
    PyObject *blocks = PyList_New(0);
    if (!blocks) return NULL;
    xmlNode *top = root->c_node, *cur = top;
    while (cur) {
        if (cur->type == XML_ELEMENT_NODE && label_hint(cur)) {
            PyObject *text = run_text(cur->children);
            PyObject *answer = text ? PyObject_CallOneArg(is_label, text) : NULL;
            Py_XDECREF(text);
            int label = answer ? PyObject_IsTrue(answer) : -1;
            Py_XDECREF(answer);
            if (label < 0) {
                Py_DECREF(blocks);
                return NULL;
            }
            if (label) {
                const xmlNode *own = cur->children;
                xmlNode *block = NULL, *element = cur;
                while (element && element->type == XML_ELEMENT_NODE) {
                    int tag = tag_of(element->name);
                    if (tag == T_BODY || tag == T_HTML) break;
                    const xmlNode *first = first_text(element);
                    if (first != own && !(first && first->content && own->content &&
                                          (!first->next || !is_text(first->next)) &&
                                          (!own->next || !is_text(own->next)) &&
                                          strcmp((const char *)first->content, (const char *)own->content) == 0))
                        break;
                    block = element;
                    element = element->parent;
                }
                if (block && !is_inline(tag_of(block->name)) && !may_hold_article(block, long_text, long_block) &&
                    append_proxy(blocks, root, block) < 0) {
                    Py_DECREF(blocks);
                    return NULL;
                }
            }
        }
        cur = next_node(cur, top);
    }
    return blocks;
}

/* ------------------------------------------------------------------ blocks below */

/* Is a block element below `top`? */
static int has_block_below(xmlNode *top) {
    for (xmlNode *cur = top->children; cur; cur = next_node(cur, top))
        if (cur->type == XML_ELEMENT_NODE && is_block_name(cur->name)) return 1;
    return 0;
}

static PyObject *py_blocks_below(PyObject *self, PyObject *obj) {
    LxmlElement *root = as_element(obj);
    if (!root) return NULL;
    return PyBool_FromLong(has_block_below(root->c_node));
}

/* ------------------------------------------------------------------ divs by their blocks */

static inline int is_div(const xmlNode *node) {
    return node->type == XML_ELEMENT_NODE && node->name && strcmp((const char *)node->name, "div") == 0;
}

/* The <div>s below `node` in document order, in `without` (no block element below them) or
 * in `with` (the others), each list holding a None where a <div> of the other list is. Returns
 * whether a block element is below `node`, or -1 on an error. */
static int sort_divs(xmlNode *node, LxmlElement *root, PyObject *without, PyObject *with, int depth) {
    if (depth > 10000) { /* libxml2's parser nests 256 deep; the C stack holds this */
        PyErr_SetString(PyExc_RecursionError, "a tree too deep to walk");
        return -1;
    }
    int below = 0;
    for (xmlNode *child = node->children; child; child = child->next) {
        if (child->type != XML_ELEMENT_NODE) continue;
        Py_ssize_t slot = -1;
        if (is_div(child)) { /* its place in document order, filled once its blocks are known */
            slot = PyList_GET_SIZE(with);
            if (PyList_Append(with, Py_None) < 0 || PyList_Append(without, Py_None) < 0) return -1;
        }
        int child_below = sort_divs(child, root, without, with, depth + 1);
        if (child_below < 0) return -1;
        if (slot >= 0) {
            PyObject *element = proxy(root, child);
            if (!element) return -1;
            PyList_SET_ITEM(child_below ? with : without, slot, element); /* the slot's None is let go */
            Py_DECREF(Py_None);
        }
        if (child_below || is_block_name(child->name)) below = 1;
    }
    return below;
}

/* `items` without its Nones. */
static PyObject *without_none(PyObject *items) {
    PyObject *kept = PyList_New(0);
    for (Py_ssize_t i = 0; kept && i < PyList_GET_SIZE(items); i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        if (item != Py_None && PyList_Append(kept, item) < 0) Py_CLEAR(kept);
    }
    return kept;
}

static PyObject *py_divs_by_blocks(PyObject *self, PyObject *obj) {
    LxmlElement *root = as_element(obj);
    if (!root) return NULL;
    PyObject *without = PyList_New(0), *with = PyList_New(0), *result = NULL;
    if (without && with && sort_divs(root->c_node, root, without, with, 0) >= 0) {
        PyObject *a = without_none(without), *b = a ? without_none(with) : NULL;
        if (a && b) result = PyTuple_Pack(2, a, b);
        Py_XDECREF(a);
        Py_XDECREF(b);
    }
    Py_XDECREF(without);
    Py_XDECREF(with);
    return result;
}

/* The children of `parent`: the <div>s without a block element below them, and whether
 * another child is a block element or has one below it. */
static PyObject *py_child_divs_by_blocks(PyObject *self, PyObject *obj) {
    LxmlElement *parent = as_element(obj);
    if (!parent) return NULL;
    PyObject *without = PyList_New(0);
    if (!without) return NULL;
    int holds = 0;
    for (xmlNode *child = parent->c_node->children; child; child = child->next) {
        if (child->type != XML_ELEMENT_NODE) continue;
        if (is_div(child) && !has_block_below(child)) {
            if (append_proxy(without, parent, child) < 0) {
                Py_DECREF(without);
                return NULL;
            }
        } else if (!holds && (is_block_name(child->name) || has_block_below(child))) {
            holds = 1;
        }
    }
    PyObject *result = Py_BuildValue("(NO)", without, holds ? Py_True : Py_False);
    return result;
}

/* Has the <div> anything that readability's second <div> step (readable.py's
 * _wrap_loose_text) changes: text of its own or a child's tail that is not blank, a <br>
 * child, or an inline child? */
static PyObject *py_loose_parts(PyObject *self, PyObject *obj) {
    LxmlElement *div = as_element(obj);
    if (!div) return NULL;
    for (xmlNode *child = div->c_node->children; child; child = child->next) {
        if (is_text(child)) {
            if (measure(child->content).solid) Py_RETURN_TRUE;
        } else if (child->type == XML_ELEMENT_NODE) {
            int tag = tag_of(child->name);
            if (tag == T_BR || is_inline(tag)) Py_RETURN_TRUE;
        }
    }
    Py_RETURN_FALSE;
}

/* ------------------------------------------------------------------ short paragraphs */

/* <p> elements (document order) holding text and nothing else, whose length as readability
 * measures it (white space runs as one character, CJK characters twice) is under `least`:
 * readable.py joins runs of them into one paragraph. */
static PyObject *py_short_paragraphs(PyObject *self, PyObject *args) {
    PyObject *root_obj;
    Py_ssize_t least;
    if (!PyArg_ParseTuple(args, "On", &root_obj, &least)) return NULL;
    LxmlElement *root = as_element(root_obj);
    if (!root) return NULL;
    PyObject *found = PyList_New(0);
    if (!found) return NULL;
    xmlNode *top = root->c_node, *cur = top;
    while (cur) {
        if (cur->type == XML_ELEMENT_NODE && cur->name && strcmp((const char *)cur->name, "p") == 0 &&
            cur->children) {
            Span text = {0};
            const xmlNode *child = cur->children;
            for (; child && is_text(child); child = child->next) {
                Span piece = measure(child->content);
                span_add(&text, &piece);
            }
            if (!child && text.chars && text.solid + text.gaps + text.cjk < least &&
                append_proxy(found, root, cur) < 0) {
                Py_DECREF(found);
                return NULL;
            }
        }
        cur = next_node(cur, top);
    }
    return found;
}

/* ------------------------------------------------------------------ flat text */

typedef struct {
    char *bytes;
    size_t size, used;
} Buffer;

static int put(Buffer *b, const char *bytes, size_t n) {
    if (b->used + n > b->size) {
        size_t bigger = b->size ? b->size * 2 : 4096;
        while (bigger < b->used + n) bigger *= 2;
        char *moved = PyMem_Realloc(b->bytes, bigger);
        if (!moved) {
            PyErr_NoMemory();
            return -1;
        }
        b->bytes = moved;
        b->size = bigger;
    }
    memcpy(b->bytes + b->used, bytes, n);
    b->used += n;
    return 0;
}

/* Is the element's name (as lxml gives its tag, lower-cased) one of `names`? A namespaced
 * element's tag is "{uri}name": never one of them. */
static int named(const xmlNode *node, PyObject *names) {
    if (node->ns || !node->name) return 0;
    char lowered[32];
    size_t n = strlen((const char *)node->name);
    if (n >= sizeof(lowered)) return 0;
    for (size_t i = 0; i <= n; i++) {
        char c = (char)node->name[i];
        if (c & 0x80) return 0; /* no name in the lists holds a character outside ASCII */
        lowered[i] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
    }
    PyObject *key = PyUnicode_FromStringAndSize(lowered, (Py_ssize_t)n);
    if (!key) return -1;
    int found = PySet_Contains(names, key);
    Py_DECREF(key);
    return found;
}

/* The text of `root` and of what is below it, with a line break before and after each block
 * element, the elements named in `skip` and comments left out (their tails kept), and the
 * root's tail after it: extract.py's _flatten before its lines are tidied. */
static PyObject *py_flat_text(PyObject *self, PyObject *args) {
    PyObject *root_obj, *skip, *blocks;
    if (!PyArg_ParseTuple(args, "OO!O!", &root_obj, &PyFrozenSet_Type, &skip, &PyFrozenSet_Type, &blocks)) return NULL;
    LxmlElement *root = as_element(root_obj);
    if (!root) return NULL;
    Buffer out = {NULL, 0, 0};
    xmlNode *top = root->c_node, *cur = top;
    int failed = 0;
    /* cur is an element being entered, or a node below top to read */
    while (cur && !failed) {
        if (is_text(cur)) {
            if (cur->content) failed = put(&out, (const char *)cur->content, strlen((const char *)cur->content)) < 0;
        } else if (cur->type == XML_ELEMENT_NODE) {
            int skipped = named(cur, skip), block = skipped ? 0 : named(cur, blocks);
            if (skipped < 0 || block < 0) {
                failed = 1;
                break;
            }
            if (!skipped) {
                if (block) failed = put(&out, "\n", 1) < 0;
                if (cur->children) {
                    cur = cur->children;
                    continue;
                }
                if (block && !failed) failed = put(&out, "\n", 1) < 0;
            }
        }
        /* next: the following sibling, else up, closing each block element left */
        while (!failed && cur != top && !cur->next) {
            cur = cur->parent;
            if (cur->type == XML_ELEMENT_NODE) {
                int block = named(cur, blocks);
                if (block < 0) failed = 1;
                else if (block) failed = put(&out, "\n", 1) < 0;
            }
        }
        cur = cur == top ? NULL : cur->next;
    }
    for (const xmlNode *tail = top->next; !failed && tail && is_text(tail); tail = tail->next)
        if (tail->content) failed = put(&out, (const char *)tail->content, strlen((const char *)tail->content)) < 0;
    PyObject *text = failed ? NULL : PyUnicode_DecodeUTF8(out.bytes ? out.bytes : "", (Py_ssize_t)out.used, "strict");
    PyMem_Free(out.bytes);
    return text;
}

/* ------------------------------------------------------------------ text below an element */

static inline int is_link(const xmlNode *node) {
    return node->type == XML_ELEMENT_NODE && node->name && strcmp((const char *)node->name, "a") == 0;
}

/* The code points of the text below `top` (XPath's string(), lxml's text_content()), and
 * those that are not white space; counting stops once `most` code points (or, with `solid`,
 * solid ones) are passed, where `most` is not negative. */
static Span text_below(xmlNode *top, Py_ssize_t most, int solid) {
    Span total = {0};
    for (xmlNode *cur = top->children; cur; cur = next_node(cur, top)) {
        if (!is_text(cur)) continue;
        Span piece = measure(cur->content);
        span_add(&total, &piece);
        if (most >= 0 && (solid ? total.solid : total.chars) > most) break;
    }
    return total;
}

static PyObject *py_solid_length(PyObject *self, PyObject *args) {
    PyObject *obj;
    Py_ssize_t most = -1;
    if (!PyArg_ParseTuple(args, "O|n", &obj, &most)) return NULL;
    LxmlElement *element = as_element(obj);
    if (!element) return NULL;
    return PyLong_FromSsize_t(text_below(element->c_node, most, 1).solid);
}

/* The solid code points of the text inside the links below `top` (XPath's .//a//text()): a
 * link's text is counted once, with the links inside it. */
static PyObject *py_linked_solid_length(PyObject *self, PyObject *obj) {
    LxmlElement *element = as_element(obj);
    if (!element) return NULL;
    xmlNode *top = element->c_node;
    Py_ssize_t solid = 0;
    for (xmlNode *cur = top->children; cur;) {
        if (is_link(cur)) {
            solid += text_below(cur, -1, 1).solid;
            cur = after(cur, top);
        } else {
            cur = next_node(cur, top);
        }
    }
    return PyLong_FromSsize_t(solid);
}

/* readability's measures of the text below an element: (length with white space runs as one
 * character, CJK characters, pauses (',' and '，'), solid code points). */
static PyObject *py_measures(PyObject *self, PyObject *obj) {
    LxmlElement *element = as_element(obj);
    if (!element) return NULL;
    Span text = text_below(element->c_node, -1, 0);
    return Py_BuildValue("(nnnn)", text.solid + text.gaps, text.cjk, text.pauses, text.solid);
}

/* The length of the text below `top` with the white space at its ends left out (str.strip). */
static Py_ssize_t stripped_length(xmlNode *top) {
    Span text = text_below(top, -1, 0);
    return text.solid ? text.chars - text.lead - text.trail : 0;
}

/* extract.py's link lists: the elements below `root` named in `names` that hold a link and
 * text, whose links' texts (each stripped) are longer than `share` of their text (stripped). */
static PyObject *py_link_lists(PyObject *self, PyObject *args) {
    PyObject *root_obj, *names;
    double share;
    if (!PyArg_ParseTuple(args, "OO!d", &root_obj, &PyFrozenSet_Type, &names, &share)) return NULL;
    LxmlElement *root = as_element(root_obj);
    if (!root) return NULL;
    PyObject *found = PyList_New(0);
    if (!found) return NULL;
    xmlNode *top = root->c_node;
    for (xmlNode *cur = top->children; cur; cur = next_node(cur, top)) {
        if (cur->type != XML_ELEMENT_NODE) continue;
        int listy = named(cur, names);
        if (listy < 0) goto failed;
        if (!listy) continue;
        Py_ssize_t linked = 0;
        int links = 0;
        for (xmlNode *below = cur->children; below; below = next_node(below, cur)) {
            if (is_link(below)) {
                links = 1;
                linked += stripped_length(below);
            }
        }
        if (!links) continue;
        Py_ssize_t length = stripped_length(cur);
        if (length && (double)linked > share * (double)length && append_proxy(found, root, cur) < 0) goto failed;
    }
    return found;
failed:
    Py_DECREF(found);
    return NULL;
}

/* The text below `top` (of at most a few code points), as a str. */
static PyObject *short_text(xmlNode *top) {
    Buffer out = {NULL, 0, 0};
    int failed = 0;
    for (xmlNode *cur = top->children; cur && !failed; cur = next_node(cur, top))
        if (is_text(cur) && cur->content)
            failed = put(&out, (const char *)cur->content, strlen((const char *)cur->content)) < 0;
    PyObject *text = failed ? NULL : PyUnicode_DecodeUTF8(out.bytes ? out.bytes : "", (Py_ssize_t)out.used, "strict");
    PyMem_Free(out.bytes);
    return text;
}

/* The elements below `root` (document order) with at most `longest` code points of text,
 * each with its text, leaving out links and what is inside one. */
static PyObject *py_short_texts(PyObject *self, PyObject *args) {
    PyObject *root_obj;
    Py_ssize_t longest;
    if (!PyArg_ParseTuple(args, "On", &root_obj, &longest)) return NULL;
    LxmlElement *root = as_element(root_obj);
    if (!root) return NULL;
    PyObject *found = PyList_New(0);
    if (!found) return NULL;
    xmlNode *top = root->c_node;
    for (const xmlNode *up = top; up; up = up->parent)
        if (is_link(up)) return found; /* everything below is inside a link */
    xmlNode *cur = top->children;
    while (cur) {
        if (cur->type == XML_ELEMENT_NODE) {
            if (is_link(cur)) {
                cur = after(cur, top);
                continue;
            }
            if (text_below(cur, longest, 0).chars <= longest) {
                PyObject *element = proxy(root, cur), *text = element ? short_text(cur) : NULL;
                PyObject *pair = text ? PyTuple_Pack(2, element, text) : NULL;
                Py_XDECREF(element);
                Py_XDECREF(text);
                if (!pair || PyList_Append(found, pair) < 0) {
                    Py_XDECREF(pair);
                    Py_DECREF(found);
                    return NULL;
                }
                Py_DECREF(pair);
            }
        }
        cur = next_node(cur, top);
    }
    return found;
}

/* The first `most` code points of the text below an element (lxml's text_content()[:most]). */
static PyObject *py_text_start(PyObject *self, PyObject *args) {
    PyObject *obj;
    Py_ssize_t left;
    if (!PyArg_ParseTuple(args, "On", &obj, &left)) return NULL;
    LxmlElement *element = as_element(obj);
    if (!element) return NULL;
    xmlNode *top = element->c_node;
    Buffer out = {0};
    int failed = 0;
    for (xmlNode *cur = top->children; cur && left > 0 && !failed; cur = next_node(cur, top)) {
        if (!is_text(cur) || !cur->content) continue;
        const unsigned char *start = cur->content, *p = start;
        for (; *p && left > 0; left--) next_code_point(&p);
        failed = put(&out, (const char *)start, (size_t)(p - start)) < 0;
    }
    PyObject *text = failed ? NULL : PyUnicode_DecodeUTF8(out.bytes ? out.bytes : "", (Py_ssize_t)out.used, "strict");
    PyMem_Free(out.bytes);
    return text;
}

/* ------------------------------------------------------------------ module */

static PyMethodDef methods[] = {
    {"configure", py_configure, METH_VARARGS,
     "configure(unlikely, maybe, positive, negative, hint_chars, hint_words): readability's class and id "
     "words and the label hints, lower-case."},
    {"hidden", py_hidden, METH_O,
     "hidden(root) -> (hidden, styled): elements with a hidden attribute, elements whose style mentions "
     "none or hidden."},
    {"labelled", py_labelled, METH_VARARGS,
     "labelled(root, is_label, long_text, long_block) -> blocks that open with a label."},
    {"score", py_score, METH_VARARGS,
     "score(root, ruthless, min_length) -> (dropped, candidates): readability's unlikely candidates "
     "(with ruthless) and its candidates with their scores, in the order readability makes them."},
    {"loose_parts", py_loose_parts, METH_O,
     "loose_parts(div) -> bool: the <div> has text or a child's tail that is not blank, a <br> child or "
     "an inline child (readability's inline tags)."},
    {"short_paragraphs", py_short_paragraphs, METH_VARARGS,
     "short_paragraphs(root, least) -> <p>s of text only, shorter than least as readability measures."},
    {"flat_text", py_flat_text, METH_VARARGS,
     "flat_text(root, skip, blocks) -> the text below root, a line break around each block element, "
     "skipped elements and comments left out (their tails kept), then root's tail."},
    {"blocks_below", py_blocks_below, METH_O,
     "blocks_below(element) -> bool: a block element (as readability finds them) is below it."},
    {"divs_by_blocks", py_divs_by_blocks, METH_O,
     "divs_by_blocks(root) -> (without, with): the <div>s below root without a block element below them "
     "and those with one, each in document order."},
    {"child_divs_by_blocks", py_child_divs_by_blocks, METH_O,
     "child_divs_by_blocks(parent) -> (without, holds): the child <div>s without a block element below "
     "them, and whether another child is a block element or has one below it."},
    {"solid_length", py_solid_length, METH_VARARGS,
     "solid_length(element, most=-1) -> the code points of the text below element that are not white "
     "space, counted until more than most (where most is not negative)."},
    {"linked_solid_length", py_linked_solid_length, METH_O,
     "linked_solid_length(element) -> the code points of the text inside the links below element "
     "(.//a//text()) that are not white space."},
    {"text_start", py_text_start, METH_VARARGS,
     "text_start(element, most) -> the first most code points of the text below element (text_content)."},
    {"short_texts", py_short_texts, METH_VARARGS,
     "short_texts(root, longest) -> [(element, text)]: the elements below root whose text (text_content) "
     "has at most longest code points, links and what is inside one left out, in document order."},
    {"measures", py_measures, METH_O,
     "measures(element) -> (length, cjk, pauses, solid): of the text below element (text_content), its "
     "length with white space runs as one character, its CJK characters, ',' and '，', and the code points "
     "that are not white space."},
    {"link_lists", py_link_lists, METH_VARARGS,
     "link_lists(root, names, share) -> the elements below root named in names that hold a link and text, "
     "their links' texts (each stripped) longer than share of their text (stripped), in document order."},
    {NULL, NULL, 0, NULL},
};

static void module_free(void *module) {
    free_words(&unlikely_words);
    free_words(&maybe_words);
    free_words(&positive_words);
    free_words(&negative_words);
    free_words(&hint_words);
    PyMem_Free(hint_chars);
    hint_chars = NULL;
}

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_pagewalk", "readability's walks over an lxml tree, in C.", -1, methods,
    NULL, NULL, NULL, module_free,
};

PyMODINIT_FUNC PyInit__pagewalk(void) {
    PyObject *etree = PyImport_ImportModule("lxml.etree");
    if (!etree) return NULL;
    PyObject *type = PyObject_GetAttrString(etree, "_Element");
    PyObject *api = PyObject_GetAttrString(etree, "__pyx_capi__");
    Py_DECREF(etree);
    if (!type || !api) {
        Py_XDECREF(type);
        Py_XDECREF(api);
        return NULL;
    }
    PyObject *capsule = PyDict_GetItemString(api, "elementFactory");
    if (!capsule || !PyCapsule_CheckExact(capsule)) {
        Py_DECREF(type);
        Py_DECREF(api);
        PyErr_SetString(PyExc_ImportError, "lxml.etree has no elementFactory in its C API");
        return NULL;
    }
    element_factory = (ElementFactory)PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule));
    Py_DECREF(api);
    if (!element_factory || !PyType_Check(type)) {
        Py_DECREF(type);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ImportError, "lxml.etree._Element is not a type");
        return NULL;
    }
    element_type = (PyTypeObject *)type; /* kept for the module's life */
    return PyModule_Create(&module);
}
