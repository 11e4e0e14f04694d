#pragma once
#include <libopenmpt/libopenmpt.h>
