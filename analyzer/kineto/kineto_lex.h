/* JSON lexing primitives shared by the strict reader (kineto_fastjson.c)
 * and the one-pass event reader (kineto_event_pass.c).  Inline: they are
 * the innermost loops of both, called for every token of a trace. */
#ifndef TSA_KINETO_LEX_H
#define TSA_KINETO_LEX_H

#include <stddef.h>
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum { KLEX_MORE = 0, KLEX_GIVE_UP = -2 };

/* Bytes of b[0..n) before the first '"', '\\' or control character. */
static inline size_t klex_plain_run(const unsigned char *b, size_t n)
{
    size_t i = 0;
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x1f);
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(b + i));
        /* v <= 0x1f unsigned: the minimum of the two is v */
        __m128i ctl = _mm_cmpeq_epi8(_mm_min_epu8(v, space), v);
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote),
                                                _mm_cmpeq_epi8(v, backslash)), ctl);
        unsigned mask = (unsigned)_mm_movemask_epi8(hit);
        if (mask)
            return i + (size_t)__builtin_ctz(mask);
    }
#endif
    for (; i < n; i++)
        if (b[i] == '"' || b[i] == '\\' || b[i] < 0x20)
            break;
    return i;
}

/* The usual string, short and plain: the length of the one whose body
 * starts at b when its closing quote is among b's first 16 bytes with no
 * backslash or control byte before it; -1 when not (or fewer than 16
 * bytes are there): the caller's longer way decides.  (A loop over more
 * blocks here cost more instructions than it saved on longer names.) */
static inline long klex_short_string(const unsigned char *b, size_t avail)
{
#if defined(__SSE2__)
    if (avail >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)b);
        __m128i ctl = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                                _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))), ctl);
        unsigned mask = (unsigned)_mm_movemask_epi8(hit);
        if (mask) {
            unsigned i = (unsigned)__builtin_ctz(mask);
            if (b[i] == '"')
                return (long)i;
        }
    }
#else
    (void)b;
    (void)avail;
#endif
    return -1;
}

static inline int klex_is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* What a number's text was, read on the way by klex_number (its value
 * in the forms where reading the text again would give the same). */
enum {
    KNUM_READ = 1,        /* whole, frac and the bits below are set */
    KNUM_NEG = 2,         /* a minus sign */
    KNUM_FRAC3 = 4,       /* exactly three decimals, in frac */
    KNUM_FRAC_OTHER = 8,  /* decimals, not three */
    KNUM_EXP = 16,        /* an exponent */
    KNUM_OVER15 = 32,     /* more than 15 whole digits */
    KNUM_OVER18 = 64,     /* more than 18 whole digits (whole may have wrapped) */
};

typedef struct klex_num {
    uint64_t whole, frac;   /* the digits before and after the point */
    unsigned form;          /* KNUM_* */
} klex_num;

/* The number token at b[0..avail): its length in *n, 0 when the buffer
 * ends inside it (KLEX_MORE), KLEX_GIVE_UP when it is not a JSON number
 * or reaches max_token bytes (0: no bound).  Its digits go to *v. */
static inline int klex_number(const unsigned char *b, size_t avail, uint64_t max_token, size_t *n,
                              klex_num *v)
{
    const unsigned char *p = b, *end = b + avail, *digits;
    uint64_t whole = 0, frac = 0;   /* may wrap: used only where short enough */
    unsigned form = KNUM_READ, d;
    *n = 0;
    if (*p == '-') {
        form |= KNUM_NEG;
        if (++p == end)
            return KLEX_MORE;
    }
    digits = p;
    if (*p == '0')
        p++;
    else if (klex_is_digit(*p))
        for (; p < end && (d = (unsigned)(*p - '0')) < 10; p++)
            whole = whole * 10 + d;
    else
        return KLEX_GIVE_UP;
    if (p - digits > 15)
        form |= p - digits > 18 ? KNUM_OVER15 | KNUM_OVER18 : KNUM_OVER15;
    if (p < end && *p == '.') {
        const unsigned char *f = ++p;
        for (; p < end && (d = (unsigned)(*p - '0')) < 10; p++)
            frac = frac * 10 + d;
        if (p == end)
            return KLEX_MORE;
        if (p == f)
            return KLEX_GIVE_UP;
        form |= p - f == 3 ? KNUM_FRAC3 : KNUM_FRAC_OTHER;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        form |= KNUM_EXP;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        const unsigned char *e = p;
        while (p < end && klex_is_digit(*p))
            p++;
        if (p == end)
            return KLEX_MORE;
        if (p == e)
            return KLEX_GIVE_UP;
    }
    if (p == end)   /* the number may go on in the next read */
        return KLEX_MORE;
    if (max_token && (uint64_t)(p - b) >= max_token)
        return KLEX_GIVE_UP;
    *n = (size_t)(p - b);
    v->whole = whole;
    v->frac = frac;
    v->form = form;
    return KLEX_MORE;
}

/* JSON's four whitespace bytes. */
static inline int klex_is_space(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The first byte at or after pos that is not whitespace (len: none). */
static inline size_t klex_skip_space(const unsigned char *b, size_t pos, size_t len)
{
    /* The usual cases first: no whitespace, or one blank (", " and ": ").
     * A byte above ' ' is never whitespace; one at or below it takes the
     * loop, which stops at anything but the four. */
    if (pos + 1 < len) {
        if (b[pos] > ' ')
            return pos;
        if (b[pos] == ' ' && b[pos + 1] > ' ')
            return pos + 1;
    }
    while (pos < len && klex_is_space(b[pos]))
        pos++;
    return pos;
}

#endif
