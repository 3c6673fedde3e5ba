/* SPDX-License-Identifier: MIT */
/* inspect.h: the inspector (--inspect): a page and a JSON API served from inside the host.
 *
 * libmicrohttpd without a thread of its own: the frame loop calls host_inspector_poll at
 * every frame boundary and host_inspector_wait while it waits for the next frame, so a
 * request is answered on the main thread, between frames, never while plugin code runs,
 * and nothing needs a lock. Every /api/ request carries the token the start line prints
 * (Authorization: Bearer TOKEN); the Host header must name the bound address or
 * localhost (DNS rebinding). docs/inspector.md has every endpoint.
 */
#ifndef HOST_INSPECT_H
#define HOST_INSPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct host_session host_session;
typedef struct host_inspector host_inspector;

/* What --inspect and its options say. The strings are copied. */
typedef struct host_inspect_config {
    const char *spec;         /* "PORT" or "ADDR:PORT"; port 0: a free one */
    bool read_only;           /* every write answers 403 */
    const char *save_file;    /* --save FILE: where the page's save goes, or NULL */
    const char *save_dir;     /* --inspect-save-dir: where a save by name goes, or NULL */
    const char *const *hosts; /* --inspect-host: names the Host header may give besides */
    size_t host_count;        /* localhost, 127.0.0.1, [::1] and the bound address */
    /* the frame controls the page drives (control.h), or NULL */
    struct host_control *control;
} host_inspect_config;

/* Serve the world as cfg says. Logs the URL to open (with the token). NULL with the
 * reason logged when the address cannot be used. */
host_inspector *host_inspector_new(host_session *hs, const host_inspect_config *cfg);

/* Can dir take the page's saves: an existing folder this user may write and nobody else
 * may (else another user could put a symlink where the next save goes)? False with the
 * reason in why. */
bool host_inspector_save_dir_ok(const char *dir, char *why, size_t len);
void host_inspector_free(host_inspector *in);

/* At a frame boundary: note the frame (timings for the page); with answer, also answer
 * what waits (when frames run back to back and there is no wait between them to do it). */
void host_inspector_poll(host_inspector *in, bool answer);

/* Until deadline_ns (monotonic, host_now_ns) or a signal: answer requests as they come.
 * Returns at the deadline. */
void host_inspector_wait(host_inspector *in, uint64_t deadline_ns, volatile int *stop);

/* The port it listens on (after port 0 picked one), and the token requests carry. */
unsigned host_inspector_port(const host_inspector *in);
const char *host_inspector_token(const host_inspector *in);

#endif
