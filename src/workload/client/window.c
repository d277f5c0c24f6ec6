/* In-process readings, the C side: see include/wattwise/markers.h, and docs/windows.md for the protocol. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "client_internal.h"
#include "wattwise/markers.h"

enum { kMaxReplyBytes = 4096 };

/* Set once wattwise is gone (no socket, nobody listening, a reply that is not the protocol): later reads
   do not ask. */
static atomic_int g_broken = 0;
/* After a failure that may pass (a busy or slow wattwise: the connection refused for now, closed without a
   reply, no reply in time), reads do not ask until this instant; the pause doubles with each such failure
   in a row, from 1 s to at most 60 s, so a job pays a time-out at most once per pause, and a wattwise that
   was overloaded once is asked again (issue 22, item 11: it never was). */
static atomic_llong g_pause_until_ns = 0;
static atomic_int g_failures_in_a_row = 0;
static atomic_int g_warned = 0;

enum { kAnswered = 0, kGone = -1, kBusy = -2 };

static void say(ww_window_energy* out, const char* format, ...) __attribute__((format(printf, 2, 3)));
static void say(ww_window_energy* out, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(out->reason, sizeof out->reason, format, args);
  va_end(args);
}

static long long remaining_ms(long long deadline_ns) {
  long long left = (deadline_ns - ww_internal_now_ns()) / 1000000;
  return left > 0 ? left : 0;
}

/* One exchange; the reply line in reply (NUL-terminated). kAnswered, or kGone / kBusy with errno-like text
   in out->reason. */
static int exchange(const char* path, const char* request, int timeout_ms, char* reply,
                    ww_window_energy* out) {
  const long long deadline_ns = ww_internal_now_ns() + (long long)timeout_ms * 1000000;
  struct sockaddr_un address;
  memset(&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof address.sun_path) return say(out, "the socket path is too long"), kGone;
  strcpy(address.sun_path, path);
  /* Non-blocking throughout, so that every wait is a poll() bounded by the deadline. */
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return say(out, "socket: %s", strerror(errno)), kBusy;
  int result = kBusy;
  size_t used = 0;
  if (connect(fd, (struct sockaddr*)&address, sizeof address) != 0) {
    /* EAGAIN: its queue of connections is full, for now. Anything else: nobody is there. */
    if (errno != EAGAIN) result = kGone;
    say(out, "connect %s: %s", path, strerror(errno));
    goto done;
  }
  /* A busy wattwise may answer "unavailable" and close before our question is sent: a failed send is no
     reason not to read what it said. */
  struct pollfd writable = {fd, POLLOUT, 0};
  if (poll(&writable, 1, (int)remaining_ms(deadline_ns)) == 1)
    (void)send(fd, request, strlen(request), MSG_NOSIGNAL);
  while (used < kMaxReplyBytes - 1 && memchr(reply, '\n', used) == NULL) {
    struct pollfd readable = {fd, POLLIN, 0};
    int ready = poll(&readable, 1, (int)remaining_ms(deadline_ns));
    if (ready < 0 && errno == EINTR) continue;
    if (ready != 1) {
      say(out, "no reply within %d ms", timeout_ms);
      goto done;
    }
    ssize_t got = recv(fd, reply + used, kMaxReplyBytes - 1 - used, 0);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) break;
    used += (size_t)got;
  }
  reply[used] = '\0';
  if (used == 0) {
    say(out, "%s closed the connection without a reply", path);
    goto done;
  }
  result = kAnswered;
done:
  close(fd);
  return result;
}

/* "ww1 ok energy_j=.. duration_s=.. method=.. gpus=0:1.5,1:2" into out; 1, 0 (unavailable/bad), -1 (not ww1).
 */
static int parse_reply(char* line, ww_window_energy* out) {
  line[strcspn(line, "\r\n")] = '\0';
  if (strncmp(line, "ww1 unavailable ", 16) == 0 || strncmp(line, "ww1 bad ", 8) == 0) {
    say(out, "wattwise: %s", strchr(line + 4, ' ') + 1);
    return 0;
  }
  if (strncmp(line, "ww1 ok ", 7) != 0) return -1;
  int has_energy = 0;
  char* save = NULL;
  for (char* field = strtok_r(line + 7, " ", &save); field; field = strtok_r(NULL, " ", &save)) {
    char* value = strchr(field, '=');
    if (value == NULL) return -1;
    *value++ = '\0';
    if (strcmp(field, "energy_j") == 0) {
      out->energy_j = strtod(value, NULL);
      has_energy = 1;
    } else if (strcmp(field, "duration_s") == 0) {
      out->duration_s = strtod(value, NULL);
    } else if (strcmp(field, "method") == 0) {
      snprintf(out->method, sizeof out->method, "%s", value);
    } else if (strcmp(field, "gpus") == 0) {
      for (char* item = value; *item && out->gpu_count < WW_WINDOW_MAX_GPUS;) {
        char* end = NULL;
        out->gpu_index[out->gpu_count] = (unsigned)strtoul(item, &end, 10);
        if (*end != ':') return -1;
        out->gpu_energy_j[out->gpu_count++] = strtod(end + 1, &end);
        item = *end == ',' ? end + 1 : end;
      }
    } /* later keys are skipped: a newer wattwise may say more */
  }
  return has_energy ? 1 : -1;
}

int ww_window_begin(ww_window* window, const char* name) {
  if (window == NULL) return -1;
  window->begin_ns = ww_internal_now_ns();
  window->end_ns = 0;
  return ww_internal_send_at('B', window->begin_ns, name);
}

int ww_window_end(ww_window* window, const char* name) {
  if (window == NULL || window->begin_ns == 0) return -1;
  window->end_ns = ww_internal_now_ns();
  return ww_internal_send_at('E', window->end_ns, name);
}

int ww_window_read(const ww_window* window, int timeout_ms, ww_window_energy* out) {
  if (window == NULL || out == NULL || window->end_ns == 0 || timeout_ms < 0) return -1;
  memset(out, 0, sizeof *out);
  out->duration_s = (double)(window->end_ns - window->begin_ns) / 1e9;
  const char* path = getenv("WATTWISE_WINDOW_SOCKET");
  if (path == NULL || *path == '\0') {
    say(out, "not run by `wattwise measure` or `wattwise tune` (WATTWISE_WINDOW_SOCKET is not set)");
    return 0;
  }
  if (atomic_load(&g_broken)) {
    say(out, "wattwise could not be reached before");
    return 0;
  }
  if (ww_internal_now_ns() < atomic_load(&g_pause_until_ns)) {
    say(out, "wattwise was busy or slow a moment ago: asking again later");
    return 0;
  }
  char request[96];
  long rank = 0;
  if (ww_internal_rank(&rank))
    snprintf(request, sizeof request, "ww1 W %lld %lld rank=%ld\n", window->begin_ns, window->end_ns, rank);
  else
    snprintf(request, sizeof request, "ww1 W %lld %lld\n", window->begin_ns, window->end_ns);
  char reply[kMaxReplyBytes];
  const int exchanged = exchange(path, request, timeout_ms, reply, out);
  int known = exchanged == kAnswered ? parse_reply(reply, out) : -1;
  if (known >= 0) {
    atomic_store(&g_failures_in_a_row, 0);
    return known;
  }
  if (exchanged == kBusy) {
    const int failures = atomic_fetch_add(&g_failures_in_a_row, 1);
    const long long pause_ns = (failures < 6 ? (1LL << failures) : 60LL) * 1000000000LL;
    atomic_store(&g_pause_until_ns, ww_internal_now_ns() + pause_ns);
    if (atomic_exchange(&g_warned, 1) == 0) /* one line per process */
      fprintf(stderr, "wattwise: cannot ask for a window's energy now (%s); asking again later\n",
              out->reason);
    return 0;
  }
  if (out->reason[0] == '\0') say(out, "the reply is not the wattwise protocol");
  if (atomic_exchange(&g_broken, 1) == 0 && atomic_exchange(&g_warned, 1) == 0) /* one line per process */
    fprintf(stderr, "wattwise: cannot ask for a window's energy (%s); energies are unknown from now on\n",
            out->reason);
  return 0;
}
