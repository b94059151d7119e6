"""XS3 (XMOS lib_nn) lowering of int8 TFLite conv / fully-connected layers.

The kernels compute what lib_nn's own portable C computes, bit for bit
(``tests/xs3/test_libnn_golden.py``; docs/semantics.md, "XS3 (lib_nn)").

- :mod:`.vpu`: the VPU arithmetic (saturating accumulation, vlsat, BSO / BSS output stages);
- :mod:`.bso`: BSO / BSS tensors from TFLite quantization (pure functions);
- :mod:`.kernels_conv`, :mod:`.kernels_depthwise`, :mod:`.kernels_fc`: the simulated kernels and weight layouts;
  :mod:`.order`: lib_nn's order of a padded window's rows;
- :mod:`.fast`, :mod:`.fused_stage`: the same integers in a few exact BLAS / integer passes;
- :mod:`.layers`, :mod:`.replace`, :mod:`.legalize`, :mod:`.lower`: the lowering (Replace, then Legalize);
- :mod:`.agree`: per-layer agreement with LiteRT; :mod:`.run`: the XS3 execution path;
- :mod:`.export`, :mod:`.c_header`: ``hexnn-import xs3-export``.
"""
