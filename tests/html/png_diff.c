/* png_diff A.png B.png CHANNEL_TOL MAX_SHARE: compares two screenshots
 * pixel by pixel.  A pixel differs when one of its channels differs by
 * more than CHANNEL_TOL (0..255: anti-aliased edges may move by a few
 * levels); the images differ when they have other sizes or when more than
 * MAX_SHARE (0..1) of the pixels differ.  Prints the count; exit 0 within
 * the tolerance, 1 beyond it, 2 when a file is not a PNG this reads
 * (8-bit RGB or RGBA, not interlaced: what chromium writes).
 *
 * The decoder is here, on zlib alone, because the test machines have no
 * image library; every length and offset in the file is checked. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct image {
    uint32_t w, h, bpp;         /* bytes per pixel: 3 or 4 */
    unsigned char *px;          /* h rows of w * bpp bytes */
} image;

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    unsigned char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        unsigned char *more = cap < ((size_t)1 << 30) ? realloc(buf, cap * 2) : NULL;
        if (!more) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = more;
        cap *= 2;
    }
    fclose(f);
    *len = n;
    return buf;
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Undoes the per-row filters of raw (h rows of 1 + stride bytes) into px. */
static int unfilter(const unsigned char *raw, image *im)
{
    size_t stride = (size_t)im->w * im->bpp;
    for (uint32_t y = 0; y < im->h; y++) {
        const unsigned char *in = raw + (size_t)y * (stride + 1);
        unsigned char *out = im->px + (size_t)y * stride;
        const unsigned char *up = y ? out - stride : NULL;
        int type = in[0];
        in++;
        for (size_t x = 0; x < stride; x++) {
            int a = x >= im->bpp ? out[x - im->bpp] : 0, b = up ? up[x] : 0;
            int c = up && x >= im->bpp ? up[x - im->bpp] : 0, v;
            switch (type) {
            case 0: v = in[x]; break;
            case 1: v = in[x] + a; break;
            case 2: v = in[x] + b; break;
            case 3: v = in[x] + (a + b) / 2; break;
            case 4: v = in[x] + paeth(a, b, c); break;
            default: return -1;
            }
            out[x] = (unsigned char)v;
        }
    }
    return 0;
}

static int load(const char *path, image *im)
{
    size_t len;
    unsigned char *f = slurp(path, &len);
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (!f || len < 8 || memcmp(f, sig, 8)) {
        fprintf(stderr, "png_diff: %s: not a PNG\n", path);
        free(f);
        return -1;
    }
    unsigned char *idat = NULL;
    size_t n_idat = 0, off = 8;
    int ok = 0;
    memset(im, 0, sizeof *im);
    while (off + 12 <= len) {
        uint32_t clen = be32(f + off);
        if (clen > len - off - 12) {
            fprintf(stderr, "png_diff: %s: chunk at offset %zu runs past the end\n", path, off);
            break;
        }
        const unsigned char *type = f + off + 4, *data = f + off + 8;
        if (!memcmp(type, "IHDR", 4) && clen == 13) {
            im->w = be32(data);
            im->h = be32(data + 4);
            im->bpp = data[9] == 6 ? 4 : data[9] == 2 ? 3 : 0;
            if (data[8] != 8 || !im->bpp || data[12] != 0 || !im->w || !im->h ||
                im->w > 20000 || im->h > 20000) {
                fprintf(stderr, "png_diff: %s: not an 8-bit RGB(A), non-interlaced image of at "
                        "most 20000 x 20000\n", path);
                break;
            }
        } else if (!memcmp(type, "IDAT", 4)) {
            unsigned char *more = realloc(idat, n_idat + clen + 1);
            if (!more)
                break;
            idat = more;
            memcpy(idat + n_idat, data, clen);
            n_idat += clen;
        } else if (!memcmp(type, "IEND", 4)) {
            ok = im->bpp != 0;
            break;
        }
        off += 12 + (size_t)clen;
    }
    free(f);
    if (!ok) {
        if (im->bpp)
            fprintf(stderr, "png_diff: %s: no IEND chunk\n", path);
        free(idat);
        return -1;
    }
    size_t stride = (size_t)im->w * im->bpp, want = (stride + 1) * im->h;
    unsigned char *raw = malloc(want);
    im->px = malloc(stride * im->h);
    uLongf got = (uLongf)want;
    int rc = raw && im->px && idat ? uncompress(raw, &got, idat, (uLong)n_idat) : Z_MEM_ERROR;
    free(idat);
    if (rc != Z_OK || got != want || unfilter(raw, im)) {
        fprintf(stderr, "png_diff: %s: image data does not decode to %u x %u pixels\n", path,
                im->w, im->h);
        free(raw);
        free(im->px);
        im->px = NULL;
        return -1;
    }
    free(raw);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: png_diff A.png B.png CHANNEL_TOL MAX_SHARE\n");
        return 2;
    }
    int tol = atoi(argv[3]);
    double max_share = atof(argv[4]);
    image a, b;
    if (load(argv[1], &a))
        return 2;
    if (load(argv[2], &b)) {
        free(a.px);
        return 2;
    }
    int rc;
    if (a.w != b.w || a.h != b.h) {
        printf("sizes differ: %u x %u against %u x %u\n", a.w, a.h, b.w, b.h);
        rc = 1;
    } else {
        uint64_t differ = 0, total = (uint64_t)a.w * a.h;
        int worst = 0;
        for (uint64_t i = 0; i < total; i++) {
            int d = 0;
            for (uint32_t c = 0; c < 3; c++) {   /* colour; alpha is opaque in screenshots */
                int v = abs((int)a.px[i * a.bpp + c] - (int)b.px[i * b.bpp + c]);
                d = v > d ? v : d;
            }
            worst = d > worst ? d : worst;
            differ += d > tol;
        }
        double share = (double)differ / (double)total;
        printf("%u x %u, %llu pixels differ by more than %d (%.4f%%, at most %.4f%% allowed), "
               "largest channel difference %d\n", a.w, a.h, (unsigned long long)differ, tol,
               100 * share, 100 * max_share, worst);
        rc = share > max_share;
    }
    free(a.px);
    free(b.px);
    return rc;
}
