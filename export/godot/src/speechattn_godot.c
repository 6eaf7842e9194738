/* speechattn_godot.c: SpeechattnLipSync, a GDNative (NativeScript 1.0) class over libspeechattn for Godot 3.2+.
 *
 *     var lipsync = preload("res://speechattn_lipsync.gdns").new()
 *     if not lipsync.load_model(ProjectSettings.globalize_path("res://default-int8.onnx"), {"visemes": "rhubarb"}):
 *         push_error(lipsync.get_error())
 *     var update = lipsync.push_int16(pcm_bytes, 16000, 1)   # or push(PoolRealArray, rate, channels)
 *     for cue in update.cues: ...                           # {start, end, start_frame, end_frame, shape}
 *     update = lipsync.finish()
 *
 * Thin, as the C# binding: Godot's types in, libspeechattn's calls, its results copied into Godot's types out; the
 * checks and the logic live in the C library.  A failed call returns null (load_model, restart: false) and keeps the
 * library's message and status for get_error() and get_error_code(); it is also printed to Godot's error log.
 * Uses the core API 1.0 and NativeScript 1.0 only, which every Godot 3.x serves (tested in 3.2.3).
 */
#include <gdnative_api_struct.gen.h>
#include <speechattn.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLASS_NAME "SpeechattnLipSync"

static const godot_gdnative_core_api_struct *api;
static const godot_gdnative_ext_nativescript_api_struct *nativescript;

typedef struct lipsync {
    speechattn_model *model;
    speechattn_stream *stream;
    speechattn_stream_options options; /* kept for restart(); its strings point into the two buffers below */
    char decoder[32];
    char visemes[32];
    char error[1024];
    char error_code[64];
} lipsync;

/* ---- Godot values ----------------------------------------------------------------------------------------------- */

static godot_variant nil(void) {
    godot_variant v;
    api->godot_variant_new_nil(&v);
    return v;
}

static godot_variant boolean(int value) {
    godot_variant v;
    api->godot_variant_new_bool(&v, value != 0);
    return v;
}

static godot_variant string_variant(const char *utf8) {
    godot_string s = api->godot_string_chars_to_utf8(utf8 ? utf8 : "");
    godot_variant v;
    api->godot_variant_new_string(&v, &s);
    api->godot_string_destroy(&s);
    return v;
}

static void put(godot_dictionary *dictionary, const char *key, godot_variant value) {
    godot_variant k = string_variant(key);
    api->godot_dictionary_set(dictionary, &k, &value);
    api->godot_variant_destroy(&k);
    api->godot_variant_destroy(&value);
}

static godot_variant int_variant(int64_t value) {
    godot_variant v;
    api->godot_variant_new_int(&v, value);
    return v;
}

static godot_variant real_variant(double value) {
    godot_variant v;
    api->godot_variant_new_real(&v, value);
    return v;
}

/* A String variant's UTF-8 into `out` (size bytes); 0 if it is no String or does not fit. */
static int utf8_of(const godot_variant *variant, char *out, size_t size) {
    if (api->godot_variant_get_type(variant) != GODOT_VARIANT_TYPE_STRING) return 0;
    godot_string s = api->godot_variant_as_string(variant);
    godot_char_string chars = api->godot_string_utf8(&s);
    const char *data = api->godot_char_string_get_data(&chars);
    size_t length = strlen(data);
    int fits = length < size;
    if (fits) memcpy(out, data, length + 1);
    api->godot_char_string_destroy(&chars);
    api->godot_string_destroy(&s);
    return fits;
}

/* ---- errors ----------------------------------------------------------------------------------------------------- */

static void fail(lipsync *self, const char *code, const char *message) {
    snprintf(self->error_code, sizeof self->error_code, "%s", code);
    snprintf(self->error, sizeof self->error, "%s", message);
    api->godot_print_error(self->error, CLASS_NAME, "speechattn_godot.c", __LINE__);
}

/* The library's status and message, as it words them. */
static int check(lipsync *self, speechattn_status status) {
    if (status == SPEECHATTN_OK) return 1;
    fail(self, speechattn_status_name(status), speechattn_last_error());
    return 0;
}

/* A Godot argument the binding cannot pass on (a wrong type, a missing argument): said in the library's words. */
static int argument(lipsync *self, int ok, const char *message) {
    if (!ok) fail(self, speechattn_status_name(SPEECHATTN_ERR_INVALID_ARGUMENT), message);
    return ok;
}

/* ---- results ---------------------------------------------------------------------------------------------------- */

static godot_variant segment_dictionary(const speechattn_segment *s) {
    godot_dictionary d;
    api->godot_dictionary_new(&d);
    put(&d, "start", real_variant(s->start));
    put(&d, "end", real_variant(s->end));
    put(&d, "start_frame", int_variant(s->start_frame));
    put(&d, "end_frame", int_variant(s->end_frame));
    put(&d, "phone", string_variant(s->phone_name));
    put(&d, "confidence", real_variant(s->confidence));
    godot_variant v;
    api->godot_variant_new_dictionary(&v, &d);
    api->godot_dictionary_destroy(&d);
    return v;
}

static godot_variant cue_dictionary(const speechattn_cue *c) {
    godot_dictionary d;
    api->godot_dictionary_new(&d);
    put(&d, "start", real_variant(c->start));
    put(&d, "end", real_variant(c->end));
    put(&d, "start_frame", int_variant(c->start_frame));
    put(&d, "end_frame", int_variant(c->end_frame));
    put(&d, "shape", string_variant(c->shape_name));
    godot_variant v;
    api->godot_variant_new_dictionary(&v, &d);
    api->godot_dictionary_destroy(&d);
    return v;
}

typedef godot_variant (*to_variant)(const void *item);

static godot_variant array_of(const void *items, int64_t count, size_t size, to_variant convert) {
    godot_array array;
    api->godot_array_new(&array);
    for (int64_t i = 0; i < count; i++) {
        godot_variant item = convert((const char *)items + i * size);
        api->godot_array_append(&array, &item);
        api->godot_variant_destroy(&item);
    }
    godot_variant v;
    api->godot_variant_new_array(&v, &array);
    api->godot_array_destroy(&array);
    return v;
}

static godot_variant segment_item(const void *item) { return segment_dictionary(item); }
static godot_variant cue_item(const void *item) { return cue_dictionary(item); }

static godot_variant reals(const float *values, int64_t count) {
    godot_pool_real_array array;
    api->godot_pool_real_array_new(&array);
    api->godot_pool_real_array_resize(&array, (godot_int)count);
    godot_pool_real_array_write_access *write = api->godot_pool_real_array_write(&array);
    godot_real *out = api->godot_pool_real_array_write_access_ptr(write);
    for (int64_t i = 0; i < count; i++) out[i] = values[i];
    api->godot_pool_real_array_write_access_destroy(write);
    godot_variant v;
    api->godot_variant_new_pool_real_array(&v, &array);
    api->godot_pool_real_array_destroy(&array);
    return v;
}

/* {first_frame, num_frames, segments: [..], cues: [..], num_shapes,
 *  weights: PoolRealArray (num_frames x num_shapes, row-major; empty without visemes)} */
static godot_variant update_dictionary(const speechattn_update *u) {
    godot_dictionary d;
    api->godot_dictionary_new(&d);
    put(&d, "first_frame", int_variant(u->first_frame));
    put(&d, "num_frames", int_variant(u->num_frames));
    put(&d, "segments", array_of(u->segments, u->num_segments, sizeof *u->segments, segment_item));
    put(&d, "cues", array_of(u->cues, u->num_cues, sizeof *u->cues, cue_item));
    put(&d, "num_shapes", int_variant(u->num_shapes));
    put(&d, "weights", reals(u->weights, u->weights ? (int64_t)u->num_frames * u->num_shapes : 0));
    godot_variant v;
    api->godot_variant_new_dictionary(&v, &d);
    api->godot_dictionary_destroy(&d);
    return v;
}

/* ---- methods ---------------------------------------------------------------------------------------------------- */

static int has_stream(lipsync *self) {
    return argument(self, self->stream != NULL, "no model is loaded: call load_model(path) first");
}

/* load_model(path: String, options: Dictionary = {}) -> bool.  options: visemes ("rhubarb" unless given; "" for
 * phones only), decoder, min_frames, chunk_frames, num_threads (speechattn.h's fields of the same names). */
static godot_variant load_model(godot_object *object, void *method_data, void *data, int num_args,
                                godot_variant **args) {
    lipsync *self = data;
    char path[4096];
    if (!argument(self, num_args >= 1 && utf8_of(args[0], path, sizeof path),
                  "load_model(path, options = {}): path must be a String (an OS path: globalize a res:// one)"))
        return boolean(0);
    speechattn_model_options model_options = speechattn_default_model_options();
    speechattn_stream_options options = speechattn_default_stream_options();
    char visemes[sizeof self->visemes] = "rhubarb", decoder[sizeof self->decoder] = "";
    if (num_args >= 2) {
        if (!argument(self, api->godot_variant_get_type(args[1]) == GODOT_VARIANT_TYPE_DICTIONARY,
                      "load_model(path, options = {}): options must be a Dictionary"))
            return boolean(0);
        godot_dictionary given = api->godot_variant_as_dictionary(args[1]);
        static const char *const strings[] = {"visemes", "decoder"};
        char *const buffers[] = {visemes, decoder};
        static const char *const integers[] = {"min_frames", "chunk_frames", "num_threads"};
        int32_t *const fields[] = {&options.min_frames, &options.chunk_frames, &model_options.num_threads};
        int ok = 1;
        for (int i = 0; i < 2 && ok; i++) {
            godot_variant key = string_variant(strings[i]);
            if (api->godot_dictionary_has(&given, &key)) {
                godot_variant value = api->godot_dictionary_get(&given, &key);
                ok = argument(self, utf8_of(&value, buffers[i], 32), "load_model: options.visemes and "
                              "options.decoder must be Strings of under 32 bytes");
                api->godot_variant_destroy(&value);
            }
            api->godot_variant_destroy(&key);
        }
        for (int i = 0; i < 3 && ok; i++) {
            godot_variant key = string_variant(integers[i]);
            if (api->godot_dictionary_has(&given, &key)) {
                godot_variant value = api->godot_dictionary_get(&given, &key);
                int64_t number = api->godot_variant_as_int(&value);
                ok = argument(self, api->godot_variant_get_type(&value) == GODOT_VARIANT_TYPE_INT &&
                              number >= INT32_MIN && number <= INT32_MAX,
                              "load_model: options.min_frames, chunk_frames and num_threads must be ints");
                *fields[i] = (int32_t)number;
                api->godot_variant_destroy(&value);
            }
            api->godot_variant_destroy(&key);
        }
        api->godot_dictionary_destroy(&given);
        if (!ok) return boolean(0);
    }
    options.visemes = visemes;
    if (decoder[0]) options.decoder = decoder;

    speechattn_model *model;
    if (!check(self, speechattn_model_create(path, &model_options, &model))) return boolean(0);
    speechattn_stream *stream;
    if (!check(self, speechattn_stream_create(model, &options, &stream))) {
        speechattn_model_destroy(model);
        return boolean(0);
    }
    speechattn_stream_destroy(self->stream);
    speechattn_model_destroy(self->model);
    self->model = model;
    self->stream = stream;
    self->options = options;  /* its strings: the instance's own copies */
    memcpy(self->visemes, visemes, sizeof visemes);
    memcpy(self->decoder, decoder, sizeof decoder);
    self->options.visemes = self->visemes;
    if (decoder[0]) self->options.decoder = self->decoder;
    return boolean(1);
}

/* restart() -> bool: a new stream on the loaded model, with the same options (the next clip). */
static godot_variant restart(godot_object *object, void *method_data, void *data, int num_args, godot_variant **args) {
    lipsync *self = data;
    speechattn_stream *stream;
    if (!has_stream(self) || !check(self, speechattn_stream_create(self->model, &self->options, &stream)))
        return boolean(0);
    speechattn_stream_destroy(self->stream);
    self->stream = stream;
    return boolean(1);
}

static int rate_and_channels(lipsync *self, const char *method, int num_args, godot_variant **args,
                             int32_t *sample_rate, int32_t *channels) {
    char message[160];
    snprintf(message, sizeof message, "%s(samples, sample_rate, channels = 1): sample_rate and channels must be ints",
             method);
    *channels = 1;
    if (!argument(self, num_args >= 2 && api->godot_variant_get_type(args[1]) == GODOT_VARIANT_TYPE_INT, message))
        return 0;
    if (num_args >= 3 && !argument(self, api->godot_variant_get_type(args[2]) == GODOT_VARIANT_TYPE_INT, message))
        return 0;
    int64_t rate = api->godot_variant_as_int(args[1]), count = num_args >= 3 ? api->godot_variant_as_int(args[2]) : 1;
    /* out of int32's range: passed on as 0, which the library refuses in its own words */
    *sample_rate = rate >= 0 && rate <= INT32_MAX ? (int32_t)rate : 0;
    *channels = count >= 0 && count <= INT32_MAX ? (int32_t)count : 0;
    return 1;
}

static int whole_frames(lipsync *self, const char *method, int64_t values, int32_t channels) {
    char message[160];
    snprintf(message, sizeof message, "%s: %lld values are not a whole number of frames of %d channels", method,
             (long long)values, (int)channels);
    return argument(self, channels <= 0 || values % channels == 0, message);
}

/* push(samples: PoolRealArray, sample_rate: int, channels = 1) -> Dictionary (floats in [-1, 1], interleaved) */
static godot_variant push(godot_object *object, void *method_data, void *data, int num_args, godot_variant **args) {
    lipsync *self = data;
    int32_t rate, channels;
    if (!has_stream(self) ||
        !argument(self, num_args >= 1 && api->godot_variant_get_type(args[0]) == GODOT_VARIANT_TYPE_POOL_REAL_ARRAY,
                  "push(samples, sample_rate, channels = 1): samples must be a PoolRealArray") ||
        !rate_and_channels(self, "push", num_args, args, &rate, &channels))
        return nil();
    godot_pool_real_array samples = api->godot_variant_as_pool_real_array(args[0]);
    int64_t count = api->godot_pool_real_array_size(&samples);
    const speechattn_update *update = NULL;
    speechattn_status status = SPEECHATTN_OK;
    int whole = whole_frames(self, "push", count, channels);
    if (whole) {
        godot_pool_real_array_read_access *read = api->godot_pool_real_array_read(&samples);
        const godot_real *values = api->godot_pool_real_array_read_access_ptr(read);
        float *copy = NULL;
        if (sizeof(godot_real) != sizeof(float)) { /* a Godot built with double reals */
            copy = malloc(count ? (size_t)count * sizeof *copy : 1);
            for (int64_t i = 0; copy && i < count; i++) copy[i] = (float)values[i];
        }
        status = sizeof(godot_real) != sizeof(float) && !copy ? SPEECHATTN_ERR_OUT_OF_MEMORY :
            speechattn_stream_push_f32(self->stream, copy ? copy : (const float *)values,
                                       channels > 0 ? count / channels : count, channels, rate, &update);
        free(copy);
        api->godot_pool_real_array_read_access_destroy(read);
    }
    api->godot_pool_real_array_destroy(&samples);
    return whole && check(self, status) ? update_dictionary(update) : nil();
}

/* push_int16(pcm: PoolByteArray, sample_rate: int, channels = 1) -> Dictionary: 16-bit little-endian PCM, interleaved,
 * as a WAV file's data chunk and AudioStreamSample.data hold it. */
static godot_variant push_int16(godot_object *object, void *method_data, void *data, int num_args,
                                godot_variant **args) {
    lipsync *self = data;
    int32_t rate, channels;
    if (!has_stream(self) ||
        !argument(self, num_args >= 1 && api->godot_variant_get_type(args[0]) == GODOT_VARIANT_TYPE_POOL_BYTE_ARRAY,
                  "push_int16(pcm, sample_rate, channels = 1): pcm must be a PoolByteArray") ||
        !rate_and_channels(self, "push_int16", num_args, args, &rate, &channels))
        return nil();
    godot_pool_byte_array pcm = api->godot_variant_as_pool_byte_array(args[0]);
    int64_t bytes = api->godot_pool_byte_array_size(&pcm), count = bytes / 2;
    const speechattn_update *update = NULL;
    speechattn_status status = SPEECHATTN_OK;
    int whole = argument(self, bytes % 2 == 0, "push_int16: pcm has an odd number of bytes (16-bit samples are 2)") &&
                whole_frames(self, "push_int16", count, channels);
    if (whole) {
        /* copied: aligned (the pool's bytes may not be) and little-endian whatever the host's order */
        int16_t *samples = malloc(count ? (size_t)count * sizeof *samples : 1);
        if (samples) {
            godot_pool_byte_array_read_access *read = api->godot_pool_byte_array_read(&pcm);
            const uint8_t *data_bytes = api->godot_pool_byte_array_read_access_ptr(read);
            for (int64_t i = 0; i < count; i++)
                samples[i] = (int16_t)(uint16_t)(data_bytes[2 * i] | data_bytes[2 * i + 1] << 8);
            api->godot_pool_byte_array_read_access_destroy(read);
        }
        status = samples ? speechattn_stream_push_i16(self->stream, samples, channels > 0 ? count / channels : count,
                                                      channels, rate, &update) : SPEECHATTN_ERR_OUT_OF_MEMORY;
        free(samples);
    }
    api->godot_pool_byte_array_destroy(&pcm);
    return whole && check(self, status) ? update_dictionary(update) : nil();
}

/* finish() -> Dictionary: the last frames, segments and cues (once). */
static godot_variant finish(godot_object *object, void *method_data, void *data, int num_args, godot_variant **args) {
    lipsync *self = data;
    const speechattn_update *update;
    if (!has_stream(self) || !check(self, speechattn_stream_finish(self->stream, &update))) return nil();
    return update_dictionary(update);
}

/* get_cues() -> Array and get_segments() -> Array: every final one so far. */
static godot_variant get_cues(godot_object *object, void *method_data, void *data, int num_args,
                              godot_variant **args) {
    lipsync *self = data;
    const speechattn_cue *cues;
    int64_t count;
    if (!has_stream(self) || !check(self, speechattn_stream_cues(self->stream, &cues, &count))) return nil();
    return array_of(cues, count, sizeof *cues, cue_item);
}

static godot_variant get_segments(godot_object *object, void *method_data, void *data, int num_args,
                                  godot_variant **args) {
    lipsync *self = data;
    const speechattn_segment *segments;
    int64_t count;
    if (!has_stream(self) || !check(self, speechattn_stream_segments(self->stream, &segments, &count))) return nil();
    return array_of(segments, count, sizeof *segments, segment_item);
}

static godot_variant strings(const char *const *names, int32_t count) {
    godot_pool_string_array array;
    api->godot_pool_string_array_new(&array);
    for (int32_t i = 0; i < count; i++) {
        godot_string s = api->godot_string_chars_to_utf8(names[i]);
        api->godot_pool_string_array_append(&array, &s);
        api->godot_string_destroy(&s);
    }
    godot_variant v;
    api->godot_variant_new_pool_string_array(&v, &array);
    api->godot_pool_string_array_destroy(&array);
    return v;
}

/* get_shapes() -> PoolStringArray: the viseme set's shapes, the columns of an update's weights. */
static godot_variant get_shapes(godot_object *object, void *method_data, void *data, int num_args,
                                godot_variant **args) {
    lipsync *self = data;
    speechattn_stream_info info;
    if (!has_stream(self) || !check(self, speechattn_stream_get_info(self->stream, &info))) return nil();
    return info.visemes ? strings(info.visemes->shapes, info.visemes->num_shapes) : strings(NULL, 0);
}

/* get_phones() -> PoolStringArray: the model's phones. */
static godot_variant get_phones(godot_object *object, void *method_data, void *data, int num_args,
                                godot_variant **args) {
    lipsync *self = data;
    const speechattn_model_info *info;
    if (!has_stream(self) || !check(self, speechattn_model_get_info(self->model, &info))) return nil();
    return strings(info->phones, info->num_phones);
}

/* get_duration() -> float: seconds of audio heard (at the model's rate). */
static godot_variant get_duration(godot_object *object, void *method_data, void *data, int num_args,
                                  godot_variant **args) {
    lipsync *self = data;
    speechattn_stream_info info;
    if (!has_stream(self) || !check(self, speechattn_stream_get_info(self->stream, &info))) return nil();
    return real_variant(info.duration_seconds);
}

/* get_error() -> String and get_error_code() -> String ("SPEECHATTN_ERR_FILE", ...): the last failure's. */
static godot_variant get_error(godot_object *object, void *method_data, void *data, int num_args,
                               godot_variant **args) {
    return string_variant(((lipsync *)data)->error);
}

static godot_variant get_error_code(godot_object *object, void *method_data, void *data, int num_args,
                                    godot_variant **args) {
    return string_variant(((lipsync *)data)->error_code);
}

/* ---- registration ----------------------------------------------------------------------------------------------- */

static void *create(godot_object *object, void *method_data) {
    lipsync *self = api->godot_alloc(sizeof *self);
    if (self) memset(self, 0, sizeof *self);
    return self;
}

static void destroy(godot_object *object, void *method_data, void *data) {
    lipsync *self = data;
    speechattn_stream_destroy(self->stream);
    speechattn_model_destroy(self->model);
    api->godot_free(self);
}

void GDN_EXPORT godot_gdnative_init(godot_gdnative_init_options *options) {
    api = options->api_struct;
    for (unsigned i = 0; i < api->num_extensions; i++)
        if (api->extensions[i]->type == GDNATIVE_EXT_NATIVESCRIPT)
            nativescript = (const godot_gdnative_ext_nativescript_api_struct *)api->extensions[i];
}

void GDN_EXPORT godot_gdnative_terminate(godot_gdnative_terminate_options *options) {
    api = NULL;
    nativescript = NULL;
}

void GDN_EXPORT godot_nativescript_init(void *handle) {
    godot_instance_create_func create_func = {create, NULL, NULL};
    godot_instance_destroy_func destroy_func = {destroy, NULL, NULL};
    nativescript->godot_nativescript_register_class(handle, CLASS_NAME, "Reference", create_func, destroy_func);
    static const struct {
        const char *name;
        godot_variant (*method)(godot_object *, void *, void *, int, godot_variant **);
    } methods[] = {
        {"load_model", load_model}, {"restart", restart}, {"push", push}, {"push_int16", push_int16},
        {"finish", finish}, {"get_cues", get_cues}, {"get_segments", get_segments}, {"get_shapes", get_shapes},
        {"get_phones", get_phones}, {"get_duration", get_duration}, {"get_error", get_error},
        {"get_error_code", get_error_code},
    };
    godot_method_attributes attributes = {GODOT_METHOD_RPC_MODE_DISABLED};
    for (size_t i = 0; i < sizeof methods / sizeof *methods; i++) {
        godot_instance_method method = {methods[i].method, NULL, NULL};
        nativescript->godot_nativescript_register_method(handle, CLASS_NAME, methods[i].name, attributes, method);
    }
}
