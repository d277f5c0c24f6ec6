/* The C marker client: see include/wattwise/markers.h for the contract, docs/markers.md for the format. */
#define _GNU_SOURCE
#include "wattwise/markers.h"

#include "client_internal.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum { kMaxMessageBytes = 8192 };

/* Set once by pthread_once, read-only afterwards: safe to share between threads without a lock. */
static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;
static int g_socket_fd = -1;
static int g_has_rank = 0;
static long g_rank = 0;
static int g_has_global_rank = 0;
static long g_global_rank = 0;
/* Markers dropped because the receiver's queue was full (or the receiver had gone). */
static atomic_ulong g_dropped = 0;
/* This process's id, asked once: getpid() is a system call, and was half the cost of a marker (two system
 * calls, getpid and send; docs/evidence/nvtx-rate.md). A forked child forgets it (pthread_atfork), so its
 * markers carry its own pid. 0: not asked yet. */
static atomic_int g_pid = 0;

static void forget_pid(void) {
  atomic_store_explicit(&g_pid, 0, memory_order_relaxed);
}

static long current_pid(void) {
  int pid = atomic_load_explicit(&g_pid, memory_order_relaxed);
  if (pid == 0) {
    pid = (int)getpid();
    atomic_store_explicit(&g_pid, pid, memory_order_relaxed);
  }
  return pid;
}

static int parse_rank(const char* text, long* rank) {
  if (text == NULL || *text == '\0') return 0;
  char* end = NULL;
  long value = strtol(text, &end, 10);
  if (*end != '\0' || value < 0) return 0;
  *rank = value;
  return 1;
}

/* A non-blocking datagram socket connected to `path`, or -1 with errno set. Non-blocking: a stalled
   receiver must never stall the job; a marker that does not fit is dropped. */
static int connect_marker_socket(const char* path) {
  if (path == NULL || *path == '\0' || strlen(path) >= sizeof(((struct sockaddr_un*)0)->sun_path)) {
    errno = ENOENT;
    return -1;
  }
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  struct sockaddr_un address;
  memset(&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  strcpy(address.sun_path, path);
  if (connect(fd, (struct sockaddr*)&address, sizeof address) != 0) {
    const int error = errno;
    close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

static void init_channel(void) {
  pthread_atfork(NULL, NULL, forget_pid);
  /* The rank picks the GPU on this node, so it is the local rank (torchrun, Open MPI, srun, MPICH); the
     global rank travels as the label global_rank and stands in only when no launcher set a local one. */
  static const char* const kLocal[] = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID",
                                       "MPI_LOCALRANKID"};
  static const char* const kGlobal[] = {"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK"};
  for (size_t i = 0; !g_has_rank && i < sizeof kLocal / sizeof kLocal[0]; ++i)
    g_has_rank = parse_rank(getenv(kLocal[i]), &g_rank);
  for (size_t i = 0; !g_has_global_rank && i < sizeof kGlobal / sizeof kGlobal[0]; ++i)
    g_has_global_rank = parse_rank(getenv(kGlobal[i]), &g_global_rank);
  if (!g_has_rank && g_has_global_rank) {
    g_has_rank = 1;
    g_rank = g_global_rank;
  }
  /* The job's socket is reachable by wattwise's user only; a process that changed user (sudo -u) is
     refused there (EACCES) and sends to the changed-user socket instead (docs/markers.md). */
  g_socket_fd = connect_marker_socket(getenv("WATTWISE_SOCKET"));
  if (g_socket_fd < 0 && (errno == EACCES || errno == EPERM))
    g_socket_fd = connect_marker_socket(getenv("WATTWISE_SOCKET_CHANGED_USER"));
}

static int channel(void) {
  pthread_once(&g_init_once, init_channel);
  return g_socket_fd;
}

/* Appends to buf at *used; returns 0 if it did not fit. */
static int append(char* buf, size_t* used, const char* format, ...) __attribute__((format(printf, 3, 4)));
static int append(char* buf, size_t* used, const char* format, ...) {
  va_list args;
  va_start(args, format);
  int n = vsnprintf(buf + *used, kMaxMessageBytes - *used, format, args);
  va_end(args);
  if (n < 0 || (size_t)n >= kMaxMessageBytes - *used) return 0;
  *used += (size_t)n;
  return 1;
}

/* Space, '=', '%' and control characters become %XX, so fields split on single spaces. */
static int append_encoded(char* buf, size_t* used, const char* text) {
  for (const unsigned char* c = (const unsigned char*)text; *c; ++c) {
    int escape = *c <= 0x20 || *c == '=' || *c == '%' || *c == 0x7f;
    if (!(escape ? append(buf, used, "%%%02X", *c) : append(buf, used, "%c", *c))) return 0;
  }
  return 1;
}

/* The shortest of %.15g..%.17g that reads back as the same double: samples=128, not 128.00000000000000. */
static int append_number(char* buf, size_t* used, double value) {
  char text[32];
  for (int precision = 15; precision <= 17; ++precision) {
    snprintf(text, sizeof text, "%.*g", precision, value);
    if (strtod(text, NULL) == value) break;
  }
  return append(buf, used, "%s", text);
}

long long ww_internal_now_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

int ww_internal_rank(long* rank) {
  pthread_once(&g_init_once, init_channel);
  if (g_has_rank) *rank = g_rank;
  return g_has_rank;
}

static int send_marker_at(char kind, long long t_ns, const char* name, const char* const keys[],
                          const double values[], int n) {
  int fd = channel();
  if (fd < 0) return 0;
  if (name == NULL || *name == '\0' || n < 0 || (n > 0 && (keys == NULL || values == NULL))) return -1;

  char buf[kMaxMessageBytes];
  size_t used = 0;
  int ok = append(buf, &used, "ww1 %c %lld ", kind, t_ns) && append_encoded(buf, &used, name) &&
           append(buf, &used, " pid=%ld", current_pid());
  if (ok && g_has_rank) ok = append(buf, &used, " rank=%ld", g_rank);
  if (ok && g_has_global_rank) ok = append(buf, &used, " global_rank=%ld", g_global_rank);
  /* Tell wattwise what was lost, so the run's result says so (docs/markers.md). */
  unsigned long dropped = atomic_load_explicit(&g_dropped, memory_order_relaxed);
  if (ok && dropped > 0) ok = append(buf, &used, " ww_dropped=%lu", dropped);
  for (int i = 0; ok && i < n; ++i) {
    if (keys[i] == NULL || *keys[i] == '\0' || strcmp(keys[i], "pid") == 0 || strcmp(keys[i], "rank") == 0 ||
        strcmp(keys[i], "global_rank") == 0 || strcmp(keys[i], "ww_dropped") == 0) {
      return -1;
    }
    if (!isfinite(values[i])) continue;
    ok = append(buf, &used, " ") && append_encoded(buf, &used, keys[i]) && append(buf, &used, "=") &&
         append_number(buf, &used, values[i]);
  }
  if (!ok) return -1;
  /* Failures (wattwise gone, its queue full) drop the marker and count it: see the header. MSG_DONTWAIT
   * as well as the non-blocking socket, in case someone cleared O_NONBLOCK on an inherited descriptor. */
  ssize_t sent;
  do {
    sent = send(fd, buf, used, MSG_NOSIGNAL | MSG_DONTWAIT);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) atomic_fetch_add_explicit(&g_dropped, 1, memory_order_relaxed);
  return 0;
}

static int send_marker(char kind, const char* name, const char* const keys[], const double values[], int n) {
  return send_marker_at(kind, ww_internal_now_ns(), name, keys, values, n);
}

int ww_internal_send_at(char kind, long long t_ns, const char* name) {
  return send_marker_at(kind, t_ns, name, NULL, NULL, 0);
}

int ww_begin(const char* name) {
  return send_marker('B', name, NULL, NULL, 0);
}
int ww_end(const char* name) {
  return send_marker('E', name, NULL, NULL, 0);
}
int ww_point(const char* name) {
  return send_marker('P', name, NULL, NULL, 0);
}

int ww_begin_counters(const char* name, const char* const keys[], const double values[], int n) {
  return send_marker('B', name, keys, values, n);
}
int ww_end_counters(const char* name, const char* const keys[], const double values[], int n) {
  return send_marker('E', name, keys, values, n);
}
int ww_point_counters(const char* name, const char* const keys[], const double values[], int n) {
  return send_marker('P', name, keys, values, n);
}

unsigned long ww_dropped(void) {
  return atomic_load_explicit(&g_dropped, memory_order_relaxed);
}

int ww_enabled(void) {
  return channel() >= 0;
}
