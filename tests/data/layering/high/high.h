#pragma once
// Allowed: low and base.
#include "low/low.h"
#include "base/base.h"
