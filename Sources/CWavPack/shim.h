#pragma once
#include <wavpack/wavpack.h>
