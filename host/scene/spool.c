/* SPDX-License-Identifier: MIT */
/* spool.c: a save's file written by a thread of its own (spool.h).
 *
 * SLOTS slots: the caller fills slot[filled % SLOTS] and hands it over (filled++); the
 * thread writes slot[drained % SLOTS] while drained < filled (drained++ when done). The
 * caller starts filling a slot only when the others are not all waiting (filled - drained
 * < SLOTS), so it never writes into one being written. Both counters change under the
 * mutex. Four slots, not two: with two, the caller waited for the thread about 10 ms of a
 * 50 ms save of 100,000 entities while the thread sat idle about 15 ms (each waits out the
 * other's slower pieces); with four, neither waits much (W7 save 50 -> 39 ms median).
 */
#include "spool.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jwrite.h"
#include "thread.h"

#define SLOT_BYTES ((size_t)256 << 10)
#define SLOTS      4u

struct host_spool {
    int fd;
    int err; /* the first failed write's errno: the thread's until it is joined */
    bool threaded, done;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char *slot[SLOTS];
    size_t len[SLOTS];        /* bytes of each handed-over slot */
    uint32_t filled, drained; /* slots handed over / written, in all */
    size_t fill;              /* bytes in slot[filled % SLOTS], being filled */
    host_jw_expander x;
    char *out; /* HOST_JW_EXPANDED(SLOT_BYTES): a slot's text with its floats laid out */
};

/* Lay out and write one slot (nothing after a failed write). */
static void drain(host_spool *s, const char *text, size_t n)
{
    if (s->err) return;
    size_t m = host_jw_expand(&s->x, text, n, s->out);
    for (size_t at = 0; at < m;) {
        ssize_t k = write(s->fd, s->out + at, m - at);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) { /* a full disk, a file size limit: the save fails at its end */
            s->err = k < 0 ? errno : EIO;
            return;
        }
        at += (size_t)k;
    }
}

static void *run(void *arg)
{
    host_spool *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->drained == s->filled && !s->done) pthread_cond_wait(&s->cv, &s->mu);
        if (s->drained == s->filled) break; /* done, and everything written */
        uint32_t k = s->drained % SLOTS;
        pthread_mutex_unlock(&s->mu);
        drain(s, s->slot[k], s->len[k]);
        pthread_mutex_lock(&s->mu);
        s->drained++;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Free the spool and its buffers (any of them NULL). */
static void slots_free(host_spool *s)
{
    for (unsigned i = 0; i < SLOTS; i++) free(s->slot[i]);
    free(s->out);
    free(s);
}

host_spool *host_spool_start(int fd)
{
    host_spool *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->fd = fd;
    bool ok = (s->out = malloc(HOST_JW_EXPANDED(SLOT_BYTES))) != NULL;
    for (unsigned i = 0; i < SLOTS; i++) ok = (s->slot[i] = malloc(SLOT_BYTES)) && ok;
    if (!ok) {
        slots_free(s);
        return NULL;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->threaded = host_thread_start(&s->thread, run, s, "ecs-scene-write");
    return s;
}

/* Hand the slot being filled over (to the thread, or written here without one). */
static void hand_over(host_spool *s)
{
    uint32_t k = s->filled % SLOTS;
    s->len[k] = s->fill;
    s->fill = 0;
    if (!s->threaded) {
        drain(s, s->slot[k], s->len[k]);
        s->filled++;
        s->drained++;
        return;
    }
    pthread_mutex_lock(&s->mu);
    s->filled++;
    pthread_cond_broadcast(&s->cv);
    while (s->filled - s->drained >= SLOTS) pthread_cond_wait(&s->cv, &s->mu); /* next one free */
    pthread_mutex_unlock(&s->mu);
}

void host_spool_write(host_spool *s, const void *p, size_t n)
{
    const char *from = p;
    while (n) {
        size_t k = SLOT_BYTES - s->fill < n ? SLOT_BYTES - s->fill : n;
        memcpy(s->slot[s->filled % SLOTS] + s->fill, from, k);
        s->fill += k;
        from += k;
        n -= k;
        if (s->fill == SLOT_BYTES) hand_over(s);
    }
}

bool host_spool_keeps_up(host_spool *s)
{
    if (!s->threaded) return false;
    pthread_mutex_lock(&s->mu);
    bool keeps_up = s->filled - s->drained <= 1;
    pthread_mutex_unlock(&s->mu);
    return keeps_up;
}

int host_spool_finish(host_spool *s)
{
    if (!s) return 0;
    if (s->fill) hand_over(s);
    if (s->threaded) {
        pthread_mutex_lock(&s->mu);
        s->done = true;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
    }
    int err = s->err ? s->err : s->x.have ? EIO : 0;
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    slots_free(s);
    return err;
}
