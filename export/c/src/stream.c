/* A stream: export/pipeline.py's PhoneStream over export/stream_client.py's Stream, step for step: audio at any
 * rate (the kits' resampler), whole hops to the graph in calls of at most 256 frames, the output delay's rows
 * dropped, the frames through the decoder, and with a viseme set the weights and cues. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define MAX_CALL_FRAMES 256
#define MAX_MIN_FRAMES 100
#define MAX_CHANNELS 32
#define PREROLL_SECONDS 1.0
#define PREROLL_SEARCH_SECONDS 4.0
#define PREROLL_GAP_SECONDS 0.2

struct speechattn_stream {
    speechattn_model *m;
    int32_t chunk;
    OrtValue **state;
    float *leftover;           /* < hop samples */
    int64_t leftover_len;
    float *audio;              /* scratch: leftover + the samples of this push */
    int64_t audio_cap;
    float *rows;               /* this call's graph outputs, then the frames they label */
    int64_t rows_cap, rows_count;
    int64_t outputs_to_drop, frames_emitted, nonfinite;
    int finished, started;
    sa_decoder *decoder;
    sa_segs segs;              /* this call's new segments (internal form) */
    speechattn_segment *all_segments;
    int64_t num_segments, segments_cap;
    int32_t set;               /* viseme set, -1 none */
    int32_t num_shapes;
    int32_t *shape_of;
    sa_cue_maker cue_maker;
    sa_cues cues;              /* this call's new cues */
    speechattn_cue *all_cues;
    int64_t num_cues, cues_cap;
    float *weights;
    int64_t weights_cap;
    int have_resampler;
    sa_resampler resampler;
    int32_t input_rate;
    int64_t input_samples;     /* at the input rate, once resampling */
    int64_t samples;           /* at the model's rate */
    float *mono;
    int64_t mono_cap;
    speechattn_update update;
};

speechattn_stream_options speechattn_default_stream_options(void) {
    speechattn_stream_options o;
    memset(&o, 0, sizeof o);
    o.decoder = "bigram";
    o.min_frames = 0;
    o.chunk_frames = 0;
    o.visemes = NULL;
    o.cue_min_hold_frames = 7;
    o.cue_bridge_frames = 10;
    o.decoder_lookahead_frames = 10;
    o.lm_weight = 1.0;
    o.insertion_penalty = 0.0;
    o.phases = 1;
    return o;
}

static speechattn_status check_decoder_options(const speechattn_stream_options *o, int *hysteresis,
                                               int32_t *min_frames) {
    if (!o->decoder || (strcmp(o->decoder, "bigram") && strcmp(o->decoder, "hysteresis")))
        return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "decoder must be one of bigram, hysteresis, not '%.40s'",
                       o->decoder ? o->decoder : "(NULL)");
    *hysteresis = strcmp(o->decoder, "hysteresis") == 0;
    if (o->min_frames < 0 || o->min_frames > MAX_MIN_FRAMES)
        return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "min_frames must be a whole number from 1 to %d (0: the "
                       "decoder's own), not %d", MAX_MIN_FRAMES, o->min_frames);
    *min_frames = o->min_frames ? o->min_frames : (*hysteresis ? 3 : 4);
    if (o->decoder_lookahead_frames < 0 || o->decoder_lookahead_frames > 1000)
        return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "decoder_lookahead_frames must be from 0 to 1000, not %d",
                       o->decoder_lookahead_frames);
    if (!isfinite(o->lm_weight) || !isfinite(o->insertion_penalty))
        return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "lm_weight and insertion_penalty must be finite numbers");
    return SPEECHATTN_OK;
}

void speechattn_stream_destroy(speechattn_stream *s) {
    if (!s) return;
    if (s->state) {
        sa_release_state(s->m, s->state);
        free(s->state);
    }
    free(s->leftover);
    free(s->audio);
    free(s->rows);
    sa_decoder_free(s->decoder);
    free(s->segs.items);
    free(s->all_segments);
    free(s->shape_of);
    sa_cue_maker_free(&s->cue_maker);
    free(s->cues.items);
    free(s->all_cues);
    free(s->weights);
    if (s->have_resampler) sa_resampler_free(&s->resampler);
    free(s->mono);
    free(s);
}

speechattn_status speechattn_stream_create(speechattn_model *model, const speechattn_stream_options *options,
                                           speechattn_stream **stream) {
    if (!model || !stream) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "stream_create: a NULL model or output pointer");
    speechattn_stream_options defaults = speechattn_default_stream_options();
    const speechattn_stream_options *o = options ? options : &defaults;
    int hysteresis;
    int32_t min_frames;
    speechattn_status status = check_decoder_options(o, &hysteresis, &min_frames);
    if (status) return status;
    int32_t chunk = o->chunk_frames ? o->chunk_frames : model->info.default_chunk_frames;
    int allowed = 0;
    for (int32_t i = 0; i < model->num_chunks; i++) allowed |= model->chunks[i] == chunk;
    if (!allowed) {
        char sizes[200] = "";
        for (int32_t i = 0; i < model->num_chunks && strlen(sizes) < 180; i++)
            snprintf(sizes + strlen(sizes), sizeof sizes - strlen(sizes), "%s%d", i ? ", " : "", model->chunks[i]);
        return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "chunk_frames %d is not one the model serves (it was trained "
                       "for [%s])", chunk, sizes);
    }
    int32_t set = -1;
    if (o->visemes && *o->visemes) {
        set = sa_find_set(o->visemes);
        if (set < 0)
            return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "visemes must be one of rhubarb, oculus, vrm, not '%.40s'",
                           o->visemes);
        if (o->cue_min_hold_frames < 1 || o->cue_bridge_frames < 0)
            return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "min_hold_frames must be >= 1 and bridge_frames >= 0");
    }
    if (o->phases != 1)
        return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "phases %d: this library reads one phase (1) for now", o->phases);
    if (!hysteresis && !model->bigram) return sa_fail(SPEECHATTN_ERR_MODEL, "%s", model->bigram_error);
    speechattn_stream *s = calloc(1, sizeof *s);
    if (!s) return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory for a stream");
    s->m = model;
    s->chunk = chunk;
    s->set = set;
    s->outputs_to_drop = model->delay;
    s->leftover = malloc(sizeof(float) * (size_t)model->hop);
    s->state = calloc((size_t)model->num_states + 1, sizeof(OrtValue *));
    if (!s->leftover || !s->state) {
        speechattn_stream_destroy(s);
        return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory for a stream");
    }
    status = sa_initial_state(model, s->state);
    if (!status)
        status = sa_decoder_new(hysteresis, model->P, model->bigram, model->silence, min_frames,
                                o->decoder_lookahead_frames, o->lm_weight, o->insertion_penalty, &s->decoder);
    if (!status && set >= 0) {
        s->num_shapes = sa_viseme_tables[set].num_shapes;
        s->shape_of = malloc(sizeof(int32_t) * (size_t)model->P);
        if (!s->shape_of) status = sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory for a stream");
        if (!status) status = sa_shape_indices(set, (const char *const *)model->phones, model->P, s->shape_of);
        if (!status) {
            int r = sa_cue_maker_init(&s->cue_maker, set, (const char *const *)model->phones, model->P,
                                      o->cue_min_hold_frames, o->cue_bridge_frames);
            if (r == -1) status = sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory for a stream");
            else if (r) status = SPEECHATTN_ERR_MODEL; /* message set */
        }
    }
    if (status) {
        speechattn_stream_destroy(s);
        return status;
    }
    *stream = s;
    return SPEECHATTN_OK;
}

/* ---- the graph: Stream._run / _aligned ---- */

static speechattn_status run(speechattn_stream *s, const float *audio, int64_t count, int final) {
    const speechattn_model *m = s->m;
    int64_t per_call = (MAX_CALL_FRAMES / s->chunk) * s->chunk;
    int64_t step = (s->chunk > per_call ? s->chunk : per_call) * m->hop;
    int64_t before = s->rows_count, made = s->rows_count;
    int64_t pieces = count ? (count + step - 1) / step : 1;
    for (int64_t k = 0; k < pieces; k++) {
        int64_t start = k * step, length = count - start < step ? count - start : step;
        int last = final && k == pieces - 1;
        if (length == 0 && !last) continue;
        speechattn_status status = sa_model_run(m, audio + start, length, s->chunk, last, s->state, &s->rows,
                                                &s->rows_cap, &made);
        if (status) return status;
    }
    int64_t produced = made - before;
    int64_t dropped = s->outputs_to_drop < produced ? s->outputs_to_drop : produced;
    s->outputs_to_drop -= dropped;
    if (dropped)
        memmove(s->rows + before * m->P, s->rows + (before + dropped) * m->P,
                sizeof(float) * (size_t)((produced - dropped) * m->P));
    s->rows_count = made - dropped;
    s->frames_emitted += produced - dropped;
    return SPEECHATTN_OK;
}

/* Stream._check for 16 kHz mono floats: NaN/Inf counted and read as 0, |x| > 2 refused.  In place. */
static speechattn_status check_samples(speechattn_stream *s, float *samples, int64_t count) {
    int64_t bad = 0;
    float peak = 0.0f;
    for (int64_t i = 0; i < count; i++) {
        if (!isfinite(samples[i])) {
            samples[i] = 0.0f;
            bad++;
        }
        float a = fabsf(samples[i]);
        if (a > peak) peak = a;
    }
    s->nonfinite += bad;
    if (peak > 2.0f)
        return sa_fail(SPEECHATTN_ERR_AUDIO, "float audio must lie in [-1, 1] but reaches %.1f: integer PCM passed as "
                       "float? divide by 32768", (double)peak);
    return SPEECHATTN_OK;
}

/* Stream.push of 16 kHz mono samples (checked in place). */
static speechattn_status stream_push(speechattn_stream *s, float *samples, int64_t count) {
    speechattn_status status = check_samples(s, samples, count);
    if (status) return status;
    s->started = 1;
    int64_t hop = s->m->hop, total = s->leftover_len + count;
    if (SA_RESERVE(s->audio, s->audio_cap, total > 0 ? total : 1))
        return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory for %lld samples", (long long)count);
    memcpy(s->audio, s->leftover, sizeof(float) * (size_t)s->leftover_len);
    if (count) memcpy(s->audio + s->leftover_len, samples, sizeof(float) * (size_t)count);
    int64_t usable = total / hop * hop;
    s->leftover_len = total - usable;
    memcpy(s->leftover, s->audio + usable, sizeof(float) * (size_t)s->leftover_len);
    return run(s, s->audio, usable, 0);
}

/* Stream.finish: the last partial hop zero-padded, the output delay's frames of silence, the last chunk. */
static speechattn_status stream_finish(speechattn_stream *s) {
    int64_t hop = s->m->hop;
    int64_t total = (s->leftover_len ? hop : 0) + (int64_t)s->m->delay * hop;
    if (SA_RESERVE(s->audio, s->audio_cap, total > 0 ? total : 1))
        return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory");
    memset(s->audio, 0, sizeof(float) * (size_t)(total > 0 ? total : 1));
    memcpy(s->audio, s->leftover, sizeof(float) * (size_t)s->leftover_len);
    s->leftover_len = 0;
    speechattn_status status = run(s, s->audio, total, 1);
    s->finished = 1;
    return status;
}

/* ---- decoding: PhoneStream._update of this call's frames ---- */

static speechattn_status decode(speechattn_stream *s, int64_t first_frame, int final) {
    const speechattn_model *m = s->m;
    int32_t P = m->P;
    double seconds = m->info.frame_shift_ms / 1000.0;
    s->segs.count = 0;
    s->cues.count = 0;
    if (sa_decoder_push(s->decoder, s->rows, s->rows_count, &s->segs) ||
        (final && sa_decoder_finish(s->decoder, &s->segs)))
        return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory decoding");
    int64_t first_segment = s->num_segments;
    if (SA_RESERVE(s->all_segments, s->segments_cap, s->num_segments + s->segs.count + 1))
        return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory decoding");
    for (int64_t i = 0; i < s->segs.count; i++) {
        const sa_seg *g = &s->segs.items[i];
        speechattn_segment *out = &s->all_segments[s->num_segments++];
        out->start_frame = g->start;
        out->end_frame = g->end;
        out->phone = g->phone;
        out->phone_name = m->phones[g->phone];
        out->start = (double)g->start * seconds;
        out->end = (double)g->end * seconds;
        out->confidence = g->confidence;
    }
    int64_t first_cue = s->num_cues;
    if (s->set >= 0) {
        if (SA_RESERVE(s->weights, s->weights_cap, (s->rows_count + 1) * s->num_shapes))
            return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory for mouth weights");
        double sums[64];
        for (int64_t f = 0; f < s->rows_count; f++) { /* visemes.py frame_weights */
            for (int32_t k = 0; k < s->num_shapes; k++) sums[k] = 0.0;
            for (int32_t p = 0; p < P; p++) sums[s->shape_of[p]] += exp((double)s->rows[f * P + p]);
            double total = 0.0;
            for (int32_t k = 0; k < s->num_shapes; k++) total += sums[k];
            if (total < 1e-12) total = 1e-12;
            for (int32_t k = 0; k < s->num_shapes; k++) s->weights[f * s->num_shapes + k] = (float)(sums[k] / total);
        }
        if (sa_cue_maker_push(&s->cue_maker, s->segs.items, s->segs.count, &s->cues) ||
            (final && sa_cue_maker_finish(&s->cue_maker, &s->cues)))
            return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory for cues");
        if (SA_RESERVE(s->all_cues, s->cues_cap, s->num_cues + s->cues.count + 1))
            return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory for cues");
        const sa_viseme_table *t = &sa_viseme_tables[s->set];
        for (int64_t i = 0; i < s->cues.count; i++) {
            const sa_cue *c = &s->cues.items[i];
            speechattn_cue *out = &s->all_cues[s->num_cues++];
            out->start_frame = c->start;
            out->end_frame = c->end;
            out->shape = c->shape;
            out->shape_name = t->shapes[c->shape];
            out->start = (double)c->start * seconds;
            out->end = (double)c->end * seconds;
        }
    }
    speechattn_update *u = &s->update;
    u->first_frame = first_frame;
    u->num_frames = (int32_t)s->rows_count;
    u->num_phones = P;
    u->log_probs = s->rows;
    u->num_shapes = s->set >= 0 ? s->num_shapes : 0;
    u->weights = s->set >= 0 ? s->weights : NULL;
    u->num_segments = (int32_t)(s->num_segments - first_segment);
    u->segments = s->all_segments + first_segment;
    u->num_cues = (int32_t)(s->num_cues - first_cue);
    u->cues = s->all_cues ? s->all_cues + first_cue : NULL;
    return SPEECHATTN_OK;
}

/* ---- push ---- */

static speechattn_status push(speechattn_stream *s, const float *f32, const int16_t *i16, int64_t frames,
                              int32_t channels, int32_t rate, const speechattn_update **update) {
    if (!s) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "push: the stream is NULL");
    if (frames < 0) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "push: a negative sample count (%lld)", (long long)frames);
    if (frames && !f32 && !i16) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "push: the samples pointer is NULL");
    if (s->finished) return sa_fail(SPEECHATTN_ERR_STATE, "this stream is finished; start a new one");
    if (channels < 1 || channels > MAX_CHANNELS)
        return sa_fail(SPEECHATTN_ERR_AUDIO, "channels must be from 1 to %d, not %d", MAX_CHANNELS, channels);
    if (rate < 1 || rate > 768000)
        return sa_fail(SPEECHATTN_ERR_AUDIO, "sample rates must be whole numbers from 1 to 768000 Hz, not %d", rate);
    if (frames > (INT64_MAX / 4) / channels)
        return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "push: %lld samples is too many", (long long)frames);
    const speechattn_model *m = s->m;
    int resample = 0;
    if (rate == m->sample_rate) {
        if (s->have_resampler)
            return sa_fail(SPEECHATTN_ERR_AUDIO, "a stream's audio keeps one sample rate: this one began at %d Hz",
                           s->input_rate);
    } else if (!s->have_resampler) {
        if (s->samples)
            return sa_fail(SPEECHATTN_ERR_AUDIO, "a stream's audio keeps one sample rate: this one began at %d Hz",
                           m->sample_rate);
        speechattn_status status = sa_resampler_init(&s->resampler, rate, m->sample_rate);
        if (status) return status;
        s->have_resampler = 1;
        s->input_rate = rate;
        resample = 1;
    } else if (rate != s->input_rate) {
        return sa_fail(SPEECHATTN_ERR_AUDIO, "a stream's audio keeps one sample rate: this one began at %d Hz",
                       s->input_rate);
    } else {
        resample = 1;
    }
    if (!s->input_rate) s->input_rate = rate;
    /* to mono float32: int16 / 32768, channels averaged in float64 (stream_client.py mono) */
    if (SA_RESERVE(s->mono, s->mono_cap, frames + 1))
        return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory for %lld samples", (long long)frames);
    for (int64_t i = 0; i < frames; i++) {
        if (channels == 1) {
            s->mono[i] = f32 ? f32[i] : (float)i16[i] / 32768.0f;
            continue;
        }
        double sum = 0.0;
        for (int32_t c = 0; c < channels; c++)
            sum += f32 ? (double)f32[i * channels + c] : (double)((float)i16[i * channels + c] / 32768.0f);
        s->mono[i] = (float)(sum / channels);
    }
    float *samples = s->mono;
    int64_t count = frames;
    if (resample) {
        speechattn_status status = sa_resampler_run(&s->resampler, s->mono, frames, &count);
        if (status) return status;
        s->input_samples += frames;
        samples = s->resampler.out;
    }
    s->samples += count;
    s->rows_count = 0;
    int64_t first = s->frames_emitted;
    speechattn_status status = stream_push(s, samples, count);
    if (!status) status = decode(s, first, 0);
    if (!status && update) *update = &s->update;
    return status;
}

speechattn_status speechattn_stream_push_f32(speechattn_stream *stream, const float *samples, int64_t frames,
                                             int32_t channels, int32_t sample_rate, const speechattn_update **update) {
    return push(stream, samples ? samples : NULL, NULL, frames, channels, sample_rate, update);
}

speechattn_status speechattn_stream_push_i16(speechattn_stream *stream, const int16_t *samples, int64_t frames,
                                             int32_t channels, int32_t sample_rate, const speechattn_update **update) {
    if (stream && frames > 0 && !samples)
        return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "push: the samples pointer is NULL");
    static const int16_t none[1] = {0};
    return push(stream, NULL, samples ? samples : none, frames, channels, sample_rate, update);
}

speechattn_status speechattn_stream_finish(speechattn_stream *s, const speechattn_update **update) {
    if (!s) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "finish: the stream is NULL");
    if (s->finished)
        return sa_fail(SPEECHATTN_ERR_STATE, "this stream is already finished; its last update came from the first "
                       "finish()");
    s->rows_count = 0;
    int64_t first = s->frames_emitted;
    speechattn_status status = SPEECHATTN_OK;
    if (s->have_resampler) { /* the resampler's last outputs, cut to the signal's length */
        int64_t n;
        status = sa_resampler_end(&s->resampler, &n);
        if (status) return status;
        double exact = (double)(s->input_samples * (int64_t)s->m->sample_rate) / (double)s->input_rate;
        int64_t expected = (int64_t)nearbyint(exact);
        int64_t want = expected - s->samples;
        if (want < 0) want = 0;
        if (n > want) n = want;
        status = stream_push(s, s->resampler.out, n);
        s->samples += n;
    }
    if (!status) status = stream_finish(s);
    s->finished = 1;
    if (!status) status = decode(s, first, 1);
    if (!status && update) *update = &s->update;
    return status;
}

speechattn_status speechattn_stream_prime(speechattn_stream *s, const float *samples, int64_t count) {
    if (!s) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "prime: the stream is NULL");
    if (count < 0) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "prime: a negative sample count (%lld)", (long long)count);
    if (count && !samples) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "prime: the samples pointer is NULL");
    if (s->started || s->finished)
        return sa_fail(SPEECHATTN_ERR_STATE, "prime() comes before the stream's first push, once");
    if (count % s->m->hop)
        return sa_fail(SPEECHATTN_ERR_AUDIO, "a pre-roll is whole hops of %d samples, not %lld", s->m->hop,
                       (long long)count);
    if (SA_RESERVE(s->audio, s->audio_cap, count + 1)) return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory");
    if (count) memcpy(s->audio, samples, sizeof(float) * (size_t)count);
    speechattn_status status = check_samples(s, s->audio, count);
    if (status) return status;
    s->started = 1;
    s->outputs_to_drop += count / s->m->hop;
    s->rows_count = 0;
    if (count) status = run(s, s->audio, count, 0);
    s->rows_count = 0; /* all dropped: a pre-roll labels no frame */
    return status;
}

speechattn_status speechattn_stream_prime_file(speechattn_stream *s, const float *head, int64_t count) {
    if (!s) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "prime_file: the stream is NULL");
    if (count < 0) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "prime_file: a negative sample count (%lld)", (long long)count);
    if (count && !head) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "prime_file: the samples pointer is NULL");
    const speechattn_model *m = s->m;
    if (!m->info.starts_empty) return speechattn_stream_prime(s, NULL, 0);
    /* stream_client.py preroll: the loudest second of the first four (float64 energy over windows every hop, the
     * first of equals), then 0.2 s of zeros */
    int64_t hop = m->hop, rate = m->sample_rate;
    int64_t n = (int64_t)(PREROLL_SEARCH_SECONDS * rate);
    if (count < n) n = count;
    int64_t window = (int64_t)(PREROLL_SECONDS * rate) / hop * hop;
    int64_t gap = (int64_t)(PREROLL_GAP_SECONDS * rate) / hop * hop;
    float *clean = malloc(sizeof(float) * (size_t)(n + 1));
    double *energy = malloc(sizeof(double) * (size_t)(n + 1));
    float *preroll = malloc(sizeof(float) * (size_t)(window + gap + n + 1));
    if (!clean || !energy || !preroll) {
        free(clean);
        free(energy);
        free(preroll);
        return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int64_t i = 0; i < n; i++) clean[i] = isfinite(head[i]) ? head[i] : 0.0f;
    int64_t start = 0, length;
    if (n <= window) {
        length = n / hop * hop;
    } else {
        energy[0] = 0.0;
        for (int64_t i = 0; i < n; i++) energy[i + 1] = energy[i] + (double)clean[i] * (double)clean[i];
        double best = -INFINITY;
        for (int64_t k = 0; window + k * hop <= n; k++) {
            double e = energy[window + k * hop] - energy[k * hop];
            if (e > best) {
                best = e;
                start = k * hop;
            }
        }
        length = window;
    }
    int64_t total = 0;
    if (length) {
        memcpy(preroll, clean + start, sizeof(float) * (size_t)length);
        memset(preroll + length, 0, sizeof(float) * (size_t)gap);
        total = length + gap;
    }
    speechattn_status status = speechattn_stream_prime(s, preroll, total);
    free(clean);
    free(energy);
    free(preroll);
    return status;
}

speechattn_status speechattn_stream_segments(speechattn_stream *s, const speechattn_segment **segments,
                                             int64_t *count) {
    if (!s || !segments || !count) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "stream_segments: a NULL pointer");
    *segments = s->all_segments;
    *count = s->num_segments;
    return SPEECHATTN_OK;
}

speechattn_status speechattn_stream_cues(speechattn_stream *s, const speechattn_cue **cues, int64_t *count) {
    if (!s || !cues || !count) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "stream_cues: a NULL pointer");
    if (s->set < 0)
        return sa_fail(SPEECHATTN_ERR_STATE, "this stream makes no cues: open it with options.visemes = a set");
    *cues = s->all_cues;
    *count = s->num_cues;
    return SPEECHATTN_OK;
}

speechattn_status speechattn_stream_provisional(const speechattn_stream *s, speechattn_provisional *out) {
    if (!s || !out) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "stream_provisional: a NULL pointer");
    int32_t open = sa_decoder_phone(s->decoder), now = sa_decoder_run_phone(s->decoder);
    out->open_phone = open;
    out->open_phone_name = open >= 0 ? s->m->phones[open] : NULL;
    out->open_start_frame = open >= 0 ? sa_decoder_start(s->decoder) : -1;
    out->now_phone = now;
    out->now_phone_name = now >= 0 ? s->m->phones[now] : NULL;
    out->current_shape = s->set >= 0 ? sa_cue_maker_current(&s->cue_maker) : -1;
    out->current_shape_name = s->set >= 0 ? sa_viseme_tables[s->set].shapes[out->current_shape] : NULL;
    return SPEECHATTN_OK;
}

speechattn_status speechattn_stream_get_info(const speechattn_stream *s, speechattn_stream_info *out) {
    if (!s || !out) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "stream_get_info: a NULL pointer");
    out->chunk_frames = s->chunk;
    out->sample_rate = s->input_rate;
    out->samples = s->samples;
    out->duration_seconds = (double)s->samples / s->m->sample_rate;
    out->frames = s->frames_emitted;
    out->nonfinite_samples = s->nonfinite;
    out->finished = s->finished;
    out->visemes = s->set >= 0 ? speechattn_viseme_set_at(s->set) : NULL;
    return SPEECHATTN_OK;
}

/* ---- decoders alone ---- */

struct speechattn_decoder {
    sa_decoder *d;
    char **phones;
    int32_t P;
    sa_segs segs;
    speechattn_segment *out;
    int64_t out_cap;
};

void speechattn_decoder_destroy(speechattn_decoder *decoder) {
    if (!decoder) return;
    sa_decoder_free(decoder->d);
    for (int32_t i = 0; decoder->phones && i < decoder->P; i++) free(decoder->phones[i]);
    free(decoder->phones);
    free(decoder->segs.items);
    free(decoder->out);
    free(decoder);
}

speechattn_status speechattn_decoder_create(const char *const *phones, int32_t num_phones, const char *bigram_path,
                                            const speechattn_stream_options *options, speechattn_decoder **decoder) {
    if (!phones || !decoder) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "decoder_create: a NULL pointer");
    if (num_phones < 1 || num_phones > 10000)
        return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "decoder_create: %d phones", num_phones);
    speechattn_stream_options defaults = speechattn_default_stream_options();
    const speechattn_stream_options *o = options ? options : &defaults;
    int hysteresis;
    int32_t min_frames;
    speechattn_status status = check_decoder_options(o, &hysteresis, &min_frames);
    if (status) return status;
    speechattn_decoder *made = calloc(1, sizeof *made);
    if (!made || !(made->phones = calloc((size_t)num_phones, sizeof(char *)))) {
        free(made);
        return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory for a decoder");
    }
    int32_t silence = -1;
    for (int32_t i = 0; i < num_phones; i++) {
        if (!phones[i]) {
            speechattn_decoder_destroy(made);
            return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "decoder_create: phone %d is NULL", i);
        }
        size_t n = strlen(phones[i]) + 1;
        made->phones[i] = malloc(n);
        made->P = i + 1;
        if (!made->phones[i]) {
            speechattn_decoder_destroy(made);
            return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory for a decoder");
        }
        memcpy(made->phones[i], phones[i], n);
        if (!strcmp(phones[i], "sil")) silence = i;
    }
    double *bigram = NULL;
    if (!hysteresis) {
        if (silence < 0) {
            speechattn_decoder_destroy(made);
            return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "the bigram decoder needs a phone named sil");
        }
        status = sa_load_bigram(bigram_path, phones, num_phones, &bigram);
        if (status) {
            speechattn_decoder_destroy(made);
            return status;
        }
    }
    status = sa_decoder_new(hysteresis, num_phones, bigram, silence, min_frames, o->decoder_lookahead_frames,
                            o->lm_weight, o->insertion_penalty, &made->d);
    free(bigram);
    if (status) {
        speechattn_decoder_destroy(made);
        return status;
    }
    *decoder = made;
    return SPEECHATTN_OK;
}

static speechattn_status decoder_out(speechattn_decoder *decoder, const speechattn_segment **segments, int32_t *count) {
    if (SA_RESERVE(decoder->out, decoder->out_cap, decoder->segs.count + 1))
        return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory decoding");
    for (int64_t i = 0; i < decoder->segs.count; i++) {
        const sa_seg *g = &decoder->segs.items[i];
        speechattn_segment *o = &decoder->out[i];
        o->start_frame = g->start;
        o->end_frame = g->end;
        o->phone = g->phone;
        o->phone_name = decoder->phones[g->phone];
        o->start = (double)g->start * 0.01;
        o->end = (double)g->end * 0.01;
        o->confidence = g->confidence;
    }
    *segments = decoder->out;
    *count = (int32_t)decoder->segs.count;
    return SPEECHATTN_OK;
}

speechattn_status speechattn_decoder_push(speechattn_decoder *decoder, const float *log_probs, int64_t frames,
                                          const speechattn_segment **segments, int32_t *count) {
    if (!decoder || !segments || !count || (frames && !log_probs))
        return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "decoder_push: a NULL pointer");
    if (frames < 0) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "decoder_push: a negative frame count");
    decoder->segs.count = 0;
    if (sa_decoder_push(decoder->d, log_probs, frames, &decoder->segs))
        return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory decoding");
    return decoder_out(decoder, segments, count);
}

speechattn_status speechattn_decoder_finish(speechattn_decoder *decoder, const speechattn_segment **segments,
                                            int32_t *count) {
    if (!decoder || !segments || !count) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "decoder_finish: a NULL pointer");
    decoder->segs.count = 0;
    if (sa_decoder_finish(decoder->d, &decoder->segs))
        return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory decoding");
    return decoder_out(decoder, segments, count);
}
