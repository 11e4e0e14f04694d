#pragma once
#include <sys/stat.h>
#include <fcntl.h>
#include <libsmbclient.h>
