/* TEST-ONLY stand-in for the Hexagon NN SDK's host header hexagon_nn.h.
 *
 * Declares just what the C emitted by hexnn_import.emit uses, with the
 * types and signatures of the SDK's IDL-generated header, so that
 * tests/emit can check the emitted source with `gcc -fsyntax-only` without
 * the SDK. Never build a real program against it: link against the SDK.
 * The OP_<name> values come from hexagon_nn_ops.h, which the tests write
 * next to this file with made-up values (see tests/emit/conftest.py).
 */
#ifndef HEXNN_TEST_STUB_HEXAGON_NN_H
#define HEXNN_TEST_STUB_HEXAGON_NN_H

typedef int hexagon_nn_nn_id;

typedef struct hexagon_nn_input {
    unsigned int src_id;
    unsigned int output_idx;
} hexagon_nn_input;

typedef struct hexagon_nn_output {
    unsigned int rank;
    unsigned int max_sizes[8];
    unsigned int elementsize;
    int zero_offset;
    float stepsize;
} hexagon_nn_output;

typedef enum hexagon_nn_padding_type {
    NN_PAD_NA,
    NN_PAD_SAME,
    NN_PAD_VALID,
    NN_PAD_MIRROR_REFLECT,
    NN_PAD_MIRROR_SYMMETRIC,
    NN_PAD_SAME_CAFFE,
    _32BIT_PLACEHOLDER_hexagon_nn_padding_type = 0x7fffffff
} hexagon_nn_padding_type;

int hexagon_nn_init(hexagon_nn_nn_id *g);
int hexagon_nn_append_node(hexagon_nn_nn_id id, unsigned int node_id, unsigned int operation,
                           hexagon_nn_padding_type padding, const hexagon_nn_input *inputs, int inputsLen,
                           const hexagon_nn_output *outputs, int outputsLen);
int hexagon_nn_append_const_node(hexagon_nn_nn_id id, unsigned int node_id, unsigned int batches,
                                 unsigned int height, unsigned int width, unsigned int depth,
                                 const unsigned char *data, int dataLen);
int hexagon_nn_prepare(hexagon_nn_nn_id id);
int hexagon_nn_teardown(hexagon_nn_nn_id id);

#endif /* HEXNN_TEST_STUB_HEXAGON_NN_H */
