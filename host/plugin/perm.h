/* SPDX-License-Identifier: MIT */
/* perm.h: may anyone but this user (or root) write a plugin file, or a folder on its way?
 * A file others may write is code they may run in the host: refused (with the reason and
 * the fix), or loaded with a warning under --allow-insecure-plugins. Knows only the file
 * system and the log. */
#ifndef HOST_PERM_H
#define HOST_PERM_H

#include <stdbool.h>
#include <stddef.h>

/* host_plugin_insecure for file (relative to the plugin folder dir) and every folder on
 * its way: dir itself when check_dir, its subfolder, and for a symlink (or a file in a
 * symlinked subfolder) the folder that really holds the file. why: "" when safe. */
bool host_plugin_path_insecure(const char *dir, const char *file, bool check_dir, bool allow,
                               char *why, size_t len);

/* host_plugin_insecure for a folder, and for every folder above it up to '/' (as
 * OpenSSH's StrictModes): one that others may write and is not sticky, or that belongs to
 * another user, lets them move the folder away and put theirs in its place. Symlinks are
 * followed: the folders of the path as given and of the real path both count. */
bool host_folder_insecure(const char *what, const char *folder, bool allow, char *why, size_t len);

/* May users other than the owner (or root) write path? True (with the reason and the fix
 * in why) when so and not allowed; with allow, warns and returns false. A file writable by
 * its group is fine when the group is the owner's private group. */
bool host_plugin_insecure(const char *what, const char *path, bool allow, char *why, size_t len);

#endif
