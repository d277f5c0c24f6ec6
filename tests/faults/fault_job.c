/* A job with one bad habit per mode, for the fault-injection suite (tests/faults).
 *
 *   fault_job DIR TAG MODE MS
 *
 * Every process of the job (the job and any child it forks) appends its pid to DIR/pids before anything
 * else, so the suite can check that none outlives wattwise. A job that ran to its end appends "TAG" to
 * DIR/done; a job cut by a signal it handles appends "TAG" to DIR/cut. TAG is a knob placeholder such as
 * {power_limit_w}, so the suite can match finished jobs to stored runs.
 *
 *   normal        sleep MS, exit 0
 *   crash         sleep MS/2, then SIGSEGV
 *   ignore_term   ignore SIGTERM, sleep MS, exit 0 (the escalation to SIGKILL must stop it)
 *   daemon        fork a child that stays in the job's process group and sleeps 60 s (a data loader, a
 *                 background server); the job itself sleeps MS and exits 0, leaving the child behind
 *   exit0_on_int  on SIGINT/SIGTERM/SIGHUP write DIR/cut and exit 0 at once (torchrun, a checkpointing
 *                 SLURM job): a cut run must not be stored as a success
 *
 * Exit 64: bad arguments.
 */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char* g_dir;
static const char* g_tag;

static void append_line(const char* file, const char* text) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", g_dir, file);
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  char line[256];
  int n = snprintf(line, sizeof line, "%s\n", text);
  /* One write with O_APPEND: lines of concurrent processes never interleave. */
  if (write(fd, line, (size_t)n) < 0) {
  }
  close(fd);
}

static void record_pid(void) {
  char pid[32];
  snprintf(pid, sizeof pid, "%ld", (long)getpid());
  append_line("pids", pid);
}

static void sleep_ms(long ms) {
  struct timespec t;
  t.tv_sec = ms / 1000;
  t.tv_nsec = (ms % 1000) * 1000000L;
  while (nanosleep(&t, &t) != 0) {
  }
}

static void cut_and_exit(int signal_number) {
  (void)signal_number;
  append_line("cut", g_tag); /* not async-signal-safe in theory; open/write/close are */
  _exit(0);
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "fault_job: usage: fault_job DIR TAG MODE MS\n");
    return 64;
  }
  g_dir = argv[1];
  g_tag = argv[2];
  const char* mode = argv[3];
  const long ms = atol(argv[4]);
  record_pid();
  if (strcmp(mode, "normal") == 0) {
    sleep_ms(ms);
  } else if (strcmp(mode, "crash") == 0) {
    sleep_ms(ms / 2);
    raise(SIGSEGV);
    return 64;
  } else if (strcmp(mode, "ignore_term") == 0) {
    signal(SIGTERM, SIG_IGN);
    sleep_ms(ms);
  } else if (strcmp(mode, "daemon") == 0) {
    pid_t child = fork();
    if (child == 0) {
      record_pid();
      sleep_ms(60000);
      _exit(0);
    }
    sleep_ms(ms);
  } else if (strcmp(mode, "exit0_on_int") == 0) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = cut_and_exit;
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGHUP, &action, NULL);
    sleep_ms(ms);
  } else {
    fprintf(stderr, "fault_job: unknown mode %s\n", mode);
    return 64;
  }
  append_line("done", g_tag);
  return 0;
}
