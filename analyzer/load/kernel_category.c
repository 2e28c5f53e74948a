/* Kernel category from a kernel's name, for tscope dumps and Kineto traces
 * alike (the one categorizer of the analyzer).
 *
 * Words match whole tokens, never substrings: a substring test put
 * elementwise kernels whose template arguments hold "{lambda" under the
 * LAMB optimizer, and fbgemm_gpu's embedding kernels under GEMM.  A name is
 * cut into tokens at every non-alphanumeric character, at camelCase humps
 * and between letters and digits ("cutlass_80_tensorop_s1688gemm" ->
 * cutlass 80 tensorop s 1688 gemm; "ncclDevKernel" -> nccl Dev Kernel),
 * and a word may span consecutive tokens ("layernorm" matches layer_norm
 * and LayerNorm).  The kernel's own name, before its template or argument
 * list, decides first: the template arguments of an elementwise kernel
 * name the functor it applies, which says nothing of the kernel's kind. */
#include <ctype.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "kernel_category.h"

#define MAX_TOKENS 192

typedef struct tokens {
    const char *s;
    size_t n;
    unsigned short start[MAX_TOKENS], len[MAX_TOKENS];
} tokens;

static int is_alnum(char c)
{
    return isalnum((unsigned char)c);
}

/* A token boundary between s[i-1] and s[i] (both alphanumeric). */
static int hump(const char *s, size_t i, size_t n)
{
    unsigned char a = (unsigned char)s[i - 1], b = (unsigned char)s[i];
    if (islower(a) && isupper(b))
        return 1;
    if (isupper(a) && isupper(b) && i + 1 < n && islower((unsigned char)s[i + 1]))
        return 1; /* "CUDAKernel" -> CUDA Kernel */
    return (isdigit(a) != 0) != (isdigit(b) != 0);
}

static void tokenize(const char *s, size_t n, tokens *t)
{
    t->s = s;
    t->n = 0;
    size_t i = 0;
    while (i < n && t->n < MAX_TOKENS && i < 65535) {
        while (i < n && !is_alnum(s[i]))
            i++;
        size_t b = i;
        while (i < n && is_alnum(s[i]) && (i == b || !hump(s, i, n)))
            i++;
        if (i > b && i < 65535) {
            t->start[t->n] = (unsigned short)b;
            t->len[t->n] = (unsigned short)(i - b);
            t->n++;
        }
    }
}

/* Does word (lower case) equal the concatenation of tokens i, i+1, ...? */
static int match_at(const tokens *t, size_t i, const char *word)
{
    size_t wl = strlen(word), pos = 0;
    for (size_t j = i; j < t->n && pos < wl; j++) {
        size_t l = t->len[j];
        if (l > wl - pos || strncasecmp(t->s + t->start[j], word + pos, l))
            return 0;
        pos += l;
    }
    return pos == wl;
}

static int has_word(const tokens *t, const char *const *words)
{
    for (size_t i = 0; i < t->n; i++)
        for (const char *const *w = words; *w; w++)
            if (match_at(t, i, *w))
                return 1;
    return 0;
}

/* First matching rule wins: NCCL and optimizer kernels also carry words
 * such as "reduce" or "elementwise". */
static const struct rule {
    tsa_kcat cat;
    const char *const *words;
} rules[] = {
    /* Collectives of NCCL and RCCL, and of the libraries beside them:
     * symmetric-memory multimem, NVSHMEM, DeepEP, vLLM's custom
     * all-reduce, MSCCL++, and kernels named after the collective. */
    {TSA_KCAT_COMM, (const char *const[]){"nccl", "rccl", "multimem", "nvshmem", "nvshmemi",
                                          "deepep", "mscclpp", "crossdevicereduce", "allreduce",
                                          "allgather", "reducescatter", "alltoall",
                                          "quickreduce", NULL}},
    {TSA_KCAT_OPTIMIZER, (const char *const[]){"multitensorapply", "adam", "adamw", "sgd",
                                               "lamb", "optimizer", NULL}},
    {TSA_KCAT_ATTENTION, (const char *const[]){"flash", "fmha", "attention", "sdpa", "attn",
                                               "flashinfer", "mha", NULL}},
    /* Before GEMM: cuDNN's implicit_convolve_sgemm and xmma fprop
     * implicit-GEMM kernels are convolutions. */
    {TSA_KCAT_CONV, (const char *const[]){"conv", "convolve", "convolution", "dgrad", "wgrad",
                                          "fprop", "winograd", "scudnn", "wrw", "gtcx", "gtc",
                                          /* cuDNN's FFT convolution algorithms */
                                          "fft", NULL}},
    /* FBGEMM's table-batched embeddings and the index work around them */
    {TSA_KCAT_EMBEDDING, (const char *const[]){"embedding", "embeddingbag", "embs",
                                               "linearizeindex", "boundscheckindices", NULL}},
    /* BLAS precision prefixes (s, d, h, c, z, gc) spelled out: "fbgemm"
     * is a library name, not a GEMM.  Cijk_ is AMD Tensile's GEMM. */
    {TSA_KCAT_GEMM, (const char *const[]){"gemm", "gemv", "sgemm", "dgemm", "hgemm", "cgemm",
                                          "zgemm", "gcgemm", "sgemv", "dgemv", "hgemv",
                                          "gemmk", "cutlass", "xmma", "cublas", "cublaslt",
                                          "matmul", "wgmma", "hmma", "nvjet", "cijk", "bmm",
                                          NULL}},
    /* "bn" only as cuDNN's batch-norm kernels spell it (bn_fw_, bn_bw_):
     * alone it is also a tile tag (bN) of GEMM kernels. */
    {TSA_KCAT_NORM, (const char *const[]){"norm", "layernorm", "rmsnorm", "batchnorm",
                                          "groupnorm", "bnfw", "bnbw", "bnfwd", "bnbwd",
                                          "rowwisemoments", "moments",
                                          /* layer and group norm backward in PyTorch */
                                          "gammabeta", "internalgradients", "fusedparams",
                                          NULL}},
    /* pooling reduces each window */
    {TSA_KCAT_REDUCTION, (const char *const[]){"reduce", "reduction", "softmax", "sumkernel",
                                               "pool", "maxpool", "avgpool", "tritonred",
                                               "tritonper", "devicescan", NULL}},
    {TSA_KCAT_ELEMENTWISE, (const char *const[]){"elementwise", "vectorized", "pointwise",
                                                 "unrolled", "tritonpoi", "tensorop", "silu",
                                                 "gelu", "relu", "actandmul", "activation",
                                                 NULL}},
    /* layout changes and gathers move data */
    {TSA_KCAT_COPY, (const char *const[]){"memcpy", "memset", "copy", "fillkernel", "transpose",
                                          "nchwtonhwc", "nhwctonchw", "indexselect", "permute",
                                          NULL}},
};

static tsa_kcat classify(const tokens *t)
{
    for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++)
        if (has_word(t, rules[r].words))
            return rules[r].cat;
    return TSA_KCAT_OTHER;
}

/* Length of the kernel's own name: up to its template or argument list
 * ("(anonymous namespace)" is part of the name). */
static size_t head_len(const char *name)
{
    static const char anon[] = "(anonymous namespace)";
    size_t i = 0;
    for (; name[i]; i++) {
        if (name[i] == '<')
            break;
        if (name[i] == '(') {
            if (strncmp(name + i, anon, sizeof anon - 1))
                break;
            i += sizeof anon - 2;
        }
    }
    return i;
}

tsa_kcat tsa_kernel_category(const char *name)
{
    if (!name || !*name)
        return TSA_KCAT_OTHER;
    tokens t;
    size_t head = head_len(name), all = strlen(name);
    tokenize(name, head, &t);
    tsa_kcat c = classify(&t);
    if (c != TSA_KCAT_OTHER || head == all)
        return c;
    tokenize(name, all, &t);
    return classify(&t);
}

const char *tsa_kcat_name(tsa_kcat c)
{
    static const char *const names[TSA_KCAT_COUNT] = {
        "other", "gemm", "attention", "elementwise", "norm",
        "reduction", "optimizer", "communication", "copy", "conv", "embedding"};
    return (unsigned)c < TSA_KCAT_COUNT ? names[c] : "other";
}
