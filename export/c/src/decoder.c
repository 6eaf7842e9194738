/* Frame posteriors -> phone segments: export/decoder.py's PhoneDecoder (a streaming Viterbi search over a phone loop
 * with a bigram, final after `lookahead` frames) and export/segments.py's Segmenter (hysteresis), step for step in
 * float64 (the same comparisons, ties to the first index as numpy's argmax), so the labels are the kits'. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct sa_decoder {
    int hysteresis;
    int32_t P, D;          /* phones; chain states per phone (min_frames) */
    int64_t frame;         /* frames pushed */
    int32_t phone;         /* the open segment's phone, -1 none */
    int64_t start;
    double posterior_sum;
    int32_t run_phone;
    double *row;           /* P: scratch, float64 */
    double *scratch_row;   /* P: the frame being pushed (hysteresis), float64 */
    /* bigram */
    int32_t K;             /* lookahead + 1 frames kept */
    int32_t lookahead;
    int32_t silence;
    double *transitions;   /* P x P, (from, to) */
    double *scores;        /* P x D, NULL-equivalent while have_scores is 0 */
    int have_scores;
    double *scratch;       /* P x D */
    int32_t *backs;        /* K x (P x D) ring */
    double *rows;          /* K x P ring of posteriors */
    int32_t kept;          /* frames in the rings */
    int32_t head;          /* ring index of the oldest */
    int64_t final;
    int32_t *states, *states2;  /* P x D */
    int32_t *phones_out;   /* K */
    /* hysteresis */
    int32_t min_frames;
    int64_t run_start;
    double *run_rows;      /* min_frames x P */
    int32_t run_count;
};

int sa_segs_add(sa_segs *list, int64_t start, int64_t end, int32_t phone, double confidence) {
    if (SA_RESERVE(list->items, list->capacity, list->count + 1)) return -1;
    sa_seg *s = &list->items[list->count++];
    s->start = start;
    s->end = end;
    s->phone = phone;
    s->confidence = confidence;
    return 0;
}

void sa_decoder_free(sa_decoder *d) {
    if (!d) return;
    free(d->row);
    free(d->scratch_row);
    free(d->transitions);
    free(d->scores);
    free(d->scratch);
    free(d->backs);
    free(d->rows);
    free(d->states);
    free(d->states2);
    free(d->phones_out);
    free(d->run_rows);
    free(d);
}

speechattn_status sa_decoder_new(int hysteresis, int32_t P, const double *log_bigram, int32_t silence,
                                 int32_t min_frames, int32_t lookahead, double lm_weight, double penalty,
                                 sa_decoder **out) {
    if (P < 1) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "a decoder needs at least one phone");
    if (min_frames < 1 || lookahead < 0 || lookahead > 100000)
        return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "min_frames must be >= 1 and lookahead_frames >= 0");
    sa_decoder *d = calloc(1, sizeof *d);
    if (!d) return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory for a decoder");
    d->hysteresis = hysteresis;
    d->P = P;
    d->phone = -1;
    d->run_phone = -1;
    d->row = malloc(sizeof(double) * (size_t)P);
    int ok = d->row != NULL;
    if (hysteresis) {
        d->min_frames = min_frames;
        d->run_rows = malloc(sizeof(double) * (size_t)P * (size_t)min_frames);
        d->scratch_row = malloc(sizeof(double) * (size_t)P);
        ok = ok && d->run_rows && d->scratch_row;
    } else {
        int32_t D = min_frames, K = lookahead + 1;
        size_t PD = (size_t)P * (size_t)D;
        d->D = D;
        d->K = K;
        d->lookahead = lookahead;
        d->silence = silence;
        d->transitions = malloc(sizeof(double) * (size_t)P * (size_t)P);
        d->scores = malloc(sizeof(double) * PD);
        d->scratch = malloc(sizeof(double) * PD);
        d->backs = malloc(sizeof(int32_t) * PD * (size_t)K);
        d->rows = malloc(sizeof(double) * (size_t)P * (size_t)K);
        d->states = malloc(sizeof(int32_t) * PD);
        d->states2 = malloc(sizeof(int32_t) * PD);
        d->phones_out = malloc(sizeof(int32_t) * (size_t)K);
        ok = ok && d->transitions && d->scores && d->scratch && d->backs && d->rows && d->states && d->states2 &&
             d->phones_out;
        if (ok)
            for (int32_t i = 0; i < P; i++)
                for (int32_t j = 0; j < P; j++)
                    d->transitions[i * P + j] = i == j ? -INFINITY : lm_weight * log_bigram[i * P + j] - penalty;
    }
    if (!ok) {
        sa_decoder_free(d);
        return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory for a decoder");
    }
    *out = d;
    return SPEECHATTN_OK;
}

int32_t sa_decoder_phone(const sa_decoder *d) { return d->phone; }
int64_t sa_decoder_start(const sa_decoder *d) { return d->start; }
int32_t sa_decoder_run_phone(const sa_decoder *d) { return d->run_phone; }

/* ---- bigram ---- */

static int32_t *back_at(sa_decoder *d, int32_t i) { /* i-th kept frame, oldest first */
    return d->backs + (size_t)((d->head + i) % d->K) * (size_t)d->P * (size_t)d->D;
}
static double *row_at(sa_decoder *d, int32_t i) {
    return d->rows + (size_t)((d->head + i) % d->K) * (size_t)d->P;
}

static int32_t argmax(const double *x, int64_t n) { /* numpy's argmax: the first of equals */
    int64_t best = 0;
    for (int64_t i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return (int32_t)best;
}

static void bigram_step(sa_decoder *d, const double *row) {
    int32_t P = d->P, D = d->D;
    int32_t *back;
    if (d->kept == d->K) { /* the ring is full: the oldest goes */
        d->head = (d->head + 1) % d->K;
        d->kept--;
    }
    back = d->backs + (size_t)((d->head + d->kept) % d->K) * (size_t)P * (size_t)D;
    double *posteriors = d->rows + (size_t)((d->head + d->kept) % d->K) * (size_t)P;
    double *new = d->scratch, *old = d->scores;
    if (!d->have_scores) {
        for (int32_t p = 0; p < P; p++) {
            for (int32_t s = 0; s < D; s++) {
                new[p * D + s] = -INFINITY;
                back[p * D + s] = -1;
            }
            new[p * D] = d->transitions[d->silence * P + p];
        }
        new[d->silence * D + D - 1] = 0.0;
    } else {
        for (int32_t to = 0; to < P; to++) { /* entering: old[from, D-1] + transitions[from, to], first max */
            int32_t source = 0;
            double best = old[D - 1] + d->transitions[to];
            for (int32_t from = 1; from < P; from++) {
                double v = old[from * D + D - 1] + d->transitions[from * P + to];
                if (v > best) {
                    best = v;
                    source = from;
                }
            }
            new[to * D] = best;
            back[to * D] = source * D + D - 1;
        }
        if (D > 1) {
            for (int32_t p = 0; p < P; p++) {
                for (int32_t s = 1; s < D; s++) {
                    new[p * D + s] = old[p * D + s - 1];
                    back[p * D + s] = p * D + s - 1;
                }
                int stay = old[p * D + D - 1] >= old[p * D + D - 2];
                new[p * D + D - 1] = stay ? old[p * D + D - 1] : old[p * D + D - 2];
                back[p * D + D - 1] = stay ? p * D + D - 1 : p * D + D - 2;
            }
        } else {
            for (int32_t p = 0; p < P; p++) {
                int stay = old[p] >= new[p];
                if (stay) {
                    new[p] = old[p];
                    back[p] = p;
                }
            }
        }
    }
    double top = -INFINITY;
    int first = 1;
    for (int32_t p = 0; p < P; p++)
        for (int32_t s = 0; s < D; s++) {
            double v = new[p * D + s] + row[p];
            new[p * D + s] = v;
            if (first || v > top) top = v;
            first = 0;
        }
    for (int64_t i = 0; i < (int64_t)P * D; i++) new[i] -= top;
    d->scratch = d->scores;
    d->scores = new;
    d->have_scores = 1;
    for (int32_t p = 0; p < P; p++) posteriors[p] = exp(row[p]);
    d->kept++;
    d->frame++;
    d->run_phone = argmax(d->scores, (int64_t)P * D) / D;
}

static int finalise(sa_decoder *d, const int32_t *phones, int32_t n, sa_segs *out) {
    int32_t pending = (int32_t)(d->frame - d->final);
    for (int32_t i = 0; i < n; i++) {
        const double *posteriors = row_at(d, d->kept - pending + i);
        int32_t phone = phones[i];
        if (phone != d->phone) {
            if (d->phone >= 0 &&
                sa_segs_add(out, d->start, d->final, d->phone, d->posterior_sum / (double)(d->final - d->start)))
                return -1;
            d->phone = phone;
            d->start = d->final;
            d->posterior_sum = 0.0;
        }
        d->posterior_sum += posteriors[phone];
        d->final++;
    }
    return 0;
}

static int32_t commit(sa_decoder *d, int32_t count) {
    int32_t PD = d->P * d->D;
    int32_t *states = d->states, *next = d->states2;
    for (int32_t i = 0; i < PD; i++) states[i] = i;
    /* the newest count - 1 back-pointers, newest first */
    for (int32_t j = d->kept - 1; j >= d->kept - count + 1; j--) {
        const int32_t *back = back_at(d, j);
        for (int32_t i = 0; i < PD; i++) next[i] = back[states[i]];
        int32_t *t = states;
        states = next;
        next = t;
    }
    int32_t kept = states[argmax(d->scores, PD)];
    for (int32_t i = 0; i < PD; i++)
        if (states[i] != kept) d->scores[i] = -INFINITY;
    return kept;
}

static int32_t trace(sa_decoder *d, int32_t count) { /* into phones_out, oldest first */
    int32_t state = argmax(d->scores, (int64_t)d->P * d->D);
    for (int32_t k = 0; k < count; k++) {
        int32_t j = d->kept - 1 - k;
        d->phones_out[count - 1 - k] = state / d->D;
        if (k + 1 < count) state = back_at(d, j)[state];
    }
    return count;
}

/* ---- hysteresis ---- */

static void absorb_run(sa_decoder *d) {
    for (int32_t i = 0; i < d->run_count; i++) d->posterior_sum += d->run_rows[(size_t)i * d->P + d->phone];
    d->run_phone = -1;
    d->run_count = 0;
}

static int close_segment(sa_decoder *d, int64_t end, sa_segs *out) {
    int64_t frames = end - d->start;
    int r = sa_segs_add(out, d->start, end, d->phone, d->posterior_sum / (double)(frames > 1 ? frames : 1));
    d->posterior_sum = 0.0;
    return r;
}

static int hysteresis_step(sa_decoder *d, const double *row, sa_segs *out) {
    int32_t P = d->P;
    double *posteriors = d->row; /* exp(row), float64 */
    for (int32_t p = 0; p < P; p++) posteriors[p] = exp(row[p]);
    int32_t best = argmax(posteriors, P);
    if (d->phone < 0) { /* the stream's first frame */
        d->phone = best;
        d->start = d->frame;
    }
    if (best == d->run_phone) {
        memcpy(d->run_rows + (size_t)d->run_count * P, posteriors, sizeof(double) * (size_t)P);
        d->run_count++;
    } else { /* the previous run ended unconfirmed: its frames stay in the current segment */
        absorb_run(d);
        d->run_phone = best;
        d->run_start = d->frame;
        memcpy(d->run_rows, posteriors, sizeof(double) * (size_t)P);
        d->run_count = 1;
    }
    d->frame++;
    if (d->run_phone == d->phone) {
        absorb_run(d);
    } else if (d->run_count >= d->min_frames) {
        if (close_segment(d, d->run_start, out)) return -1;
        d->phone = d->run_phone;
        d->start = d->run_start;
        absorb_run(d);
    }
    return 0;
}

/* ---- both ---- */

int sa_decoder_push(sa_decoder *d, const float *log_probs, int64_t frames, sa_segs *out) {
    int32_t P = d->P;
    double *row = d->hysteresis ? d->scratch_row : d->row;
    for (int64_t f = 0; f < frames; f++) {
        for (int32_t p = 0; p < P; p++) row[p] = (double)log_probs[f * P + p];
        if (d->hysteresis) {
            if (hysteresis_step(d, row, out)) return -1;
            continue;
        }
        bigram_step(d, row);
        int32_t count = (int32_t)(d->frame - d->final);
        if (count > d->lookahead) {
            int32_t phone = commit(d, count) / d->D;
            if (finalise(d, &phone, 1, out)) return -1;
        }
    }
    return 0;
}

int sa_decoder_finish(sa_decoder *d, sa_segs *out) {
    if (d->hysteresis) {
        if (d->phone < 0 || d->frame == d->start) return 0;
        absorb_run(d);
        int r = close_segment(d, d->frame, out);
        d->phone = -1;
        return r;
    }
    if (d->frame > d->final) {
        int32_t count = (int32_t)(d->frame - d->final);
        trace(d, count);
        if (finalise(d, d->phones_out, count, out)) return -1;
    }
    if (d->phone >= 0 && d->final > d->start &&
        sa_segs_add(out, d->start, d->final, d->phone, d->posterior_sum / (double)(d->final - d->start)))
        return -1;
    d->phone = -1;
    return 0;
}
