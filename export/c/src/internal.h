/* libspeechattn internals, shared by the sources in src/, not installed. */
#ifndef SPEECHATTN_INTERNAL_H
#define SPEECHATTN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "speechattn.h"

/* errors.c: set the thread's last error (printf-style) and return the status */
speechattn_status sa_fail(speechattn_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* growable arrays */
void *sa_grow(void *data, int64_t *capacity, int64_t needed, size_t item);
#define SA_RESERVE(ptr, cap, needed) sa_reserve_((void **)&(ptr), &(cap), (needed), sizeof(*(ptr)))
int sa_reserve_(void **data, int64_t *capacity, int64_t needed, size_t item);

/* resample.c */
typedef struct sa_resampler {
    int64_t M, L, half, taps;
    double cutoff;
    double *weights;      /* L x taps */
    float *buffer;        /* inputs from absolute index base on */
    int64_t length, capacity, base;
    int64_t centre, phase;
    float *out;
    int64_t out_capacity;
} sa_resampler;
speechattn_status sa_resampler_init(sa_resampler *r, int64_t input_rate, int64_t output_rate);
void sa_resampler_free(sa_resampler *r);
/* outputs written to r->out; *count set */
speechattn_status sa_resampler_run(sa_resampler *r, const float *samples, int64_t count, int64_t *out_count);
speechattn_status sa_resampler_end(sa_resampler *r, int64_t *out_count);

/* decoder.c: the bigram decoder (decoder.py PhoneDecoder) and the hysteresis segmenter (segments.py Segmenter) */
typedef struct sa_seg {
    int64_t start, end;
    int32_t phone;
    double confidence;
} sa_seg;

typedef struct sa_segs {
    sa_seg *items;
    int64_t count, capacity;
} sa_segs;
int sa_segs_add(sa_segs *list, int64_t start, int64_t end, int32_t phone, double confidence);

typedef struct sa_decoder sa_decoder;
/* transitions: P x P log bigram in the phones' order (NULL for hysteresis) */
speechattn_status sa_decoder_new(int hysteresis, int32_t P, const double *log_bigram, int32_t silence,
                                 int32_t min_frames, int32_t lookahead, double lm_weight, double penalty,
                                 sa_decoder **out);
void sa_decoder_free(sa_decoder *d);
/* appends the segments made final to `out`; 0 on success, -1 out of memory */
int sa_decoder_push(sa_decoder *d, const float *log_probs, int64_t frames, sa_segs *out);
int sa_decoder_finish(sa_decoder *d, sa_segs *out);
int32_t sa_decoder_phone(const sa_decoder *d);
int64_t sa_decoder_start(const sa_decoder *d);
int32_t sa_decoder_run_phone(const sa_decoder *d);

/* visemes.c and the generated viseme_tables.c */
typedef struct sa_viseme_table {
    const char *name;
    int32_t num_shapes;
    const char *const *shapes;
    const char *rest;
    const char *closed_lips;
    int32_t num_phones;
    const char *const *phones; /* phone -> shape (by name) */
    const char *const *phone_shapes;
} sa_viseme_table;
extern const sa_viseme_table sa_viseme_tables[];
extern const int32_t sa_viseme_table_count;

typedef struct sa_run {
    int64_t start, end;
    int32_t shape;
    int bilabial;
} sa_run;

typedef struct sa_cue_maker {
    int32_t rest;
    int32_t min_hold, bridge;
    int32_t *shape_of;  /* per model phone */
    int *bilabial;
    int has_open, has_pending;
    sa_run open, pending;
} sa_cue_maker;

typedef struct sa_cue {
    int64_t start, end;
    int32_t shape;
} sa_cue;

typedef struct sa_cues {
    sa_cue *items;
    int64_t count, capacity;
} sa_cues;

/* the set's shape index of each phone, -1 where the set has none */
speechattn_status sa_shape_indices(int32_t set, const char *const *phones, int32_t P, int32_t *shape_of);
int32_t sa_find_set(const char *name);
int sa_cue_maker_init(sa_cue_maker *m, int32_t set, const char *const *phones, int32_t P, int32_t min_hold,
                      int32_t bridge);
void sa_cue_maker_free(sa_cue_maker *m);
int sa_cue_maker_push(sa_cue_maker *m, const sa_seg *segments, int64_t count, sa_cues *out);
int sa_cue_maker_finish(sa_cue_maker *m, sa_cues *out);
int32_t sa_cue_maker_current(const sa_cue_maker *m);

/* bigram.c: phone-bigram.json reordered to the model's phones (P x P float64); message on failure */
speechattn_status sa_load_bigram(const char *path, const char *const *phones, int32_t P, double **out);

/* files */
speechattn_status sa_check_file(const char *path, const char *what);
speechattn_status sa_read_file(const char *path, const char *what, int64_t max_bytes, char **data, int64_t *size);

#endif
