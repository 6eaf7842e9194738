/* Phones -> mouth shapes: export/visemes.py's VisemeSet tables (generated: viseme_tables.c), CueMaker (cues with the
 * animation rules: minimum hold, bilabials kept, short pauses bridged) and frame_weights. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static speechattn_viseme_set_info set_infos[16];
static int infos_ready;

static void fill_infos(void) { /* constant data: filling it twice from two threads writes the same values */
    if (infos_ready) return;
    for (int32_t i = 0; i < sa_viseme_table_count && i < 16; i++) {
        const sa_viseme_table *t = &sa_viseme_tables[i];
        speechattn_viseme_set_info info = {t->name, t->num_shapes, t->shapes, t->rest, t->closed_lips};
        set_infos[i] = info;
    }
    infos_ready = 1;
}

int32_t speechattn_viseme_set_count(void) { return sa_viseme_table_count; }

const speechattn_viseme_set_info *speechattn_viseme_set_at(int32_t index) {
    fill_infos();
    if (index < 0 || index >= sa_viseme_table_count) {
        sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "viseme set index %d is outside 0..%d", index,
                sa_viseme_table_count - 1);
        return NULL;
    }
    return &set_infos[index];
}

int32_t sa_find_set(const char *name) {
    for (int32_t i = 0; name && i < sa_viseme_table_count; i++)
        if (strcmp(sa_viseme_tables[i].name, name) == 0) return i;
    return -1;
}

const speechattn_viseme_set_info *speechattn_viseme_set(const char *name) {
    int32_t i = sa_find_set(name);
    if (i < 0) {
        sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "visemes must be one of rhubarb, oculus, vrm, not '%.40s'",
                name ? name : "(NULL)");
        return NULL;
    }
    return speechattn_viseme_set_at(i);
}

static int32_t shape_index(const sa_viseme_table *t, const char *shape) {
    for (int32_t s = 0; s < t->num_shapes; s++)
        if (strcmp(t->shapes[s], shape) == 0) return s;
    return -1;
}

speechattn_status sa_shape_indices(int32_t set, const char *const *phones, int32_t P, int32_t *shape_of) {
    const sa_viseme_table *t = &sa_viseme_tables[set];
    for (int32_t p = 0; p < P; p++) {
        shape_of[p] = -1;
        for (int32_t i = 0; i < t->num_phones; i++)
            if (strcmp(t->phones[i], phones[p]) == 0) shape_of[p] = shape_index(t, t->phone_shapes[i]);
        if (shape_of[p] < 0)
            return sa_fail(SPEECHATTN_ERR_MODEL, "the %s viseme set has no shape for %s", t->name, phones[p]);
    }
    return SPEECHATTN_OK;
}

int sa_cue_maker_init(sa_cue_maker *m, int32_t set, const char *const *phones, int32_t P, int32_t min_hold,
                      int32_t bridge) {
    memset(m, 0, sizeof *m);
    m->shape_of = malloc(sizeof(int32_t) * (size_t)P);
    m->bilabial = malloc(sizeof(int) * (size_t)P);
    if (!m->shape_of || !m->bilabial) {
        sa_cue_maker_free(m);
        return -1;
    }
    if (sa_shape_indices(set, phones, P, m->shape_of)) {
        sa_cue_maker_free(m);
        return -2;
    }
    for (int32_t p = 0; p < P; p++)
        m->bilabial[p] = !strcmp(phones[p], "P") || !strcmp(phones[p], "B") || !strcmp(phones[p], "M");
    m->rest = shape_index(&sa_viseme_tables[set], sa_viseme_tables[set].rest);
    m->min_hold = min_hold;
    m->bridge = bridge;
    return 0;
}

void sa_cue_maker_free(sa_cue_maker *m) {
    free(m->shape_of);
    free(m->bilabial);
    m->shape_of = NULL;
    m->bilabial = NULL;
}

int32_t sa_cue_maker_current(const sa_cue_maker *m) { return m->has_open ? m->open.shape : m->rest; }

static int emit(sa_cues *out, const sa_run *run) {
    if (SA_RESERVE(out->items, out->capacity, out->count + 1)) return -1;
    sa_cue *c = &out->items[out->count++];
    c->start = run->start;
    c->end = run->end;
    c->shape = run->shape;
    return 0;
}

/* The open run ends: the rules against the run before it (visemes.py CueMaker._close). */
static int close_run(sa_cue_maker *m, sa_run run, int last, sa_cues *out) {
    if (!m->has_pending) {
        m->pending = run;
        m->has_pending = 1;
        return 0;
    }
    sa_run *previous = &m->pending;
    int pause = run.shape == m->rest && !run.bilabial;
    if (pause && !last && run.end - run.start < m->bridge) {
        previous->end = run.end; /* a short pause inside speech: hold the shape before it */
        return 0;
    }
    if (run.end - run.start < m->min_hold && !(last && pause)) {
        if (!run.bilabial) {
            previous->end = run.end; /* too short to be seen: it joins the shape before it */
            return 0;
        }
        int64_t want = m->min_hold - (run.end - run.start);
        int64_t spare = previous->end - previous->start - m->min_hold;
        if (spare < 0) spare = 0;
        int64_t give = want < spare ? want : spare;
        previous->end -= give; /* closed lips lengthened with frames from the shape before */
        run.start -= give;
    }
    if (previous->shape == run.shape) {
        previous->end = run.end;
        previous->bilabial = previous->bilabial || run.bilabial;
        return 0;
    }
    sa_run done = *previous;
    m->pending = run;
    return emit(out, &done);
}

int sa_cue_maker_push(sa_cue_maker *m, const sa_seg *segments, int64_t count, sa_cues *out) {
    for (int64_t i = 0; i < count; i++) {
        const sa_seg *s = &segments[i];
        if (s->end <= s->start) continue;
        int32_t shape = m->shape_of[s->phone];
        int bilabial = m->bilabial[s->phone];
        if (m->has_open && m->open.shape == shape) {
            m->open.end = s->end;
            m->open.bilabial = m->open.bilabial || bilabial;
            continue;
        }
        if (m->has_open && close_run(m, m->open, 0, out)) return -1;
        m->open.start = s->start;
        m->open.end = s->end;
        m->open.shape = shape;
        m->open.bilabial = bilabial;
        m->has_open = 1;
    }
    return 0;
}

int sa_cue_maker_finish(sa_cue_maker *m, sa_cues *out) {
    if (m->has_open && close_run(m, m->open, 1, out)) return -1;
    if (m->has_pending && emit(out, &m->pending)) return -1;
    m->has_open = m->has_pending = 0;
    return 0;
}
