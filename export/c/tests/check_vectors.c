/* tests/segmenter-vectors.json through libspeechattn's decoders, as export/node/check-vectors.mjs runs them through
 * the JavaScript ones: every case's frames pushed in its push sizes, the segments compared (frames and phones
 * exactly, confidences within the file's confidence_tolerance).  One line per disagreement; status 1 if any.
 *
 *     check_vectors tests/segmenter-vectors.json export/models/phone-bigram.json */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cJSON.h"
#include "speechattn.h"

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    if (text && fread(text, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (text) text[n] = 0;
    fclose(f);
    return text;
}

static int number(const cJSON *object, const char *key, int fallback) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(object, key);
    return cJSON_IsNumber(v) ? v->valueint : fallback;
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    char *text = slurp(argv[1]);
    cJSON *vectors = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!vectors) return 2;
    double tolerance = cJSON_GetObjectItemCaseSensitive(vectors, "confidence_tolerance")->valuedouble;
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(vectors, "cases"), *c;
    int total = 0, agree = 0;
    cJSON_ArrayForEach(c, cases) {
        total++;
        const char *name = cJSON_GetObjectItemCaseSensitive(c, "name")->valuestring;
        const cJSON *phones = cJSON_GetObjectItemCaseSensitive(c, "phones"), *options =
            cJSON_GetObjectItemCaseSensitive(c, "options");
        int P = cJSON_GetArraySize(phones);
        const char **names = malloc(sizeof(char *) * (size_t)P);
        for (int i = 0; i < P; i++) names[i] = cJSON_GetArrayItem(phones, i)->valuestring;
        speechattn_stream_options o = speechattn_default_stream_options();
        o.decoder = cJSON_GetObjectItemCaseSensitive(c, "decoder")->valuestring;
        o.min_frames = number(options, "minFrames", 0);
        o.decoder_lookahead_frames = number(options, "lookaheadFrames", 10);
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(options, "lmWeight"),
                    *pen = cJSON_GetObjectItemCaseSensitive(options, "insertionPenalty");
        if (cJSON_IsNumber(w)) o.lm_weight = w->valuedouble;
        if (cJSON_IsNumber(pen)) o.insertion_penalty = pen->valuedouble;
        speechattn_decoder *decoder;
        if (speechattn_decoder_create(names, P, argv[2], &o, &decoder)) {
            printf("%s: %s\n", name, speechattn_last_error());
            free(names);
            continue;
        }
        const cJSON *rows = cJSON_GetObjectItemCaseSensitive(c, "log_probs"), *row;
        int T = cJSON_GetArraySize(rows), t = 0;
        float *values = malloc(sizeof(float) * (size_t)(T * P + 1));
        cJSON_ArrayForEach(row, rows) {
            for (int p = 0; p < P; p++) values[t * P + p] = (float)cJSON_GetArrayItem(row, p)->valuedouble;
            t++;
        }
        /* the segments of every push, then of finish */
        int cap = 1024, got = 0, position = 0;
        speechattn_segment *all = malloc(sizeof *all * (size_t)cap);
        const speechattn_segment *segments;
        int32_t n;
        const cJSON *pushes = cJSON_GetObjectItemCaseSensitive(c, "pushes"), *size;
        cJSON_ArrayForEach(size, pushes) {
            int count = size->valueint < T - position ? size->valueint : T - position;
            speechattn_decoder_push(decoder, values + position * P, count, &segments, &n);
            for (int i = 0; i < n && got < cap; i++) all[got++] = segments[i];
            position += count;
        }
        speechattn_decoder_push(decoder, values + position * P, T - position, &segments, &n);
        for (int i = 0; i < n && got < cap; i++) all[got++] = segments[i];
        speechattn_decoder_finish(decoder, &segments, &n);
        for (int i = 0; i < n && got < cap; i++) all[got++] = segments[i];
        const cJSON *expected = cJSON_GetObjectItemCaseSensitive(c, "segments");
        int ok = 1;
        if (cJSON_GetArraySize(expected) != got) {
            printf("%s: %d segments, expected %d\n", name, got, cJSON_GetArraySize(expected));
            ok = 0;
        }
        for (int i = 0; ok && i < got; i++) {
            const cJSON *e = cJSON_GetArrayItem(expected, i);
            if (all[i].start_frame != number(e, "startFrame", -1) || all[i].end_frame != number(e, "endFrame", -1) ||
                all[i].phone != number(e, "phone", -1) ||
                fabs(all[i].confidence - cJSON_GetObjectItemCaseSensitive(e, "confidence")->valuedouble) > tolerance) {
                printf("%s: segment %d is [%lld, %lld, %d, %.17g], expected %s\n", name, i,
                       (long long)all[i].start_frame, (long long)all[i].end_frame, all[i].phone, all[i].confidence,
                       cJSON_PrintUnformatted(e));
                ok = 0;
            }
        }
        agree += ok;
        free(all);
        free(values);
        free(names);
        speechattn_decoder_destroy(decoder);
    }
    printf("%d of %d cases agree\n", agree, total);
    cJSON_Delete(vectors);
    return agree == total && total > 0 ? 0 : 1;
}
