#pragma once
#include <gme/gme.h>
