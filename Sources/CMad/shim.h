#pragma once
#include <mad.h>
