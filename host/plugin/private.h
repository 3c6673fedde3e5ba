/* SPDX-License-Identifier: MIT */
/* private.h: the private folder of --watch: plugin files are copied there before dlopen
 * (dlopen caches by path, and a build tool must stay free to overwrite its output). The
 * folder lives in the world (hs->private_dir, private_fd, private_at); private.c says how
 * it is made, checked, made again and removed. */
#ifndef HOST_PRIVATE_H
#define HOST_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct host_session host_session;

/* Remove the folders of hosts that died, then make this host's (mkdtemp under
 * $XDG_RUNTIME_DIR, else /tmp; mode 0700; opened once) into hs. False with an error logged
 * when it cannot be made. Call before loading the plugins. */
bool host_private_make(host_session *hs);

/* Before every copy: is the folder still this user's own, mode 0700? A folder that was
 * removed (a tmp cleaner) is made again beside where it was, with one warning, and true;
 * one that was opened up (another owner or mode), or cannot be made again: false with
 * the reason in why. */
bool host_private_ok(host_session *hs, char *why, size_t len);

/* Remove the folder and whatever is left in it (not by name when it was moved or
 * replaced), and forget it. Nothing when there is none. */
void host_private_remove(host_session *hs);

#endif
