#pragma once
// A header of the lowest room.
int base();
