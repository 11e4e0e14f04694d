#pragma once
#include <mikmod.h>
