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

/// accept4(2) and pipe2(2) are GNU extensions that <sys/socket.h> and <unistd.h> hide without _GNU_SOURCE.
extern int accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags);
extern int pipe2(int pipefd[2], int flags);
