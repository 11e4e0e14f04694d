#pragma once
#include <libmodplug/modplug.h>
