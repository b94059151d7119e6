/* hexnn-import stand-in for nnlib's nn_graph_memcpy.h (found first on the include path): qemu-hexagon 7.2 does
 * not decode the v66 user-DMA instruction "memcpy(Rs,Rt,Mu)" that nnlib's nn_graph_memcpy issues for
 * __HEXAGON_ARCH__ > 65 (it stops with "decode_packet: assertion failed"). That instruction copies Mu+1 bytes from
 * Rt to Rs (nnlib splits larger copies at 256 KiB boundaries, which changes nothing copied); here the same bytes are
 * copied by the runtime's memcpy. The copies move weights into VTCM: no arithmetic. */
#ifndef NN_GRAPH_MEMCPY_H
#define NN_GRAPH_MEMCPY_H 1
#include <string.h>
#define WEIGHT_COPY_BLOCK (1024*16)
static inline void nn_graph_memcpy(struct nn_graph *nn, void *dst, const void *src, uint32_t size)
{
	(void)nn;
	memcpy(dst, src, size);
}
#endif
