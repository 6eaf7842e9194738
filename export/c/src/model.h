/* libspeechattn internals: the model (model.c) as the streams (stream.c) see it. */
#ifndef SPEECHATTN_MODEL_H
#define SPEECHATTN_MODEL_H

#include "../third_party/onnxruntime/onnxruntime_c_api.h"
#include "internal.h"

typedef struct sa_state_spec {
    char *name, *output;
    int32_t ndim;
    int64_t shape[8]; /* the batch axis holds 1 */
    int32_t batch_axis;
    int32_t is_int64;
} sa_state_spec;

struct speechattn_model {
    const OrtApi *ort;
    OrtSession *session;
    OrtMemoryInfo *memory;
    OrtRunOptions *quiet;
    speechattn_model_info info;
    char *path, *model_version, *quantization;
    char **phones;
    int32_t P;
    int32_t *chunks;
    int32_t num_chunks;
    int32_t sample_rate, hop, delay;
    int32_t num_states;
    sa_state_spec *states;
    const char **input_names;  /* audio, chunk_frames, flush, states... */
    const char **output_names; /* log_probs, new states... */
    char *audio_input, *chunk_input, *flush_input, *log_probs_output;
    double *bigram;      /* P x P in the model's phone order; NULL: none */
    char bigram_error[512];
    int32_t silence;     /* index of "sil", -1 if none */
};

/* zeros of each state's initial shape */
speechattn_status sa_initial_state(const speechattn_model *m, OrtValue **state);
void sa_release_state(const speechattn_model *m, OrtValue **state);
/* One graph call: audio (count samples, whole hops) -> the log-probabilities appended to *rows (frames x P), the
 * state replaced by the new one. */
speechattn_status sa_model_run(const speechattn_model *m, const float *audio, int64_t count, int32_t chunk, int flush,
                               OrtValue **state, float **rows, int64_t *rows_capacity, int64_t *frames);

#endif
