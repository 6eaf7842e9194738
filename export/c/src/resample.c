/* The kits' resampler, sample for sample: export/resample.py and export/js/resample.mjs (windowed sinc, Blackman
 * window, 48 zero crossings each side, low-passed at 98 % of the lower Nyquist rate, rational polyphase: output k
 * sits at input position k * M / L exactly).  Each output is a float64 sum of 2 x half products in tap order (as
 * resample.mjs adds them), rounded to float32. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static int64_t gcd64(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static double kernel(const sa_resampler *r, double x) {
    double c = r->cutoff, half = (double)r->half;
    if (fabs(x) >= half) return 0.0;
    double sinc = x == 0.0 ? 1.0 : sin(M_PI * c * x) / (M_PI * c * x);
    double window = 0.42 + 0.5 * cos(M_PI * x / half) + 0.08 * cos(2 * M_PI * x / half);
    return c * sinc * window;
}

speechattn_status sa_resampler_init(sa_resampler *r, int64_t input_rate, int64_t output_rate) {
    memset(r, 0, sizeof *r);
    if (input_rate < 1 || input_rate > 768000 || output_rate < 1 || output_rate > 768000)
        return sa_fail(SPEECHATTN_ERR_AUDIO, "sample rates must be whole numbers from 1 to 768000 Hz, not %lld and %lld",
                       (long long)input_rate, (long long)output_rate);
    int64_t g = gcd64(input_rate, output_rate);
    r->M = input_rate / g;
    r->L = output_rate / g;
    double ratio = (double)output_rate / (double)input_rate;
    r->cutoff = (ratio < 1.0 ? ratio : 1.0) * 0.98;
    r->half = (int64_t)ceil(48.0 / r->cutoff);
    r->taps = 2 * r->half;
    if (r->L * 2 * r->half > 50000000)
        return sa_fail(SPEECHATTN_ERR_AUDIO, "%lld Hz to %lld Hz: too many phases", (long long)input_rate,
                       (long long)output_rate);
    r->weights = malloc(sizeof(double) * (size_t)(r->L * r->taps));
    r->capacity = r->half > 1024 ? r->half : 1024;
    r->buffer = calloc((size_t)r->capacity, sizeof(float));
    if (!r->weights || !r->buffer) {
        sa_resampler_free(r);
        return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory for a resampler");
    }
    for (int64_t p = 0; p < r->L; p++)
        for (int64_t t = 0; t < r->taps; t++)
            r->weights[p * r->taps + t] = kernel(r, (double)p / (double)r->L - (double)(t - r->half + 1));
    r->base = -r->half; /* the signal starts after `half` zeros */
    r->length = r->half;
    return SPEECHATTN_OK;
}

void sa_resampler_free(sa_resampler *r) {
    free(r->weights);
    free(r->buffer);
    free(r->out);
    memset(r, 0, sizeof *r);
}

speechattn_status sa_resampler_run(sa_resampler *r, const float *samples, int64_t count, int64_t *out_count) {
    if (SA_RESERVE(r->buffer, r->capacity, r->length + count))
        return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory resampling %lld samples", (long long)count);
    if (count) {
        if (samples) memcpy(r->buffer + r->length, samples, sizeof(float) * (size_t)count);
        else memset(r->buffer + r->length, 0, sizeof(float) * (size_t)count);
    }
    r->length += count;
    int64_t last = r->base + r->length - 1; /* newest input index held */
    /* outputs this call: centre + (phase + k M) // L + half <= last */
    int64_t n = 0;
    if (r->centre + r->half <= last) {
        int64_t available = last - r->half - r->centre;
        n = (available * r->L + r->L - 1 - r->phase) / r->M + 1;
        while (n && r->centre + (r->phase + (n - 1) * r->M) / r->L + r->half > last) n--;
    }
    if (SA_RESERVE(r->out, r->out_capacity, n > 0 ? n : 1))
        return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory resampling");
    for (int64_t k = 0; k < n; k++) {
        const float *x = r->buffer + (r->centre - r->half + 1 - r->base);
        const double *w = r->weights + r->phase * r->taps;
        double sum = 0.0;
        for (int64_t t = 0; t < r->taps; t++) sum += (double)x[t] * w[t];
        r->out[k] = (float)sum;
        r->phase += r->M;
        r->centre += r->phase / r->L;
        r->phase %= r->L;
    }
    int64_t keep = r->centre - r->half; /* oldest index any later output reads */
    if (keep > r->base) {
        int64_t drop = keep - r->base;
        memmove(r->buffer, r->buffer + drop, sizeof(float) * (size_t)(r->length - drop));
        r->length -= drop;
        r->base = keep;
    }
    *out_count = n;
    return SPEECHATTN_OK;
}

speechattn_status sa_resampler_end(sa_resampler *r, int64_t *out_count) {
    return sa_resampler_run(r, NULL, 2 * r->half + 2, out_count);
}

/* ---- public resampler ---- */

struct speechattn_resampler {
    sa_resampler r;
};

speechattn_status speechattn_resampler_create(int32_t input_rate, int32_t output_rate,
                                              speechattn_resampler **resampler) {
    if (!resampler) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "resampler_create: the output pointer is NULL");
    speechattn_resampler *made = calloc(1, sizeof *made);
    if (!made) return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory for a resampler");
    speechattn_status status = sa_resampler_init(&made->r, input_rate, output_rate);
    if (status) {
        free(made);
        return status;
    }
    *resampler = made;
    return SPEECHATTN_OK;
}

void speechattn_resampler_destroy(speechattn_resampler *resampler) {
    if (!resampler) return;
    sa_resampler_free(&resampler->r);
    free(resampler);
}

speechattn_status speechattn_resampler_process(speechattn_resampler *resampler, const float *samples, int64_t count,
                                               const float **out, int64_t *out_count) {
    if (!resampler || !out || !out_count || (!samples && count))
        return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "resampler_process: a NULL pointer");
    if (count < 0) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "resampler_process: count %lld < 0", (long long)count);
    int64_t n;
    speechattn_status status = sa_resampler_run(&resampler->r, samples, count, &n);
    if (status) return status;
    *out = resampler->r.out;
    *out_count = n;
    return SPEECHATTN_OK;
}

speechattn_status speechattn_resampler_flush(speechattn_resampler *resampler, const float **out, int64_t *out_count) {
    if (!resampler || !out || !out_count)
        return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "resampler_flush: a NULL pointer");
    int64_t n;
    speechattn_status status = sa_resampler_end(&resampler->r, &n);
    if (status) return status;
    *out = resampler->r.out;
    *out_count = n;
    return SPEECHATTN_OK;
}
