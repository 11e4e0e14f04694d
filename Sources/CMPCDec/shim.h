#pragma once
#include <mpc/mpcdec.h>
