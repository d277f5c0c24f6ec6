/* wattwise phase markers: the C client (usable from C++).
 *
 * A job run under `wattwise measure` or `wattwise sweep` finds the path of a Unix datagram socket in
 * the environment variable WATTWISE_SOCKET and may send it markers, so that energy and time can be
 * attributed to phases (training, epoch, iteration, forward, ...). Wire format: docs/markers.md.
 *
 *   ww_begin("epoch");
 *   ...
 *   const char* keys[] = {"samples"};
 *   double values[] = {128};
 *   ww_end_counters("epoch", keys, values, 1);
 *
 * Without WATTWISE_SOCKET (the job runs on its own), or when the socket has gone away, every call is a
 * silent no-op that returns 0: a job never fails because it is not being measured. The variable is read
 * once, on the first call. All functions are thread-safe. Timestamps come from CLOCK_MONOTONIC, the
 * clock wattwise measures with. Phases of the same name may nest; an end closes the innermost begin of
 * that name in the same process (and rank: the local rank of the launcher, LOCAL_RANK,
 * OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID or MPI_LOCALRANKID, else the global rank; docs/markers.md).
 *
 * Sending never blocks: when wattwise's queue is full (it stalled) or wattwise has gone, the marker is
 * dropped and counted (ww_dropped()); the job's progress matters more than one marker. The count travels
 * with the process's next marker, so wattwise reports how many were lost.
 *
 * Return value: 0 when the marker was sent, dropped, or there is nowhere to send it; -1 when the arguments
 * are invalid (NULL or empty name, a counter key that is NULL, "pid", "rank" or "ww_dropped", or a marker
 * longer than 8 KiB). Counters whose value is not finite are left out.
 */
#ifndef WATTWISE_MARKERS_H
#define WATTWISE_MARKERS_H

#if defined(__GNUC__)
#define WATTWISE_MARKERS_API __attribute__((visibility("default")))
#else
#define WATTWISE_MARKERS_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

WATTWISE_MARKERS_API int ww_begin(const char* name);
WATTWISE_MARKERS_API int ww_end(const char* name);
WATTWISE_MARKERS_API int ww_point(const char* name);

/* The same with counters: n pairs keys[i]=values[i], e.g. samples=128 or flops=4.1e12. */
WATTWISE_MARKERS_API int ww_begin_counters(const char* name, const char* const keys[], const double values[],
                                           int n);
WATTWISE_MARKERS_API int ww_end_counters(const char* name, const char* const keys[], const double values[],
                                         int n);
WATTWISE_MARKERS_API int ww_point_counters(const char* name, const char* const keys[], const double values[],
                                           int n);

/* How many markers this process dropped because they could not be sent at once (queue full, wattwise gone).
 */
WATTWISE_MARKERS_API unsigned long ww_dropped(void);

/* 1 when markers go somewhere (WATTWISE_SOCKET set and the socket reachable at the first call), else 0. */
WATTWISE_MARKERS_API int ww_enabled(void);

/* In-process readings (docs/windows.md): the energy of a window this process marked, asked of the running
 * `wattwise measure` or `wattwise tune` over the socket named in WATTWISE_WINDOW_SOCKET.
 *
 *   ww_window w;
 *   ww_window_begin(&w, "epoch");
 *   ...
 *   ww_window_end(&w, "epoch");
 *   ww_window_energy e;
 *   if (ww_window_read(&w, 5000, &e) == 1) printf("%.1f J (%s)\n", e.energy_j, e.method);
 *
 * The window's begin and end are ordinary markers (so it is also a phase of the summary). Reading waits for
 * wattwise's answer (~0.5 s after the end, for the 20 ms samples past it to be drained), at most timeout_ms.
 * Never a crash and never a hang: without WATTWISE_WINDOW_SOCKET the answer is "not known"; when wattwise
 * is gone (dead socket, a reply that is not the protocol) too, with one line on stderr per process, and
 * later reads do not ask again; when it is busy or slow (connection refused for now, closed without a reply,
 * time-out) too, and reads do not ask for 1 s, doubling up to 60 s while that goes on (docs/windows.md).
 * Thread-safe. */
typedef struct ww_window {
  long long begin_ns; /* CLOCK_MONOTONIC of its begin and end markers; end_ns 0 while open */
  long long end_ns;
} ww_window;

enum { WW_WINDOW_MAX_GPUS = 16 };

typedef struct ww_window_energy {
  double energy_j;   /* summed over the window's GPUs (its rank's GPU, else all the job's) */
  double duration_s; /* the window's length */
  int gpu_count;     /* entries below (at most WW_WINDOW_MAX_GPUS) */
  unsigned gpu_index[WW_WINDOW_MAX_GPUS];
  double gpu_energy_j[WW_WINDOW_MAX_GPUS];
  char method[32];  /* how it was measured, e.g. "samples" */
  char reason[256]; /* when not known: why */
} ww_window_energy;

/* Stamp the window and send its begin / end marker; 0, or -1 for invalid arguments. */
WATTWISE_MARKERS_API int ww_window_begin(ww_window* window, const char* name);
WATTWISE_MARKERS_API int ww_window_end(ww_window* window, const char* name);
/* 1: *out holds the energy; 0: not known (out->reason says why); -1: invalid arguments or a window not ended.
 */
WATTWISE_MARKERS_API int ww_window_read(const ww_window* window, int timeout_ms, ww_window_energy* out);

#ifdef __cplusplus
}
#endif

#endif /* WATTWISE_MARKERS_H */
