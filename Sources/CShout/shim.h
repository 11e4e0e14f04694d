#pragma once
#include <shout/shout.h>
