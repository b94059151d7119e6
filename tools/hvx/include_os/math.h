/* hexnn-import stand-in for <math.h> with nnlib's whole op files: the harnesses' stand-in (include/math.h) plus
 * ceil (op_supernode.c's bias_adder), defined in graph_os_standin.c. */
#ifndef HVX_STANDIN_OS_MATH_H
#define HVX_STANDIN_OS_MATH_H
#include_next <math.h>
double ceil(double x);
#endif
