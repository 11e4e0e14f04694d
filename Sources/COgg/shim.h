#pragma once
#include <ogg/ogg.h>
