/* SPDX-License-Identifier: MIT */
/* ahead.c: a load's values lexed ahead by a second thread (ahead.h).
 *
 * The ring is a queue of the values the thread lexed, in seq order: entry q lies in
 * slot[q % SLOTS], its tokens and strings in two circular buffers at monotonic positions
 * (a value's never wrap: a tail too short for it is left unused). Only objects and arrays
 * are lexed: a string, number or literal costs the loader no more to read itself than to
 * take, and passing them over lets the thread get ahead where it pays (a manager of names
 * before a manager of transforms: the thread is into the transforms while the loader reads
 * the names).
 *
 * The loader says where it is (host_ahead_at): its seq, and `head`, its first entry not
 * behind that seq. The thread writes entry q only while q < head + SLOTS, and only into
 * buffer space after head's, so nothing the loader can still take is written. `produced`
 * (release) publishes entries. Both sides touch the shared counters rarely: the loader
 * every AT_EVERY values, at once when it has to lex one of the thread's values itself, and
 * looks at `produced` at most every RECHECK values while the thread is behind; the thread
 * reads the loader's place before each value (a line that changes that rarely).
 *
 * A thread that falls behind jumps JUMP values past the loader: the loader lexes those
 * itself, at about twice the thread's cost per value, while the thread gets ahead again.
 * Going on just past the loader instead kept the two in step when the thread's CPU was
 * slower for a while: the loader reached each value first and lexed it, and all of the
 * thread's work was lost (43,000 of 100,000 transforms taken, pass two 40 ms instead of 28).
 */
#include "ahead.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "thread.h"

#define SLOTS    (1u << 15)        /* values in the ring */
#define TOKENS   ((size_t)1 << 18) /* tokens in the ring: 8 MiB */
#define BYTES    ((size_t)1 << 21) /* string bytes in the ring */
#define AT_EVERY 64u               /* how often the loader says where it is */
#define JUMP     256u              /* how far past the loader a thread behind it goes on */
#define RECHECK  16u               /* how often a loader ahead of the thread looks again */
#define PREFETCH 16u               /* how far ahead of its value it asks for the text */

typedef struct slot {
    uint64_t seq;
    uint64_t tok_pos, byte_pos; /* where its tokens and strings start (monotonic) */
    const host_jr_token *tok;   /* its tokens in the ring */
    size_t count;
} slot;

/* Where the loader is: its seq, and its first entry not behind it. */
typedef struct place {
    uint64_t seq, head;
} place;

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
    uint64_t head;              /* its first entry not behind it */
    uint64_t seen;              /* its copy of `produced` */
    uint64_t now;               /* its seq (host_ahead_at) */
    uint64_t recheck;           /* when it looks at `produced` again, the thread behind */
    uint64_t taken;
    /* shared */
    _Alignas(64) _Atomic uint64_t at_seq;
    _Atomic uint64_t at_head;
    _Alignas(64) _Atomic uint64_t produced;
    atomic_bool stop;
};

static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static place loader_place(host_ahead *a)
{
    place p;
    p.head = atomic_load_explicit(&a->at_head, memory_order_acquire);
    p.seq = atomic_load_explicit(&a->at_seq, memory_order_acquire);
    return p;
}

/* Wait until the loader has moved (then its new place in *c): false when told to stop.
 * Called with the ring full, thousands of values ahead of the loader: after a short spin
 * the thread sleeps WAIT_NS at a time instead of yielding in a loop. A loop of yields kept
 * its CPU busy through a whole manager of names (6-10 ms, the loader reading names while
 * the ring stayed full) and slowed the loader: names 10.2 -> 8.9 ms at the median, loads
 * 63.2 -> 60.0 (bench/README, session 15); and it burnt a core for nothing. */
#define WAIT_NS 20000 /* the loader takes about 100 values meanwhile */

static bool wait_loader(host_ahead *a, place *c)
{
    for (unsigned spins = 0;; spins++) {
        if (atomic_load_explicit(&a->stop, memory_order_relaxed)) return false;
        place now = loader_place(a);
        if (now.head != c->head || now.seq != c->seq) {
            *c = now;
            return true;
        }
        if (spins < 256) {
            relax();
        } else {
            struct timespec nap = {0, WAIT_NS};
            nanosleep(&nap, NULL);
        }
    }
}

/* Lex value seq (at `at`) as entry q into the ring at *tpos, *bpos, waiting for room.
 * True when it is sound and in the ring (not yet published); false when it is not sound,
 * does not fit even an empty ring, or the loader passed it meanwhile (or stop). */
static bool lex_value(host_ahead *a, uint64_t seq, uint64_t q, size_t at, place *c, uint64_t *tpos,
                      uint64_t *bpos)
{
    slot *s = &a->slots[q % SLOTS];
    for (;;) {
        const slot *oldest = c->head < q ? &a->slots[c->head % SLOTS] : NULL;
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
        if (!ok) return false; /* the loader reads it, and says what is wrong */
        if (!tape.full) {
            *s = (slot){seq, *tpos, *bpos, tape.tok, tape.n};
            *tpos += tape.n;
            *bpos += tape.used;
            return true;
        }
        bool wrapped = false; /* out of room: at a buffer's end, start it over */
        if (end_t < room_t) *tpos += end_t, wrapped = true;
        if (end_b < room_b) *bpos += end_b, wrapped = true;
        if (wrapped) continue;
        if (!oldest) return false; /* the whole ring is not enough: the loader reads it */
        if (!wait_loader(a, c) || c->seq > seq) return false;
    }
}

/* Where value seq starts (offset + 1), or 0: none, or not one to lex. */
static uint64_t value_at(const host_ahead *a, uint64_t seq)
{
    size_t m = (size_t)(seq / a->n), i = (size_t)(seq % a->n);
    return a->want[m] ? a->at[i * a->managers + m] : 0;
}

/* Whether manager m's values are worth reading: it wants them, and one of its first
 * SAMPLE values is an object or an array (a manager of names is passed over whole, not
 * name by name: looking at each name's first byte took the thread 2 ms of 100,000). */
#define SAMPLE 64u

static bool worth_reading(const host_ahead *a, size_t m)
{
    for (uint32_t i = 0; a->want[m] && i < a->n && i < SAMPLE; i++) {
        uint64_t at1 = a->at[(size_t)i * a->managers + m];
        if (at1 && (a->text[at1 - 1] == '{' || a->text[at1 - 1] == '[')) return true;
    }
    return false;
}

static void *run(void *arg)
{
    host_ahead *a = arg;
    place c = {0, 0};
    uint64_t q = 0, tpos = 0, bpos = 0;
    for (uint64_t seq = 0; seq < a->total; seq++) {
        if (seq % a->n == 0 && !worth_reading(a, (size_t)(seq / a->n))) {
            seq += a->n - 1; /* the next manager's first value next */
            continue;
        }
        c = loader_place(a);
        if (seq <= c.seq) /* behind the loader, or at it: go on well ahead of it */
            if ((seq = c.seq + JUMP) >= a->total) break;
        if (seq + PREFETCH < a->total) /* the text of a value soon: from memory meanwhile */
            host_ahead_prefetch(a->text, value_at(a, seq + PREFETCH));
        uint64_t at1 = value_at(a, seq);
        if (!at1 || (a->text[at1 - 1] != '{' && a->text[at1 - 1] != '[')) continue;
        while (q >= c.head + SLOTS) /* a ring ahead: wait */
            if (!wait_loader(a, &c)) return NULL;
        if (!lex_value(a, seq, q, (size_t)(at1 - 1), &c, &tpos, &bpos)) {
            if (atomic_load_explicit(&a->stop, memory_order_relaxed)) break;
            continue;
        }
        if (seq < c.seq) continue; /* passed meanwhile: not published */
        atomic_store_explicit(&a->produced, ++q, memory_order_release);
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
    atomic_init(&a->at_seq, 0);
    atomic_init(&a->at_head, 0);
    atomic_init(&a->produced, 0);
    atomic_init(&a->stop, false);
    if (a->r && a->slots && a->tok && a->bytes && a->want) {
        memcpy(a->want, want, managers);
        if (host_thread_start(&a->thread, run, a, "ecs-scene-ahead")) return a;
    }
    ahead_free(a);
    return NULL;
}

static void tell(host_ahead *a, uint64_t seq)
{
    a->told = seq;
    atomic_store_explicit(&a->at_head, a->head, memory_order_release);
    atomic_store_explicit(&a->at_seq, seq, memory_order_release);
}

void host_ahead_at(host_ahead *a, uint64_t seq)
{
    if (!a) return;
    a->now = seq;
    while (a->head < a->seen && a->slots[a->head % SLOTS].seq < seq) a->head++;
    if (seq - a->told >= AT_EVERY) tell(a, seq);
}

bool host_ahead_get(host_ahead *a, uint64_t seq, const host_jr_token **tok, size_t *count)
{
    if (!a) return false;
    /* entries [head, seen) hold increasing seqs, head's not below the loader's place: seq's
     * is there if the thread lexed it (further on for a reference's target) */
    bool missing = a->head == a->seen || a->slots[(a->seen - 1) % SLOTS].seq < seq;
    if (missing && seq >= a->recheck) {
        a->seen = atomic_load_explicit(&a->produced, memory_order_acquire);
        missing = a->head == a->seen || a->slots[(a->seen - 1) % SLOTS].seq < seq;
        if (missing) a->recheck = a->now + RECHECK;
    }
    if (missing && seq == a->now && seq != a->told) { /* one of the thread's? it is behind */
        uint64_t at1 = value_at(a, seq);
        if (at1 && (a->text[at1 - 1] == '{' || a->text[at1 - 1] == '[')) tell(a, seq);
    }
    uint64_t lo = a->head, hi = a->seen;
    if (lo < hi && a->slots[lo % SLOTS].seq < seq) /* a reference's target: search */
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (a->slots[mid % SLOTS].seq < seq)
                lo = mid + 1;
            else
                hi = mid;
        }
    if (lo == a->seen || a->slots[lo % SLOTS].seq != seq) return false;
    *tok = a->slots[lo % SLOTS].tok;
    *count = a->slots[lo % SLOTS].count;
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
