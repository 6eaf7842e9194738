/* tests/test_native_c.py's driver: one recording through libspeechattn in the given push sizes, everything it made
 * printed as JSON at full precision (segments and cues of each update and at the end, the provisional view, the
 * stream's counts), the frames' weights written to a file.
 *
 *     conformance MODEL AUDIO.raw s16|f32 RATE CHANNELS SIZES.txt DECODER VISEMES|- CHUNK THREADS HEAD.f32|- WEIGHTS|- */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "speechattn.h"

static void *slurp(const char *path, long *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *size = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *data = malloc((size_t)*size + 1);
    if (data && fread(data, 1, (size_t)*size, f) != (size_t)*size) *size = 0;
    fclose(f);
    return data;
}

static int failed(const char *what) {
    printf("{\"error\": \"%s: %s\"}\n", what, speechattn_last_error());
    return 1;
}

static void print_update(const speechattn_update *u) {
    printf("{\"first_frame\": %lld, \"frames\": %d, \"segments\": [", (long long)u->first_frame, u->num_frames);
    for (int32_t i = 0; i < u->num_segments; i++)
        printf("%s[%lld, %lld, %d, %.17g]", i ? ", " : "", (long long)u->segments[i].start_frame,
               (long long)u->segments[i].end_frame, u->segments[i].phone, u->segments[i].confidence);
    printf("], \"cues\": [");
    for (int32_t i = 0; i < u->num_cues; i++)
        printf("%s[%lld, %lld, \"%s\"]", i ? ", " : "", (long long)u->cues[i].start_frame,
               (long long)u->cues[i].end_frame, u->cues[i].shape_name);
    printf("]}");
}

int main(int argc, char **argv) {
    if (argc != 13) {
        fprintf(stderr, "usage: conformance MODEL AUDIO FORMAT RATE CHANNELS SIZES DECODER VISEMES CHUNK THREADS HEAD "
                        "WEIGHTS\n");
        return 2;
    }
    int is_float = !strcmp(argv[3], "f32");
    int32_t rate = atoi(argv[4]), channels = atoi(argv[5]);
    long size = 0, sizes_bytes = 0;
    char *data = slurp(argv[2], &size);
    char *sizes = slurp(argv[6], &sizes_bytes);
    if (!data || !sizes) return 2;
    sizes[sizes_bytes] = 0;
    speechattn_model_options mo = speechattn_default_model_options();
    mo.num_threads = atoi(argv[10]);
    speechattn_model *model;
    if (speechattn_model_create(argv[1], &mo, &model)) return failed("model");
    speechattn_stream_options so = speechattn_default_stream_options();
    so.decoder = argv[7];
    so.visemes = strcmp(argv[8], "-") ? argv[8] : NULL;
    so.chunk_frames = atoi(argv[9]);
    speechattn_stream *stream;
    if (speechattn_stream_create(model, &so, &stream)) return failed("stream");
    if (strcmp(argv[11], "-")) {
        long head_bytes = 0;
        float *head = slurp(argv[11], &head_bytes);
        if (speechattn_stream_prime_file(stream, head, head_bytes / 4)) return failed("prime");
        free(head);
    }
    FILE *weights = strcmp(argv[12], "-") ? fopen(argv[12], "wb") : NULL;
    int64_t frames = size / ((is_float ? 4 : 2) * channels), at = 0;
    printf("{\"updates\": [");
    char *cursor = sizes;
    int first = 1;
    for (;;) {
        char *end;
        long long n = strtoll(cursor, &end, 10);
        const speechattn_update *u;
        int done = end == cursor;
        if (done) n = frames - at;
        if (n > frames - at) n = frames - at;
        speechattn_status s = is_float ? speechattn_stream_push_f32(stream, (float *)data + at * channels, n, channels,
                                                                    rate, &u)
                                       : speechattn_stream_push_i16(stream, (int16_t *)data + at * channels, n,
                                                                    channels, rate, &u);
        if (s) return failed("push");
        at += n;
        printf("%s", first ? "" : ", ");
        first = 0;
        print_update(u);
        if (weights && u->weights) fwrite(u->weights, sizeof(float), (size_t)u->num_frames * u->num_shapes, weights);
        speechattn_provisional p;
        speechattn_stream_provisional(stream, &p);
        if (done) break;
        cursor = end;
    }
    const speechattn_update *u;
    if (speechattn_stream_finish(stream, &u)) return failed("finish");
    printf(", ");
    print_update(u);
    if (weights && u->weights) fwrite(u->weights, sizeof(float), (size_t)u->num_frames * u->num_shapes, weights);
    if (weights) fclose(weights);
    const speechattn_segment *segments;
    int64_t count;
    speechattn_stream_segments(stream, &segments, &count);
    printf("], \"segments\": [");
    for (int64_t i = 0; i < count; i++)
        printf("%s[%lld, %lld, %d, %.17g]", i ? ", " : "", (long long)segments[i].start_frame,
               (long long)segments[i].end_frame, segments[i].phone, segments[i].confidence);
    printf("], \"cues\": [");
    const speechattn_cue *cues;
    if (so.visemes && speechattn_stream_cues(stream, &cues, &count) == SPEECHATTN_OK)
        for (int64_t i = 0; i < count; i++)
            printf("%s[%lld, %lld, \"%s\"]", i ? ", " : "", (long long)cues[i].start_frame,
                   (long long)cues[i].end_frame, cues[i].shape_name);
    speechattn_stream_info info;
    speechattn_stream_get_info(stream, &info);
    printf("], \"samples\": %lld, \"frames\": %lld, \"nonfinite\": %lld}\n", (long long)info.samples,
           (long long)info.frames, (long long)info.nonfinite_samples);
    speechattn_stream_destroy(stream);
    speechattn_model_destroy(model);
    free(data);
    free(sizes);
    return 0;
}
