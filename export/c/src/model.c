/* A speechattn ONNX file through onnxruntime's C API: its metadata read and checked against the graph as the kits
 * do (export/stream_client.py StreamingModel._read_metadata, _probe), and one graph call (run). */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../third_party/cjson/cJSON.h"
#include "model.h"

/* onnxruntime >= 1.22 (what the Python package requires) has API version 22; 17 holds every entry used here */
#define SA_ORT_API_VERSION 17
#define MAX_STATE_VALUES (1 << 26)

static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;
static OrtEnv *env;
static int env_users;
static const OrtApi *ort_api;

static speechattn_status ort_error(const OrtApi *ort, OrtStatus *status, speechattn_status code, const char *what) {
    sa_fail(code, "%s: %s", what, ort->GetErrorMessage(status));
    ort->ReleaseStatus(status);
    return code;
}

static speechattn_status env_acquire(void) {
    speechattn_status result = SPEECHATTN_OK;
    pthread_mutex_lock(&env_lock);
    if (!ort_api) {
        const OrtApiBase *base = OrtGetApiBase();
        ort_api = base ? base->GetApi(SA_ORT_API_VERSION) : NULL;
        if (!ort_api)
            result = sa_fail(SPEECHATTN_ERR_RUNTIME, "onnxruntime %s does not offer C API version %d (1.17 or later needed)",
                             base ? base->GetVersionString() : "?", SA_ORT_API_VERSION);
    }
    if (!result && !env) {
        OrtStatus *status = ort_api->CreateEnv(ORT_LOGGING_LEVEL_ERROR, "speechattn", &env);
        if (status) result = ort_error(ort_api, status, SPEECHATTN_ERR_RUNTIME, "onnxruntime's environment");
    }
    if (!result) env_users++;
    pthread_mutex_unlock(&env_lock);
    return result;
}

static void env_release(void) {
    pthread_mutex_lock(&env_lock);
    if (--env_users == 0) {
        ort_api->ReleaseEnv(env);
        env = NULL;
    }
    pthread_mutex_unlock(&env_lock);
}

static void ort_free(const OrtApi *ort, OrtAllocator *allocator, void *p) {
    OrtStatus *status = ort->AllocatorFree(allocator, p);
    if (status) ort->ReleaseStatus(status);
}

static char *copy(const char *text) {
    size_t n = strlen(text) + 1;
    char *out = malloc(n);
    if (out) memcpy(out, text, n);
    return out;
}

void speechattn_model_destroy(speechattn_model *m) {
    if (!m) return;
    const OrtApi *ort = m->ort;
    if (ort) {
        if (m->session) ort->ReleaseSession(m->session);
        if (m->memory) ort->ReleaseMemoryInfo(m->memory);
        if (m->quiet) ort->ReleaseRunOptions(m->quiet);
    }
    free(m->path);
    free(m->model_version);
    free(m->quantization);
    for (int32_t i = 0; m->phones && i < m->P; i++) free(m->phones[i]);
    free(m->phones);
    free(m->chunks);
    for (int32_t i = 0; m->states && i < m->num_states; i++) {
        free(m->states[i].name);
        free(m->states[i].output);
    }
    free(m->states);
    free(m->input_names);
    free(m->output_names);
    free(m->audio_input);
    free(m->chunk_input);
    free(m->flush_input);
    free(m->log_probs_output);
    free(m->bigram);
    int had_env = ort != NULL;
    free(m);
    if (had_env) env_release();
}

speechattn_model_options speechattn_default_model_options(void) {
    speechattn_model_options options = {0, NULL};
    return options;
}

/* metadata value of `key` (malloc'd), or NULL */
static char *lookup(speechattn_model *m, OrtModelMetadata *meta, OrtAllocator *allocator, const char *key) {
    char *value = NULL;
    OrtStatus *status = m->ort->ModelMetadataLookupCustomMetadataMap(meta, allocator, key, &value);
    if (status) {
        m->ort->ReleaseStatus(status);
        return NULL;
    }
    if (!value) return NULL;
    char *out = copy(value);
    ort_free(m->ort, allocator, value);
    return out;
}

static int parse_int(const char *text, long long low, long long high, long long *out) {
    if (!text || !*text) return -1;
    char *end;
    long long v = strtoll(text, &end, 10);
    while (*end && isspace((unsigned char)*end)) end++;
    if (*end || v < low || v > high) return -1;
    *out = v;
    return 0;
}

#define META_FAIL(...) do { sa_fail(SPEECHATTN_ERR_MODEL, __VA_ARGS__); goto fail; } while (0)

typedef struct graph_io {
    size_t count;
    char **names;
    int64_t **dims;
    size_t *ndims;
} graph_io;

static void free_io(const OrtApi *ort, OrtAllocator *allocator, graph_io *io) {
    for (size_t i = 0; i < io->count; i++) {
        if (io->names && io->names[i]) ort_free(ort, allocator, io->names[i]);
        if (io->dims) free(io->dims[i]);
    }
    free(io->names);
    free(io->dims);
    free(io->ndims);
}

static int read_io(const OrtApi *ort, OrtSession *session, OrtAllocator *allocator, int inputs, graph_io *io) {
    OrtStatus *status = inputs ? ort->SessionGetInputCount(session, &io->count)
                               : ort->SessionGetOutputCount(session, &io->count);
    if (status) {
        ort->ReleaseStatus(status);
        return -1;
    }
    io->names = calloc(io->count + 1, sizeof(char *));
    io->dims = calloc(io->count + 1, sizeof(int64_t *));
    io->ndims = calloc(io->count + 1, sizeof(size_t));
    if (!io->names || !io->dims || !io->ndims) return -1;
    for (size_t i = 0; i < io->count; i++) {
        OrtTypeInfo *type = NULL;
        status = inputs ? ort->SessionGetInputName(session, i, allocator, &io->names[i])
                        : ort->SessionGetOutputName(session, i, allocator, &io->names[i]);
        if (!status) status = inputs ? ort->SessionGetInputTypeInfo(session, i, &type)
                                     : ort->SessionGetOutputTypeInfo(session, i, &type);
        if (status) {
            ort->ReleaseStatus(status);
            return -1;
        }
        const OrtTensorTypeAndShapeInfo *tensor = NULL;
        status = ort->CastTypeInfoToTensorInfo(type, &tensor);
        if (!status && tensor) {
            status = ort->GetDimensionsCount(tensor, &io->ndims[i]);
            if (!status) {
                io->dims[i] = calloc(io->ndims[i] + 1, sizeof(int64_t));
                if (io->dims[i]) status = ort->GetDimensions(tensor, io->dims[i], io->ndims[i]);
            }
        }
        if (status) ort->ReleaseStatus(status);
        ort->ReleaseTypeInfo(type);
    }
    return 0;
}

static int find_io(const graph_io *io, const char *name) {
    for (size_t i = 0; i < io->count; i++)
        if (io->names[i] && strcmp(io->names[i], name) == 0) return (int)i;
    return -1;
}

static speechattn_status probe(speechattn_model *m) {
    int32_t chunk = m->chunks[0];
    for (int32_t i = 1; i < m->num_chunks; i++)
        if (m->chunks[i] < chunk) chunk = m->chunks[i];
    int64_t samples = (int64_t)chunk * m->hop;
    if (samples > (1 << 20))
        return sa_fail(SPEECHATTN_ERR_MODEL, "%s: its metadata does not describe this graph (a chunk of %d frames is %lld "
                       "samples (hop_samples = %d))", m->path, chunk, (long long)samples, m->hop);
    float *audio = calloc((size_t)samples, sizeof(float));
    OrtValue **state = calloc((size_t)m->num_states + 1, sizeof(OrtValue *));
    float *rows = NULL;
    int64_t capacity = 0, frames = 0;
    speechattn_status status = audio && state ? sa_initial_state(m, state)
                                              : sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory");
    if (!status) {
        status = sa_model_run(m, audio, samples, chunk, 0, state, &rows, &capacity, &frames);
        if (status == SPEECHATTN_ERR_RUNTIME) {
            char detail[200];
            snprintf(detail, sizeof detail, "%s", speechattn_last_error());
            status = sa_fail(SPEECHATTN_ERR_MODEL, "%s: its metadata does not describe this graph (hop_samples = %d: a "
                             "chunk of %d frames (%lld samples) does not run through the graph: %.120s)", m->path,
                             m->hop, chunk, (long long)samples, detail);
        } else if (!status && frames != chunk) {
            status = sa_fail(SPEECHATTN_ERR_MODEL, "%s: its metadata does not describe this graph (hop_samples = %d: %lld "
                             "samples gave %lld frames, not %d)", m->path, m->hop, (long long)samples,
                             (long long)frames, chunk);
        }
    }
    if (state) sa_release_state(m, state);
    free(state);
    free(audio);
    free(rows);
    return status;
}

static speechattn_status read_metadata(speechattn_model *m) {
    const OrtApi *ort = m->ort;
    OrtAllocator *allocator = NULL;
    OrtModelMetadata *meta = NULL;
    graph_io inputs = {0}, outputs = {0};
    char *type = NULL, *contract = NULL, *text = NULL, *io_json = NULL, *out_json = NULL, *states_json = NULL,
         *config_json = NULL;
    cJSON *states = NULL, *io = NULL, *out = NULL, *config = NULL;
    speechattn_status result = SPEECHATTN_ERR_MODEL;
    long long v;
    OrtStatus *status = ort->GetAllocatorWithDefaultOptions(&allocator);
    if (!status) status = ort->SessionGetModelMetadata(m->session, &meta);
    if (status) return ort_error(ort, status, SPEECHATTN_ERR_RUNTIME, m->path);
    type = lookup(m, meta, allocator, "model_type");
    if (!type || strcmp(type, "speechattn-streaming-tagger") != 0)
        META_FAIL("%s: not a speechattn streaming model (metadata model_type is missing)", m->path);
    contract = lookup(m, meta, allocator, "contract_version");
    /* 2 holds a cache a layer (kv_cache_0 ..), 1 all layers' in one tensor (kv_cache): every state is generic here */
    if (!contract || (strcmp(contract, "1") != 0 && strcmp(contract, "2") != 0))
        META_FAIL("%s: contract version %s but this client reads 1 and 2", m->path, contract ? contract : "None");
#define NEED(var, key)                                                                                             \
    do {                                                                                                           \
        free(text);                                                                                                \
        text = lookup(m, meta, allocator, key);                                                                    \
        if (!text) META_FAIL("%s: its metadata does not describe this graph (key '%s' is missing)", m->path, key); \
    } while (0)
#define INT_KEY(key, low, high, dest)                                                                              \
    do {                                                                                                           \
        NEED(v, key);                                                                                              \
        if (parse_int(text, low, high, &v))                                                                        \
            META_FAIL("%s: its metadata does not describe this graph (%s = %.40s is not a whole number in %lld..%lld)", \
                      m->path, key, text, (long long)(low), (long long)(high));                                    \
        dest = (int32_t)v;                                                                                         \
    } while (0)
    INT_KEY("sample_rate", 1000, 192000, m->sample_rate);
    INT_KEY("hop_samples", 1, 48000, m->hop);
    NEED(v, "frame_shift_ms");
    char *end;
    double shift = strtod(text, &end);
    if (end == text || *end || !(shift >= 0.1 && shift <= 1000.0))
        META_FAIL("%s: its metadata does not describe this graph (frame_shift_ms = %.40s is outside 0.1..1000)", m->path,
                  text);
    if (fabs(m->hop * 1000.0 / shift - m->sample_rate) > 0.5)
        META_FAIL("%s: its metadata does not describe this graph (sample_rate, hop_samples and frame_shift_ms disagree)",
                  m->path);
    m->info.frame_shift_ms = shift;
    NEED(v, "phones");
    { /* phones: distinct names without spaces */
        int32_t count = 1;
        for (const char *c = text; *c; c++) count += *c == ',';
        m->phones = calloc((size_t)count, sizeof(char *));
        if (!m->phones) META_FAIL("out of memory");
        char *cursor = text;
        for (int32_t i = 0; i < count; i++) {
            char *comma = strchr(cursor, ',');
            if (comma) *comma = 0;
            m->phones[i] = copy(cursor);
            m->P = i + 1;
            if (!m->phones[i]) META_FAIL("out of memory");
            int bad = !*cursor;
            for (const char *c = cursor; *c; c++) bad |= isspace((unsigned char)*c) || !isprint((unsigned char)*c);
            for (int32_t j = 0; j < i; j++) bad |= strcmp(m->phones[j], m->phones[i]) == 0;
            if (bad)
                META_FAIL("%s: its metadata does not describe this graph (phones must be distinct names without spaces "
                          "or newlines)", m->path);
            cursor = comma ? comma + 1 : cursor + strlen(cursor);
        }
    }
    m->silence = -1;
    for (int32_t i = 0; i < m->P; i++)
        if (strcmp(m->phones[i], "sil") == 0) m->silence = i;
    free(text);
    text = lookup(m, meta, allocator, "decoder_lookahead_frames");
    if (text && parse_int(text, 0, 1000, &v))
        META_FAIL("%s: its metadata does not describe this graph (decoder_lookahead_frames = %.40s is outside 0..1000)",
                  m->path, text);
    NEED(v, "allowed_chunk_frames");
    {
        int32_t count = 1;
        for (const char *c = text; *c; c++) count += *c == ',';
        m->chunks = calloc((size_t)count, sizeof(int32_t));
        if (!m->chunks) META_FAIL("out of memory");
        char *cursor = text;
        for (int32_t i = 0; i < count; i++) {
            char *comma = strchr(cursor, ',');
            if (comma) *comma = 0;
            if (parse_int(cursor, 1, 4096, &v))
                META_FAIL("%s: its metadata does not describe this graph (allowed_chunk_frames must be sizes from 1 to "
                          "4096)", m->path);
            m->chunks[i] = (int32_t)v;
            m->num_chunks = i + 1;
            cursor = comma ? comma + 1 : cursor + strlen(cursor);
        }
    }
    int32_t default_chunk;
    INT_KEY("default_chunk_frames", 1, 4096, default_chunk);
    int found = 0;
    for (int32_t i = 0; i < m->num_chunks; i++) found |= m->chunks[i] == default_chunk;
    if (!found)
        META_FAIL("%s: its metadata does not describe this graph (default_chunk_frames %d is not an allowed chunk size)",
                  m->path, default_chunk);
    m->info.default_chunk_frames = default_chunk;
    free(text);
    text = lookup(m, meta, allocator, "output_delay_frames");
    m->delay = 0;
    if (text) {
        if (parse_int(text, 0, 1000, &v))
            META_FAIL("%s: its metadata does not describe this graph (output_delay_frames = %.40s is outside 0..1000)",
                      m->path, text);
        m->delay = (int32_t)v;
    }
    config_json = lookup(m, meta, allocator, "model_config");
    config = config_json ? cJSON_Parse(config_json) : NULL;
    if (cJSON_IsObject(config)) {
        const cJSON *delay = cJSON_GetObjectItemCaseSensitive(config, "output_delay_frames");
        if (delay && (!cJSON_IsNumber(delay) || delay->valuedouble != m->delay))
            META_FAIL("%s: its metadata does not describe this graph (output_delay_frames = %d but the model_config it "
                      "was exported with says otherwise)", m->path, m->delay);
    }
    free(text);
    text = lookup(m, meta, allocator, "receptive_field_frames");
    if (text && !parse_int(text, 0, 1LL << 40, &v) && m->delay > v)
        META_FAIL("%s: its metadata does not describe this graph (output_delay_frames = %d but the graph sees only "
                  "receptive_field_frames = %lld frames back)", m->path, m->delay, v);
    free(text);
    text = lookup(m, meta, allocator, "stream_start");
    m->info.starts_empty = text && strcmp(text, "empty") == 0;
    free(text);
    text = lookup(m, meta, allocator, "provisional_latency_ms");
    m->info.provisional_latency_ms = text && !parse_int(text, 0, 1 << 30, &v) ? (int32_t)v : -1;
    free(text);
    text = lookup(m, meta, allocator, "final_latency_ms");
    m->info.final_latency_ms = text && !parse_int(text, 0, 1 << 30, &v) ? (int32_t)v : -1;
    m->model_version = lookup(m, meta, allocator, "model_version");
    m->quantization = lookup(m, meta, allocator, "quantization");
    if (!m->model_version) m->model_version = copy("");
    if (!m->quantization) m->quantization = copy("");

    /* graph names and states */
    NEED(v, "inputs");
    io = cJSON_Parse(text);
    NEED(v, "outputs");
    out = cJSON_Parse(text);
    NEED(v, "states");
    states = cJSON_Parse(text);
    const cJSON *names[4] = {cJSON_GetObjectItemCaseSensitive(io, "audio"),
                             cJSON_GetObjectItemCaseSensitive(io, "chunk_frames"),
                             cJSON_GetObjectItemCaseSensitive(io, "flush"),
                             cJSON_GetObjectItemCaseSensitive(out, "log_probs")};
    for (int i = 0; i < 4; i++)
        if (!cJSON_IsString(names[i]))
            META_FAIL("%s: its metadata does not describe this graph (inputs/outputs lack audio, chunk_frames, flush or "
                      "log_probs)", m->path);
    m->audio_input = copy(names[0]->valuestring);
    m->chunk_input = copy(names[1]->valuestring);
    m->flush_input = copy(names[2]->valuestring);
    m->log_probs_output = copy(names[3]->valuestring);
    if (!cJSON_IsArray(states))
        META_FAIL("%s: its metadata does not describe this graph (states is not a JSON list)", m->path);
    if (read_io(ort, m->session, allocator, 1, &inputs) || read_io(ort, m->session, allocator, 0, &outputs))
        META_FAIL("%s: cannot read the graph's inputs and outputs", m->path);
    int log_probs_index = find_io(&outputs, m->log_probs_output);
    if (log_probs_index < 0)
        META_FAIL("%s: its metadata does not describe this graph (log_probs output '%s' is not the graph's "
                  "log-probabilities)", m->path, m->log_probs_output);
    const char *needed[3] = {m->audio_input, m->chunk_input, m->flush_input};
    for (int i = 0; i < 3; i++)
        if (find_io(&inputs, needed[i]) < 0)
            META_FAIL("%s: its metadata does not describe this graph (input '%s' is not in the graph)", m->path,
                      needed[i]);
    m->num_states = cJSON_GetArraySize(states);
    if (m->num_states > 64) META_FAIL("%s: its metadata does not describe this graph (%d states)", m->path, m->num_states);
    m->states = calloc((size_t)m->num_states + 1, sizeof(sa_state_spec));
    if (!m->states) META_FAIL("out of memory");
    int64_t elements = 0;
    for (int32_t s = 0; s < m->num_states; s++) {
        const cJSON *spec = cJSON_GetArrayItem(states, s);
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(spec, "name");
        const cJSON *output = cJSON_GetObjectItemCaseSensitive(spec, "output");
        const cJSON *shape = cJSON_GetObjectItemCaseSensitive(spec, "shape");
        const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(spec, "dtype");
        sa_state_spec *st = &m->states[s];
        if (!cJSON_IsString(name) || !cJSON_IsString(output) || !cJSON_IsArray(shape) || !cJSON_IsString(dtype))
            META_FAIL("%s: its metadata does not describe this graph (state %d lacks name, output, shape or dtype)",
                      m->path, s);
        st->name = copy(name->valuestring);
        st->output = copy(output->valuestring);
        int in = find_io(&inputs, st->name), o = find_io(&outputs, st->output);
        if (in < 0 || o < 0 || strcmp(st->output, m->log_probs_output) == 0) {
            if (in >= 0 && o >= 0)
                META_FAIL("%s: its metadata does not describe this graph (log_probs output '%s' is not the graph's "
                          "log-probabilities)", m->path, m->log_probs_output);
            META_FAIL("%s: its metadata does not describe this graph (state '%s' / '%s' is not in the graph)", m->path,
                      st->name, st->output);
        }
        if (strcmp(dtype->valuestring, "float32") && strcmp(dtype->valuestring, "int64"))
            META_FAIL("%s: its metadata does not describe this graph (state '%s' has dtype '%s' (float32 or int64))",
                      m->path, st->name, dtype->valuestring);
        st->is_int64 = strcmp(dtype->valuestring, "int64") == 0;
        st->ndim = cJSON_GetArraySize(shape);
        int batches = 0, bad = st->ndim < 1 || st->ndim > 8;
        int64_t count = 1;
        for (int32_t d = 0; !bad && d < st->ndim; d++) {
            const cJSON *dim = cJSON_GetArrayItem(shape, d);
            if (cJSON_IsString(dim) && strcmp(dim->valuestring, "batch") == 0) {
                batches++;
                st->batch_axis = d;
                st->shape[d] = 1;
            } else if (cJSON_IsNumber(dim) && dim->valuedouble >= 0 && dim->valuedouble <= (1 << 20) &&
                       dim->valuedouble == (double)(int64_t)dim->valuedouble) {
                st->shape[d] = (int64_t)dim->valuedouble;
                count *= st->shape[d];
                if ((size_t)d < inputs.ndims[in] && inputs.dims[in][d] >= 0 && inputs.dims[in][d] != st->shape[d])
                    bad = 2;
            } else {
                bad = 1;
            }
        }
        if (!bad && (size_t)st->ndim != inputs.ndims[in]) bad = 2;
        if (bad || batches != 1)
            META_FAIL("%s: its metadata does not describe this graph (state '%s' has shape %s%s)", m->path, st->name,
                      "other than the graph's", bad == 2 ? "" : " or no single batch axis");
        elements += count;
        if (elements > MAX_STATE_VALUES)
            META_FAIL("%s: its metadata does not describe this graph (the states hold more than %d values per stream)",
                      m->path, MAX_STATE_VALUES);
    }
    m->input_names = calloc((size_t)m->num_states + 3, sizeof(char *));
    m->output_names = calloc((size_t)m->num_states + 1, sizeof(char *));
    if (!m->input_names || !m->output_names) META_FAIL("out of memory");
    m->input_names[0] = m->audio_input;
    m->input_names[1] = m->chunk_input;
    m->input_names[2] = m->flush_input;
    m->output_names[0] = m->log_probs_output;
    for (int32_t s = 0; s < m->num_states; s++) {
        m->input_names[3 + s] = m->states[s].name;
        m->output_names[1 + s] = m->states[s].output;
    }
    result = SPEECHATTN_OK;
fail:
    free_io(ort, allocator, &inputs);
    free_io(ort, allocator, &outputs);
    cJSON_Delete(states);
    cJSON_Delete(io);
    cJSON_Delete(out);
    cJSON_Delete(config);
    free(type);
    free(contract);
    free(text);
    free(io_json);
    free(out_json);
    free(states_json);
    free(config_json);
    if (meta) ort->ReleaseModelMetadata(meta);
    return result;
}

speechattn_status speechattn_model_create(const char *path, const speechattn_model_options *options,
                                          speechattn_model **model) {
    if (!model) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "model_create: the output pointer is NULL");
    speechattn_model_options defaults = speechattn_default_model_options();
    if (!options) options = &defaults;
    if (options->num_threads < 0 || options->num_threads > 256)
        return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "num_threads must be from 1 to 256 (0: all cores), not %d",
                       options->num_threads);
    speechattn_status result = sa_check_file(path, "model");
    if (result) return result;
    result = env_acquire();
    if (result) return result;
    speechattn_model *m = calloc(1, sizeof *m);
    if (!m) {
        env_release();
        return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory for a model");
    }
    const OrtApi *ort = m->ort = ort_api;
    m->path = copy(path);
    OrtSessionOptions *session_options = NULL;
    OrtStatus *status = ort->CreateSessionOptions(&session_options);
    if (!status && options->num_threads) {
        status = ort->SetIntraOpNumThreads(session_options, options->num_threads);
        if (!status) status = ort->SetInterOpNumThreads(session_options, 1);
    }
    if (status) {
        result = ort_error(ort, status, SPEECHATTN_ERR_RUNTIME, "onnxruntime's session options");
        goto fail;
    }
    status = ort->CreateSession(env, path, session_options, &m->session);
    ort->ReleaseSessionOptions(session_options);
    if (status) {
        OrtErrorCode code = ort->GetErrorCode(status);
        char what[600];
        snprintf(what, sizeof what, "%.400s: not a model onnxruntime can load%s", path,
                 code == ORT_NO_SUCHFILE ? " (no such file)" : "");
        result = ort_error(ort, status, SPEECHATTN_ERR_MODEL, what);
        goto fail;
    }
    status = ort->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &m->memory);
    if (!status) status = ort->CreateRunOptions(&m->quiet);
    if (!status) status = ort->RunOptionsSetRunLogSeverityLevel(m->quiet, 4);
    if (status) {
        result = ort_error(ort, status, SPEECHATTN_ERR_RUNTIME, "onnxruntime");
        goto fail;
    }
    result = read_metadata(m);
    if (result) goto fail;
    result = probe(m);
    if (result) goto fail;
    if (options->bigram_path) {
        result = sa_load_bigram(options->bigram_path, (const char *const *)m->phones, m->P, &m->bigram);
        if (result) goto fail;
    } else { /* phone-bigram.json beside the model */
        const char *slash = strrchr(path, '/');
        size_t dir = slash ? (size_t)(slash - path + 1) : 0;
        char *beside = malloc(dir + 32);
        if (!beside) {
            result = sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory");
            goto fail;
        }
        memcpy(beside, path, dir);
        strcpy(beside + dir, "phone-bigram.json");
        if (sa_load_bigram(beside, (const char *const *)m->phones, m->P, &m->bigram))
            snprintf(m->bigram_error, sizeof m->bigram_error, "no bigram for the bigram decoder: %s",
                     speechattn_last_error());
        free(beside);
    }
    if (m->bigram && m->silence < 0) {
        free(m->bigram);
        m->bigram = NULL;
        snprintf(m->bigram_error, sizeof m->bigram_error, "the model's phones have no sil: the bigram decoder needs it");
    }
    speechattn_model_info *info = &m->info;
    info->path = m->path;
    info->model_version = m->model_version;
    info->quantization = m->quantization;
    info->sample_rate = m->sample_rate;
    info->hop_samples = m->hop;
    info->num_phones = m->P;
    info->phones = (const char *const *)m->phones;
    info->num_chunk_sizes = m->num_chunks;
    info->allowed_chunk_frames = m->chunks;
    info->output_delay_frames = m->delay;
    info->has_bigram = m->bigram != NULL;
    *model = m;
    return SPEECHATTN_OK;
fail:
    speechattn_model_destroy(m);
    return result;
}

speechattn_status speechattn_model_get_info(const speechattn_model *model, const speechattn_model_info **info) {
    if (!model || !info) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "model_get_info: a NULL pointer");
    *info = &model->info;
    return SPEECHATTN_OK;
}

/* ---- state and run ---- */

speechattn_status sa_initial_state(const speechattn_model *m, OrtValue **state) {
    OrtAllocator *allocator;
    OrtStatus *status = m->ort->GetAllocatorWithDefaultOptions(&allocator);
    for (int32_t s = 0; !status && s < m->num_states; s++) {
        const sa_state_spec *st = &m->states[s];
        status = m->ort->CreateTensorAsOrtValue(allocator, st->shape, (size_t)st->ndim,
                                                st->is_int64 ? ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64
                                                             : ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &state[s]);
        int64_t count = 1;
        for (int32_t d = 0; d < st->ndim; d++) count *= st->shape[d];
        void *data = NULL;
        if (!status && count) status = m->ort->GetTensorMutableData(state[s], &data);
        if (!status && count && data) memset(data, 0, (size_t)count * (st->is_int64 ? 8 : 4));
    }
    if (status) {
        sa_release_state(m, state);
        return ort_error(m->ort, status, SPEECHATTN_ERR_RUNTIME, "a stream's initial state");
    }
    return SPEECHATTN_OK;
}

void sa_release_state(const speechattn_model *m, OrtValue **state) {
    for (int32_t s = 0; s < m->num_states; s++) {
        if (state[s]) m->ort->ReleaseValue(state[s]);
        state[s] = NULL;
    }
}

speechattn_status sa_model_run(const speechattn_model *m, const float *audio, int64_t count, int32_t chunk, int flush,
                               OrtValue **state, float **rows, int64_t *rows_capacity, int64_t *frames) {
    const OrtApi *ort = m->ort;
    static float nothing[1];
    int64_t audio_shape[2] = {1, count}, chunk_value = chunk, flush_value = flush;
    int32_t n_in = 3 + m->num_states, n_out = 1 + m->num_states;
    OrtValue *inputs[3 + 64] = {0}, *outputs[1 + 64] = {0};
    OrtStatus *status = ort->CreateTensorWithDataAsOrtValue(m->memory, count ? (void *)audio : (void *)nothing,
                                                            (size_t)count * sizeof(float), audio_shape, 2,
                                                            ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &inputs[0]);
    if (!status)
        status = ort->CreateTensorWithDataAsOrtValue(m->memory, &chunk_value, sizeof chunk_value, NULL, 0,
                                                     ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, &inputs[1]);
    if (!status)
        status = ort->CreateTensorWithDataAsOrtValue(m->memory, &flush_value, sizeof flush_value, NULL, 0,
                                                     ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, &inputs[2]);
    for (int32_t s = 0; s < m->num_states; s++) inputs[3 + s] = state[s];
    if (!status)
        status = ort->Run(m->session, m->quiet, m->input_names, (const OrtValue *const *)inputs, (size_t)n_in,
                          m->output_names, (size_t)n_out, outputs);
    for (int i = 0; i < 3; i++)
        if (inputs[i]) ort->ReleaseValue(inputs[i]);
    speechattn_status result = SPEECHATTN_OK;
    if (status) {
        result = ort_error(ort, status, SPEECHATTN_ERR_RUNTIME, "onnxruntime's run");
        goto done;
    }
    OrtTensorTypeAndShapeInfo *shape_info = NULL;
    int64_t dims[3] = {0, 0, 0};
    size_t ndim = 0;
    status = ort->GetTensorTypeAndShape(outputs[0], &shape_info);
    if (!status) status = ort->GetDimensionsCount(shape_info, &ndim);
    if (!status && ndim == 3) status = ort->GetDimensions(shape_info, dims, 3);
    if (shape_info) ort->ReleaseTensorTypeAndShapeInfo(shape_info);
    if (status) {
        result = ort_error(ort, status, SPEECHATTN_ERR_RUNTIME, "the graph's log-probabilities");
        goto done;
    }
    if (ndim != 3 || dims[0] != 1 || dims[2] != m->P) {
        result = sa_fail(SPEECHATTN_ERR_RUNTIME, "the graph gave log-probabilities of shape [%lld, %lld, %lld], not [1, "
                         "frames, %d]", (long long)dims[0], (long long)dims[1], (long long)dims[2], m->P);
        goto done;
    }
    float *data = NULL;
    if (dims[1]) {
        status = ort->GetTensorMutableData(outputs[0], (void **)&data);
        if (status) {
            result = ort_error(ort, status, SPEECHATTN_ERR_RUNTIME, "the graph's log-probabilities");
            goto done;
        }
        if (SA_RESERVE(*rows, *rows_capacity, (*frames + dims[1]) * m->P)) {
            result = sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory for %lld frames", (long long)dims[1]);
            goto done;
        }
        memcpy(*rows + *frames * m->P, data, sizeof(float) * (size_t)(dims[1] * m->P));
        *frames += dims[1];
    }
    for (int32_t s = 0; s < m->num_states; s++) { /* the new state replaces the old */
        ort->ReleaseValue(state[s]);
        state[s] = outputs[1 + s];
        outputs[1 + s] = NULL;
    }
done:
    for (int32_t i = 0; i < n_out; i++)
        if (outputs[i]) ort->ReleaseValue(outputs[i]);
    return result;
}
