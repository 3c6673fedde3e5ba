/* ahead.c: a load's values lexed ahead by a second thread (ahead.h).
 *
 * The ring: value seq's slot is slot[seq % SLOTS], its tokens and strings lie in two
 * circular buffers at monotonic positions (a value's never wrap: a tail too short for it
 * is left unused). The thread writes seq only while seq < consumed + SLOTS, and only into
 * buffer space after the oldest value the loader may still read (slot[consumed]'s), so
 * nothing the loader can reach is written. `produced` (release) publishes finished slots;
 * a slot that holds another seq, or is not sound, is not taken.
 *
 * Both counters are touched rarely: the loader publishes where it is every AT_EVERY
 * values, and reads `produced` again only when its copy says seq is not there yet; the
 * thread reads `consumed` every AT_EVERY values or when it runs out of room.
 */
#include "ahead.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "thread.h"

#define SLOTS    (1u << 15)        /* values in the ring */
#define TOKENS   ((size_t)1 << 18) /* tokens in the ring: 8 MiB */
#define BYTES    ((size_t)1 << 21) /* string bytes in the ring */
#define AT_EVERY 64u               /* how often the loader says where it is */
#define LEAD     64u               /* how far ahead of the loader a thread behind it goes on */
#define PREFETCH 16u               /* how far ahead of its value it asks for the text */

typedef struct slot {
    uint64_t seq;
    uint64_t tok_pos, byte_pos; /* where its tokens and strings start (monotonic) */
    const host_jr_token *tok;   /* its tokens in the ring */
    size_t count;
    bool sound; /* read whole without an error, and all of it in the tokens */
} slot;

struct host_ahead {
    /* set at the start */
    const char *text;
    size_t len;
    const uint64_t *at;
    uint32_t n;
    size_t managers;
    bool *want; /* a copy */
    uint64_t total;
    host_jreader *r;
    slot *slots;
    host_jr_token *tok;
    char *bytes;
    pthread_t thread;
    /* the loader's */
    _Alignas(64) uint64_t told; /* the last seq it published */
    uint64_t seen;              /* its copy of `produced` */
    uint64_t taken;
    /* shared */
    _Alignas(64) _Atomic uint64_t consumed;
    _Alignas(64) _Atomic uint64_t produced;
    atomic_bool stop;
};

static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Wait until the loader is past *c (then the new place in *c): false when told to stop. */
static bool wait_loader(host_ahead *a, uint64_t *c)
{
    for (unsigned spins = 0;; spins++) {
        if (atomic_load_explicit(&a->stop, memory_order_relaxed)) return false;
        uint64_t now = atomic_load_explicit(&a->consumed, memory_order_acquire);
        if (now != *c) {
            *c = now;
            return true;
        }
        if (spins < 256)
            relax();
        else
            sched_yield();
    }
}

/* Slot s is value seq's, with no tokens (yet); its place in the buffers tpos, bpos. */
static void empty(slot *s, uint64_t seq, uint64_t tpos, uint64_t bpos)
{
    *s = (slot){seq, tpos, bpos, NULL, 0, false};
}

/* Lex value seq (at `at`) into the ring at *tpos, *bpos, waiting for room. Returns false
 * when the loader passed seq meanwhile (or stop): the slot is not published then. */
static bool lex_value(host_ahead *a, slot *s, size_t at, uint64_t *c, uint64_t *tpos,
                      uint64_t *bpos)
{
    for (;;) {
        const slot *oldest = *c < s->seq ? &a->slots[*c % SLOTS] : NULL;
        size_t room_t = TOKENS - (size_t)(*tpos - (oldest ? oldest->tok_pos : *tpos));
        size_t room_b = BYTES - (size_t)(*bpos - (oldest ? oldest->byte_pos : *bpos));
        size_t end_t = TOKENS - (size_t)(*tpos % TOKENS), end_b = BYTES - (size_t)(*bpos % BYTES);
        host_jr_tape tape = {a->tok + *tpos % TOKENS,
                             0,
                             end_t < room_t ? end_t : room_t,
                             a->bytes + *bpos % BYTES,
                             0,
                             end_b < room_b ? end_b : room_b,
                             false};
        host_jr_start(a->r, a->text, a->len, at, HOST_JR_STRICT);
        host_jr_record(a->r, &tape);
        ecs_json_reader *api = host_jr_api(a->r);
        bool ok = api->skip(api) && host_jr_complete(a->r);
        if (!tape.full || !ok) {
            s->tok = tape.tok;
            s->count = tape.n;
            s->tok_pos = *tpos;
            s->byte_pos = *bpos;
            s->sound = ok && !tape.full;
            *tpos += tape.n;
            *bpos += tape.used;
            return true;
        }
        bool wrapped = false; /* out of room: at a buffer's end, start it over */
        if (end_t < room_t) *tpos += end_t, wrapped = true;
        if (end_b < room_b) *bpos += end_b, wrapped = true;
        if (wrapped) continue;
        if (!oldest) { /* the whole ring is not enough: the loader reads it itself */
            empty(s, s->seq, *tpos, *bpos);
            return true;
        }
        if (!wait_loader(a, c) || *c > s->seq) return false;
    }
}

static void *run(void *arg)
{
    host_ahead *a = arg;
    uint64_t c = 0, tpos = 0, bpos = 0;
    for (uint64_t seq = 0; seq < a->total;) {
        if (seq % AT_EVERY == 0 || seq >= c + SLOTS)
            c = atomic_load_explicit(&a->consumed, memory_order_acquire);
        if (seq < c) /* behind the loader: go on a little ahead of it */
            for (seq = c; seq < c + LEAD && seq < a->total; seq++)
                empty(&a->slots[seq % SLOTS], seq, tpos, bpos);
        if (seq >= a->total) break;
        if (seq >= c + SLOTS) { /* a ring ahead: wait */
            if (!wait_loader(a, &c)) break;
            continue;
        }
        slot *s = &a->slots[seq % SLOTS];
        size_t m = (size_t)(seq / a->n), i = (size_t)(seq % a->n);
        uint64_t at1 = a->want[m] ? a->at[i * a->managers + m] : 0;
        empty(s, seq, tpos, bpos);
        if (seq + PREFETCH < a->total) { /* the text of a value soon: from memory meanwhile */
            uint64_t q = seq + PREFETCH;
            uint64_t at = a->at[(size_t)(q % a->n) * a->managers + (size_t)(q / a->n)];
            for (int k = 0; at && k < 4; k++) __builtin_prefetch(a->text + at - 1 + 64 * k);
        }
        if (at1 && !lex_value(a, s, (size_t)(at1 - 1), &c, &tpos, &bpos)) {
            if (atomic_load_explicit(&a->stop, memory_order_relaxed)) break;
            continue; /* passed meanwhile: not published */
        }
        atomic_store_explicit(&a->produced, ++seq, memory_order_release);
    }
    return NULL;
}

static void ahead_free(host_ahead *a)
{
    host_jr_free(a->r);
    free(a->want);
    free(a->slots);
    free(a->tok);
    free(a->bytes);
    free(a);
}

host_ahead *host_ahead_start(const char *text, size_t len, const uint64_t *at, uint32_t n,
                             size_t managers, const bool *want)
{
    if (n == 0 || managers == 0 || sysconf(_SC_NPROCESSORS_ONLN) < 2) return NULL;
    host_ahead *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    *a = (host_ahead){.text = text,
                      .len = len,
                      .at = at,
                      .n = n,
                      .managers = managers,
                      .want = malloc(managers),
                      .total = (uint64_t)n * managers,
                      .r = host_jr_new(),
                      .slots = malloc(SLOTS * sizeof(slot)),
                      .tok = malloc(TOKENS * sizeof(host_jr_token)),
                      .bytes = malloc(BYTES)};
    atomic_init(&a->consumed, 0);
    atomic_init(&a->produced, 0);
    atomic_init(&a->stop, false);
    if (a->r && a->slots && a->tok && a->bytes && a->want) {
        memcpy(a->want, want, managers);
        for (size_t k = 0; k < SLOTS; k++) a->slots[k].seq = UINT64_MAX;
        if (host_thread_start(&a->thread, run, a)) return a;
    }
    ahead_free(a);
    return NULL;
}

void host_ahead_at(host_ahead *a, uint64_t seq)
{
    if (!a || seq - a->told < AT_EVERY) return;
    a->told = seq;
    atomic_store_explicit(&a->consumed, seq, memory_order_release);
}

bool host_ahead_get(host_ahead *a, uint64_t seq, const host_jr_token **tok, size_t *count)
{
    if (!a) return false;
    if (seq >= a->seen &&
        (a->seen = atomic_load_explicit(&a->produced, memory_order_acquire)) <= seq)
        return false;
    const slot *s = &a->slots[seq % SLOTS];
    if (s->seq != seq || !s->sound) return false;
    *tok = s->tok;
    *count = s->count;
    a->taken++;
    return true;
}

void host_ahead_stop(host_ahead *a, uint64_t *taken)
{
    if (taken) *taken = a ? a->taken : 0;
    if (!a) return;
    atomic_store(&a->stop, true);
    pthread_join(a->thread, NULL);
    ahead_free(a);
}
