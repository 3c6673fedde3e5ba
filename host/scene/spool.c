/* spool.c: a save's file written by a thread of its own (spool.h).
 *
 * Two slots: the caller fills slot[filled % 2] and hands it over (filled++); the thread
 * writes slot[drained % 2] while drained < filled (drained++ when done). The caller starts
 * filling a slot only when at most one other is waiting (filled - drained < 2), so it never
 * writes into the one being written. Both counters change under the mutex.
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

struct host_spool {
    int fd;
    int err; /* the first failed write's errno: the thread's until it is joined */
    bool threaded, done;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char *slot[2];
    size_t len[2];            /* bytes of each handed-over slot */
    uint32_t filled, drained; /* slots handed over / written, in all */
    size_t fill;              /* bytes in slot[filled % 2], being filled */
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
        uint32_t k = s->drained % 2;
        pthread_mutex_unlock(&s->mu);
        drain(s, s->slot[k], s->len[k]);
        pthread_mutex_lock(&s->mu);
        s->drained++;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

host_spool *host_spool_start(int fd)
{
    host_spool *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->fd = fd;
    s->slot[0] = malloc(SLOT_BYTES);
    s->slot[1] = malloc(SLOT_BYTES);
    s->out = malloc(HOST_JW_EXPANDED(SLOT_BYTES));
    if (!s->slot[0] || !s->slot[1] || !s->out) {
        free(s->slot[0]);
        free(s->slot[1]);
        free(s->out);
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->threaded = host_thread_start(&s->thread, run, s);
    return s;
}

/* Hand the slot being filled over (to the thread, or written here without one). */
static void hand_over(host_spool *s)
{
    uint32_t k = s->filled % 2;
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
    while (s->filled - s->drained >= 2) pthread_cond_wait(&s->cv, &s->mu); /* next one free */
    pthread_mutex_unlock(&s->mu);
}

void host_spool_write(host_spool *s, const void *p, size_t n)
{
    const char *from = p;
    while (n) {
        size_t k = SLOT_BYTES - s->fill < n ? SLOT_BYTES - s->fill : n;
        memcpy(s->slot[s->filled % 2] + s->fill, from, k);
        s->fill += k;
        from += k;
        n -= k;
        if (s->fill == SLOT_BYTES) hand_over(s);
    }
}

bool host_spool_idle(host_spool *s)
{
    if (!s->threaded) return false;
    pthread_mutex_lock(&s->mu);
    bool idle = s->drained == s->filled;
    pthread_mutex_unlock(&s->mu);
    return idle;
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
    free(s->slot[0]);
    free(s->slot[1]);
    free(s->out);
    free(s);
    return err;
}
