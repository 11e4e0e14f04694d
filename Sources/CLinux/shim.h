#pragma once
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/signalfd.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <pthread.h>
#include <glob.h>

/// The address of errno for the calling thread (Swift cannot read the C macro).
static inline int fermata_errno(void) { return errno; }

/// Asks the processor to bring the cache line at `address` in for a read (no fault if it is not mapped).
static inline void fermata_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }

/// accept4(2) and pipe2(2) are GNU extensions that <sys/socket.h> and <unistd.h> hide without _GNU_SOURCE.
extern int accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags);
extern int pipe2(int pipefd[2], int flags);
/// pthread_setname_np(3), hidden the same way by <pthread.h>.
extern int pthread_setname_np(pthread_t thread, const char *name);

#include <sys/stat.h>
#include <dirent.h>
#include <stdlib.h>

/// stat(2) and lstat(2) under names that do not collide with `struct stat` in Swift.
static inline int fermata_stat(const char *path, struct stat *info) { return stat(path, info); }
static inline int fermata_lstat(const char *path, struct stat *info) { return lstat(path, info); }
/// fstatat(2), for an entry of an open directory by the bytes readdir returned.
static inline int fermata_fstatat(int directory, const char *name, struct stat *info, int flags) {
    return fstatat(directory, name, info, flags);
}

/// The user id of the process at the other end of a Unix-domain socket (SO_PEERCRED), or -1. `struct ucred`
/// needs _GNU_SOURCE, so the three fields are spelled out here.
static inline long fermata_peer_uid(int fd) {
    struct { pid_t pid; uid_t uid; gid_t gid; } credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    return (long)credentials.uid;
}

#include <malloc.h>

/// open(2) with O_TMPFILE: an unnamed file in `directory`, linked in later with linkat(2) (<fcntl.h> names
/// O_TMPFILE only with _GNU_SOURCE; __O_TMPFILE is always there).
static inline int fermata_open_tmpfile(const char *directory, int flags, unsigned mode) {
    return open(directory, __O_TMPFILE | O_DIRECTORY | flags, mode);
}
