# A tree that breaks its arrows, for layering.catches_a_forbidden_include:
# high may use low and base, low only base; low/low.h includes high/high.h.
set(SSGD_ALLOWED_base "base")
set(SSGD_ALLOWED_low "low;base")
set(SSGD_ALLOWED_high "high;low;base")
set(SSGD_ROOM_DIRS "base;low;high")
