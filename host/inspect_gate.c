/* SPDX-License-Identifier: MIT */
/* inspect_gate.c: what every connection and request passes before the inspector answers
 * (inspect_int.h): the checks of a request's headers, made as soon as they have arrived,
 * and the watch over connections that take too long to send them.
 *
 * A request is refused before its body is read (so no "100 Continue" for it) when its
 * Host is not this server (DNS rebinding), when it has no token where one is needed (the
 * token compared in constant time), when it names Host or Authorization twice, when a
 * header or its URL holds a NUL (a %00 that would cut it), when it would write to a
 * read-only inspector, or when its body is announced over 1 MiB.
 *
 * Connections: every one is on in->conns from its start to its end (libmicrohttpd's
 * notify callback), with the time it began waiting for a request's headers; one that has
 * not sent them within HEADER_DEADLINE_NS is closed (its socket shut down: libmicrohttpd
 * sees the end and closes it), and when more than WAITING_MAX wait at once, the one
 * waiting longest is closed. So slow sockets, from any user of the machine and with no
 * token, can hold the inspector for a few seconds, never lock it: a client with its
 * request ready (the page) always finds room among CONNECTION_MAX.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "inspect_int.h"
#include "log.h"

#define HEADER_DEADLINE_NS 5000000000ull /* a request's headers must have come by then */
#define SWEEP_EVERY_NS     100000000ull  /* how often the deadline is looked at */
#define BODY_LIMIT         (1u << 20)
#define SEND_BUFFER                                                                                \
    (128 << 10) /* what the kernel takes of one write: an answer of 3 MB                           \
                   in one writev was a millisecond of a frame */

struct inspect_conn {
    struct MHD_Connection *c;
    inspect_conn *prev, *next;
    int fd;
    uint64_t since;  /* when it began waiting for a request's headers */
    bool in_request; /* its headers came: answered, or being answered */
    bool closing;    /* shut down by the gate: gone at the next run */
    bool nul;        /* its request's URL held a %00 */
};

static inspect_conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* Close k: its socket shut down, libmicrohttpd ends it at its next run. */
static void conn_close(host_inspector *in, inspect_conn *k, const char *why)
{
    if (k->closing) return;
    in->waiting -= !k->in_request;
    k->closing = true;
    shutdown(k->fd, SHUT_RDWR);
    in->closed_slow++;
    host_detail("inspect", "a connection closed: %s", why);
}

/* The connection that has waited longest for its headers, or NULL. */
static inspect_conn *longest_waiting(host_inspector *in)
{
    inspect_conn *best = NULL;
    for (inspect_conn *k = in->conns; k; k = k->next)
        if (!k->in_request && !k->closing && (!best || k->since < best->since)) best = k;
    return best;
}

void inspect_gate_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                         enum MHD_ConnectionNotificationCode toe)
{
    host_inspector *in = cls;
    inspect_conn *k = *socket_context;
    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        if (!k) return;
        if (!k->in_request && !k->closing) in->waiting--;
        *(k->prev ? &k->prev->next : &in->conns) = k->next;
        if (k->next) k->next->prev = k->prev;
        free(k);
        *socket_context = NULL;
        return;
    }
    const union MHD_ConnectionInfo *fd =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    int sndbuf = SEND_BUFFER; /* one write to it then costs a part of a slice, not a frame */
    if (fd) setsockopt(fd->connect_fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    if (!(k = calloc(1, sizeof *k))) return; /* not watched: the deadline misses one */
    *k = (inspect_conn){c,     NULL,  in->conns, fd ? fd->connect_fd : -1, host_now_ns(),
                        false, false, false};
    if (in->conns) in->conns->prev = k;
    in->conns = k;
    *socket_context = k;
    if (++in->waiting > WAITING_MAX) /* room for the next one: the slowest goes */
        conn_close(in, longest_waiting(in),
                   "too many connections without a request: the longest waiting goes");
}

void inspect_gate_sweep(host_inspector *in, uint64_t now)
{
    if (now < in->next_sweep) return;
    in->next_sweep = now + SWEEP_EVERY_NS;
    for (inspect_conn *k = in->conns; k; k = k->next)
        if (!k->in_request && !k->closing && now - k->since > HEADER_DEADLINE_NS)
            conn_close(in, k, "no request's headers within 5 s");
}

void inspect_gate_request_done(host_inspector *in, struct MHD_Connection *c)
{
    inspect_conn *k = conn_of(c);
    if (!k || !k->in_request) return;
    k->in_request = false; /* kept alive: it waits for the next request's headers */
    k->nul = false;
    k->since = host_now_ns();
    if (!k->closing) in->waiting++;
}

size_t inspect_gate_unescape(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    size_t n = MHD_http_unescape(s);
    inspect_conn *k = conn_of(c);
    if (k && strlen(s) != n) k->nul = true; /* a %00: what follows it would be cut */
    return n;
}

/* Constant time in the bytes compared: n bytes of a and b equal? */
static bool same_secret(const char *a, const char *b, size_t n)
{
    unsigned char d = 0;
    for (size_t i = 0; i < n; i++) d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

static bool token_is(const host_inspector *in, const char *t)
{
    size_t n = strlen(in->token);
    return t && strlen(t) == n && same_secret(t, in->token, n);
}

void *inspect_gate_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)cls, (void)c;
    request *r = calloc(1, sizeof *r); /* NULL: on_request makes it, the URI unmeasured */
    if (r) r->raw_uri_len = strlen(uri);
    return r;
}

/* The header counts of a request, and the bytes its parts take as sent. */
typedef struct header_scan {
    unsigned hosts, auths;
    size_t bytes; /* "Key: value\r\n" each */
} header_scan;

static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                   size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    header_scan *h = cls;
    h->hosts += !strcasecmp(key, "Host");
    h->auths += !strcasecmp(key, "Authorization");
    h->bytes += key_size + value_size + 4;
    return MHD_YES;
}

/* Did the request's headers hold more bytes than its parts as parsed? libmicrohttpd ends a
 * header's value (or the URI) at a NUL byte, so that "Authorization: Bearer TOKEN\0..."
 * reads as the token; the bytes behind the NUL still count in the size it read. Only extra
 * spaces around a value could make the same difference: no client sends them. */
static bool hidden_bytes(struct MHD_Connection *c, const request *r, const char *method,
                         const char *version, const header_scan *h)
{
    const union MHD_ConnectionInfo *size =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (!size || !r->raw_uri_len) return false;
    size_t parts = strlen(method) + 1 + r->raw_uri_len + 1 + strlen(version) + 2 + h->bytes + 2;
    return size->header_size > parts;
}

/* Is name (from a Host header, its port cut off) one this server answers to? */
static bool name_ok(const host_inspector *in, const char *name, size_t n)
{
    const char *fixed[] = {"localhost", "127.0.0.1", "[::1]", in->addr};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        if (strlen(fixed[i]) == n && !strncasecmp(name, fixed[i], n)) return true;
    for (size_t i = 0; i < in->host_count; i++)
        if (strlen(in->hosts[i]) == n && !strncasecmp(name, in->hosts[i], n)) return true;
    return false;
}

/* Is the Host header this server: a name of it, with our port or none? */
static bool host_ok(const host_inspector *in, const char *h)
{
    if (!h) return false;
    const char *colon = strrchr(h, ':'), *bracket = strrchr(h, ']');
    if (colon && bracket && colon < bracket) colon = NULL; /* "[::1]": no port */
    size_t n = colon ? (size_t)(colon - h) : strlen(h);
    char port[16];
    snprintf(port, sizeof port, "%u", in->port);
    return name_ok(in, h, n) && (!colon || !strcmp(colon + 1, port));
}

static bool is_write(const char *method)
{
    return !strcmp(method, "POST") || !strcmp(method, "PUT") || !strcmp(method, "PATCH") ||
           !strcmp(method, "DELETE");
}

unsigned inspect_gate_check(host_inspector *in, struct MHD_Connection *c, const request *r,
                            const char *url, const char *method, const char *version,
                            const char **msg)
{
    inspect_conn *k = conn_of(c);
    if (k && !k->in_request) k->in_request = true, in->waiting -= !k->closing;
    header_scan h = {0, 0, 0};
    MHD_get_connection_values_n(c, MHD_HEADER_KIND, scan_header, &h);
    if ((k && k->nul) || hidden_bytes(c, r, method, version, &h))
        return *msg = "a NUL in a header or in the URL (%00), which would cut it short", 400;
    if (h.hosts > 1 || h.auths > 1) return *msg = "Host and Authorization may each come once", 400;
    if (!host_ok(in, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host")))
        return *msg = "the Host header must name this server", 403;
    if (strncmp(url, "/api/", 5) != 0) return 0; /* the page: no token (it reads it) */
    const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    bool query = !strcmp(url, "/api/events") && /* EventSource cannot send headers */
                 token_is(in, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token"));
    if (!query && !(a && !strncmp(a, "Bearer ", 7) && token_is(in, a + 7)))
        return *msg = "a request needs the header Authorization: Bearer TOKEN", 403;
    const char *length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    if (length && strtoull(length, NULL, 10) > BODY_LIMIT)
        return *msg = "the request body is over 1 MiB", 413;
    if (is_write(method) && in->read_only)
        return *msg = "the inspector is read-only (--inspect-read-only)", 403;
    return 0;
}

void inspect_gate_free(host_inspector *in)
{
    while (in->conns) { /* left by libmicrohttpd's end (it says nothing of them then) */
        inspect_conn *k = in->conns;
        in->conns = k->next;
        free(k);
    }
}
