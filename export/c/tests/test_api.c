/* libspeechattn's failures and threads: every refused input returns its status and a message and crashes nothing;
 * streams on one model from many threads give the single-thread result.  Prints `ok NAME` or `FAIL NAME: ...`
 * a line; status 1 if anything failed.
 *
 *     test_api MODEL.onnx OTHER.onnx AUDIO_16K_S16.raw THREADS */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "speechattn.h"

static int failures;

static void expect(const char *name, speechattn_status got, speechattn_status want) {
    const char *message = speechattn_last_error();
    if (got != want || (want != SPEECHATTN_OK && (!message || !*message))) {
        printf("FAIL %s: %s (%s), expected %s\n", name, speechattn_status_name(got), message,
               speechattn_status_name(want));
        failures++;
    } else {
        printf("ok %s%s%s\n", name, want ? ": " : "", want ? message : "");
    }
}

static void truth(const char *name, int condition) {
    printf("%s %s\n", condition ? "ok" : "FAIL", name);
    failures += !condition;
}

static int16_t *audio;
static int64_t audio_frames;
static speechattn_model *shared;

typedef struct result {
    int64_t count;
    speechattn_segment segments[4096];
    unsigned seed;
    speechattn_status status;
} result;

static void *transcribe(void *arg) { /* one stream over the shared model, pushed in pieces of random sizes */
    result *r = arg;
    speechattn_stream *stream;
    speechattn_stream_options o = speechattn_default_stream_options();
    o.visemes = "vrm";
    r->status = speechattn_stream_create(shared, &o, &stream);
    if (r->status) return NULL;
    for (int64_t at = 0; at < audio_frames && !r->status;) {
        int64_t n = 1 + rand_r(&r->seed) % 4000;
        if (n > audio_frames - at) n = audio_frames - at;
        r->status = speechattn_stream_push_i16(stream, audio + at, n, 1, 16000, NULL);
        at += n;
    }
    const speechattn_segment *segments;
    if (!r->status) r->status = speechattn_stream_finish(stream, NULL);
    if (!r->status) r->status = speechattn_stream_segments(stream, &segments, &r->count);
    if (!r->status && r->count <= 4096) memcpy(r->segments, segments, sizeof *segments * (size_t)r->count);
    speechattn_stream_destroy(stream);
    return NULL;
}

static int same(const result *a, const result *b) {
    if (a->count != b->count) return 0;
    for (int64_t i = 0; i < a->count; i++)
        if (a->segments[i].start_frame != b->segments[i].start_frame ||
            a->segments[i].end_frame != b->segments[i].end_frame || a->segments[i].phone != b->segments[i].phone ||
            a->segments[i].confidence != b->segments[i].confidence)
            return 0;
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 5) return 2;
    const char *path = argv[1], *other = argv[2];
    int threads = atoi(argv[4]);
    FILE *f = fopen(argv[3], "rb");
    if (!f) return 2;
    fseek(f, 0, SEEK_END);
    audio_frames = ftell(f) / 2;
    fseek(f, 0, SEEK_SET);
    audio = malloc(sizeof(int16_t) * (size_t)audio_frames);
    if (fread(audio, 2, (size_t)audio_frames, f) != (size_t)audio_frames) return 2;
    fclose(f);

    truth("version", !strcmp(speechattn_version(), "0.1.0") && speechattn_abi_version() == SPEECHATTN_ABI_VERSION);
    truth("status names", !strcmp(speechattn_status_name(SPEECHATTN_ERR_AUDIO), "SPEECHATTN_ERR_AUDIO") &&
                              !strcmp(speechattn_status_name((speechattn_status)99), "SPEECHATTN_ERR_UNKNOWN"));

    /* models */
    speechattn_model *model = NULL;
    speechattn_model_options mo = speechattn_default_model_options();
    expect("model: NULL path", speechattn_model_create(NULL, NULL, &model), SPEECHATTN_ERR_INVALID_ARGUMENT);
    expect("model: NULL output", speechattn_model_create(path, NULL, NULL), SPEECHATTN_ERR_INVALID_ARGUMENT);
    expect("model: missing file", speechattn_model_create("/nonexistent/model.onnx", NULL, &model), SPEECHATTN_ERR_FILE);
    expect("model: a directory", speechattn_model_create("/tmp", NULL, &model), SPEECHATTN_ERR_FILE);
    expect("model: a device", speechattn_model_create("/dev/null", NULL, &model), SPEECHATTN_ERR_FILE);
    mo.num_threads = -1;
    expect("model: num_threads -1", speechattn_model_create(path, &mo, &model), SPEECHATTN_ERR_INVALID_ARGUMENT);
    mo.num_threads = 1;
    expect("model: another ONNX file (no speechattn metadata)", speechattn_model_create(other, &mo, &model),
           SPEECHATTN_ERR_MODEL);
    char truncated[] = "/tmp/speechattn-truncated-XXXXXX", garbage[] = "/tmp/speechattn-garbage-XXXXXX";
    { /* the first half of the model, and text */
        FILE *in = fopen(path, "rb");
        fseek(in, 0, SEEK_END);
        long n = ftell(in) / 2;
        fseek(in, 0, SEEK_SET);
        char *bytes = malloc((size_t)n);
        if (fread(bytes, 1, (size_t)n, in) != (size_t)n) return 2;
        fclose(in);
        int fd = mkstemp(truncated);
        if (write(fd, bytes, (size_t)n) != n) return 2;
        close(fd);
        free(bytes);
        fd = mkstemp(garbage);
        if (write(fd, "not a model\n", 12) != 12) return 2;
        close(fd);
    }
    expect("model: truncated file", speechattn_model_create(truncated, &mo, &model), SPEECHATTN_ERR_MODEL);
    expect("model: a text file", speechattn_model_create(garbage, &mo, &model), SPEECHATTN_ERR_MODEL);
    mo.bigram_path = garbage;
    expect("model: a bigram that is no bigram", speechattn_model_create(path, &mo, &model), SPEECHATTN_ERR_MODEL);
    mo.bigram_path = NULL;
    unlink(truncated);
    unlink(garbage);
    truth("model: nothing written on failure", model == NULL);
    expect("model: opens", speechattn_model_create(path, &mo, &model), SPEECHATTN_OK);
    const speechattn_model_info *info;
    expect("model info: NULL", speechattn_model_get_info(NULL, &info), SPEECHATTN_ERR_INVALID_ARGUMENT);
    expect("model info", speechattn_model_get_info(model, &info), SPEECHATTN_OK);
    truth("model info: 40 phones at 16 kHz", info->num_phones == 40 && info->sample_rate == 16000 &&
                                                 !strcmp(info->phones[0], "sil") && info->has_bigram);

    /* stream options */
    speechattn_stream *stream = NULL;
    speechattn_stream_options o = speechattn_default_stream_options();
    expect("stream: NULL model", speechattn_stream_create(NULL, &o, &stream), SPEECHATTN_ERR_INVALID_ARGUMENT);
    expect("stream: NULL output", speechattn_stream_create(model, &o, NULL), SPEECHATTN_ERR_INVALID_ARGUMENT);
    o.decoder = "viterbi";
    expect("stream: unknown decoder", speechattn_stream_create(model, &o, &stream), SPEECHATTN_ERR_INVALID_ARGUMENT);
    o.decoder = NULL;
    expect("stream: NULL decoder", speechattn_stream_create(model, &o, &stream), SPEECHATTN_ERR_INVALID_ARGUMENT);
    o = speechattn_default_stream_options();
    o.min_frames = 101;
    expect("stream: min_frames 101", speechattn_stream_create(model, &o, &stream), SPEECHATTN_ERR_INVALID_ARGUMENT);
    o = speechattn_default_stream_options();
    o.chunk_frames = 3;
    expect("stream: chunk 3", speechattn_stream_create(model, &o, &stream), SPEECHATTN_ERR_INVALID_ARGUMENT);
    o = speechattn_default_stream_options();
    o.visemes = "bogus";
    expect("stream: unknown viseme set", speechattn_stream_create(model, &o, &stream), SPEECHATTN_ERR_INVALID_ARGUMENT);
    o.visemes = "rhubarb";
    o.cue_min_hold_frames = 0;
    expect("stream: cue hold 0", speechattn_stream_create(model, &o, &stream), SPEECHATTN_ERR_INVALID_ARGUMENT);
    o = speechattn_default_stream_options();
    o.phases = 2;
    expect("stream: phases 2", speechattn_stream_create(model, &o, &stream), SPEECHATTN_ERR_INVALID_ARGUMENT);
    truth("stream: nothing written on failure", stream == NULL);
    truth("viseme sets", speechattn_viseme_set_count() == 3 && speechattn_viseme_set("oculus")->num_shapes == 15 &&
                             speechattn_viseme_set("nope") == NULL && speechattn_viseme_set_at(3) == NULL);

    /* pushes */
    o = speechattn_default_stream_options();
    expect("stream: opens", speechattn_stream_create(model, &o, &stream), SPEECHATTN_OK);
    const speechattn_update *u = NULL;
    float loud[320], nan_piece[320], zeros[320];
    for (int i = 0; i < 320; i++) {
        loud[i] = 3.0f;
        zeros[i] = 0.0f;
        nan_piece[i] = i % 3 ? NAN : INFINITY;
    }
    expect("push: NULL stream", speechattn_stream_push_f32(NULL, loud, 10, 1, 16000, &u), SPEECHATTN_ERR_INVALID_ARGUMENT);
    expect("push: NULL samples", speechattn_stream_push_f32(stream, NULL, 10, 1, 16000, &u), SPEECHATTN_ERR_INVALID_ARGUMENT);
    expect("push: NULL int16 samples", speechattn_stream_push_i16(stream, NULL, 10, 1, 16000, &u),
           SPEECHATTN_ERR_INVALID_ARGUMENT);
    expect("push: negative count", speechattn_stream_push_f32(stream, loud, -1, 1, 16000, &u),
           SPEECHATTN_ERR_INVALID_ARGUMENT);
    expect("push: rate 0", speechattn_stream_push_f32(stream, zeros, 10, 1, 0, &u), SPEECHATTN_ERR_AUDIO);
    expect("push: rate -8000", speechattn_stream_push_f32(stream, zeros, 10, 1, -8000, &u), SPEECHATTN_ERR_AUDIO);
    expect("push: rate 10 MHz", speechattn_stream_push_f32(stream, zeros, 10, 1, 10000000, &u), SPEECHATTN_ERR_AUDIO);
    expect("push: 0 channels", speechattn_stream_push_f32(stream, zeros, 10, 0, 16000, &u), SPEECHATTN_ERR_AUDIO);
    expect("push: 33 channels", speechattn_stream_push_f32(stream, zeros, 1, 33, 16000, &u), SPEECHATTN_ERR_AUDIO);
    expect("push: floats beyond 2 (integer PCM as float)", speechattn_stream_push_f32(stream, loud, 320, 1, 16000, &u),
           SPEECHATTN_ERR_AUDIO);
    truth("push: no update written on failure", u == NULL);
    expect("push: NaN and Inf read as silence", speechattn_stream_push_f32(stream, nan_piece, 320, 1, 16000, &u),
           SPEECHATTN_OK);
    speechattn_stream_info si;
    speechattn_stream_get_info(stream, &si);
    truth("push: NaN and Inf counted", si.nonfinite_samples == 320);
    expect("push: zero samples", speechattn_stream_push_f32(stream, zeros, 0, 1, 16000, &u), SPEECHATTN_OK);
    expect("push: another rate mid-stream", speechattn_stream_push_f32(stream, zeros, 10, 1, 8000, &u),
           SPEECHATTN_ERR_AUDIO);
    expect("prime: after a push", speechattn_stream_prime(stream, zeros, 160), SPEECHATTN_ERR_STATE);
    const speechattn_cue *cues;
    int64_t count;
    expect("cues: a stream without visemes", speechattn_stream_cues(stream, &cues, &count), SPEECHATTN_ERR_STATE);
    expect("segments: NULL output", speechattn_stream_segments(stream, NULL, &count), SPEECHATTN_ERR_INVALID_ARGUMENT);
    expect("provisional: NULL output", speechattn_stream_provisional(stream, NULL), SPEECHATTN_ERR_INVALID_ARGUMENT);
    expect("finish: NULL stream", speechattn_stream_finish(NULL, &u), SPEECHATTN_ERR_INVALID_ARGUMENT);
    expect("finish", speechattn_stream_finish(stream, &u), SPEECHATTN_OK);
    expect("finish: twice", speechattn_stream_finish(stream, &u), SPEECHATTN_ERR_STATE);
    expect("push: after finish", speechattn_stream_push_f32(stream, zeros, 10, 1, 16000, &u), SPEECHATTN_ERR_STATE);
    speechattn_stream_destroy(stream);
    speechattn_stream_destroy(NULL);

    /* NaN read as 0: the same segments as zeros there */
    {
        speechattn_stream *a, *b;
        float *x = malloc(sizeof(float) * (size_t)audio_frames), *y = malloc(sizeof(float) * (size_t)audio_frames);
        for (int64_t i = 0; i < audio_frames; i++) x[i] = y[i] = audio[i] / 32768.0f;
        for (int64_t i = 1000; i < 1400 && i < audio_frames; i++) {
            x[i] = i % 2 ? NAN : -INFINITY;
            y[i] = 0.0f;
        }
        speechattn_stream_create(model, NULL, &a);
        speechattn_stream_create(model, NULL, &b);
        speechattn_stream_push_f32(a, x, audio_frames, 1, 16000, NULL);
        speechattn_stream_push_f32(b, y, audio_frames, 1, 16000, NULL);
        speechattn_stream_finish(a, NULL);
        speechattn_stream_finish(b, NULL);
        const speechattn_segment *sa, *sb;
        int64_t na, nb;
        speechattn_stream_segments(a, &sa, &na);
        speechattn_stream_segments(b, &sb, &nb);
        int equal = na == nb && na > 0;
        for (int64_t i = 0; equal && i < na; i++)
            equal = sa[i].start_frame == sb[i].start_frame && sa[i].phone == sb[i].phone &&
                    sa[i].confidence == sb[i].confidence;
        truth("NaN/Inf samples give what zeros give", equal);
        speechattn_stream_destroy(a);
        speechattn_stream_destroy(b);
        free(x);
        free(y);
    }

    /* decoders and resamplers */
    speechattn_decoder *decoder = NULL;
    const char *phones[2] = {"sil", "AA"};
    expect("decoder: NULL phones", speechattn_decoder_create(NULL, 2, NULL, NULL, &decoder), SPEECHATTN_ERR_INVALID_ARGUMENT);
    expect("decoder: missing bigram", speechattn_decoder_create(phones, 2, "/nonexistent.json", NULL, &decoder),
           SPEECHATTN_ERR_FILE);
    speechattn_resampler *resampler = NULL;
    expect("resampler: rate 0", speechattn_resampler_create(0, 16000, &resampler), SPEECHATTN_ERR_AUDIO);
    expect("resampler: too many phases", speechattn_resampler_create(767999, 768000, &resampler), SPEECHATTN_ERR_AUDIO);
    expect("resampler", speechattn_resampler_create(8000, 16000, &resampler), SPEECHATTN_OK);
    const float *out;
    expect("resampler: negative count", speechattn_resampler_process(resampler, zeros, -5, &out, &count),
           SPEECHATTN_ERR_INVALID_ARGUMENT);
    speechattn_resampler_destroy(resampler);

    /* threads: one model, a stream per thread, each the single-thread result */
    shared = model;
    result *reference = calloc(1, sizeof(result)), *results = calloc((size_t)threads, sizeof(result));
    reference->seed = 7;
    transcribe(reference);
    truth("threads: the reference stream", reference->status == SPEECHATTN_OK && reference->count > 5);
    pthread_t *ids = malloc(sizeof(pthread_t) * (size_t)threads);
    for (int t = 0; t < threads; t++) {
        results[t].seed = 100 + (unsigned)t;
        pthread_create(&ids[t], NULL, transcribe, &results[t]);
    }
    int all_same = 1;
    for (int t = 0; t < threads; t++) {
        pthread_join(ids[t], NULL);
        all_same = all_same && results[t].status == SPEECHATTN_OK && same(&results[t], reference);
    }
    char name[80];
    snprintf(name, sizeof name, "threads: %d streams at once on one model give the single-thread result", threads);
    truth(name, all_same);
    free(ids);
    free(results);
    free(reference);
    speechattn_model_destroy(model);
    speechattn_model_destroy(NULL);
    free(audio);
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
