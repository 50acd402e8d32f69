#pragma once
// Allowed: base. Forbidden: high, below.
#include "base/base.h"
#include "high/high.h"
#include <vector>
