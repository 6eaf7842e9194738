/* speechattn.h: libspeechattn, the C library of the speechattn streaming phone tagger.
 *
 * The third twin of the portable kits (Python export/pipeline.py PhoneStream, JavaScript export/js/speechattn.mjs):
 * audio at any rate in, a phone label every 10 ms, phone segments, and lip-sync mouth shapes (viseme weights per
 * frame, mouth cues) out, through one ONNX file (export/CONTRACT.md) run by onnxruntime's C API.  Its results equal
 * the kits' (tests/test_native_c.py holds them equal).
 *
 *     speechattn_model *model;
 *     if (speechattn_model_create("export/models/default-int8.onnx", NULL, &model) != SPEECHATTN_OK)
 *         fprintf(stderr, "%s\n", speechattn_last_error());
 *     speechattn_stream_options options = speechattn_default_stream_options();
 *     options.visemes = "rhubarb";
 *     speechattn_stream *stream;
 *     speechattn_stream_create(model, &options, &stream);
 *     const speechattn_update *update;
 *     speechattn_stream_push_i16(stream, pcm, n, 1, 44100, &update);     // any size, any rate, channels interleaved
 *     for (int32_t i = 0; i < update->num_segments; i++) ...              // phones made final by this push
 *     speechattn_stream_finish(stream, &update);                           // the rest
 *     speechattn_stream_destroy(stream);
 *     speechattn_model_destroy(model);
 *
 * Conventions (every function):
 *   - Every function that can fail returns a speechattn_status; on failure speechattn_last_error() holds one line
 *     saying why (thread-local: the message of the last failed call on the calling thread).  Nothing aborts or exits
 *     the host process; a failed call leaves its outputs untouched (pointers not written) and its object usable,
 *     unless the function says otherwise.
 *   - Objects are opaque handles made by a *_create function and freed by the matching *_destroy (NULL allowed).
 *   - Results (speechattn_update and the arrays it points to, speechattn_stream_segments/cues, the resampler's
 *     output) are OWNED BY THE OBJECT that returned them and stay valid until the next call on that object (push,
 *     prime, finish, segments, cues, process, flush) or its destroy.  Copy what you keep.  Info structs
 *     (speechattn_model_info, speechattn_viseme_set_info) live as long as their model (or forever, for sets).
 *   - Strings are UTF-8, NUL-terminated; counts of samples are int64_t (a negative count is an error).
 *
 * Threads: a speechattn_model is immutable after create and may be shared by any number of streams on any number
 * of threads at once (onnxruntime's Session::Run is thread-safe); create and destroy streams from any thread.  A
 * speechattn_stream, decoder or resampler is used by one thread at a time (no internal lock); different ones may run
 * concurrently.  Destroy a model after every stream on it.
 *
 * Audio: push float32 in [-1, 1] (NaN and Inf are read as silence and counted, as the kits do; floats beyond +-2 are
 * refused: integer PCM passed as float) or int16 PCM (divided by 32768); `channels` interleaved channels (1 to 32)
 * are averaged to mono; any rate from 1 to 768000 Hz is resampled to the model's rate by the kits' own windowed-sinc
 * filter (export/resample.py), sample for sample.  A stream keeps the rate (and format does not matter) of its first
 * push.
 */
#ifndef SPEECHATTN_H
#define SPEECHATTN_H

#include <stdint.h>

#if defined(_WIN32)
#if defined(SPEECHATTN_BUILD)
#define SPEECHATTN_API __declspec(dllexport)
#else
#define SPEECHATTN_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define SPEECHATTN_API __attribute__((visibility("default")))
#else
#define SPEECHATTN_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ---------------------------------------------------------------------------------------------------- */

#define SPEECHATTN_VERSION_MAJOR 0
#define SPEECHATTN_VERSION_MINOR 1
#define SPEECHATTN_VERSION_PATCH 0
/* The ABI: bumped only when an existing function, struct field or enum value changes; additions (new functions,
 * new fields at the END of the option structs, new status codes) keep it. */
#define SPEECHATTN_ABI_VERSION 1

/* "0.1.0": the library's version. */
SPEECHATTN_API const char *speechattn_version(void);
/* SPEECHATTN_ABI_VERSION of the library actually loaded (a binding checks it equals the one it was written for). */
SPEECHATTN_API int32_t speechattn_abi_version(void);
/* The newest model contract version this library reads ("2"; it reads 1 as well, export/CONTRACT.md). */
SPEECHATTN_API const char *speechattn_contract_version(void);

/* ---- errors ----------------------------------------------------------------------------------------------------- */

typedef enum speechattn_status {
    SPEECHATTN_OK = 0,
    SPEECHATTN_ERR_INVALID_ARGUMENT = 1, /* a NULL pointer, a negative count, an option out of range or unknown */
    SPEECHATTN_ERR_FILE = 2,             /* a path that is no readable regular file (missing, directory, device) */
    SPEECHATTN_ERR_MODEL = 3,            /* not a speechattn model: corrupt or truncated ONNX, no or wrong metadata,
                                            metadata that disagrees with the graph, a bigram file that is no bigram */
    SPEECHATTN_ERR_AUDIO = 4,            /* samples refused: floats beyond +-2, a rate of 0 or over 768000, a rate
                                            other than the stream's first, channels not 1..32 */
    SPEECHATTN_ERR_STATE = 5,            /* a call out of order: push or finish after finish, prime after push */
    SPEECHATTN_ERR_RUNTIME = 6,          /* onnxruntime failed (its message follows), or could not be loaded */
    SPEECHATTN_ERR_OUT_OF_MEMORY = 7,
    SPEECHATTN_ERR_BUFFER_TOO_SMALL = 8  /* a caller's buffer cannot hold the result; the count needed is written */
} speechattn_status;

/* The message of the last call on this thread that failed ("" if none has); valid until this thread's next failure. */
SPEECHATTN_API const char *speechattn_last_error(void);
/* "SPEECHATTN_OK", "SPEECHATTN_ERR_FILE", ...; "SPEECHATTN_ERR_UNKNOWN" for any other value. */
SPEECHATTN_API const char *speechattn_status_name(speechattn_status status);

/* ---- model ------------------------------------------------------------------------------------------------------ */

typedef struct speechattn_model speechattn_model;

typedef struct speechattn_model_options {
    int32_t num_threads;     /* onnxruntime intra-op threads, 1..256; 0: onnxruntime's default (all cores) */
    const char *bigram_path; /* the phone bigram for the "bigram" decoder; NULL: phone-bigram.json in the model
                                file's directory (where the bundled models have it).  Read at create when named;
                                when NULL and absent there, only streams with the "bigram" decoder fail. */
} speechattn_model_options;

/* Defaults: num_threads 0, bigram_path NULL. */
SPEECHATTN_API speechattn_model_options speechattn_default_model_options(void);

/* Open a model file (export/models/default.onnx, default-int8.onnx, file-int8.onnx, or any file of the contract):
 * its metadata is read and checked against the graph as the kits do (one chunk of silence through it).  `options`
 * NULL: the defaults.  On failure *model is left untouched. */
SPEECHATTN_API speechattn_status speechattn_model_create(const char *path, const speechattn_model_options *options,
                                                         speechattn_model **model);
SPEECHATTN_API void speechattn_model_destroy(speechattn_model *model);

typedef struct speechattn_model_info {
    const char *path;
    const char *model_version;        /* metadata model_version ("" if absent) */
    const char *quantization;         /* "none", "int8-weights" ("" if absent) */
    int32_t sample_rate;              /* Hz of the audio the graph takes (16000) */
    int32_t hop_samples;              /* samples per frame (160) */
    double frame_shift_ms;            /* 10 */
    int32_t num_phones;
    const char *const *phones;        /* num_phones names in output order; phone indices index this */
    int32_t num_chunk_sizes;
    const int32_t *allowed_chunk_frames;
    int32_t default_chunk_frames;
    int32_t output_delay_frames;      /* R (export/CONTRACT.md, "Look-ahead by output delay") */
    int32_t starts_empty;             /* 1: stream_start "empty" (file-int8): prime a file with
                                         speechattn_stream_prime_file for the kits' results */
    int32_t provisional_latency_ms;   /* -1 when the metadata has no such key */
    int32_t final_latency_ms;         /* -1 when the metadata has no such key */
    int32_t has_bigram;               /* 1: streams may use the "bigram" decoder */
} speechattn_model_info;

/* The model's facts, owned by the model. */
SPEECHATTN_API speechattn_status speechattn_model_get_info(const speechattn_model *model,
                                                           const speechattn_model_info **info);

/* ---- viseme sets ------------------------------------------------------------------------------------------------ */

typedef struct speechattn_viseme_set_info {
    const char *name;                 /* "rhubarb", "oculus", "vrm" */
    int32_t num_shapes;
    const char *const *shapes;        /* weights columns and cue shape indices, in this order */
    const char *rest;                 /* the shape of silence */
    const char *closed_lips;          /* the shape of P, B, M */
} speechattn_viseme_set_info;

SPEECHATTN_API int32_t speechattn_viseme_set_count(void);
/* The index-th set (0 .. count - 1), or NULL. */
SPEECHATTN_API const speechattn_viseme_set_info *speechattn_viseme_set_at(int32_t index);
/* The set named `name`, or NULL (with speechattn_last_error set) for a name that is none. */
SPEECHATTN_API const speechattn_viseme_set_info *speechattn_viseme_set(const char *name);

/* ---- stream options --------------------------------------------------------------------------------------------- */

typedef struct speechattn_stream_options {
    const char *decoder;        /* "bigram" (default: a Viterbi search over English phone pairs) or "hysteresis" */
    int32_t min_frames;         /* the shortest phone in frames, 1..100; 0: the decoder's own (4 bigram, 3 hyst.) */
    int32_t chunk_frames;       /* the streaming chunk, one the model serves; 0: the model's default */
    const char *visemes;        /* NULL or "": phones only; "rhubarb", "oculus" or "vrm": weights and cues too */
    int32_t cue_min_hold_frames;   /* cue rule: a shape shorter than this joins the one before (default 7) */
    int32_t cue_bridge_frames;     /* cue rule: a pause shorter than this inside speech holds (default 10) */
    int32_t decoder_lookahead_frames; /* bigram: frames before a label is final (default 10) */
    double lm_weight;              /* bigram: the bigram's weight (default 1.0) */
    double insertion_penalty;      /* bigram: log units per new phone (default 0.0) */
    int32_t phases;                /* 1 (default): what a live stream reads; other counts are refused for now */
} speechattn_stream_options;

/* Defaults: the kit's DecodingOptions() (bigram, decoder's min_frames, the model's chunk, no visemes, CueRules()). */
SPEECHATTN_API speechattn_stream_options speechattn_default_stream_options(void);

/* ---- results ---------------------------------------------------------------------------------------------------- */

/* A phone segment: frames [start_frame, end_frame), frame i being [i, i + 1) * frame_shift_ms. */
typedef struct speechattn_segment {
    int64_t start_frame;
    int64_t end_frame;          /* exclusive */
    int32_t phone;              /* index into the model's phones */
    const char *phone_name;     /* owned by the model (or decoder) */
    double start;               /* seconds: start_frame * frame_shift_ms / 1000 */
    double end;                 /* seconds: end_frame * frame_shift_ms / 1000 (not clipped to the audio) */
    double confidence;          /* mean posterior of the phone over its frames */
} speechattn_segment;

/* A mouth cue: one shape over frames [start_frame, end_frame); cues tile the stream from frame 0. */
typedef struct speechattn_cue {
    int64_t start_frame;
    int64_t end_frame;
    int32_t shape;              /* index into the set's shapes */
    const char *shape_name;
    double start;               /* seconds */
    double end;
} speechattn_cue;

/* What one push (or finish) made final.  Owned by the stream; valid until its next call. */
typedef struct speechattn_update {
    int64_t first_frame;        /* index of the first frame completed by this call */
    int32_t num_frames;         /* frames completed by this call (0 or more) */
    int32_t num_phones;
    const float *log_probs;     /* num_frames x num_phones natural-log posteriors, row-major */
    int32_t num_shapes;         /* 0 without visemes */
    const float *weights;       /* num_frames x num_shapes mouth-shape weights (rows sum to 1), NULL without visemes */
    int32_t num_segments;
    const speechattn_segment *segments; /* phone segments made final */
    int32_t num_cues;
    const speechattn_cue *cues; /* mouth cues made final (none without visemes) */
} speechattn_update;

/* The not-yet-final view a live display shows (the kit's segmenter.phone / run_phone, CueMaker.current). */
typedef struct speechattn_provisional {
    int32_t open_phone;         /* the open segment's phone, -1 if none */
    const char *open_phone_name;/* NULL if none */
    int64_t open_start_frame;   /* its first frame (-1 if none) */
    int32_t now_phone;          /* the best path's (bigram) or argmax run's (hysteresis) phone at the newest frame,
                                   -1 if none */
    const char *now_phone_name; /* NULL if none */
    int32_t current_shape;      /* the shape of the newest final frames (visemes), -1 without visemes */
    const char *current_shape_name;
} speechattn_provisional;

typedef struct speechattn_stream_info {
    int32_t chunk_frames;
    int32_t sample_rate;        /* the rate of the stream's input: its first push's (0 before it) */
    int64_t samples;            /* samples heard at the model's rate (after resampling), as the kit's */
    double duration_seconds;    /* samples / the model's rate */
    int64_t frames;             /* frames emitted so far */
    int64_t nonfinite_samples;  /* NaN/Inf samples read as silence (counted after resampling, as the kit does) */
    int32_t finished;           /* 1 after finish */
    const speechattn_viseme_set_info *visemes; /* NULL without visemes */
} speechattn_stream_info;

/* ---- streams ---------------------------------------------------------------------------------------------------- */

typedef struct speechattn_stream speechattn_stream;

/* A stream on `model` (options NULL: the defaults).  Any number per model, on any threads. */
SPEECHATTN_API speechattn_status speechattn_stream_create(speechattn_model *model,
                                                          const speechattn_stream_options *options,
                                                          speechattn_stream **stream);
SPEECHATTN_API void speechattn_stream_destroy(speechattn_stream *stream);

/* Audio in: `frames` sample frames of `channels` interleaved channels (frames * channels values) at `sample_rate`
 * Hz (the model's rate: no resampling).  `update` may be NULL (results still accumulate in the stream). */
SPEECHATTN_API speechattn_status speechattn_stream_push_f32(speechattn_stream *stream, const float *samples,
                                                            int64_t frames, int32_t channels, int32_t sample_rate,
                                                            const speechattn_update **update);
SPEECHATTN_API speechattn_status speechattn_stream_push_i16(speechattn_stream *stream, const int16_t *samples,
                                                            int64_t frames, int32_t channels, int32_t sample_rate,
                                                            const speechattn_update **update);

/* Audio heard before the stream's start, mono at the model's rate, whole hops: sets the model's state and makes no
 * frame, phone or cue (the kit's Stream.prime).  Before the first push, once. */
SPEECHATTN_API speechattn_status speechattn_stream_prime(speechattn_stream *stream, const float *samples,
                                                         int64_t count);
/* A file's pre-roll (the kit's file_preroll, as `speechattn transcribe` primes a file): from the file's first
 * samples `head` (mono, the model's rate, at least its first 4 seconds where it is that long), the loudest second
 * then 0.2 s of silence, primed; nothing for a model whose streams start from silence (starts_empty 0). */
SPEECHATTN_API speechattn_status speechattn_stream_prime_file(speechattn_stream *stream, const float *head,
                                                              int64_t count);

/* The end of the audio: the last frames, segments and cues.  Once; a second finish or a push after it is
 * SPEECHATTN_ERR_STATE. */
SPEECHATTN_API speechattn_status speechattn_stream_finish(speechattn_stream *stream, const speechattn_update **update);

/* Every final segment (cue) so far, owned by the stream, valid until its next call. */
SPEECHATTN_API speechattn_status speechattn_stream_segments(speechattn_stream *stream,
                                                            const speechattn_segment **segments, int64_t *count);
SPEECHATTN_API speechattn_status speechattn_stream_cues(speechattn_stream *stream, const speechattn_cue **cues,
                                                        int64_t *count);
/* Copied into the caller's struct. */
SPEECHATTN_API speechattn_status speechattn_stream_provisional(const speechattn_stream *stream,
                                                               speechattn_provisional *out);
SPEECHATTN_API speechattn_status speechattn_stream_get_info(const speechattn_stream *stream,
                                                           speechattn_stream_info *out);

/* ---- decoders alone (frame log-posteriors in, segments out) ----------------------------------------------------- */

/* The segmenters of a stream, for posteriors from elsewhere (tests/segmenter-vectors.json runs through these).  Uses
 * options->decoder, min_frames, decoder_lookahead_frames, lm_weight, insertion_penalty; `bigram_path` (the bigram
 * decoder only) a phone-bigram.json.  `phones` must include "sil" for the bigram decoder. */
typedef struct speechattn_decoder speechattn_decoder;

SPEECHATTN_API speechattn_status speechattn_decoder_create(const char *const *phones, int32_t num_phones,
                                                           const char *bigram_path,
                                                           const speechattn_stream_options *options,
                                                           speechattn_decoder **decoder);
SPEECHATTN_API void speechattn_decoder_destroy(speechattn_decoder *decoder);
/* `frames` rows of num_phones log-posteriors; the segments they made final, owned by the decoder. */
SPEECHATTN_API speechattn_status speechattn_decoder_push(speechattn_decoder *decoder, const float *log_probs,
                                                         int64_t frames, const speechattn_segment **segments,
                                                         int32_t *count);
SPEECHATTN_API speechattn_status speechattn_decoder_finish(speechattn_decoder *decoder,
                                                           const speechattn_segment **segments, int32_t *count);

/* ---- the resampler alone ---------------------------------------------------------------------------------------- */

/* The kits' resampler (export/resample.py), for audio a caller converts itself. */
typedef struct speechattn_resampler speechattn_resampler;

SPEECHATTN_API speechattn_status speechattn_resampler_create(int32_t input_rate, int32_t output_rate,
                                                             speechattn_resampler **resampler);
SPEECHATTN_API void speechattn_resampler_destroy(speechattn_resampler *resampler);
/* As many outputs as the input so far allows; owned by the resampler, valid until its next call. */
SPEECHATTN_API speechattn_status speechattn_resampler_process(speechattn_resampler *resampler, const float *samples,
                                                              int64_t count, const float **out, int64_t *out_count);
/* The end of the signal: the outputs it still owes, as if zeros followed (Resampler.flush). */
SPEECHATTN_API speechattn_status speechattn_resampler_flush(speechattn_resampler *resampler, const float **out,
                                                            int64_t *out_count);

#ifdef __cplusplus
}
#endif

#endif /* SPEECHATTN_H */
