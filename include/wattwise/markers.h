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

#ifdef __cplusplus
}
#endif

#endif /* WATTWISE_MARKERS_H */
