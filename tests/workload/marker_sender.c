/* A job for the tests: sends a known sequence of markers through the C client.
 * Usage: ww_test_marker_sender enabled|disabled. Exits 0 when ww_enabled() matches and every call
 * returned 0, 1 otherwise. */
#include <stdio.h>
#include <string.h>

#include "wattwise/markers.h"

int main(int argc, char** argv) {
  int expect_enabled = argc > 1 && strcmp(argv[1], "enabled") == 0;
  if (ww_enabled() != expect_enabled) {
    fprintf(stderr, "ww_enabled() = %d, expected %d\n", ww_enabled(), expect_enabled);
    return 1;
  }
  const char* keys[] = {"samples", "loss"};
  const double values[] = {128, 0.5};
  int failures = 0;
  failures += ww_begin("training") != 0;
  failures += ww_begin("epoch") != 0;
  failures += ww_end_counters("epoch", keys, values, 2) != 0;
  failures += ww_point("saved model=best") != 0;
  failures += ww_end("training") != 0;
  if (expect_enabled) failures += ww_begin(NULL) != -1; /* invalid arguments are reported when measured */
  return failures == 0 ? 0 : 1;
}
