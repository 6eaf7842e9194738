/* phone-bigram.json ({"phones": [...], "log_probs": [[...]]}, as speechattn/data/phonotactics.py writes it) reordered
 * to a model's phones: export/decoder.py PhoneBigram.load + for_phones. */
#include <stdlib.h>
#include <string.h>

#include "../third_party/cjson/cJSON.h"
#include "internal.h"

#define MAX_BIGRAM_BYTES 10000000

speechattn_status sa_load_bigram(const char *path, const char *const *phones, int32_t P, double **out) {
    char *text = NULL;
    int64_t size = 0;
    speechattn_status status = sa_read_file(path, "phone bigram", MAX_BIGRAM_BYTES, &text, &size);
    if (status) return status;
    cJSON *root = cJSON_ParseWithLength(text, (size_t)size);
    free(text);
    const cJSON *names = root ? cJSON_GetObjectItemCaseSensitive(root, "phones") : NULL;
    const cJSON *table = root ? cJSON_GetObjectItemCaseSensitive(root, "log_probs") : NULL;
    int n = cJSON_IsArray(names) ? cJSON_GetArraySize(names) : -1;
    if (n < 1 || !cJSON_IsArray(table) || cJSON_GetArraySize(table) != n) {
        cJSON_Delete(root);
        return sa_fail(SPEECHATTN_ERR_MODEL, "%s: not a phone bigram (a JSON object of phones and an n x n log_probs)",
                       path);
    }
    int *order = malloc(sizeof(int) * (size_t)P);
    double *result = malloc(sizeof(double) * (size_t)P * (size_t)P);
    if (!order || !result) {
        free(order);
        free(result);
        cJSON_Delete(root);
        return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory reading %s", path);
    }
    for (int32_t p = 0; p < P; p++) {
        order[p] = -1;
        for (int i = 0; i < n; i++) {
            const cJSON *name = cJSON_GetArrayItem(names, i);
            if (cJSON_IsString(name) && strcmp(name->valuestring, phones[p]) == 0) order[p] = i;
        }
        if (order[p] < 0) {
            free(order);
            free(result);
            cJSON_Delete(root);
            return sa_fail(SPEECHATTN_ERR_MODEL, "the phone bigram has no row for %s", phones[p]);
        }
    }
    for (int32_t i = 0; i < P; i++) {
        const cJSON *row = cJSON_GetArrayItem(table, order[i]);
        for (int32_t j = 0; j < P; j++) {
            const cJSON *value = cJSON_IsArray(row) && cJSON_GetArraySize(row) == n ? cJSON_GetArrayItem(row, order[j])
                                                                                    : NULL;
            if (!cJSON_IsNumber(value)) {
                int bad_row = order[i];
                free(order);
                free(result);
                cJSON_Delete(root);
                return sa_fail(SPEECHATTN_ERR_MODEL, "%s: log_probs row %d is not %d numbers", path, bad_row, n);
            }
            result[(size_t)i * P + j] = value->valuedouble;
        }
    }
    free(order);
    cJSON_Delete(root);
    *out = result;
    return SPEECHATTN_OK;
}
