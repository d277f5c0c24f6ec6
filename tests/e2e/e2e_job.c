/* A small job for the end-to-end tests: each mode is one behaviour a real job can have.
 *
 *   e2e_job phases COUNT MS        COUNT phases "c_step" of MS milliseconds each, samples=32 on each end
 *   e2e_job sleep MS               sleep, then exit 0
 *   e2e_job exit CODE              exit with CODE at once
 *   e2e_job signal SIGNUM MS       sleep MS, then kill itself with SIGNUM
 *   e2e_job garbage                send two malformed datagrams to $WATTWISE_SOCKET with a raw socket, then
 * one valid point marker "valid" through the C API e2e_job pidfile PATH MS        write its pid to PATH, then
 * sleep MS (for signals sent from outside) e2e_job touch PATH             create PATH (proves the job ran)
 *   e2e_job window COUNT MS PATH   COUNT windows "c_window" of MS ms through ww_window_*, each read at once;
 *                                  one line per window to PATH: begin_ns end_ns known energy_j method
 *                                  gpu_count index:energy_j ... (known 0: method is "-")
 *
 * Exit 10: a marker call returned an error; exit 64: bad arguments.
 */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "wattwise/markers.h"

static void sleep_ms(long ms) {
  struct timespec t;
  t.tv_sec = ms / 1000;
  t.tv_nsec = (ms % 1000) * 1000000L;
  while (nanosleep(&t, &t) != 0) {
  }
}

static int phases(int count, long ms) {
  const char* keys[] = {"samples"};
  const double values[] = {32};
  for (int i = 0; i < count; ++i) {
    if (ww_begin("c_step") != 0) return 10;
    sleep_ms(ms);
    if (ww_end_counters("c_step", keys, values, 1) != 0) return 10;
  }
  return 0;
}

static int garbage(void) {
  const char* path = getenv("WATTWISE_SOCKET");
  if (path == NULL) return 64;
  int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
  if (fd < 0) return 64;
  struct sockaddr_un address;
  memset(&address, 0, sizeof(address));
  address.sun_family = AF_UNIX;
  strncpy(address.sun_path, path, sizeof(address.sun_path) - 1);
  const char* bad[] = {"this is not a marker", "ww1 X 12 name pid=1"};
  for (int i = 0; i < 2; ++i) {
    if (sendto(fd, bad[i], strlen(bad[i]), 0, (const struct sockaddr*)&address, sizeof(address)) < 0)
      return 64;
  }
  close(fd);
  return ww_point("valid") == 0 ? 0 : 10;
}

static int windows(int count, long ms, const char* path) {
  FILE* out = fopen(path, "w");
  if (out == NULL) return 64;
  for (int i = 0; i < count; ++i) {
    ww_window window;
    ww_window_energy energy;
    if (ww_window_begin(&window, "c_window") != 0) return 10;
    sleep_ms(ms);
    if (ww_window_end(&window, "c_window") != 0) return 10;
    int known = ww_window_read(&window, 5000, &energy);
    if (known < 0) return 10;
    fprintf(out, "%lld %lld %d %.6f %s %d", window.begin_ns, window.end_ns, known, energy.energy_j,
            known ? energy.method : "-", energy.gpu_count);
    for (int g = 0; g < energy.gpu_count; ++g)
      fprintf(out, " %u:%.6f", energy.gpu_index[g], energy.gpu_energy_j[g]);
    fprintf(out, "\n");
  }
  fclose(out);
  return 0;
}

static int write_pid(const char* path, long ms) {
  FILE* f = fopen(path, "w");
  if (f == NULL) return 64;
  fprintf(f, "%ld\n", (long)getpid());
  fclose(f);
  sleep_ms(ms);
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 4 && strcmp(argv[1], "phases") == 0) return phases(atoi(argv[2]), atol(argv[3]));
  if (argc >= 3 && strcmp(argv[1], "sleep") == 0) {
    sleep_ms(atol(argv[2]));
    return 0;
  }
  if (argc >= 3 && strcmp(argv[1], "exit") == 0) return atoi(argv[2]);
  if (argc >= 4 && strcmp(argv[1], "signal") == 0) {
    sleep_ms(atol(argv[3]));
    raise(atoi(argv[2]));
    return 64; /* not reached for a deadly signal */
  }
  if (argc >= 2 && strcmp(argv[1], "garbage") == 0) return garbage();
  if (argc >= 5 && strcmp(argv[1], "window") == 0) return windows(atoi(argv[2]), atol(argv[3]), argv[4]);
  if (argc >= 4 && strcmp(argv[1], "pidfile") == 0) return write_pid(argv[2], atol(argv[3]));
  if (argc >= 3 && strcmp(argv[1], "touch") == 0) {
    FILE* f = fopen(argv[2], "w");
    if (f == NULL) return 64;
    fclose(f);
    return 0;
  }
  fprintf(stderr, "e2e_job: bad arguments (see the comment at the top of e2e_job.c)\n");
  return 64;
}
