/* Shared between the C client's files; not part of the API (hidden: the library exports only
 * WATTWISE_MARKERS_API). */
#ifndef WATTWISE_CLIENT_INTERNAL_H
#define WATTWISE_CLIENT_INTERNAL_H

/* CLOCK_MONOTONIC now, in nanoseconds: the clock markers are stamped with. */
long long ww_internal_now_ns(void);
/* 1 and *rank set when the launcher named this process's local rank (as markers carry it), else 0. */
int ww_internal_rank(long* rank);
/* Sends a marker of kind 'B', 'E' or 'P' stamped t_ns, without counters; as ww_begin() otherwise. */
int ww_internal_send_at(char kind, long long t_ns, const char* name);

#endif
