#pragma once
#include <stdint.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/time.h>
#include <nfsc/libnfs.h>
