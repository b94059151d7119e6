/* hexnn-import stand-in for <time.h>: the clock nn_os_get_usecs reads (always 0 here). */
#ifndef HVX_STANDIN_TIME_H
#define HVX_STANDIN_TIME_H
struct timespec { long tv_sec; long tv_nsec; };
#define CLOCK_REALTIME 0
static inline int clock_gettime(int clk, struct timespec *ts) { (void)clk; ts->tv_sec = 0; ts->tv_nsec = 0; return 0; }
#endif
