"""The supernodes' output stage in one place: exact product sums -> bias, channel scales, quint8 codes, range.

Two stages share one formula (SEMANTICS.md §5); each kernel's docstring names the one it runs.

- :mod:`.requant`: the per-range constants (``shamt``, ``recip``, ``bb``) and the per-element formula, in
  int64, in the device's 32-bit arithmetic (``Requant.c32``: asm_src gvconv2dbbb_d32_v60_h.S,
  dwconv2dbbb_*_h.S) and in exact float64 (``FloatStage``).
- :mod:`.codes`: sums -> pre-saturation codes -> quint8 codes for one range's constants (one compiled
  pass where numba is installed).
- :mod:`.nnlib_constants`: hexagon_nn 2.14.1's float32 constants and output-range logic
  (include/supernode_utils.h ``setup_initial_output_range``, ``fill_info_minmax_basics``,
  ``fill_bias_buf``, ``supernode_execute_workitem_check_for_retry``).
- :mod:`.nnlib_execute`: hexagon_nn's execute loop around them (op_supernode_new.c
  ``supernode_execute_hvx``, op_dwise_snode_8bit.c ``dwise_supernode_execute``): retries, the range state
  kept on the node, the bias alone where the C divides by 0.
- :mod:`.spec_stage`: the stage as §5 specifies it, as one reusable step (bias, scales and range read
  once; the per-node ``OutputPlan`` cache), with :mod:`.spec_autorange` (start, the 1.75 rule,
  quarter-octave widening).

The (Depthwise)Supernode kernels and their d32 twins (``kernels/supernode.py``,
``kernels/dwise_scaled.py``) run hexagon_nn's stage (``nnlib_*``); the dilated / grouped / transposed
convolutions and batch norm (``kernels/conv_variants.py``, ``kernels/batchnorm.py``) the specified one
(``spec_*``).
"""
