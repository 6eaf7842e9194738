/* speechattn-c: stream audio files through libspeechattn and print their phones, as `speechattn transcribe` does.
 *
 *     speechattn-c [--model M.onnx] [--decoder bigram|hysteresis] [--min-frames N] [--chunk-frames N]
 *                  [--visemes rhubarb|oculus|vrm] [--json] [--threads N] [--raw RATE:s16|f32:CHANNELS] FILE...
 *
 * A WAV file (16-bit PCM or 32-bit float, any rate, any channels: downmixed and resampled by the library) or, with
 * --raw, headerless little-endian samples.  Prints `FILE: PH PH PH` (the phones but silence), or with --json one
 * JSON object a line: each phone segment {"start", "end", "phone", "confidence"} and with --visemes each mouth cue
 * {"start", "end", "value"}, as `speechattn transcribe --format json` / visemes-json give them.  Status 1 and one
 * line on standard error for a file or model that fails, 2 for a usage error.
 *
 * It is also the library's worked example: open a model, open a stream per file, push pieces, finish, read. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "speechattn.h"

#define PIECE_FRAMES 1280 /* pushed at a time (80 ms at 16 kHz), as Node's transcribe.mjs */

typedef struct audio {
    int32_t rate, channels, is_float; /* is_float: f32 samples, else s16 */
    int64_t frames;
    void *data;                       /* frames x channels, interleaved */
} audio;

static uint32_t u32(const unsigned char *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t u16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }

static unsigned char *read_all(const char *path, long *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *data = NULL;
    long n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            unsigned char *grown = realloc(data, (size_t)cap);
            if (!grown) break;
            data = grown;
        }
        size_t got = fread(data + n, 1, (size_t)(cap - n), f);
        n += (long)got;
        if (got == 0) break;
    }
    fclose(f);
    *size = n;
    return data;
}

/* A tiny WAV reader: PCM 16-bit (format 1) or IEEE float 32-bit (format 3), plain or WAVE_FORMAT_EXTENSIBLE. */
static const char *read_wav(const unsigned char *bytes, long size, audio *out) {
    if (size < 12 || memcmp(bytes, "RIFF", 4) || memcmp(bytes + 8, "WAVE", 4)) return "not a WAV file (no RIFF/WAVE header)";
    int have_format = 0, format = 0, bits = 0;
    for (long at = 12; at + 8 <= size;) {
        uint32_t length = u32(bytes + at + 4);
        const unsigned char *body = bytes + at + 8;
        long room = size - at - 8;
        if (!memcmp(bytes + at, "fmt ", 4) && length >= 16 && room >= 16) {
            format = u16(body);
            out->channels = u16(body + 2);
            out->rate = (int32_t)u32(body + 4);
            bits = u16(body + 14);
            if (format == 0xFFFE && length >= 26 && room >= 26) format = u16(body + 24);
            have_format = 1;
        } else if (!memcmp(bytes + at, "data", 4)) {
            if (!have_format) return "the data chunk comes before the fmt chunk";
            if (!((format == 1 && bits == 16) || (format == 3 && bits == 32)))
                return "only 16-bit PCM and 32-bit float WAV files are read";
            if (out->channels < 1) return "no channels";
            long usable = (long)length < room ? (long)length : room; /* a truncated file: what is there */
            int width = bits / 8 * out->channels;
            out->is_float = format == 3;
            out->frames = usable / width;
            out->data = malloc((size_t)(out->frames * width) + 1);
            if (!out->data) return "out of memory";
            memcpy(out->data, body, (size_t)(out->frames * width)); /* little-endian host assumed */
            return NULL;
        }
        at += 8 + (long)length + (length & 1);
    }
    return "no data chunk";
}

static void json_string(const char *text) {
    putchar('"');
    for (const char *c = text; *c; c++) {
        if (*c == '"' || *c == '\\') printf("\\%c", *c);
        else if ((unsigned char)*c < 0x20) printf("\\u%04x", *c);
        else putchar(*c);
    }
    putchar('"');
}

/* The head of a file at the model's rate, mono: what speechattn_stream_prime_file chooses a pre-roll from. */
static float *model_rate_head(const audio *a, int32_t rate, int64_t *count) {
    int64_t frames = a->frames < (int64_t)a->rate * 4 ? a->frames : (int64_t)a->rate * 4;
    float *mono = malloc(sizeof(float) * (size_t)(frames + 1));
    for (int64_t i = 0; i < frames; i++) {
        double sum = 0;
        for (int32_t c = 0; c < a->channels; c++) {
            int64_t k = i * a->channels + c;
            sum += a->is_float ? ((const float *)a->data)[k] : ((const int16_t *)a->data)[k] / 32768.0f;
        }
        float x = (float)(sum / a->channels);
        mono[i] = x > 1.0f ? 1.0f : x < -1.0f ? -1.0f : x; /* transcribe clips the head it chooses from */
    }
    if (a->rate == rate) {
        *count = frames;
        return mono;
    }
    speechattn_resampler *r;
    const float *out;
    int64_t n = 0;
    float *head = NULL;
    if (speechattn_resampler_create(a->rate, rate, &r) == SPEECHATTN_OK) {
        speechattn_resampler_process(r, mono, frames, &out, &n);
        head = malloc(sizeof(float) * (size_t)(n + 1));
        memcpy(head, out, sizeof(float) * (size_t)n);
        speechattn_resampler_destroy(r);
    }
    free(mono);
    *count = head ? n : 0;
    return head;
}

#define USAGE                                                                                                         \
    "usage: speechattn-c [--model M.onnx] [--decoder bigram|hysteresis] [--min-frames N] [--chunk-frames N] "          \
    "[--visemes SET] [--json] [--threads N] [--raw RATE:s16|f32:CHANNELS] FILE...\n"
#define DEFAULT_MODEL "export/models/default-int8.onnx"

/* A usage error: one line, what is wrong then the value quoted, status 2. */
static int usage_error(const char *what, const char *value) {
    if (value) fprintf(stderr, "speechattn-c: %s '%s' (--help for usage)\n", what, value);
    else fprintf(stderr, "speechattn-c: %s (--help for usage)\n", what);
    return 2;
}

/* A whole decimal number in [low, high], or a usage error. */
static int number(const char *option, const char *text, long low, long high, int32_t *out) {
    char *end;
    long n = strtol(text, &end, 10);
    if (!*text || *end || n < low || n > high) {
        fprintf(stderr, "speechattn-c: %s takes a whole number from %ld to %ld, not '%s'\n", option, low, high, text);
        return 0;
    }
    *out = (int32_t)n;
    return 1;
}

/* --raw RATE:s16|f32:CHANNELS into a (its rate, channels and sample type), 0 when it is not that. */
static int raw_format(const char *raw, audio *a) {
    char format[8] = "", extra;
    if (sscanf(raw, "%d:%7[^:]:%d%c", &a->rate, format, &a->channels, &extra) != 3 || a->rate < 1 || a->channels < 1 ||
        (strcmp(format, "s16") && strcmp(format, "f32")))
        return 0;
    a->is_float = !strcmp(format, "f32");
    return 1;
}

int main(int argc, char **argv) {
    const char *model_path = DEFAULT_MODEL, *raw = NULL;
    speechattn_stream_options options = speechattn_default_stream_options();
    speechattn_model_options model_options = speechattn_default_model_options();
    int json = 0, first_file = argc, status = 0;
    audio raw_audio = {0, 1, 0, 0, NULL};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        int takes_value = !strcmp(arg, "--model") || !strcmp(arg, "--decoder") || !strcmp(arg, "--visemes") ||
                          !strcmp(arg, "--min-frames") || !strcmp(arg, "--chunk-frames") || !strcmp(arg, "--threads") ||
                          !strcmp(arg, "--raw");
        if (takes_value && !value) return usage_error("a value is needed after", arg);
        if (takes_value) i++;
        if (!strcmp(arg, "--json")) json = 1;
        else if (!strcmp(arg, "--model")) model_path = value;
        else if (!strcmp(arg, "--decoder")) {
            if (strcmp(value, "bigram") && strcmp(value, "hysteresis"))
                return usage_error("--decoder must be one of bigram, hysteresis, not", value);
            options.decoder = value;
        } else if (!strcmp(arg, "--visemes")) {
            if (!speechattn_viseme_set(value)) return usage_error("--visemes must be one of rhubarb, oculus, vrm, not", value);
            options.visemes = value;
        } else if (!strcmp(arg, "--min-frames")) {
            if (!number(arg, value, 1, 100, &options.min_frames)) return 2;
        } else if (!strcmp(arg, "--chunk-frames")) {
            if (!number(arg, value, 1, 4096, &options.chunk_frames)) return 2;
        } else if (!strcmp(arg, "--threads")) {
            if (!number(arg, value, 0, 256, &model_options.num_threads)) return 2;
        } else if (!strcmp(arg, "--raw")) {
            if (!raw_format(value, &raw_audio)) return usage_error("--raw takes RATE:s16|f32:CHANNELS, not", value);
            raw = value;
        } else if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            fputs(USAGE, stdout); /* asked: the usage on stdout, exit 0 */
            return 0;
        } else if (arg[0] == '-' && arg[1]) {
            return usage_error("no such option:", arg);
        } else {
            first_file = i;
            break;
        }
    }
    if (first_file >= argc) return usage_error("no audio file given", NULL);
    for (int i = first_file; i < argc; i++) /* a file named like an option is given as ./-name */
        if (argv[i][0] == '-' && argv[i][1]) return usage_error("options go before the files:", argv[i]);
    speechattn_model *model;
    if (speechattn_model_create(model_path, &model_options, &model) != SPEECHATTN_OK) {
        FILE *probe = model_path == (const char *)DEFAULT_MODEL ? fopen(model_path, "rb") : NULL;
        int default_missing = model_path == (const char *)DEFAULT_MODEL && !probe;
        if (probe) fclose(probe);
        fprintf(stderr, "speechattn-c: %s%s\n", speechattn_last_error(),
                default_missing ? " (the default, relative to the clone's root: run from there or give --model M.onnx)"
                                : "");
        return 1;
    }
    speechattn_stream *check = NULL; /* the options against the model (--chunk-frames it does not serve): usage */
    if (speechattn_stream_create(model, &options, &check) != SPEECHATTN_OK) {
        fprintf(stderr, "speechattn-c: %s (--help for usage)\n", speechattn_last_error());
        speechattn_model_destroy(model);
        return 2;
    }
    speechattn_stream_destroy(check);
    const speechattn_model_info *info;
    speechattn_model_get_info(model, &info);
    for (int f = first_file; f < argc; f++) {
        const char *path = argv[f];
        long size = 0;
        unsigned char *bytes = read_all(path, &size);
        audio a = {0, 1, 0, 0, NULL};
        const char *problem = bytes ? NULL : "cannot read the file";
        if (bytes && raw) {
            a = raw_audio;
            a.frames = size / ((a.is_float ? 4 : 2) * a.channels);
            a.data = bytes;
            bytes = NULL;
        } else if (bytes) {
            problem = read_wav(bytes, size, &a);
        }
        free(bytes);
        speechattn_stream *stream = NULL;
        if (!problem && speechattn_stream_create(model, &options, &stream) != SPEECHATTN_OK)
            problem = speechattn_last_error();
        if (!problem && info->starts_empty) { /* file-int8: the file's pre-roll first, as transcribe gives it */
            int64_t n;
            float *head = model_rate_head(&a, info->sample_rate, &n);
            if (speechattn_stream_prime_file(stream, head, n) != SPEECHATTN_OK) problem = speechattn_last_error();
            free(head);
        }
        for (int64_t at = 0; !problem && at < a.frames; at += PIECE_FRAMES) {
            int64_t n = a.frames - at < PIECE_FRAMES ? a.frames - at : PIECE_FRAMES;
            speechattn_status s =
                a.is_float ? speechattn_stream_push_f32(stream, (const float *)a.data + at * a.channels, n, a.channels,
                                                        a.rate, NULL)
                           : speechattn_stream_push_i16(stream, (const int16_t *)a.data + at * a.channels, n,
                                                        a.channels, a.rate, NULL);
            if (s != SPEECHATTN_OK) problem = speechattn_last_error();
        }
        if (!problem && speechattn_stream_finish(stream, NULL) != SPEECHATTN_OK) problem = speechattn_last_error();
        char corrupt[160];
        speechattn_stream_info read;
        if (!problem && speechattn_stream_get_info(stream, &read) == SPEECHATTN_OK && read.nonfinite_samples > 0) {
            /* the library reads them as silence and counts them; a file holding them is corrupt, as transcribe says */
            snprintf(corrupt, sizeof corrupt, "%lld sample%s NaN or infinite; the file is corrupt",
                     (long long)read.nonfinite_samples, read.nonfinite_samples == 1 ? " is" : "s are");
            problem = corrupt;
        }
        if (problem) {
            fprintf(stderr, "speechattn-c: %s: %s\n", path, problem);
            status = 1;
        } else {
            const speechattn_segment *segments;
            int64_t count;
            speechattn_stream_info si;
            speechattn_stream_segments(stream, &segments, &count);
            speechattn_stream_get_info(stream, &si);
            if (!json) printf("%s:", path);
            for (int64_t i = 0; i < count; i++) { /* as segment_dicts: the end clipped to the audio, 3 decimals */
                double start = round(segments[i].start * 1000) / 1000;
                double end = segments[i].end < si.duration_seconds ? segments[i].end : si.duration_seconds;
                end = round(end * 1000) / 1000;
                if (end <= start) continue;
                if (!json) {
                    if (strcmp(segments[i].phone_name, "sil")) printf(" %s", segments[i].phone_name);
                    continue;
                }
                printf("{\"start\": %.3f, \"end\": %.3f, \"phone\": ", start, end);
                json_string(segments[i].phone_name);
                printf(", \"confidence\": %.4f}\n", segments[i].confidence);
            }
            if (!json) printf("\n");
            const speechattn_cue *cues;
            if (json && options.visemes && speechattn_stream_cues(stream, &cues, &count) == SPEECHATTN_OK) {
                /* as cue_dicts: the last cut at the duration truncated to 10 ms; nothing heard: one rest cue */
                int64_t end_of_file = (int64_t)(si.duration_seconds * 100 + 1e-9), printed = 0;
                for (int64_t i = 0; i < count; i++) {
                    int64_t end = cues[i].end_frame < end_of_file ? cues[i].end_frame : end_of_file;
                    if (end <= cues[i].start_frame) continue;
                    printf("{\"start\": %.2f, \"end\": %.2f, \"value\": ", cues[i].start_frame / 100.0, end / 100.0);
                    json_string(cues[i].shape_name);
                    printf("}\n");
                    printed++;
                }
                if (!printed && end_of_file > 0)
                    printf("{\"start\": 0.00, \"end\": %.2f, \"value\": \"%s\"}\n", end_of_file / 100.0,
                           si.visemes->rest);
            }
        }
        speechattn_stream_destroy(stream);
        free(a.data);
    }
    speechattn_model_destroy(model);
    return status;
}
