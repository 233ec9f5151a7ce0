int h(void) { return y; }
#pragma strobe regoin(
